/* Float32 loops over transcendental functions written so that the compiler
 * vectorises them (no call to libm per element): exp by range reduction to
 * [-ln2/2, ln2/2] and a degree-6 polynomial (Cephes), within 2 ulp of the exact value
 * in the normal range. Used by the elementwise kernels where libm's scalar call per
 * element dominated a model's time (Sigmoid in SiLU), and the multiply-add pass of
 * the depthwise convolution, and the float32 fast paths of Erf, Gelu, HardSwish, Softmax
 * and LayerNormalization, compiled for the widest vectors the processor has. */
#ifndef ETRT_ENGINE_OPS_CPU_VECTOR_MATH_H
#define ETRT_ENGINE_OPS_CPU_VECTOR_MATH_H

#include <stdint.h>

/* y[i] = 1 / (1 + exp(-x[i])); NaN stays NaN, results below 1.2e-38 become 0. */
void etrt_cpu_sigmoid_f32(const float *x, float *y, int64_t n);

/* y[i] += a * x[i] (a multiply, then an add: the same bits on every instruction set). */
void etrt_cpu_axpy_f32(float *y, const float *x, float a, int64_t n);

/* erf(x[i]) within 1.2 ulp of the exact value; NaN stays NaN, +-inf give +-1. */
void etrt_cpu_erf_f32(const float *x, float *y, int64_t n);

/* Gelu in its erf form: y[i] = x[i] / 2 * (1 + erf(x[i] / sqrt(2))). */
void etrt_cpu_gelu_f32(const float *x, float *y, int64_t n);

/* HardSwish: y[i] = x[i] * min(max(x[i] / 6 + 1/2, 0), 1). y may be x. */
void etrt_cpu_hard_swish_f32(const float *x, float *y, int64_t n);

/* Relu (NaN gives 0) and Clip to [lo, hi] (NaN stays NaN; lo > hi gives hi); y may be x. */
void etrt_cpu_relu_f32(const float *x, float *y, int64_t n);
void etrt_cpu_clip_f32(const float *x, float *y, int64_t n, float lo, float hi);

/* y[i] = a[i] + b[i]; y may be a or b. */
void etrt_cpu_add_f32(const float *a, const float *b, float *y, int64_t n);

/* *sum = the sum of x[0 .. n) in double (ETRT_VM_LANES partial sums, the same on every
 * instruction set). */
void etrt_cpu_sum_f32(const float *x, int64_t n, double *sum);

/* *dot = the dot product of a[0 .. n) and b[0 .. n) in float (ETRT_VM_LANES partial
 * sums, the same on every instruction set). */
void etrt_cpu_dot_f32(const float *a, const float *b, int64_t n, float *dot);

/* Softmax (or LogSoftmax when log_softmax) of each of `rows` contiguous rows of n > 0
 * elements (y may be x): the maximum, then the exponentials, then one scaling pass.
 * Softmax takes onnxruntime's arithmetic (MLAS's exponential, within 1 ulp, summed in
 * eight float lanes), LogSoftmax exp(x - max) within 2 ulp summed in double over 16
 * lanes. A NaN in a row makes the row NaN. */
void etrt_cpu_softmax_f32(const float *x, float *y, int64_t rows, int64_t n, int log_softmax);

/* The same arithmetic for softmaxes along the middle axis of an [n][inner] block (n > 0):
 * column c of [begin, end) is the softmax of x[k * inner + c] over k; y may be x. */
void etrt_cpu_softmax_columns_f32(const float *x, float *y, int64_t n, int64_t inner, int64_t begin,
                                  int64_t end, int log_softmax);

/* One row of LayerNormalization over n > 0 elements with float32 statistics: y[i] =
 * (x[i] - mean) / sqrt(variance + epsilon) * scale[i] (+ bias[i] unless bias is NULL);
 * y may be x. mean_inv_std receives the mean and 1 / sqrt(variance + epsilon). */
void etrt_cpu_layer_norm_f32(const float *x, const float *scale, const float *bias, float *y,
                             int64_t n, float epsilon, float *mean_inv_std);

/* Rows of LayerNormalization of a residual sum (rows contiguous rows of n > 0 elements of
 * x; y may be x) with onnxruntime's SkipLayerNormalization arithmetic: Welford's running
 * mean and squared deviations in float, y[i] = (x[i] - mean) / sqrt(m2 / n + epsilon) *
 * scale[i] (+ bias[i] unless bias is NULL), each operation rounded alone. */
void etrt_cpu_skip_layer_norm_f32(const float *x, const float *scale, const float *bias, float *y,
                                  int64_t rows, int64_t n, float epsilon);

#endif
