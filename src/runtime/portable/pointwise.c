/* Elementwise functions the engine has no operation for (expm1, log2, trunc, elu,
 * atan2, fmod, remainder, floor_divide, rsub, div with a rounding mode, clamp with
 * tensor bounds, isnan, sign, ...): one loop over up to three broadcast operands that
 * reads every dtype as a double, applies the function and writes the out tensor's
 * dtype. Positions come from each tensor's strides, so any dim order is read as it
 * is and the operands need not share one. */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

#define ETRT_MAP_MAX_INPUTS 3

typedef enum etrt_portable_map_kind {
  ETRT_MAP_FLOAT,   /* a floating-point result: integer and bool inputs are promoted */
  ETRT_MAP_SAME,    /* the result has the operands' promoted dtype (the out tensor's) */
  ETRT_MAP_BOOL,    /* a bool result */
  ETRT_MAP_INTEGER, /* integers and bools only (bitwise operators) */
  ETRT_MAP_CAST     /* any dtype to any: floats to integers truncate, as ATen's copies do */
} etrt_portable_map_kind;

/* The function of one element: x the operands, p the parameters (call->scalars), and
 * `fault` set where the result is undefined for integers (a zero divisor). */
typedef double (*etrt_portable_map_fn)(const double *x, const double *p, int integer, int *fault);

typedef struct etrt_portable_map_spec {
  etrt_kernel_def def;
  etrt_portable_map_fn fn;
  etrt_portable_map_kind kind;
  /* A tensor argument, ETRT_PORTABLE_SCALAR(arg), or -1 past the last. An optional
   * tensor that is None reads as NaN and clears bit k of call->scalars[3]. */
  int8_t inputs[ETRT_MAP_MAX_INPUTS];
  int8_t params[3]; /* Scalar arguments into call->scalars[0..2] (None: NaN), or -1 */
  int8_t out;
  /* Reads other arguments into call->scalars (div's rounding mode). */
  etrt_status (*hook)(etrt_kernel_call *call, const etrt_value *values);
} etrt_portable_map_spec;

static const etrt_portable_map_spec *etrt_portable_map_of(const etrt_kernel_call *call) {
  return (const etrt_portable_map_spec *)call->def;
}

static etrt_status etrt_portable_map_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_map_spec *spec = etrt_portable_map_of(call);
  const etrt_runtime_tensor *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &out));
  int any_float = 0, present = 0;
  for (int k = 0; k < ETRT_MAP_MAX_INPUTS && spec->inputs[k] != -1; ++k) {
    int src = spec->inputs[k];
    if (src < 0) {
      uint32_t arg = (uint32_t)(ETRT_PORTABLE_SCALAR(0) - src);
      double value = 0;
      ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, arg, &value));
      memcpy(call->scalar_bytes[k], &value, sizeof value);
      any_float |= values[call->args[arg]].tag == ETRT_VALUE_DOUBLE;
      present |= 1 << k;
      continue;
    }
    if (values[call->args[src]].tag == ETRT_VALUE_NONE && k > 0) continue;
    const etrt_runtime_tensor *t = NULL;
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)src, &t));
    any_float |= etrt_portable_dtype_is_float(t->dtype);
    present |= 1 << k;
  }
  call->scalars[3] = present;
  call->scalars[4] = 0;
  for (int k = 0; k < 3; ++k) {
    if (spec->params[k] < 0) continue;
    call->scalars[k] = NAN;
    if (values[call->args[spec->params[k]]].tag != ETRT_VALUE_NONE)
      ETRT_RETURN_IF_ERROR(
          etrt_portable_scalar_arg(call, values, (uint32_t)spec->params[k], &call->scalars[k]));
  }
  if (spec->hook != NULL) ETRT_RETURN_IF_ERROR(spec->hook(call, values));
  const int out_float = etrt_portable_dtype_is_float(out->dtype);
  if (spec->kind == ETRT_MAP_BOOL && out->dtype != ETRT_DTYPE_BOOL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor must be bool, not %s",
                      etrt_dtype_name(out->dtype));
  if (spec->kind == ETRT_MAP_FLOAT && !out_float)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the result is floating point; the out tensor is %s",
                      etrt_dtype_name(out->dtype));
  if (spec->kind == ETRT_MAP_INTEGER && (any_float || out_float))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "bitwise operators take integers and bools, not floating point");
  if (spec->kind == ETRT_MAP_SAME && any_float && !out_float)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "a floating-point operand; the result cannot be written to the %s out tensor",
                      etrt_dtype_name(out->dtype));
  if (etrt_dtype_size(out->dtype) == 0)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "the out tensor's dtype %s is not supported",
                      etrt_dtype_name(out->dtype));
  return ETRT_OK;
}

static etrt_status etrt_portable_map_run(etrt_kernel_call *call, etrt_value *values,
                                         etrt_run_context *context) {
  (void)context;
  const etrt_portable_map_spec *spec = etrt_portable_map_of(call);
  const etrt_runtime_tensor *in[ETRT_MAP_MAX_INPUTS] = {NULL};
  int n = 0, rank = 0;
  for (; n < ETRT_MAP_MAX_INPUTS && spec->inputs[n] != -1; ++n) {
    int src = spec->inputs[n];
    if (src < 0 || values[call->args[src]].tag == ETRT_VALUE_NONE) continue;
    in[n] = &values[call->args[src]].u.tensor;
    if (in[n]->rank > rank) rank = in[n]->rank;
  }
  /* The broadcast shape, aligned on the last dim. */
  int64_t dims[ETRT_MAX_RANK];
  for (int d = 0; d < rank; ++d) dims[d] = 1;
  for (int k = 0; k < n; ++k) {
    if (in[k] == NULL) continue;
    for (int d = 0; d < in[k]->rank; ++d) {
      int64_t size = in[k]->sizes[d], *at = &dims[rank - in[k]->rank + d];
      if (size == *at || size == 1) continue;
      if (*at != 1)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): operand %d's dim %d (%lld) does not broadcast "
                          "with %lld",
                          call->def->name, call->instruction, k, d, (long long)size,
                          (long long)*at);
      *at = size;
    }
  }
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, dims));
  int64_t strides[ETRT_MAP_MAX_INPUTS + 1][ETRT_MAX_RANK] = {{0}}, own[ETRT_MAX_RANK];
  for (int k = 0; k < n; ++k) {
    if (in[k] == NULL) continue;
    etrt_portable_strides(in[k], own);
    for (int d = 0; d < in[k]->rank; ++d)
      strides[k][rank - in[k]->rank + d] = in[k]->sizes[d] == 1 ? 0 : own[d];
  }
  etrt_portable_strides(out, strides[n]);
  size_t item[ETRT_MAP_MAX_INPUTS + 1];
  for (int k = 0; k < n; ++k) item[k] = in[k] != NULL ? etrt_dtype_size(in[k]->dtype) : 0;
  item[n] = etrt_dtype_size(out->dtype);
  const int integer = !etrt_portable_dtype_is_float(out->dtype);
  int64_t numel = etrt_portable_numel(out), index[ETRT_MAX_RANK] = {0};
  int64_t at[ETRT_MAP_MAX_INPUTS + 1] = {0};
  double x[ETRT_MAP_MAX_INPUTS] = {0};
  for (int k = 0; k < n; ++k) {
    x[k] = NAN; /* an absent optional operand */
    if (spec->inputs[k] < 0) memcpy(&x[k], call->scalar_bytes[k], sizeof x[k]);
  }
  int fault = 0;
  /* float32 throughout (most programs): elements read and written without the
   * per-dtype switch. */
  int all_f32 = out->dtype == ETRT_DTYPE_FLOAT32;
  for (int k = 0; k < n; ++k) all_f32 &= in[k] == NULL || in[k]->dtype == ETRT_DTYPE_FLOAT32;
  for (int64_t e = 0; e < numel; ++e) {
    for (int k = 0; k < n; ++k)
      if (in[k] != NULL)
        x[k] = all_f32 ? (double)((const float *)in[k]->data)[at[k]]
                       : etrt_portable_scalar_load(
                             in[k]->dtype, (const uint8_t *)in[k]->data + (size_t)at[k] * item[k]);
    double y = spec->fn(x, call->scalars, integer, &fault);
    if (integer && !isfinite(y)) y = 0; /* a NaN cast to an integer is undefined in C */
    if (all_f32)
      ((float *)out->data)[at[n]] = (float)y;
    else
      etrt_portable_scalar_store(y, out->dtype, (uint8_t *)out->data + (size_t)at[n] * item[n]);
    for (int d = rank - 1; d >= 0; --d) {
      for (int k = 0; k <= n; ++k) at[k] += strides[k][d];
      if (++index[d] < dims[d]) break;
      for (int k = 0; k <= n; ++k) at[k] -= strides[k][d] * index[d];
      index[d] = 0;
    }
  }
  if (fault)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): integer division by zero",
                      call->def->name, call->instruction);
  return ETRT_OK;
}

/* The functions. */
static double etrt_map_expm1(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return expm1(x[0]);
}
static double etrt_map_log1p(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return log1p(x[0]);
}
static double etrt_map_log2(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return log2(x[0]);
}
static double etrt_map_log10(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return log10(x[0]);
}
static double etrt_map_trunc(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return trunc(x[0]);
}
static double etrt_map_sign(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return isnan(x[0]) ? x[0] : (x[0] > 0) - (x[0] < 0);
}
static double etrt_map_isnan(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return isnan(x[0]) != 0;
}
static double etrt_map_isinf(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return isinf(x[0]) != 0;
}
/* logit(x, eps?): log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps is given. */
static double etrt_map_logit(const double *x, const double *p, int i, int *f) {
  (void)i, (void)f;
  double z = x[0];
  if (!isnan(p[0])) z = z < p[0] ? p[0] : z > 1 - p[0] ? 1 - p[0] : z;
  return log(z / (1 - z));
}
/* elu(x, alpha, scale, input_scale). */
static double etrt_map_elu(const double *x, const double *p, int i, int *f) {
  (void)i, (void)f;
  return x[0] > 0 ? p[1] * x[0] : p[1] * p[0] * expm1(x[0] * p[2]);
}
static double etrt_map_atan2(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return atan2(x[0], x[1]);
}
/* fmod: the sign of the dividend; remainder: the sign of the divisor (Python's %). */
static double etrt_map_fmod(const double *x, const double *p, int integer, int *fault) {
  (void)p;
  if (integer && x[1] == 0) return *fault = 1, 0;
  return fmod(x[0], x[1]);
}
static double etrt_map_remainder(const double *x, const double *p, int integer, int *fault) {
  (void)p;
  if (integer && x[1] == 0) return *fault = 1, 0;
  double r = fmod(x[0], x[1]);
  return r != 0 && ((r < 0) != (x[1] < 0)) ? r + x[1] : r;
}
/* div with rounding_mode p[0]: 0 true division, 1 "trunc", 2 "floor". */
static double etrt_map_div_mode(const double *x, const double *p, int integer, int *fault) {
  if (integer && x[1] == 0) return *fault = 1, 0;
  double q = x[0] / x[1];
  if (p[0] == 1) return trunc(q);
  if (p[0] == 2) {
    if (integer) { /* exact for integers: the quotient rounded toward -inf */
      double t = trunc(q);
      return (t * x[1] != x[0] && (x[0] < 0) != (x[1] < 0)) ? t - 1 : t;
    }
    return floor(q);
  }
  return q;
}
/* rsub(self, other, alpha) = other - alpha * self. */
static double etrt_map_rsub(const double *x, const double *p, int i, int *f) {
  (void)i, (void)f;
  return x[1] - p[0] * x[0];
}
static double etrt_map_pow(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return pow(x[0], x[1]);
}
/* An operand as an integer (bitwise operators take integers and bools; a value out of
 * int64's range, which a C conversion would leave undefined, reads as 0). */
static int64_t etrt_map_int(double v) { return v >= -9.2e18 && v <= 9.2e18 ? (int64_t)v : 0; }
static double etrt_map_and(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return (double)(etrt_map_int(x[0]) & etrt_map_int(x[1]));
}
static double etrt_map_or(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return (double)(etrt_map_int(x[0]) | etrt_map_int(x[1]));
}
static double etrt_map_xor(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  return (double)(etrt_map_int(x[0]) ^ etrt_map_int(x[1]));
}
/* Shifts as ATen's: a left shift by a negative count or one past int64's width gives 0,
 * a right shift then fills with the sign; the store wraps the result to the out
 * tensor's width. */
static double etrt_map_shl(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  int64_t a = etrt_map_int(x[0]), b = etrt_map_int(x[1]);
  if (b < 0 || b > 63) return 0;
  return (double)(int64_t)((uint64_t)a << b);
}
static double etrt_map_shr(const double *x, const double *p, int i, int *f) {
  (void)p, (void)i, (void)f;
  int64_t a = etrt_map_int(x[0]), b = etrt_map_int(x[1]);
  if (b < 0 || b > 63) b = 63;
  return (double)(a < 0 ? ~(~a >> b) : a >> b);
}
/* clamp(x, min?, max?): an absent bound (bit clear in p[3]) does not apply; a NaN
 * bound or operand gives NaN, as in ATen. */
static double etrt_map_clamp(const double *x, const double *p, int i, int *f) {
  (void)i, (void)f;
  int present = (int)p[3];
  double y = x[0];
  if (isnan(y)) return y;
  if (present & 2) y = isnan(x[1]) ? x[1] : y < x[1] ? x[1] : y;
  if (present & 4) y = isnan(x[2]) ? x[2] : y > x[2] ? x[2] : y;
  return y;
}

/* The last operand (copies and fills: the value, broadcast to the others' shape). */
static double etrt_map_last(const double *x, const double *p, int i, int *f) {
  (void)i, (void)f;
  return x[(int)p[4]];
}

/* div.out_mode(self, other, *, str? rounding_mode, out) and div.Scalar_mode_out. */
static etrt_status etrt_portable_div_mode(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_value *v = &values[call->args[2]];
  call->scalars[0] = 0;
  if (v->tag == ETRT_VALUE_NONE) return ETRT_OK;
  if (v->tag != ETRT_VALUE_STRING)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument 2 (rounding_mode) must be a string");
  if (v->u.string.size == 5 && memcmp(v->u.string.data, "trunc", 5) == 0)
    call->scalars[0] = 1;
  else if (v->u.string.size == 5 && memcmp(v->u.string.data, "floor", 5) == 0)
    call->scalars[0] = 2;
  else
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 2 (rounding_mode) must be 'trunc' or 'floor', not '%.*s'",
                      (int)(v->u.string.size > 32 ? 32 : v->u.string.size), v->u.string.data);
  return ETRT_OK;
}
/* floor_divide.out(self, other, *, out): div with rounding_mode "floor". */
static etrt_status etrt_portable_floor_mode(etrt_kernel_call *call, const etrt_value *values) {
  (void)values;
  call->scalars[0] = 2;
  return ETRT_OK;
}

#define S ETRT_PORTABLE_SCALAR
#define MAP(var, name, nargs, fn, kind, i0, i1, i2, p0, p1, p2, out, hook) \
  static const etrt_portable_map_spec var = {                              \
      {name, nargs, etrt_portable_map_prepare, etrt_portable_map_run},     \
      fn,                                                                  \
      kind,                                                                \
      {i0, i1, i2},                                                        \
      {p0, p1, p2},                                                        \
      out,                                                                 \
      hook}
/* (self, *, out). */
#define MAP1(var, name, fn, kind) MAP(var, name, 3, fn, kind, 0, -1, -1, -1, -1, -1, 1, NULL)
/* (self, other, *, out) and (self, Scalar other, *, out). */
#define MAP2(var, name, fn, kind) MAP(var, name, 4, fn, kind, 0, 1, -1, -1, -1, -1, 2, NULL)
#define MAP2S(var, name, fn, kind) MAP(var, name, 4, fn, kind, 0, S(1), -1, -1, -1, -1, 2, NULL)

MAP1(expm1_, "aten::expm1.out", etrt_map_expm1, ETRT_MAP_FLOAT);
MAP1(log1p_, "aten::log1p.out", etrt_map_log1p, ETRT_MAP_FLOAT);
MAP1(log2_, "aten::log2.out", etrt_map_log2, ETRT_MAP_FLOAT);
MAP1(log10_, "aten::log10.out", etrt_map_log10, ETRT_MAP_FLOAT);
MAP1(trunc_, "aten::trunc.out", etrt_map_trunc, ETRT_MAP_SAME);
MAP1(sign, "aten::sign.out", etrt_map_sign, ETRT_MAP_SAME);
MAP1(isnan_, "aten::isnan.out", etrt_map_isnan, ETRT_MAP_BOOL);
MAP1(isinf_, "aten::isinf.out", etrt_map_isinf, ETRT_MAP_BOOL);
/* logit.out(self, float? eps, *, out); elu.out(self, alpha, scale, input_scale, *, out). */
MAP(logit, "aten::logit.out", 4, etrt_map_logit, ETRT_MAP_FLOAT, 0, -1, -1, 1, -1, -1, 2, NULL);
MAP(elu, "aten::elu.out", 6, etrt_map_elu, ETRT_MAP_FLOAT, 0, -1, -1, 1, 2, 3, 4, NULL);
MAP2(atan2_, "aten::atan2.out", etrt_map_atan2, ETRT_MAP_FLOAT);
MAP2(fmod_t, "aten::fmod.Tensor_out", etrt_map_fmod, ETRT_MAP_SAME);
MAP2S(fmod_s, "aten::fmod.Scalar_out", etrt_map_fmod, ETRT_MAP_SAME);
MAP2(remainder_t, "aten::remainder.Tensor_out", etrt_map_remainder, ETRT_MAP_SAME);
MAP2S(remainder_s, "aten::remainder.Scalar_out", etrt_map_remainder, ETRT_MAP_SAME);
MAP(floor_divide, "aten::floor_divide.out", 4, etrt_map_div_mode, ETRT_MAP_SAME, 0, 1, -1, -1, -1,
    -1, 2, etrt_portable_floor_mode);
MAP(div_mode, "aten::div.out_mode", 5, etrt_map_div_mode, ETRT_MAP_SAME, 0, 1, -1, -1, -1, -1, 3,
    etrt_portable_div_mode);
MAP(div_s_mode, "aten::div.Scalar_mode_out", 5, etrt_map_div_mode, ETRT_MAP_SAME, 0, S(1), -1, -1,
    -1, -1, 3, etrt_portable_div_mode);
/* rsub.Scalar_out(self, Scalar other, Scalar alpha, *, out). */
MAP(rsub, "aten::rsub.Scalar_out", 5, etrt_map_rsub, ETRT_MAP_SAME, 0, S(1), -1, 2, -1, -1, 3,
    NULL);
/* pow.Scalar_out(Scalar self, Tensor exponent, *, out). */
MAP(pow_s, "aten::pow.Scalar_out", 4, etrt_map_pow, ETRT_MAP_SAME, S(0), 1, -1, -1, -1, -1, 2,
    NULL);
MAP2S(and_s, "aten::bitwise_and.Scalar_out", etrt_map_and, ETRT_MAP_INTEGER);
MAP2S(or_s, "aten::bitwise_or.Scalar_out", etrt_map_or, ETRT_MAP_INTEGER);
MAP2S(xor_s, "aten::bitwise_xor.Scalar_out", etrt_map_xor, ETRT_MAP_INTEGER);
MAP2(shl_t, "aten::bitwise_left_shift.Tensor_out", etrt_map_shl, ETRT_MAP_INTEGER);
MAP2S(shl_s, "aten::bitwise_left_shift.Tensor_Scalar_out", etrt_map_shl, ETRT_MAP_INTEGER);
MAP2(shr_t, "aten::bitwise_right_shift.Tensor_out", etrt_map_shr, ETRT_MAP_INTEGER);
MAP2S(shr_s, "aten::bitwise_right_shift.Tensor_Scalar_out", etrt_map_shr, ETRT_MAP_INTEGER);
/* clamp.Tensor_out(self, Tensor? min, Tensor? max, *, out). */
MAP(clamp_t, "aten::clamp.Tensor_out", 5, etrt_map_clamp, ETRT_MAP_SAME, 0, 1, 2, -1, -1, -1, 3,
    NULL);

/* Which operand etrt_map_last returns. */
static etrt_status etrt_portable_second(etrt_kernel_call *call, const etrt_value *values) {
  (void)values;
  call->scalars[4] = 1;
  return ETRT_OK;
}
/* _to_copy.out(self, *, bool non_blocking, MemoryFormat? memory_format, out): a cast
 * (the out tensor's dim order is its own); copy.out(self, src, bool non_blocking, *,
 * out): src broadcast to self's shape; fill.Scalar_out(self, Scalar value, *, out) and
 * fill.Tensor_out(self, Tensor value, *, out). */
MAP(to_copy, "aten::_to_copy.out", 5, etrt_map_last, ETRT_MAP_CAST, 0, -1, -1, -1, -1, -1, 3, NULL);
MAP(copy, "aten::copy.out", 5, etrt_map_last, ETRT_MAP_CAST, 0, 1, -1, -1, -1, -1, 3,
    etrt_portable_second);
/* _conj_physical.out(self, *, out): real tensors are their own conjugates. */
MAP(conj, "aten::_conj_physical.out", 3, etrt_map_last, ETRT_MAP_CAST, 0, -1, -1, -1, -1, -1, 1,
    NULL);
MAP(fill_s, "aten::fill.Scalar_out", 4, etrt_map_last, ETRT_MAP_CAST, 0, S(1), -1, -1, -1, -1, 2,
    etrt_portable_second);
MAP(fill_t, "aten::fill.Tensor_out", 4, etrt_map_last, ETRT_MAP_CAST, 0, 1, -1, -1, -1, -1, 2,
    etrt_portable_second);

/* copy_(self, src, bool non_blocking) -> self: in place, src broadcast to self's shape
 * (never self to src's) and cast to its dtype. The return value is self's tensor; where
 * the program gave it bytes of its own, they get the result too. */
static etrt_status etrt_portable_copy_inplace_run(etrt_kernel_call *call, etrt_value *values,
                                                  etrt_run_context *context) {
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *src = &values[call->args[1]].u.tensor;
  int fits = src->rank <= self->rank;
  for (int32_t d = 0; fits && d < src->rank; ++d) {
    int64_t size = src->sizes[d], want = self->sizes[self->rank - src->rank + d];
    fits = size == want || size == 1;
  }
  if (!fits)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): src (rank %d) does not broadcast to self's shape",
                      call->def->name, call->instruction, src->rank);
  ETRT_RETURN_IF_ERROR(etrt_portable_map_run(call, values, context));
  etrt_value *ret = &values[call->args[3]];
  if (ret->tag == ETRT_VALUE_TENSOR && ret->u.tensor.data != self->data &&
      ret->u.tensor.data != NULL) {
    ETRT_RETURN_IF_ERROR(
        etrt_portable_out_fit(call, &ret->u.tensor, self->dtype, self->rank, self->sizes));
    memcpy(ret->u.tensor.data, self->data, etrt_runtime_tensor_nbytes(self));
  }
  return ETRT_OK;
}

static etrt_status etrt_portable_copy_inplace_prepare(etrt_kernel_call *call,
                                                      const etrt_value *values) {
  ETRT_RETURN_IF_ERROR(etrt_portable_map_prepare(call, values));
  const etrt_value *ret = &values[call->args[3]];
  if (ret->tag != ETRT_VALUE_TENSOR) return ETRT_OK;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  if (ret->u.tensor.dtype != self->dtype || ret->u.tensor.rank != self->rank ||
      memcmp(ret->u.tensor.dim_order, self->dim_order, (size_t)self->rank) != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the return value (%s, rank %d) must have self's dtype (%s), rank and dim "
                      "order",
                      etrt_dtype_name(ret->u.tensor.dtype), ret->u.tensor.rank,
                      etrt_dtype_name(self->dtype));
  return ETRT_OK;
}

static const etrt_portable_map_spec copy_inplace = {
    {"aten::copy_", 4, etrt_portable_copy_inplace_prepare, etrt_portable_copy_inplace_run},
    etrt_map_last,
    ETRT_MAP_CAST,
    {0, 1, -1},
    {-1, -1, -1},
    0,
    etrt_portable_second};

/* glu.out(self, int dim, *, out): a * sigmoid(b), a and b the halves of self along dim. */
static etrt_status etrt_portable_glu_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 2, &out));
  if (!etrt_portable_dtype_is_float(self->dtype) || out->dtype != self->dtype || self->rank == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "glu takes a floating-point tensor of rank 1 or more and an out tensor of "
                      "its dtype");
  int64_t dim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
  if (dim < 0) dim += self->rank;
  if (dim < 0 || dim >= self->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 1 (dim) is out of range for rank %d",
                      self->rank);
  call->ints[0][0] = dim;
  return ETRT_OK;
}

static etrt_status etrt_portable_glu_run(etrt_kernel_call *call, etrt_value *values,
                                         etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[2]].u.tensor;
  const int64_t dim = call->ints[0][0], half = self->sizes[dim] / 2;
  if (self->sizes[dim] % 2 != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): dim %lld has odd size %lld", call->def->name,
                      call->instruction, (long long)dim, (long long)self->sizes[dim]);
  int64_t dims[ETRT_MAX_RANK];
  memcpy(dims, self->sizes, sizeof dims);
  dims[dim] = half;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, self->rank, dims));
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], pos[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(out);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t a = 0, y = 0;
    for (int32_t d = 0; d < self->rank; ++d) {
      a += pos[d] * xs[d];
      y += pos[d] * ys[d];
    }
    const uint8_t *x = self->data;
    double first = etrt_portable_scalar_load(self->dtype, x + (size_t)a * item);
    double gate = etrt_portable_scalar_load(self->dtype, x + (size_t)(a + half * xs[dim]) * item);
    etrt_portable_scalar_store(first / (1.0 + exp(-gate)), out->dtype,
                               (uint8_t *)out->data + (size_t)y * item);
    for (int32_t d = self->rank - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def glu = {"aten::glu.out", 4, etrt_portable_glu_prepare,
                                    etrt_portable_glu_run};

const etrt_kernel_def *const etrt_portable_pointwise[] = {
    &glu,
    &to_copy.def,
    &copy.def,
    &copy_inplace.def,
    &conj.def,
    &shl_t.def,
    &shl_s.def,
    &shr_t.def,
    &shr_s.def,
    &fill_s.def,
    &fill_t.def,
    &expm1_.def,
    &log1p_.def,
    &log2_.def,
    &log10_.def,
    &trunc_.def,
    &sign.def,
    &isnan_.def,
    &isinf_.def,
    &logit.def,
    &elu.def,
    &atan2_.def,
    &fmod_t.def,
    &fmod_s.def,
    &remainder_t.def,
    &remainder_s.def,
    &floor_divide.def,
    &div_mode.def,
    &div_s_mode.def,
    &rsub.def,
    &pow_s.def,
    &and_s.def,
    &or_s.def,
    &xor_s.def,
    &clamp_t.def,
    NULL,
};
