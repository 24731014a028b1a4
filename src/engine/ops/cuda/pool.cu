/* Pooling on the GPU (ops/pool.h), with the CPU kernels' rules: windows from the
 * shared etrt_conv_geometry_pool, MaxPool's first maximum (and its index, row- or
 * column-major), AveragePool's divisor with or without the explicit padding,
 * LpPool, and the Global* pools over whole planes. Sums accumulate in double.
 * A channels_last node (conv_shape.h) has X and Y in NHWC: the same windows, with
 * consecutive threads on consecutive channels so that reads and writes are coalesced. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/pool.h"
}

/* `nhwc_channels` > 0: X and Y are channels-last with that many channels (t runs over Y
 * in its order: position-major, channel-minor); 0: planes of NCHW. */
template <typename T>
__global__ void etrt_pool_kernel(const T *x, T *y, int64_t *indices, int64_t planes,
                                 int64_t in_count, int64_t out_count, int64_t kernel_count,
                                 etrt_conv_geometry g, int kind, int column_major,
                                 int count_include_pad, double p, int64_t nhwc_channels) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(t, planes * out_count) {
    int64_t plane = t / out_count, o = t % out_count, step = 1;
    const T *xp = x + plane * in_count;
    if (nhwc_channels > 0) {
      int64_t c = t % nhwc_channels, n = t / (nhwc_channels * out_count);
      o = (t / nhwc_channels) % out_count;
      xp = x + n * in_count * nhwc_channels + c;
      step = nhwc_channels;
    }
    int64_t origin[ETRT_CONV_MAX_SPATIAL];
    int64_t rest = o;
    for (int32_t s = g.spatial - 1; s >= 0; --s) {
      origin[s] = (rest % g.out[s]) * g.stride[s] - g.pad_begin[s];
      rest /= g.out[s];
    }
    M best = M(0);
    int64_t best_index = -1, best_column = 0, count = 0;
    double sum = 0.0;
    for (int64_t k = 0; k < kernel_count; ++k) {
      int64_t row = 0, column = 0, scale = 1, kr = k, coords[ETRT_CONV_MAX_SPATIAL];
      int inside = 1;
      for (int32_t s = g.spatial - 1; s >= 0; --s) {
        coords[s] = origin[s] + (kr % g.kernel[s]) * g.dilation[s];
        kr /= g.kernel[s];
        if (coords[s] < 0 || coords[s] >= g.in[s]) inside = 0;
      }
      if (!inside) continue;
      for (int32_t s = 0; s < g.spatial; ++s) {
        row = row * g.in[s] + coords[s];
        column += coords[s] * scale;
        scale *= g.in[s];
      }
      M v = etrt_cvt<M>(xp[row * step]);
      if (kind == ETRT_POOL_MAX) {
        if (best_index < 0 || v > best) {
          best = v;
          best_index = row;
          best_column = column;
        }
      } else {
        sum += kind == ETRT_POOL_LP ? pow(fabs((double)v), p) : (double)v;
        ++count;
      }
    }
    if (kind == ETRT_POOL_MAX) {
      y[t] = etrt_cvt<T>(best);
      if (indices != NULL) {
        indices[t] =
            plane * in_count + (column_major ? best_column : (best_index < 0 ? 0 : best_index));
      }
      continue;
    }
    double result;
    if (kind == ETRT_POOL_LP) {
      result = pow(sum, 1.0 / p);
    } else {
      if (count_include_pad) {
        /* window positions inside the explicitly padded input */
        count = 1;
        for (int32_t s = 0; s < g.spatial; ++s) {
          int64_t in_window = 0;
          for (int64_t k = 0; k < g.kernel[s]; ++k) {
            int64_t c = origin[s] + k * g.dilation[s];
            if (c >= -g.pad_begin[s] && c < g.in[s] + g.pad_end[s]) ++in_window;
          }
          count *= in_window;
        }
      }
      result = count > 0 ? sum / (double)count : 0.0;
    }
    y[t] = etrt_cvt<T>((M)result);
  }
}

/* MaxPool of a channels-last 2-D input without indices (the stem of convolutional
 * networks): 32-bit index arithmetic, and V neighbouring channels per thread where
 * they allow 16-byte accesses (a stem's 64 half channels are 8 threads a pixel). The
 * first tap inside the input starts each maximum, as above. */
template <typename T, int V>
__global__ void etrt_max_pool_nhwc2d_kernel(const T *x, T *y, int total, int channels,
                                            etrt_conv_geometry g) {
  typedef typename etrt_math<T>::type M;
  const int in_h = (int)g.in[0], in_w = (int)g.in[1], out_h = (int)g.out[0], out_w = (int)g.out[1];
  const int runs = channels / V;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += blockDim.x * gridDim.x) {
    int c = (t % runs) * V, rest = t / runs;
    int ow = rest % out_w;
    rest /= out_w;
    int oh = rest % out_h, n = rest / out_h;
    const T *xn = x + (int64_t)n * in_h * in_w * channels + c;
    int top = oh * (int)g.stride[0] - (int)g.pad_begin[0];
    int left = ow * (int)g.stride[1] - (int)g.pad_begin[1];
    M best[V] = {};
    bool any = false;
    for (int i = 0; i < (int)g.kernel[0]; ++i) {
      int ih = top + i * (int)g.dilation[0];
      if (ih < 0 || ih >= in_h) continue;
      for (int j = 0; j < (int)g.kernel[1]; ++j) {
        int iw = left + j * (int)g.dilation[1];
        if (iw < 0 || iw >= in_w) continue;
        T v[V];
        etrt_cuda_load_run<V>(xn, ((int64_t)ih * in_w + iw) * channels, 1, v);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          M m = etrt_cvt<M>(v[k]);
          if (!any || m > best[k]) best[k] = m;
        }
        any = true;
      }
    }
    T out[V];
#pragma unroll
    for (int k = 0; k < V; ++k) out[k] = etrt_cvt<T>(best[k]);
    etrt_cuda_store_run<V>(y, (int64_t)t * V, out);
  }
}

template <typename T>
static void etrt_max_pool_nhwc2d_start(const T *x, T *y, int64_t total, int channels,
                                       const etrt_conv_geometry &g, cudaStream_t stream) {
  constexpr int W = etrt_cuda_width<T>();
  if (channels % W == 0 && (uintptr_t)x % (W * sizeof(T)) == 0 &&
      (uintptr_t)y % (W * sizeof(T)) == 0) {
    etrt_max_pool_nhwc2d_kernel<T, W>
        <<<etrt_cuda_blocks(total / W, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            x, y, (int)(total / W), channels, g);
  } else {
    etrt_max_pool_nhwc2d_kernel<T, 1>
        <<<etrt_cuda_blocks(total, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            x, y, (int)total, channels, g);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_pool) {
  const etrt_pool_state *state = (const etrt_pool_state *)node->state;
  etrt_tensor x = state->params.channels_last ? etrt_conv_nchw_view(&inputs[0]) : inputs[0];
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_pool(node, &state->params, &x, &g));
  int64_t planes = x.dims[0] * x.dims[1];
  int64_t out_count = etrt_conv_geometry_out_count(&g);
  if (planes == 0 || out_count == 0) return ETRT_OK;
  int64_t *indices =
      state->kind == ETRT_POOL_MAX && node->num_outputs > 1 ? (int64_t *)outputs[1].data : NULL;
  unsigned blocks = etrt_cuda_blocks(planes * out_count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (state->params.channels_last && state->kind == ETRT_POOL_MAX && indices == NULL &&
      g.spatial == 2 && planes * out_count <= INT32_MAX &&
      etrt_conv_geometry_in_count(&g) * x.dims[1] <= INT32_MAX) {
    ETRT_CUDA_FLOAT_SWITCH(
        inputs[0].dtype, T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
        etrt_max_pool_nhwc2d_start<T>((const T *)inputs[0].data, (T *)outputs[0].data,
                                      planes * out_count, (int)x.dims[1], g, stream));
    return etrt_cuda_check(node, "max_pool_nhwc");
  }
  ETRT_CUDA_FLOAT_SWITCH(
      inputs[0].dtype, T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
      etrt_pool_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
          (const T *)inputs[0].data, (T *)outputs[0].data, indices, planes,
          etrt_conv_geometry_in_count(&g), out_count, etrt_conv_geometry_kernel_count(&g), g,
          (int)state->kind, state->params.storage_order == 1, state->params.count_include_pad,
          (double)state->params.lp_p, state->params.channels_last ? x.dims[1] : (int64_t)0));
  return etrt_cuda_check(node, "pool");
}

/* Global pools: a block per plane. */
template <typename T>
__global__ void etrt_global_pool_kernel(const T *x, T *y, int64_t planes, int64_t size, int kind,
                                        double p) {
  typedef typename etrt_math<T>::type M;
  __shared__ double shared[32];
  for (int64_t plane = blockIdx.x; plane < planes; plane += gridDim.x) {
    const T *xp = x + plane * size;
    double acc;
    if (kind == ETRT_POOL_MAX) {
      /* the CPU kernel starts from the first element and keeps strict increases */
      acc = size > 0 ? (double)etrt_cvt<M>(xp[0]) : 0.0;
      for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
        double v = (double)etrt_cvt<M>(xp[i]);
        if (v > acc) acc = v;
      }
      acc = etrt_cuda_block_reduce(acc, (double)-INFINITY, etrt_cuda_max_op(), shared);
    } else {
      acc = 0.0;
      for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
        double v = (double)etrt_cvt<M>(xp[i]);
        acc += kind == ETRT_POOL_LP ? pow(fabs(v), p) : v;
      }
      acc = etrt_cuda_block_reduce(acc, 0.0, etrt_cuda_sum_op(), shared);
      acc = kind == ETRT_POOL_LP ? pow(acc, 1.0 / p) : (size > 0 ? acc / (double)size : 0.0);
    }
    if (threadIdx.x == 0) y[plane] = etrt_cvt<T>((M)acc);
  }
}

/* Global pools of channels-last X [N, positions, C]: a thread per (image, channel), the
 * threads of a warp on consecutive channels, so each step of the walk over the positions
 * reads contiguous memory. */
template <typename T>
__global__ void etrt_global_pool_nhwc_kernel(const T *x, T *y, int64_t batch, int64_t size,
                                             int64_t channels, int kind, double p) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(t, batch * channels) {
    int64_t c = t % channels, n = t / channels;
    const T *xp = x + n * size * channels + c;
    double acc = 0.0;
    for (int64_t i = 0; i < size; ++i) {
      double v = (double)etrt_cvt<M>(xp[i * channels]);
      if (kind == ETRT_POOL_MAX)
        acc = i == 0 || v > acc ? v : acc;
      else
        acc += kind == ETRT_POOL_LP ? pow(fabs(v), p) : v;
    }
    if (kind == ETRT_POOL_LP) acc = pow(acc, 1.0 / p);
    if (kind == ETRT_POOL_AVERAGE) acc = size > 0 ? acc / (double)size : 0.0;
    y[t] = etrt_cvt<T>((M)acc);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_global_pool) {
  const etrt_pool_state *state = (const etrt_pool_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  if (state->params.channels_last) {
    int64_t batch = x->dims[0], channels = x->dims[x->rank - 1];
    int64_t size = etrt_cuda_span(x, 1, x->rank - 1);
    if (batch * channels == 0) return ETRT_OK;
    ETRT_CUDA_FLOAT_SWITCH(
        x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
        etrt_global_pool_nhwc_kernel<T>
        <<<etrt_cuda_blocks(batch * channels, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
           etrt_cuda_stream(launch)>>>((const T *)x->data, (T *)outputs[0].data, batch, size,
                                       channels, (int)state->kind, (double)state->params.lp_p));
    return etrt_cuda_check(node, "global_pool_nhwc");
  }
  int64_t planes = x->dims[0] * x->dims[1], size = etrt_cuda_span(x, 2, x->rank);
  if (planes == 0) return ETRT_OK;
  unsigned blocks = planes > 65535 ? 65535u : (unsigned)planes;
  int threads = size >= 256 ? 256 : 32;
  cudaStream_t stream = etrt_cuda_stream(launch);
  ETRT_CUDA_FLOAT_SWITCH(x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
                         etrt_global_pool_kernel<T><<<blocks, threads, 0, stream>>>(
                             (const T *)x->data, (T *)outputs[0].data, planes, size,
                             (int)state->kind, (double)state->params.lp_p));
  return etrt_cuda_check(node, "global_pool");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_pool[] = {
    {"MaxPool", etrt_cuda_pool, NULL},
    {"AveragePool", etrt_cuda_pool, NULL},
    {"LpPool", etrt_cuda_pool, NULL},
    {"GlobalMaxPool", etrt_cuda_global_pool, NULL},
    {"GlobalAveragePool", etrt_cuda_global_pool, NULL},
    {"GlobalLpPool", etrt_cuda_global_pool, NULL},
    {NULL, NULL, NULL},
};
