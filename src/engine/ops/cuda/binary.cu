/* Elementwise operations of two or more broadcast tensors on the GPU: arithmetic
 * (Add ... Pow (also of mixed dtypes), Mod, Max/Min/Sum/Mean, PRelu), BitShift,
 * bitwise and logical operations, comparisons, and Where. One kernel template, instantiated per
 * operation and element type; the iteration plan (shape_util.h) comes from the host. */
#include <type_traits>

#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/elementwise.h"
}

enum {
  ETRT_BIN_ADD,
  ETRT_BIN_SUB,
  ETRT_BIN_MUL,
  ETRT_BIN_DIV,
  ETRT_BIN_POW,
  ETRT_BIN_MOD,  /* the result takes the divisor's sign (Mod with fmod = 0) */
  ETRT_BIN_FMOD, /* the result takes the dividend's sign (C fmod) */
  ETRT_BIN_MAX,
  ETRT_BIN_MIN,
  ETRT_BIN_PRELU,
  ETRT_BIN_BITAND,
  ETRT_BIN_BITOR,
  ETRT_BIN_BITXOR,
  /* bool results from here on */
  ETRT_BIN_AND,
  ETRT_BIN_OR,
  ETRT_BIN_XOR,
  ETRT_BIN_EQUAL,
  ETRT_BIN_LESS,
  ETRT_BIN_GREATER,
  ETRT_BIN_LESS_EQUAL,
  ETRT_BIN_GREATER_EQUAL
};

#define ETRT_BIN_IS_BOOL(op) ((op) >= ETRT_BIN_AND)

/* base^exponent wrapping in the type's width, as the CPU kernel computes it; a
 * negative exponent gives 0 except for the bases 1 and -1 (whose powers are
 * integers). */
__device__ __forceinline__ uint64_t etrt_binary_ipow(uint64_t base, uint64_t exponent,
                                                     bool negative) {
  if (negative) {
    if (base == 1) return 1;
    if (base == UINT64_MAX) return (exponent & 1u) ? UINT64_MAX : 1;
    return 0;
  }
  uint64_t r = 1;
  for (; exponent != 0; exponent >>= 1, base *= base) {
    if (exponent & 1u) r *= base;
  }
  return r;
}

template <int OP, typename M>
__device__ __forceinline__ M etrt_binary_arith(M x, M z) {
  constexpr bool integral = std::is_integral<M>::value;
  if constexpr (OP == ETRT_BIN_ADD) return x + z;
  if constexpr (OP == ETRT_BIN_SUB) return x - z;
  if constexpr (OP == ETRT_BIN_MUL) return x * z;
  if constexpr (OP == ETRT_BIN_DIV) {
    /* An integer division by zero gives 0 rather than trapping. */
    if constexpr (integral)
      return z == 0 ? M(0) : M(x / z);
    else
      return x / z;
  }
  if constexpr (OP == ETRT_BIN_POW) {
    if constexpr (integral) {
      bool negative = false;
      if constexpr (std::is_signed<M>::value) negative = z < M(0);
      return (M)etrt_binary_ipow((uint64_t)x, (uint64_t)z, negative);
    } else {
      return pow(x, z);
    }
  }
  if constexpr (OP == ETRT_BIN_MOD) {
    if constexpr (std::is_unsigned<M>::value) {
      return z == 0 ? M(0) : M(x % z);
    } else if constexpr (integral) {
      if (z == 0) return M(0);
      M r = x % z;
      if (r != 0 && ((r < 0) != (z < 0))) r += z;
      return r;
    } else {
      M r = fmod(x, z);
      if (r != 0 && ((r < 0) != (z < 0))) r += z;
      return r;
    }
  }
  if constexpr (OP == ETRT_BIN_FMOD) {
    if constexpr (integral)
      return z == 0 ? M(0) : M(x % z);
    else
      return fmod(x, z);
  }
  /* NaN wins, as in NumPy's maximum and minimum. */
  if constexpr (OP == ETRT_BIN_MAX) return (x > z || x != x) ? x : z;
  if constexpr (OP == ETRT_BIN_MIN) return (x < z || x != x) ? x : z;
  if constexpr (OP == ETRT_BIN_PRELU) {
    if constexpr (std::is_unsigned<M>::value)
      return x;
    else
      return x < M(0) ? M(z * x) : x;
  }
  if constexpr (integral) {
    if constexpr (OP == ETRT_BIN_BITAND) return x & z;
    if constexpr (OP == ETRT_BIN_BITOR) return x | z;
    if constexpr (OP == ETRT_BIN_BITXOR) return x ^ z;
  }
  return M(0);
}

template <int OP, typename M>
__device__ __forceinline__ bool etrt_binary_test(M x, M z) {
  if constexpr (OP == ETRT_BIN_AND) return (x != M(0)) && (z != M(0));
  if constexpr (OP == ETRT_BIN_OR) return (x != M(0)) || (z != M(0));
  if constexpr (OP == ETRT_BIN_XOR) return (x != M(0)) != (z != M(0));
  if constexpr (OP == ETRT_BIN_EQUAL) return x == z;
  if constexpr (OP == ETRT_BIN_LESS) return x < z;
  if constexpr (OP == ETRT_BIN_GREATER) return x > z;
  if constexpr (OP == ETRT_BIN_LESS_EQUAL) return x <= z;
  if constexpr (OP == ETRT_BIN_GREATER_EQUAL) return x >= z;
  return false;
}

/* V consecutive outputs per thread (cuda_kernel.h: ETRT_CUDA_WALK_LAUNCH). */
template <typename T, int OP, int V, typename I>
__global__ void etrt_binary_kernel(const T *a, const T *b, void *y, I runs,
                                   etrt_broadcast_iter it) {
  typedef typename etrt_math<T>::type M;
  const int64_t step_a = it.strides[0][it.rank - 1], step_b = it.strides[1][it.rank - 1];
  ETRT_CUDA_LOOP_AS(I, r, runs) {
    I i = r * (I)V, off[2];
    etrt_cuda_offsets<2, I>(it, i, off);
    T xa[V], xb[V];
    etrt_cuda_load_run<V>(a, off[0], step_a, xa);
    etrt_cuda_load_run<V>(b, off[1], step_b, xb);
    if constexpr (ETRT_BIN_IS_BOOL(OP)) {
      uint8_t out[V];
#pragma unroll
      for (int k = 0; k < V; ++k)
        out[k] = etrt_binary_test<OP, M>(etrt_cvt<M>(xa[k]), etrt_cvt<M>(xb[k])) ? 1 : 0;
      etrt_cuda_store_run<V>((uint8_t *)y, i, out);
    } else {
      T out[V];
#pragma unroll
      for (int k = 0; k < V; ++k)
        out[k] = etrt_cvt<T>(etrt_binary_arith<OP, M>(etrt_cvt<M>(xa[k]), etrt_cvt<M>(xb[k])));
      etrt_cuda_store_run<V>((T *)y, i, out);
    }
  }
}

template <typename T, int OP>
static void etrt_binary_start(const T *a, const T *b, void *y, const etrt_broadcast_iter &it,
                              cudaStream_t stream) {
  const void *bases[2] = {a, b};
  const size_t sizes[2] = {sizeof(T), sizeof(T)};
  size_t y_size = ETRT_BIN_IS_BOOL(OP) ? 1 : sizeof(T);
  int runs_ok = etrt_broadcast_iter_runs_of(&it, etrt_cuda_width<T>(), bases, sizes, y, y_size);
#define ETRT_BINARY_KERNEL(V, I) etrt_binary_kernel<T, OP, V, I>
  ETRT_CUDA_WALK_LAUNCH(it, T, runs_ok, stream, ETRT_BINARY_KERNEL, a, b, y);
#undef ETRT_BINARY_KERNEL
}

/* y = a OP b, broadcast. y may be a (same shape) for the running result of the
 * variadic operations: each run of elements is read before it is written, by one
 * thread. */
template <int OP>
static etrt_status etrt_binary_launch(const etrt_node *node, const etrt_tensor *a,
                                      const etrt_tensor *b, etrt_tensor *y, cudaStream_t stream) {
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  const etrt_tensor *operands[2] = {a, b};
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, y, 2, operands));
  if constexpr (OP == ETRT_BIN_AND || OP == ETRT_BIN_OR || OP == ETRT_BIN_XOR) {
    etrt_binary_start<uint8_t, OP>((const uint8_t *)a->data, (const uint8_t *)b->data, y->data, it,
                                   stream);
  } else {
    ETRT_CUDA_NUMERIC_SWITCH(
        a->dtype, T, return etrt_cuda_no_kernel(node, a->dtype),
        etrt_binary_start<T, OP>((const T *)a->data, (const T *)b->data, y->data, it, stream));
  }
  return etrt_cuda_check(node, "binary");
}

#define ETRT_BINARY_RUN(fn, OP)                                              \
  extern "C" ETRT_CUDA_RUN(fn) {                                             \
    return etrt_binary_launch<OP>(node, &inputs[0], &inputs[1], &outputs[0], \
                                  etrt_cuda_stream(launch));                 \
  }

ETRT_BINARY_RUN(etrt_cuda_add, ETRT_BIN_ADD)
ETRT_BINARY_RUN(etrt_cuda_sub, ETRT_BIN_SUB)
ETRT_BINARY_RUN(etrt_cuda_mul, ETRT_BIN_MUL)
ETRT_BINARY_RUN(etrt_cuda_div, ETRT_BIN_DIV)
ETRT_BINARY_RUN(etrt_cuda_bitwise_and, ETRT_BIN_BITAND)
ETRT_BINARY_RUN(etrt_cuda_bitwise_or, ETRT_BIN_BITOR)
ETRT_BINARY_RUN(etrt_cuda_bitwise_xor, ETRT_BIN_BITXOR)
ETRT_BINARY_RUN(etrt_cuda_and, ETRT_BIN_AND)
ETRT_BINARY_RUN(etrt_cuda_or, ETRT_BIN_OR)
ETRT_BINARY_RUN(etrt_cuda_xor, ETRT_BIN_XOR)
ETRT_BINARY_RUN(etrt_cuda_equal, ETRT_BIN_EQUAL)
ETRT_BINARY_RUN(etrt_cuda_less, ETRT_BIN_LESS)
ETRT_BINARY_RUN(etrt_cuda_greater, ETRT_BIN_GREATER)
ETRT_BINARY_RUN(etrt_cuda_less_equal, ETRT_BIN_LESS_EQUAL)
ETRT_BINARY_RUN(etrt_cuda_greater_equal, ETRT_BIN_GREATER_EQUAL)

/* Pow of a base and an exponent of different dtypes (float ** int, int ** float):
 * computed in double, stored as the base's dtype (integers truncated toward zero and
 * saturated), as the CPU kernel does. */
__global__ void etrt_pow_mixed_kernel(const void *a, int a_dtype, const void *b, int b_dtype,
                                      void *y, int64_t n, etrt_broadcast_iter it) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t off[2];
    etrt_cuda_offsets<2>(it, i, off);
    double x = etrt_cuda_load_double(a, off[0], a_dtype);
    double z = etrt_cuda_load_double(b, off[1], b_dtype);
    etrt_cuda_store_double(y, i, a_dtype, pow(x, z));
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_pow) {
  const etrt_tensor *a = &inputs[0], *b = &inputs[1];
  etrt_tensor *y = &outputs[0];
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (a->dtype == b->dtype) return etrt_binary_launch<ETRT_BIN_POW>(node, a, b, y, stream);
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  const etrt_tensor *operands[2] = {a, b};
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, y, 2, operands));
  etrt_pow_mixed_kernel<<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
      a->data, (int)a->dtype, b->data, (int)b->dtype, y->data, n, it);
  return etrt_cuda_check(node, "pow_mixed");
}

/* BitShift on unsigned integers, in 64 bits and truncated to the type: a shift by the
 * type's width or more gives 0, as on the CPU. */
template <typename T>
__global__ void etrt_bit_shift_kernel(const T *a, const T *b, T *y, int64_t n,
                                      etrt_broadcast_iter it, int left) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t off[2];
    etrt_cuda_offsets<2>(it, i, off);
    uint64_t x = (uint64_t)a[off[0]], z = (uint64_t)b[off[1]];
    y[i] = (T)(z >= 64 ? 0 : left ? x << z : x >> z);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_bit_shift) {
  const etrt_binary_state *state = (const etrt_binary_state *)node->state;
  etrt_tensor *y = &outputs[0];
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  const etrt_tensor *operands[2] = {&inputs[0], &inputs[1]};
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, y, 2, operands));
  int left = state->kind == ETRT_BINARY_SHIFT_LEFT;
  ETRT_CUDA_BYTES_SWITCH(
      etrt_dtype_size(y->dtype), T, return etrt_cuda_no_kernel(node, y->dtype),
      etrt_bit_shift_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          (const T *)inputs[0].data, (const T *)inputs[1].data, (T *)y->data, n, it, left));
  return etrt_cuda_check(node, "bit_shift");
}

/* The slope as it broadcasts to x, by the shared rule (elementwise.h), which also
 * reads an old-style per-channel slope. */
extern "C" ETRT_CUDA_RUN(etrt_cuda_prelu) {
  etrt_tensor slope;
  if (!etrt_prelu_slope_view(&inputs[0], &inputs[1], &slope)) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "PRelu node '%s': the slope does not broadcast to x", etrt_cuda_name(node));
  }
  return etrt_binary_launch<ETRT_BIN_PRELU>(node, &inputs[0], &slope, &outputs[0],
                                            etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_mod) {
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (etrt_node_attribute_int(node, "fmod", 0) != 0) {
    return etrt_binary_launch<ETRT_BIN_FMOD>(node, &inputs[0], &inputs[1], &outputs[0], stream);
  }
  return etrt_binary_launch<ETRT_BIN_MOD>(node, &inputs[0], &inputs[1], &outputs[0], stream);
}

template <typename T>
__global__ void etrt_scale_kernel(T *y, int64_t n, double factor) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(i, n) y[i] = etrt_cvt<T>((M)(etrt_cvt<M>(y[i]) * (M)factor));
}

/* Max, Min, Sum, Mean of one or more inputs: the first pair writes the output, each
 * further input folds into it. */
template <int OP>
static etrt_status etrt_variadic_launch(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                        int mean) {
  cudaStream_t stream = etrt_cuda_stream(launch);
  etrt_tensor *y = &outputs[0];
  uint32_t count = node->num_inputs;
  if (count == 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s node '%s': no inputs", node->op_type,
                      etrt_cuda_name(node));
  }
  if (count == 1) {
    ETRT_RETURN_IF_ERROR(etrt_cuda_broadcast_copy(node, &inputs[0], y, stream));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_binary_launch<OP>(node, &inputs[0], &inputs[1], y, stream));
    for (uint32_t k = 2; k < count; ++k) {
      ETRT_RETURN_IF_ERROR(etrt_binary_launch<OP>(node, y, &inputs[k], y, stream));
    }
  }
  int64_t n = etrt_tensor_numel(y);
  if (!mean || count == 1 || n == 0) return ETRT_OK;
  ETRT_CUDA_FLOAT_SWITCH(y->dtype, T, return etrt_cuda_no_kernel(node, y->dtype),
                         etrt_scale_kernel<T>
                         <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
                             (T *)y->data, n, 1.0 / (double)count));
  return etrt_cuda_check(node, "scale");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_max) {
  return etrt_variadic_launch<ETRT_BIN_MAX>(node, inputs, outputs, launch, 0);
}
extern "C" ETRT_CUDA_RUN(etrt_cuda_min) {
  return etrt_variadic_launch<ETRT_BIN_MIN>(node, inputs, outputs, launch, 0);
}
extern "C" ETRT_CUDA_RUN(etrt_cuda_sum) {
  return etrt_variadic_launch<ETRT_BIN_ADD>(node, inputs, outputs, launch, 0);
}
extern "C" ETRT_CUDA_RUN(etrt_cuda_mean) {
  return etrt_variadic_launch<ETRT_BIN_ADD>(node, inputs, outputs, launch, 1);
}

/* Where(condition, x, y): three operands broadcast; x and y move as bytes. */
template <typename T, int V, typename I>
__global__ void etrt_where_kernel(const uint8_t *cond, const T *x, const T *y, T *out, I runs,
                                  etrt_broadcast_iter it) {
  const int rank = it.rank;
  ETRT_CUDA_LOOP_AS(I, r, runs) {
    I i = r * (I)V, off[3];
    etrt_cuda_offsets<3, I>(it, i, off);
    uint8_t c[V];
    T a[V], b[V], o[V];
    etrt_cuda_load_run<V>(cond, off[0], it.strides[0][rank - 1], c);
    etrt_cuda_load_run<V>(x, off[1], it.strides[1][rank - 1], a);
    etrt_cuda_load_run<V>(y, off[2], it.strides[2][rank - 1], b);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = c[k] ? a[k] : b[k];
    etrt_cuda_store_run<V>(out, i, o);
  }
}

template <typename T>
static void etrt_where_start(const uint8_t *cond, const T *x, const T *y, T *out,
                             const etrt_broadcast_iter &it, cudaStream_t stream) {
  const void *bases[3] = {cond, x, y};
  const size_t sizes[3] = {1, sizeof(T), sizeof(T)};
  int runs_ok =
      etrt_broadcast_iter_runs_of(&it, etrt_cuda_width<T>(), bases, sizes, out, sizeof(T));
#define ETRT_WHERE_KERNEL(V, I) etrt_where_kernel<T, V, I>
  ETRT_CUDA_WALK_LAUNCH(it, T, runs_ok, stream, ETRT_WHERE_KERNEL, cond, x, y, out);
#undef ETRT_WHERE_KERNEL
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_where) {
  etrt_tensor *out = &outputs[0];
  int64_t n = etrt_tensor_numel(out);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  const etrt_tensor *operands[3] = {&inputs[0], &inputs[1], &inputs[2]};
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, out, 3, operands));
  ETRT_CUDA_BYTES_SWITCH(
      etrt_dtype_size(out->dtype), T, return etrt_cuda_no_kernel(node, out->dtype),
      etrt_where_start<T>((const uint8_t *)inputs[0].data, (const T *)inputs[1].data,
                          (const T *)inputs[2].data, (T *)out->data, it, etrt_cuda_stream(launch)));
  return etrt_cuda_check(node, "where");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_binary[] = {
    {"Add", etrt_cuda_add, NULL},
    {"Sub", etrt_cuda_sub, NULL},
    {"Mul", etrt_cuda_mul, NULL},
    {"Div", etrt_cuda_div, NULL},
    {"Pow", etrt_cuda_pow, NULL},
    {"Mod", etrt_cuda_mod, NULL},
    {"PRelu", etrt_cuda_prelu, NULL},
    {"BitShift", etrt_cuda_bit_shift, NULL},
    {"BitwiseAnd", etrt_cuda_bitwise_and, NULL},
    {"BitwiseOr", etrt_cuda_bitwise_or, NULL},
    {"BitwiseXor", etrt_cuda_bitwise_xor, NULL},
    {"And", etrt_cuda_and, NULL},
    {"Or", etrt_cuda_or, NULL},
    {"Xor", etrt_cuda_xor, NULL},
    {"Equal", etrt_cuda_equal, NULL},
    {"Less", etrt_cuda_less, NULL},
    {"Greater", etrt_cuda_greater, NULL},
    {"LessOrEqual", etrt_cuda_less_equal, NULL},
    {"GreaterOrEqual", etrt_cuda_greater_equal, NULL},
    {"Max", etrt_cuda_max, NULL},
    {"Min", etrt_cuda_min, NULL},
    {"Sum", etrt_cuda_sum, NULL},
    {"Mean", etrt_cuda_mean, NULL},
    {"Where", etrt_cuda_where, NULL},
    {NULL, NULL, NULL},
};
