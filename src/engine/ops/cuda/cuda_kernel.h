/* What every CUDA kernel file shares: the launch check, grid sizing, element-type
 * conversions, dtype dispatch and the broadcast index that launchers compute on the
 * host and pass to kernels by value. Included by .cu files only. */
#ifndef ETRT_ENGINE_OPS_CUDA_CUDA_KERNEL_H
#define ETRT_ENGINE_OPS_CUDA_CUDA_KERNEL_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "base/status.h"
#include "engine/op.h"
#include "engine/ops/shape_util.h"
}

#define ETRT_CUDA_THREADS 256

/* Checks the launch that was just made; on failure the message names the op, the
 * node and the kernel. */
extern "C" etrt_status etrt_cuda_check(const etrt_node *node, const char *kernel);

/* Blocks for a grid-stride loop over n items (at least 1, capped: the loop covers
 * the rest). */
static inline unsigned etrt_cuda_blocks(int64_t n, int threads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks < 1) blocks = 1;
  if (blocks > (1 << 20)) blocks = 1 << 20;
  return (unsigned)blocks;
}

/* A node's name for messages ("" when it has none). */
static inline const char *etrt_cuda_name(const etrt_node *node) {
  return node->name != NULL ? node->name : "";
}

static inline cudaStream_t etrt_cuda_stream(const etrt_cuda_launch *launch) {
  return (cudaStream_t)launch->stream;
}

#define ETRT_CUDA_LOOP(i, n)                                                       \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);       \
       i += (int64_t)blockDim.x * gridDim.x)

/* Element conversions: half types compute in float. */
template <typename T> struct etrt_math { typedef T type; };
template <> struct etrt_math<__half> { typedef float type; };
template <> struct etrt_math<__nv_bfloat16> { typedef float type; };

template <typename To, typename From> __device__ __forceinline__ To etrt_cvt(From v) {
  return (To)v;
}
template <> __device__ __forceinline__ float etrt_cvt<float, __half>(__half v) {
  return __half2float(v);
}
template <> __device__ __forceinline__ __half etrt_cvt<__half, float>(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ float etrt_cvt<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 etrt_cvt<__nv_bfloat16, float>(float v) {
  return __float2bfloat16_rn(v);
}

/* Runs the body (the last arguments) with T bound to the C type of a floating dtype;
 * other dtypes run ELSE. */
#define ETRT_CUDA_FLOAT_SWITCH(dtype, T, ELSE, ...) \
  switch (dtype) {                                  \
    case ETRT_DTYPE_FLOAT32: {                      \
      typedef float T;                              \
      __VA_ARGS__;                                  \
    } break;                                        \
    case ETRT_DTYPE_FLOAT16: {                      \
      typedef __half T;                             \
      __VA_ARGS__;                                  \
    } break;                                        \
    case ETRT_DTYPE_BFLOAT16: {                     \
      typedef __nv_bfloat16 T;                      \
      __VA_ARGS__;                                  \
    } break;                                        \
    case ETRT_DTYPE_FLOAT64: {                      \
      typedef double T;                             \
      __VA_ARGS__;                                  \
    } break;                                        \
    default:                                        \
      ELSE;                                         \
  }

/* The numeric dtypes the arithmetic kernels take: the floats and the common
 * integers. */
#define ETRT_CUDA_NUMERIC_SWITCH(dtype, T, ELSE, ...)                               \
  switch (dtype) {                                                                 \
    case ETRT_DTYPE_INT8: {                                                        \
      typedef int8_t T;                                                            \
      __VA_ARGS__;                                                                 \
    } break;                                                                       \
    case ETRT_DTYPE_UINT8: {                                                       \
      typedef uint8_t T;                                                           \
      __VA_ARGS__;                                                                 \
    } break;                                                                       \
    case ETRT_DTYPE_INT32: {                                                       \
      typedef int32_t T;                                                           \
      __VA_ARGS__;                                                                 \
    } break;                                                                       \
    case ETRT_DTYPE_INT64: {                                                       \
      typedef int64_t T;                                                           \
      __VA_ARGS__;                                                                 \
    } break;                                                                       \
    default:                                                                       \
      ETRT_CUDA_FLOAT_SWITCH(dtype, T, ELSE, __VA_ARGS__)                          \
  }

static inline int etrt_cuda_is_numeric(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_INT8 || dtype == ETRT_DTYPE_UINT8 || dtype == ETRT_DTYPE_INT32 ||
         dtype == ETRT_DTYPE_INT64 || dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT16 ||
         dtype == ETRT_DTYPE_BFLOAT16 || dtype == ETRT_DTYPE_FLOAT64;
}

/* Runs the body with T bound to an unsigned type of the element size, for kernels
 * that only move elements. */
#define ETRT_CUDA_BYTES_SWITCH(size, T, ELSE, ...) \
  switch (size) {                                  \
    case 1: {                                      \
      typedef uint8_t T;                           \
      __VA_ARGS__;                                 \
    } break;                                       \
    case 2: {                                      \
      typedef uint16_t T;                          \
      __VA_ARGS__;                                 \
    } break;                                       \
    case 4: {                                      \
      typedef uint32_t T;                          \
      __VA_ARGS__;                                 \
    } break;                                       \
    case 8: {                                      \
      typedef uint64_t T;                          \
      __VA_ARGS__;                                 \
    } break;                                       \
    default:                                       \
      ELSE;                                        \
  }

static inline int etrt_cuda_is_float(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT16 ||
         dtype == ETRT_DTYPE_BFLOAT16 || dtype == ETRT_DTYPE_FLOAT64;
}

/* Copies `in` broadcast (numpy rules) into `out`, any dtype of the same size (used
 * by Expand, and to preload a bias before a product with beta = 1). */
etrt_status etrt_cuda_broadcast_copy(const etrt_node *node, const etrt_tensor *in,
                                     etrt_tensor *out, cudaStream_t stream);

/* The element offsets, in the first N operands of an iteration plan (shape_util.h:
 * launchers build it on the host and pass it by value), of output element i (the
 * output is contiguous). */
template <int N>
__device__ __forceinline__ void etrt_cuda_offsets(const etrt_broadcast_iter &it, int64_t i,
                                                  int64_t *off) {
  if (it.rank == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * it.strides[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = it.rank - 1; d >= 0; --d) {
    int64_t dim = it.dims[d];
    int64_t c = i % dim;
    i /= dim;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += c * it.strides[k][d];
  }
}

/* A normalized axis (negative counts from the end); -1 when out of range. */
static inline int32_t etrt_cuda_axis(int64_t axis, int32_t rank) {
  if (axis < 0) axis += rank;
  return (axis < 0 || axis >= rank) ? -1 : (int32_t)axis;
}

/* Product of dims[begin, end). */
static inline int64_t etrt_cuda_span(const etrt_tensor *t, int32_t begin, int32_t end) {
  int64_t n = 1;
  for (int32_t d = begin; d < end; ++d) n *= t->dims[d];
  return n;
}

/* Combiners for the reductions below. Max and min let NaN win, as NumPy does. */
struct etrt_cuda_sum_op {
  template <typename M> __device__ __forceinline__ M operator()(M a, M b) const { return a + b; }
};
struct etrt_cuda_prod_op {
  template <typename M> __device__ __forceinline__ M operator()(M a, M b) const { return a * b; }
};
struct etrt_cuda_max_op {
  template <typename M> __device__ __forceinline__ M operator()(M a, M b) const {
    return (a > b || a != a) ? a : b;
  }
};
struct etrt_cuda_min_op {
  template <typename M> __device__ __forceinline__ M operator()(M a, M b) const {
    return (a < b || a != a) ? a : b;
  }
};

/* Warp-wide reduction: every lane gets the result. */
template <typename M, typename F> __device__ __forceinline__ M etrt_cuda_warp_reduce(M v, F f) {
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* Block-wide reduction: every thread gets the result. `shared` holds 32 values;
 * every thread of the block must call it. */
template <typename M, typename F>
__device__ __forceinline__ M etrt_cuda_block_reduce(M v, M identity, F f, M *shared) {
  v = etrt_cuda_warp_reduce(v, f);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); /* shared may still be read from a previous call */
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? shared[lane] : identity;
  return etrt_cuda_warp_reduce(v, f);
}

#endif
