/* The --shape-values parser on arbitrary text: the syntax check, then the texts
 * that pass it applied to a small graph (x float [2,3], s int64 [n], k int32 scalar,
 * y = Reshape(x, s), z = Range(k, k, k)), which must refuse or accept without
 * reading out of bounds. Bytes are split into texts at newlines. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builder/ir.h"
#include "builder/shape_values.h"

static etrt_ir_graph *fuzz_graph(void) {
  etrt_ir_graph *g = NULL;
  if (etrt_ir_graph_create(&g) != ETRT_OK) return NULL;
  int32_t x, s, k, y, z;
  etrt_status st = etrt_ir_add_value(g, "x", &x);
  if (st == ETRT_OK) st = etrt_ir_add_value(g, "s", &s);
  if (st == ETRT_OK) st = etrt_ir_add_value(g, "k", &k);
  if (st == ETRT_OK) st = etrt_ir_add_value(g, "y", &y);
  if (st == ETRT_OK) st = etrt_ir_add_value(g, "z", &z);
  if (st != ETRT_OK) {
    etrt_ir_graph_destroy(g);
    return NULL;
  }
  g->values[x].dtype = ETRT_DTYPE_FLOAT32;
  g->values[x].rank = 2;
  g->values[x].min[0] = g->values[x].max[0] = 2;
  g->values[x].min[1] = g->values[x].max[1] = 3;
  g->values[s].dtype = ETRT_DTYPE_INT64;
  g->values[s].rank = 1;
  g->values[s].min[0] = g->values[s].max[0] = -1;
  g->values[s].symbol[0] = "n";
  g->values[k].dtype = ETRT_DTYPE_INT32;
  g->values[k].rank = 0;
  if (etrt_ir_add_input(g, x) != ETRT_OK || etrt_ir_add_input(g, s) != ETRT_OK ||
      etrt_ir_add_input(g, k) != ETRT_OK ||
      etrt_ir_add_node(g, "Reshape", "", "r", 2, (int32_t[]){x, s}, 1, &y, 0, NULL, NULL) !=
          ETRT_OK ||
      etrt_ir_add_node(g, "Range", "", "q", 3, (int32_t[]){k, k, k}, 1, &z, 0, NULL, NULL) !=
          ETRT_OK) {
    etrt_ir_graph_destroy(g);
    return NULL;
  }
  return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *text = malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  const char *specs[8];
  uint32_t count = 0;
  for (char *line = text; line != NULL && count < 8;) {
    char *newline = strchr(line, '\n');
    if (newline != NULL) *newline = '\0';
    if (etrt_shape_value_spec_check(line) == ETRT_OK) specs[count++] = line;
    line = newline != NULL ? newline + 1 : NULL;
  }
  etrt_ir_graph *g = fuzz_graph();
  if (g != NULL) (void)etrt_shape_values_apply(g, specs, count);
  etrt_ir_graph_destroy(g);
  free(text);
  return 0;
}
