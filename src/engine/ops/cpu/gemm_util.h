/* The blocked matrix multiply of the CPU kernels: MatMul and Gemm (where B's rows are
 * contiguous), Conv's im2col tiles and ConvTranspose. Row-major operands with
 * explicit strides; A may be read transposed through its strides. No allocation. */
#ifndef ETRT_ENGINE_OPS_CPU_GEMM_UTIL_H
#define ETRT_ENGINE_OPS_CPU_GEMM_UTIL_H

#include <stdint.h>

/* C[i, j] = (accumulate ? C[i, j] : 0) + sum_k alpha * A[i * a_row + k * a_col] * B[k * ldb + j]
 * for i < m, j < n, k < k_count, summed in order of k; C has row stride ldc. */
void etrt_cpu_gemm_f32(int64_t m, int64_t n, int64_t k_count, float alpha, const float *a,
                       int64_t a_row, int64_t a_col, const float *b, int64_t ldb, float *c,
                       int64_t ldc, int accumulate);
void etrt_cpu_gemm_f64(int64_t m, int64_t n, int64_t k_count, double alpha, const double *a,
                       int64_t a_row, int64_t a_col, const double *b, int64_t ldb, double *c,
                       int64_t ldc, int accumulate);

#endif
