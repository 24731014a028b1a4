/* CPU kernels of the data-movement operators: byte copies by element size. */
#include "engine/ops/layout.h"

#include <stdbool.h>
#include <string.h>

#include "engine/ops/cpu/copy_util.h"
#include "engine/ops/layout_shape.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

etrt_status etrt_cpu_transpose(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_tensor *outputs) {
  int32_t perm[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_transpose_perm(node, inputs[0].rank, perm));
  etrt_layout_view view;
  etrt_transpose_view(&inputs[0], perm, &view);
  etrt_cpu_view_copy(outputs[0].data, inputs[0].data, etrt_dtype_size(inputs[0].dtype), &view);
  return ETRT_OK;
}

etrt_status etrt_cpu_slice(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  etrt_layout_view view;
  ETRT_RETURN_IF_ERROR(etrt_slice_view(node, inputs, &view));
  etrt_cpu_view_copy(outputs[0].data, inputs[0].data, etrt_dtype_size(inputs[0].dtype), &view);
  return ETRT_OK;
}

etrt_status etrt_cpu_depth_space(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  etrt_layout_view view;
  int64_t dims[4];
  ETRT_RETURN_IF_ERROR(etrt_depth_space_view(
      node, &inputs[0], strcmp(node->op_type, "DepthToSpace") == 0, &view, dims));
  etrt_cpu_view_copy(outputs[0].data, inputs[0].data, etrt_dtype_size(inputs[0].dtype), &view);
  return ETRT_OK;
}

etrt_status etrt_cpu_expand(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  etrt_layout_view view;
  view.rank = outputs[0].rank;
  view.offset = 0;
  memcpy(view.dims, outputs[0].dims, sizeof view.dims);
  etrt_shape_broadcast_strides(inputs[0].rank, inputs[0].dims, outputs[0].rank, outputs[0].dims,
                               view.strides);
  etrt_cpu_view_copy(outputs[0].data, inputs[0].data, etrt_dtype_size(inputs[0].dtype), &view);
  return ETRT_OK;
}

/* Concat (into the whole) and Split (out of it): along `axis`, each part is a block
 * of every row of the whole, the parts side by side in order. */
static etrt_status etrt_cpu_parts_copy(const etrt_node *node, const etrt_tensor *whole,
                                       const etrt_tensor *parts, uint32_t count, bool to_whole) {
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, whole->rank, &axis));
  size_t element = etrt_dtype_size(whole->dtype);
  int64_t outer = etrt_shape_numel(axis, whole->dims);
  size_t inner_bytes =
      (size_t)etrt_shape_numel(whole->rank - (axis + 1), whole->dims + (axis + 1)) * element;
  size_t whole_row = (size_t)whole->dims[axis] * inner_bytes;
  size_t at = 0;
  for (uint32_t k = 0; k < count; ++k) {
    size_t block = (size_t)parts[k].dims[axis] * inner_bytes;
    if (block == 0) continue;
    uint8_t *row = (uint8_t *)whole->data + at, *part = parts[k].data;
    for (int64_t o = 0; o < outer; ++o) {
      if (to_whole)
        memcpy(row + (size_t)o * whole_row, part + (size_t)o * block, block);
      else
        memcpy(part + (size_t)o * block, row + (size_t)o * whole_row, block);
    }
    at += block;
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_concat(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  return etrt_cpu_parts_copy(node, &outputs[0], inputs, node->num_inputs, true);
}

etrt_status etrt_cpu_split(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  return etrt_cpu_parts_copy(node, &inputs[0], outputs, node->num_outputs, false);
}

etrt_status etrt_cpu_tile(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0], *y = &outputs[0];
  size_t element = etrt_dtype_size(x->dtype);
  int64_t total = etrt_tensor_numel(y);
  if (total == 0) return ETRT_OK;
  if (x->rank == 0) {
    memcpy(y->data, x->data, element);
    return ETRT_OK;
  }
  int32_t last = x->rank - 1;
  int64_t strides[ETRT_MAX_RANK], index[ETRT_MAX_RANK] = {0};
  etrt_shape_strides(x->rank, x->dims, strides);
  size_t in_row = (size_t)x->dims[last] * element;
  int64_t repeats = y->dims[last] / x->dims[last];
  uint8_t *dst = y->data;
  /* Each output row is an input row (picked modulo the input's sizes) repeated. */
  for (int64_t row = 0, rows = total / y->dims[last]; row < rows; ++row) {
    int64_t offset = 0;
    for (int32_t a = 0; a < last; ++a) offset += (index[a] % x->dims[a]) * strides[a];
    const uint8_t *src = (const uint8_t *)x->data + (size_t)offset * element;
    for (int64_t r = 0; r < repeats; ++r, dst += in_row) memcpy(dst, src, in_row);
    for (int32_t a = last - 1; a >= 0; --a) {
      if (++index[a] < y->dims[a]) break;
      index[a] = 0;
    }
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_pad(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0], *y = &outputs[0];
  etrt_pad_mode mode;
  ETRT_RETURN_IF_ERROR(etrt_pad_mode_parse(node, &mode));
  int64_t begin[ETRT_MAX_RANK], end[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_pad_amounts(node, inputs, begin, end));
  uint8_t constant[8];
  ETRT_RETURN_IF_ERROR(etrt_pad_constant(node, inputs, x->dtype, constant));
  size_t element = etrt_dtype_size(x->dtype);
  int64_t total = etrt_tensor_numel(y);
  if (total == 0) return ETRT_OK;
  uint8_t *dst = y->data;
  const uint8_t *src = x->data;
  if (y->rank == 0) {
    memcpy(dst, src, element);
    return ETRT_OK;
  }
  int32_t last = y->rank - 1;
  int64_t strides[ETRT_MAX_RANK], index[ETRT_MAX_RANK] = {0};
  etrt_shape_strides(x->rank, x->dims, strides);
  for (int64_t row = 0, rows = total / y->dims[last]; row < rows; ++row) {
    int64_t offset = 0;
    int constant_row = 0;
    for (int32_t a = 0; a < last; ++a) {
      int64_t c = etrt_pad_source(mode, index[a] - begin[a], x->dims[a]);
      if (c < 0)
        constant_row = 1;
      else
        offset += c * strides[a];
    }
    for (int64_t j = 0; j < y->dims[last]; ++j, dst += element) {
      int64_t c = constant_row ? -1 : etrt_pad_source(mode, j - begin[last], x->dims[last]);
      etrt_cpu_copy_element(dst, c < 0 ? constant : src + (size_t)(offset + c) * element, element);
    }
    for (int32_t a = last - 1; a >= 0; --a) {
      if (++index[a] < y->dims[a]) break;
      index[a] = 0;
    }
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_trilu(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0];
  int64_t k = 0, count;
  if (etrt_op_has_input(node, inputs, 1))
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "k", &k, 1, &count));
  int upper = etrt_node_attribute_int(node, "upper", 1) != 0;
  size_t element = etrt_dtype_size(x->dtype);
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t matrices = etrt_shape_numel(x->rank - 2, x->dims);
  const uint8_t *src = x->data;
  uint8_t *dst = outputs[0].data;
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      size_t at = (size_t)((m * rows + i) * cols) * element;
      for (int64_t j = 0; j < cols; ++j) {
        int keep = upper ? j - i >= k : j - i <= k;
        if (keep)
          etrt_cpu_copy_element(dst + at + (size_t)j * element, src + at + (size_t)j * element,
                                element);
        else
          memset(dst + at + (size_t)j * element, 0, element);
      }
    }
  }
  return ETRT_OK;
}

/* Each batch entry's first sequence_lens[b] steps reversed, the rest copied. Every
 * length is checked before anything is written. */
static etrt_status etrt_cpu_reverse_sequence(const etrt_node *node, const etrt_tensor *inputs,
                                             etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0];
  const int64_t *lens = inputs[1].data;
  int time_axis = etrt_node_attribute_int(node, "time_axis", 0) == 1;
  int64_t steps = x->dims[time_axis], batch = x->dims[!time_axis];
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > steps)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "sequence_lens[%lld] is %lld, outside [0, %lld]", (long long)b,
                           (long long)lens[b], (long long)steps);
  }
  size_t row = (size_t)etrt_shape_numel(x->rank - 2, x->dims + 2) * etrt_dtype_size(x->dtype);
  const uint8_t *src = x->data;
  uint8_t *dst = outputs[0].data;
  for (int64_t i = 0; i < x->dims[0]; ++i) {
    for (int64_t j = 0; j < x->dims[1]; ++j) {
      int64_t t = time_axis ? j : i, b = time_axis ? i : j;
      int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      int64_t si = time_axis ? i : from, sj = time_axis ? from : j;
      if (row > 0)
        memcpy(dst + (size_t)(i * x->dims[1] + j) * row, src + (size_t)(si * x->dims[1] + sj) * row,
               row);
    }
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_layout[] = {
    {"Transpose", etrt_cpu_transpose},
    {"Slice", etrt_cpu_slice},
    {"Concat", etrt_cpu_concat},
    {"Split", etrt_cpu_split},
    {"Expand", etrt_cpu_expand},
    {"Tile", etrt_cpu_tile},
    {"Pad", etrt_cpu_pad},
    {"Trilu", etrt_cpu_trilu},
    {"DepthToSpace", etrt_cpu_depth_space},
    {"SpaceToDepth", etrt_cpu_depth_space},
    {"ReverseSequence", etrt_cpu_reverse_sequence},
    {NULL, NULL},
};
