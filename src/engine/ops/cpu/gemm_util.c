#include "engine/ops/cpu/gemm_util.h"

#include <string.h>

/* C is computed in strips of ETRT_GEMM_COLS columns. Within a strip, B is taken in
 * blocks of ETRT_GEMM_DEPTH rows that stay in cache while every row of A passes
 * over them; four rows of C at a time are held in a stack accumulator, so that each
 * row of B is read once per four rows of A and the inner loop is a contiguous
 * multiply-add the compiler vectorises. Each C element still sums its products in
 * order of k. */
#define ETRT_GEMM_ROWS 4
#define ETRT_GEMM_COLS 256
#define ETRT_GEMM_DEPTH 128

#define ETRT_GEMM_DEFINE(NAME, T)                                                               \
  void etrt_cpu_gemm_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a,         \
                            int64_t a_row, int64_t a_col, const T *b, int64_t ldb, T *c,        \
                            int64_t ldc, int accumulate) {                                      \
    T acc[ETRT_GEMM_ROWS][ETRT_GEMM_COLS];                                                      \
    if (k_count == 0) { /* no products: C becomes 0, or stays */                                \
      for (int64_t i = 0; i < m && !accumulate; ++i)                                            \
        memset(c + i * ldc, 0, (size_t)n * sizeof(T));                                          \
      return;                                                                                   \
    }                                                                                           \
    for (int64_t j0 = 0; j0 < n; j0 += ETRT_GEMM_COLS) {                                        \
      int64_t cols = n - j0 < ETRT_GEMM_COLS ? n - j0 : ETRT_GEMM_COLS;                         \
      for (int64_t k0 = 0; k0 < k_count; k0 += ETRT_GEMM_DEPTH) {                               \
        int64_t k_end = k_count - k0 < ETRT_GEMM_DEPTH ? k_count : k0 + ETRT_GEMM_DEPTH;        \
        for (int64_t i0 = 0; i0 < m; i0 += ETRT_GEMM_ROWS) {                                    \
          int64_t rows = m - i0 < ETRT_GEMM_ROWS ? m - i0 : ETRT_GEMM_ROWS;                     \
          for (int64_t r = 0; r < rows; ++r) {                                                  \
            if (accumulate || k0 > 0)                                                           \
              memcpy(acc[r], c + (i0 + r) * ldc + j0, (size_t)cols * sizeof(T));                \
            else                                                                                \
              memset(acc[r], 0, (size_t)cols * sizeof(T));                                      \
          }                                                                                     \
          for (int64_t k = k0; k < k_end; ++k) {                                                \
            const T *restrict brow = b + k * ldb + j0;                                          \
            T av[ETRT_GEMM_ROWS];                                                               \
            for (int64_t r = 0; r < rows; ++r) av[r] = alpha * a[(i0 + r) * a_row + k * a_col]; \
            if (rows == ETRT_GEMM_ROWS) {                                                       \
              T *restrict acc0 = acc[0], *restrict acc1 = acc[1], *restrict acc2 = acc[2],      \
                          *restrict acc3 = acc[3];                                              \
              for (int64_t j = 0; j < cols; ++j) {                                              \
                T bv = brow[j];                                                                 \
                acc0[j] += av[0] * bv;                                                          \
                acc1[j] += av[1] * bv;                                                          \
                acc2[j] += av[2] * bv;                                                          \
                acc3[j] += av[3] * bv;                                                          \
              }                                                                                 \
            } else {                                                                            \
              for (int64_t r = 0; r < rows; ++r) {                                              \
                T *restrict accr = acc[r];                                                      \
                for (int64_t j = 0; j < cols; ++j) accr[j] += av[r] * brow[j];                  \
              }                                                                                 \
            }                                                                                   \
          }                                                                                     \
          for (int64_t r = 0; r < rows; ++r)                                                    \
            memcpy(c + (i0 + r) * ldc + j0, acc[r], (size_t)cols * sizeof(T));                  \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }

ETRT_GEMM_DEFINE(f32, float)
ETRT_GEMM_DEFINE(f64, double)
