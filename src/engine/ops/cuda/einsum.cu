/* Einsum on the GPU: one thread per output element, by the evaluation the CPU
 * kernel uses (einsum.h); the plan is made on the host and passed by value. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/einsum.h"
}

typedef struct etrt_einsum_args {
  const void *in[ETRT_EINSUM_MAX_INPUTS];
} etrt_einsum_args;

__global__ void etrt_einsum_f32_kernel(etrt_einsum_plan plan, etrt_einsum_args args, float *y,
                                       int64_t n) {
  const float *in[ETRT_EINSUM_MAX_INPUTS];
  for (int32_t i = 0; i < ETRT_EINSUM_MAX_INPUTS; ++i) in[i] = (const float *)args.in[i];
  ETRT_CUDA_LOOP(o, n) { y[o] = etrt_einsum_element_f32(&plan, in, o); }
}

__global__ void etrt_einsum_f64_kernel(etrt_einsum_plan plan, etrt_einsum_args args, double *y,
                                       int64_t n) {
  const double *in[ETRT_EINSUM_MAX_INPUTS];
  for (int32_t i = 0; i < ETRT_EINSUM_MAX_INPUTS; ++i) in[i] = (const double *)args.in[i];
  ETRT_CUDA_LOOP(o, n) { y[o] = etrt_einsum_element_f64(&plan, in, o); }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_einsum) {
  etrt_einsum_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_einsum_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  etrt_einsum_args args;
  memset(&args, 0, sizeof args);
  for (int32_t i = 0; i < plan.inputs; ++i) args.in[i] = inputs[i].data;
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_einsum_f32_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(plan, args,
                                                                     (float *)outputs[0].data, n);
  else
    etrt_einsum_f64_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(plan, args,
                                                                     (double *)outputs[0].data, n);
  return etrt_cuda_check(node, "einsum");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_einsum[] = {
    {"Einsum", etrt_cuda_einsum, NULL},
    {NULL, NULL, NULL},
};
