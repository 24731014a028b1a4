/* The blocked matrix multiply of the CPU kernels: MatMul and Gemm, Conv's im2col
 * tiles and ConvTranspose. Row-major operands with explicit strides; A and B may be
 * read transposed through their strides. No allocation: operand panels are packed on
 * the stack (about 180 KiB, on the calling thread). Large products
 * are split over the thread pool (base/thread_pool.h) in blocks of C; each C element is computed
 * the same way whatever the split, so the result does not depend on the number of threads. The
 * float32 micro-kernel is chosen at run time for the processor (AVX-512, AVX2 with FMA, or portable
 * C). */
#ifndef ETRT_ENGINE_OPS_CPU_GEMM_UTIL_H
#define ETRT_ENGINE_OPS_CPU_GEMM_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* C[i, j] = (accumulate ? C[i, j] : 0) + sum_k (alpha * A[i * a_row + k * a_col]) *
 * B[k * b_row + j * b_col] for i < m, j < n, k < k_count, summed in order of k; C has
 * row stride ldc. */
void etrt_cpu_gemm_strided_f32(int64_t m, int64_t n, int64_t k_count, float alpha, const float *a,
                               int64_t a_row, int64_t a_col, const float *b, int64_t b_row,
                               int64_t b_col, float *c, int64_t ldc, int accumulate);
void etrt_cpu_gemm_strided_f64(int64_t m, int64_t n, int64_t k_count, double alpha, const double *a,
                               int64_t a_row, int64_t a_col, const double *b, int64_t b_row,
                               int64_t b_col, double *c, int64_t ldc, int accumulate);

/* The same with B's rows contiguous (b_col = 1, b_row = ldb). */
void etrt_cpu_gemm_f32(int64_t m, int64_t n, int64_t k_count, float alpha, const float *a,
                       int64_t a_row, int64_t a_col, const float *b, int64_t ldb, float *c,
                       int64_t ldc, int accumulate);
void etrt_cpu_gemm_f64(int64_t m, int64_t n, int64_t k_count, double alpha, const double *a,
                       int64_t a_row, int64_t a_col, const double *b, int64_t ldb, double *c,
                       int64_t ldc, int accumulate);

/* B packed ahead (a constant weight, once per context), for products by it of any A:
 * the panels the GEMM would otherwise pack from B on every call, in its order. The
 * count is in elements; pack returns the micro-kernel width the panels were made for,
 * and the packed product runs only while that kernel is the current one (returns 0
 * otherwise: the caller multiplies by B itself). Same sums, same order, same bits as
 * the unpacked product, except for products of at most four rows, which the unpacked
 * product sums row by row without the micro-kernel's fused multiply-adds. */
size_t etrt_cpu_gemm_packed_b_count_f32(int64_t k_count, int64_t n);
int etrt_cpu_gemm_pack_b_f32(int64_t k_count, int64_t n, const float *b, int64_t ldb, float *out);
int etrt_cpu_gemm_packed_f32(int64_t m, int64_t n, int64_t k_count, float alpha, const float *a,
                             int64_t a_row, int64_t a_col, const float *packed_b, int packed_nr,
                             float *c, int64_t ldc, int accumulate);
size_t etrt_cpu_gemm_packed_b_count_f64(int64_t k_count, int64_t n);
int etrt_cpu_gemm_pack_b_f64(int64_t k_count, int64_t n, const double *b, int64_t ldb, double *out);
int etrt_cpu_gemm_packed_f64(int64_t m, int64_t n, int64_t k_count, double alpha, const double *a,
                             int64_t a_row, int64_t a_col, const double *packed_b, int packed_nr,
                             double *c, int64_t ldc, int accumulate);

/* C[i, j] += bias[j] for i < rows, j < n (C rows of n): EtrtMatMulBias's epilogue. */
void etrt_cpu_gemm_add_bias_f32(float *c, const float *bias, int64_t rows, int64_t n);

/* The instruction sets of the float32 micro-kernel, best last. */
typedef enum etrt_cpu_isa {
  ETRT_CPU_ISA_PORTABLE = 0,
  ETRT_CPU_ISA_AVX2 = 1,
  ETRT_CPU_ISA_AVX512 = 2,
} etrt_cpu_isa;

/* The best the processor has, at most `limit`: the kernels' tests lower the limit to
 * check every micro-kernel on one machine. Not for use while products run. */
void etrt_cpu_gemm_isa_limit(etrt_cpu_isa limit);
etrt_cpu_isa etrt_cpu_gemm_isa(void);

#endif
