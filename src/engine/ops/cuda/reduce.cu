/* Reductions on the GPU (ops/reduce.h). The reduced axes come from the shared
 * etrt_reduce_axes; the input's axes are split into kept and reduced ones (size-1
 * axes dropped, neighbours of one kind merged). When the innermost axis is reduced,
 * a warp reduces each output element (its lanes read neighbouring elements);
 * otherwise a thread does, and neighbouring threads read neighbouring elements.
 * Floats accumulate in double and signed integers in int64, as on the CPU. */
#include <string.h>

#include <limits>
#include <type_traits>

#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/reduce.h"
}

typedef struct etrt_reduce_plan {
  int32_t kept_rank, reduced_rank;
  int64_t kept_dims[ETRT_MAX_RANK], kept_strides[ETRT_MAX_RANK];
  int64_t reduced_dims[ETRT_MAX_RANK], reduced_strides[ETRT_MAX_RANK];
  int64_t out_numel, reduced_numel;
  int kind;
} etrt_reduce_plan;

static void etrt_reduce_plan_init(etrt_reduce_plan *p, const etrt_tensor *in, uint32_t reduced) {
  memset(p, 0, sizeof *p);
  int64_t kd[ETRT_MAX_RANK], ks[ETRT_MAX_RANK], rd[ETRT_MAX_RANK], rs[ETRT_MAX_RANK];
  int32_t kr = 0, rr = 0, last_kind = -1;
  int64_t stride = 1;
  p->out_numel = 1;
  p->reduced_numel = 1;
  /* innermost first, reversed below */
  for (int32_t a = in->rank - 1; a >= 0; --a) {
    int64_t size = in->dims[a];
    int32_t kind = (int32_t)((reduced >> a) & 1u);
    if (kind)
      p->reduced_numel *= size;
    else
      p->out_numel *= size;
    if (size != 1) {
      int32_t *r = kind ? &rr : &kr;
      int64_t *dims = kind ? rd : kd, *strides = kind ? rs : ks;
      if (last_kind == kind && *r > 0 && strides[*r - 1] * dims[*r - 1] == stride) {
        dims[*r - 1] *= size;
      } else {
        dims[*r] = size;
        strides[*r] = stride;
        ++*r;
      }
      last_kind = kind;
    }
    stride *= size;
  }
  for (int32_t i = 0; i < kr; ++i) {
    p->kept_dims[i] = kd[kr - 1 - i];
    p->kept_strides[i] = ks[kr - 1 - i];
  }
  for (int32_t i = 0; i < rr; ++i) {
    p->reduced_dims[i] = rd[rr - 1 - i];
    p->reduced_strides[i] = rs[rr - 1 - i];
  }
  p->kept_rank = kr;
  p->reduced_rank = rr;
}

__device__ __forceinline__ int64_t etrt_reduce_offset(int32_t rank, const int64_t *dims,
                                                      const int64_t *strides, int64_t i) {
  if (rank == 1) return i * strides[0];
  int64_t off = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return off;
}

template <typename A>
__device__ __forceinline__ A etrt_reduce_identity(int kind) {
  switch (kind) {
    case ETRT_REDUCE_PROD:
      return A(1);
    case ETRT_REDUCE_MAX:
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    case ETRT_REDUCE_MIN:
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
    default:
      return A(0);
  }
}

template <typename A>
__device__ __forceinline__ A etrt_reduce_combine(int kind, A a, A b) {
  switch (kind) {
    case ETRT_REDUCE_PROD:
      return a * b;
    case ETRT_REDUCE_MAX:
      return etrt_cuda_max_op()(a, b);
    case ETRT_REDUCE_MIN:
      return etrt_cuda_min_op()(a, b);
    default:
      return a + b;
  }
}

/* The value an element contributes; `m` is LogSumExp's maximum. */
template <typename A>
__device__ __forceinline__ A etrt_reduce_term(int kind, A v, A m) {
  switch (kind) {
    case ETRT_REDUCE_SUM_SQUARE:
    case ETRT_REDUCE_L2:
      return v * v;
    case ETRT_REDUCE_L1:
      return v < A(0) ? A(0) - v : v;
    case ETRT_REDUCE_LOG_SUM_EXP:
      if constexpr (std::is_floating_point<A>::value)
        return exp(v - m);
      else
        return v;
    default:
      return v;
  }
}

template <typename A>
__device__ __forceinline__ A etrt_reduce_finish(int kind, A a, A m, int64_t count) {
  if constexpr (std::is_floating_point<A>::value) {
    switch (kind) {
      case ETRT_REDUCE_MEAN:
        return a / (A)count;
      case ETRT_REDUCE_LOG_SUM:
        return log(a);
      case ETRT_REDUCE_L2:
        return sqrt(a);
      case ETRT_REDUCE_LOG_SUM_EXP:
        return (isinf(m) || m != m) ? m : m + log(a);
      default:
        return a;
    }
  } else {
    return kind == ETRT_REDUCE_MEAN && count > 0 ? A(a / (A)count) : a;
  }
}

/* Partial result of output `o` over reduced elements first, first + step, ... */
template <typename T, typename A>
__device__ __forceinline__ A etrt_reduce_partial(const etrt_reduce_plan &p, int kind, const T *x,
                                                 int64_t base, int64_t first, int64_t step, A m) {
  A acc = etrt_reduce_identity<A>(kind);
  for (int64_t r = first; r < p.reduced_numel; r += step) {
    int64_t off = base + etrt_reduce_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, r);
    A v = (A)etrt_cvt<typename etrt_math<T>::type>(x[off]);
    acc = etrt_reduce_combine<A>(kind, acc, etrt_reduce_term<A>(kind, v, m));
  }
  return acc;
}

template <typename T, typename A>
__global__ void etrt_reduce_warp_kernel(const T *x, T *y, etrt_reduce_plan p) {
  int lane = threadIdx.x & 31;
  int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t o = warp; o < p.out_numel; o += warps) {
    int64_t base = etrt_reduce_offset(p.kept_rank, p.kept_dims, p.kept_strides, o);
    A m = A(0);
    int kind = p.kind;
    if (kind == ETRT_REDUCE_LOG_SUM_EXP) {
      m = etrt_reduce_partial<T, A>(p, ETRT_REDUCE_MAX, x, base, lane, 32, A(0));
      m = etrt_cuda_warp_reduce(m, etrt_cuda_max_op());
    }
    A acc = etrt_reduce_partial<T, A>(p, kind, x, base, lane, 32, m);
    if (kind == ETRT_REDUCE_LOG_SUM_EXP && (isinf((double)m) || m != m)) acc = A(0);
    switch (kind) {
      case ETRT_REDUCE_PROD:
        acc = etrt_cuda_warp_reduce(acc, etrt_cuda_prod_op());
        break;
      case ETRT_REDUCE_MAX:
        acc = etrt_cuda_warp_reduce(acc, etrt_cuda_max_op());
        break;
      case ETRT_REDUCE_MIN:
        acc = etrt_cuda_warp_reduce(acc, etrt_cuda_min_op());
        break;
      default:
        acc = etrt_cuda_warp_reduce(acc, etrt_cuda_sum_op());
        break;
    }
    if (lane == 0) {
      y[o] = etrt_cvt<T>(
          (typename etrt_math<T>::type)etrt_reduce_finish<A>(kind, acc, m, p.reduced_numel));
    }
  }
}

template <typename T, typename A>
__global__ void etrt_reduce_thread_kernel(const T *x, T *y, etrt_reduce_plan p) {
  ETRT_CUDA_LOOP(o, p.out_numel) {
    int64_t base = etrt_reduce_offset(p.kept_rank, p.kept_dims, p.kept_strides, o);
    A m = A(0);
    if (p.kind == ETRT_REDUCE_LOG_SUM_EXP) {
      m = etrt_reduce_partial<T, A>(p, ETRT_REDUCE_MAX, x, base, 0, 1, A(0));
    }
    A acc = etrt_reduce_partial<T, A>(p, p.kind, x, base, 0, 1, m);
    y[o] = etrt_cvt<T>(
        (typename etrt_math<T>::type)etrt_reduce_finish<A>(p.kind, acc, m, p.reduced_numel));
  }
}

template <typename T, typename A>
static void etrt_reduce_enqueue(const etrt_reduce_plan &p, const void *x, void *y,
                                cudaStream_t stream) {
  int warp = p.reduced_rank > 0 && p.reduced_strides[p.reduced_rank - 1] == 1;
  if (warp) {
    etrt_reduce_warp_kernel<T, A>
        <<<etrt_cuda_blocks(p.out_numel * 32, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            (const T *)x, (T *)y, p);
  } else {
    etrt_reduce_thread_kernel<T, A>
        <<<etrt_cuda_blocks(p.out_numel, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            (const T *)x, (T *)y, p);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_reduce) {
  const etrt_reduce_state *s = (const etrt_reduce_state *)node->state;
  uint32_t reduced = 0;
  ETRT_RETURN_IF_ERROR(etrt_reduce_axes(node, s, inputs, &reduced));
  const etrt_tensor *in = &inputs[0];
  etrt_reduce_plan p;
  etrt_reduce_plan_init(&p, in, reduced);
  p.kind = (int)s->kind;
  if (p.out_numel == 0) return ETRT_OK;
  cudaStream_t stream = etrt_cuda_stream(launch);
  switch (in->dtype) {
    case ETRT_DTYPE_INT32:
      etrt_reduce_enqueue<int32_t, int64_t>(p, in->data, outputs[0].data, stream);
      break;
    case ETRT_DTYPE_INT64:
      etrt_reduce_enqueue<int64_t, int64_t>(p, in->data, outputs[0].data, stream);
      break;
    default:
      ETRT_CUDA_FLOAT_SWITCH(in->dtype, T, return etrt_cuda_no_kernel(node, in->dtype),
                             etrt_reduce_enqueue<T, double>(p, in->data, outputs[0].data, stream));
  }
  return etrt_cuda_check(node, "reduce");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_reduce[] = {
#define ETRT_CUDA_REDUCE_ROW(kind, name, ints) {name, etrt_cuda_reduce, NULL},
    ETRT_REDUCE_OPS(ETRT_CUDA_REDUCE_ROW)
#undef ETRT_CUDA_REDUCE_ROW
        {NULL, NULL, NULL},
};
