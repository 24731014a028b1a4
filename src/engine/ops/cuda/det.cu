/* Det on the GPU: a thread per matrix, by the decomposition the CPU kernel uses
 * (det.h), on a double copy in the workspace ([matrices, n, n] doubles). */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/det.h"
}

template <typename T>
__global__ void etrt_det_kernel(const T *x, T *y, double *work, int64_t count, int64_t n) {
  ETRT_CUDA_LOOP(m, count) {
    double *a = work + m * n * n;
    for (int64_t e = 0; e < n * n; ++e) a[e] = (double)x[m * n * n + e];
    y[m] = (T)etrt_det_lu(a, n);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_det) {
  const etrt_tensor *x = &inputs[0];
  int64_t n = x->dims[x->rank - 1], count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  double *work = (double *)launch->workspace;
  if (x->dtype == ETRT_DTYPE_FLOAT32)
    etrt_det_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        (const float *)x->data, (float *)outputs[0].data, work, count, n);
  else
    etrt_det_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        (const double *)x->data, (double *)outputs[0].data, work, count, n);
  return etrt_cuda_check(node, "det");
}

extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_det_workspace) {
  (void)node;
  (void)outputs;
  return (size_t)etrt_tensor_numel(&inputs[0]) * sizeof(double);
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_det[] = {
    {"Det", etrt_cuda_det, etrt_cuda_det_workspace},
    {NULL, NULL, NULL},
};
