/* CPU kernels of Compress (kept slices copied in order), NonZero and Unique (compress.h). */
#include <string.h>

#include "engine/op.h"
#include "engine/ops/compress.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static etrt_status etrt_cpu_compress(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_compress_layout_of(node, inputs, &l));
  const uint8_t *c = etrt_op_input_host(&inputs[1]);
  size_t slice = (size_t)l.inner * etrt_dtype_size(inputs[0].dtype);
  const uint8_t *src = inputs[0].data;
  uint8_t *dst = outputs[0].data;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.conditions; ++i) {
      if (!c[i]) continue;
      memcpy(dst, src + (size_t)(o * l.length + i) * slice, slice);
      dst += slice;
    }
  return ETRT_OK;
}

static etrt_status etrt_cpu_nonzero(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  (void)node;
  const etrt_tensor *x = &inputs[0];
  int64_t n = etrt_tensor_numel(x), count = outputs[0].dims[1], j = 0;
  int64_t *out = outputs[0].data;
  int64_t coord[ETRT_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; ++i) {
    if (etrt_nonzero_at(x->data, x->dtype, i) && j < count) {
      for (int32_t d = 0; d < x->rank; ++d) out[d * count + j] = coord[d];
      ++j;
    }
    for (int32_t d = x->rank - 1; d >= 0 && ++coord[d] == x->dims[d]; --d) coord[d] = 0;
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_unique(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_unique_layout_of(node, inputs, &l));
  const etrt_tensor *x = &inputs[0];
  int sorted = etrt_node_attribute_int(node, "sorted", 1) != 0;
  int32_t axis = 0;
  if (etrt_node_attribute(node, "axis") != NULL)
    ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
  int64_t count = outputs[0].dims[axis]; /* the distinct slices, as inferred */
  size_t slice = (size_t)l.inner * etrt_dtype_size(x->dtype);
  const uint8_t *src = x->data;
  uint8_t *y = outputs[0].data;
  int64_t *first = node->num_outputs > 1 ? outputs[1].data : NULL;
  int64_t *inverse = node->num_outputs > 2 ? outputs[2].data : NULL;
  int64_t *counts = node->num_outputs > 3 ? outputs[3].data : NULL;
  int64_t k = 0;
  for (int64_t j = etrt_unique_next(&l, src, x->dtype, sorted, -1); j >= 0 && k < count;
       j = etrt_unique_next(&l, src, x->dtype, sorted, j), ++k) {
    for (int64_t o = 0; o < l.outer; ++o)
      memcpy(y + (size_t)(o * count + k) * slice, src + (size_t)(o * l.length + j) * slice, slice);
    if (first != NULL) first[k] = j;
    int64_t seen = 0;
    for (int64_t i = 0; i < l.length; ++i) {
      if (etrt_unique_compare(&l, src, x->dtype, i, j) != 0) continue;
      ++seen;
      if (inverse != NULL) inverse[i] = k;
    }
    if (counts != NULL) counts[k] = seen;
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_compress[] = {
    {"Compress", etrt_cpu_compress},
    {"NonZero", etrt_cpu_nonzero},
    {"Unique", etrt_cpu_unique},
    {NULL, NULL},
};
