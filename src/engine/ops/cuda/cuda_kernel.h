/* What every CUDA kernel file shares: the launch check, grid sizing, element-type
 * conversions, dtype dispatch and the broadcast index that launchers compute on the
 * host and pass to kernels by value. Included by .cu files only. */
#ifndef ETRT_ENGINE_OPS_CUDA_CUDA_KERNEL_H
#define ETRT_ENGINE_OPS_CUDA_CUDA_KERNEL_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "base/status.h"
#include "engine/op.h"
#include "engine/ops/shape_util.h"
}

#define ETRT_CUDA_THREADS 256

/* Checks the launch that was just made; on failure the message names the op, the
 * node and the kernel. */
extern "C" etrt_status etrt_cuda_check(const etrt_node *node, const char *kernel);

/* Refuses a dtype the op has no CUDA kernel for, naming the op and the node. */
extern "C" etrt_status etrt_cuda_no_kernel(const etrt_node *node, etrt_dtype dtype);

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

/* Records that node `node` met an out-of-range index (the first such node of the
 * stream wins: later nodes run after it). The executor turns it into an execute
 * error naming the node and op (executor.h). */
__device__ __forceinline__ void etrt_cuda_fault(uint32_t *fault, uint32_t node) {
  if (fault != NULL) atomicCAS(fault, 0u, node + 1u);
}

#define ETRT_CUDA_LOOP(i, n)                                                \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (int64_t)blockDim.x * gridDim.x)

/* Element conversions: half types compute in float. */
template <typename T>
struct etrt_math {
  typedef T type;
};
template <>
struct etrt_math<__half> {
  typedef float type;
};
template <>
struct etrt_math<__nv_bfloat16> {
  typedef float type;
};

template <typename To, typename From>
__device__ __forceinline__ To etrt_cvt(From v) {
  return (To)v;
}
template <>
__device__ __forceinline__ float etrt_cvt<float, __half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ __half etrt_cvt<__half, float>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ float etrt_cvt<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 etrt_cvt<__nv_bfloat16, float>(float v) {
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
#define ETRT_CUDA_NUMERIC_SWITCH(dtype, T, ELSE, ...)     \
  switch (dtype) {                                        \
    case ETRT_DTYPE_INT8: {                               \
      typedef int8_t T;                                   \
      __VA_ARGS__;                                        \
    } break;                                              \
    case ETRT_DTYPE_UINT8: {                              \
      typedef uint8_t T;                                  \
      __VA_ARGS__;                                        \
    } break;                                              \
    case ETRT_DTYPE_INT32: {                              \
      typedef int32_t T;                                  \
      __VA_ARGS__;                                        \
    } break;                                              \
    case ETRT_DTYPE_INT64: {                              \
      typedef int64_t T;                                  \
      __VA_ARGS__;                                        \
    } break;                                              \
    default:                                              \
      ETRT_CUDA_FLOAT_SWITCH(dtype, T, ELSE, __VA_ARGS__) \
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

/* Copies the elements of `in` that plan `it` (one operand) walks into the contiguous
 * `out`, elements of `elem_size` bytes: a broadcast, or a strided view (layout.cu). */
etrt_status etrt_cuda_plan_copy(const etrt_node *node, const etrt_broadcast_iter &it,
                                const void *in, void *out, size_t elem_size, cudaStream_t stream);

/* Copies `in` broadcast (numpy rules) into `out`, any dtype of the same size (used
 * by Expand, and to preload a bias before a product with beta = 1). */
etrt_status etrt_cuda_broadcast_copy(const etrt_node *node, const etrt_tensor *in, etrt_tensor *out,
                                     cudaStream_t stream);

/* The element offsets, in the first N operands of an iteration plan (shape_util.h:
 * launchers build it on the host and pass it by value), of output element i (the
 * output is contiguous). I is int64_t, or int32_t where etrt_broadcast_iter_fits_int32
 * said so. Offsets are signed: a view with negative strides (a Slice stepping
 * backwards) reads before its base. */
template <int N, typename I>
__device__ __forceinline__ void etrt_cuda_offsets(const etrt_broadcast_iter &it, I i, I *off) {
  if (it.rank == 1) {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = i * (I)it.strides[k][0];
    return;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = it.rank - 1; d >= 0; --d) {
    I dim = (I)it.dims[d];
    I c = i % dim;
    i /= dim;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += c * (I)it.strides[k][d];
  }
}

#define ETRT_CUDA_LOOP_AS(I, i, n) \
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (I)blockDim.x * gridDim.x)

/* Runs of V elements, moved with one 16-byte (or V * sizeof(T)-byte) access. */
template <typename T, int V>
struct alignas(sizeof(T) * V) etrt_cuda_pack {
  T v[V];
};

/* Elements of T a thread takes at once in the broadcast kernels: 16 bytes. */
template <typename T>
constexpr int etrt_cuda_width() {
  return sizeof(T) >= 16 ? 1 : (int)(16 / sizeof(T));
}

/* V elements of an operand from `off` on: contiguous (a wide load), or one element
 * repeated where the operand is constant along the innermost axis (step 0); the
 * launcher checked with etrt_broadcast_iter_runs_of that no other case arises. */
template <int V, typename T, typename I>
__device__ __forceinline__ void etrt_cuda_load_run(const T *p, I off, int64_t step, T (&v)[V]) {
  if constexpr (V == 1) {
    v[0] = p[off];
  } else if (step == 0) {
    T x = p[off];
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = x;
  } else {
    etrt_cuda_pack<T, V> pack = *reinterpret_cast<const etrt_cuda_pack<T, V> *>(p + off);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = pack.v[k];
  }
}

template <int V, typename T, typename I>
__device__ __forceinline__ void etrt_cuda_store_run(T *p, I i, const T (&v)[V]) {
  if constexpr (V == 1) {
    p[i] = v[0];
  } else {
    etrt_cuda_pack<T, V> pack;
#pragma unroll
    for (int k = 0; k < V; ++k) pack.v[k] = v[k];
    *reinterpret_cast<etrt_cuda_pack<T, V> *>(p + i) = pack;
  }
}

/* Launches a broadcast kernel over a plan's output: V = etrt_cuda_width<T>() elements
 * per thread where `runs_ok` (etrt_broadcast_iter_runs_of), 32-bit indices where the
 * plan fits them, one element and 64-bit indices otherwise. KERNEL is a macro naming the
 * kernel for (V, I); the kernel takes the arguments given, then (I runs, plan). */
#define ETRT_CUDA_WALK_LAUNCH(it, T, runs_ok, stream, KERNEL, ...)                             \
  do {                                                                                         \
    constexpr int etrt_width_ = etrt_cuda_width<T>();                                          \
    int64_t etrt_n_ = (it).numel;                                                              \
    if (!etrt_broadcast_iter_fits_int32(&(it))) {                                              \
      KERNEL(1, int64_t)<<<etrt_cuda_blocks(etrt_n_, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, \
                           stream>>>(__VA_ARGS__, etrt_n_, it);                                \
    } else if (runs_ok) {                                                                      \
      int64_t etrt_runs_ = etrt_n_ / etrt_width_;                                              \
      KERNEL(etrt_width_, int32_t)<<<etrt_cuda_blocks(etrt_runs_, ETRT_CUDA_THREADS),          \
                                     ETRT_CUDA_THREADS, 0, stream>>>(__VA_ARGS__,              \
                                                                     (int32_t)etrt_runs_, it); \
    } else {                                                                                   \
      KERNEL(1, int32_t)<<<etrt_cuda_blocks(etrt_n_, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, \
                           stream>>>(__VA_ARGS__, (int32_t)etrt_n_, it);                       \
    }                                                                                          \
  } while (0)

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
  template <typename M>
  __device__ __forceinline__ M operator()(M a, M b) const {
    return a + b;
  }
};
struct etrt_cuda_prod_op {
  template <typename M>
  __device__ __forceinline__ M operator()(M a, M b) const {
    return a * b;
  }
};
struct etrt_cuda_max_op {
  template <typename M>
  __device__ __forceinline__ M operator()(M a, M b) const {
    return (a > b || a != a) ? a : b;
  }
};
struct etrt_cuda_min_op {
  template <typename M>
  __device__ __forceinline__ M operator()(M a, M b) const {
    return (a < b || a != a) ? a : b;
  }
};

/* Warp-wide reduction: every lane gets the result. */
template <typename M, typename F>
__device__ __forceinline__ M etrt_cuda_warp_reduce(M v, F f) {
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* ---- rows held in registers, one warp per row ------------------------------------ */

/* How a row of n elements is spread over a warp's registers: V elements per access
 * (etrt_cuda_width<T>() where n and the pointers allow 16-byte accesses, else 1) and R
 * accesses per lane, a power of two. */
typedef struct etrt_cuda_row_plan {
  int v, reps;
} etrt_cuda_row_plan;

/* Threads of the row kernels' blocks: four warps, four rows. */
#define ETRT_CUDA_ROW_THREADS 128

/* False when a row needs more than 32 values per lane (the caller keeps its
 * block-per-row kernel). `pointers` are the row arrays' bases (NULL ones ignored). */
template <typename T>
static inline bool etrt_cuda_row_plan_of(int64_t n, const void *const *pointers, int count,
                                         etrt_cuda_row_plan *plan) {
  constexpr int W = etrt_cuda_width<T>();
  if (n < 1 || n > 32 * 32) return false;
  bool wide = W > 1 && n % W == 0;
  for (int k = 0; k < count && wide; ++k)
    wide = pointers[k] == NULL || (uintptr_t)pointers[k] % (W * sizeof(T)) == 0;
  int v = wide ? W : 1;
  int64_t per_lane = (n / v + 31) / 32;
  int reps = 1;
  while (reps < per_lane) reps *= 2;
  if (reps * v > 32) return false;
  plan->v = v;
  plan->reps = reps;
  return true;
}

/* Calls launch.run<V, R>() for the plan; `launch` is a struct with that template member. */
template <int V, typename Launch>
static inline void etrt_cuda_row_dispatch_reps(int reps, const Launch &launch) {
  switch (reps) {
    case 1:
      launch.template run<V, 1>();
      break;
    case 2:
      if constexpr (V * 2 <= 32) launch.template run<V, 2>();
      break;
    case 4:
      if constexpr (V * 4 <= 32) launch.template run<V, 4>();
      break;
    case 8:
      if constexpr (V * 8 <= 32) launch.template run<V, 8>();
      break;
    case 16:
      if constexpr (V * 16 <= 32) launch.template run<V, 16>();
      break;
    default:
      if constexpr (V * 32 <= 32) launch.template run<V, 32>();
      break;
  }
}

template <typename T, typename Launch>
static inline void etrt_cuda_row_dispatch(const etrt_cuda_row_plan &plan, const Launch &launch) {
  constexpr int W = etrt_cuda_width<T>();
  if (W > 1 && plan.v == W)
    etrt_cuda_row_dispatch_reps<W>(plan.reps, launch);
  else
    etrt_cuda_row_dispatch_reps<1>(plan.reps, launch);
}

/* Blocks of ETRT_CUDA_ROW_THREADS for `rows` rows. */
static inline unsigned etrt_cuda_row_blocks(int64_t rows) {
  int64_t per_block = ETRT_CUDA_ROW_THREADS / 32;
  return (unsigned)((rows + per_block - 1) / per_block);
}

/* Reads a row's `chunks` runs of V elements into the lane's registers, converted to M;
 * entries past the row are left as they are. */
template <typename T, int V, int R, typename M>
__device__ __forceinline__ void etrt_cuda_row_load(const T *row, int lane, int chunks,
                                                   M (&v)[R][V]) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    int c = r * 32 + lane;
    if (c < chunks) {
      T t[V];
      etrt_cuda_load_run<V>(row, (int64_t)c * V, 1, t);
#pragma unroll
      for (int k = 0; k < V; ++k) v[r][k] = etrt_cvt<M>(t[k]);
    }
  }
}

/* The calling warp's row, and its lane; the row may be past the last (the warp exits). */
__device__ __forceinline__ int64_t etrt_cuda_warp_row(int *lane) {
  *lane = (int)(threadIdx.x & 31);
  return (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
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

/* ---- elements of any numeric or bool dtype -------------------------------------- */

/* A value on its way between types: floats as double, integers as their 64-bit
 * two's complement bits (so integer to integer conversions wrap as C's do). */
typedef struct etrt_cast_value {
  int is_float;
  double f;
  uint64_t bits;
} etrt_cast_value;

__device__ __forceinline__ etrt_cast_value etrt_cast_load(const void *p, int64_t i, int dtype) {
  etrt_cast_value v = {0, 0.0, 0};
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      v.is_float = 1;
      v.f = ((const float *)p)[i];
      break;
    case ETRT_DTYPE_FLOAT64:
      v.is_float = 1;
      v.f = ((const double *)p)[i];
      break;
    case ETRT_DTYPE_FLOAT16:
      v.is_float = 1;
      v.f = __half2float(((const __half *)p)[i]);
      break;
    case ETRT_DTYPE_BFLOAT16:
      v.is_float = 1;
      v.f = __bfloat162float(((const __nv_bfloat16 *)p)[i]);
      break;
    case ETRT_DTYPE_INT8:
      v.bits = (uint64_t)(int64_t)((const int8_t *)p)[i];
      break;
    case ETRT_DTYPE_INT16:
      v.bits = (uint64_t)(int64_t)((const int16_t *)p)[i];
      break;
    case ETRT_DTYPE_INT32:
      v.bits = (uint64_t)(int64_t)((const int32_t *)p)[i];
      break;
    case ETRT_DTYPE_INT64:
      v.bits = (uint64_t)((const int64_t *)p)[i];
      break;
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_BOOL:
      v.bits = ((const uint8_t *)p)[i];
      break;
    case ETRT_DTYPE_UINT16:
      v.bits = ((const uint16_t *)p)[i];
      break;
    case ETRT_DTYPE_UINT32:
      v.bits = ((const uint32_t *)p)[i];
      break;
    case ETRT_DTYPE_UINT64:
      v.bits = ((const uint64_t *)p)[i];
      break;
    default:
      break;
  }
  return v;
}

/* A float truncated toward zero and saturated to [lo, hi]; NaN gives 0. */
__device__ __forceinline__ double etrt_cast_saturate(double f, double lo, double hi) {
  if (f != f) return 0.0;
  f = trunc(f);
  return f < lo ? lo : f > hi ? hi : f;
}

/* Integers are signed unless `unsigned_source`; a float or integer as double. */
__device__ __forceinline__ double etrt_cast_as_double(const etrt_cast_value &v,
                                                      int unsigned_source) {
  if (v.is_float) return v.f;
  return unsigned_source ? (double)v.bits : (double)(int64_t)v.bits;
}

#define ETRT_CAST_INT(CT, LO, HI) \
  ((CT *)q)[i] = v.is_float ? (CT)etrt_cast_saturate(v.f, (double)(LO), (double)(HI)) : (CT)v.bits

__device__ __forceinline__ void etrt_cast_store(void *q, int64_t i, int dtype,
                                                const etrt_cast_value &v, int unsigned_source) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      ((float *)q)[i] = (float)etrt_cast_as_double(v, unsigned_source);
      break;
    case ETRT_DTYPE_FLOAT64:
      ((double *)q)[i] = etrt_cast_as_double(v, unsigned_source);
      break;
    case ETRT_DTYPE_FLOAT16:
      ((__half *)q)[i] = __double2half(etrt_cast_as_double(v, unsigned_source));
      break;
    case ETRT_DTYPE_BFLOAT16:
      ((__nv_bfloat16 *)q)[i] = __double2bfloat16(etrt_cast_as_double(v, unsigned_source));
      break;
    case ETRT_DTYPE_INT8:
      ETRT_CAST_INT(int8_t, INT8_MIN, INT8_MAX);
      break;
    case ETRT_DTYPE_INT16:
      ETRT_CAST_INT(int16_t, INT16_MIN, INT16_MAX);
      break;
    case ETRT_DTYPE_INT32:
      ETRT_CAST_INT(int32_t, INT32_MIN, INT32_MAX);
      break;
    case ETRT_DTYPE_INT64:
      /* 2^63 is the first double above INT64_MAX */
      ((int64_t *)q)[i] = v.is_float ? (v.f != v.f                     ? 0
                                        : v.f >= 9223372036854775808.0 ? INT64_MAX
                                        : v.f < -9223372036854775808.0 ? INT64_MIN
                                                                       : (int64_t)v.f)
                                     : (int64_t)v.bits;
      break;
    case ETRT_DTYPE_UINT8:
      ETRT_CAST_INT(uint8_t, 0, UINT8_MAX);
      break;
    case ETRT_DTYPE_UINT16:
      ETRT_CAST_INT(uint16_t, 0, UINT16_MAX);
      break;
    case ETRT_DTYPE_UINT32:
      ETRT_CAST_INT(uint32_t, 0, UINT32_MAX);
      break;
    case ETRT_DTYPE_UINT64:
      ((uint64_t *)q)[i] = v.is_float ? (v.f != v.f || v.f <= 0.0        ? 0
                                         : v.f >= 18446744073709551616.0 ? UINT64_MAX
                                                                         : (uint64_t)v.f)
                                      : v.bits;
      break;
    case ETRT_DTYPE_BOOL:
      ((uint8_t *)q)[i] = v.is_float ? (v.f != 0.0) : (v.bits != 0);
      break;
    default:
      break;
  }
}

/* An element as double and back, for kernels where a per-element dtype switch costs
 * nothing that matters (Pow of mixed dtypes); integers are stored truncated toward
 * zero and saturated, as Cast does. */
__device__ __forceinline__ double etrt_cuda_load_double(const void *p, int64_t i, int dtype) {
  etrt_cast_value v = etrt_cast_load(p, i, dtype);
  int unsigned_source = dtype == ETRT_DTYPE_UINT8 || dtype == ETRT_DTYPE_UINT16 ||
                        dtype == ETRT_DTYPE_UINT32 || dtype == ETRT_DTYPE_UINT64 ||
                        dtype == ETRT_DTYPE_BOOL;
  return etrt_cast_as_double(v, unsigned_source);
}

__device__ __forceinline__ void etrt_cuda_store_double(void *q, int64_t i, int dtype, double f) {
  etrt_cast_value v = {1, f, 0};
  etrt_cast_store(q, i, dtype, v, 0);
}

/* ---- host values ------------------------------------------------------------------ */

/* Copies of a node's input tensors for the shared C helpers that read value inputs
 * on the host (etrt_op_input_host falls back to `data`, which is device memory
 * here): `data` is cleared, so an input whose values are not known on the host
 * reads as absent rather than as a device address. */
static inline void etrt_cuda_host_inputs(const etrt_tensor *inputs, uint32_t count,
                                         etrt_tensor *out) {
  for (uint32_t i = 0; i < count; ++i) {
    out[i] = inputs[i];
    out[i].data = NULL;
  }
}

/* ---- tables computed on the host --------------------------------------------------- */

/* Bytes of a table that one launch carries to the device as a kernel argument (CUDA
 * 12.1 and later take up to 32764 bytes of arguments on Volta and later). Arguments
 * are captured when the launch is enqueued, so the upload needs no pinned buffer,
 * no host synchronisation and no allocation, and works under stream capture. */
#define ETRT_CUDA_UPLOAD_BYTES 16384

typedef struct etrt_cuda_upload_chunk {
  uint8_t bytes[ETRT_CUDA_UPLOAD_BYTES];
} etrt_cuda_upload_chunk;

/* Writes a table into device memory (a node's part of the workspace) piece by
 * piece: put() appends, finish() sends the rest. The first failed launch is kept
 * and returned by finish(). */
typedef struct etrt_cuda_uploader {
  const etrt_node *node;
  cudaStream_t stream;
  uint8_t *dst; /* where the chunk goes */
  size_t used;  /* bytes of the chunk filled */
  etrt_status status;
  etrt_cuda_upload_chunk chunk;
} etrt_cuda_uploader;

void etrt_cuda_uploader_init(etrt_cuda_uploader *u, const etrt_node *node, void *dst,
                             cudaStream_t stream);
/* Appends `size` bytes (at most ETRT_CUDA_UPLOAD_BYTES). */
void etrt_cuda_uploader_put(etrt_cuda_uploader *u, const void *bytes, size_t size);
etrt_status etrt_cuda_uploader_finish(etrt_cuda_uploader *u);

#endif
