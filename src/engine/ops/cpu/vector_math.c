#include "engine/ops/cpu/vector_math.h"

#include <string.h>

/* exp(x) for x <= 0; 0 below -87.33 (where the result leaves the normal range). */
static inline float etrt_vm_exp_nonpositive(float x) {
  float xc = x > -87.33f ? x : -87.33f; /* also maps NaN to a finite value */
  /* n = round(x / ln2) by the float trick: adding 1.5 * 2^23 leaves no fraction bits */
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t bits = ((int32_t)n + 127) * (1 << 23); /* 2^n, n in [-126, 0] */
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return x > -87.33f ? y * scale : 0.0f;
}

/* The loop, compiled once per instruction set below. Written without contraction or
 * reordering, so every copy gives the same bits. */
static inline void etrt_vm_sigmoid_loop(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    float e = etrt_vm_exp_nonpositive(v < 0 ? v : -v); /* exp(-|v|): never overflows */
    float s = v >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
    y[i] = v != v ? v : s;
  }
}

#if defined(__x86_64__) || defined(__i386__)
/* Chosen per call with __builtin_cpu_supports rather than target_clones: an ifunc
 * resolver runs before the sanitizer runtimes are ready. */
__attribute__((target("avx512f"))) static void etrt_vm_sigmoid_avx512(const float *x, float *y,
                                                                      int64_t n) {
  etrt_vm_sigmoid_loop(x, y, n);
}
__attribute__((target("avx2"))) static void etrt_vm_sigmoid_avx2(const float *x, float *y,
                                                                 int64_t n) {
  etrt_vm_sigmoid_loop(x, y, n);
}
#endif

void etrt_cpu_sigmoid_f32(const float *x, float *y, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f")) {
    etrt_vm_sigmoid_avx512(x, y, n);
    return;
  }
  if (__builtin_cpu_supports("avx2")) {
    etrt_vm_sigmoid_avx2(x, y, n);
    return;
  }
#endif
  etrt_vm_sigmoid_loop(x, y, n);
}

static inline void etrt_vm_axpy_loop(float *restrict y, const float *restrict x, float a,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static void etrt_vm_axpy_avx512(float *y, const float *x,
                                                                   float a, int64_t n) {
  etrt_vm_axpy_loop(y, x, a, n);
}
__attribute__((target("avx2"))) static void etrt_vm_axpy_avx2(float *y, const float *x, float a,
                                                              int64_t n) {
  etrt_vm_axpy_loop(y, x, a, n);
}
#endif

void etrt_cpu_axpy_f32(float *y, const float *x, float a, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f")) {
    etrt_vm_axpy_avx512(y, x, a, n);
    return;
  }
  if (__builtin_cpu_supports("avx2")) {
    etrt_vm_axpy_avx2(y, x, a, n);
    return;
  }
#endif
  etrt_vm_axpy_loop(y, x, a, n);
}
