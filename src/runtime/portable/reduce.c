/* Reductions over dims: mean, sum, amax, amin (keepdim), argmax/argmin. */
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

const etrt_kernel_def *const etrt_portable_reduce[] = {
    &mean.def, &sum.def, &amax.def, &amin.def, &argmax.def, &argmin.def, NULL,
};
