/* erf in float32 as onnxruntime computes it, for the CPU's vector
 * loops (cpu/vector_math.c) and the GPU's Erf and Gelu (cuda/unary.cu): the same bits on
 * both executors and in onnxruntime. */
#ifndef ETRT_ENGINE_OPS_ERF_H
#define ETRT_ENGINE_OPS_ERF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define ETRT_ERF_HD __host__ __device__
#else
#define ETRT_ERF_HD
#endif

/* erf in float32 as onnxruntime's MLAS computes it (its FMA3 kernel, which every x86-64
 * processor with AVX2 runs): |x| clamped at 3.925, below |x| = 0.921875 an odd polynomial
 * in x^2, above it 1 - exp(-p(|x|)) with MLAS's exp, every step a fused multiply-add;
 * within 1.5 ulp of erf. The same bits as onnxruntime matter where a QuantizeLinear
 * follows (a quantized Gelu): a value on a step's edge otherwise lands one step away.
 * Both branches are computed so that the loop vectorises; NaN stays NaN and the
 * infinities give +-1. */
ETRT_ERF_HD static inline float etrt_erf_f32(float x) {
  float a = fabsf(x);
  a = a < 3.925f ? a : 3.925f; /* where the formula reaches 1 */
  float s = a * a;
  float p = fmaf(-5.99104969e-4f, s, 4.99339588e-3f);
  p = fmaf(p, s, -2.67667342e-2f);
  p = fmaf(p, s, 1.12818025e-1f);
  p = fmaf(p, s, -3.76124859e-1f);
  p = fmaf(p, s, 1.28379151e-1f);
  float small = fmaf(p, a, a);
  float b = a >= 0.921875f ? a : 0.0f;
  float r = fmaf(1.72948930e-5f, b, -3.83208680e-4f);
  r = fmaf(r, b, 3.88393435e-3f);
  r = fmaf(r, b, -2.42545605e-2f);
  r = fmaf(r, b, 1.06777847e-1f);
  r = fmaf(r, b, 6.34846687e-1f);
  r = fmaf(r, b, 1.28717512e-1f);
  r = -fmaf(r, b, b);
  r = r > -88.3762626647949f ? r : -88.3762626647949f;
  float n = fmaf(1.44269504088896341f, r, 1.25829120e+7f) - 1.25829120e+7f;
  float f = fmaf(n, -6.93145752e-1f, r);
  f = fmaf(n, -1.42860677e-6f, f);
  float e = fmaf(1.38319808e-3f, f, 8.37550033e-3f);
  e = fmaf(e, f, 4.16689515e-2f);
  e = fmaf(e, f, 1.66664466e-1f);
  e = fmaf(e, f, 4.99999851e-1f);
  e = fmaf(e, f, 1.0f);
  e = fmaf(e, f, 1.0f);
  int32_t bits = ((int32_t)n + 127) * (1 << 23);
#ifdef __CUDA_ARCH__
  float big = 1.0f - __fmul_rn(e, __int_as_float(bits)); /* not fused with the subtraction */
#else
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  float big = 1.0f - e * scale;
#endif
  float y = a >= 0.921875f ? big : small;
  y = signbit(x) ? -y : y;
  return x != x ? x : y;
}

#endif
