/* The data-movement operators: shape inference (geometry in layout_shape.c). */
#include "engine/ops/layout.h"

#include <string.h>

#include "base/half.h"
#include "engine/ops/layout_shape.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/value_bound.h"

/* Inputs [first data input, then up to max_inputs - 1 optional ones], any known
 * dtype; output i gets the data type. */
static etrt_status etrt_layout_check_io(const etrt_node *node, const etrt_tensor *inputs,
                                        uint32_t min_inputs, uint32_t max_inputs,
                                        uint32_t outputs) {
  if (node->num_inputs < min_inputs || node->num_inputs > max_inputs ||
      (outputs != 0 && node->num_outputs != outputs) || node->num_outputs < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes %u to %u inputs and %u output(s), has %u and %u", min_inputs,
                         max_inputs, outputs ? outputs : node->num_outputs, node->num_inputs,
                         node->num_outputs);
  for (uint32_t i = 0; i < min_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  }
  if (etrt_dtype_size(inputs[0].dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "input has an unknown type");
  return ETRT_OK;
}

static etrt_status etrt_transpose_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 1, 1));
  int32_t perm[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_transpose_perm(node, inputs[0].rank, perm));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  for (int32_t i = 0; i < inputs[0].rank; ++i) outputs[0].dims[i] = inputs[0].dims[perm[i]];
  return ETRT_OK;
}

static etrt_status etrt_slice_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 5, 1));
  etrt_layout_view view;
  ETRT_RETURN_IF_ERROR(etrt_slice_view(node, inputs, &view));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = view.rank;
  memcpy(outputs[0].dims, view.dims, sizeof view.dims);
  return ETRT_OK;
}

static etrt_status etrt_concat_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, node->num_inputs ? node->num_inputs : 1,
                                            ETRT_MAX_RANK * 128, 1));
  const etrt_tensor *x = &inputs[0];
  if (etrt_node_attribute(node, "axis") == NULL)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute 'axis' is required");
  if (x->rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "inputs must have rank 1 or more");
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
  outputs[0] = *x;
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  for (uint32_t k = 1; k < node->num_inputs; ++k) {
    const etrt_tensor *t = &inputs[k];
    if (t->dtype != x->dtype || t->rank != x->rank)
      return etrt_op_error(
          node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is %s of rank %d, input 0 is %s of rank %d",
          k, etrt_dtype_name(t->dtype), (int)t->rank, etrt_dtype_name(x->dtype), (int)x->rank);
    for (int32_t i = 0; i < x->rank; ++i) {
      if (i != axis && t->dims[i] != x->dims[i])
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "input %u has size %lld on axis %d, input 0 has %lld", k,
                             (long long)t->dims[i], (int)i, (long long)x->dims[i]);
    }
    outputs[0].dims[axis] += t->dims[axis];
  }
  return ETRT_OK;
}

static etrt_status etrt_split_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 2, 0));
  if (inputs[0].rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must have rank 1 or more");
  if (node->num_outputs > ETRT_MAX_RANK * 128)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "too many outputs (%u)", node->num_outputs);
  int64_t sizes[ETRT_MAX_RANK * 128];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_split_sizes(node, inputs, &axis, sizes));
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    outputs[k].dtype = inputs[0].dtype;
    outputs[k].rank = inputs[0].rank;
    memcpy(outputs[k].dims, inputs[0].dims, sizeof outputs[k].dims);
    outputs[k].dims[axis] = sizes[k];
  }
  return ETRT_OK;
}

static etrt_status etrt_expand_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 2, 2, 1));
  etrt_tensor shapes[2] = {inputs[0], {0}};
  int64_t count;
  ETRT_RETURN_IF_ERROR(
      etrt_op_input_ints(node, inputs, 1, "shape", shapes[1].dims, ETRT_MAX_RANK, &count));
  shapes[1].rank = (int32_t)count;
  shapes[1].dtype = inputs[0].dtype;
  ETRT_RETURN_IF_ERROR(etrt_shape_broadcast(node, 2, shapes, &outputs[0].rank, outputs[0].dims));
  outputs[0].dtype = inputs[0].dtype;
  return ETRT_OK;
}

static etrt_status etrt_tile_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 2, 2, 1));
  int64_t repeats[ETRT_MAX_RANK], count;
  ETRT_RETURN_IF_ERROR(
      etrt_op_input_ints(node, inputs, 1, "repeats", repeats, ETRT_MAX_RANK, &count));
  if (count != inputs[0].rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "repeats has %lld values, the input has rank %d", (long long)count,
                         (int)inputs[0].rank);
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  for (int32_t i = 0; i < inputs[0].rank; ++i) {
    if (repeats[i] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "repeats[%d] is negative", (int)i);
    if (__builtin_mul_overflow(inputs[0].dims[i], repeats[i], &outputs[0].dims[i]))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d overflows", (int)i);
  }
  return ETRT_OK;
}

etrt_status etrt_pad_constant(const etrt_node *node, const etrt_tensor *inputs, etrt_dtype dtype,
                              uint8_t *bytes) {
  size_t size = etrt_dtype_size(dtype);
  memset(bytes, 0, 8);
  if (etrt_op_has_input(node, inputs, 2)) {
    const etrt_tensor *v = &inputs[2];
    if (v->dtype != dtype || etrt_tensor_numel(v) != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "constant_value must be one %s element", etrt_dtype_name(dtype));
    const void *host = etrt_op_input_host(v);
    if (host != NULL) memcpy(bytes, host, size);
    return ETRT_OK;
  }
  double value = etrt_node_attribute_float(node, "value", 0.0f);
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32: {
      float f = (float)value;
      memcpy(bytes, &f, 4);
      break;
    }
    case ETRT_DTYPE_FLOAT64:
      memcpy(bytes, &value, 8);
      break;
    case ETRT_DTYPE_FLOAT16: {
      uint16_t h = etrt_float_to_half((float)value);
      memcpy(bytes, &h, 2);
      break;
    }
    case ETRT_DTYPE_INT8: {
      int8_t i = (int8_t)value;
      memcpy(bytes, &i, 1);
      break;
    }
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_BOOL: {
      uint8_t i = (uint8_t)value;
      memcpy(bytes, &i, 1);
      break;
    }
    case ETRT_DTYPE_INT16: {
      int16_t i = (int16_t)value;
      memcpy(bytes, &i, 2);
      break;
    }
    case ETRT_DTYPE_INT32: {
      int32_t i = (int32_t)value;
      memcpy(bytes, &i, 4);
      break;
    }
    case ETRT_DTYPE_INT64: {
      int64_t i = (int64_t)value;
      memcpy(bytes, &i, 8);
      break;
    }
    default:
      if (value != 0.0)
        return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "a non-zero 'value' for %s",
                             etrt_dtype_name(dtype));
  }
  return ETRT_OK;
}

static etrt_status etrt_pad_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 4, 1));
  etrt_pad_mode mode;
  ETRT_RETURN_IF_ERROR(etrt_pad_mode_parse(node, &mode));
  int64_t begin[ETRT_MAX_RANK], end[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_pad_amounts(node, inputs, begin, end));
  uint8_t constant[8];
  if (etrt_op_has_input(node, inputs, 2) && inputs[2].dtype != inputs[0].dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "constant_value has type %s, data %s",
                         etrt_dtype_name(inputs[2].dtype), etrt_dtype_name(inputs[0].dtype));
  ETRT_RETURN_IF_ERROR(etrt_pad_constant(node, inputs, inputs[0].dtype, constant));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  for (int32_t i = 0; i < inputs[0].rank; ++i) {
    outputs[0].dims[i] = inputs[0].dims[i] + begin[i] + end[i];
    if (mode != ETRT_PAD_CONSTANT && inputs[0].dims[i] == 0 && outputs[0].dims[i] > 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axis %d is empty: only constant mode can pad it", (int)i);
    if (mode == ETRT_PAD_REFLECT &&
        (begin[i] >= inputs[0].dims[i] || end[i] >= inputs[0].dims[i]) &&
        (begin[i] > 0 || end[i] > 0))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axis %d: reflect pads must be smaller than its size %lld", (int)i,
                           (long long)inputs[0].dims[i]);
  }
  return ETRT_OK;
}

static etrt_status etrt_trilu_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 2, 1));
  if (inputs[0].rank < 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input must have rank 2 or more, has %d", (int)inputs[0].rank);
  if (etrt_op_has_input(node, inputs, 1)) {
    int64_t k, count;
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "k", &k, 1, &count));
    if (count != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "k must hold one value");
  }
  outputs[0] = inputs[0];
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  return ETRT_OK;
}

static etrt_status etrt_depth_space_infer(const etrt_node *node, const etrt_tensor *inputs,
                                          etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 1, 1));
  etrt_layout_view view;
  ETRT_RETURN_IF_ERROR(etrt_depth_space_view(
      node, &inputs[0], strcmp(node->op_type, "DepthToSpace") == 0, &view, outputs[0].dims));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 4;
  return ETRT_OK;
}

/* ReverseSequence(input, sequence_lens): input is [time, batch, ...] or [batch,
 * time, ...] (time_axis and batch_axis are 0 and 1, either way); sequence_lens is
 * int64 [batch]. The lengths are data, checked by the kernels. */
static etrt_status etrt_reverse_sequence_infer(const etrt_node *node, const etrt_tensor *inputs,
                                               etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 2, 2, 1));
  int64_t time_axis = etrt_node_attribute_int(node, "time_axis", 0);
  int64_t batch_axis = etrt_node_attribute_int(node, "batch_axis", 1);
  if ((time_axis != 0 && time_axis != 1) || (batch_axis != 0 && batch_axis != 1) ||
      time_axis == batch_axis)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "time_axis %lld and batch_axis %lld must be 0 and 1, either way",
                         (long long)time_axis, (long long)batch_axis);
  if (inputs[0].rank < 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input must have rank 2 or more, has %d", (int)inputs[0].rank);
  const etrt_tensor *lens = &inputs[1];
  if (lens->dtype != ETRT_DTYPE_INT64 || lens->rank != 1 ||
      lens->dims[0] != inputs[0].dims[batch_axis])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "sequence_lens must be int64 [%lld] (the batch), is %s of rank %d",
                         (long long)inputs[0].dims[batch_axis], etrt_dtype_name(lens->dtype),
                         (int)lens->rank);
  outputs[0] = inputs[0];
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  return ETRT_OK;
}

/* The CUDA kernel moves elements of 1, 2, 4 or 8 bytes. */
static int etrt_reverse_sequence_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  size_t size = etrt_dtype_size(inputs[0].dtype);
  return size == 1 || size == 2 || size == 4 || size == 8;
}

static const etrt_op_def etrt_op_def_reverse_sequence = {
    .op_type = "ReverseSequence",
    .infer = etrt_reverse_sequence_infer,
    .cuda_supports = etrt_reverse_sequence_cuda_supports};

/* Starts, ends, axes or steps known only at execute: each axis keeps at most its size. */
static etrt_status etrt_slice_bound(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 5, 1));
  for (uint32_t i = 1; i < node->num_inputs && i < 5; ++i) {
    int64_t count = 0;
    if (etrt_op_has_input(node, inputs, i))
      ETRT_RETURN_IF_ERROR(etrt_value_bound_count(node, inputs, i, inputs[0].rank, &count));
  }
  *hi = inputs[0];
  hi->data = NULL;
  hi->host_value = NULL;
  *lo = *hi;
  for (int32_t a = 0; a < lo->rank; ++a) lo->dims[a] = 0;
  return ETRT_OK;
}

/* Split sizes known only at execute: each output has at most the axis's size. */
static etrt_status etrt_split_bound(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 1, 2, 0));
  if (inputs[0].rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must have rank 1 or more");
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, inputs[0].rank, &axis));
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    hi[k] = inputs[0];
    hi[k].data = NULL;
    hi[k].host_value = NULL;
    lo[k] = hi[k];
    lo[k].dims[axis] = 0;
  }
  return ETRT_OK;
}

/* Bounds with the values as the identity (shape of ones, repeats of one, no pads), at
 * any size. */
#define etrt_expand_bound etrt_value_bound_open_probe
#define etrt_tile_bound etrt_value_bound_open_probe

/* Pads or axes known only at execute: the input's rank, any size. */
static etrt_status etrt_pad_bound(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *lo,
                                  etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_layout_check_io(node, inputs, 2, 4, 1));
  etrt_value_bound_open(&lo[0], &hi[0], inputs[0].dtype, inputs[0].rank);
  return ETRT_OK;
}

#define etrt_trilu_bound etrt_value_bound_same

#define ETRT_LAYOUT_DEF(ident, name, infer_fn, values, bound_fn)                         \
  static const etrt_op_def etrt_op_def_##ident = {.op_type = name,                       \
                                                  .infer = infer_fn,                     \
                                                  .bound = bound_fn,                     \
                                                  .cuda_supports = etrt_op_supports_all, \
                                                  .value_inputs = values};
ETRT_LAYOUT_DEF(transpose, "Transpose", etrt_transpose_infer, 0, NULL)
ETRT_LAYOUT_DEF(slice, "Slice", etrt_slice_infer, 0x1eu, etrt_slice_bound)
ETRT_LAYOUT_DEF(concat, "Concat", etrt_concat_infer, 0, NULL)
ETRT_LAYOUT_DEF(split, "Split", etrt_split_infer, 1u << 1, etrt_split_bound)
ETRT_LAYOUT_DEF(expand, "Expand", etrt_expand_infer, 1u << 1, etrt_expand_bound)
ETRT_LAYOUT_DEF(tile, "Tile", etrt_tile_infer, 1u << 1, etrt_tile_bound)
ETRT_LAYOUT_DEF(pad, "Pad", etrt_pad_infer, (1u << 1) | (1u << 3), etrt_pad_bound)
/* k is read on the host by every executor, so it is a value input too. */
ETRT_LAYOUT_DEF(trilu, "Trilu", etrt_trilu_infer, 1u << 1, etrt_trilu_bound)
ETRT_LAYOUT_DEF(depth_to_space, "DepthToSpace", etrt_depth_space_infer, 0, NULL)
ETRT_LAYOUT_DEF(space_to_depth, "SpaceToDepth", etrt_depth_space_infer, 0, NULL)
#undef ETRT_LAYOUT_DEF

const etrt_op_def *const etrt_ops_layout[] = {&etrt_op_def_transpose,
                                              &etrt_op_def_slice,
                                              &etrt_op_def_concat,
                                              &etrt_op_def_split,
                                              &etrt_op_def_expand,
                                              &etrt_op_def_tile,
                                              &etrt_op_def_pad,
                                              &etrt_op_def_trilu,
                                              &etrt_op_def_depth_to_space,
                                              &etrt_op_def_space_to_depth,
                                              &etrt_op_def_reverse_sequence,
                                              NULL};
