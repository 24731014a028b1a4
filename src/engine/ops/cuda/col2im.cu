/* Col2Im on the GPU: a thread per output element (col2im.h); the plan reads the
 * shape inputs' host values. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/col2im.h"
}

__global__ void etrt_col2im_f32_kernel(etrt_col2im_plan plan, const float *x, float *y, int64_t n) {
  ETRT_CUDA_LOOP(o, n) { y[o] = etrt_col2im_element_f32(&plan, x, o); }
}

__global__ void etrt_col2im_f64_kernel(etrt_col2im_plan plan, const double *x, double *y,
                                       int64_t n) {
  ETRT_CUDA_LOOP(o, n) { y[o] = etrt_col2im_element_f64(&plan, x, o); }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_col2im) {
  etrt_col2im_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_col2im_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_col2im_f32_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        plan, (const float *)inputs[0].data, (float *)outputs[0].data, n);
  else
    etrt_col2im_f64_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        plan, (const double *)inputs[0].data, (double *)outputs[0].data, n);
  return etrt_cuda_check(node, "col2im");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_col2im[] = {
    {"Col2Im", etrt_cuda_col2im, NULL},
    {NULL, NULL, NULL},
};
