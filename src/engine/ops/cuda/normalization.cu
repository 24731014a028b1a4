/* Normalizations on the GPU (ops/normalization.h), with the CPU kernels' formulas:
 * statistics in double, two passes (mean, then squared deviations).
 * Instance, Group and Layer normalization share one kernel: a block normalizes one
 * contiguous segment of X, and the scale/bias element of segment s, element i is
 * (s % mod) * mul + (i / div) % count, which covers per-channel (Instance, Group
 * opset 21), per-group (Group opset 18) and trailing-broadcast (Layer) parameters.
 * EtrtAddLayerNorm is Layer normalization of A + B through the same kernel. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/normalization.h"
}

typedef struct etrt_norm_param {
  int64_t mod, mul, div, count;
} etrt_norm_param;

__device__ __forceinline__ int64_t etrt_norm_index(const etrt_norm_param &p, int64_t segment,
                                                   int64_t i) {
  return (segment % p.mod) * p.mul + (i / p.div) % p.count;
}

template <typename T>
__global__ void etrt_norm_segments_kernel(const T *x, const T *addend, T *sum_out, const T *scale,
                                          const T *bias, T *y, int64_t segments, int64_t size,
                                          double epsilon, etrt_norm_param sp, etrt_norm_param bp,
                                          float *mean_out, float *inv_std_out) {
  typedef typename etrt_math<T>::type M;
  __shared__ double shared[32];
  for (int64_t seg = blockIdx.x; seg < segments; seg += gridDim.x) {
    const T *xs = x + seg * size;
    T *ys = y + seg * size;
    double sum = 0.0;
    if (addend != NULL) {
      /* EtrtAddLayerNorm: A + B rounded to T as the unfused Add rounds it, stored
       * (in Sum, or in Y when nothing reads the sum) and normalised from there;
       * each thread reads back only the elements it wrote. */
      const T *bs = addend + seg * size;
      T *ss = sum_out + seg * size;
      for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
        T v = etrt_cvt<T>((M)(etrt_cvt<M>(xs[i]) + etrt_cvt<M>(bs[i])));
        ss[i] = v;
        sum += (double)etrt_cvt<M>(v);
      }
      xs = ss;
    } else {
      for (int64_t i = threadIdx.x; i < size; i += blockDim.x) sum += (double)etrt_cvt<M>(xs[i]);
    }
    sum = etrt_cuda_block_reduce(sum, 0.0, etrt_cuda_sum_op(), shared);
    double mean = size > 0 ? sum / (double)size : 0.0;
    double squares = 0.0;
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
      double d = (double)etrt_cvt<M>(xs[i]) - mean;
      squares += d * d;
    }
    squares = etrt_cuda_block_reduce(squares, 0.0, etrt_cuda_sum_op(), shared);
    double inv_std = 1.0 / sqrt((size > 0 ? squares / (double)size : 0.0) + epsilon);
    if (threadIdx.x == 0) {
      if (mean_out != NULL) mean_out[seg] = (float)mean;
      if (inv_std_out != NULL) inv_std_out[seg] = (float)inv_std;
    }
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
      double v = ((double)etrt_cvt<M>(xs[i]) - mean) * inv_std *
                 (double)etrt_cvt<M>(scale[etrt_norm_index(sp, seg, i)]);
      if (bias != NULL) v += (double)etrt_cvt<M>(bias[etrt_norm_index(bp, seg, i)]);
      ys[i] = etrt_cvt<T>((M)v);
    }
  }
}

/* inputs[first] is X (A for EtrtAddLayerNorm, whose B is inputs[1]); scale and bias
 * follow it. */
static etrt_status etrt_norm_segments(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                      int64_t segments, int64_t size, etrt_norm_param sp,
                                      etrt_norm_param bp, int has_bias, float *mean_out,
                                      float *inv_std_out, int add) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  if (segments == 0) return ETRT_OK;
  unsigned blocks = segments > 65535 ? 65535u : (unsigned)segments;
  int threads = size >= 256 ? 256 : (int)((size + 31) / 32 * 32);
  if (threads == 0) threads = 32;
  const etrt_tensor *x = &inputs[0];
  void *sum_out =
      add && node->num_outputs > 1 && outputs[1].data != NULL ? outputs[1].data : outputs[0].data;
  cudaStream_t stream = etrt_cuda_stream(launch);
  ETRT_CUDA_FLOAT_SWITCH(
      x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_norm_segments_kernel<T><<<blocks, threads, 0, stream>>>(
          (const T *)x->data, add ? (const T *)inputs[1].data : (const T *)NULL,
          add ? (T *)sum_out : (T *)NULL, (const T *)inputs[1 + add].data,
          has_bias ? (const T *)inputs[2 + add].data : (const T *)NULL, (T *)outputs[0].data,
          segments, size, (double)s->epsilon, sp, bp, mean_out, inv_std_out));
  return etrt_cuda_check(node, "normalize");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_instance_norm) {
  const etrt_tensor *x = &inputs[0];
  int64_t channels = x->dims[1], inner = etrt_cuda_span(x, 2, x->rank);
  etrt_norm_param p = {channels, 1, inner > 0 ? inner : 1, 1};
  return etrt_norm_segments(node, inputs, outputs, launch, x->dims[0] * channels, inner, p, p, 1,
                            NULL, NULL, 0);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_group_norm) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  int64_t channels = x->dims[1], groups = s->num_groups;
  if (groups < 1 || channels % groups != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "GroupNormalization node '%s': %lld channels in %lld groups",
                      etrt_cuda_name(node), (long long)channels, (long long)groups);
  }
  int64_t per_group = channels / groups, inner = etrt_cuda_span(x, 2, x->rank);
  int64_t size = per_group * inner;
  etrt_norm_param p;
  if (inputs[1].dims[0] == channels) {
    etrt_norm_param c = {groups, per_group, inner > 0 ? inner : 1, per_group};
    p = c;
  } else {
    etrt_norm_param g = {groups, 1, size > 0 ? size : 1, 1};
    p = g;
  }
  return etrt_norm_segments(node, inputs, outputs, launch, x->dims[0] * groups, size, p, p, 1, NULL,
                            NULL, 0);
}

/* LayerNormalization (add 0) and EtrtAddLayerNorm (add 1: B is input 1, so scale
 * and bias move one place on, and output 1 is the sum, not a statistic). */
static etrt_status etrt_layer_norm_run(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                       int add) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  int32_t axis = etrt_norm_axis(s, x->rank);
  if (axis < 0 || axis >= x->rank) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s node '%s': axis %lld", node->op_type,
                      etrt_cuda_name(node), (long long)s->axis);
  }
  int64_t outer = etrt_cuda_span(x, 0, axis), inner = etrt_cuda_span(x, axis, x->rank);
  int has_bias = node->num_inputs > 2u + (unsigned)add && inputs[2 + add].rank >= 0;
  int64_t scale_count = etrt_tensor_numel(&inputs[1 + add]);
  int64_t bias_count = has_bias ? etrt_tensor_numel(&inputs[2 + add]) : 1;
  if (scale_count < 1 || bias_count < 1) return ETRT_OK;
  etrt_norm_param sp = {1, 0, 1, scale_count}, bp = {1, 0, 1, bias_count};
  float *mean_out = !add && node->num_outputs > 1 ? (float *)outputs[1].data : NULL;
  float *inv_std_out = !add && node->num_outputs > 2 ? (float *)outputs[2].data : NULL;
  return etrt_norm_segments(node, inputs, outputs, launch, outer, inner, sp, bp, has_bias, mean_out,
                            inv_std_out, add);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_layer_norm) {
  return etrt_layer_norm_run(node, inputs, outputs, launch, 0);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_add_layer_norm) {
  return etrt_layer_norm_run(node, inputs, outputs, launch, 1);
}

/* BatchNormalization (inference): y = x * scale' + shift' per channel. */
template <typename T>
__global__ void etrt_batch_norm_kernel(const T *x, const T *scale, const T *bias, const T *mean,
                                       const T *var, T *y, int64_t n, int64_t channels,
                                       int64_t inner, double epsilon) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(i, n) {
    int64_t c = (i / inner) % channels;
    double s = (double)etrt_cvt<M>(scale[c]) / sqrt((double)etrt_cvt<M>(var[c]) + epsilon);
    double shift = (double)etrt_cvt<M>(bias[c]) - (double)etrt_cvt<M>(mean[c]) * s;
    y[i] = etrt_cvt<T>((M)((double)etrt_cvt<M>(x[i]) * s + shift));
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_batch_norm) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  int64_t n = etrt_tensor_numel(x);
  if (n == 0) return ETRT_OK;
  int64_t channels = x->rank > 1 ? x->dims[1] : 1;
  int64_t inner = etrt_cuda_span(x, 2, x->rank);
  cudaStream_t stream = etrt_cuda_stream(launch);
  ETRT_CUDA_FLOAT_SWITCH(
      x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_batch_norm_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
          (const T *)x->data, (const T *)inputs[1].data, (const T *)inputs[2].data,
          (const T *)inputs[3].data, (const T *)inputs[4].data, (T *)outputs[0].data, n, channels,
          inner, (double)s->epsilon));
  return etrt_cuda_check(node, "batch_norm");
}

/* LpNormalization: each group along the axis divided by its L1 or L2 norm. */
template <typename T>
__global__ void etrt_lp_norm_kernel(const T *x, T *y, int64_t outer, int64_t size, int64_t inner,
                                    int p) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(t, outer * inner) {
    int64_t first = (t / inner) * size * inner + t % inner;
    double norm = 0.0;
    for (int64_t k = 0; k < size; ++k) {
      double v = (double)etrt_cvt<M>(x[first + k * inner]);
      norm += p == 1 ? fabs(v) : v * v;
    }
    if (p == 2) norm = sqrt(norm);
    for (int64_t k = 0; k < size; ++k) {
      y[first + k * inner] = etrt_cvt<T>((M)((double)etrt_cvt<M>(x[first + k * inner]) / norm));
    }
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_lp_norm) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  int32_t axis = etrt_norm_axis(s, x->rank);
  if (axis < 0 || axis >= x->rank) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "LpNormalization node '%s': axis %lld",
                      etrt_cuda_name(node), (long long)s->axis);
  }
  int64_t outer = etrt_cuda_span(x, 0, axis), size = x->dims[axis];
  int64_t inner = etrt_cuda_span(x, axis + 1, x->rank);
  if (outer * inner == 0) return ETRT_OK;
  cudaStream_t stream = etrt_cuda_stream(launch);
  ETRT_CUDA_FLOAT_SWITCH(
      x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_lp_norm_kernel<T>
      <<<etrt_cuda_blocks(outer * inner, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
          (const T *)x->data, (T *)outputs[0].data, outer, size, inner, (int)s->p));
  return etrt_cuda_check(node, "lp_norm");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_normalization[] = {
    {"BatchNormalization", etrt_cuda_batch_norm, NULL},
    {"InstanceNormalization", etrt_cuda_instance_norm, NULL},
    {"LayerNormalization", etrt_cuda_layer_norm, NULL},
    {"GroupNormalization", etrt_cuda_group_norm, NULL},
    {"LpNormalization", etrt_cuda_lp_norm, NULL},
    {"EtrtAddLayerNorm", etrt_cuda_add_layer_norm, NULL},
    {NULL, NULL, NULL},
};
