#include "engine/ops/cpu/vector_math.h"

#include <string.h>

#include "engine/ops/cpu/gemm_util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Whether the eight-lane paths below run: the processor has AVX2, and the tests' limit
 * (etrt_cpu_gemm_isa_limit) allows it, so that they can compare both paths' bits. */
static int etrt_vm_wide(void) { return etrt_cpu_gemm_isa() >= ETRT_CPU_ISA_AVX2; }

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
/* The compiler leaves the selects of the loops above scalar, so the x86 paths are
 * written with intrinsics, eight lanes at a time, each operation the scalar form's in the
 * same order (AVX2 without FMA: no contraction), hence the same bits; the tail runs the
 * scalar loop. Chosen per call (etrt_vm_wide) rather than with target_clones: an
 * ifunc resolver runs before the sanitizer runtimes are ready. */
__attribute__((target("avx2"))) static inline __m256 etrt_vm_exp_nonpositive8(__m256 x) {
  const __m256 floor = _mm256_set1_ps(-87.33f), magic = _mm256_set1_ps(12582912.0f);
  __m256 keep = _mm256_cmp_ps(x, floor, _CMP_GT_OQ);
  __m256 xc = _mm256_blendv_ps(floor, x, keep);
  __m256 n = _mm256_sub_ps(
      _mm256_add_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)), magic), magic);
  __m256 r = _mm256_add_ps(_mm256_sub_ps(xc, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f))),
                           _mm256_mul_ps(n, _mm256_set1_ps(2.12194440e-4f)));
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201e-1f));
  __m256 y =
      _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, r), r), r), _mm256_set1_ps(1.0f));
  __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(bits)), keep);
}

__attribute__((target("avx2"))) static void etrt_vm_sigmoid_avx2(const float *x, float *y,
                                                                 int64_t n) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256 negative = _mm256_cmp_ps(v, zero, _CMP_LT_OQ);
    __m256 e = etrt_vm_exp_nonpositive8(_mm256_blendv_ps(_mm256_xor_ps(v, sign), v, negative));
    __m256 d = _mm256_add_ps(one, e);
    __m256 s = _mm256_blendv_ps(_mm256_div_ps(e, d), _mm256_div_ps(one, d),
                                _mm256_cmp_ps(v, zero, _CMP_GE_OQ));
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(s, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  }
  etrt_vm_sigmoid_loop(x + i, y + i, n - i);
}
#endif

void etrt_cpu_sigmoid_f32(const float *x, float *y, int64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (etrt_vm_wide()) {
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

/* The convolution epilogue's activations. Each is a compare-and-select per element
 * (maxps / minps where the processor has them), the same bits as the scalar forms: Relu
 * maps NaN to 0, Clip keeps it, a Clip whose min exceeds its max gives max. */
static inline void etrt_vm_activate_loop(float *restrict y, const float *restrict z, int64_t n,
                                         etrt_cpu_activation kind, float lo, float hi) {
  if (z != NULL)
    for (int64_t i = 0; i < n; ++i) y[i] += z[i];
  switch (kind) {
    case ETRT_CPU_ACTIVATION_RELU:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
      break;
    case ETRT_CPU_ACTIVATION_CLIP:
      for (int64_t i = 0; i < n; ++i) {
        float v = y[i] < lo ? lo : y[i];
        y[i] = v > hi ? hi : v;
      }
      break;
    case ETRT_CPU_ACTIVATION_HARD_SWISH:
      for (int64_t i = 0; i < n; ++i) {
        float t = y[i] * (float)(1.0 / 6.0) + 0.5f;
        t = t < 0.0f ? 0.0f : t;
        t = t > 1.0f ? 1.0f : t;
        y[i] *= t;
      }
      break;
    default:
      break;
  }
}

#if defined(__x86_64__) || defined(__i386__)
/* Written with intrinsics: the compiler keeps the selects above as branches (a select is
 * not a max where signed zeros and NaN matter). Ordered quiet compares give the scalar
 * forms' results for NaN and -0. */
__attribute__((target("avx2"))) static void etrt_vm_activate_avx2(float *y, const float *z,
                                                                  int64_t n,
                                                                  etrt_cpu_activation kind,
                                                                  float lo, float hi) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const __m256 sixth = _mm256_set1_ps((float)(1.0 / 6.0)), half = _mm256_set1_ps(0.5f);
  const __m256 low = _mm256_set1_ps(lo), high = _mm256_set1_ps(hi);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(y + i);
    if (z != NULL) v = _mm256_add_ps(v, _mm256_loadu_ps(z + i));
    switch (kind) {
      case ETRT_CPU_ACTIVATION_RELU:
        v = _mm256_and_ps(v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ));
        break;
      case ETRT_CPU_ACTIVATION_CLIP:
        v = _mm256_blendv_ps(v, low, _mm256_cmp_ps(v, low, _CMP_LT_OQ));
        v = _mm256_blendv_ps(v, high, _mm256_cmp_ps(v, high, _CMP_GT_OQ));
        break;
      case ETRT_CPU_ACTIVATION_HARD_SWISH: {
        __m256 t = _mm256_add_ps(_mm256_mul_ps(v, sixth), half);
        t = _mm256_blendv_ps(t, zero, _mm256_cmp_ps(t, zero, _CMP_LT_OQ));
        t = _mm256_blendv_ps(t, one, _mm256_cmp_ps(t, one, _CMP_GT_OQ));
        v = _mm256_mul_ps(v, t);
        break;
      }
      default:
        break;
    }
    _mm256_storeu_ps(y + i, v);
  }
  etrt_vm_activate_loop(y + i, z != NULL ? z + i : NULL, n - i, kind, lo, hi);
}
#endif

void etrt_cpu_activate_f32(float *y, const float *z, int64_t n, etrt_cpu_activation kind, float lo,
                           float hi) {
#if defined(__x86_64__) || defined(__i386__)
  if (etrt_vm_wide()) {
    etrt_vm_activate_avx2(y, z, n, kind, lo, hi);
    return;
  }
#endif
  etrt_vm_activate_loop(y, z, n, kind, lo, hi);
}

/* exp(x - shift), NaN kept. */
static inline void etrt_vm_exp_shifted_loop(const float *x, float *y, int64_t n, float shift) {
  for (int64_t i = 0; i < n; ++i) {
    float d = x[i] - shift;
    y[i] = d != d ? d : etrt_vm_exp_nonpositive(d);
  }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void etrt_vm_exp_shifted_avx2(const float *x, float *y,
                                                                     int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), s);
    _mm256_storeu_ps(
        y + i, _mm256_blendv_ps(etrt_vm_exp_nonpositive8(d), d, _mm256_cmp_ps(d, d, _CMP_UNORD_Q)));
  }
  etrt_vm_exp_shifted_loop(x + i, y + i, n - i, shift);
}
#endif

void etrt_cpu_exp_shifted_f32(const float *x, float *y, int64_t n, float shift) {
#if defined(__x86_64__) || defined(__i386__)
  if (etrt_vm_wide()) {
    etrt_vm_exp_shifted_avx2(x, y, n, shift);
    return;
  }
#endif
  etrt_vm_exp_shifted_loop(x, y, n, shift);
}
