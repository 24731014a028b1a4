#include "engine/ops/cpu/gemm_util.h"

#include <string.h>

/* Four rows of C by a strip of columns held in a stack accumulator: each row of B
 * is read once per four rows of A, and the inner loop is a contiguous
 * multiply-add the compiler vectorises. */
#define ETRT_GEMM_ROWS 4
#define ETRT_GEMM_COLS 256

void etrt_cpu_gemm_f32(int64_t m, int64_t n, int64_t k_count, const float *a, int64_t a_row,
                       int64_t a_col, const float *b, int64_t ldb, float *c, int64_t ldc,
                       int accumulate) {
  float acc[ETRT_GEMM_ROWS][ETRT_GEMM_COLS];
  for (int64_t i0 = 0; i0 < m; i0 += ETRT_GEMM_ROWS) {
    int64_t rows = m - i0 < ETRT_GEMM_ROWS ? m - i0 : ETRT_GEMM_ROWS;
    for (int64_t j0 = 0; j0 < n; j0 += ETRT_GEMM_COLS) {
      int64_t cols = n - j0 < ETRT_GEMM_COLS ? n - j0 : ETRT_GEMM_COLS;
      for (int64_t r = 0; r < ETRT_GEMM_ROWS; ++r) {
        if (accumulate && r < rows)
          memcpy(acc[r], c + (i0 + r) * ldc + j0, (size_t)cols * sizeof(float));
        else
          memset(acc[r], 0, (size_t)cols * sizeof(float));
      }
      for (int64_t k = 0; k < k_count; ++k) {
        const float *brow = b + k * ldb + j0;
        float av[ETRT_GEMM_ROWS] = {0};
        for (int64_t r = 0; r < rows; ++r) av[r] = a[(i0 + r) * a_row + k * a_col];
        float *restrict acc0 = acc[0], *restrict acc1 = acc[1], *restrict acc2 = acc[2],
                        *restrict acc3 = acc[3];
        for (int64_t j = 0; j < cols; ++j) {
          float bv = brow[j];
          acc0[j] += av[0] * bv;
          acc1[j] += av[1] * bv;
          acc2[j] += av[2] * bv;
          acc3[j] += av[3] * bv;
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        memcpy(c + (i0 + r) * ldc + j0, acc[r], (size_t)cols * sizeof(float));
    }
  }
}
