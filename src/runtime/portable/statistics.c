/* Reductions the engine has no operation for, or whose ATen form differs from its
 * own: var and var_mean (with a correction), prod, max/min over one dim with their
 * indices, max/min of every element, mean into a given dtype; and group norm.
 * Every dtype is read as a double and accumulated in double; positions come from
 * each tensor's strides, so any dim order is read as it is. */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

typedef enum etrt_portable_stat_kind {
  ETRT_STAT_VAR,      /* out = variance */
  ETRT_STAT_VAR_MEAN, /* out = variance, out + 1 = mean */
  ETRT_STAT_MEAN,
  ETRT_STAT_PROD,
  ETRT_STAT_MAX, /* out = values, out + 1 = indices (int64) when `dim` names one dim */
  ETRT_STAT_MIN
} etrt_portable_stat_kind;

typedef struct etrt_portable_stat_spec {
  etrt_kernel_def def;
  etrt_portable_stat_kind kind;
  int8_t dims;       /* int or int[]? argument, else -1: every dim */
  int8_t keepdim;    /* else -1 */
  int8_t correction; /* Scalar? correction, else -1 */
  int8_t unbiased;   /* bool unbiased (var.out), else -1 */
  int8_t out;
  int8_t num_outs; /* 1 or 2 */
} etrt_portable_stat_spec;

static const etrt_portable_stat_spec *etrt_portable_stat_of(const etrt_kernel_call *call) {
  return (const etrt_portable_stat_spec *)call->def;
}

/* call->ints[0]: the dims, call->scalars[0]: their count, [1]: keepdim, [2]: correction. */
static etrt_status etrt_portable_stat_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_stat_spec *spec = etrt_portable_stat_of(call);
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  for (int k = 0; k < spec->num_outs; ++k)
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)(spec->out + k), &out));
  out = &values[call->args[spec->out]].u.tensor;
  uint32_t count = 0;
  if (spec->dims >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, (uint32_t)spec->dims, call->ints[0],
                                                ETRT_MAX_RANK, &count));
  call->scalars[0] = count;
  int64_t keepdim = 0;
  if (spec->keepdim >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, (uint32_t)spec->keepdim, &keepdim));
  call->scalars[1] = (double)keepdim;
  call->scalars[2] = 1;
  if (spec->correction >= 0 && values[call->args[spec->correction]].tag != ETRT_VALUE_NONE)
    ETRT_RETURN_IF_ERROR(
        etrt_portable_scalar_arg(call, values, (uint32_t)spec->correction, &call->scalars[2]));
  if (spec->unbiased >= 0) {
    int64_t unbiased = 1;
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, (uint32_t)spec->unbiased, &unbiased));
    call->scalars[2] = unbiased ? 1 : 0;
  }
  int needs_float = spec->kind == ETRT_STAT_VAR || spec->kind == ETRT_STAT_VAR_MEAN ||
                    spec->kind == ETRT_STAT_MEAN;
  if (needs_float && !etrt_portable_dtype_is_float(out->dtype))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the result is floating point; the out tensor is %s",
                      etrt_dtype_name(out->dtype));
  if (spec->num_outs == 2 && (spec->kind == ETRT_STAT_MAX || spec->kind == ETRT_STAT_MIN) &&
      values[call->args[spec->out + 1]].u.tensor.dtype != ETRT_DTYPE_INT64)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %d (indices) must be int64",
                      spec->out + 1);
  return ETRT_OK;
}

static etrt_status etrt_portable_stat_run(etrt_kernel_call *call, etrt_value *values,
                                          etrt_run_context *context) {
  (void)context;
  const etrt_portable_stat_spec *spec = etrt_portable_stat_of(call);
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *outs[2] = {
      &values[call->args[spec->out]].u.tensor,
      spec->num_outs == 2 ? &values[call->args[spec->out + 1]].u.tensor : NULL};
  const uint32_t count = (uint32_t)call->scalars[0];
  const int keepdim = call->scalars[1] != 0;
  int reduced[ETRT_MAX_RANK] = {0};
  for (int32_t d = 0; d < self->rank; ++d) reduced[d] = count == 0;
  for (uint32_t i = 0; i < count; ++i) {
    int64_t d = call->ints[0][i] < 0 ? call->ints[0][i] + self->rank : call->ints[0][i];
    if (d < 0 || d >= (self->rank ? self->rank : 1))
      return etrt_error(
          ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): dim %lld is out of range for rank %d",
          call->def->name, call->instruction, (long long)call->ints[0][i], self->rank);
    if (d < self->rank) reduced[d] = 1;
  }
  int64_t in_strides[ETRT_MAX_RANK], out_dims[ETRT_MAX_RANK];
  int32_t out_rank = 0;
  etrt_portable_strides(self, in_strides);
  /* Kept dims (odometer over the result) and reduced dims (odometer per result). */
  int64_t kept_sizes[ETRT_MAX_RANK], kept_in[ETRT_MAX_RANK], kept_out[2][ETRT_MAX_RANK];
  int64_t red_sizes[ETRT_MAX_RANK], red_in[ETRT_MAX_RANK];
  int32_t nk = 0, nr = 0, kept_out_dim[ETRT_MAX_RANK];
  int64_t group = 1;
  for (int32_t d = 0; d < self->rank; ++d) {
    if (reduced[d]) {
      red_sizes[nr] = self->sizes[d];
      red_in[nr++] = in_strides[d];
      group *= self->sizes[d];
      if (keepdim) out_dims[out_rank++] = 1;
    } else {
      kept_sizes[nk] = self->sizes[d];
      kept_in[nk] = in_strides[d];
      kept_out_dim[nk++] = out_rank;
      out_dims[out_rank++] = self->sizes[d];
    }
  }
  if (group == 0 && (spec->kind == ETRT_STAT_MAX || spec->kind == ETRT_STAT_MIN))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the reduction of an empty tensor has no identity",
                      call->def->name, call->instruction);
  for (int k = 0; k < spec->num_outs; ++k) {
    etrt_runtime_tensor check = *outs[k];
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, check.dtype, out_rank, out_dims));
  }
  for (int k = 0; k < spec->num_outs; ++k) {
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, outs[k], outs[k]->dtype, out_rank, out_dims));
    int64_t strides[ETRT_MAX_RANK];
    etrt_portable_strides(outs[k], strides);
    for (int32_t j = 0; j < nk; ++j) kept_out[k][j] = strides[kept_out_dim[j]];
  }
  const size_t item = etrt_dtype_size(self->dtype);
  const uint8_t *x = self->data;
  int64_t kept_index[ETRT_MAX_RANK] = {0}, base = 0, at[2] = {0};
  int64_t results = 1;
  for (int32_t j = 0; j < nk; ++j) results *= kept_sizes[j];
  for (int64_t r = 0; r < results; ++r) {
    double acc = spec->kind == ETRT_STAT_PROD ? 1.0 : 0.0, second = 0.0;
    int64_t best = 0;
    for (int pass = 0; pass < (spec->kind <= ETRT_STAT_VAR_MEAN ? 2 : 1); ++pass) {
      int64_t red_index[ETRT_MAX_RANK] = {0}, offset = base;
      for (int64_t e = 0; e < group; ++e) {
        double v = etrt_portable_scalar_load(self->dtype, x + (size_t)offset * item);
        switch (spec->kind) {
          case ETRT_STAT_VAR:
          case ETRT_STAT_VAR_MEAN:
            if (pass == 0)
              acc += v;
            else
              second += (v - acc) * (v - acc);
            break;
          case ETRT_STAT_MEAN:
            acc += v;
            break;
          case ETRT_STAT_PROD:
            acc *= v;
            break;
          case ETRT_STAT_MAX:
          case ETRT_STAT_MIN:
            /* The first NaN wins, as in ATen; else the first extreme. */
            if (e == 0 ||
                (!isnan(acc) && (isnan(v) || (spec->kind == ETRT_STAT_MAX ? v > acc : v < acc)))) {
              acc = v;
              best = e;
            }
            break;
        }
        for (int32_t j = nr - 1; j >= 0; --j) {
          offset += red_in[j];
          if (++red_index[j] < red_sizes[j]) break;
          offset -= red_in[j] * red_index[j];
          red_index[j] = 0;
        }
      }
      if (pass == 0 && spec->kind <= ETRT_STAT_VAR_MEAN) acc /= (double)group;
    }
    double value = acc;
    if (spec->kind == ETRT_STAT_MEAN) value = acc / (double)group;
    if (spec->kind <= ETRT_STAT_VAR_MEAN) {
      /* ATen's: no degrees of freedom left gives inf (or NaN for a zero sum). */
      double dof = fmax(0.0, (double)group - call->scalars[2]);
      value = dof > 0 ? second / dof : second > 0 ? INFINITY : NAN;
    }
    const size_t out_item = etrt_dtype_size(outs[0]->dtype);
    etrt_portable_scalar_store(value, outs[0]->dtype,
                               (uint8_t *)outs[0]->data + (size_t)at[0] * out_item);
    if (spec->num_outs == 2) {
      double second_value = spec->kind == ETRT_STAT_VAR_MEAN ? acc : (double)best;
      if (spec->kind != ETRT_STAT_VAR_MEAN) {
        ((int64_t *)outs[1]->data)[at[1]] = best;
      } else {
        etrt_portable_scalar_store(
            second_value, outs[1]->dtype,
            (uint8_t *)outs[1]->data + (size_t)at[1] * etrt_dtype_size(outs[1]->dtype));
      }
    }
    for (int32_t j = nk - 1; j >= 0; --j) {
      base += kept_in[j];
      at[0] += kept_out[0][j];
      at[1] += kept_out[1][j];
      if (++kept_index[j] < kept_sizes[j]) break;
      base -= kept_in[j] * kept_index[j];
      at[0] -= kept_out[0][j] * kept_index[j];
      at[1] -= kept_out[1][j] * kept_index[j];
      kept_index[j] = 0;
    }
  }
  return ETRT_OK;
}

#define STAT(var, name, nargs, kind, dims, keepdim, correction, unbiased, out, num_outs) \
  static const etrt_portable_stat_spec var = {                                           \
      {name, nargs, etrt_portable_stat_prepare, etrt_portable_stat_run},                 \
      kind,                                                                              \
      dims,                                                                              \
      keepdim,                                                                           \
      correction,                                                                        \
      unbiased,                                                                          \
      out,                                                                               \
      num_outs}

/* var.correction_out(self, int[1]? dim, *, Scalar? correction, bool keepdim, out);
 * var.out(self, int[1]? dim, bool unbiased, bool keepdim, *, out);
 * var_mean.correction_out(self, int[1]? dim, *, Scalar? correction, bool keepdim,
 * out0, out1). */
STAT(var_c, "aten::var.correction_out", 6, ETRT_STAT_VAR, 1, 3, 2, -1, 4, 1);
STAT(var_u, "aten::var.out", 6, ETRT_STAT_VAR, 1, 3, -1, 2, 4, 1);
STAT(var_mean, "aten::var_mean.correction_out", 7, ETRT_STAT_VAR_MEAN, 1, 3, 2, -1, 4, 2);
/* mean.dtype_out(self, *, ScalarType? dtype, out); prod.out(self, *, ScalarType?
 * dtype, out); prod.int_out(self, int dim, bool keepdim, *, ScalarType? dtype, out):
 * the result takes the out tensor's dtype. */
STAT(mean_all, "aten::mean.dtype_out", 4, ETRT_STAT_MEAN, -1, -1, -1, -1, 2, 1);
STAT(prod_all, "aten::prod.out", 4, ETRT_STAT_PROD, -1, -1, -1, -1, 2, 1);
STAT(prod_dim, "aten::prod.int_out", 6, ETRT_STAT_PROD, 1, 2, -1, -1, 4, 1);
/* max.dim_max(self, int dim, bool keepdim, *, max, max_values): values and int64
 * indices; max.unary_out(self, *, out): the largest element. */
STAT(max_dim, "aten::max.dim_max", 6, ETRT_STAT_MAX, 1, 2, -1, -1, 3, 2);
STAT(min_dim, "aten::min.dim_min", 6, ETRT_STAT_MIN, 1, 2, -1, -1, 3, 2);
STAT(max_all, "aten::max.unary_out", 3, ETRT_STAT_MAX, -1, -1, -1, -1, 1, 1);
STAT(min_all, "aten::min.unary_out", 3, ETRT_STAT_MIN, -1, -1, -1, -1, 1, 1);

/* native_group_norm.out(input, weight?, bias?, N, C, HxW, group, eps, *, out0, out1,
 * out2): out0 the normalized input [N, C, *], out1 the mean and out2 the reciprocal
 * standard deviation per (N, group). */
static etrt_status etrt_portable_group_norm_prepare(etrt_kernel_call *call,
                                                    const etrt_value *values) {
  const etrt_runtime_tensor *t = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
  for (uint32_t arg = 1; arg <= 2; ++arg)
    if (values[call->args[arg]].tag != ETRT_VALUE_NONE)
      ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, arg, &t));
  for (uint32_t arg = 8; arg <= 10; ++arg)
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, arg, &t));
  for (uint32_t arg = 8; arg <= 10; ++arg)
    if (!etrt_portable_dtype_is_float(values[call->args[arg]].u.tensor.dtype))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %u must be floating point", arg);
  int64_t group = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 6, &group));
  if (group < 1)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 6 (group) is %lld", (long long)group);
  call->scalars[0] = (double)group;
  return etrt_portable_scalar_arg(call, values, 7, &call->scalars[1]);
}

/* The outputs of a normalisation: y shaped as x, and two statistics of `stat_dims`.
 * y and the mean are checked on copies first, so that a refusal resizes nothing. */
static etrt_status etrt_portable_norm_outputs_fit(const etrt_kernel_call *call,
                                                  const etrt_runtime_tensor *x,
                                                  etrt_runtime_tensor *y, etrt_runtime_tensor *mean,
                                                  etrt_runtime_tensor *second, int32_t stat_rank,
                                                  const int64_t *stat_dims) {
  etrt_runtime_tensor check = *y;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, y->dtype, x->rank, x->sizes));
  check = *mean;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, mean->dtype, stat_rank, stat_dims));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, second, second->dtype, stat_rank, stat_dims));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, mean, mean->dtype, stat_rank, stat_dims));
  return etrt_portable_out_fit(call, y, y->dtype, x->rank, x->sizes);
}

static etrt_status etrt_portable_group_norm_run(etrt_kernel_call *call, etrt_value *values,
                                                etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *x = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *w =
      values[call->args[1]].tag == ETRT_VALUE_NONE ? NULL : &values[call->args[1]].u.tensor;
  const etrt_runtime_tensor *b =
      values[call->args[2]].tag == ETRT_VALUE_NONE ? NULL : &values[call->args[2]].u.tensor;
  etrt_runtime_tensor *y = &values[call->args[8]].u.tensor;
  etrt_runtime_tensor *mean_out = &values[call->args[9]].u.tensor;
  etrt_runtime_tensor *rstd_out = &values[call->args[10]].u.tensor;
  const int64_t groups = (int64_t)call->scalars[0];
  if (x->rank < 2 || x->sizes[1] % groups != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the input's channels (rank %d) do not split into %lld "
                      "groups",
                      call->def->name, call->instruction, x->rank, (long long)groups);
  const int64_t n = x->sizes[0], c = x->sizes[1], per = c / groups;
  int64_t spatial = 1;
  for (int32_t d = 2; d < x->rank; ++d) spatial *= x->sizes[d];
  for (int k = 0; k < 2; ++k) {
    const etrt_runtime_tensor *p = k ? b : w;
    if (p != NULL && (p->rank != 1 || p->sizes[0] != c))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the %s must have shape [%lld]", call->def->name,
                        call->instruction, k ? "bias" : "weight", (long long)c);
  }
  int64_t stat_dims[2] = {n, groups};
  ETRT_RETURN_IF_ERROR(
      etrt_portable_norm_outputs_fit(call, x, y, mean_out, rstd_out, 2, stat_dims));
  /* The spatial dims of x and y in their own orders: offsets per (n, c, s). */
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK];
  etrt_portable_strides(x, xs);
  etrt_portable_strides(y, ys);
  const size_t xi = etrt_dtype_size(x->dtype), yi = etrt_dtype_size(y->dtype);
  const double eps = call->scalars[1];
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0, sq = 0;
      for (int pass = 0; pass < 3; ++pass) {
        const double count = (double)(per * spatial), mean = sum / (count > 0 ? count : 1);
        const double rstd = 1.0 / sqrt(sq / (count > 0 ? count : 1) + eps);
        for (int64_t ic = g * per; ic < (g + 1) * per; ++ic) {
          double scale =
              w ? etrt_portable_scalar_load(
                      w->dtype, (const uint8_t *)w->data + (size_t)ic * etrt_dtype_size(w->dtype))
                : 1.0;
          double shift =
              b ? etrt_portable_scalar_load(
                      b->dtype, (const uint8_t *)b->data + (size_t)ic * etrt_dtype_size(b->dtype))
                : 0.0;
          int64_t index[ETRT_MAX_RANK] = {0};
          int64_t xo = in * xs[0] + ic * xs[1], yo = in * ys[0] + ic * ys[1];
          for (int64_t s = 0; s < spatial; ++s) {
            double v =
                etrt_portable_scalar_load(x->dtype, (const uint8_t *)x->data + (size_t)xo * xi);
            if (pass == 0)
              sum += v;
            else if (pass == 1)
              sq += (v - mean) * (v - mean);
            else
              etrt_portable_scalar_store((v - mean) * rstd * scale + shift, y->dtype,
                                         (uint8_t *)y->data + (size_t)yo * yi);
            for (int32_t d = x->rank - 1; d >= 2; --d) {
              xo += xs[d];
              yo += ys[d];
              if (++index[d] < x->sizes[d]) break;
              xo -= xs[d] * index[d];
              yo -= ys[d] * index[d];
              index[d] = 0;
            }
          }
        }
        if (pass == 2) {
          etrt_portable_scalar_store(
              mean, mean_out->dtype,
              (uint8_t *)mean_out->data +
                  (size_t)(in * groups + g) * etrt_dtype_size(mean_out->dtype));
          etrt_portable_scalar_store(
              rstd, rstd_out->dtype,
              (uint8_t *)rstd_out->data +
                  (size_t)(in * groups + g) * etrt_dtype_size(rstd_out->dtype));
        }
      }
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def group_norm = {"aten::native_group_norm.out", 12,
                                           etrt_portable_group_norm_prepare,
                                           etrt_portable_group_norm_run};

/* _native_batch_norm_legit.out(input, weight?, bias?, running_mean, running_var, bool
 * training, float momentum, float eps, *, out, save_mean, save_invstd) and
 * _native_batch_norm_legit.no_stats_out(input, weight?, bias?, bool training, float
 * momentum, float eps, *, out, save_mean, save_invstd): InstanceNorm's decomposition
 * and training-mode BatchNorm. In training the statistics are the batch's per channel
 * (over N and the spatial dims, the biased variance), save_mean and save_invstd get
 * them, and running statistics when given move by momentum towards the batch's (the
 * unbiased variance), as ATen does. Not in training the running statistics normalize
 * and save_mean / save_invstd are left empty ([0]). */
static int etrt_portable_bn_stats(const etrt_kernel_call *call) {
  return call->def->num_args == 12;
}

static etrt_status etrt_portable_bn_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const int stats = etrt_portable_bn_stats(call);
  const uint32_t first_out = stats ? 8 : 6, training_arg = stats ? 5 : 3;
  const etrt_runtime_tensor *t = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
  if (!etrt_portable_dtype_is_float(t->dtype))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 0 must be floating point, not %s",
                      etrt_dtype_name(t->dtype));
  for (uint32_t arg = 1; arg <= (stats ? 4u : 2u); ++arg)
    if (values[call->args[arg]].tag != ETRT_VALUE_NONE)
      ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, arg, &t));
  for (uint32_t arg = first_out; arg < first_out + 3; ++arg) {
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, arg, &t));
    if (!etrt_portable_dtype_is_float(t->dtype))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %u must be floating point, not %s",
                        arg, etrt_dtype_name(t->dtype));
  }
  int64_t training = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, training_arg, &training));
  if (!training && !stats)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 3 (training) is false and there are no running statistics");
  if (!training && (values[call->args[3]].tag == ETRT_VALUE_NONE ||
                    values[call->args[4]].tag == ETRT_VALUE_NONE))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 5 (training) is false: running_mean and running_var are needed");
  for (uint32_t arg = 3; training && stats && arg <= 4; ++arg)
    if (values[call->args[arg]].tag != ETRT_VALUE_NONE && values[call->args[arg]].u.tensor.constant)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "argument %u (%s) is a constant; training updates it in place", arg,
                        arg == 3 ? "running_mean" : "running_var");
  call->scalars[0] = (double)training;
  ETRT_RETURN_IF_ERROR(
      etrt_portable_scalar_arg(call, values, training_arg + 1, &call->scalars[1]));   /* momentum */
  return etrt_portable_scalar_arg(call, values, training_arg + 2, &call->scalars[2]); /* eps */
}

/* The element of a 1-D tensor `t` at `i` (fallback when t is NULL). */
static double etrt_portable_bn_param(const etrt_runtime_tensor *t, int64_t i, double fallback) {
  return t == NULL ? fallback
                   : etrt_portable_scalar_load(t->dtype, (const uint8_t *)t->data +
                                                             (size_t)i * etrt_dtype_size(t->dtype));
}

static etrt_status etrt_portable_bn_run(etrt_kernel_call *call, etrt_value *values,
                                        etrt_run_context *context) {
  (void)context;
  const int stats = etrt_portable_bn_stats(call);
  const uint32_t first_out = stats ? 8 : 6;
  const etrt_runtime_tensor *p[5] = {NULL}; /* input, weight, bias, running mean, var */
  for (uint32_t arg = 0; arg < (stats ? 5u : 3u); ++arg)
    if (values[call->args[arg]].tag != ETRT_VALUE_NONE) p[arg] = &values[call->args[arg]].u.tensor;
  const etrt_runtime_tensor *x = p[0];
  etrt_runtime_tensor *y = &values[call->args[first_out]].u.tensor;
  etrt_runtime_tensor *mean_out = &values[call->args[first_out + 1]].u.tensor;
  etrt_runtime_tensor *invstd_out = &values[call->args[first_out + 2]].u.tensor;
  const int training = call->scalars[0] != 0;
  const double momentum = call->scalars[1], eps = call->scalars[2];
  if (x->rank < 2)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the input has rank %d; [N, C, ...] is needed",
                      call->def->name, call->instruction, x->rank);
  const int64_t n = x->sizes[0], c = x->sizes[1];
  int64_t spatial = 1;
  for (int32_t d = 2; d < x->rank; ++d) spatial *= x->sizes[d];
  static const char *const names[5] = {"input", "weight", "bias", "running_mean", "running_var"};
  for (int k = 1; k < 5; ++k)
    if (p[k] != NULL && (p[k]->rank != 1 || p[k]->sizes[0] != c))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the %s must have shape [%lld]", call->def->name,
                        call->instruction, names[k], (long long)c);
  const int64_t stat_dims[1] = {training ? c : 0};
  /* Every shape is checked before anything is written. */
  ETRT_RETURN_IF_ERROR(
      etrt_portable_norm_outputs_fit(call, x, y, mean_out, invstd_out, 1, stat_dims));
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK];
  etrt_portable_strides(x, xs);
  etrt_portable_strides(y, ys);
  const size_t xi = etrt_dtype_size(x->dtype), yi = etrt_dtype_size(y->dtype);
  const double count = (double)(n * spatial);
  for (int64_t ic = 0; ic < c; ++ic) {
    double mean = 0, var = 0, sum = 0, sq = 0;
    if (!training) {
      mean = etrt_portable_bn_param(p[3], ic, 0);
      var = etrt_portable_bn_param(p[4], ic, 1);
    }
    for (int pass = training ? 0 : 2; pass < 3; ++pass) {
      if (training && pass == 1) mean = sum / (count > 0 ? count : 1);
      if (training && pass == 2) var = sq / (count > 0 ? count : 1);
      const double invstd = 1.0 / sqrt(var + eps);
      const double scale = etrt_portable_bn_param(p[1], ic, 1) * invstd;
      const double shift = etrt_portable_bn_param(p[2], ic, 0) - mean * scale;
      for (int64_t in = 0; in < n; ++in) {
        int64_t index[ETRT_MAX_RANK] = {0};
        int64_t xo = in * xs[0] + ic * xs[1], yo = in * ys[0] + ic * ys[1];
        for (int64_t s = 0; s < spatial; ++s) {
          double v =
              etrt_portable_scalar_load(x->dtype, (const uint8_t *)x->data + (size_t)xo * xi);
          if (pass == 0)
            sum += v;
          else if (pass == 1)
            sq += (v - mean) * (v - mean);
          else
            etrt_portable_scalar_store(v * scale + shift, y->dtype,
                                       (uint8_t *)y->data + (size_t)yo * yi);
          for (int32_t d = x->rank - 1; d >= 2; --d) {
            xo += xs[d];
            yo += ys[d];
            if (++index[d] < x->sizes[d]) break;
            xo -= xs[d] * index[d];
            yo -= ys[d] * index[d];
            index[d] = 0;
          }
        }
      }
    }
    if (!training) continue;
    const double invstd = 1.0 / sqrt(var + eps);
    etrt_portable_scalar_store(
        mean, mean_out->dtype,
        (uint8_t *)mean_out->data + (size_t)ic * etrt_dtype_size(mean_out->dtype));
    etrt_portable_scalar_store(
        invstd, invstd_out->dtype,
        (uint8_t *)invstd_out->data + (size_t)ic * etrt_dtype_size(invstd_out->dtype));
    /* The running statistics are updated in place (they are mutable buffers). */
    for (int k = 3; k < 5; ++k) {
      if (p[k] == NULL) continue;
      const double batch = k == 3 ? mean : var * (count > 1 ? count / (count - 1) : 1);
      uint8_t *at = (uint8_t *)p[k]->data + (size_t)ic * etrt_dtype_size(p[k]->dtype);
      etrt_portable_scalar_store(
          (1 - momentum) * etrt_portable_scalar_load(p[k]->dtype, at) + momentum * batch,
          p[k]->dtype, at);
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def batch_norm_legit = {"aten::_native_batch_norm_legit.out", 12,
                                                 etrt_portable_bn_prepare, etrt_portable_bn_run};
static const etrt_kernel_def batch_norm_no_stats = {"aten::_native_batch_norm_legit.no_stats_out",
                                                    10, etrt_portable_bn_prepare,
                                                    etrt_portable_bn_run};

const etrt_kernel_def *const etrt_portable_statistics[] = {
    &var_c.def,    &var_u.def,        &var_mean.def,        &mean_all.def, &prod_all.def,
    &prod_dim.def, &max_dim.def,      &min_dim.def,         &max_all.def,  &min_all.def,
    &group_norm,   &batch_norm_legit, &batch_norm_no_stats, NULL,
};
