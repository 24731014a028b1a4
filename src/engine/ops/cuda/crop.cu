/* CenterCropPad on the GPU: a thread per output element (crop.h). The plan reads
 * the shape input's host value, never device memory. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/crop.h"
}

template <typename T>
__global__ void etrt_crop_kernel(const T *x, T *y, int64_t n, etrt_crop_plan plan) {
  ETRT_CUDA_LOOP(o, n) {
    int64_t at = etrt_crop_source(&plan, o);
    y[o] = at < 0 ? T(0) : x[at];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_center_crop_pad) {
  etrt_crop_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_crop_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  ETRT_CUDA_BYTES_SWITCH(
      etrt_dtype_size(inputs[0].dtype), T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
      etrt_crop_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          (const T *)inputs[0].data, (T *)outputs[0].data, n, plan));
  return etrt_cuda_check(node, "center_crop_pad");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_crop[] = {
    {"CenterCropPad", etrt_cuda_center_crop_pad, NULL},
    {NULL, NULL, NULL},
};
