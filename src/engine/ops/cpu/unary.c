/* CPU kernels of the one-input elementwise operations (see ops/unary.c). */
#include <string.h>
#include <tgmath.h>

#include "engine/ops/cpu/map.h"
#include "engine/ops/cpu/parallel_map.h"
#include "engine/ops/cpu/vector_math.h"
#include "engine/ops/op_check.h"
#include "engine/ops/unary.h"

/* Negation through unsigned arithmetic: wraps for the most negative value instead of
 * overflowing. */
#define ETRT_NEGATE(v) (0 - (uint64_t)(v))

/* fmax(0, fmin(1, t)) with the same results (NaN gives 1, as fmin(1, NaN) is 1) but as
 * comparisons, which vectorise, rather than a libm call per element. */
static inline float etrt_clamp01_f(float t) {
  float m = t < 1.0f ? t : 1.0f;
  return m > 0.0f ? m : 0.0f;
}
static inline double etrt_clamp01_d(double t) {
  double m = t < 1.0 ? t : 1.0;
  return m > 0.0 ? m : 0.0;
}
#define ETRT_CLAMP01(t) _Generic((t), double : etrt_clamp01_d, default : etrt_clamp01_f)(t)

static etrt_status etrt_cpu_unary_float(const etrt_unary_state *s, const etrt_tensor *in,
                                        etrt_tensor *out, int64_t n) {
  const int negative = (s->flags & ETRT_UNARY_DETECT_NEGATIVE) != 0;
  const int positive = (s->flags & ETRT_UNARY_DETECT_POSITIVE) != 0;
  switch (s->kind) {
    case ETRT_UNARY_ABS:
      ETRT_MAP_FLOATS(fabs(v));
      break;
    case ETRT_UNARY_NEG:
      ETRT_MAP_FLOATS(-v);
      break;
    case ETRT_UNARY_CEIL:
      ETRT_MAP_FLOATS(ceil(v));
      break;
    case ETRT_UNARY_FLOOR:
      ETRT_MAP_FLOATS(floor(v));
      break;
    case ETRT_UNARY_ROUND:
      ETRT_MAP_FLOATS(nearbyint(v));
      break; /* ties to even */
    case ETRT_UNARY_SQRT:
      ETRT_MAP_FLOATS(sqrt(v));
      break;
    case ETRT_UNARY_RECIPROCAL:
      ETRT_MAP_FLOATS((T)1 / v);
      break;
    case ETRT_UNARY_EXP:
      ETRT_MAP_FLOATS(exp(v));
      break;
    case ETRT_UNARY_LOG:
      ETRT_MAP_FLOATS(log(v));
      break;
    case ETRT_UNARY_SIN:
      ETRT_MAP_FLOATS(sin(v));
      break;
    case ETRT_UNARY_COS:
      ETRT_MAP_FLOATS(cos(v));
      break;
    case ETRT_UNARY_TAN:
      ETRT_MAP_FLOATS(tan(v));
      break;
    case ETRT_UNARY_ASIN:
      ETRT_MAP_FLOATS(asin(v));
      break;
    case ETRT_UNARY_ACOS:
      ETRT_MAP_FLOATS(acos(v));
      break;
    case ETRT_UNARY_ATAN:
      ETRT_MAP_FLOATS(atan(v));
      break;
    case ETRT_UNARY_SINH:
      ETRT_MAP_FLOATS(sinh(v));
      break;
    case ETRT_UNARY_COSH:
      ETRT_MAP_FLOATS(cosh(v));
      break;
    case ETRT_UNARY_TANH:
      ETRT_MAP_FLOATS(tanh(v));
      break;
    case ETRT_UNARY_ASINH:
      ETRT_MAP_FLOATS(asinh(v));
      break;
    case ETRT_UNARY_ACOSH:
      ETRT_MAP_FLOATS(acosh(v));
      break;
    case ETRT_UNARY_ATANH:
      ETRT_MAP_FLOATS(atanh(v));
      break;
    case ETRT_UNARY_ERF:
      if (in->dtype == ETRT_DTYPE_FLOAT32) {
        etrt_cpu_erf_f32(in->data, out->data, n);
        return ETRT_OK;
      }
      ETRT_MAP_FLOATS(erf(v));
      break;
    case ETRT_UNARY_SIGN:
      ETRT_MAP_FLOATS(v > 0 ? (T)1 : v < 0 ? (T)-1 : v);
      break;
    case ETRT_UNARY_ISNAN:
      ETRT_MAP_FLOATS_TO_BOOL(isnan(v));
      break;
    case ETRT_UNARY_ISINF:
      ETRT_MAP_FLOATS_TO_BOOL(isinf(v) && (v > 0 ? positive : negative));
      break;
    case ETRT_UNARY_SIGMOID:
      if (in->dtype == ETRT_DTYPE_FLOAT32) {
        etrt_cpu_sigmoid_f32(in->data, out->data, n);
        return ETRT_OK;
      }
      /* written so that neither branch overflows */
      ETRT_MAP_FLOATS(v >= 0 ? (T)1 / ((T)1 + exp(-v)) : exp(v) / ((T)1 + exp(v)));
      break;
    case ETRT_UNARY_HARD_SIGMOID: {
      const float alpha = s->alpha, beta = s->beta;
      ETRT_MAP_FLOATS(ETRT_CLAMP01((T)alpha * v + (T)beta));
      break;
    }
    case ETRT_UNARY_HARD_SWISH:
      if (in->dtype == ETRT_DTYPE_FLOAT32) {
        etrt_cpu_hard_swish_f32(in->data, out->data, n);
        return ETRT_OK;
      }
      ETRT_MAP_FLOATS(v * ETRT_CLAMP01(v * (T)(1.0 / 6.0) + (T)0.5));
      break;
    case ETRT_UNARY_LEAKY_RELU: {
      const float alpha = s->alpha;
      ETRT_MAP_FLOATS(v < 0 ? (T)alpha * v : v);
      break;
    }
    case ETRT_UNARY_ELU: {
      const float alpha = s->alpha;
      ETRT_MAP_FLOATS(v < 0 ? (T)alpha * expm1(v) : v);
      break;
    }
    case ETRT_UNARY_SELU: {
      const float alpha = s->alpha, gamma = s->gamma;
      ETRT_MAP_FLOATS(v <= 0 ? (T)gamma * ((T)alpha * exp(v) - (T)alpha) : (T)gamma * v);
      break;
    }
    case ETRT_UNARY_CELU: {
      const float alpha = s->alpha;
      ETRT_MAP_FLOATS(fmax((T)0, v) + fmin((T)0, (T)alpha * expm1(v / (T)alpha)));
      break;
    }
    case ETRT_UNARY_SOFTPLUS:
      /* log(1 + e^v) without overflow for large v */
      ETRT_MAP_FLOATS(v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)));
      break;
    case ETRT_UNARY_SOFTSIGN:
      ETRT_MAP_FLOATS(v / ((T)1 + fabs(v)));
      break;
    case ETRT_UNARY_THRESHOLDED_RELU: {
      const float alpha = s->alpha;
      ETRT_MAP_FLOATS(v > (T)alpha ? v : (T)0);
      break;
    }
    case ETRT_UNARY_GELU:
      if (s->flags & ETRT_UNARY_GELU_TANH) {
        ETRT_MAP_FLOATS((T)0.5 * v *
                        ((T)1 + tanh((T)0.7978845608028654 * (v + (T)0.044715 * v * v * v))));
      } else if (in->dtype == ETRT_DTYPE_FLOAT32) {
        etrt_cpu_gelu_f32(in->data, out->data, n);
        return ETRT_OK;
      } else {
        ETRT_MAP_FLOATS((T)0.5 * v * ((T)1 + erf(v * (T)0.7071067811865476)));
      }
      break;
    case ETRT_UNARY_MISH:
      ETRT_MAP_FLOATS(v * tanh(v > 0 ? v + log1p(exp(-v)) : log1p(exp(v))));
      break;
    case ETRT_UNARY_SHRINK: {
      const float lambd = s->alpha, bias = s->beta;
      ETRT_MAP_FLOATS(v < -(T)lambd ? v + (T)bias : v > (T)lambd ? v - (T)bias : (T)0);
      break;
    }
    default:
      break;
  }
  return ETRT_ERROR_NOT_FOUND;
}

static etrt_status etrt_cpu_unary_integer(const etrt_unary_state *s, const etrt_tensor *in,
                                          etrt_tensor *out, int64_t n) {
  switch (s->kind) {
    case ETRT_UNARY_ABS:
      ETRT_MAP_SIGNED_INTS(v < 0 ? ETRT_NEGATE(v) : (uint64_t)v);
      ETRT_MAP_UNSIGNED_INTS(v);
      break;
    case ETRT_UNARY_NEG:
      ETRT_MAP_SIGNED_INTS(ETRT_NEGATE(v));
      break;
    case ETRT_UNARY_SIGN:
      ETRT_MAP_SIGNED_INTS((v > 0) - (v < 0));
      ETRT_MAP_UNSIGNED_INTS(v != 0);
      break;
    case ETRT_UNARY_BITWISE_NOT:
      ETRT_MAP_SIGNED_INTS(~v);
      ETRT_MAP_UNSIGNED_INTS(~v);
      break;
    case ETRT_UNARY_NOT:
      ETRT_MAP_LOOP(uint8_t, uint8_t, uint8_t, ETRT_MAP_SAME, ETRT_MAP_BOOL, !v);
      return ETRT_OK;
    default:
      break;
  }
  return ETRT_ERROR_NOT_FOUND;
}

static etrt_status etrt_cpu_unary_float_map(const void *ctx, const etrt_tensor *in,
                                            etrt_tensor *out, int64_t n) {
  return etrt_cpu_unary_float(ctx, in, out, n);
}

static etrt_status etrt_cpu_unary_integer_map(const void *ctx, const etrt_tensor *in,
                                              etrt_tensor *out, int64_t n) {
  return etrt_cpu_unary_integer(ctx, in, out, n);
}

etrt_status etrt_cpu_unary(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_unary_state *s = node->state;
  const etrt_tensor *in = &inputs[0];
  etrt_tensor *out = &outputs[0];
  int64_t n = etrt_tensor_numel(in);
  if (n == 0) return ETRT_OK;
  if (s->kind == ETRT_UNARY_IDENTITY) {
    if (out->data != in->data) memcpy(out->data, in->data, (size_t)n * etrt_dtype_size(in->dtype));
    return ETRT_OK;
  }
  /* An empty call tells which family has a kernel for the dtype. */
  etrt_cpu_map_fn fn = etrt_cpu_unary_float(s, in, out, 0) == ETRT_OK ? etrt_cpu_unary_float_map
                       : etrt_cpu_unary_integer(s, in, out, 0) == ETRT_OK
                           ? etrt_cpu_unary_integer_map
                           : NULL;
  if (fn == NULL)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "no CPU kernel for input type %s",
                         etrt_dtype_name(in->dtype));
  return etrt_cpu_map_parallel(in, out, n, fn, s);
}

/* Clip: lo/hi from the optional inputs (same dtype as x), else from the attributes
 * (float types only), else the dtype's whole range. */
#define ETRT_CLIP_CASE(DTYPE, SRC, CT, LOAD, STORE, LOWEST, HIGHEST)                       \
  case DTYPE: {                                                                            \
    CT lo = (CT)(LOWEST), hi = (CT)(HIGHEST);                                              \
    if (s->has_min_attribute) lo = (CT)s->min_attribute;                                   \
    if (s->has_max_attribute) hi = (CT)s->max_attribute;                                   \
    if (lo_bytes != NULL) {                                                                \
      SRC b;                                                                               \
      memcpy(&b, lo_bytes, sizeof b);                                                      \
      lo = LOAD(b);                                                                        \
    }                                                                                      \
    if (hi_bytes != NULL) {                                                                \
      SRC b;                                                                               \
      memcpy(&b, hi_bytes, sizeof b);                                                      \
      hi = LOAD(b);                                                                        \
    }                                                                                      \
    /* lo > hi gives hi everywhere, as the operator specifies */                           \
    ETRT_MAP_LOOP(SRC, SRC, CT, LOAD, STORE, v<lo ? (lo > hi ? hi : lo) : v> hi ? hi : v); \
    return ETRT_OK;                                                                        \
  }

typedef struct etrt_clip_job {
  const etrt_clip_state *s;
  const void *lo_bytes, *hi_bytes;
} etrt_clip_job;

static etrt_status etrt_cpu_clip_map(const void *ctx, const etrt_tensor *in, etrt_tensor *out,
                                     int64_t n) {
  const etrt_clip_job *job = ctx;
  const etrt_clip_state *s = job->s;
  const void *lo_bytes = job->lo_bytes, *hi_bytes = job->hi_bytes;
  switch (in->dtype) {
    ETRT_CLIP_CASE(ETRT_DTYPE_FLOAT32, float, float, ETRT_MAP_SAME, ETRT_MAP_SAME, -INFINITY,
                   INFINITY)
    ETRT_CLIP_CASE(ETRT_DTYPE_FLOAT64, double, double, ETRT_MAP_SAME, ETRT_MAP_SAME, -INFINITY,
                   INFINITY)
    ETRT_CLIP_CASE(ETRT_DTYPE_FLOAT16, uint16_t, float, etrt_half_to_float, etrt_float_to_half,
                   -INFINITY, INFINITY)
    ETRT_CLIP_CASE(ETRT_DTYPE_BFLOAT16, uint16_t, float, etrt_bfloat16_to_float,
                   etrt_float_to_bfloat16, -INFINITY, INFINITY)
    ETRT_CLIP_CASE(ETRT_DTYPE_INT8, int8_t, int8_t, ETRT_MAP_SAME, ETRT_MAP_SAME, INT8_MIN,
                   INT8_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_INT16, int16_t, int16_t, ETRT_MAP_SAME, ETRT_MAP_SAME, INT16_MIN,
                   INT16_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_INT32, int32_t, int32_t, ETRT_MAP_SAME, ETRT_MAP_SAME, INT32_MIN,
                   INT32_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_INT64, int64_t, int64_t, ETRT_MAP_SAME, ETRT_MAP_SAME, INT64_MIN,
                   INT64_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_UINT8, uint8_t, uint8_t, ETRT_MAP_SAME, ETRT_MAP_SAME, 0, UINT8_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_UINT16, uint16_t, uint16_t, ETRT_MAP_SAME, ETRT_MAP_SAME, 0,
                   UINT16_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_UINT32, uint32_t, uint32_t, ETRT_MAP_SAME, ETRT_MAP_SAME, 0,
                   UINT32_MAX)
    ETRT_CLIP_CASE(ETRT_DTYPE_UINT64, uint64_t, uint64_t, ETRT_MAP_SAME, ETRT_MAP_SAME, 0,
                   UINT64_MAX)
    default:
      break;
  }
  return ETRT_ERROR_UNSUPPORTED;
}

etrt_status etrt_cpu_clip(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  etrt_clip_job job = {
      .s = node->state,
      .lo_bytes = etrt_op_has_input(node, inputs, 1) ? etrt_op_input_host(&inputs[1]) : NULL,
      .hi_bytes = etrt_op_has_input(node, inputs, 2) ? etrt_op_input_host(&inputs[2]) : NULL};
  int64_t n = etrt_tensor_numel(&inputs[0]);
  if (n == 0) return ETRT_OK;
  if (etrt_cpu_clip_map(&job, &inputs[0], &outputs[0], 0) != ETRT_OK)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "no CPU kernel for input type %s",
                         etrt_dtype_name(inputs[0].dtype));
  return etrt_cpu_map_parallel(&inputs[0], &outputs[0], n, etrt_cpu_clip_map, &job);
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_unary[] = {
#define ETRT_CPU_UNARY_ROW(kind, name, types, to_bool) {name, etrt_cpu_unary},
    ETRT_UNARY_OPS(ETRT_CPU_UNARY_ROW)
#undef ETRT_CPU_UNARY_ROW
        {"Clip", etrt_cpu_clip},
    {NULL, NULL},
};
