/* Definitions of onnxruntime's quantized elementwise operators (qlinear.h): QLinearAdd
 * and QLinearMul (a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale,
 * c_zero_point; broadcasting) and QLinearSoftmax (x, x_scale, x_zero_point, y_scale,
 * y_zero_point; attributes opset and axis). Scales are one float32 each, zero points one
 * element of the 8-bit type of the data. The importer maps the com.microsoft operators
 * here, and the builder's QDQ pass the DequantizeLinear-Add/Mul/Softmax-QuantizeLinear
 * groups that onnxruntime's optimised session fuses into them. */
#include "engine/ops/qlinear.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static const etrt_dtype etrt_qlinear_8bit[] = {ETRT_DTYPE_UINT8, ETRT_DTYPE_INT8,
                                               ETRT_DTYPE_INVALID};

void etrt_qlinear_softmax_table(float x_scale, int64_t reduce, float table[256]) {
  /* The largest exponent whose sum over `reduce` terms stays well inside float's range
   * (5 bits to spare), in input steps; the logarithm in float, as onnxruntime takes it. */
  double shift = (double)logf(FLT_MAX / (float)reduce);
  shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / (double)x_scale;
  for (int i = 0; i < 256; ++i)
    table[i] = (float)exp(((double)i - 255.0 + shift) * (double)x_scale);
}

etrt_status etrt_qlinear_softmax_shape_of(const etrt_node *node, const etrt_tensor *x,
                                          etrt_qlinear_softmax_shape *out) {
  int64_t opset = etrt_node_attribute_int(node, "opset", 0);
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, opset < 13 ? 1 : -1, x->rank, &axis));
  out->outer = out->reduce = out->inner = 1;
  for (int32_t d = 0; d < x->rank; ++d) {
    if (d < axis)
      out->outer *= x->dims[d];
    else if (d == axis || opset < 13) /* before 13: the input coerced to 2-D at axis */
      out->reduce *= x->dims[d];
    else
      out->inner *= x->dims[d];
  }
  return ETRT_OK;
}

/* One element of a float32 scale or of a zero point of `dtype`, and present. */
static etrt_status etrt_qlinear_check_scalar(const etrt_node *node, const etrt_tensor *inputs,
                                             uint32_t index, const char *what, etrt_dtype dtype,
                                             int optional) {
  if (!etrt_op_has_input(node, inputs, index)) {
    if (optional) return ETRT_OK;
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s (input %u) is missing", what,
                         index);
  }
  const etrt_tensor *t = &inputs[index];
  if (t->dtype != dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s (input %u) is %s, not %s", what,
                         index, etrt_dtype_name(t->dtype), etrt_dtype_name(dtype));
  if (etrt_shape_numel(t->rank, t->dims) != 1)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "%s (input %u) has %lld elements; only one (per tensor) is supported",
                         what, index, (long long)etrt_shape_numel(t->rank, t->dims));
  return ETRT_OK;
}

static etrt_status etrt_qlinear_binary_infer(const etrt_node *node, const etrt_tensor *inputs,
                                             etrt_tensor *outputs) {
  if (node->num_inputs < 7 || node->num_inputs > 8 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0) || !etrt_op_has_input(node, inputs, 3))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale and "
                         "an optional c_zero_point, and one output");
  etrt_dtype t = inputs[0].dtype;
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "a", t, etrt_qlinear_8bit));
  if (inputs[3].dtype != t)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "b is %s, a is %s",
                         etrt_dtype_name(inputs[3].dtype), etrt_dtype_name(t));
  static const char *const names[8] = {NULL,      "a_scale",      "a_zero_point", NULL,
                                       "b_scale", "b_zero_point", "c_scale",      "c_zero_point"};
  for (uint32_t i = 1; i < 8; ++i) {
    if (i == 3) continue;
    int scale = i == 1 || i == 4 || i == 6;
    ETRT_RETURN_IF_ERROR(etrt_qlinear_check_scalar(node, inputs, i, names[i],
                                                   scale ? ETRT_DTYPE_FLOAT32 : t, !scale));
  }
  memset(&outputs[0], 0, sizeof outputs[0]);
  ETRT_RETURN_IF_ERROR(etrt_shape_broadcast(node, 2, (const etrt_tensor[]){inputs[0], inputs[3]},
                                            &outputs[0].rank, outputs[0].dims));
  outputs[0].dtype = t;
  return ETRT_OK;
}

static etrt_status etrt_qlinear_softmax_infer(const etrt_node *node, const etrt_tensor *inputs,
                                              etrt_tensor *outputs) {
  if (node->num_inputs < 4 || node->num_inputs > 5 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes x, x_scale, an optional x_zero_point, y_scale and an optional "
                         "y_zero_point, and one output");
  etrt_dtype t = inputs[0].dtype;
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "x", t, etrt_qlinear_8bit));
  ETRT_RETURN_IF_ERROR(
      etrt_qlinear_check_scalar(node, inputs, 1, "x_scale", ETRT_DTYPE_FLOAT32, 0));
  ETRT_RETURN_IF_ERROR(etrt_qlinear_check_scalar(node, inputs, 2, "x_zero_point", t, 1));
  ETRT_RETURN_IF_ERROR(
      etrt_qlinear_check_scalar(node, inputs, 3, "y_scale", ETRT_DTYPE_FLOAT32, 0));
  ETRT_RETURN_IF_ERROR(etrt_qlinear_check_scalar(node, inputs, 4, "y_zero_point", t, 1));
  if (etrt_node_attribute_int(node, "opset", 0) <= 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes a positive int attribute 'opset' (the Softmax it computes)");
  etrt_qlinear_softmax_shape s;
  ETRT_RETURN_IF_ERROR(etrt_qlinear_softmax_shape_of(node, &inputs[0], &s));
  outputs[0] = inputs[0];
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  return ETRT_OK;
}

/* The GPU builds QLinearSoftmax's table on the host: its scales (and output zero point)
 * must be constants. */
static int etrt_qlinear_softmax_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  if (inputs[1].host_value == NULL || inputs[3].host_value == NULL) return 0;
  return !etrt_op_has_input(node, inputs, 4) || inputs[4].host_value != NULL;
}

static const etrt_op_def etrt_op_def_qlinear_add = {.op_type = "QLinearAdd",
                                                    .infer = etrt_qlinear_binary_infer,
                                                    .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_qlinear_mul = {.op_type = "QLinearMul",
                                                    .infer = etrt_qlinear_binary_infer,
                                                    .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_qlinear_softmax = {
    .op_type = "QLinearSoftmax",
    .infer = etrt_qlinear_softmax_infer,
    .cuda_supports = etrt_qlinear_softmax_cuda_supports};

const etrt_op_def *const etrt_ops_qlinear[] = {&etrt_op_def_qlinear_add, &etrt_op_def_qlinear_mul,
                                               &etrt_op_def_qlinear_softmax, NULL};
