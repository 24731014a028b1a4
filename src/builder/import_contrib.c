/* com.microsoft operators as engine operations (import_contrib.h). Each is rewritten
 * into the operators whose composition onnxruntime's contrib documentation gives:
 *   Gelu, FastGelu, BiasGelu        [Add] + Gelu (exact, or tanh for FastGelu)
 *   SkipLayerNormalization          Add(input[ + bias], skip) + LayerNormalization
 *   QLinearAdd, QLinearMul,         the engine's operators of those names, which compute
 *   QLinearSoftmax                  onnxruntime's arithmetic (engine/ops/qlinear.h)
 *   QLinearGlobalAveragePool        DequantizeLinear + GlobalAveragePool + QuantizeLinear
 *   QGemm                           QLinearMatMul with a column bias (quantized Y, C absent
 *                                   or one row); else DequantizeLinear (A, B, C at
 *                                   a_scale * b_scale) + Gemm [+ QuantizeLinear]
 *   DynamicQuantizeMatMul           DynamicQuantizeLinear + MatMulInteger (int32) + Cast
 *                                   + Mul(a_scale * b_scale) [+ Add bias]
 *   Attention                       MatMul + bias, Split into Q, K, V, heads by Reshape
 *                                   and Transpose, scaled Q K^T, masks, Softmax, times V
 *   QuantizeLinear, DequantizeLinear the ONNX operators (the contrib ones are the same)
 * so the engine's kernels (the integer ones included) run them on every executor. */
#include "builder/import_contrib.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/status.h"

/* ONNX TensorProto.DataType numbers used here. */
#define ETRT_CONTRIB_ONNX_FLOAT 1
#define ETRT_CONTRIB_ONNX_INT64 7

typedef struct etrt_contrib {
  etrt_ir_graph *g;
  const char *label, *name;
  uint32_t num_inputs, num_outputs, num_attributes;
  const int32_t *inputs, *outputs;
  const etrt_attribute *attributes;
  int step;
} etrt_contrib;

static const char *const etrt_contrib_ops[] = {"Gelu",
                                               "FastGelu",
                                               "BiasGelu",
                                               "SkipLayerNormalization",
                                               "QLinearAdd",
                                               "QLinearMul",
                                               "QLinearGlobalAveragePool",
                                               "QLinearSoftmax",
                                               "QGemm",
                                               "DynamicQuantizeMatMul",
                                               "Attention",
                                               "QuantizeLinear",
                                               "DequantizeLinear"};

bool etrt_import_contrib_known(const char *op_type) {
  for (size_t i = 0; i < sizeof etrt_contrib_ops / sizeof etrt_contrib_ops[0]; ++i)
    if (strcmp(op_type, etrt_contrib_ops[i]) == 0) return true;
  return false;
}

static int32_t etrt_contrib_in(const etrt_contrib *c, uint32_t i) {
  return i < c->num_inputs ? c->inputs[i] : -1;
}

static int32_t etrt_contrib_out(const etrt_contrib *c, uint32_t i) {
  return i < c->num_outputs ? c->outputs[i] : -1;
}

static const etrt_attribute *etrt_contrib_attr(const etrt_contrib *c, const char *name) {
  for (uint32_t i = 0; i < c->num_attributes; ++i)
    if (strcmp(c->attributes[i].name, name) == 0) return &c->attributes[i];
  return NULL;
}

static int64_t etrt_contrib_int(const etrt_contrib *c, const char *name, int64_t fallback) {
  const etrt_attribute *a = etrt_contrib_attr(c, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_INT ? a->i : fallback;
}

static float etrt_contrib_float(const etrt_contrib *c, const char *name, float fallback) {
  const etrt_attribute *a = etrt_contrib_attr(c, name);
  return a != NULL && a->kind == ETRT_ATTRIBUTE_FLOAT ? a->f : fallback;
}

static etrt_status etrt_contrib_oom(void) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "import: out of memory");
}

static etrt_status etrt_contrib_refuse(const etrt_contrib *c, const char *what) {
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: %s", c->label, what);
}

/* Adds `op` with `num_out` outputs: out[k] where >= 0, else a new value written back. */
static etrt_status etrt_contrib_node_n(etrt_contrib *c, const char *op, uint32_t ni,
                                       const int32_t *ins, uint32_t na, const etrt_attribute *attrs,
                                       uint32_t num_out, int32_t *out) {
  char base[320];
  snprintf(base, sizeof base, "%s/%s_%d", c->name, op, c->step++);
  for (uint32_t k = 0; k < num_out; ++k)
    if (out[k] < 0) ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(c->g, base, &out[k]));
  /* Trailing omitted inputs are left off. */
  while (ni > 0 && ins[ni - 1] < 0) --ni;
  return etrt_ir_add_node(c->g, op, "", base, ni, ins, num_out, out, na, attrs, NULL);
}

/* One output: `out` when >= 0, else a new value; the value written goes to *made. */
static etrt_status etrt_contrib_node(etrt_contrib *c, const char *op, uint32_t ni,
                                     const int32_t *ins, uint32_t na, const etrt_attribute *attrs,
                                     int32_t out, int32_t *made) {
  int32_t o = out;
  ETRT_RETURN_IF_ERROR(etrt_contrib_node_n(c, op, ni, ins, na, attrs, 1, &o));
  if (made != NULL) *made = o;
  return ETRT_OK;
}

static etrt_status etrt_contrib_i64(etrt_contrib *c, const int64_t *values, int64_t count,
                                    int32_t rank, int32_t *out) {
  char base[320];
  snprintf(base, sizeof base, "%s/const_%d", c->name, c->step++);
  int64_t dims[1] = {count};
  void *data;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_constant(c->g, base, ETRT_DTYPE_INT64, rank, dims, &data, out));
  memcpy(data, values, (size_t)count * sizeof *values);
  return ETRT_OK;
}

static etrt_status etrt_contrib_f32(etrt_contrib *c, float value, int32_t *out) {
  char base[320];
  snprintf(base, sizeof base, "%s/const_%d", c->name, c->step++);
  void *data;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_constant(c->g, base, ETRT_DTYPE_FLOAT32, 0, NULL, &data, out));
  memcpy(data, &value, sizeof value);
  return ETRT_OK;
}

static etrt_status etrt_contrib_binary(etrt_contrib *c, const char *op, int32_t a, int32_t b,
                                       int32_t out, int32_t *made) {
  int32_t ins[2] = {a, b};
  return etrt_contrib_node(c, op, 2, ins, 0, NULL, out, made);
}

static etrt_status etrt_contrib_dequantize(etrt_contrib *c, int32_t x, int32_t scale, int32_t zp,
                                           int64_t axis, int32_t *made) {
  int32_t ins[3] = {x, scale, zp};
  etrt_attribute a = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = axis};
  return etrt_contrib_node(c, "DequantizeLinear", 3, ins, 1, &a, -1, made);
}

static etrt_status etrt_contrib_quantize(etrt_contrib *c, int32_t x, int32_t scale, int32_t zp,
                                         int32_t out) {
  int32_t ins[3] = {x, scale, zp};
  return etrt_contrib_node(c, "QuantizeLinear", 3, ins, 0, NULL, out, NULL);
}

static etrt_status etrt_contrib_need(const etrt_contrib *c, const uint32_t *indices, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (etrt_contrib_in(c, indices[i]) < 0) {
      char what[96];
      snprintf(what, sizeof what, "input %u is required", indices[i]);
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: %s", c->label, what);
    }
  if (etrt_contrib_out(c, 0) < 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: output 0 is required", c->label);
  return ETRT_OK;
}

/* ---- activations and normalisation ---------------------------------------------------- */

static etrt_status etrt_contrib_gelu(etrt_contrib *c, const char *op) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0}, 1));
  int32_t x = etrt_contrib_in(c, 0);
  if (strcmp(op, "BiasGelu") == 0) {
    ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){1}, 1));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", x, etrt_contrib_in(c, 1), -1, &x));
  } else if (strcmp(op, "FastGelu") == 0 && etrt_contrib_in(c, 1) >= 0) {
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", x, etrt_contrib_in(c, 1), -1, &x));
  }
  etrt_attribute tanh_form = {.name = "approximate", .kind = ETRT_ATTRIBUTE_STRING, .s = "tanh"};
  int fast = strcmp(op, "FastGelu") == 0;
  return etrt_contrib_node(c, "Gelu", 1, &x, fast ? 1 : 0, fast ? &tanh_form : NULL,
                           etrt_contrib_out(c, 0), NULL);
}

static etrt_status etrt_contrib_skip_layer_norm(etrt_contrib *c) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1, 2}, 3));
  if (etrt_contrib_out(c, 1) >= 0 || etrt_contrib_out(c, 2) >= 0)
    return etrt_contrib_refuse(c, "the mean and inv_std_var outputs (1 and 2) are not supported");
  /* The bias is added to the input first, so that the last Add (input + skip) is of two
   * values of one shape, which pass_addnorm.c fuses with the normalization into one
   * EtrtAddLayerNorm. */
  int32_t bias = etrt_contrib_in(c, 4), sum_out = etrt_contrib_out(c, 3), sum;
  int32_t input = etrt_contrib_in(c, 0);
  if (bias >= 0) ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", input, bias, -1, &input));
  ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", input, etrt_contrib_in(c, 1), sum_out, &sum));
  etrt_attribute attrs[2] = {{.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = -1},
                             {.name = "epsilon",
                              .kind = ETRT_ATTRIBUTE_FLOAT,
                              .f = etrt_contrib_float(c, "epsilon", 1e-12f)}};
  int32_t ins[3] = {sum, etrt_contrib_in(c, 2), etrt_contrib_in(c, 3)};
  return etrt_contrib_node(c, "LayerNormalization", 3, ins, 2, attrs, etrt_contrib_out(c, 0), NULL);
}

/* ---- quantized ------------------------------------------------------------------------ */

/* The engine's QLinearAdd / QLinearMul / QLinearSoftmax take the node as it is: they
 * compute onnxruntime's arithmetic (engine/ops/qlinear.h), which the composition through
 * float does not reproduce bit for bit. */
static etrt_status etrt_contrib_qlinear_same(etrt_contrib *c, const char *op) {
  return etrt_contrib_node_n(c, op, c->num_inputs, c->inputs, c->num_attributes, c->attributes, 1,
                             (int32_t[]){etrt_contrib_out(c, 0)});
}

static etrt_status etrt_contrib_qlinear_binary(etrt_contrib *c, const char *op) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1, 3, 4, 6}, 5));
  return etrt_contrib_qlinear_same(c, op);
}

static etrt_status etrt_contrib_qlinear_gap(etrt_contrib *c) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1, 3}, 3));
  if (etrt_contrib_int(c, "channels_last", 0) != 0)
    return etrt_contrib_refuse(c, "channels_last = 1 is not supported");
  int32_t x, y;
  ETRT_RETURN_IF_ERROR(etrt_contrib_dequantize(c, etrt_contrib_in(c, 0), etrt_contrib_in(c, 1),
                                               etrt_contrib_in(c, 2), 1, &x));
  ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "GlobalAveragePool", 1, &x, 0, NULL, -1, &y));
  return etrt_contrib_quantize(c, y, etrt_contrib_in(c, 3), etrt_contrib_in(c, 4),
                               etrt_contrib_out(c, 0));
}

/* QLinearSoftmax's `opset` attribute says which Softmax it is (before 13, the input
 * coerced to 2-D at `axis`); the engine's Softmax takes that as "_opset". */
static etrt_status etrt_contrib_qlinear_softmax(etrt_contrib *c) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1, 3}, 3));
  const etrt_attribute *opset = etrt_contrib_attr(c, "opset");
  if (opset == NULL || opset->kind != ETRT_ATTRIBUTE_INT)
    return etrt_contrib_refuse(c, "takes an int attribute 'opset' (the Softmax it computes)");
  return etrt_contrib_qlinear_same(c, "QLinearSoftmax");
}

/* A transposed 2-D value (a Transpose node; folded when the value is constant). */
static etrt_status etrt_contrib_transpose(etrt_contrib *c, int32_t x, int32_t *made) {
  static const int64_t swap[2] = {1, 0};
  etrt_attribute perm = {.name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = 2, .ints = swap};
  return etrt_contrib_node(c, "Transpose", 1, &x, 1, &perm, -1, made);
}

/* QGemm with a quantized Y, computed as onnxruntime computes it: the integer product of
 * A' and B' plus the int32 C, requantized once with alpha * a_scale * b_scale[n] / y_scale,
 * which is QLinearMatMul with the builder's bias input and a_scale taken as alpha *
 * a_scale. Going through float instead (dequantize, Gemm, quantize) rounds differently,
 * and an output on a step's edge then lands one step away; in a deep model such steps
 * add up (a 12-layer QOperator BERT agreed with onnxruntime on 89% of its top-1). Taken
 * for a constant C of one row (C absent, or rank 1); *done stays 0 otherwise. */
static etrt_status etrt_contrib_qgemm_integer(etrt_contrib *c, int64_t trans_a, int64_t trans_b,
                                              float alpha, int *done) {
  *done = 0;
  int32_t bias = etrt_contrib_in(c, 6);
  if (bias >= 0 && (!c->g->values[bias].is_constant || c->g->values[bias].rank != 1))
    return ETRT_OK;
  int32_t a = etrt_contrib_in(c, 0), b = etrt_contrib_in(c, 3), a_scale = etrt_contrib_in(c, 1);
  if (trans_a) ETRT_RETURN_IF_ERROR(etrt_contrib_transpose(c, a, &a));
  if (trans_b) ETRT_RETURN_IF_ERROR(etrt_contrib_transpose(c, b, &b));
  if (alpha != 1.0f) {
    int32_t alpha_v;
    ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, alpha, &alpha_v));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Mul", alpha_v, a_scale, -1, &a_scale));
  }
  int32_t ins[9] = {a,
                    a_scale,
                    etrt_contrib_in(c, 2),
                    b,
                    etrt_contrib_in(c, 4),
                    etrt_contrib_in(c, 5),
                    etrt_contrib_in(c, 7),
                    etrt_contrib_in(c, 8),
                    bias};
  *done = 1;
  return etrt_contrib_node(c, "QLinearMatMul", 9, ins, 0, NULL, etrt_contrib_out(c, 0), NULL);
}

/* QGemm: Y = alpha * A' B' + C, with C an int32 bias at scale a_scale * b_scale, and Y
 * quantized when y_scale is given (else float). */
static etrt_status etrt_contrib_qgemm(etrt_contrib *c) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1, 3, 4}, 4));
  int64_t trans_a = etrt_contrib_int(c, "transA", 0), trans_b = etrt_contrib_int(c, "transB", 0);
  float alpha = etrt_contrib_float(c, "alpha", 1.0f);
  if (etrt_contrib_in(c, 7) >= 0) {
    int done = 0;
    ETRT_RETURN_IF_ERROR(etrt_contrib_qgemm_integer(c, trans_a, trans_b, alpha, &done));
    if (done) return ETRT_OK;
  }
  int32_t a, b, bias = -1;
  ETRT_RETURN_IF_ERROR(etrt_contrib_dequantize(c, etrt_contrib_in(c, 0), etrt_contrib_in(c, 1),
                                               etrt_contrib_in(c, 2), 1, &a));
  /* B's scales are per column of B': axis 0 of a transposed B. */
  ETRT_RETURN_IF_ERROR(etrt_contrib_dequantize(c, etrt_contrib_in(c, 3), etrt_contrib_in(c, 4),
                                               etrt_contrib_in(c, 5), trans_b ? 0 : 1, &b));
  if (etrt_contrib_in(c, 6) >= 0) {
    int32_t scale;
    ETRT_RETURN_IF_ERROR(
        etrt_contrib_binary(c, "Mul", etrt_contrib_in(c, 1), etrt_contrib_in(c, 4), -1, &scale));
    ETRT_RETURN_IF_ERROR(etrt_contrib_dequantize(c, etrt_contrib_in(c, 6), scale, -1, 0, &bias));
  }
  etrt_attribute attrs[4] = {{.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = alpha},
                             {.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = alpha},
                             {.name = "transA", .kind = ETRT_ATTRIBUTE_INT, .i = trans_a},
                             {.name = "transB", .kind = ETRT_ATTRIBUTE_INT, .i = trans_b}};
  int32_t ins[3] = {a, b, bias};
  int quantized = etrt_contrib_in(c, 7) >= 0;
  int32_t y;
  ETRT_RETURN_IF_ERROR(
      etrt_contrib_node(c, "Gemm", 3, ins, 4, attrs, quantized ? -1 : etrt_contrib_out(c, 0), &y));
  if (!quantized) return ETRT_OK;
  return etrt_contrib_quantize(c, y, etrt_contrib_in(c, 7), etrt_contrib_in(c, 8),
                               etrt_contrib_out(c, 0));
}

static etrt_status etrt_contrib_dynamic_quantize_matmul(etrt_contrib *c) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1, 2}, 3));
  int32_t q[3] = {-1, -1, -1};
  int32_t a = etrt_contrib_in(c, 0);
  ETRT_RETURN_IF_ERROR(etrt_contrib_node_n(c, "DynamicQuantizeLinear", 1, &a, 0, NULL, 3, q));
  int32_t mm_in[4] = {q[0], etrt_contrib_in(c, 1), q[2], etrt_contrib_in(c, 3)};
  int32_t acc, f, scale, y;
  ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "MatMulInteger", 4, mm_in, 0, NULL, -1, &acc));
  etrt_attribute to = {.name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = ETRT_CONTRIB_ONNX_FLOAT};
  ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Cast", 1, &acc, 1, &to, -1, &f));
  ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Mul", q[1], etrt_contrib_in(c, 2), -1, &scale));
  int32_t bias = etrt_contrib_in(c, 4);
  ETRT_RETURN_IF_ERROR(
      etrt_contrib_binary(c, "Mul", f, scale, bias >= 0 ? -1 : etrt_contrib_out(c, 0), &y));
  if (bias < 0) return ETRT_OK;
  return etrt_contrib_binary(c, "Add", y, bias, etrt_contrib_out(c, 0), NULL);
}

/* ---- Attention -------------------------------------------------------------------------- */

/* The additive mask of shape broadcastable to [B, N, S, T] from mask_index: raw 0/1
 * masks of rank 2 ([B, T]) or 3 ([B, S, T]) add (1 - mask) * mask_filter_value; a 1-D
 * mask holds each batch's key length (right padding). */
static etrt_status etrt_contrib_attention_mask(etrt_contrib *c, int32_t mask, int32_t input,
                                               float filter, int32_t *out) {
  const etrt_ir_value *m = &c->g->values[mask];
  int32_t f, one, filter_v, inv, add = -1;
  ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, filter, &filter_v));
  if (m->rank == 1) {
    int32_t shape, index, length, zero_i, one_i, range, mask64, column, valid, zero_f;
    etrt_attribute to64 = {.name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = ETRT_CONTRIB_ONNX_INT64};
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Shape", 1, &input, 0, NULL, -1, &shape));
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){1}, 1, 0, &index));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Gather", shape, index, -1, &length));
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){0}, 1, 0, &zero_i));
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){1}, 1, 0, &one_i));
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Range", 3, (const int32_t[]){zero_i, length, one_i},
                                           0, NULL, -1, &range));
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Cast", 1, &mask, 1, &to64, -1, &mask64));
    int32_t col_shape;
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){-1, 1}, 2, 1, &col_shape));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Reshape", mask64, col_shape, -1, &column));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Less", range, column, -1, &valid));
    ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, 0.0f, &zero_f));
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(
        c, "Where", 3, (const int32_t[]){valid, zero_f, filter_v}, 0, NULL, -1, &add));
  } else if (m->rank == 2 || m->rank == 3) {
    etrt_attribute to = {.name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = ETRT_CONTRIB_ONNX_FLOAT};
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Cast", 1, &mask, 1, &to, -1, &f));
    ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, 1.0f, &one));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Sub", one, f, -1, &inv));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Mul", inv, filter_v, -1, &add));
  } else {
    return etrt_contrib_refuse(c,
                               "mask_index (input 3) must have rank 1, 2 or 3 (known at import)");
  }
  /* [B, T] -> [B, 1, 1, T]; [B, S, T] -> [B, 1, S, T]. */
  int32_t axes;
  if (m->rank == 3)
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){1}, 1, 1, &axes));
  else
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){1, 2}, 2, 1, &axes));
  return etrt_contrib_binary(c, "Unsqueeze", add, axes, -1, out);
}

static etrt_status etrt_contrib_attention(etrt_contrib *c) {
  ETRT_RETURN_IF_ERROR(etrt_contrib_need(c, (const uint32_t[]){0, 1}, 2));
  if (etrt_contrib_in(c, 4) >= 0 || etrt_contrib_in(c, 6) >= 0 || etrt_contrib_out(c, 1) >= 0)
    return etrt_contrib_refuse(c, "a past state (input 4, 6 or output 'present') is not supported");
  if (etrt_contrib_int(c, "do_rotary", 0) != 0)
    return etrt_contrib_refuse(c, "do_rotary = 1 is not supported");
  int64_t heads = etrt_contrib_int(c, "num_heads", 0);
  if (heads <= 0) return etrt_contrib_refuse(c, "needs a positive attribute 'num_heads'");
  int64_t sizes[3] = {0, 0, 0};
  const etrt_attribute *qkv = etrt_contrib_attr(c, "qkv_hidden_sizes");
  const etrt_ir_value *w = &c->g->values[etrt_contrib_in(c, 1)];
  if (qkv != NULL) {
    if (qkv->kind != ETRT_ATTRIBUTE_INTS || qkv->count != 3)
      return etrt_contrib_refuse(c, "attribute 'qkv_hidden_sizes' must hold 3 ints");
    memcpy(sizes, qkv->ints, sizeof sizes);
  } else if (w->rank == 2 && w->max[1] > 0 && w->max[1] == w->min[1] && w->max[1] % 3 == 0) {
    sizes[0] = sizes[1] = sizes[2] = w->max[1] / 3;
  } else {
    return etrt_contrib_refuse(
        c, "the hidden sizes must come from 'qkv_hidden_sizes' or weights of known shape");
  }
  if (sizes[0] != sizes[1] || sizes[0] % heads != 0 || sizes[2] % heads != 0)
    return etrt_contrib_refuse(c,
                               "Q and K hidden sizes must be equal and V's and theirs "
                               "divisible by num_heads");
  int64_t head = sizes[0] / heads, v_head = sizes[2] / heads;
  float scale = etrt_contrib_float(c, "scale", 0.0f);
  if (scale == 0.0f) scale = 1.0f / sqrtf((float)head);
  float filter = etrt_contrib_float(c, "mask_filter_value", -10000.0f);

  int32_t x = etrt_contrib_in(c, 0), proj;
  ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "MatMul", x, etrt_contrib_in(c, 1), -1, &proj));
  if (etrt_contrib_in(c, 2) >= 0)
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", proj, etrt_contrib_in(c, 2), -1, &proj));
  int32_t split_sizes, parts[3] = {-1, -1, -1};
  ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, sizes, 3, 1, &split_sizes));
  etrt_attribute axis2 = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = 2};
  ETRT_RETURN_IF_ERROR(etrt_contrib_node_n(c, "Split", 2, (const int32_t[]){proj, split_sizes}, 1,
                                           &axis2, 3, parts));
  int32_t qk_shape, v_shape, heads_q[3];
  ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){0, 0, heads, head}, 4, 1, &qk_shape));
  ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){0, 0, heads, v_head}, 4, 1, &v_shape));
  static const int64_t perm_q[4] = {0, 2, 1, 3}, perm_k[4] = {0, 2, 3, 1};
  for (int i = 0; i < 3; ++i) {
    int32_t r;
    ETRT_RETURN_IF_ERROR(
        etrt_contrib_binary(c, "Reshape", parts[i], i == 2 ? v_shape : qk_shape, -1, &r));
    etrt_attribute perm = {
        .name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = i == 1 ? perm_k : perm_q};
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Transpose", 1, &r, 1, &perm, -1, &heads_q[i]));
  }
  int32_t scores, scale_v;
  ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "MatMul", heads_q[0], heads_q[1], -1, &scores));
  ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, scale, &scale_v));
  ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Mul", scores, scale_v, -1, &scores));
  if (etrt_contrib_in(c, 3) >= 0) {
    int32_t add = -1;
    ETRT_RETURN_IF_ERROR(etrt_contrib_attention_mask(c, etrt_contrib_in(c, 3), x, filter, &add));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", scores, add, -1, &scores));
  }
  if (etrt_contrib_int(c, "unidirectional", 0) != 0) {
    /* Keys after the query's position get the filter value: (1 - tril(ones)) * filter. */
    int32_t shape, starts, ends, dims, ones, lower, one, inv, filter_v, add;
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Shape", 1, &scores, 0, NULL, -1, &shape));
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){2}, 1, 1, &starts));
    ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){4}, 1, 1, &ends));
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Slice", 3, (const int32_t[]){shape, starts, ends}, 0,
                                           NULL, -1, &dims));
    float *one_data = etrt_ir_alloc(c->g, sizeof(float));
    if (one_data == NULL) return etrt_contrib_oom();
    *one_data = 1.0f;
    etrt_attribute value = {
        .name = "value",
        .kind = ETRT_ATTRIBUTE_TENSOR,
        .tensor = {.data = one_data, .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .sizes = {1}}};
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "ConstantOfShape", 1, &dims, 1, &value, -1, &ones));
    etrt_attribute upper = {.name = "upper", .kind = ETRT_ATTRIBUTE_INT, .i = 0};
    ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Trilu", 1, &ones, 1, &upper, -1, &lower));
    ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, 1.0f, &one));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Sub", one, lower, -1, &inv));
    ETRT_RETURN_IF_ERROR(etrt_contrib_f32(c, filter, &filter_v));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Mul", inv, filter_v, -1, &add));
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", scores, add, -1, &scores));
  }
  if (etrt_contrib_in(c, 5) >= 0)
    ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "Add", scores, etrt_contrib_in(c, 5), -1, &scores));
  int32_t probs, context, merged, out_shape;
  etrt_attribute last = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = -1};
  ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Softmax", 1, &scores, 1, &last, -1, &probs));
  ETRT_RETURN_IF_ERROR(etrt_contrib_binary(c, "MatMul", probs, heads_q[2], -1, &context));
  etrt_attribute perm = {.name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = perm_q};
  ETRT_RETURN_IF_ERROR(etrt_contrib_node(c, "Transpose", 1, &context, 1, &perm, -1, &merged));
  ETRT_RETURN_IF_ERROR(etrt_contrib_i64(c, (const int64_t[]){0, 0, sizes[2]}, 3, 1, &out_shape));
  return etrt_contrib_binary(c, "Reshape", merged, out_shape, etrt_contrib_out(c, 0), NULL);
}

etrt_status etrt_import_contrib(etrt_ir_graph *graph, const char *label, const char *op_type,
                                const char *name, uint32_t num_inputs, const int32_t *inputs,
                                uint32_t num_outputs, const int32_t *outputs,
                                uint32_t num_attributes, const etrt_attribute *attributes) {
  etrt_contrib c = {.g = graph,
                    .label = label,
                    .name = name,
                    .num_inputs = num_inputs,
                    .num_outputs = num_outputs,
                    .num_attributes = num_attributes,
                    .inputs = inputs,
                    .outputs = outputs,
                    .attributes = attributes};
  if (strcmp(op_type, "Gelu") == 0 || strcmp(op_type, "FastGelu") == 0 ||
      strcmp(op_type, "BiasGelu") == 0)
    return etrt_contrib_gelu(&c, op_type);
  if (strcmp(op_type, "SkipLayerNormalization") == 0) return etrt_contrib_skip_layer_norm(&c);
  if (strcmp(op_type, "QLinearAdd") == 0) return etrt_contrib_qlinear_binary(&c, "QLinearAdd");
  if (strcmp(op_type, "QLinearMul") == 0) return etrt_contrib_qlinear_binary(&c, "QLinearMul");
  if (strcmp(op_type, "QLinearGlobalAveragePool") == 0) return etrt_contrib_qlinear_gap(&c);
  if (strcmp(op_type, "QLinearSoftmax") == 0) return etrt_contrib_qlinear_softmax(&c);
  if (strcmp(op_type, "QGemm") == 0) return etrt_contrib_qgemm(&c);
  if (strcmp(op_type, "DynamicQuantizeMatMul") == 0)
    return etrt_contrib_dynamic_quantize_matmul(&c);
  if (strcmp(op_type, "Attention") == 0) return etrt_contrib_attention(&c);
  if (strcmp(op_type, "QuantizeLinear") == 0 || strcmp(op_type, "DequantizeLinear") == 0)
    return etrt_ir_add_node(graph, op_type, "", name, num_inputs, inputs, num_outputs, outputs,
                            num_attributes, attributes, NULL);
  return etrt_error(ETRT_ERROR_UNSUPPORTED,
                    "%s: operator '%s' of domain 'com.microsoft' is not "
                    "supported",
                    label, op_type);
}
