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

/* y[i] += a * x[i] (a multiply, then an add: the same bits on every instruction set). */
void etrt_cpu_axpy_f32(float *y, const float *x, float a, int64_t n);

#endif
