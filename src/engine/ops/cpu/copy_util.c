#include "engine/ops/cpu/copy_util.h"

void etrt_cpu_view_copy(void *dst, const void *src, size_t element_size,
                        const etrt_layout_view *view) {
  int64_t total = 1;
  for (int32_t i = 0; i < view->rank; ++i) total *= view->dims[i];
  if (total <= 0) return;
  const uint8_t *s = (const uint8_t *)src;
  uint8_t *d = dst;
  if (view->rank == 0) {
    etrt_cpu_copy_element(d, s + view->offset * (int64_t)element_size, element_size);
    return;
  }
  int32_t last = view->rank - 1;
  int64_t inner = view->dims[last], inner_stride = view->strides[last];
  int64_t index[ETRT_MAX_RANK] = {0};
  int64_t offset = view->offset; /* element offset of the current row's start */
  size_t row_bytes = (size_t)inner * element_size;
  for (int64_t row = 0, rows = total / inner; row < rows; ++row) {
    const uint8_t *from = s + offset * (int64_t)element_size;
    if (inner_stride == 1) {
      memcpy(d, from, row_bytes);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        etrt_cpu_copy_element(d + (size_t)j * element_size,
                              from + j * inner_stride * (int64_t)element_size, element_size);
    }
    d += row_bytes;
    for (int32_t a = last - 1; a >= 0; --a) {
      offset += view->strides[a];
      if (++index[a] < view->dims[a]) break;
      offset -= view->strides[a] * view->dims[a];
      index[a] = 0;
    }
  }
}
