#include "runtime/value.h"

#include <stdint.h>

size_t etrt_runtime_tensor_nbytes(const etrt_runtime_tensor *tensor) {
  size_t n = etrt_dtype_size(tensor->dtype);
  for (int32_t i = 0; i < tensor->rank; ++i) {
    if (tensor->sizes[i] < 0 || __builtin_mul_overflow(n, (size_t)tensor->sizes[i], &n))
      return SIZE_MAX;
  }
  return n;
}
