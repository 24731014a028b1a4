/* Shared pattern matching of the fusion passes (pass_match.h). */
#include "builder/pass_match.h"

#include <math.h>
#include <string.h>

int32_t etrt_match_producer(const etrt_ir_graph *graph, int32_t value, const char *op,
                            uint32_t inputs, int32_t reader) {
  if (value < 0) return -1;
  int32_t p = graph->values[value].producer;
  if (p < 0 || graph->nodes[p].dead || strcmp(graph->nodes[p].op_type, op) != 0 ||
      graph->nodes[p].num_inputs != inputs || etrt_ir_single_consumer(graph, value) != reader)
    return -1;
  return p;
}

bool etrt_match_scalar(const etrt_ir_graph *graph, int32_t value, double want) {
  if (value < 0) return false;
  const etrt_ir_value *v = &graph->values[value];
  if (!v->is_constant || v->dtype != ETRT_DTYPE_FLOAT32 || v->nbytes != sizeof(float) ||
      v->data == NULL)
    return false;
  float f;
  memcpy(&f, v->data, sizeof f);
  return fabs((double)f - want) <= 1e-6 * fabs(want);
}

bool etrt_match_same_shape(const etrt_ir_graph *graph, int32_t a, int32_t b) {
  const etrt_ir_value *x = &graph->values[a], *y = &graph->values[b];
  if (x->dtype != ETRT_DTYPE_FLOAT32 || y->dtype != x->dtype || x->rank != y->rank || x->rank < 0)
    return false;
  for (int32_t i = 0; i < x->rank; ++i)
    if (x->min[i] != y->min[i] || x->max[i] != y->max[i]) return false;
  return true;
}

void etrt_match_remove(etrt_ir_graph *graph, const int32_t *nodes, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    etrt_ir_node *g = &graph->nodes[nodes[i]];
    for (uint32_t o = 0; o < g->num_outputs; ++o)
      if (g->outputs[o] >= 0) graph->values[g->outputs[o]].producer = -1;
    g->dead = true;
  }
}
