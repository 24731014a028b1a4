/* A blocked single-precision matrix multiply for the CPU kernels (Conv's im2col
 * tiles, ConvTranspose; MatMul/Gemm may share it). Row-major operands with
 * explicit strides; A may be read transposed through its strides. No allocation. */
#ifndef ETRT_ENGINE_OPS_CPU_GEMM_UTIL_H
#define ETRT_ENGINE_OPS_CPU_GEMM_UTIL_H

#include <stdint.h>

/* C[i, j] (+)= sum_k A[i * a_row + k * a_col] * B[k * ldb + j] for i < m, j < n,
 * k < k_count; C row stride ldc. `accumulate` 0 overwrites C. */
void etrt_cpu_gemm_f32(int64_t m, int64_t n, int64_t k_count, const float *a, int64_t a_row,
                       int64_t a_col, const float *b, int64_t ldb, float *c, int64_t ldc,
                       int accumulate);

#endif
