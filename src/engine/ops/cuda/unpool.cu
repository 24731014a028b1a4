/* MaxUnpool on the GPU (unpool.h): the output zeroed, then a thread per input
 * element writes it at its index; an out-of-range index is the node's fault and
 * writes nothing. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/unpool.h"
}

/* The default output's dims (I's flat indices) and the output's. */
typedef struct etrt_unpool_dims {
  int32_t rank;
  int64_t from[ETRT_MAX_RANK], to[ETRT_MAX_RANK];
} etrt_unpool_dims;

template <typename T>
__global__ void etrt_max_unpool_kernel(const T *x, const int64_t *idx, T *y, int64_t n,
                                       int64_t size, etrt_unpool_dims dims, uint32_t *fault,
                                       uint32_t node) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t at = idx[i];
    if (at < 0 || at >= size) {
      etrt_cuda_fault(fault, node);
      continue;
    }
    y[etrt_max_unpool_remap(dims.rank, dims.from, dims.to, at)] = x[i];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_max_unpool) {
  etrt_tensor base;
  ETRT_RETURN_IF_ERROR(etrt_max_unpool_default(node, inputs, &base));
  etrt_unpool_dims dims;
  memset(&dims, 0, sizeof dims);
  dims.rank = base.rank;
  for (int32_t a = 0; a < base.rank; ++a) {
    dims.from[a] = base.dims[a];
    dims.to[a] = outputs[0].dims[a];
  }
  size_t element = etrt_dtype_size(inputs[0].dtype);
  int64_t size = etrt_tensor_numel(&base), n = etrt_tensor_numel(&inputs[0]);
  int64_t total = etrt_tensor_numel(&outputs[0]);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (total > 0) {
    cudaMemsetAsync(outputs[0].data, 0, (size_t)total * element, stream);
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "max_unpool zero"));
  }
  if (n == 0) return ETRT_OK;
  ETRT_CUDA_BYTES_SWITCH(element, T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
                         etrt_max_unpool_kernel<T>
                         <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
                             (const T *)inputs[0].data, (const int64_t *)inputs[1].data,
                             (T *)outputs[0].data, n, size, dims, launch->fault, launch->node));
  return etrt_cuda_check(node, "max_unpool");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_unpool[] = {
    {"MaxUnpool", etrt_cuda_max_unpool, NULL},
    {NULL, NULL, NULL},
};
