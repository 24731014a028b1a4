/* Compress on the GPU: a thread per output element finds its kept slice by
 * scanning the condition in device memory (compress.h). */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/compress.h"
}

template <typename T>
__global__ void etrt_compress_kernel(const T *x, const uint8_t *cond, T *y, int64_t n,
                                     etrt_compress_layout l, int64_t kept) {
  ETRT_CUDA_LOOP(e, n) {
    int64_t j = e % l.inner, k = (e / l.inner) % kept, o = e / (l.inner * kept);
    int64_t i = 0, seen = -1;
    for (; i < l.conditions; ++i)
      if (cond[i] && ++seen == k) break;
    y[e] = x[(o * l.length + i) * l.inner + j];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_compress) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_compress_layout_of(node, inputs, &l));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0 || l.outer * l.inner == 0) return ETRT_OK;
  int64_t kept = n / (l.outer * l.inner);
  ETRT_CUDA_BYTES_SWITCH(
      etrt_dtype_size(inputs[0].dtype), T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
      etrt_compress_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          (const T *)inputs[0].data, (const uint8_t *)inputs[1].data, (T *)outputs[0].data, n, l,
          kept));
  return etrt_cuda_check(node, "compress");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_compress[] = {
    {"Compress", etrt_cuda_compress, NULL},
    {NULL, NULL, NULL},
};
