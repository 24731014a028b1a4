/* Reshape (allowzero, opset 1-4 shape attribute), Flatten, Squeeze and Unsqueeze
 * (axes attribute before opset 13, input after): shape inference. Any dtype. */
#include "engine/ops/reshape.h"

#include <string.h>

#include "engine/ops/layout_shape.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/value_bound.h"

static etrt_status etrt_reshape_check_io(const etrt_node *node, const etrt_tensor *inputs,
                                         uint32_t max_inputs) {
  if (node->num_inputs < 1 || node->num_inputs > max_inputs || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 to %u inputs (data first) and 1 output", max_inputs);
  if (etrt_dtype_size(inputs[0].dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "input has an unknown type");
  return ETRT_OK;
}

static etrt_status etrt_reshape_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_reshape_check_io(node, inputs, 2));
  const etrt_tensor *x = &inputs[0];
  int64_t shape[ETRT_MAX_RANK], count;
  if (etrt_op_has_input(node, inputs, 1)) {
    ETRT_RETURN_IF_ERROR(
        etrt_op_input_ints(node, inputs, 1, "shape", shape, ETRT_MAX_RANK, &count));
  } else if (etrt_node_attribute(node, "shape") != NULL) {
    ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "shape", shape, ETRT_MAX_RANK, &count));
  } else {
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 1 (shape) is required");
  }
  int allowzero = etrt_node_attribute_int(node, "allowzero", 0) != 0;
  int64_t numel = etrt_shape_numel(x->rank, x->dims), known = 1;
  int32_t inferred = -1;
  int has_zero = 0;
  for (int32_t i = 0; i < (int32_t)count; ++i) {
    int64_t v = shape[i];
    if (v == 0 && !allowzero) {
      if (i >= x->rank)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "shape[%d] is 0 (copy), but the input has rank %d", (int)i,
                             (int)x->rank);
      v = x->dims[i];
    }
    if (v == -1) {
      if (inferred >= 0)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape has more than one -1");
      inferred = i;
      continue;
    }
    if (v < -1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape[%d] is %lld", (int)i,
                           (long long)v);
    has_zero |= v == 0;
    outputs[0].dims[i] = v;
    if (__builtin_mul_overflow(known, v, &known))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape overflows");
  }
  if (inferred >= 0) {
    if (allowzero && has_zero)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "shape has both -1 and 0 while allowzero is set");
    if (known == 0 || numel % known != 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "cannot infer the -1 of shape: %lld elements, %lld known",
                           (long long)numel, (long long)known);
    outputs[0].dims[inferred] = numel / known;
    known = numel;
  }
  if (known != numel)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "shape has %lld elements, the input %lld", (long long)known,
                         (long long)numel);
  outputs[0].dtype = x->dtype;
  outputs[0].rank = (int32_t)count;
  return ETRT_OK;
}

static etrt_status etrt_flatten_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_reshape_check_io(node, inputs, 1));
  const etrt_tensor *x = &inputs[0];
  int64_t axis = etrt_node_attribute_int(node, "axis", 1);
  if (axis < -(int64_t)x->rank || axis > x->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %lld is outside [%d, %d]",
                         (long long)axis, -(int)x->rank, (int)x->rank);
  if (axis < 0) axis += x->rank;
  outputs[0].dtype = x->dtype;
  outputs[0].rank = 2;
  outputs[0].dims[0] = etrt_shape_numel((int32_t)axis, x->dims);
  outputs[0].dims[1] = etrt_shape_numel(x->rank - (int32_t)axis, x->dims + axis);
  return ETRT_OK;
}

static etrt_status etrt_squeeze_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_reshape_check_io(node, inputs, 2));
  const etrt_tensor *x = &inputs[0];
  uint8_t marks[ETRT_MAX_RANK];
  int32_t count, rank = 0;
  ETRT_RETURN_IF_ERROR(etrt_squeeze_axes(node, inputs, x->rank, marks, &count));
  for (int32_t i = 0; i < x->rank; ++i) {
    int drop = count ? marks[i] : x->dims[i] == 1;
    if (drop && x->dims[i] != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axis %d has size %lld; only size-1 axes can be squeezed", (int)i,
                           (long long)x->dims[i]);
    if (!drop) outputs[0].dims[rank++] = x->dims[i];
  }
  outputs[0].dtype = x->dtype;
  outputs[0].rank = rank;
  return ETRT_OK;
}

static etrt_status etrt_unsqueeze_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_reshape_check_io(node, inputs, 2));
  const etrt_tensor *x = &inputs[0];
  /* The axes refer to the output, whose rank is known only after counting them. */
  int64_t probe[ETRT_MAX_RANK], count;
  if (etrt_op_has_input(node, inputs, 1))
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "axes", probe, ETRT_MAX_RANK, &count));
  else
    ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "axes", probe, ETRT_MAX_RANK, &count));
  if (count == 0) return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axes are required");
  int32_t rank = x->rank + (int32_t)count;
  if (rank > ETRT_MAX_RANK)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "output rank %d exceeds %d", (int)rank,
                         ETRT_MAX_RANK);
  uint8_t marks[ETRT_MAX_RANK];
  int32_t n;
  ETRT_RETURN_IF_ERROR(etrt_squeeze_axes(node, inputs, rank, marks, &n));
  for (int32_t i = 0, j = 0; i < rank; ++i) outputs[0].dims[i] = marks[i] ? 1 : x->dims[j++];
  outputs[0].dtype = x->dtype;
  outputs[0].rank = rank;
  return ETRT_OK;
}

/* A shape known only at execute: as many axes as it has values, of any size. */
static etrt_status etrt_reshape_bound(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_reshape_check_io(node, inputs, 2));
  if (!etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 1 (shape) is required");
  int64_t count;
  ETRT_RETURN_IF_ERROR(etrt_value_bound_count(node, inputs, 1, ETRT_MAX_RANK, &count));
  etrt_value_bound_open(&lo[0], &hi[0], inputs[0].dtype, (int32_t)count);
  return ETRT_OK;
}

/* The largest axis of x (at least 1): no axis of a squeezed or unsqueezed x is larger. */
static int64_t etrt_reshape_largest_axis(const etrt_tensor *x) {
  int64_t largest = 1;
  for (int32_t a = 0; a < x->rank; ++a)
    if (x->dims[a] > largest) largest = x->dims[a];
  return largest;
}

/* Axes known only at execute: the rank follows from how many there are. */
static etrt_status etrt_squeeze_bound_rank(const etrt_node *node, const etrt_tensor *inputs,
                                           int32_t sign, etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_reshape_check_io(node, inputs, 2));
  int64_t count;
  ETRT_RETURN_IF_ERROR(etrt_value_bound_count(node, inputs, 1, ETRT_MAX_RANK, &count));
  if (sign < 0 && count == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 1 (axes) holds no values, so the size-1 axes of the input decide "
                         "the rank: their values must be known when the plan is built");
  int64_t rank = inputs[0].rank + sign * count;
  if (rank < 0 || rank > ETRT_MAX_RANK)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "%lld axes on an input of rank %d give rank %lld", (long long)count,
                         (int)inputs[0].rank, (long long)rank);
  etrt_value_bound_open(&lo[0], &hi[0], inputs[0].dtype, (int32_t)rank);
  for (int32_t a = 0; a < (int32_t)rank; ++a) hi[0].dims[a] = etrt_reshape_largest_axis(&inputs[0]);
  return ETRT_OK;
}

static etrt_status etrt_squeeze_bound(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *lo, etrt_tensor *hi) {
  return etrt_squeeze_bound_rank(node, inputs, -1, lo, hi);
}

static etrt_status etrt_unsqueeze_bound(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *lo, etrt_tensor *hi) {
  return etrt_squeeze_bound_rank(node, inputs, 1, lo, hi);
}

#define ETRT_RESHAPE_DEF(ident, name, infer_fn, values, bound_fn)                        \
  static const etrt_op_def etrt_op_def_##ident = {.op_type = name,                       \
                                                  .infer = infer_fn,                     \
                                                  .bound = bound_fn,                     \
                                                  .cuda_supports = etrt_op_supports_all, \
                                                  .value_inputs = values};
ETRT_RESHAPE_DEF(reshape, "Reshape", etrt_reshape_infer, 1u << 1, etrt_reshape_bound)
ETRT_RESHAPE_DEF(flatten, "Flatten", etrt_flatten_infer, 0, NULL)
ETRT_RESHAPE_DEF(squeeze, "Squeeze", etrt_squeeze_infer, 1u << 1, etrt_squeeze_bound)
ETRT_RESHAPE_DEF(unsqueeze, "Unsqueeze", etrt_unsqueeze_infer, 1u << 1, etrt_unsqueeze_bound)
#undef ETRT_RESHAPE_DEF

const etrt_op_def *const etrt_ops_reshape[] = {&etrt_op_def_reshape, &etrt_op_def_flatten,
                                               &etrt_op_def_squeeze, &etrt_op_def_unsqueeze, NULL};
