/* Definitions of the quantized operators (quantize.h): QuantizeLinear and
 * DequantizeLinear (per tensor, per axis, blocked), DynamicQuantizeLinear, the integer
 * products MatMulInteger and ConvInteger (int32 out), and QLinearMatMul and QLinearConv
 * (int32 accumulation, requantized to the output's 8-bit type). */
#include "engine/ops/quantize.h"

#include <stdio.h>
#include <string.h>

#include "base/dtype.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static const etrt_dtype etrt_quant_float_types[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT16,
                                                    ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_quant_q_types[] = {ETRT_DTYPE_INT8, ETRT_DTYPE_UINT8, ETRT_DTYPE_INT16,
                                                ETRT_DTYPE_UINT16, ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_quant_dq_types[] = {ETRT_DTYPE_INT8,  ETRT_DTYPE_UINT8,
                                                 ETRT_DTYPE_INT16, ETRT_DTYPE_UINT16,
                                                 ETRT_DTYPE_INT32, ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_quant_8bit_types[] = {ETRT_DTYPE_INT8, ETRT_DTYPE_UINT8,
                                                   ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_quant_scale_types[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT16,
                                                    ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_quant_f32[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_INVALID};

void etrt_quant_range(etrt_dtype dtype, int32_t *lo, int32_t *hi) {
  switch (dtype) {
    case ETRT_DTYPE_INT8:
      *lo = -128, *hi = 127;
      break;
    case ETRT_DTYPE_UINT8:
      *lo = 0, *hi = 255;
      break;
    case ETRT_DTYPE_INT16:
      *lo = -32768, *hi = 32767;
      break;
    case ETRT_DTYPE_UINT16:
      *lo = 0, *hi = 65535;
      break;
    default:
      *lo = INT32_MIN, *hi = INT32_MAX;
      break;
  }
}

int etrt_quant_is_qlinear(const etrt_node *node) {
  return strcmp(node->op_type, "QLinearMatMul") == 0 || strcmp(node->op_type, "QLinearConv") == 0;
}

static void etrt_quant_format_dims(const etrt_tensor *t, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t i = 0; i < t->rank && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)t->dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

static int etrt_quant_same_dims(const etrt_tensor *a, const etrt_tensor *b) {
  return etrt_shape_equal(a->rank, a->dims, b->rank, b->dims);
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------------------- */

etrt_status etrt_quant_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_quant_layout *out) {
  const etrt_tensor *x = &inputs[0], *scale = &inputs[1];
  memset(out, 0, sizeof *out);
  out->outer = out->inner = 1;
  out->axis = etrt_shape_numel(x->rank, x->dims);
  int64_t block = etrt_node_attribute_int(node, "block_size", 0);
  if (block < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "block_size %lld is negative",
                         (long long)block);
  char sbuf[128], xbuf[128];
  etrt_quant_format_dims(scale, sbuf, sizeof sbuf);
  etrt_quant_format_dims(x, xbuf, sizeof xbuf);
  int scalar = scale->rank == 0 || (scale->rank == 1 && scale->dims[0] == 1);
  if (block == 0 && scalar) {
    out->mode = ETRT_QUANT_PER_TENSOR;
  } else {
    if (x->rank < 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "scale of shape %s on a scalar x: only one scale fits", sbuf);
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 1, x->rank, &axis));
    out->outer = etrt_shape_numel(axis, x->dims);
    out->axis = x->dims[axis];
    out->inner = etrt_shape_numel(x->rank - axis - 1, x->dims + axis + 1);
    if (block > 0) {
      out->mode = ETRT_QUANT_BLOCKED;
      out->block = block;
      out->blocks = (out->axis + block - 1) / block;
      int fits = scale->rank == x->rank;
      for (int32_t d = 0; fits && d < x->rank; ++d)
        fits = scale->dims[d] == (d == axis ? out->blocks : x->dims[d]);
      if (!fits)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "scale has shape %s; blocks of %lld along axis %d of x %s need "
                             "x's shape with %lld at that axis",
                             sbuf, (long long)block, (int)axis, xbuf, (long long)out->blocks);
    } else {
      out->mode = ETRT_QUANT_PER_AXIS;
      if (scale->rank != 1 || scale->dims[0] != out->axis)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "scale has shape %s; per-axis scales along axis %d of x %s must be "
                             "1-D of %lld",
                             sbuf, (int)axis, xbuf, (long long)out->axis);
    }
  }
  if (etrt_op_has_input(node, inputs, 2)) {
    out->has_zero_point = 1;
    /* A scalar and a 1-element 1-D tensor are both per-tensor. */
    int both_scalar = out->mode == ETRT_QUANT_PER_TENSOR &&
                      etrt_shape_numel(inputs[2].rank, inputs[2].dims) == 1 && inputs[2].rank <= 1;
    if (!both_scalar && !etrt_quant_same_dims(&inputs[2], scale)) {
      char zbuf[128];
      etrt_quant_format_dims(&inputs[2], zbuf, sizeof zbuf);
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "zero point has shape %s, scale has %s: they must match", zbuf, sbuf);
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_quant_check_io(const etrt_node *node, const etrt_tensor *inputs) {
  if (node->num_inputs < 2 || node->num_inputs > 3 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0) || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes x, a scale and an optional zero point, and one output");
  return etrt_op_check_dtype(node, "scale", inputs[1].dtype, etrt_quant_float_types);
}

static etrt_status etrt_quantize_infer(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_quant_check_io(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "x", inputs[0].dtype, etrt_quant_float_types));
  etrt_dtype y = ETRT_DTYPE_UINT8;
  int64_t wanted = etrt_node_attribute_int(node, "output_dtype", 0);
  if (wanted != 0) {
    y = etrt_dtype_from_onnx(wanted);
    if (y == ETRT_DTYPE_INVALID)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                           "output_dtype is ONNX element type %lld, which is not supported",
                           (long long)wanted);
  }
  if (etrt_op_has_input(node, inputs, 2)) {
    if (wanted != 0 && inputs[2].dtype != y)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "output_dtype says %s, the zero point is %s", etrt_dtype_name(y),
                           etrt_dtype_name(inputs[2].dtype));
    y = inputs[2].dtype;
  }
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "the output", y, etrt_quant_q_types));
  etrt_quant_layout layout;
  ETRT_RETURN_IF_ERROR(etrt_quant_layout_of(node, inputs, &layout));
  outputs[0] = inputs[0];
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  outputs[0].dtype = y;
  return ETRT_OK;
}

static etrt_status etrt_dequantize_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_quant_check_io(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "x", inputs[0].dtype, etrt_quant_dq_types));
  if (etrt_op_has_input(node, inputs, 2) && inputs[2].dtype != inputs[0].dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "zero point is %s, x is %s",
                         etrt_dtype_name(inputs[2].dtype), etrt_dtype_name(inputs[0].dtype));
  etrt_quant_layout layout;
  ETRT_RETURN_IF_ERROR(etrt_quant_layout_of(node, inputs, &layout));
  outputs[0] = inputs[0];
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  outputs[0].dtype = inputs[1].dtype;
  return ETRT_OK;
}

static etrt_status etrt_dynamic_quantize_infer(const etrt_node *node, const etrt_tensor *inputs,
                                               etrt_tensor *outputs) {
  if (node->num_inputs != 1 || node->num_outputs != 3 || !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes x and gives y, y_scale and y_zero_point");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "x", inputs[0].dtype, etrt_quant_f32));
  outputs[0] = inputs[0];
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  outputs[0].dtype = ETRT_DTYPE_UINT8;
  memset(&outputs[1], 0, sizeof outputs[1]);
  memset(&outputs[2], 0, sizeof outputs[2]);
  outputs[1].dtype = ETRT_DTYPE_FLOAT32;
  outputs[2].dtype = ETRT_DTYPE_UINT8;
  return ETRT_OK;
}

/* ---- integer products --------------------------------------------------------------- */

/* A zero point or scale of operand `what`: one value, or a 1-D tensor of `per`
 * (rows of A, columns of B, output channels of W). Sets *count; absent: 1. */
static etrt_status etrt_quant_per_count(const etrt_node *node, const etrt_tensor *inputs,
                                        uint32_t index, const char *what, int64_t per,
                                        const char *per_what, etrt_dtype want,
                                        const etrt_dtype *allowed, int64_t *count) {
  *count = 1;
  if (!etrt_op_has_input(node, inputs, index)) return ETRT_OK;
  const etrt_tensor *t = &inputs[index];
  if (allowed != NULL) ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, what, t->dtype, allowed));
  if (want != ETRT_DTYPE_INVALID && t->dtype != want)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s is %s, its operand is %s", what,
                         etrt_dtype_name(t->dtype), etrt_dtype_name(want));
  int64_t n = etrt_shape_numel(t->rank, t->dims);
  if (n == 1) return ETRT_OK;
  if (per > 0 && t->rank == 1 && n == per) {
    *count = per;
    return ETRT_OK;
  }
  char buf[128];
  etrt_quant_format_dims(t, buf, sizeof buf);
  if (per <= 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s has shape %s; it must be a scalar",
                         what, buf);
  return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                       "%s has shape %s; it must be a scalar or 1-D of %lld (%s)", what, buf,
                       (long long)per, per_what);
}

static etrt_status etrt_quant_same_count(const etrt_node *node, const etrt_tensor *inputs,
                                         uint32_t scale, uint32_t zp, const char *what) {
  if (!etrt_op_has_input(node, inputs, zp)) return ETRT_OK;
  if (etrt_shape_numel(inputs[scale].rank, inputs[scale].dims) !=
      etrt_shape_numel(inputs[zp].rank, inputs[zp].dims)) {
    char sbuf[128], zbuf[128];
    etrt_quant_format_dims(&inputs[scale], sbuf, sizeof sbuf);
    etrt_quant_format_dims(&inputs[zp], zbuf, sizeof zbuf);
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "%s zero point has shape %s, its scale %s: they must match", what, zbuf,
                         sbuf);
  }
  return ETRT_OK;
}

etrt_status etrt_qmatmul_params_of(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_qmatmul_params *out) {
  memset(out, 0, sizeof *out);
  int ql = etrt_quant_is_qlinear(node);
  uint32_t ia = ql ? ETRT_QL_A : 0, ib = ql ? ETRT_QL_B : 1;
  uint32_t iaz = ql ? ETRT_QL_A_ZP : 2, ibz = ql ? ETRT_QL_B_ZP : 3;
  if ((ql ? node->num_inputs < 8 || node->num_inputs > 9
          : (node->num_inputs < 2 || node->num_inputs > 4)) ||
      node->num_outputs != 1 || !etrt_op_has_input(node, inputs, ia) ||
      !etrt_op_has_input(node, inputs, ib))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         ql ? "takes a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, "
                              "y_zero_point (and, as the builder makes it from a Gemm, an int32 "
                              "bias per column) and one output"
                            : "takes A, B and optional zero points, and one output");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "A", inputs[ia].dtype, etrt_quant_8bit_types));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "B", inputs[ib].dtype, etrt_quant_8bit_types));
  ETRT_RETURN_IF_ERROR(etrt_matmul_shape_init(node, &inputs[ia], &inputs[ib], &out->shape));
  /* Per-row zero points of A and per-column ones of B need a matrix operand. */
  int64_t rows = inputs[ia].rank >= 2 ? out->shape.m : 0;
  int64_t cols = inputs[ib].rank >= 2 ? out->shape.n : 0;
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, iaz, "A's zero point", rows, "rows of A",
                                            inputs[ia].dtype, NULL, &out->a_zp_count));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ibz, "B's zero point", cols,
                                            "columns of B", inputs[ib].dtype, NULL,
                                            &out->b_zp_count));
  if (!ql) return ETRT_OK;
  for (uint32_t i = 0; i < 8; ++i)
    if (!etrt_op_has_input(node, inputs, i) && i != ETRT_QL_A_ZP && i != ETRT_QL_B_ZP &&
        i != ETRT_QL_Y_ZP)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is missing", i);
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_A_SCALE, "a_scale", rows,
                                            "rows of A", ETRT_DTYPE_INVALID, etrt_quant_scale_types,
                                            &out->a_scale_count));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_B_SCALE, "b_scale", cols,
                                            "columns of B", ETRT_DTYPE_INVALID,
                                            etrt_quant_scale_types, &out->b_scale_count));
  ETRT_RETURN_IF_ERROR(etrt_quant_same_count(node, inputs, ETRT_QL_A_SCALE, ETRT_QL_A_ZP, "a's"));
  ETRT_RETURN_IF_ERROR(etrt_quant_same_count(node, inputs, ETRT_QL_B_SCALE, ETRT_QL_B_ZP, "b's"));
  int64_t one;
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_Y_SCALE, "y_scale", 0, "",
                                            ETRT_DTYPE_INVALID, etrt_quant_scale_types, &one));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_Y_ZP, "y_zero_point", 0, "",
                                            ETRT_DTYPE_INVALID, etrt_quant_8bit_types, &one));
  if (node->num_inputs > ETRT_QL_BIAS && etrt_op_has_input(node, inputs, ETRT_QL_BIAS)) {
    const etrt_tensor *b = &inputs[ETRT_QL_BIAS];
    if (b->dtype != ETRT_DTYPE_INT32 || b->rank != 1 || b->dims[0] != out->shape.n)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "the bias must be a 1-D int32 tensor of %lld elements (B's columns)",
                           (long long)out->shape.n);
  }
  return ETRT_OK;
}

/* The output type of a QLinear op: its y_zero_point's, else its first operand's. */
static etrt_dtype etrt_qlinear_out_dtype(const etrt_node *node, const etrt_tensor *inputs) {
  return etrt_op_has_input(node, inputs, ETRT_QL_Y_ZP) ? inputs[ETRT_QL_Y_ZP].dtype
                                                       : inputs[ETRT_QL_A].dtype;
}

static etrt_status etrt_qmatmul_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  etrt_qmatmul_params p;
  ETRT_RETURN_IF_ERROR(etrt_qmatmul_params_of(node, inputs, &p));
  memset(&outputs[0], 0, sizeof outputs[0]);
  outputs[0].dtype =
      etrt_quant_is_qlinear(node) ? etrt_qlinear_out_dtype(node, inputs) : ETRT_DTYPE_INT32;
  outputs[0].rank = p.shape.out_rank;
  memcpy(outputs[0].dims, p.shape.out_dims, (size_t)p.shape.out_rank * sizeof(int64_t));
  return ETRT_OK;
}

static etrt_status etrt_qconv_prepare(const etrt_node *node, void *state) {
  return etrt_conv_params_parse(node, 0, (etrt_conv_params *)state);
}

etrt_status etrt_qconv_params_of(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_qconv_params *out) {
  memset(out, 0, sizeof *out);
  int ql = etrt_quant_is_qlinear(node);
  uint32_t ix = ql ? ETRT_QL_A : 0, iw = ql ? ETRT_QL_B : 1;
  uint32_t ixz = ql ? ETRT_QL_A_ZP : 2, iwz = ql ? ETRT_QL_B_ZP : 3;
  if ((ql ? node->num_inputs < 8 || node->num_inputs > 9
          : (node->num_inputs < 2 || node->num_inputs > 4)) ||
      node->num_outputs != 1 || !etrt_op_has_input(node, inputs, ix) ||
      !etrt_op_has_input(node, inputs, iw))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         ql ? "takes x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, "
                              "y_zero_point, an optional B and one output"
                            : "takes x, w and optional zero points, and one output");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "x", inputs[ix].dtype, etrt_quant_8bit_types));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "w", inputs[iw].dtype, etrt_quant_8bit_types));
  const etrt_conv_params *params = node->state;
  const etrt_tensor *x = &inputs[ix], *w = &inputs[iw];
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_conv(node, params, x, w, &out->g));
  out->batch = x->dims[0];
  out->channels = x->dims[1];
  out->maps = w->dims[0];
  out->group = params->group;
  if (out->channels != w->dims[1] * out->group || out->maps % out->group != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "x has %lld channels and w is [%lld, %lld, ...] with group %lld: need "
                         "channels = w[1] * group and w[0] divisible by group",
                         (long long)out->channels, (long long)out->maps, (long long)w->dims[1],
                         (long long)out->group);
  int64_t one;
  ETRT_RETURN_IF_ERROR(
      etrt_quant_per_count(node, inputs, ixz, "x's zero point", 0, "", x->dtype, NULL, &one));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, iwz, "w's zero point", out->maps,
                                            "output channels", w->dtype, NULL, &out->w_zp_count));
  if (!ql) return ETRT_OK;
  for (uint32_t i = 0; i < 8; ++i)
    if (!etrt_op_has_input(node, inputs, i) && i != ETRT_QL_A_ZP && i != ETRT_QL_B_ZP &&
        i != ETRT_QL_Y_ZP)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is missing", i);
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_A_SCALE, "x_scale", 0, "",
                                            ETRT_DTYPE_INVALID, etrt_quant_scale_types, &one));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_B_SCALE, "w_scale", out->maps,
                                            "output channels", ETRT_DTYPE_INVALID,
                                            etrt_quant_scale_types, &out->w_scale_count));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_Y_SCALE, "y_scale", 0, "",
                                            ETRT_DTYPE_INVALID, etrt_quant_scale_types, &one));
  ETRT_RETURN_IF_ERROR(etrt_quant_per_count(node, inputs, ETRT_QL_Y_ZP, "y_zero_point", 0, "",
                                            ETRT_DTYPE_INVALID, etrt_quant_8bit_types, &one));
  if (etrt_op_has_input(node, inputs, ETRT_QL_BIAS)) {
    const etrt_tensor *b = &inputs[ETRT_QL_BIAS];
    if (b->dtype != ETRT_DTYPE_INT32 || b->rank != 1 || b->dims[0] != out->maps)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "B must be a 1-D int32 tensor of %lld elements", (long long)out->maps);
  }
  return ETRT_OK;
}

static etrt_status etrt_qconv_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  etrt_qconv_params p;
  ETRT_RETURN_IF_ERROR(etrt_qconv_params_of(node, inputs, &p));
  memset(&outputs[0], 0, sizeof outputs[0]);
  outputs[0].dtype =
      etrt_quant_is_qlinear(node) ? etrt_qlinear_out_dtype(node, inputs) : ETRT_DTYPE_INT32;
  outputs[0].rank = p.g.spatial + 2;
  outputs[0].dims[0] = p.batch;
  outputs[0].dims[1] = p.maps;
  for (int32_t i = 0; i < p.g.spatial; ++i) outputs[0].dims[i + 2] = p.g.out[i];
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_quantize_linear = {.op_type = "QuantizeLinear",
                                                        .infer = etrt_quantize_infer,
                                                        .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_dequantize_linear = {.op_type = "DequantizeLinear",
                                                          .infer = etrt_dequantize_infer,
                                                          .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_dynamic_quantize_linear = {
    .op_type = "DynamicQuantizeLinear",
    .infer = etrt_dynamic_quantize_infer,
    .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_matmul_integer = {
    .op_type = "MatMulInteger", .infer = etrt_qmatmul_infer, .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_qlinear_matmul = {
    .op_type = "QLinearMatMul", .infer = etrt_qmatmul_infer, .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_conv_integer = {.op_type = "ConvInteger",
                                                     .state_size = sizeof(etrt_conv_params),
                                                     .prepare = etrt_qconv_prepare,
                                                     .infer = etrt_qconv_infer,
                                                     .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_qlinear_conv = {.op_type = "QLinearConv",
                                                     .state_size = sizeof(etrt_conv_params),
                                                     .prepare = etrt_qconv_prepare,
                                                     .infer = etrt_qconv_infer,
                                                     .cuda_supports = etrt_op_supports_all};

const etrt_op_def *const etrt_ops_quantize[] = {&etrt_op_def_quantize_linear,
                                                &etrt_op_def_dequantize_linear,
                                                &etrt_op_def_dynamic_quantize_linear,
                                                &etrt_op_def_matmul_integer,
                                                &etrt_op_def_qlinear_matmul,
                                                &etrt_op_def_conv_integer,
                                                &etrt_op_def_qlinear_conv,
                                                NULL};
