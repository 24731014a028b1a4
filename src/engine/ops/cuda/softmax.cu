/* Softmax, LogSoftmax and Hardmax on the GPU (ops/softmax.h). The layout (outer
 * groups of n elements spaced inner apart) comes from the shared etrt_softmax_layout.
 * Contiguous groups (inner = 1) get a block each; strided groups a thread each, so
 * that neighbouring threads read neighbouring elements. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/softmax.h"
}

template <typename T>
__global__ void etrt_softmax_rows_kernel(const T *x, T *y, int64_t rows, int64_t n, int log_mode) {
  typedef typename etrt_math<T>::type M;
  __shared__ M shared[32];
  const M lowest = (M)-INFINITY;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * n;
    T *yr = y + row * n;
    M m = lowest;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      M v = etrt_cvt<M>(xr[k]);
      if (v > m) m = v;
    }
    m = etrt_cuda_block_reduce(m, lowest, etrt_cuda_max_op(), shared);
    M sum = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) sum += exp(etrt_cvt<M>(xr[k]) - m);
    sum = etrt_cuda_block_reduce(sum, M(0), etrt_cuda_sum_op(), shared);
    if (log_mode) {
      M shift = m + log(sum);
      for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        yr[k] = etrt_cvt<T>(etrt_cvt<M>(xr[k]) - shift);
      }
    } else {
      M scale = M(1) / sum;
      for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        yr[k] = etrt_cvt<T>(exp(etrt_cvt<M>(xr[k]) - m) * scale);
      }
    }
  }
}

/* Rows of at most 1024 elements: one warp per row, read once into registers. */
template <typename T, int V, int R>
__global__ void etrt_softmax_warp_kernel(const T *x, T *y, int64_t rows, int n, int log_mode) {
  typedef typename etrt_math<T>::type M;
  int lane;
  int64_t row = etrt_cuda_warp_row(&lane);
  if (row >= rows) return;
  const T *xr = x + row * n;
  T *yr = y + row * n;
  const int chunks = n / V;
  M v[R][V];
  etrt_cuda_row_load<T, V, R>(xr, lane, chunks, v);
  M m = (M)-INFINITY;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r * 32 + lane < chunks) {
#pragma unroll
      for (int k = 0; k < V; ++k) m = etrt_cuda_max_op()(m, v[r][k]);
    }
  }
  m = etrt_cuda_warp_reduce(m, etrt_cuda_max_op());
  M sum = 0;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r * 32 + lane < chunks) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        M e = exp(v[r][k] - m);
        sum += e;
        if (!log_mode) v[r][k] = e;
      }
    }
  }
  sum = etrt_cuda_warp_reduce(sum, etrt_cuda_sum_op());
  const M shift = m + log(sum), scale = M(1) / sum;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    int c = r * 32 + lane;
    if (c < chunks) {
      T out[V];
#pragma unroll
      for (int k = 0; k < V; ++k)
        out[k] = etrt_cvt<T>(log_mode ? v[r][k] - shift : v[r][k] * scale);
      etrt_cuda_store_run<V>(yr, (int64_t)c * V, out);
    }
  }
}

template <typename T>
struct etrt_softmax_warp_launch {
  const T *x;
  T *y;
  int64_t rows;
  int n, log_mode;
  cudaStream_t stream;
  template <int V, int R>
  void run() const {
    etrt_softmax_warp_kernel<T, V, R>
        <<<etrt_cuda_row_blocks(rows), ETRT_CUDA_ROW_THREADS, 0, stream>>>(x, y, rows, n, log_mode);
  }
};

template <typename T>
static bool etrt_softmax_warp_rows(const void *x, void *y, int64_t rows, int64_t n, int log_mode,
                                   cudaStream_t stream) {
  const void *pointers[2] = {x, y};
  etrt_cuda_row_plan plan;
  if (rows > ((int64_t)1 << 36) || !etrt_cuda_row_plan_of<T>(n, pointers, 2, &plan)) return false;
  etrt_softmax_warp_launch<T> launch = {(const T *)x, (T *)y, rows, (int)n, log_mode, stream};
  etrt_cuda_row_dispatch<T>(plan, launch);
  return true;
}

template <typename T>
__global__ void etrt_softmax_columns_kernel(const T *x, T *y, int64_t outer, int64_t n,
                                            int64_t inner, int kind) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(t, outer * inner) {
    int64_t o = t / inner, i = t % inner;
    const T *xg = x + o * n * inner + i;
    T *yg = y + o * n * inner + i;
    M m = etrt_cvt<M>(xg[0]);
    int64_t arg = 0; /* the first maximum, as Hardmax specifies */
    for (int64_t k = 1; k < n; ++k) {
      M v = etrt_cvt<M>(xg[k * inner]);
      if (v > m) {
        m = v;
        arg = k;
      }
    }
    if (kind == ETRT_SOFTMAX_HARD) {
      for (int64_t k = 0; k < n; ++k) yg[k * inner] = etrt_cvt<T>(M(k == arg ? 1 : 0));
      continue;
    }
    M sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += exp(etrt_cvt<M>(xg[k * inner]) - m);
    if (kind == ETRT_SOFTMAX_LOG) {
      M shift = m + log(sum);
      for (int64_t k = 0; k < n; ++k)
        yg[k * inner] = etrt_cvt<T>(etrt_cvt<M>(xg[k * inner]) - shift);
    } else {
      M scale = M(1) / sum;
      for (int64_t k = 0; k < n; ++k) {
        yg[k * inner] = etrt_cvt<T>(exp(etrt_cvt<M>(xg[k * inner]) - m) * scale);
      }
    }
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_softmax) {
  const etrt_softmax_state *s = (const etrt_softmax_state *)node->state;
  int64_t outer, n, inner;
  ETRT_RETURN_IF_ERROR(etrt_softmax_layout(node, s, &inputs[0], &outer, &n, &inner));
  if (outer == 0 || n == 0 || inner == 0) return ETRT_OK;
  cudaStream_t stream = etrt_cuda_stream(launch);
  const void *x = inputs[0].data;
  void *y = outputs[0].data;
  if (inner == 1 && s->kind != ETRT_SOFTMAX_HARD) {
    bool done = false;
    ETRT_CUDA_FLOAT_SWITCH(
        inputs[0].dtype, T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
        done = etrt_softmax_warp_rows<T>(x, y, outer, n, s->kind == ETRT_SOFTMAX_LOG, stream));
    if (done) return etrt_cuda_check(node, "softmax_warp");
    int threads = n >= 256 ? 256 : (int)((n + 31) / 32 * 32);
    unsigned blocks = outer > 65535 ? 65535u : (unsigned)outer;
    int log_mode = s->kind == ETRT_SOFTMAX_LOG;
    ETRT_CUDA_FLOAT_SWITCH(inputs[0].dtype, T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
                           etrt_softmax_rows_kernel<T><<<blocks, threads, 0, stream>>>(
                               (const T *)x, (T *)y, outer, n, log_mode));
    return etrt_cuda_check(node, "softmax_rows");
  }
  unsigned blocks = etrt_cuda_blocks(outer * inner, ETRT_CUDA_THREADS);
  ETRT_CUDA_FLOAT_SWITCH(inputs[0].dtype, T, return etrt_cuda_no_kernel(node, inputs[0].dtype),
                         etrt_softmax_columns_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                             (const T *)x, (T *)y, outer, n, inner, (int)s->kind));
  return etrt_cuda_check(node, "softmax_columns");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_softmax[] = {
    {"Softmax", etrt_cuda_softmax, NULL},
    {"LogSoftmax", etrt_cuda_softmax, NULL},
    {"Hardmax", etrt_cuda_softmax, NULL},
    {NULL, NULL, NULL},
};
