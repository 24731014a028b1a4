/* The portable kernels' arguments: reading tensors, scalars and int lists from the
 * value table, fitting an out tensor to a result's shape, and moving one element
 * between a dtype and a double. */
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "base/status.h"
#include "runtime/portable/portable.h"

etrt_status etrt_portable_tensor_arg(const etrt_kernel_call *call, const etrt_value *values,
                                     uint32_t arg, const etrt_runtime_tensor **out) {
  const etrt_value *v = &values[call->args[arg]];
  if (v->tag == ETRT_VALUE_NONE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "argument %u is None; this kernel needs a tensor",
                      arg);
  if (v->tag != ETRT_VALUE_TENSOR)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u must be a tensor", arg);
  if (v->u.tensor.device.type != ETRT_DEVICE_CPU)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "argument %u is planned on a device; this operator runs on the CPU", arg);
  *out = &v->u.tensor;
  return ETRT_OK;
}

etrt_status etrt_portable_contiguous_arg(const etrt_kernel_call *call, const etrt_value *values,
                                         uint32_t arg, const etrt_runtime_tensor **out) {
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, arg, out));
  if ((*out)->permuted)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "argument %u has a dim order other than the contiguous one (channels-last), "
                      "which this operator does not take",
                      arg);
  return ETRT_OK;
}

etrt_status etrt_portable_scalar_arg(const etrt_kernel_call *call, const etrt_value *values,
                                     uint32_t arg, double *out) {
  const etrt_value *value = &values[call->args[arg]];
  switch (value->tag) {
    case ETRT_VALUE_INT:
      *out = (double)value->u.i;
      return ETRT_OK;
    case ETRT_VALUE_DOUBLE:
      *out = value->u.d;
      return ETRT_OK;
    case ETRT_VALUE_BOOL:
      *out = value->u.b ? 1.0 : 0.0;
      return ETRT_OK;
    default:
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u must be a scalar", arg);
  }
}

etrt_status etrt_portable_int_arg(const etrt_kernel_call *call, const etrt_value *values,
                                  uint32_t arg, int64_t *out) {
  const etrt_value *value = &values[call->args[arg]];
  if (value->tag == ETRT_VALUE_INT) {
    *out = value->u.i;
    return ETRT_OK;
  }
  if (value->tag == ETRT_VALUE_BOOL) {
    *out = value->u.b != 0;
    return ETRT_OK;
  }
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u must be an int", arg);
}

etrt_status etrt_portable_ints_arg(const etrt_kernel_call *call, const etrt_value *values,
                                   uint32_t arg, int64_t *items, uint32_t capacity,
                                   uint32_t *count) {
  const etrt_value *value = &values[call->args[arg]];
  *count = 0;
  if (value->tag == ETRT_VALUE_NONE) return ETRT_OK;
  if (value->tag == ETRT_VALUE_INT) {
    items[0] = value->u.i;
    *count = 1;
    return ETRT_OK;
  }
  if (value->tag != ETRT_VALUE_INT_LIST)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u must be a list of ints", arg);
  if (value->u.int_list.count > capacity)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "argument %u has %u ints, at most %u are supported",
                      arg, value->u.int_list.count, capacity);
  /* ExecuTorch lists hold the value indices of their Int values (bounds-checked when
   * the method was created). */
  for (uint32_t i = 0; i < value->u.int_list.count; ++i) {
    const etrt_value *item = &values[value->u.int_list.items[i]];
    if (item->tag != ETRT_VALUE_INT)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u: item %u is not an int", arg, i);
    items[i] = item->u.i;
  }
  *count = value->u.int_list.count;
  return ETRT_OK;
}

etrt_status etrt_portable_attribute(etrt_kernel_call *call, etrt_attribute attribute) {
  if (call->num_attributes >= ETRT_KERNEL_MAX_ATTRIBUTES)
    return etrt_error(ETRT_ERROR_INTERNAL, "too many attributes");
  call->attributes[call->num_attributes++] = attribute;
  return ETRT_OK;
}

static void etrt_portable_dims_format(int32_t rank, const int64_t *dims, char *text, size_t size) {
  size_t used = (size_t)snprintf(text, size, "[");
  for (int32_t i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(text + used, size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
  if (used < size) snprintf(text + used, size - used, "]");
}

etrt_status etrt_portable_out_fit(const etrt_kernel_call *call, etrt_runtime_tensor *out,
                                  etrt_dtype dtype, int32_t rank, const int64_t *dims) {
  if (dtype != out->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the result is %s, the out tensor %s", call->def->name,
                      call->instruction, etrt_dtype_name(dtype), etrt_dtype_name(out->dtype));
  if (rank == out->rank && memcmp(dims, out->sizes, (size_t)rank * sizeof *dims) == 0)
    return ETRT_OK;
  etrt_runtime_tensor resized = *out;
  resized.rank = rank;
  memcpy(resized.sizes, dims, (size_t)rank * sizeof *dims);
  size_t need = etrt_runtime_tensor_nbytes(&resized);
  if (!out->dynamic || rank != out->rank || need > out->capacity) {
    char got[160], planned[160];
    etrt_portable_dims_format(rank, dims, got, sizeof got);
    etrt_portable_dims_format(out->rank, out->dynamic ? out->max_sizes : out->sizes, planned,
                              sizeof planned);
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the result's shape %s does not fit the out tensor "
                      "(%s %s)",
                      call->def->name, call->instruction, got,
                      out->dynamic ? "bounded by" : "planned as", planned);
  }
  memcpy(out->sizes, dims, (size_t)rank * sizeof *dims);
  return ETRT_OK;
}

etrt_status etrt_portable_scalar_store(double value, etrt_dtype dtype, void *out) {
  /* Integers go through int64 and wrap to their width: a double outside a narrower
   * type's range (or NaN) converted directly would be undefined behaviour in C. */
  const int64_t whole = (value >= -9.2e18 && value <= 9.2e18) ? (int64_t)value : 0;
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      *(float *)out = (float)value;
      return ETRT_OK;
    case ETRT_DTYPE_FLOAT64:
      *(double *)out = value;
      return ETRT_OK;
    case ETRT_DTYPE_FLOAT16:
      *(uint16_t *)out = etrt_float_to_half((float)value);
      return ETRT_OK;
    case ETRT_DTYPE_BFLOAT16:
      *(uint16_t *)out = etrt_float_to_bfloat16((float)value);
      return ETRT_OK;
    case ETRT_DTYPE_BOOL:
      *(uint8_t *)out = value != 0.0;
      return ETRT_OK;
    case ETRT_DTYPE_UINT8:
      *(uint8_t *)out = (uint8_t)(uint64_t)whole;
      return ETRT_OK;
    case ETRT_DTYPE_INT8:
      *(int8_t *)out = (int8_t)(uint8_t)(uint64_t)whole;
      return ETRT_OK;
    case ETRT_DTYPE_INT16:
      *(int16_t *)out = (int16_t)(uint16_t)(uint64_t)whole;
      return ETRT_OK;
    case ETRT_DTYPE_INT32:
      *(int32_t *)out = (int32_t)(uint32_t)(uint64_t)whole;
      return ETRT_OK;
    case ETRT_DTYPE_INT64:
      *(int64_t *)out = whole;
      return ETRT_OK;
    default:
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "a scalar of %s is not supported",
                        etrt_dtype_name(dtype));
  }
}

double etrt_portable_scalar_load(etrt_dtype dtype, const void *at) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      return *(const float *)at;
    case ETRT_DTYPE_FLOAT64:
      return *(const double *)at;
    case ETRT_DTYPE_FLOAT16:
      return etrt_half_to_float(*(const uint16_t *)at);
    case ETRT_DTYPE_BFLOAT16:
      return etrt_bfloat16_to_float(*(const uint16_t *)at);
    case ETRT_DTYPE_BOOL:
    case ETRT_DTYPE_UINT8:
      return *(const uint8_t *)at;
    case ETRT_DTYPE_INT8:
      return *(const int8_t *)at;
    case ETRT_DTYPE_INT16:
      return *(const int16_t *)at;
    case ETRT_DTYPE_INT32:
      return *(const int32_t *)at;
    case ETRT_DTYPE_INT64:
      return (double)*(const int64_t *)at;
    default:
      return 0;
  }
}

int etrt_portable_dtype_is_float(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT64 ||
         dtype == ETRT_DTYPE_FLOAT16 || dtype == ETRT_DTYPE_BFLOAT16;
}

void etrt_portable_strides(const etrt_runtime_tensor *t, int64_t *strides) {
  int64_t step = 1;
  for (int32_t k = t->rank - 1; k >= 0; --k) {
    strides[t->dim_order[k]] = step;
    step *= t->sizes[t->dim_order[k]];
  }
}

int64_t etrt_portable_numel(const etrt_runtime_tensor *t) {
  int64_t numel = 1;
  for (int32_t i = 0; i < t->rank; ++i) numel *= t->sizes[i];
  return numel;
}
