/* onnxruntime's quantized elementwise operators (com.microsoft QLinearAdd, QLinearMul,
 * QLinearSoftmax; ops/qlinear.c), computed as its CPU kernels compute them rather than
 * as dequantize, float operator, quantize. The contrib documentation defines them by
 * that composition but leaves the float arithmetic open, and onnxruntime's kernels (the
 * reference implementation, and what its optimised session runs for the QDQ groups it
 * fuses) round differently: a value on a quantization step's edge then lands one step
 * away, and a deep model's requantizations carry the step on (a 12-layer BERT agreed on
 * about 90% of its top-1 with the composition). The formulas live here once for the CPU
 * (cpu/qlinear.c) and CUDA (cuda/qlinear.cu) kernels.
 *
 *   QLinearAdd  (MLAS qladd, the AVX2 kernel): with ra = a_scale / c_scale, rb = b_scale
 *               / c_scale and fixed = c_zp - fma(ra, a_zp, rb * b_zp), each output is
 *               fma(a, ra, fma(b, rb, fixed)) over the stored integers a and b, rounded
 *               half to even and saturated. An operand that is one value along the row
 *               is folded in first, fma(s, r, fixed), and a one-valued a swaps the roles
 *               (fixed = c_zp - fma(rb, b_zp, ra * a_zp)), as onnxruntime's broadcast does.
 *   QLinearMul  (MLAS qlmul): (a - a_zp)(b - b_zp) exactly, times a_scale * b_scale /
 *               c_scale, plus c_zp (two roundings), rounded half to even and saturated.
 *   QLinearSoftmax  (contrib qlinear_softmax): a table of 256 exponentials of the
 *               scaled input steps below the row's maximum, the row's sum in float, and
 *               each output round(e * floor(1 / y_scale) / sum) + y_zp. */
#ifndef ETRT_ENGINE_OPS_QLINEAR_H
#define ETRT_ENGINE_OPS_QLINEAR_H

#include <math.h>
#include <stdint.h>

#include "engine/op.h"

#ifdef __CUDACC__
#define ETRT_QLINEAR_HD __host__ __device__
#else
#define ETRT_QLINEAR_HD
#endif

/* What a QLinearAdd or QLinearMul node's scales and zero points give, worked out once
 * per run (the scales are inputs). */
typedef struct etrt_qlinear_binary {
  float ra, rb, fixed; /* QLinearAdd */
  float fixed_swapped; /* QLinearAdd with a one-valued a */
  float ratio, zc;     /* QLinearMul */
  int32_t za, zb, lo, hi;
} etrt_qlinear_binary;

ETRT_QLINEAR_HD static inline int32_t etrt_qlinear_saturate(float v, int32_t lo, int32_t hi) {
  float r = rintf(v);
  if (!(r >= (float)lo)) return lo; /* NaN too: the conversion's integer indefinite is low */
  if (r >= (float)hi) return hi;
  return (int32_t)r;
}

/* QLinearAdd of stored integers a and b, neither a one-element operand. */
ETRT_QLINEAR_HD static inline int32_t etrt_qlinear_add(const etrt_qlinear_binary *p, int32_t a,
                                                       int32_t b) {
  return etrt_qlinear_saturate(fmaf((float)a, p->ra, fmaf((float)b, p->rb, p->fixed)), p->lo,
                               p->hi);
}

/* The fixed part `fixed` with a one-valued operand s of ratio r folded in. */
ETRT_QLINEAR_HD static inline float etrt_qlinear_add_fold(float fixed, int32_t s, float r) {
  return fmaf((float)s, r, fixed);
}

/* QLinearAdd of x (ratio r) against a folded one-element operand. */
ETRT_QLINEAR_HD static inline int32_t etrt_qlinear_add_folded(const etrt_qlinear_binary *p,
                                                              int32_t x, float r, float fixed) {
  return etrt_qlinear_saturate(fmaf((float)x, r, fixed), p->lo, p->hi);
}

/* A product rounded on its own: nvcc would otherwise fuse it with the addition after it. */
ETRT_QLINEAR_HD static inline float etrt_qlinear_mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

ETRT_QLINEAR_HD static inline int32_t etrt_qlinear_mul(const etrt_qlinear_binary *p, int32_t a,
                                                       int32_t b) {
  float product = etrt_qlinear_mul_rn((float)((a - p->za) * (b - p->zb)), p->ratio);
  return etrt_qlinear_saturate(product + p->zc, p->lo, p->hi);
}

/* The parameters from the scales and zero points (zero points absent: 0); on the GPU
 * each thread works them out from the scales in device memory. */
ETRT_QLINEAR_HD static inline void etrt_qlinear_binary_init(etrt_qlinear_binary *p, float a_scale,
                                                            int32_t a_zp, float b_scale,
                                                            int32_t b_zp, float c_scale,
                                                            int32_t c_zp, int32_t lo, int32_t hi) {
  p->ra = a_scale / c_scale;
  p->rb = b_scale / c_scale;
  p->fixed = (float)c_zp - fmaf(p->ra, (float)a_zp, p->rb * (float)b_zp);
  p->fixed_swapped = (float)c_zp - fmaf(p->rb, (float)b_zp, p->ra * (float)a_zp);
  p->ratio = a_scale * b_scale / c_scale;
  p->zc = (float)c_zp;
  p->za = a_zp;
  p->zb = b_zp;
  p->lo = lo;
  p->hi = hi;
}

/* One QLinearAdd / QLinearMul output from the stored a and b, where a_one / b_one say
 * that the operand is one value along the innermost axis (folded for QLinearAdd). */
ETRT_QLINEAR_HD static inline int32_t etrt_qlinear_binary_at(const etrt_qlinear_binary *p, int add,
                                                             int32_t a, int32_t b, int a_one,
                                                             int b_one) {
  if (!add) return etrt_qlinear_mul(p, a, b);
  if (b_one && !a_one)
    return etrt_qlinear_add_folded(p, a, p->ra, etrt_qlinear_add_fold(p->fixed, b, p->rb));
  if (a_one && !b_one)
    return etrt_qlinear_add_folded(p, b, p->rb, etrt_qlinear_add_fold(p->fixed_swapped, a, p->ra));
  return etrt_qlinear_add(p, a, b);
}

/* QLinearSoftmax's table for x_scale and `reduce` elements per softmax: table[i] is the
 * exponential of input step i - 255 (i = 255 + x - max(row)), scaled up by as much as
 * a float sum of `reduce` of them allows. */
void etrt_qlinear_softmax_table(float x_scale, int64_t reduce, float table[256]);

/* QLinearSoftmax's layout: `outer` softmaxes of `reduce` elements `inner` apart. */
typedef struct etrt_qlinear_softmax_shape {
  int64_t outer, reduce, inner;
} etrt_qlinear_softmax_shape;

etrt_status etrt_qlinear_softmax_shape_of(const etrt_node *node, const etrt_tensor *x,
                                          etrt_qlinear_softmax_shape *out);

#endif
