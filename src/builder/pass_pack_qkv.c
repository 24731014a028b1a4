/* The Q, K and V projections of one attention as one product: three linear layers
 * reading the same input (each [K, N] times a row of A) are one GEMM over the weights
 * side by side, [K, Nq + Nk + Nv], one launch instead of three and a wider product that
 * fills the GPU better. The fused attention then reads Q, K and V at three column
 * offsets of the packed output, as it does for a packed projection the model splits
 * itself. The packed node takes the place of the first of the three: its weights are
 * constants, its input is read by all three, so the order stays topological. */
#include <stdio.h>
#include <string.h>

#include "builder/pass_match.h"
#include "builder/passes.h"

/* Whether `value` is a constant with host bytes of `rank` axes, of `dtype` (taken from
 * the first one seen when *dtype is INVALID), written before node `before` if at all. */
static bool etrt_pack_qkv_constant(const etrt_ir_graph *g, int32_t value, int32_t rank,
                                   etrt_dtype *dtype, int32_t before) {
  if (value < 0) return false;
  const etrt_ir_value *v = &g->values[value];
  if (!v->is_constant || v->data == NULL || v->rank != rank || v->dtype == ETRT_DTYPE_INVALID ||
      etrt_dtype_size(v->dtype) == 0 || v->producer >= before)
    return false;
  if (*dtype == ETRT_DTYPE_INVALID) *dtype = v->dtype;
  if (v->dtype != *dtype) return false;
  int64_t numel = etrt_ir_value_numel(v);
  return numel >= 0 && v->nbytes == (size_t)numel * etrt_dtype_size(v->dtype);
}

/* Whether the three nodes are projections of one input that can be packed: the same op
 * (MatMul, or EtrtMatMulBias without an activation), no attributes, constant weights
 * [K, N_i] (and biases [N_i]) of one type, and each output x[i] read by readers[i] alone.
 * Sets the columns of each. */
static bool etrt_pack_qkv_fits(const etrt_ir_graph *g, const int32_t p[3], const int32_t x[3],
                               const int32_t readers[3], int64_t columns[3]) {
  const etrt_ir_node *first = &g->nodes[p[0]];
  bool bias = strcmp(first->op_type, "EtrtMatMulBias") == 0;
  if (!bias && strcmp(first->op_type, "MatMul") != 0) return false;
  uint32_t inputs = bias ? 3 : 2;
  int32_t a = first->inputs[0];
  if (a < 0) return false;
  int32_t before = p[0] < p[1] ? p[0] : p[1];
  before = before < p[2] ? before : p[2];
  etrt_dtype dtype = ETRT_DTYPE_INVALID;
  const etrt_ir_value *xa = &g->values[x[0]];
  for (int i = 0; i < 3; ++i) {
    const etrt_ir_node *n = &g->nodes[p[i]];
    if (n->dead || strcmp(n->op_type, first->op_type) != 0 || n->num_inputs != inputs ||
        n->num_outputs != 1 || n->outputs[0] != x[i] || n->num_attributes != 0 ||
        n->inputs[0] != a || etrt_ir_single_consumer(g, x[i]) != readers[i])
      return false;
    if (!etrt_pack_qkv_constant(g, n->inputs[1], 2, &dtype, before)) return false;
    const etrt_ir_value *w = &g->values[n->inputs[1]];
    if (w->max[0] != g->values[first->inputs[1]].max[0]) return false;
    columns[i] = w->max[1];
    if (bias && (!etrt_pack_qkv_constant(g, n->inputs[2], 1, &dtype, before) ||
                 g->values[n->inputs[2]].max[0] != columns[i]))
      return false;
    /* The outputs differ only in their last axis, the weight's columns. */
    const etrt_ir_value *xv = &g->values[x[i]];
    if (xv->rank < 2 || xv->rank != xa->rank || xv->dtype != xa->dtype ||
        xv->min[xv->rank - 1] != columns[i] || xv->max[xv->rank - 1] != columns[i])
      return false;
    for (int32_t d = 0; d + 1 < xv->rank; ++d)
      if (xv->min[d] != xa->min[d] || xv->max[d] != xa->max[d]) return false;
  }
  return true;
}

/* A new constant of the three constants `parts` side by side along their last axis:
 * `rows` rows of columns[i] elements each. */
static etrt_status etrt_pack_qkv_concat(etrt_ir_graph *g, const char *base, const int32_t parts[3],
                                        const int64_t columns[3], int32_t *out) {
  /* Copies: adding the value may move the value array. */
  const etrt_ir_value first = g->values[parts[0]];
  size_t element = etrt_dtype_size(first.dtype);
  int64_t rows = first.rank == 2 ? first.max[0] : 1;
  int64_t width = columns[0] + columns[1] + columns[2];
  int64_t dims[2] = {rows, width};
  if (first.rank == 1) dims[0] = width;
  size_t nbytes = (size_t)rows * (size_t)width * element;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(g, base, out));
  unsigned char *data = etrt_ir_alloc_uninit(g, nbytes);
  if (data == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  size_t at = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int i = 0; i < 3; ++i) {
      size_t row = (size_t)columns[i] * element;
      memcpy(data + at, (const unsigned char *)g->values[parts[i]].data + (size_t)r * row, row);
      at += row;
    }
  return etrt_ir_set_constant(g, *out, first.dtype, first.rank, dims, data, nbytes);
}

etrt_status etrt_pass_pack_qkv(etrt_ir_graph *graph, const int32_t x[3], const int32_t readers[3],
                               int32_t *packed, int64_t offsets[3]) {
  *packed = -1;
  int32_t p[3];
  for (int i = 0; i < 3; ++i) {
    if (x[i] < 0 || graph->values[x[i]].producer < 0) return ETRT_OK;
    p[i] = graph->values[x[i]].producer;
  }
  int64_t columns[3];
  if (p[0] == p[1] || p[0] == p[2] || p[1] == p[2] ||
      !etrt_pack_qkv_fits(graph, p, x, readers, columns))
    return ETRT_OK;
  /* The earliest of the three becomes the packed projection. */
  int first = 0;
  for (int i = 1; i < 3; ++i)
    if (p[i] < p[first]) first = i;
  int32_t node = p[first];
  bool bias = graph->nodes[node].num_inputs == 3;
  char base[300];
  int32_t parts[3], weight = -1, bias_value = -1, out = -1;
  for (int i = 0; i < 3; ++i) parts[i] = graph->nodes[p[i]].inputs[1];
  snprintf(base, sizeof base, "%s_qkv_weight", graph->nodes[node].name);
  ETRT_RETURN_IF_ERROR(etrt_pack_qkv_concat(graph, base, parts, columns, &weight));
  if (bias) {
    for (int i = 0; i < 3; ++i) parts[i] = graph->nodes[p[i]].inputs[2];
    snprintf(base, sizeof base, "%s_qkv_bias", graph->nodes[node].name);
    ETRT_RETURN_IF_ERROR(etrt_pack_qkv_concat(graph, base, parts, columns, &bias_value));
  }
  snprintf(base, sizeof base, "%s_qkv", graph->nodes[node].name);
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(graph, base, &out));
  etrt_ir_value *v = &graph->values[out];
  const etrt_ir_value *like = &graph->values[x[0]];
  v->dtype = like->dtype;
  v->rank = like->rank;
  memcpy(v->min, like->min, sizeof v->min);
  memcpy(v->max, like->max, sizeof v->max);
  memcpy(v->symbol, like->symbol, sizeof v->symbol);
  v->min[v->rank - 1] = v->max[v->rank - 1] = columns[0] + columns[1] + columns[2];
  v->producer = node;
  /* The other two go; the first reads the packed constants and writes the packed value. */
  int32_t others[2], count = 0;
  for (int i = 0; i < 3; ++i)
    if (i != first) others[count++] = p[i];
  etrt_match_remove(graph, others, 2);
  etrt_ir_node *n = &graph->nodes[node];
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, n, 1, weight));
  if (bias) ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, n, 2, bias_value));
  graph->values[n->outputs[0]].producer = -1;
  n->outputs[0] = out;
  *packed = out;
  offsets[0] = 0;
  offsets[1] = columns[0];
  offsets[2] = columns[0] + columns[1];
  return ETRT_OK;
}
