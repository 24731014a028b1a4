/* Normalizations on the engine's: _native_batch_norm_legit_no_training and
 * native_layer_norm. Both return three tensors (out0, out1, out2 and then the list of
 * the three as the return value): layer norm writes the result, the mean and the
 * reciprocal standard deviation; batch norm without training only the result
 * (ExecuTorch's out1/out2 are empty there). Weight and bias must be tensors (None is
 * refused at prepare). RMSNorm is exported as pow/mean/add/rsqrt/mul. */
#include "runtime/portable/portable.h"

/* (input, weight?, bias?, running_mean, running_var, momentum, eps, *, out0, out1, out2). */
static etrt_status etrt_portable_batch_norm_attributes(etrt_kernel_call *call,
                                                       const etrt_value *values) {
  double eps = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 6, &eps));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "epsilon", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)eps});
}
static const etrt_portable_spec batch_norm = ETRT_PORTABLE_ENGINE5(
    "aten::_native_batch_norm_legit_no_training.out", 11, "BatchNormalization", 0, 1, 2, 3, 4, -1,
    7, -1, -1, 0, NULL, etrt_portable_batch_norm_attributes, NULL, 0);

/* (input, int[] normalized_shape, weight?, bias?, eps, *, out0, out1, out2): the last
 * len(normalized_shape) axes. */
static etrt_status etrt_portable_layer_norm_attributes(etrt_kernel_call *call,
                                                       const etrt_value *values) {
  int64_t shape[ETRT_MAX_RANK];
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 1, shape, ETRT_MAX_RANK, &count));
  if (count == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 1 (normalized_shape) is empty");
  double eps = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 4, &eps));
  ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
      call, (etrt_attribute){.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = -(int64_t)count}));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "epsilon", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)eps});
}
static const etrt_portable_spec layer_norm = ETRT_PORTABLE_ENGINE_FULL(
    "aten::native_layer_norm.out", 9, "LayerNormalization", 0, 2, 3, 3, 5, -1, -1,
    ETRT_PORTABLE_THREE_OUTS, NULL, etrt_portable_layer_norm_attributes, NULL, 0);

const etrt_kernel_def *const etrt_portable_norm[] = {&batch_norm.def, &layer_norm.def, NULL};
