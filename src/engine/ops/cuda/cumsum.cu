/* CumSum on the GPU (ops/cumsum.h): one thread per line along the axis, summing in
 * order as the CPU kernel does; floats accumulate in double, integers in 64 bits
 * (wrapping as the input type would). */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/cumsum.h"
}

template <typename T>
struct etrt_cumsum_acc {
  typedef double type;
};
template <>
struct etrt_cumsum_acc<int32_t> {
  typedef uint64_t type;
};
template <>
struct etrt_cumsum_acc<int64_t> {
  typedef uint64_t type;
};
template <>
struct etrt_cumsum_acc<uint32_t> {
  typedef uint64_t type;
};
template <>
struct etrt_cumsum_acc<uint64_t> {
  typedef uint64_t type;
};

template <typename A, typename T>
__device__ __forceinline__ A etrt_cumsum_load(T v) {
  return (A)etrt_cvt<typename etrt_math<T>::type>(v);
}
template <typename T, typename A>
__device__ __forceinline__ T etrt_cumsum_store(A v) {
  return etrt_cvt<T>((typename etrt_math<T>::type)v);
}
/* float16 and bfloat16 round once, from double, as the CPU kernel does. */
template <>
__device__ __forceinline__ __half etrt_cumsum_store<__half, double>(double v) {
  return __double2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 etrt_cumsum_store<__nv_bfloat16, double>(double v) {
  return __double2bfloat16(v);
}

template <typename T>
__global__ void etrt_cumsum_kernel(const T *x, T *y, int64_t outer, int64_t n, int64_t inner,
                                   int exclusive, int reverse) {
  typedef typename etrt_cumsum_acc<T>::type A;
  int64_t step = reverse ? -inner : inner;
  ETRT_CUDA_LOOP(t, outer * inner) {
    int64_t o = t / inner, i = t % inner;
    int64_t at = o * n * inner + i + (reverse ? (n - 1) * inner : 0);
    A sum = 0;
    for (int64_t k = 0; k < n; ++k, at += step) {
      A v = etrt_cumsum_load<A, T>(x[at]);
      if (exclusive) {
        y[at] = etrt_cumsum_store<T, A>(sum);
        sum += v;
      } else {
        sum += v;
        y[at] = etrt_cumsum_store<T, A>(sum);
      }
    }
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_cumsum) {
  const etrt_cumsum_state *s = (const etrt_cumsum_state *)node->state;
  etrt_tensor host[2];
  etrt_cuda_host_inputs(inputs, 2, host);
  int64_t outer = 0, n = 0, inner = 0;
  ETRT_RETURN_IF_ERROR(etrt_cumsum_layout(node, host, &outer, &n, &inner));
  int64_t lines = outer * inner;
  if (lines == 0 || n == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(lines, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  const void *x = inputs[0].data;
  void *y = outputs[0].data;
  switch (inputs[0].dtype) {
#define ETRT_CUMSUM_CASE(DT, T)                                           \
  case DT:                                                                \
    etrt_cumsum_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(      \
        (const T *)x, (T *)y, outer, n, inner, s->exclusive, s->reverse); \
    break;
    ETRT_CUMSUM_CASE(ETRT_DTYPE_FLOAT32, float)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_FLOAT64, double)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_FLOAT16, __half)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_BFLOAT16, __nv_bfloat16)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_INT32, int32_t)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_INT64, int64_t)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_UINT32, uint32_t)
    ETRT_CUMSUM_CASE(ETRT_DTYPE_UINT64, uint64_t)
#undef ETRT_CUMSUM_CASE
    default:
      return etrt_cuda_no_kernel(node, inputs[0].dtype);
  }
  return etrt_cuda_check(node, "cumsum");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_cumsum[] = {
    {"CumSum", etrt_cuda_cumsum, NULL},
    {NULL, NULL, NULL},
};
