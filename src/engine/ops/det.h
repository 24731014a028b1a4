/* Det: the determinant of each trailing [n, n] matrix, by LU decomposition with
 * partial pivoting on a double copy; one definition for the CPU kernel (cpu/det.c)
 * and the CUDA kernel (cuda/det.cu, a thread per matrix). */
#ifndef ETRT_ENGINE_OPS_DET_H
#define ETRT_ENGINE_OPS_DET_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ETRT_DET_FN __host__ __device__ static inline
#else
#define ETRT_DET_FN static inline
#endif

/* The determinant of a (n x n, row-major), which it overwrites. */
ETRT_DET_FN double etrt_det_lu(double *a, int64_t n) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < n; ++r)
      if (fabs(a[r * n + k]) > fabs(a[pivot * n + k])) pivot = r;
    if (a[pivot * n + k] == 0.0) return 0.0;
    if (pivot != k) {
      for (int64_t c = 0; c < n; ++c) {
        double t = a[k * n + c];
        a[k * n + c] = a[pivot * n + c];
        a[pivot * n + c] = t;
      }
      det = -det;
    }
    double d = a[k * n + k];
    det *= d;
    for (int64_t r = k + 1; r < n; ++r) {
      double f = a[r * n + k] / d;
      for (int64_t c = k + 1; c < n; ++c) a[r * n + c] -= f * a[k * n + c];
    }
  }
  return det;
}

#endif
