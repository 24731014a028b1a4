/* What the CUDA kernel files share besides cuda_kernel.h: the signatures of the
 * launchers and workspace functions that their rows (etrt_op_cuda_row, op.h) point
 * to, and the cuBLASLt and cuDNN handles of an execution context. Each .cu file ends with its
 * family's rows; ops/cuda/table.c lists the families. */
#ifndef ETRT_ENGINE_OPS_CUDA_CUDA_OPS_H
#define ETRT_ENGINE_OPS_CUDA_CUDA_OPS_H

#include "engine/op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ETRT_CUDA_RUN(fn)                                                                \
  etrt_status fn(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs, \
                 const etrt_cuda_launch *launch)
#define ETRT_CUDA_WORKSPACE(fn) \
  size_t fn(const etrt_node *node, const etrt_tensor *inputs, const etrt_tensor *outputs)

/* gemm.cu: the cuBLASLt handle of an execution context (etrt_cuda_launch.cublaslt). */
etrt_status etrt_cuda_blas_create(void **handle);
void etrt_cuda_blas_destroy(void *handle);

/* conv.cu: the cuDNN handle of an execution context (etrt_cuda_launch.cudnn). */
void etrt_cuda_dnn_destroy(void *handle);

#ifdef __cplusplus
}
#endif
#endif
