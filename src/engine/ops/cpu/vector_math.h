/* Float32 loops over transcendental functions written so that the compiler
 * vectorises them (no call to libm per element): exp by range reduction to
 * [-ln2/2, ln2/2] and a degree-6 polynomial (Cephes), within 2 ulp of the exact value
 * in the normal range. Used by the elementwise kernels where libm's scalar call per
 * element dominated a model's time (Sigmoid in SiLU), and the multiply-add pass of
 * the depthwise convolution, compiled for the widest vectors the processor has. */
#ifndef ETRT_ENGINE_OPS_CPU_VECTOR_MATH_H
#define ETRT_ENGINE_OPS_CPU_VECTOR_MATH_H

#include <stdint.h>

/* y[i] = 1 / (1 + exp(-x[i])); NaN stays NaN, results below 1.2e-38 become 0. */
void etrt_cpu_sigmoid_f32(const float *x, float *y, int64_t n);

/* y[i] = exp(x[i] - shift) for x[i] <= shift (Softmax's numerators; larger ones give
 * garbage); NaN stays NaN. x and y may be the same array. */
void etrt_cpu_exp_shifted_f32(const float *x, float *y, int64_t n, float shift);

/* y[i] += a * x[i] (a multiply, then an add: the same bits on every instruction set). */
void etrt_cpu_axpy_f32(float *y, const float *x, float a, int64_t n);

/* y[i] = act(y[i] + z[i]) (z NULL: act(y[i])) for the activations a convolution's
 * epilogue applies in place (the others are none here: NONE just adds z). Relu maps NaN
 * to 0; Clip to [lo, hi] keeps NaN and gives hi when lo > hi; HardSwish is
 * y * clamp(y / 6 + 0.5, 0, 1). */
typedef enum etrt_cpu_activation {
  ETRT_CPU_ACTIVATION_NONE = 0,
  ETRT_CPU_ACTIVATION_RELU,
  ETRT_CPU_ACTIVATION_CLIP,
  ETRT_CPU_ACTIVATION_HARD_SWISH
} etrt_cpu_activation;

void etrt_cpu_activate_f32(float *y, const float *z, int64_t n, etrt_cpu_activation kind, float lo,
                           float hi);

#endif
