/* _softmax and _log_softmax along one dim. */
#include "runtime/portable/portable.h"

/* (self, int dim, bool half_to_float, *, out). */
static etrt_status etrt_portable_softmax_attributes(etrt_kernel_call *call,
                                                    const etrt_value *values) {
  int64_t dim = 0, half_to_float = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &half_to_float));
  if (half_to_float)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "argument 2 (half_to_float) must be false");
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = dim});
}

static const etrt_portable_spec softmax = ETRT_PORTABLE_HOOKED(
    "aten::_softmax.out", 5, "Softmax", 0, -1, -1, 3, etrt_portable_softmax_attributes);
static const etrt_portable_spec log_softmax = ETRT_PORTABLE_HOOKED(
    "aten::_log_softmax.out", 5, "LogSoftmax", 0, -1, -1, 3, etrt_portable_softmax_attributes);

const etrt_kernel_def *const etrt_portable_softmax[] = {&softmax.def, &log_softmax.def, NULL};
