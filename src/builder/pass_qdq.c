/* The QDQ form of a quantized model (quantize_static's default):
 *
 *   DequantizeLinear(xq) -> Conv / MatMul <- DequantizeLinear(constant wq) [+ DQ(int32 bias)]
 *                               |
 *                        QuantizeLinear -> yq
 *
 * becomes one QLinearConv or QLinearMatMul in the place of the QuantizeLinear (a Gemm
 * with alpha = beta = 1 and no transposed A becomes a QLinearMatMul with the builder's
 * bias input, its weight transposed once here when transB is set), so the
 * product runs on the integers with int32 accumulation and one requantization, as
 * onnxruntime runs it, instead of dequantizing the weights and computing in float.
 * Taken when the activation and output are quantized per tensor with constant scales
 * and zero points, the weight is a constant quantized per tensor or per output channel
 * (axis 0 of a Conv weight, axis 1 of a MatMul weight, the output axis of a Gemm's), and a
 * Conv or Gemm bias, if any, is an int32 constant at scale x_scale * w_scale with zero
 * point 0. The DequantizeLinear
 * nodes stay for their other readers; dead-code removal drops the rest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builder/passes.h"

static bool etrt_qdq_is(const etrt_ir_graph *graph, int32_t node, const char *op) {
  return node >= 0 && !graph->nodes[node].dead && graph->nodes[node].domain[0] == '\0' &&
         strcmp(graph->nodes[node].op_type, op) == 0;
}

static const etrt_attribute *etrt_qdq_attr(const etrt_ir_node *n, const char *name) {
  for (uint32_t i = 0; i < n->num_attributes; ++i)
    if (strcmp(n->attributes[i].name, name) == 0) return &n->attributes[i];
  return NULL;
}

static int64_t etrt_qdq_attr_int(const etrt_ir_node *n, const char *name, int64_t fallback) {
  const etrt_attribute *a = etrt_qdq_attr(n, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_INT ? a->i : fallback;
}

static float etrt_qdq_attr_float(const etrt_ir_node *n, const char *name, float fallback) {
  const etrt_attribute *a = etrt_qdq_attr(n, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_FLOAT ? a->f : fallback;
}

static bool etrt_qdq_constant(const etrt_ir_graph *graph, int32_t value) {
  return value >= 0 && graph->values[value].is_constant && graph->values[value].data != NULL;
}

static bool etrt_qdq_8bit(etrt_dtype t) { return t == ETRT_DTYPE_INT8 || t == ETRT_DTYPE_UINT8; }

/* A DequantizeLinear or QuantizeLinear's scale and zero point: constants, float32
 * scale, the zero point (when present) of `count` elements like the scale. */
static bool etrt_qdq_params(const etrt_ir_graph *graph, const etrt_ir_node *n, int64_t count) {
  if (n->num_inputs < 2 || !etrt_qdq_constant(graph, n->inputs[1])) return false;
  const etrt_ir_value *s = &graph->values[n->inputs[1]];
  if (s->dtype != ETRT_DTYPE_FLOAT32 || etrt_ir_value_numel(s) != count) return false;
  if (etrt_qdq_attr_int(n, "block_size", 0) != 0) return false;
  if (n->num_inputs < 3 || n->inputs[2] < 0) return true;
  return etrt_qdq_constant(graph, n->inputs[2]) &&
         etrt_ir_value_numel(&graph->values[n->inputs[2]]) == count;
}

/* The DequantizeLinear writing `value`, per tensor over an 8-bit input; -1 if none. */
static int32_t etrt_qdq_activation(const etrt_ir_graph *graph, int32_t value) {
  int32_t p = value >= 0 ? graph->values[value].producer : -1;
  if (!etrt_qdq_is(graph, p, "DequantizeLinear")) return -1;
  const etrt_ir_node *n = &graph->nodes[p];
  if (!etrt_qdq_8bit(graph->values[n->inputs[0]].dtype) || !etrt_qdq_params(graph, n, 1)) return -1;
  return p;
}

/* The DequantizeLinear of a constant 8-bit weight of rank `rank`, per tensor or per
 * index of axis `axis`; -1 if none. */
static int32_t etrt_qdq_weight(const etrt_ir_graph *graph, int32_t value, int32_t rank,
                               int32_t axis) {
  int32_t p = value >= 0 ? graph->values[value].producer : -1;
  if (!etrt_qdq_is(graph, p, "DequantizeLinear")) return -1;
  const etrt_ir_node *n = &graph->nodes[p];
  const etrt_ir_value *w = &graph->values[n->inputs[0]];
  if (!etrt_qdq_constant(graph, n->inputs[0]) || !etrt_qdq_8bit(w->dtype) || w->rank != rank)
    return -1;
  if (etrt_qdq_params(graph, n, 1)) return p;
  int64_t a = etrt_qdq_attr_int(n, "axis", 1);
  if (a < 0) a += rank;
  if (a != axis || graph->values[n->inputs[1]].rank != 1) return -1;
  return etrt_qdq_params(graph, n, w->max[axis]) ? p : -1;
}

static float etrt_qdq_float(const etrt_ir_value *v, int64_t i) {
  float f;
  memcpy(&f, (const uint8_t *)v->data + i * (int64_t)sizeof f, sizeof f);
  return f;
}

/* The int32 bias of a Conv (per output channel) or Gemm (per column): DequantizeLinear of an int32
 * constant with zero point 0 and scale x_scale * w_scale (as quantizers make it); -1 if not. */
static int32_t etrt_qdq_bias(const etrt_ir_graph *graph, int32_t value, const etrt_ir_node *x_dq,
                             const etrt_ir_node *w_dq) {
  int32_t p = value >= 0 ? graph->values[value].producer : -1;
  if (!etrt_qdq_is(graph, p, "DequantizeLinear")) return -1;
  const etrt_ir_node *n = &graph->nodes[p];
  const etrt_ir_value *b = &graph->values[n->inputs[0]];
  if (!etrt_qdq_constant(graph, n->inputs[0]) || b->dtype != ETRT_DTYPE_INT32 || b->rank != 1)
    return -1;
  int64_t count = b->max[0];
  const etrt_ir_value *s = &graph->values[n->inputs[1]];
  if (!etrt_qdq_constant(graph, n->inputs[1]) || s->dtype != ETRT_DTYPE_FLOAT32) return -1;
  int64_t s_count = etrt_ir_value_numel(s);
  if (s_count != 1 && s_count != count) return -1;
  if (n->num_inputs > 2 && n->inputs[2] >= 0) {
    const etrt_ir_value *z = &graph->values[n->inputs[2]];
    if (!etrt_qdq_constant(graph, n->inputs[2])) return -1;
    for (int64_t i = 0; i < etrt_ir_value_numel(z); ++i) {
      int32_t v;
      memcpy(&v, (const uint8_t *)z->data + i * 4, 4);
      if (v != 0) return -1;
    }
  }
  const etrt_ir_value *xs = &graph->values[x_dq->inputs[1]], *ws = &graph->values[w_dq->inputs[1]];
  int64_t w_count = etrt_ir_value_numel(ws);
  for (int64_t i = 0; i < count; ++i) {
    float want = etrt_qdq_float(xs, 0) * etrt_qdq_float(ws, w_count > 1 ? i : 0);
    float got = etrt_qdq_float(s, s_count > 1 ? i : 0);
    if (fabsf(got - want) > 1e-6f * fabsf(want)) return -1;
  }
  return p;
}

/* The QuantizeLinear that alone reads `value` (not a graph output), per tensor with an
 * 8-bit zero point; -1 if none. */
static int32_t etrt_qdq_output(const etrt_ir_graph *graph, int32_t value) {
  int32_t q = etrt_ir_single_consumer(graph, value);
  if (!etrt_qdq_is(graph, q, "QuantizeLinear")) return -1;
  const etrt_ir_node *n = &graph->nodes[q];
  if (n->num_inputs < 3 || n->inputs[2] < 0 || !etrt_qdq_params(graph, n, 1) ||
      !etrt_qdq_8bit(graph->values[n->inputs[2]].dtype) || n->num_outputs != 1)
    return -1;
  return q;
}

static int32_t etrt_qdq_zp(const etrt_ir_node *dq) {
  return dq->num_inputs > 2 ? dq->inputs[2] : -1;
}

/* Rewrites the QuantizeLinear `q` into `op` over the integer operands, taking the
 * product's attributes when `keep_attributes` (a Conv's window); the product node dies. */
static etrt_status etrt_qdq_rewrite(etrt_ir_graph *graph, uint32_t product, int32_t q,
                                    const char *op, const int32_t *inputs, uint32_t num_inputs,
                                    bool keep_attributes) {
  etrt_ir_node *p = &graph->nodes[product], *n = &graph->nodes[q];
  int32_t *ins = etrt_ir_alloc(graph, num_inputs * sizeof *ins);
  if (ins == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  memcpy(ins, inputs, num_inputs * sizeof *ins);
  while (num_inputs > 0 && ins[num_inputs - 1] < 0) --num_inputs;
  n->op_type = op;
  n->inputs = ins;
  n->num_inputs = num_inputs;
  n->attributes = keep_attributes ? p->attributes : NULL;
  n->num_attributes = keep_attributes ? p->num_attributes : 0;
  for (uint32_t o = 0; o < p->num_outputs; ++o)
    if (p->outputs[o] >= 0) graph->values[p->outputs[o]].producer = -1;
  p->dead = true;
  return ETRT_OK;
}

/* Whether a Gemm is A B' + C: alpha and beta 1, A not transposed. */
static bool etrt_qdq_plain_gemm(const etrt_ir_node *n) {
  return etrt_qdq_attr_float(n, "alpha", 1.0f) == 1.0f &&
         etrt_qdq_attr_float(n, "beta", 1.0f) == 1.0f && etrt_qdq_attr_int(n, "transA", 0) == 0;
}

/* A constant holding the [N, K] int8/uint8 weight `value` transposed to [K, N]. */
static etrt_status etrt_qdq_transposed(etrt_ir_graph *graph, int32_t value, int32_t *out) {
  const etrt_ir_value *w = &graph->values[value];
  int64_t rows = w->max[0], cols = w->max[1];
  char base[256];
  snprintf(base, sizeof base, "%s_transposed", w->name);
  uint8_t *data;
  ETRT_RETURN_IF_ERROR(
      etrt_ir_add_constant(graph, base, w->dtype, 2, (int64_t[]){cols, rows}, (void **)&data, out));
  const uint8_t *from = graph->values[value].data; /* re-read: adding may move the values */
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) data[c * rows + r] = from[r * cols + c];
  return ETRT_OK;
}

/* DequantizeLinear x2 -> Add / Mul -> QuantizeLinear, or DequantizeLinear -> Softmax ->
 * QuantizeLinear, all per tensor and of one 8-bit type: the engine's QLinearAdd,
 * QLinearMul or QLinearSoftmax, which compute what onnxruntime's optimised session runs
 * for these groups (it fuses them into its contrib kernels of those names). */
static etrt_status etrt_qdq_fuse_elementwise(etrt_ir_graph *graph, uint32_t i, uint32_t *fused) {
  etrt_ir_node *n = &graph->nodes[i];
  bool softmax = etrt_qdq_is(graph, (int32_t)i, "Softmax");
  if (n->num_outputs != 1 || n->outputs[0] < 0 || n->num_inputs != (softmax ? 1u : 2u))
    return ETRT_OK;
  int32_t q = etrt_qdq_output(graph, n->outputs[0]);
  if (q < 0) return ETRT_OK;
  etrt_dtype t = graph->values[graph->nodes[q].outputs[0]].dtype;
  int32_t dq[2] = {-1, -1};
  for (uint32_t k = 0; k < n->num_inputs; ++k) {
    dq[k] = etrt_qdq_activation(graph, n->inputs[k]);
    if (dq[k] < 0 || graph->values[graph->nodes[dq[k]].inputs[0]].dtype != t) return ETRT_OK;
  }
  const etrt_ir_node *y = &graph->nodes[q], *a = &graph->nodes[dq[0]];
  if (softmax) {
    etrt_attribute *attrs = etrt_ir_alloc(graph, 2 * sizeof *attrs);
    if (attrs == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
    int64_t opset = graph->opset > 0 ? graph->opset : 13;
    attrs[0] = (etrt_attribute){.name = "axis",
                                .kind = ETRT_ATTRIBUTE_INT,
                                .i = etrt_qdq_attr_int(n, "axis", opset < 13 ? 1 : -1)};
    attrs[1] = (etrt_attribute){.name = "opset", .kind = ETRT_ATTRIBUTE_INT, .i = opset};
    int32_t ins[5] = {a->inputs[0], a->inputs[1], etrt_qdq_zp(a), y->inputs[1], y->inputs[2]};
    ETRT_RETURN_IF_ERROR(etrt_qdq_rewrite(graph, i, q, "QLinearSoftmax", ins, 5, false));
    graph->nodes[q].attributes = attrs;
    graph->nodes[q].num_attributes = 2;
  } else {
    const etrt_ir_node *b = &graph->nodes[dq[1]];
    bool add = etrt_qdq_is(graph, (int32_t)i, "Add");
    int32_t ins[8] = {a->inputs[0], a->inputs[1],   etrt_qdq_zp(a), b->inputs[0],
                      b->inputs[1], etrt_qdq_zp(b), y->inputs[1],   y->inputs[2]};
    ETRT_RETURN_IF_ERROR(
        etrt_qdq_rewrite(graph, i, q, add ? "QLinearAdd" : "QLinearMul", ins, 8, false));
  }
  ++*fused;
  return ETRT_OK;
}

etrt_status etrt_pass_fuse_qdq(etrt_ir_graph *graph, uint32_t *fused) {
  *fused = 0;
  for (uint32_t i = 0; i < graph->num_nodes; ++i) {
    etrt_ir_node *n = &graph->nodes[i];
    if (etrt_qdq_is(graph, (int32_t)i, "Add") || etrt_qdq_is(graph, (int32_t)i, "Mul") ||
        etrt_qdq_is(graph, (int32_t)i, "Softmax")) {
      ETRT_RETURN_IF_ERROR(etrt_qdq_fuse_elementwise(graph, i, fused));
      continue;
    }
    bool conv = etrt_qdq_is(graph, (int32_t)i, "Conv");
    bool gemm = etrt_qdq_is(graph, (int32_t)i, "Gemm");
    if (!conv && !gemm && !etrt_qdq_is(graph, (int32_t)i, "MatMul")) continue;
    if (n->num_inputs < 2 || n->num_outputs != 1 || n->outputs[0] < 0) continue;
    if (conv || gemm ? n->num_inputs > 3 : n->num_inputs != 2) continue;
    if (gemm && !etrt_qdq_plain_gemm(n)) continue;
    int32_t x_dq = etrt_qdq_activation(graph, n->inputs[0]);
    if (x_dq < 0) continue;
    int32_t w_rank = graph->values[n->inputs[1]].rank;
    bool trans_b = gemm && etrt_qdq_attr_int(n, "transB", 0) != 0;
    int32_t w_dq = conv || w_rank == 2
                       ? etrt_qdq_weight(graph, n->inputs[1], w_rank, conv || trans_b ? 0 : 1)
                       : -1;
    /* A MatMul of two activations (attention's Q K' and its probabilities times V), as
     * onnxruntime's optimised session runs it: one QLinearMatMul. */
    if (w_dq < 0 && !conv && !gemm) w_dq = etrt_qdq_activation(graph, n->inputs[1]);
    int32_t q = etrt_qdq_output(graph, n->outputs[0]);
    if (w_dq < 0 || q < 0) continue;
    int32_t bias = -1;
    if ((conv || gemm) && n->num_inputs > 2 && n->inputs[2] >= 0) {
      int32_t b_dq = etrt_qdq_bias(graph, n->inputs[2], &graph->nodes[x_dq], &graph->nodes[w_dq]);
      if (b_dq < 0) continue;
      bias = graph->nodes[b_dq].inputs[0];
    }
    int32_t weight = graph->nodes[w_dq].inputs[0];
    if (trans_b) ETRT_RETURN_IF_ERROR(etrt_qdq_transposed(graph, weight, &weight));
    const etrt_ir_node *x = &graph->nodes[x_dq], *w = &graph->nodes[w_dq], *y = &graph->nodes[q];
    int32_t ins[9] = {x->inputs[0],   x->inputs[1], etrt_qdq_zp(x), weight, w->inputs[1],
                      etrt_qdq_zp(w), y->inputs[1], y->inputs[2],   bias};
    ETRT_RETURN_IF_ERROR(etrt_qdq_rewrite(graph, i, q, conv ? "QLinearConv" : "QLinearMatMul", ins,
                                          conv || bias >= 0 ? 9 : 8, conv));
    ++*fused;
  }
  return ETRT_OK;
}
