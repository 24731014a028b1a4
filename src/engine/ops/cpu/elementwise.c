/* CPU kernels of Add, Sub, Mul, Div and Relu. One loop, expanded per dtype and
 * operation by the X-macros below: the dtype list says how an element is stored (S),
 * computed (C: float for the 16-bit floats) and wrapped (W: the unsigned type, at
 * least as wide as unsigned int, in which integer + - * wrap instead of overflowing). */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/ops/cpu/parallel_map.h"
#include "engine/ops/cpu/scalar.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

#define ETRT_EW_SAME(x) (x)

/* X(name, dtype, S, C, W, is_signed, is_float, load, store) */
#define ETRT_EW_SIGNED_TYPES(X)                                                                    \
  X(f32, ETRT_DTYPE_FLOAT32, float, float, float, 1, 1, ETRT_EW_SAME, ETRT_EW_SAME)                \
  X(f64, ETRT_DTYPE_FLOAT64, double, double, double, 1, 1, ETRT_EW_SAME, ETRT_EW_SAME)             \
  X(f16, ETRT_DTYPE_FLOAT16, uint16_t, float, float, 1, 1, etrt_half_to_float, etrt_float_to_half) \
  X(bf16, ETRT_DTYPE_BFLOAT16, uint16_t, float, float, 1, 1, etrt_bfloat16_to_float,               \
    etrt_float_to_bfloat16)                                                                        \
  X(i8, ETRT_DTYPE_INT8, int8_t, int8_t, uint32_t, 1, 0, ETRT_EW_SAME, ETRT_EW_SAME)               \
  X(i16, ETRT_DTYPE_INT16, int16_t, int16_t, uint32_t, 1, 0, ETRT_EW_SAME, ETRT_EW_SAME)           \
  X(i32, ETRT_DTYPE_INT32, int32_t, int32_t, uint32_t, 1, 0, ETRT_EW_SAME, ETRT_EW_SAME)           \
  X(i64, ETRT_DTYPE_INT64, int64_t, int64_t, uint64_t, 1, 0, ETRT_EW_SAME, ETRT_EW_SAME)
#define ETRT_EW_UNSIGNED_TYPES(X)                                                           \
  X(u8, ETRT_DTYPE_UINT8, uint8_t, uint8_t, uint32_t, 0, 0, ETRT_EW_SAME, ETRT_EW_SAME)     \
  X(u16, ETRT_DTYPE_UINT16, uint16_t, uint16_t, uint32_t, 0, 0, ETRT_EW_SAME, ETRT_EW_SAME) \
  X(u32, ETRT_DTYPE_UINT32, uint32_t, uint32_t, uint32_t, 0, 0, ETRT_EW_SAME, ETRT_EW_SAME) \
  X(u64, ETRT_DTYPE_UINT64, uint64_t, uint64_t, uint64_t, 0, 0, ETRT_EW_SAME, ETRT_EW_SAME)
#define ETRT_EW_TYPES(X) ETRT_EW_SIGNED_TYPES(X) ETRT_EW_UNSIGNED_TYPES(X)

/* The operations on computed values a and b of type C. For floats W is C, so the
 * wrapping forms are the plain ones. Integer division: x / 0 is 0 and MIN / -1 wraps. */
#define ETRT_EW_ADD(C, W, SG, FL, a, b) ((C)((W)(a) + (W)(b)))
#define ETRT_EW_SUB(C, W, SG, FL, a, b) ((C)((W)(a) - (W)(b)))
#define ETRT_EW_MUL(C, W, SG, FL, a, b) ((C)((W)(a) * (W)(b)))
#define ETRT_EW_DIV(C, W, SG, FL, a, b)          \
  ((FL)                     ? (C)((a) / (b))     \
   : (b) == 0               ? (C)0               \
   : ((SG) && (b) == (C)-1) ? (C)((W)0 - (W)(a)) \
                            : (C)((a) / (b)))

/* Helpers of the operations below. They take (u)int64_t or double so that one
 * definition serves every type, and so that the integer branch of an operation still
 * compiles (never runs) for the float types. */
static inline int etrt_ew_isnan(double v) { return v != v; }
static inline int etrt_ew_negative(double v) { return v < 0; }
static inline double etrt_ew_fmod(double a, double b, int python) {
  double r = fmod(a, b);
  if (python && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline int64_t etrt_ew_mod_signed(int64_t a, int64_t b, int python) {
  if (b == 0 || b == -1) return 0; /* x % 0 gives 0 rather than trapping; MIN % -1 */
  int64_t r = a % b;
  if (python && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline uint64_t etrt_ew_mod_unsigned(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }
/* base^exponent wrapping in the type's width; a negative exponent (integral result
 * only for bases 1 and -1) gives 0 otherwise. */
static inline uint64_t etrt_ew_ipow(uint64_t base, uint64_t exponent, int negative) {
  if (negative) {
    if (base == 1) return 1;
    if (base == UINT64_MAX) return (exponent & 1u) ? UINT64_MAX : 1; /* -1 */
    return 0;
  }
  uint64_t r = 1;
  for (; exponent != 0; exponent >>= 1, base *= base) {
    if (exponent & 1u) r *= base;
  }
  return r;
}
static inline uint64_t etrt_ew_shift(uint64_t a, uint64_t b, int left) {
  if (b >= 64) return 0;
  return left ? a << b : a >> b;
}

/* A square (a decomposed LayerNormalization's variance) as a product: the same value
 * as pow's, without libm's call per element. */
#define ETRT_EW_POW(C, W, SG, FL, a, b)                                                       \
  ((FL) ? (C)((double)(b) == 2.0 ? (double)(a) * (double)(a) : pow((double)(a), (double)(b))) \
        : (C)etrt_ew_ipow((uint64_t)(a), (uint64_t)(b), (SG) && etrt_ew_negative((double)(b))))
#define ETRT_EW_MOD_AS(C, SG, FL, a, b, PYTHON)                       \
  ((FL)   ? (C)etrt_ew_fmod((double)(a), (double)(b), PYTHON)         \
   : (SG) ? (C)etrt_ew_mod_signed((int64_t)(a), (int64_t)(b), PYTHON) \
          : (C)etrt_ew_mod_unsigned((uint64_t)(a), (uint64_t)(b)))
#define ETRT_EW_MOD(C, W, SG, FL, a, b) ETRT_EW_MOD_AS(C, SG, FL, a, b, 1)
#define ETRT_EW_FMOD(C, W, SG, FL, a, b) ETRT_EW_MOD_AS(C, SG, FL, a, b, 0)
#define ETRT_EW_MAX(C, W, SG, FL, a, b) \
  (((FL) && etrt_ew_isnan((double)(a))) || (a) > (b) ? (a) : (b))
#define ETRT_EW_MIN(C, W, SG, FL, a, b) \
  (((FL) && etrt_ew_isnan((double)(a))) || (a) < (b) ? (a) : (b))
#define ETRT_EW_PRELU(C, W, SG, FL, a, b) \
  ((SG) && etrt_ew_negative((double)(a)) ? (C)((W)(a) * (W)(b)) : (a))
#define ETRT_EW_SHL(C, W, SG, FL, a, b) \
  ((C)((FL) ? 0 : etrt_ew_shift((uint64_t)(a), (uint64_t)(b), 1)))
#define ETRT_EW_SHR(C, W, SG, FL, a, b) \
  ((C)((FL) ? 0 : etrt_ew_shift((uint64_t)(a), (uint64_t)(b), 0)))
#define ETRT_EW_BITAND(C, W, SG, FL, a, b) ((C)((FL) ? 0 : (uint64_t)(a) & (uint64_t)(b)))
#define ETRT_EW_BITOR(C, W, SG, FL, a, b) ((C)((FL) ? 0 : (uint64_t)(a) | (uint64_t)(b)))
#define ETRT_EW_BITXOR(C, W, SG, FL, a, b) ((C)((FL) ? 0 : (uint64_t)(a) ^ (uint64_t)(b)))
/* bool results (bool inputs run as uint8) */
#define ETRT_EW_AND(C, W, SG, FL, a, b) (((a) != 0) & ((b) != 0))
#define ETRT_EW_OR(C, W, SG, FL, a, b) (((a) != 0) | ((b) != 0))
#define ETRT_EW_XOR(C, W, SG, FL, a, b) (((a) != 0) ^ ((b) != 0))
#define ETRT_EW_EQUAL(C, W, SG, FL, a, b) ((a) == (b))
#define ETRT_EW_LESS(C, W, SG, FL, a, b) ((a) < (b))
#define ETRT_EW_LESS_EQUAL(C, W, SG, FL, a, b) ((a) <= (b))
#define ETRT_EW_GREATER(C, W, SG, FL, a, b) ((a) > (b))
#define ETRT_EW_GREATER_EQUAL(C, W, SG, FL, a, b) ((a) >= (b))
#define ETRT_EW_BOOL(x) ((uint8_t)((x) != 0))

/* The innermost loop over one row, with the contiguous and the broadcast-scalar cases
 * spelled out so that the compiler vectorises them. */
#define ETRT_EW_ROW(S, C, W, SG, FL, LOAD, STORE, OP) \
  if (sa == 1 && sb == 1) {                           \
    for (int64_t j = 0; j < inner; ++j) {             \
      C x = LOAD(pa[j]), z = LOAD(pb[j]);             \
      py[j] = STORE(OP(C, W, SG, FL, x, z));          \
    }                                                 \
  } else if (sa == 1 && sb == 0) {                    \
    const C z = LOAD(pb[0]);                          \
    for (int64_t j = 0; j < inner; ++j) {             \
      C x = LOAD(pa[j]);                              \
      py[j] = STORE(OP(C, W, SG, FL, x, z));          \
    }                                                 \
  } else if (sa == 0 && sb == 1) {                    \
    const C x = LOAD(pa[0]);                          \
    for (int64_t j = 0; j < inner; ++j) {             \
      C z = LOAD(pb[j]);                              \
      py[j] = STORE(OP(C, W, SG, FL, x, z));          \
    }                                                 \
  } else {                                            \
    for (int64_t j = 0; j < inner; ++j) {             \
      C x = LOAD(pa[j * sa]), z = LOAD(pb[j * sb]);   \
      py[j] = STORE(OP(C, W, SG, FL, x, z));          \
    }                                                 \
  }

/* The cursor at the start of row `row` (rows counted over every axis but the last). */
static void etrt_ew_cursor_seek(const etrt_broadcast_iter *it, int64_t row,
                                etrt_broadcast_cursor *c) {
  etrt_broadcast_cursor_init(c);
  for (int32_t a = it->rank - 2; a >= 0; --a) {
    c->index[a] = row % it->dims[a];
    row /= it->dims[a];
    for (uint32_t k = 0; k < it->count; ++k) c->offset[k] += c->index[a] * it->strides[k][a];
  }
}

/* Y: the output's element type, S or uint8_t for bool results (then STORE is
 * ETRT_EW_BOOL). */
#define ETRT_EW_DEFINE_BINARY(NAME, DT, S, C, W, SG, FL, LOAD, Y, STORE, OPNAME, OP)    \
  static void etrt_ew_##OPNAME##_##NAME(const etrt_broadcast_iter *it, const void *a_,  \
                                        const void *b_, void *y_, int64_t row_begin,    \
                                        int64_t row_end) {                              \
    const S *a = a_, *b = b_;                                                           \
    Y *y = y_;                                                                          \
    const int64_t inner = it->dims[it->rank - 1];                                       \
    const int64_t sa = it->strides[0][it->rank - 1], sb = it->strides[1][it->rank - 1]; \
    etrt_broadcast_cursor cursor;                                                       \
    etrt_ew_cursor_seek(it, row_begin, &cursor);                                        \
    for (int64_t start = row_begin * inner; start < row_end * inner; start += inner) {  \
      const S *pa = a + cursor.offset[0], *pb = b + cursor.offset[1];                   \
      Y *py = y + start;                                                                \
      ETRT_EW_ROW(S, C, W, SG, FL, LOAD, STORE, OP)                                     \
      etrt_broadcast_cursor_next_row(it, &cursor);                                      \
    }                                                                                   \
  }

/* X(kind, function name, operation, result: SAME or BOOL, the caller's arguments) */
#define ETRT_EW_OPS(X, ...)                                                    \
  X(ETRT_BINARY_ADD, add, ETRT_EW_ADD, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_SUB, sub, ETRT_EW_SUB, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_MUL, mul, ETRT_EW_MUL, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_DIV, div, ETRT_EW_DIV, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_POW, pow, ETRT_EW_POW, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_MOD, mod, ETRT_EW_MOD, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_FMOD, fmod, ETRT_EW_FMOD, SAME, __VA_ARGS__)                   \
  X(ETRT_BINARY_MAX, max, ETRT_EW_MAX, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_MIN, min, ETRT_EW_MIN, SAME, __VA_ARGS__)                      \
  X(ETRT_BINARY_PRELU, prelu, ETRT_EW_PRELU, SAME, __VA_ARGS__)                \
  X(ETRT_BINARY_SHIFT_LEFT, shl, ETRT_EW_SHL, SAME, __VA_ARGS__)               \
  X(ETRT_BINARY_SHIFT_RIGHT, shr, ETRT_EW_SHR, SAME, __VA_ARGS__)              \
  X(ETRT_BINARY_BITWISE_AND, bitand, ETRT_EW_BITAND, SAME, __VA_ARGS__)        \
  X(ETRT_BINARY_BITWISE_OR, bitor, ETRT_EW_BITOR, SAME, __VA_ARGS__)           \
  X(ETRT_BINARY_BITWISE_XOR, bitxor, ETRT_EW_BITXOR, SAME, __VA_ARGS__)        \
  X(ETRT_BINARY_AND, and, ETRT_EW_AND, BOOL, __VA_ARGS__)                      \
  X(ETRT_BINARY_OR, or, ETRT_EW_OR, BOOL, __VA_ARGS__)                         \
  X(ETRT_BINARY_XOR, xor, ETRT_EW_XOR, BOOL, __VA_ARGS__)                      \
  X(ETRT_BINARY_EQUAL, equal, ETRT_EW_EQUAL, BOOL, __VA_ARGS__)                \
  X(ETRT_BINARY_LESS, less, ETRT_EW_LESS, BOOL, __VA_ARGS__)                   \
  X(ETRT_BINARY_LESS_EQUAL, less_equal, ETRT_EW_LESS_EQUAL, BOOL, __VA_ARGS__) \
  X(ETRT_BINARY_GREATER, greater, ETRT_EW_GREATER, BOOL, __VA_ARGS__)          \
  X(ETRT_BINARY_GREATER_EQUAL, greater_equal, ETRT_EW_GREATER_EQUAL, BOOL, __VA_ARGS__)

/* The output element type and store of each result kind. */
#define ETRT_EW_Y_SAME(S) S
#define ETRT_EW_Y_BOOL(S) uint8_t
#define ETRT_EW_STORE_SAME(STORE) STORE
#define ETRT_EW_STORE_BOOL(STORE) ETRT_EW_BOOL

#define ETRT_EW_DEFINE_ONE(KIND, OPNAME, OP, RESULT, NAME, DT, S, C, W, SG, FL, LOAD, STORE) \
  ETRT_EW_DEFINE_BINARY(NAME, DT, S, C, W, SG, FL, LOAD, ETRT_EW_Y_##RESULT(S),              \
                        ETRT_EW_STORE_##RESULT(STORE), OPNAME, OP)
#define ETRT_EW_FOR_OPS(NAME, DT, S, C, W, SG, FL, LOAD, STORE) \
  ETRT_EW_OPS(ETRT_EW_DEFINE_ONE, NAME, DT, S, C, W, SG, FL, LOAD, STORE)

ETRT_EW_TYPES(ETRT_EW_FOR_OPS)

typedef void (*etrt_ew_binary_fn)(const etrt_broadcast_iter *, const void *, const void *, void *,
                                  int64_t, int64_t);

typedef struct etrt_ew_job {
  etrt_ew_binary_fn fn;
  const etrt_broadcast_iter *it;
  const void *a, *b;
  void *y;
} etrt_ew_job;

static void etrt_ew_rows(void *ctx, int64_t begin, int64_t end) {
  const etrt_ew_job *job = ctx;
  job->fn(job->it, job->a, job->b, job->y, begin, end);
}

static etrt_ew_binary_fn etrt_ew_binary_find(etrt_dtype dtype, etrt_binary_kind kind) {
#define ETRT_EW_FN_ENTRY(KIND, OPNAME, OP, RESULT, NAME) [KIND] = etrt_ew_##OPNAME##_##NAME,
#define ETRT_EW_CASE(NAME, DT, S, C, W, SG, FL, LOAD, STORE)       \
  case DT: {                                                       \
    static const etrt_ew_binary_fn fns[ETRT_BINARY_KIND_COUNT] = { \
        ETRT_EW_OPS(ETRT_EW_FN_ENTRY, NAME)};                      \
    return fns[kind];                                              \
  }
  if ((unsigned)kind >= ETRT_BINARY_KIND_COUNT) return NULL;
  if (dtype == ETRT_DTYPE_BOOL) dtype = ETRT_DTYPE_UINT8; /* bool bytes are 0 or 1 */
  switch (dtype) {
    ETRT_EW_TYPES(ETRT_EW_CASE)
    default:
      return NULL;
  }
#undef ETRT_EW_CASE
#undef ETRT_EW_FN_ENTRY
}

etrt_status etrt_cpu_binary(etrt_binary_kind kind, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  etrt_ew_binary_fn fn = etrt_ew_binary_find(inputs[0].dtype, kind);
  if (fn == NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "elementwise kernel: no kernel %d for %s", (int)kind,
                      etrt_dtype_name(inputs[0].dtype));
  etrt_broadcast_iter it;
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, &outputs[0], 2,
                                                (const etrt_tensor *[]){&inputs[0], &inputs[1]}));
  if (it.numel > 0) {
    etrt_ew_job job = {fn, &it, inputs[0].data, inputs[1].data, outputs[0].data};
    int64_t inner = it.dims[it.rank - 1];
    etrt_parallel_for(it.numel / inner, 1 + ETRT_CPU_MAP_GRAIN / inner, etrt_ew_rows, &job);
  }
  return ETRT_OK;
}

#define ETRT_EW_WRAPPER(OPNAME, KIND)                                             \
  etrt_status etrt_cpu_##OPNAME(const etrt_node *node, const etrt_tensor *inputs, \
                                etrt_tensor *outputs) {                           \
    (void)node;                                                                   \
    return etrt_cpu_binary(KIND, inputs, outputs);                                \
  }
ETRT_EW_WRAPPER(add, ETRT_BINARY_ADD)
ETRT_EW_WRAPPER(sub, ETRT_BINARY_SUB)
ETRT_EW_WRAPPER(mul, ETRT_BINARY_MUL)
ETRT_EW_WRAPPER(div, ETRT_BINARY_DIV)

/* Pow with an exponent of another dtype than the base (float ** int, int ** float):
 * computed in double, stored as the base's dtype (integers truncated toward zero). */
static etrt_status etrt_ew_pow_mixed(const etrt_tensor *inputs, etrt_tensor *outputs) {
  etrt_broadcast_iter it;
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, &outputs[0], 2,
                                                (const etrt_tensor *[]){&inputs[0], &inputs[1]}));
  const int64_t inner = it.dims[it.rank - 1];
  const int64_t sa = it.strides[0][it.rank - 1], sb = it.strides[1][it.rank - 1];
  etrt_broadcast_cursor cursor;
  etrt_broadcast_cursor_init(&cursor);
  for (int64_t start = 0; start < it.numel; start += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      double x = etrt_scalar_load(inputs[0].data, inputs[0].dtype, cursor.offset[0] + j * sa);
      double z = etrt_scalar_load(inputs[1].data, inputs[1].dtype, cursor.offset[1] + j * sb);
      etrt_scalar_store(outputs[0].data, outputs[0].dtype, start + j, pow(x, z));
    }
    etrt_broadcast_cursor_next_row(&it, &cursor);
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_binary_node(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  const etrt_binary_state *s = node->state;
  etrt_status status;
  if (s->kind == ETRT_BINARY_POW && inputs[0].dtype != inputs[1].dtype) {
    status = etrt_ew_pow_mixed(inputs, outputs);
  } else if (s->kind == ETRT_BINARY_PRELU) {
    etrt_tensor operands[2] = {inputs[0], inputs[1]};
    etrt_prelu_slope_view(&inputs[0], &inputs[1], &operands[1]);
    status = etrt_cpu_binary(s->kind, operands, outputs);
  } else {
    status = etrt_cpu_binary(s->kind, inputs, outputs);
  }
  if (status != ETRT_OK) return etrt_error_context(status, "%s: ", node->op_type);
  return ETRT_OK;
}

/* Relu keeps NaN (x < 0 is false for it), as max(0, x) does in NumPy. */
#define ETRT_EW_RELU_CASE(NAME, DT, S, C, W, SG, FL, LOAD, STORE) \
  case DT: {                                                      \
    const S *x = in->data;                                        \
    S *y = out->data;                                             \
    for (int64_t i = 0; i < n; ++i) {                             \
      C v = LOAD(x[i]);                                           \
      y[i] = STORE(v < 0 ? (C)0 : v);                             \
    }                                                             \
    return ETRT_OK;                                               \
  }

static etrt_status etrt_ew_relu_map(const void *ctx, const etrt_tensor *in, etrt_tensor *out,
                                    int64_t n) {
  (void)ctx;
  switch (out->dtype) {
    ETRT_EW_SIGNED_TYPES(ETRT_EW_RELU_CASE)
    default:
      break;
  }
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "Relu kernel: no kernel for %s",
                    etrt_dtype_name(out->dtype));
}

etrt_status etrt_cpu_relu(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  (void)node;
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n <= 0) return ETRT_OK;
  return etrt_cpu_map_parallel(&inputs[0], &outputs[0], n, etrt_ew_relu_map, NULL);
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_elementwise[] = {
    {"Add", etrt_cpu_add},
    {"Sub", etrt_cpu_sub},
    {"Mul", etrt_cpu_mul},
    {"Div", etrt_cpu_div},
    {"Relu", etrt_cpu_relu},
    {"Pow", etrt_cpu_binary_node},
    {"Mod", etrt_cpu_binary_node},
    {"PRelu", etrt_cpu_binary_node},
    {"BitShift", etrt_cpu_binary_node},
    {"BitwiseAnd", etrt_cpu_binary_node},
    {"BitwiseOr", etrt_cpu_binary_node},
    {"BitwiseXor", etrt_cpu_binary_node},
    {"And", etrt_cpu_binary_node},
    {"Or", etrt_cpu_binary_node},
    {"Xor", etrt_cpu_binary_node},
    {"Equal", etrt_cpu_binary_node},
    {"Less", etrt_cpu_binary_node},
    {"LessOrEqual", etrt_cpu_binary_node},
    {"Greater", etrt_cpu_binary_node},
    {"GreaterOrEqual", etrt_cpu_binary_node},
    {NULL, NULL},
};
