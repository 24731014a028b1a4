/* EtrtSmId on the GPU (see ops/testing.c): block b writes the id of the SM it ran on
 * to output[b]. Each block waits a little so that the blocks spread over every SM
 * the stream may use, which lets a test count the SMs of a green context. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

__global__ void etrt_sm_id_kernel(int32_t *out) {
  if (threadIdx.x != 0) return;
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  long long start = clock64();
  while (clock64() - start < 20000) {
  }
  out[blockIdx.x] = (int32_t)sm;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_sm_id) {
  int64_t blocks = outputs[0].dims[0];
  if (outputs[0].rank != 1 || blocks < 1 || blocks > INT32_MAX) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "EtrtSmId node '%s': %lld blocks",
                      etrt_cuda_name(node), (long long)blocks);
  }
  etrt_sm_id_kernel<<<(unsigned)blocks, 32, 0, etrt_cuda_stream(launch)>>>(
      (int32_t *)outputs[0].data);
  return etrt_cuda_check(node, "sm_id");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_testing[] = {
    {"EtrtSmId", etrt_cuda_sm_id, NULL},
    {NULL, NULL, NULL},
};
