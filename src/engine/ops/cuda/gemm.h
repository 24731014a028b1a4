/* One (strided-batched) matrix product through cuBLASLt, in row-major terms, shared
 * by MatMul, Gemm and Conv. Included by .cu files only. */
#ifndef ETRT_ENGINE_OPS_CUDA_GEMM_H
#define ETRT_ENGINE_OPS_CUDA_GEMM_H

#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/matmul.h"
}

/* cuBLASLt's recommended scratch on Hopper; its split-K kernels use it. */
#define ETRT_CUDA_GEMM_WORKSPACE ((size_t)32 << 20)

/* Y[b] (m x n) = alpha * op(A[b]) (m x k) * op(B[b]) (k x n) + beta * C[b], row-major,
 * with C = Y unless given;
 * A stored [m][k] (or [k][m] with trans_a) with leading dimension lda; likewise B;
 * matrix b of each operand starts at b * stride (elements; 0 repeats one matrix). */
typedef struct etrt_cuda_gemm {
  /* float32, float16 or bfloat16, for A, B and Y; or int8 for A and B with an int32 Y,
   * summed exactly (alpha 1, beta 0, no bias; cuBLASLt's integer kernels also want
   * trans_b, k and n multiples of 4 and 4-byte aligned rows). */
  etrt_dtype dtype;
  int trans_a, trans_b;
  int64_t m, n, k, batch;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *y;
  int64_t ldy, stride_y;
  float alpha, beta;
  /* What beta scales: NULL for Y itself, or a matrix laid out as Y (ldy, stride_y), so
   * a residual joins the sum without first being copied into Y. */
  const void *c;
  /* NULL, or n elements of the dtype added to every row of Y in the epilogue (with
   * batch 1; cuBLASLt wants it 16-byte aligned). */
  const void *bias;
  /* Applied last, to the whole sum (engine/ops/matmul.h), in the epilogue too. */
  etrt_matmul_activation activation;
} etrt_cuda_gemm_args;

/* Enqueues the product on launch->stream using `workspace` (may be a part of
 * launch->workspace). The compute mode follows launch->precision. */
etrt_status etrt_cuda_gemm_run(const etrt_node *node, const etrt_cuda_gemm_args *gemm,
                               const etrt_cuda_launch *launch, void *workspace,
                               size_t workspace_size);

/* True for the data types etrt_cuda_gemm_run takes. */
static inline int etrt_cuda_gemm_dtype_ok(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT16 || dtype == ETRT_DTYPE_BFLOAT16;
}

#endif
