/* Byte movement for the CPU kernels of layout operators: any dtype, by element
 * size. */
#ifndef ETRT_ENGINE_OPS_CPU_COPY_UTIL_H
#define ETRT_ENGINE_OPS_CPU_COPY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/ops/layout_shape.h"

/* Writes the elements `view` reads from `src` contiguously to `dst`. */
void etrt_cpu_view_copy(void *dst, const void *src, size_t element_size,
                        const etrt_layout_view *view);

/* Copies one element of `size` bytes (1, 2, 4, 8 inline). */
static inline void etrt_cpu_copy_element(void *dst, const void *src, size_t size) {
  switch (size) {
    case 1:
      *(uint8_t *)dst = *(const uint8_t *)src;
      break;
    case 2:
      memcpy(dst, src, 2);
      break;
    case 4:
      memcpy(dst, src, 4);
      break;
    case 8:
      memcpy(dst, src, 8);
      break;
    default:
      memcpy(dst, src, size);
      break;
  }
}

#endif
