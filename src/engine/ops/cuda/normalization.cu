/* Normalizations on the GPU (ops/normalization.h), with the CPU kernels' formulas:
 * statistics in double (float for the half-type LayerNorm rows below), two passes (mean,
 * then squared deviations).
 * Instance, Group and Layer normalization share one kernel: a block normalizes one
 * contiguous segment of X, and the scale/bias element of segment s, element i is
 * (s % mod) * mul + (i / div) % count, which covers per-channel (Instance, Group
 * opset 21), per-group (Group opset 18) and trailing-broadcast (Layer) parameters. */
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
__global__ void etrt_norm_segments_kernel(const T *x, const T *scale, const T *bias, T *y,
                                          int64_t segments, int64_t size, double epsilon,
                                          etrt_norm_param sp, etrt_norm_param bp, float *mean_out,
                                          float *inv_std_out) {
  typedef typename etrt_math<T>::type M;
  __shared__ double shared[32];
  for (int64_t seg = blockIdx.x; seg < segments; seg += gridDim.x) {
    const T *xs = x + seg * size;
    T *ys = y + seg * size;
    double sum = 0.0;
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) sum += (double)etrt_cvt<M>(xs[i]);
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

/* EtrtAddLayerNorm's row: a + b rounded to T, as the unfused Add would store it (and
 * stored into `sum` where the sum has other readers), into the lane's registers. */
template <typename T, int V, int R, typename M>
__device__ __forceinline__ void etrt_layer_norm_load_sum(const T *a, const T *b, T *sum, int lane,
                                                         int chunks, M (&v)[R][V]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    int c = r * 32 + lane;
    if (c < chunks) {
      T ta[V], tb[V];
      etrt_cuda_load_run<V>(a, (int64_t)c * V, 1, ta);
      etrt_cuda_load_run<V>(b, (int64_t)c * V, 1, tb);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        ta[k] = etrt_cvt<T>(etrt_cvt<M>(ta[k]) + etrt_cvt<M>(tb[k]));
        v[r][k] = etrt_cvt<M>(ta[k]);
      }
      if (sum != NULL) etrt_cuda_store_run<V>(sum, (int64_t)c * V, ta);
    }
  }
}

/* The type of a row's statistics: double for float32 and float64 rows, float for half
 * types, whose outputs keep 11 or 8 bits. The rows are latency-bound at small batches
 * (a seventh of BERT-base's batch-1 kernel time), and double shuffles, square root and
 * division lengthen each row's chain. */
template <typename T>
struct etrt_layer_norm_stats {
  typedef double type;
};
template <>
struct etrt_layer_norm_stats<__half> {
  typedef float type;
};
template <>
struct etrt_layer_norm_stats<__nv_bfloat16> {
  typedef float type;
};

__device__ __forceinline__ float etrt_layer_norm_inv_std(float variance) {
  return rsqrtf(variance);
}
__device__ __forceinline__ double etrt_layer_norm_inv_std(double variance) {
  return 1.0 / sqrt(variance);
}

/* LayerNormalization over rows of at most 1024 elements with per-element scale and
 * bias: one warp per row, the row read once into registers; sums in
 * etrt_layer_norm_stats' type, the normalisation itself in the compute type. With
 * `addend` the row is x + addend (EtrtAddLayerNorm: the residual Add read once, never
 * stored unless `sum_out` asks for it). */
template <typename T, int V, int R>
__global__ void etrt_layer_norm_rows_kernel(const T *x, const T *addend, const T *scale,
                                            const T *bias, T *y, T *sum_out, int64_t rows, int n,
                                            double epsilon, float *mean_out, float *inv_std_out) {
  typedef typename etrt_math<T>::type M;
  int lane;
  int64_t row = etrt_cuda_warp_row(&lane);
  if (row >= rows) return;
  const T *xr = x + row * n;
  T *yr = y + row * n;
  const int chunks = n / V;
  M v[R][V];
  if (addend == NULL)
    etrt_cuda_row_load<T, V, R>(xr, lane, chunks, v);
  else
    etrt_layer_norm_load_sum<T, V, R>(
        xr, addend + row * n, sum_out != NULL ? sum_out + row * n : sum_out, lane, chunks, v);
  typedef typename etrt_layer_norm_stats<T>::type S;
  S sum = S(0);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r * 32 + lane < chunks) {
#pragma unroll
      for (int k = 0; k < V; ++k) sum += (S)v[r][k];
    }
  }
  S mean = etrt_cuda_warp_reduce(sum, etrt_cuda_sum_op()) / (S)n;
  S squares = S(0);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r * 32 + lane < chunks) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        S d = (S)v[r][k] - mean;
        squares += d * d;
      }
    }
  }
  squares = etrt_cuda_warp_reduce(squares, etrt_cuda_sum_op());
  S inv_std = etrt_layer_norm_inv_std(squares / (S)n + (S)epsilon);
  if (lane == 0) {
    if (mean_out != NULL) mean_out[row] = (float)mean;
    if (inv_std_out != NULL) inv_std_out[row] = (float)inv_std;
  }
  const M m = (M)mean, is = (M)inv_std;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    int c = r * 32 + lane;
    if (c < chunks) {
      T s[V], b[V], out[V];
      etrt_cuda_load_run<V>(scale, (int64_t)c * V, 1, s);
      if (bias != NULL) etrt_cuda_load_run<V>(bias, (int64_t)c * V, 1, b);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        M o = (v[r][k] - m) * is * etrt_cvt<M>(s[k]);
        if (bias != NULL) o += etrt_cvt<M>(b[k]);
        out[k] = etrt_cvt<T>(o);
      }
      etrt_cuda_store_run<V>(yr, (int64_t)c * V, out);
    }
  }
}

template <typename T>
struct etrt_layer_norm_rows_launch {
  const T *x, *addend, *scale, *bias;
  T *y, *sum;
  int64_t rows;
  int n;
  double epsilon;
  float *mean_out, *inv_std_out;
  cudaStream_t stream;
  template <int V, int R>
  void run() const {
    etrt_layer_norm_rows_kernel<T, V, R>
        <<<etrt_cuda_row_blocks(rows), ETRT_CUDA_ROW_THREADS, 0, stream>>>(
            x, addend, scale, bias, y, sum, rows, n, epsilon, mean_out, inv_std_out);
  }
};

/* The tensors of one row-wise normalisation: x (+ addend) normalised with scale and
 * bias into y (the sum into `sum`); NULL where absent. */
typedef struct etrt_layer_norm_io {
  const void *x, *addend, *scale, *bias;
  void *y, *sum;
} etrt_layer_norm_io;

/* The one-warp-per-row LayerNormalization where it applies; false otherwise. */
template <typename T>
static bool etrt_layer_norm_rows(const etrt_layer_norm_io &io, int64_t rows, int64_t n,
                                 double epsilon, float *mean_out, float *inv_std_out,
                                 cudaStream_t stream) {
  const void *pointers[6] = {io.x, io.addend, io.scale, io.bias, io.y, io.sum};
  etrt_cuda_row_plan plan;
  if (rows < 1 || rows > ((int64_t)1 << 36) || !etrt_cuda_row_plan_of<T>(n, pointers, 6, &plan))
    return false;
  etrt_layer_norm_rows_launch<T> launch = {(const T *)io.x,
                                           (const T *)io.addend,
                                           (const T *)io.scale,
                                           (const T *)io.bias,
                                           (T *)io.y,
                                           (T *)io.sum,
                                           rows,
                                           (int)n,
                                           epsilon,
                                           mean_out,
                                           inv_std_out,
                                           stream};
  etrt_cuda_row_dispatch<T>(plan, launch);
  return true;
}

static etrt_status etrt_norm_segments(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                      int64_t segments, int64_t size, etrt_norm_param sp,
                                      etrt_norm_param bp, int has_bias, float *mean_out,
                                      float *inv_std_out) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  if (segments == 0) return ETRT_OK;
  unsigned blocks = segments > 65535 ? 65535u : (unsigned)segments;
  int threads = size >= 256 ? 256 : (int)((size + 31) / 32 * 32);
  if (threads == 0) threads = 32;
  const etrt_tensor *x = &inputs[0];
  cudaStream_t stream = etrt_cuda_stream(launch);
  ETRT_CUDA_FLOAT_SWITCH(
      x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_norm_segments_kernel<T><<<blocks, threads, 0, stream>>>(
          (const T *)x->data, (const T *)inputs[1].data,
          has_bias ? (const T *)inputs[2].data : (const T *)NULL, (T *)outputs[0].data, segments,
          size, (double)s->epsilon, sp, bp, mean_out, inv_std_out));
  return etrt_cuda_check(node, "normalize");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_instance_norm) {
  const etrt_tensor *x = &inputs[0];
  int64_t channels = x->dims[1], inner = etrt_cuda_span(x, 2, x->rank);
  etrt_norm_param p = {channels, 1, inner > 0 ? inner : 1, 1};
  return etrt_norm_segments(node, inputs, outputs, launch, x->dims[0] * channels, inner, p, p, 1,
                            NULL, NULL);
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
                            NULL);
}

/* a + b rounded to T into y (and `sum` where asked): EtrtAddLayerNorm's Add, for
 * rows the warp kernel does not take, which are then normalised in place. */
template <typename T>
__global__ void etrt_add_round_kernel(const T *a, const T *b, T *y, T *sum, int64_t count) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(i, count) {
    T v = etrt_cvt<T>(etrt_cvt<M>(a[i]) + etrt_cvt<M>(b[i]));
    y[i] = v;
    if (sum != NULL) sum[i] = v;
  }
}

/* LayerNormalization(X, scale[, bias]) -> Y[, Mean, InvStdDev], and EtrtAddLayerNorm(A, B,
 * scale[, bias]) -> Y[, Sum] (ops/normalization.c) with `add`: the residual Add read once
 * by the warp-per-row kernel; rows it does not take add into Y first and are normalised
 * there in place. */
static etrt_status etrt_layer_norm_run(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                       bool add) {
  const etrt_norm_state *s = (const etrt_norm_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  const uint32_t first = add ? 2 : 1; /* the scale's input */
  int32_t axis = etrt_norm_axis(s, x->rank);
  if (axis < 0 || axis >= x->rank) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s node '%s': axis %lld", node->op_type,
                      etrt_cuda_name(node), (long long)s->axis);
  }
  int64_t outer = etrt_cuda_span(x, 0, axis), inner = etrt_cuda_span(x, axis, x->rank);
  int has_bias = node->num_inputs > first + 1 && inputs[first + 1].rank >= 0;
  int64_t scale_count = etrt_tensor_numel(&inputs[first]);
  int64_t bias_count = has_bias ? etrt_tensor_numel(&inputs[first + 1]) : 1;
  if (etrt_tensor_numel(x) == 0 || scale_count < 1 || bias_count < 1) return ETRT_OK;
  etrt_norm_param sp = {1, 0, 1, scale_count}, bp = {1, 0, 1, bias_count};
  float *mean_out = !add && node->num_outputs > 1 ? (float *)outputs[1].data : NULL;
  float *inv_std_out = !add && node->num_outputs > 2 ? (float *)outputs[2].data : NULL;
  void *sum = add && node->num_outputs > 1 ? outputs[1].data : NULL;
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (scale_count == inner && (!has_bias || bias_count == inner)) {
    etrt_layer_norm_io io = {x->data,
                             add ? inputs[1].data : NULL,
                             inputs[first].data,
                             has_bias ? inputs[first + 1].data : NULL,
                             outputs[0].data,
                             sum};
    bool done = false;
    ETRT_CUDA_FLOAT_SWITCH(x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
                           done = etrt_layer_norm_rows<T>(io, outer, inner, (double)s->epsilon,
                                                          mean_out, inv_std_out, stream));
    if (done) return etrt_cuda_check(node, "layer_norm_rows");
  }
  if (!add)
    return etrt_norm_segments(node, inputs, outputs, launch, outer, inner, sp, bp, has_bias,
                              mean_out, inv_std_out);
  int64_t count = etrt_tensor_numel(x);
  ETRT_CUDA_FLOAT_SWITCH(
      x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_add_round_kernel<T>
      <<<etrt_cuda_blocks(count, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
          (const T *)x->data, (const T *)inputs[1].data, (T *)outputs[0].data, (T *)sum, count));
  ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "add_round"));
  etrt_tensor norm_inputs[3] = {outputs[0], inputs[2], has_bias ? inputs[3] : inputs[2]};
  return etrt_norm_segments(node, norm_inputs, outputs, launch, outer, inner, sp, bp, has_bias,
                            NULL, NULL);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_layer_norm) {
  return etrt_layer_norm_run(node, inputs, outputs, launch, false);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_add_layer_norm) {
  return etrt_layer_norm_run(node, inputs, outputs, launch, true);
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
    {"EtrtAddLayerNorm", etrt_cuda_add_layer_norm, NULL},
    {"GroupNormalization", etrt_cuda_group_norm, NULL},
    {"LpNormalization", etrt_cuda_lp_norm, NULL},
    {NULL, NULL, NULL},
};
