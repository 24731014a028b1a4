/* CPU kernel of Resize/Upsample: each output element is the weighted sum over the
 * product of its per-axis neighbours (zero weights dropped, so axes that keep
 * their size cost nothing). */
#include "engine/ops/resize.h"

#include <string.h>

#include "engine/ops/cpu/copy_util.h"
#include "engine/ops/shape_util.h"

etrt_status etrt_cpu_resize(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  const etrt_resize_params *p = node->state;
  etrt_resize_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_resize_geometry_compute(node, p, inputs, &g));
  const etrt_tensor *x = &inputs[0];
  etrt_tensor *y = &outputs[0];
  int64_t total = etrt_tensor_numel(y);
  if (total == 0) return ETRT_OK;
  size_t element = etrt_dtype_size(x->dtype);
  int64_t strides[ETRT_MAX_RANK], out_index[ETRT_MAX_RANK] = {0};
  etrt_shape_strides(x->rank, x->dims, strides);
  int is_double = x->dtype == ETRT_DTYPE_FLOAT64;
  for (int64_t o = 0; o < total; ++o) {
    int64_t index[ETRT_MAX_RANK][4];
    double weight[ETRT_MAX_RANK][4];
    int count[ETRT_MAX_RANK], outside = 0;
    for (int32_t a = 0; a < x->rank; ++a) {
      count[a] = etrt_resize_neighbours(p, &g, a, out_index[a], index[a], weight[a]);
      outside |= count[a] == 0;
    }
    uint8_t *dst = (uint8_t *)y->data + (size_t)o * element;
    if (p->mode == ETRT_RESIZE_NEAREST && !outside) {
      int64_t offset = 0;
      for (int32_t a = 0; a < x->rank; ++a) offset += index[a][0] * strides[a];
      etrt_cpu_copy_element(dst, (const uint8_t *)x->data + (size_t)offset * element, element);
    } else if (x->dtype != ETRT_DTYPE_FLOAT32 && !is_double) {
      memset(dst, 0, element); /* nearest outside the crop box, for a non-float type */
    } else {
      double sum = p->extrapolation_value;
      if (!outside) {
        int pick[ETRT_MAX_RANK] = {0};
        sum = 0.0;
        for (;;) {
          int64_t offset = 0;
          double w = 1.0;
          for (int32_t a = 0; a < x->rank; ++a) {
            offset += index[a][pick[a]] * strides[a];
            w *= weight[a][pick[a]];
          }
          sum += w * (is_double ? ((const double *)x->data)[offset]
                                : (double)((const float *)x->data)[offset]);
          int32_t a = x->rank - 1;
          for (; a >= 0; --a) {
            if (++pick[a] < count[a]) break;
            pick[a] = 0;
          }
          if (a < 0) break;
        }
      }
      if (is_double)
        memcpy(dst, &sum, sizeof sum);
      else {
        float f = (float)sum;
        memcpy(dst, &f, sizeof f);
      }
    }
    for (int32_t a = x->rank - 1; a >= 0; --a) {
      if (++out_index[a] < y->dims[a]) break;
      out_index[a] = 0;
    }
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_resize[] = {
    {"Resize", etrt_cpu_resize},
    {"Upsample", etrt_cpu_resize},
    {NULL, NULL},
};
