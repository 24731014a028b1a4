/* Tensors made from scalars, in the out tensor's dtype: full, full_like,
 * scalar_tensor, arange, zeros, ones, empty. */
#include <math.h>
#include <string.h>

#include "runtime/portable/portable.h"

typedef enum etrt_portable_fill_kind {
  ETRT_FILL_FULL,       /* (SymInt[] size, Scalar fill_value, *, out) */
  ETRT_FILL_FULL_LIKE,  /* (self, Scalar fill_value, *, MemoryFormat? memory_format, out) */
  ETRT_FILL_SCALAR,     /* scalar_tensor(Scalar s, *, out) */
  ETRT_FILL_ARANGE,     /* arange.start_out(Scalar start, Scalar end, Scalar step, *, out) */
  ETRT_FILL_ARANGE_END, /* arange.out(Scalar end, *, out): from 0 by 1 */
  ETRT_FILL_ZEROS,      /* zeros.out(SymInt[] size, *, out); empty.out(size, memory_format?, *,
                           out) too: its contents are unspecified, zeros are as good as any */
  ETRT_FILL_ONES        /* ones.out(SymInt[] size, *, out) */
} etrt_portable_fill_kind;

typedef struct etrt_portable_fill_spec {
  etrt_kernel_def def;
  etrt_portable_fill_kind kind;
  int8_t out;
} etrt_portable_fill_spec;

static const etrt_portable_fill_spec *etrt_portable_fill_of(const etrt_kernel_call *call) {
  return (const etrt_portable_fill_spec *)call->def;
}

static etrt_status etrt_portable_fill_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_fill_spec *spec = etrt_portable_fill_of(call);
  const etrt_runtime_tensor *t = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &t));
  uint32_t count = 0;
  switch (spec->kind) {
    case ETRT_FILL_FULL:
    case ETRT_FILL_ZEROS:
    case ETRT_FILL_ONES:
      ETRT_RETURN_IF_ERROR(
          etrt_portable_ints_arg(call, values, 0, call->ints[0], ETRT_MAX_RANK, &count));
      for (uint32_t i = 0; i < count; ++i)
        if (call->ints[0][i] < 0)
          return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 0: size %u is %lld", i,
                            (long long)call->ints[0][i]);
      call->scalars[0] = count;
      if (spec->kind != ETRT_FILL_FULL) {
        call->scalars[1] = spec->kind == ETRT_FILL_ONES ? 1 : 0;
        return ETRT_OK;
      }
      return etrt_portable_scalar_arg(call, values, 1, &call->scalars[1]);
    case ETRT_FILL_FULL_LIKE:
      ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
      return etrt_portable_scalar_arg(call, values, 1, &call->scalars[1]);
    case ETRT_FILL_SCALAR:
      return etrt_portable_scalar_arg(call, values, 0, &call->scalars[1]);
    default:
      if (spec->kind == ETRT_FILL_ARANGE_END) {
        call->scalars[0] = 0;
        call->scalars[2] = 1;
        ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 0, &call->scalars[1]));
      } else {
        for (uint32_t i = 0; i < 3; ++i)
          ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, i, &call->scalars[i]));
      }
      if (call->scalars[2] == 0 || !isfinite(call->scalars[0]) || !isfinite(call->scalars[1]))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "arange needs finite bounds and a non-zero step");
      if ((call->scalars[1] - call->scalars[0]) / call->scalars[2] > (double)INT64_MAX / 2)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "arange: too many elements");
      return ETRT_OK;
  }
}

static etrt_status etrt_portable_fill_run(etrt_kernel_call *call, etrt_value *values,
                                          etrt_run_context *context) {
  (void)context;
  const etrt_portable_fill_spec *spec = etrt_portable_fill_of(call);
  /* Sizes and bounds may be SymInts: read them again (no allocation). */
  ETRT_RETURN_IF_ERROR(etrt_portable_fill_prepare(call, values));
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  int32_t rank = 0;
  int64_t dims[ETRT_MAX_RANK];
  switch (spec->kind) {
    case ETRT_FILL_FULL:
    case ETRT_FILL_ZEROS:
    case ETRT_FILL_ONES:
      rank = (int32_t)call->scalars[0];
      memcpy(dims, call->ints[0], (size_t)rank * sizeof *dims);
      break;
    case ETRT_FILL_FULL_LIKE: {
      const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
      rank = self->rank;
      memcpy(dims, self->sizes, (size_t)rank * sizeof *dims);
      break;
    }
    case ETRT_FILL_SCALAR:
      break;
    default: {
      double n = ceil((call->scalars[1] - call->scalars[0]) / call->scalars[2]);
      rank = 1;
      dims[0] = n > 0 ? (int64_t)n : 0;
      break;
    }
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, dims));
  const size_t item = etrt_dtype_size(out->dtype);
  const size_t nbytes = etrt_runtime_tensor_nbytes(out);
  uint8_t *data = out->data;
  if (spec->kind == ETRT_FILL_ARANGE || spec->kind == ETRT_FILL_ARANGE_END) {
    for (int64_t i = 0; i < dims[0]; ++i)
      ETRT_RETURN_IF_ERROR(etrt_portable_scalar_store(
          call->scalars[0] + (double)i * call->scalars[2], out->dtype, data + (size_t)i * item));
    return ETRT_OK;
  }
  uint8_t one[8];
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_store(call->scalars[1], out->dtype, one));
  for (size_t at = 0; at < nbytes; at += item) memcpy(data + at, one, item);
  return ETRT_OK;
}

#define FILL(var, name, nargs, kind, out)      \
  static const etrt_portable_fill_spec var = { \
      {name, nargs, etrt_portable_fill_prepare, etrt_portable_fill_run}, kind, out}

FILL(full, "aten::full.out", 4, ETRT_FILL_FULL, 2);
FILL(full_like, "aten::full_like.out", 5, ETRT_FILL_FULL_LIKE, 3);
FILL(scalar_tensor, "aten::scalar_tensor.out", 3, ETRT_FILL_SCALAR, 1);
FILL(arange, "aten::arange.start_out", 5, ETRT_FILL_ARANGE, 3);
FILL(arange_end, "aten::arange.out", 3, ETRT_FILL_ARANGE_END, 1);
FILL(zeros, "aten::zeros.out", 3, ETRT_FILL_ZEROS, 1);
FILL(empty, "aten::empty.out", 4, ETRT_FILL_ZEROS, 2);
/* _empty_dim_order.out(int[] size, *, int[]? dim_order, out): the out tensor has its
 * dim order already. */
FILL(empty_dim_order, "dim_order_ops::_empty_dim_order.out", 4, ETRT_FILL_ZEROS, 2);
FILL(ones, "aten::ones.out", 3, ETRT_FILL_ONES, 1);

const etrt_kernel_def *const etrt_portable_fill[] = {
    &full.def,  &full_like.def, &scalar_tensor.def, &arange.def,          &arange_end.def,
    &zeros.def, &empty.def,     &ones.def,          &empty_dim_order.def, NULL,
};
