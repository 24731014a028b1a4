/* One-input elementwise operations on the GPU (ops/unary.h: math, activations,
 * Clip) and Relu. The formulas are those of the CPU kernels (cpu/unary.c), so both
 * executors agree to rounding. Half types compute in float. */
#include <limits>
#include <type_traits>

#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/erf.h"
#include "engine/ops/unary.h"
}

/* Relu has no unary kind (it is an elementwise-family operation). */
#define ETRT_CUDA_UNARY_RELU ((int)ETRT_UNARY_KIND_COUNT)

typedef struct etrt_unary_args {
  int kind;
  float alpha, beta, gamma;
  int flags;
} etrt_unary_args;

/* Kind: the operation where the launcher fixed it at compile time (the kinds
 * transformers and convolutional nets run on large tensors), -1 where a.kind decides:
 * a fixed kind leaves no switch in the element loop. */
template <typename M, int Kind = -1>
__device__ __forceinline__ M etrt_unary_float(const etrt_unary_args &a, M v) {
  const M one = M(1), zero = M(0);
  switch (Kind >= 0 ? Kind : a.kind) {
    case ETRT_UNARY_ABS:
      return fabs(v);
    case ETRT_UNARY_NEG:
      return -v;
    case ETRT_UNARY_CEIL:
      return ceil(v);
    case ETRT_UNARY_FLOOR:
      return floor(v);
    case ETRT_UNARY_ROUND:
      return rint(v); /* ties to even */
    case ETRT_UNARY_SQRT:
      return sqrt(v);
    case ETRT_UNARY_RECIPROCAL:
      return one / v;
    case ETRT_UNARY_EXP:
      return exp(v);
    case ETRT_UNARY_LOG:
      return log(v);
    case ETRT_UNARY_SIN:
      return sin(v);
    case ETRT_UNARY_COS:
      return cos(v);
    case ETRT_UNARY_TAN:
      return tan(v);
    case ETRT_UNARY_ASIN:
      return asin(v);
    case ETRT_UNARY_ACOS:
      return acos(v);
    case ETRT_UNARY_ATAN:
      return atan(v);
    case ETRT_UNARY_SINH:
      return sinh(v);
    case ETRT_UNARY_COSH:
      return cosh(v);
    case ETRT_UNARY_TANH:
      return tanh(v);
    case ETRT_UNARY_ASINH:
      return asinh(v);
    case ETRT_UNARY_ACOSH:
      return acosh(v);
    case ETRT_UNARY_ATANH:
      return atanh(v);
    case ETRT_UNARY_ERF:
      if constexpr (std::is_same<M, float>::value)
        return etrt_erf_f32(v); /* the CPU's (and onnxruntime's) bits */
      else
        return erf(v);
    case ETRT_UNARY_SIGN:
      return v > zero ? one : v < zero ? -one : v;
    case ETRT_UNARY_SIGMOID:
      return v >= zero ? one / (one + exp(-v)) : exp(v) / (one + exp(v));
    case ETRT_UNARY_HARD_SIGMOID:
      return fmax(zero, fmin(one, M(a.alpha) * v + M(a.beta)));
    case ETRT_UNARY_HARD_SWISH:
      return v * fmax(zero, fmin(one, v * M(1.0 / 6.0) + M(0.5)));
    case ETRT_UNARY_LEAKY_RELU:
      return v < zero ? M(a.alpha) * v : v;
    case ETRT_UNARY_ELU:
      return v < zero ? M(a.alpha) * expm1(v) : v;
    case ETRT_UNARY_SELU:
      return v <= zero ? M(a.gamma) * (M(a.alpha) * exp(v) - M(a.alpha)) : M(a.gamma) * v;
    case ETRT_UNARY_CELU:
      return fmax(zero, v) + fmin(zero, M(a.alpha) * expm1(v / M(a.alpha)));
    case ETRT_UNARY_SOFTPLUS:
      return v > zero ? v + log1p(exp(-v)) : log1p(exp(v));
    case ETRT_UNARY_SOFTSIGN:
      return v / (one + fabs(v));
    case ETRT_UNARY_THRESHOLDED_RELU:
      return v > M(a.alpha) ? v : zero;
    case ETRT_UNARY_GELU:
      if (a.flags & ETRT_UNARY_GELU_TANH) {
        return M(0.5) * v * (one + tanh(M(0.7978845608028654) * (v + M(0.044715) * v * v * v)));
      }
      if constexpr (std::is_same<M, float>::value)
        return M(0.5) * v * (one + etrt_erf_f32(v * M(0.7071067811865476)));
      else
        return M(0.5) * v * (one + erf(v * M(0.7071067811865476)));
    case ETRT_UNARY_MISH:
      return v * tanh(v > zero ? v + log1p(exp(-v)) : log1p(exp(v)));
    case ETRT_UNARY_SHRINK:
      return v < -M(a.alpha) ? v + M(a.beta) : v > M(a.alpha) ? v - M(a.beta) : zero;
    case ETRT_CUDA_UNARY_RELU:
      return v < zero ? zero : v; /* NaN stays, as on the CPU */
    default:
      return v;
  }
}

/* Integers wrap on negation, as the CPU kernels do (through unsigned arithmetic). */
template <typename M>
__device__ __forceinline__ M etrt_unary_integer(const etrt_unary_args &a, M v) {
  typedef typename std::make_unsigned<M>::type U;
  switch (a.kind) {
    case ETRT_UNARY_ABS:
      if constexpr (std::is_signed<M>::value)
        return v < 0 ? M(U(0) - U(v)) : v;
      else
        return v;
    case ETRT_UNARY_NEG:
      return M(U(0) - U(v));
    case ETRT_UNARY_SIGN:
      if constexpr (std::is_signed<M>::value)
        return M((v > 0) - (v < 0));
      else
        return M(v != 0);
    case ETRT_UNARY_BITWISE_NOT:
      return M(~v);
    case ETRT_UNARY_NOT:
      return M(v == 0);
    case ETRT_CUDA_UNARY_RELU:
      if constexpr (std::is_signed<M>::value)
        return v < 0 ? M(0) : v;
      else
        return v;
    default:
      return v;
  }
}

/* V consecutive elements per thread (16-byte accesses where the launcher found the
 * tensors aligned and the count a multiple of V). */
template <typename T, int V, int Kind>
__global__ void etrt_unary_kernel(const T *x, T *y, int64_t runs, etrt_unary_args a) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(r, runs) {
    T v[V];
    etrt_cuda_load_run<V>(x, r * V, 1, v);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      M m = etrt_cvt<M>(v[k]);
      if constexpr (std::is_integral<M>::value) {
        v[k] = etrt_unary_integer<M>(a, m);
      } else {
        v[k] = etrt_cvt<T>(etrt_unary_float<M, Kind>(a, m));
      }
    }
    etrt_cuda_store_run<V>(y, r * V, v);
  }
}

template <typename T, int Kind>
static void etrt_unary_start_kind(const T *x, T *y, int64_t n, const etrt_unary_args &a,
                                  cudaStream_t stream) {
  constexpr int W = etrt_cuda_width<T>();
  if (n % W == 0 && (uintptr_t)x % (W * sizeof(T)) == 0 && (uintptr_t)y % (W * sizeof(T)) == 0) {
    etrt_unary_kernel<T, W, Kind>
        <<<etrt_cuda_blocks(n / W, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(x, y, n / W,
                                                                                       a);
  } else {
    etrt_unary_kernel<T, 1, Kind>
        <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(x, y, n, a);
  }
}

template <typename T>
static void etrt_unary_start(const T *x, T *y, int64_t n, const etrt_unary_args &a,
                             cudaStream_t stream) {
  if constexpr (!std::is_integral<typename etrt_math<T>::type>::value) {
    switch (a.kind) {
      case ETRT_UNARY_GELU:
        return etrt_unary_start_kind<T, ETRT_UNARY_GELU>(x, y, n, a, stream);
      case ETRT_UNARY_SIGMOID:
        return etrt_unary_start_kind<T, ETRT_UNARY_SIGMOID>(x, y, n, a, stream);
      case ETRT_UNARY_TANH:
        return etrt_unary_start_kind<T, ETRT_UNARY_TANH>(x, y, n, a, stream);
      case ETRT_UNARY_HARD_SWISH:
        return etrt_unary_start_kind<T, ETRT_UNARY_HARD_SWISH>(x, y, n, a, stream);
      case ETRT_CUDA_UNARY_RELU:
        return etrt_unary_start_kind<T, ETRT_CUDA_UNARY_RELU>(x, y, n, a, stream);
      default:
        break;
    }
  }
  etrt_unary_start_kind<T, -1>(x, y, n, a, stream);
}

/* IsNaN, IsInf: bool results. */
template <typename T>
__global__ void etrt_unary_test_kernel(const T *x, uint8_t *y, int64_t n, etrt_unary_args a) {
  typedef typename etrt_math<T>::type M;
  const bool negative = (a.flags & ETRT_UNARY_DETECT_NEGATIVE) != 0;
  const bool positive = (a.flags & ETRT_UNARY_DETECT_POSITIVE) != 0;
  ETRT_CUDA_LOOP(i, n) {
    M v = etrt_cvt<M>(x[i]);
    bool r = a.kind == ETRT_UNARY_ISNAN ? isnan(v) : (isinf(v) && (v > M(0) ? positive : negative));
    y[i] = r ? 1 : 0;
  }
}

static etrt_status etrt_unary_launch(const etrt_node *node, const etrt_unary_args *a,
                                     const etrt_tensor *in, etrt_tensor *out, cudaStream_t stream) {
  int64_t n = etrt_tensor_numel(in);
  if (n == 0) return ETRT_OK;
  if (a->kind == ETRT_UNARY_IDENTITY) {
    if (out->data == in->data) return ETRT_OK;
    cudaMemcpyAsync(out->data, in->data, (size_t)n * etrt_dtype_size(in->dtype),
                    cudaMemcpyDeviceToDevice, stream);
    return etrt_cuda_check(node, "copy");
  }
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  if (a->kind == ETRT_UNARY_ISNAN || a->kind == ETRT_UNARY_ISINF) {
    ETRT_CUDA_FLOAT_SWITCH(in->dtype, T, return etrt_cuda_no_kernel(node, in->dtype),
                           etrt_unary_test_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)in->data, (uint8_t *)out->data, n, *a));
  } else if (in->dtype == ETRT_DTYPE_BOOL) {
    etrt_unary_start<uint8_t>((const uint8_t *)in->data, (uint8_t *)out->data, n, *a, stream);
  } else {
    ETRT_CUDA_NUMERIC_SWITCH(
        in->dtype, T, return etrt_cuda_no_kernel(node, in->dtype),
        etrt_unary_start<T>((const T *)in->data, (T *)out->data, n, *a, stream));
  }
  return etrt_cuda_check(node, "unary");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_unary) {
  const etrt_unary_state *s = (const etrt_unary_state *)node->state;
  etrt_unary_args a = {(int)s->kind, s->alpha, s->beta, s->gamma, s->flags};
  return etrt_unary_launch(node, &a, &inputs[0], &outputs[0], etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_relu) {
  etrt_unary_args a = {ETRT_CUDA_UNARY_RELU, 0.0f, 0.0f, 0.0f, 0};
  return etrt_unary_launch(node, &a, &inputs[0], &outputs[0], etrt_cuda_stream(launch));
}

/* Clip: the bounds are read on the device from the optional min/max inputs (they
 * need not be known on the host), else from the attributes, else the type's range. */
template <typename T>
__global__ void etrt_clip_kernel(const T *x, T *y, int64_t n, const T *lo_input, const T *hi_input,
                                 typename etrt_math<T>::type lo_default,
                                 typename etrt_math<T>::type hi_default) {
  typedef typename etrt_math<T>::type M;
  M lo = lo_input != NULL ? etrt_cvt<M>(*lo_input) : lo_default;
  M hi = hi_input != NULL ? etrt_cvt<M>(*hi_input) : hi_default;
  ETRT_CUDA_LOOP(i, n) {
    M v = etrt_cvt<M>(x[i]);
    /* lo > hi gives hi everywhere, as the operator specifies */
    y[i] = etrt_cvt<T>(v < lo ? (lo > hi ? hi : lo) : v > hi ? hi : v);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_clip) {
  const etrt_clip_state *s = (const etrt_clip_state *)node->state;
  const etrt_tensor *in = &inputs[0];
  etrt_tensor *out = &outputs[0];
  int64_t n = etrt_tensor_numel(in);
  if (n == 0) return ETRT_OK;
  const void *lo = node->num_inputs > 1 && inputs[1].rank >= 0 ? inputs[1].data : NULL;
  const void *hi = node->num_inputs > 2 && inputs[2].rank >= 0 ? inputs[2].data : NULL;
  cudaStream_t stream = etrt_cuda_stream(launch);
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  ETRT_CUDA_NUMERIC_SWITCH(
      in->dtype, T, return etrt_cuda_no_kernel(node, in->dtype),
      typedef typename etrt_math<T>::type M;
      M lo_default = std::numeric_limits<M>::lowest(); M hi_default = std::numeric_limits<M>::max();
      if (std::numeric_limits<M>::has_infinity) {
        lo_default = -std::numeric_limits<M>::infinity();
        hi_default = std::numeric_limits<M>::infinity();
      } if (s->has_min_attribute) lo_default = (M)s->min_attribute;
      if (s->has_max_attribute) hi_default = (M)s->max_attribute; etrt_clip_kernel<T>
      <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>((const T *)in->data, (T *)out->data, n,
                                                 (const T *)lo, (const T *)hi, lo_default,
                                                 hi_default));
  return etrt_cuda_check(node, "clip");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_unary[] = {
    {"Relu", etrt_cuda_relu, NULL},
    {"Clip", etrt_cuda_clip, NULL},
#define ETRT_CUDA_UNARY_ROW(kind, name, types, to_bool) {name, etrt_cuda_unary, NULL},
    ETRT_UNARY_OPS(ETRT_CUDA_UNARY_ROW)
#undef ETRT_CUDA_UNARY_ROW
        {NULL, NULL, NULL},
};
