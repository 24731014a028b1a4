/* Reductions over dims: mean, sum, amax, amin (keepdim), argmax/argmin. */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

/* (self, int[]? dim, bool keepdim, ...): the dims as "axes" (none: every axis). */
static etrt_status etrt_portable_reduce_attributes(etrt_kernel_call *call,
                                                   const etrt_value *values) {
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(
      etrt_portable_ints_arg(call, values, 1, call->ints[0], ETRT_MAX_RANK, &count));
  int64_t keepdim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &keepdim));
  if (count > 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
        call,
        (etrt_attribute){
            .name = "axes", .kind = ETRT_ATTRIBUTE_INTS, .count = count, .ints = call->ints[0]}));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "keepdims", .kind = ETRT_ATTRIBUTE_INT, .i = keepdim});
}

/* mean.out / sum.IntList_out(self, int[1]? dim, bool keepdim, *, ScalarType? dtype, out):
 * the result keeps self's dtype (a dtype argument that changes it is refused by the
 * out tensor's dtype check). */
static const etrt_portable_spec mean = ETRT_PORTABLE_HOOKED(
    "aten::mean.out", 6, "ReduceMean", 0, -1, -1, 4, etrt_portable_reduce_attributes);
static const etrt_portable_spec sum = ETRT_PORTABLE_HOOKED(
    "aten::sum.IntList_out", 6, "ReduceSum", 0, -1, -1, 4, etrt_portable_reduce_attributes);
/* amax.out(self, int[1] dim, bool keepdim, *, out). */
static const etrt_portable_spec amax = ETRT_PORTABLE_HOOKED("aten::amax.out", 5, "ReduceMax", 0, -1,
                                                            -1, 3, etrt_portable_reduce_attributes);
static const etrt_portable_spec amin = ETRT_PORTABLE_HOOKED("aten::amin.out", 5, "ReduceMin", 0, -1,
                                                            -1, 3, etrt_portable_reduce_attributes);

/* argmax.out(self, int? dim, bool keepdim, *, out): int64 indices. */
static etrt_status etrt_portable_arg_attributes(etrt_kernel_call *call, const etrt_value *values) {
  if (values[call->args[1]].tag == ETRT_VALUE_NONE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "argument 1 (dim): None (flattened) is not supported");
  int64_t dim = 0, keepdim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &keepdim));
  ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
      call, (etrt_attribute){.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = dim}));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "keepdims", .kind = ETRT_ATTRIBUTE_INT, .i = keepdim});
}
static const etrt_portable_spec argmax = ETRT_PORTABLE_HOOKED(
    "aten::argmax.out", 5, "ArgMax", 0, -1, -1, 3, etrt_portable_arg_attributes);
static const etrt_portable_spec argmin = ETRT_PORTABLE_HOOKED(
    "aten::argmin.out", 5, "ArgMin", 0, -1, -1, 3, etrt_portable_arg_attributes);

/* any / all: a bool (or uint8) that says whether any / every element over the dims
 * is non-zero (NaN counts as non-zero). */
typedef struct etrt_portable_truth_spec {
  etrt_kernel_def def;
  int all;
  int8_t dims;    /* int or int[]? dims argument, else -1 (every dim) */
  int8_t keepdim; /* else -1 */
  int8_t out;
} etrt_portable_truth_spec;

static etrt_status etrt_portable_truth_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_truth_spec *spec = (const etrt_portable_truth_spec *)call->def;
  const etrt_runtime_tensor *t = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &t));
  if (t->dtype != ETRT_DTYPE_BOOL && t->dtype != ETRT_DTYPE_UINT8)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor must be bool or uint8, not %s",
                      etrt_dtype_name(t->dtype));
  uint32_t count = 0;
  if (spec->dims >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, (uint32_t)spec->dims, call->ints[0],
                                                ETRT_MAX_RANK, &count));
  call->scalars[0] = count;
  int64_t keepdim = 0;
  if (spec->keepdim >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, (uint32_t)spec->keepdim, &keepdim));
  call->scalars[1] = (double)keepdim;
  return ETRT_OK;
}

static etrt_status etrt_portable_truth_run(etrt_kernel_call *call, etrt_value *values,
                                           etrt_run_context *context) {
  (void)context;
  const etrt_portable_truth_spec *spec = (const etrt_portable_truth_spec *)call->def;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  const uint32_t count = (uint32_t)call->scalars[0];
  int reduced[ETRT_MAX_RANK] = {0};
  for (int32_t i = 0; i < self->rank; ++i) reduced[i] = count == 0; /* none or []: every dim */
  for (uint32_t i = 0; i < count; ++i) {
    int64_t d = call->ints[0][i] < 0 ? call->ints[0][i] + self->rank : call->ints[0][i];
    if (d < 0 || d >= (self->rank ? self->rank : 1))
      return etrt_error(
          ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): dim %lld is out of range for rank %d",
          call->def->name, call->instruction, (long long)call->ints[0][i], self->rank);
    if (d < self->rank) reduced[d] = 1;
  }
  int64_t dims[ETRT_MAX_RANK], strides[ETRT_MAX_RANK], xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK];
  int32_t rank = 0, kept[ETRT_MAX_RANK];
  int64_t out_numel = 1;
  for (int32_t i = 0; i < self->rank; ++i) {
    kept[i] = -1;
    if (!reduced[i] || call->scalars[1] != 0) {
      if (!reduced[i]) kept[i] = rank;
      dims[rank++] = reduced[i] ? 1 : self->sizes[i];
    }
    if (!reduced[i]) out_numel *= self->sizes[i];
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, dims));
  /* Both tensors are walked by their own strides: any dim order. */
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  for (int32_t i = 0; i < self->rank; ++i) strides[i] = kept[i] < 0 ? 0 : ys[kept[i]];
  uint8_t *y = out->data;
  memset(y, spec->all ? 1 : 0, (size_t)out_numel);
  const size_t item = etrt_dtype_size(self->dtype);
  int64_t index[ETRT_MAX_RANK] = {0}, at = 0, from = 0, numel = 1;
  for (int32_t i = 0; i < self->rank; ++i) numel *= self->sizes[i];
  for (int64_t e = 0; e < numel; ++e) {
    int truth = etrt_portable_scalar_load(self->dtype,
                                          (const uint8_t *)self->data + (size_t)from * item) != 0.0;
    if (spec->all ? !truth : truth) y[at] = spec->all ? 0 : 1;
    for (int32_t i = self->rank - 1; i >= 0; --i) { /* next index, row-major */
      at += strides[i];
      from += xs[i];
      if (++index[i] < self->sizes[i]) break;
      at -= strides[i] * index[i];
      from -= xs[i] * index[i];
      index[i] = 0;
    }
  }
  return ETRT_OK;
}

#define TRUTH(var, name, nargs, all_, dims_, keepdim_, out_)               \
  static const etrt_portable_truth_spec var = {                            \
      {name, nargs, etrt_portable_truth_prepare, etrt_portable_truth_run}, \
      all_,                                                                \
      dims_,                                                               \
      keepdim_,                                                            \
      out_}
/* any.out(self, int dim, bool keepdim, *, out); any.dims_out(self, int[]? dim, bool
 * keepdim, *, out); any.all_out(self, *, out); all likewise. */
TRUTH(any_dim, "aten::any.out", 5, 0, 1, 2, 3);
TRUTH(any_dims, "aten::any.dims_out", 5, 0, 1, 2, 3);
TRUTH(any_all, "aten::any.all_out", 3, 0, -1, -1, 1);
TRUTH(all_dim, "aten::all.out", 5, 1, 1, 2, 3);
TRUTH(all_dims, "aten::all.dims_out", 5, 1, 1, 2, 3);
TRUTH(all_all, "aten::all.all_out", 3, 1, -1, -1, 1);

/* cumsum.out(self, int dim, *, ScalarType? dtype, out): the running sum along dim (a
 * dtype that changes the result is refused by the out tensor's dtype check). */
static const etrt_portable_spec cumsum = ETRT_PORTABLE_ENGINE(
    "aten::cumsum.out", 5, "CumSum", 0, ETRT_PORTABLE_INT(1), -1, -1, 3, -1, -1, 0);

/* allclose.out(self, other, float rtol, float atol, bool equal_nan, bool dummy_param, *,
 * out): ExecuTorch's form of allclose, its answer in a one-element bool out tensor:
 * whether |self - other| <= atol + rtol * |other| everywhere (equal infinities are
 * close; NaNs only with equal_nan). self and other have one shape. */
static etrt_status etrt_portable_allclose_prepare(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  const etrt_runtime_tensor *a = NULL, *b = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &a));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &b));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 6, &out));
  if (out->dtype != ETRT_DTYPE_BOOL || etrt_portable_numel(out) != 1)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the out tensor must be a single bool, not %s with %lld elements",
                      etrt_dtype_name(out->dtype), (long long)etrt_portable_numel(out));
  if (a->dtype != b->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "self is %s, other %s",
                      etrt_dtype_name(a->dtype), etrt_dtype_name(b->dtype));
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 2, &call->scalars[0]));
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 3, &call->scalars[1]));
  int64_t equal_nan = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 4, &equal_nan));
  call->scalars[2] = (double)equal_nan;
  return ETRT_OK;
}

static etrt_status etrt_portable_allclose_run(etrt_kernel_call *call, etrt_value *values,
                                              etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *a = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *b = &values[call->args[1]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[6]].u.tensor;
  if (a->rank != b->rank || memcmp(a->sizes, b->sizes, (size_t)a->rank * sizeof *a->sizes) != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): self and other differ in shape", call->def->name,
                      call->instruction);
  int64_t as[ETRT_MAX_RANK], bs[ETRT_MAX_RANK], index[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(a, as);
  etrt_portable_strides(b, bs);
  const size_t item = etrt_dtype_size(a->dtype);
  const double rtol = call->scalars[0], atol = call->scalars[1];
  const int equal_nan = call->scalars[2] != 0;
  int close = 1;
  for (int64_t e = 0, n = etrt_portable_numel(a), x = 0, y = 0; e < n && close; ++e) {
    const double u =
        etrt_portable_scalar_load(a->dtype, (const uint8_t *)a->data + (size_t)x * item);
    const double v =
        etrt_portable_scalar_load(b->dtype, (const uint8_t *)b->data + (size_t)y * item);
    if (isnan(u) || isnan(v))
      close = equal_nan && isnan(u) && isnan(v);
    else if (u != v)
      close = isfinite(u) && isfinite(v) && fabs(u - v) <= atol + rtol * fabs(v);
    for (int32_t d = a->rank - 1; d >= 0; --d) {
      x += as[d];
      y += bs[d];
      if (++index[d] < a->sizes[d]) break;
      x -= as[d] * index[d];
      y -= bs[d] * index[d];
      index[d] = 0;
    }
  }
  *(uint8_t *)out->data = (uint8_t)close;
  return ETRT_OK;
}

static const etrt_kernel_def allclose = {"aten::allclose.out", 8, etrt_portable_allclose_prepare,
                                         etrt_portable_allclose_run};

const etrt_kernel_def *const etrt_portable_reduce[] = {
    &cumsum.def,   &any_dim.def, &any_dims.def, &any_all.def, &all_dim.def,
    &all_dims.def, &all_all.def, &mean.def,     &sum.def,     &amax.def,
    &amin.def,     &argmax.def,  &argmin.def,   &allclose,    NULL,
};
