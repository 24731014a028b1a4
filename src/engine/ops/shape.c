/* Shape (start/end), Size, ConstantOfShape, Range and EyeLike: shape inference. */
#include "engine/ops/shape.h"

#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "base/half.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/value_bound.h"

static etrt_status etrt_shape_op_check_io(const etrt_node *node, const etrt_tensor *inputs,
                                          uint32_t count) {
  if (node->num_inputs != count || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes %u input(s) and 1 output",
                         count);
  for (uint32_t i = 0; i < count; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  }
  return ETRT_OK;
}

void etrt_shape_op_range(const etrt_node *node, int32_t rank, int32_t *start, int32_t *end) {
  int64_t s = etrt_node_attribute_int(node, "start", 0);
  int64_t e = etrt_node_attribute_int(node, "end", rank);
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  s = s < 0 ? 0 : s > rank ? rank : s;
  e = e < 0 ? 0 : e > rank ? rank : e;
  *start = (int32_t)s;
  *end = (int32_t)(e < s ? s : e);
}

static etrt_status etrt_shape_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_shape_op_check_io(node, inputs, 1));
  int32_t start, end;
  etrt_shape_op_range(node, inputs[0].rank, &start, &end);
  outputs[0].dtype = ETRT_DTYPE_INT64;
  outputs[0].rank = 1;
  outputs[0].dims[0] = end - start;
  return ETRT_OK;
}

static etrt_status etrt_size_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_shape_op_check_io(node, inputs, 1));
  outputs[0].dtype = ETRT_DTYPE_INT64;
  outputs[0].rank = 0;
  return ETRT_OK;
}

static etrt_status etrt_constant_of_shape_infer(const etrt_node *node, const etrt_tensor *inputs,
                                                etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_shape_op_check_io(node, inputs, 1));
  const etrt_attribute *value = etrt_node_attribute(node, "value");
  outputs[0].dtype = ETRT_DTYPE_FLOAT32;
  if (value != NULL) {
    if (value->kind != ETRT_ATTRIBUTE_TENSOR || etrt_tensor_view_numel(&value->tensor) != 1 ||
        etrt_dtype_size(value->tensor.dtype) == 0 || value->tensor.data == NULL)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "attribute 'value' must be a tensor of one element");
    outputs[0].dtype = value->tensor.dtype;
  }
  int64_t count;
  ETRT_RETURN_IF_ERROR(
      etrt_op_input_ints(node, inputs, 0, "shape", outputs[0].dims, ETRT_MAX_RANK, &count));
  if (inputs[0].rank != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "the shape input must be 1-D");
  for (int64_t i = 0; i < count; ++i) {
    if (outputs[0].dims[i] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape[%lld] is negative",
                           (long long)i);
  }
  int64_t numel;
  ETRT_RETURN_IF_ERROR(etrt_op_numel(node, (int32_t)count, outputs[0].dims, &numel));
  outputs[0].rank = (int32_t)count;
  return ETRT_OK;
}

static const etrt_dtype etrt_range_types[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INT32, ETRT_DTYPE_INT64, ETRT_DTYPE_INVALID};

etrt_status etrt_range_count(const etrt_node *node, const etrt_tensor *inputs, int64_t *count) {
  static const char *const names[3] = {"start", "limit", "delta"};
  etrt_dtype dtype = inputs[0].dtype;
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "start", dtype, etrt_range_types));
  int is_float = dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT64;
  int64_t ints[3];
  double reals[3];
  for (uint32_t i = 0; i < 3; ++i) {
    int64_t n;
    if (inputs[i].dtype != dtype || inputs[i].rank > 1 || etrt_tensor_numel(&inputs[i]) != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s must be one %s value", names[i],
                           etrt_dtype_name(dtype));
    if (is_float)
      ETRT_RETURN_IF_ERROR(etrt_op_input_doubles(node, inputs, i, names[i], &reals[i], 1, &n));
    else
      ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, i, names[i], &ints[i], 1, &n));
  }
  if (is_float) {
    if (reals[2] == 0.0 || !isfinite(reals[0]) || !isfinite(reals[1]) || !isfinite(reals[2]))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "delta must be non-zero and finite");
    double n = dtype == ETRT_DTYPE_FLOAT32
                   ? ceil((double)(((float)reals[1] - (float)reals[0]) / (float)reals[2]))
                   : ceil((reals[1] - reals[0]) / reals[2]);
    if (n > (double)((int64_t)1 << 40))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "too many elements");
    *count = n > 0 ? (int64_t)n : 0;
  } else {
    if (ints[2] == 0) return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "delta is 0");
    double span = ((double)ints[1] - (double)ints[0]) / (double)ints[2];
    if (span > (double)((int64_t)1 << 40))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "too many elements");
    int64_t diff, delta = ints[2];
    if (__builtin_sub_overflow(ints[1], ints[0], &diff))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "limit - start overflows");
    int64_t n = diff / delta + ((diff % delta != 0) && ((diff < 0) == (delta < 0)));
    *count = n > 0 ? n : 0;
  }
  return ETRT_OK;
}

static etrt_status etrt_range_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_shape_op_check_io(node, inputs, 3));
  ETRT_RETURN_IF_ERROR(etrt_range_count(node, inputs, &outputs[0].dims[0]));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 1;
  return ETRT_OK;
}

int64_t etrt_eye_like_k(const etrt_node *node) { return etrt_node_attribute_int(node, "k", 0); }

void etrt_eye_like_one(etrt_dtype dtype, uint8_t one[8]) {
  memset(one, 0, 8);
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32: {
      float v = 1.0f;
      memcpy(one, &v, sizeof v);
      break;
    }
    case ETRT_DTYPE_FLOAT64: {
      double v = 1.0;
      memcpy(one, &v, sizeof v);
      break;
    }
    case ETRT_DTYPE_FLOAT16: {
      uint16_t v = etrt_float_to_half(1.0f);
      memcpy(one, &v, sizeof v);
      break;
    }
    case ETRT_DTYPE_BFLOAT16: {
      uint16_t v = etrt_float_to_bfloat16(1.0f);
      memcpy(one, &v, sizeof v);
      break;
    }
    default: {
      /* integers and bool: 1 in the low byte (little-endian hosts and devices) */
      one[0] = 1;
      break;
    }
  }
}

/* EyeLike(x [R, C]) -> [R, C] of `dtype` (x's when absent), ones on diagonal k. */
static etrt_status etrt_eye_like_infer(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_shape_op_check_io(node, inputs, 1));
  if (inputs[0].rank != 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must be 2-D, not rank %d",
                         (int)inputs[0].rank);
  etrt_dtype dtype = inputs[0].dtype;
  const etrt_attribute *to = etrt_node_attribute(node, "dtype");
  if (to != NULL) {
    dtype = to->kind == ETRT_ATTRIBUTE_INT ? etrt_dtype_from_onnx(to->i) : ETRT_DTYPE_INVALID;
    if (dtype == ETRT_DTYPE_INVALID)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                           "attribute 'dtype' is not a supported ONNX element type");
  }
  if (etrt_dtype_size(dtype) < 1 || etrt_dtype_size(dtype) > 8)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "output dtype %s is not supported",
                         etrt_dtype_name(dtype));
  outputs[0].dtype = dtype;
  outputs[0].rank = 2;
  outputs[0].dims[0] = inputs[0].dims[0];
  outputs[0].dims[1] = inputs[0].dims[1];
  return ETRT_OK;
}

/* Start, limit or delta known only at execute: any length (no bound). */
static etrt_status etrt_range_bound(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_shape_op_check_io(node, inputs, 3));
  for (uint32_t i = 0; i < 3; ++i)
    if (inputs[i].dtype != inputs[0].dtype || etrt_tensor_numel(&inputs[i]) != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "start, limit and delta must be scalars of one type");
  lo[0].dtype = hi[0].dtype = inputs[0].dtype;
  lo[0].rank = hi[0].rank = 1;
  lo[0].dims[0] = 0;
  hi[0].dims[0] = ETRT_OP_DIM_UNBOUNDED;
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_shape = {.op_type = "Shape",
                                              .infer = etrt_shape_infer,
                                              .cuda_supports = etrt_op_supports_all,
                                              .dims_only_inputs = 1u};
static const etrt_op_def etrt_op_def_size = {.op_type = "Size",
                                             .infer = etrt_size_infer,
                                             .cuda_supports = etrt_op_supports_all,
                                             .dims_only_inputs = 1u};
static const etrt_op_def etrt_op_def_constant_of_shape = {.op_type = "ConstantOfShape",
                                                          .infer = etrt_constant_of_shape_infer,
                                                          .bound = etrt_value_bound_open_probe,
                                                          .cuda_supports = etrt_op_supports_all,
                                                          .value_inputs = 1u};
static const etrt_op_def etrt_op_def_range = {.op_type = "Range",
                                              .infer = etrt_range_infer,
                                              .bound = etrt_range_bound,
                                              .cuda_supports = etrt_op_supports_all,
                                              .value_inputs = 7u};

/* EyeLike reads only its input's dims, so a network computes it once when it is built. */
static const etrt_op_def etrt_op_def_eye_like = {.op_type = "EyeLike",
                                                 .infer = etrt_eye_like_infer,
                                                 .cuda_supports = etrt_op_supports_all,
                                                 .dims_only_inputs = 1u};

const etrt_op_def *const etrt_ops_shape[] = {
    &etrt_op_def_shape, &etrt_op_def_size,     &etrt_op_def_constant_of_shape,
    &etrt_op_def_range, &etrt_op_def_eye_like, NULL};
