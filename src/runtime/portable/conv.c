/* convolution.out on the engine's Conv, and the pools: _adaptive_avg_pool2d to 1x1 on
 * GlobalAveragePool, avg_pool2d on the engine's pool (max_pool2d_with_indices is in resample.c). */
#include "runtime/portable/portable.h"

/* Copies an int[] argument of one (repeated) or `spatial` items into ints[slot]. */
static etrt_status etrt_portable_spatial(etrt_kernel_call *call, const etrt_value *values,
                                         uint32_t arg, uint32_t spatial, int slot,
                                         int64_t fallback) {
  uint32_t count = 0;
  int64_t *items = call->ints[slot];
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, arg, items, ETRT_MAX_RANK, &count));
  if (count == 0) {
    for (uint32_t i = 0; i < spatial; ++i) items[i] = fallback;
  } else if (count == 1) {
    for (uint32_t i = 1; i < spatial; ++i) items[i] = items[0];
  } else if (count != spatial) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %u has %u items, not %u", arg, count,
                      spatial);
  }
  return ETRT_OK;
}

/* Symmetric ATen padding [p0, p1] as ONNX pads [p0, p1, p0, p1]. */
static void etrt_portable_pads(etrt_kernel_call *call, int slot, uint32_t spatial) {
  for (uint32_t i = 0; i < spatial; ++i) call->ints[slot][spatial + i] = call->ints[slot][i];
}

static etrt_status etrt_portable_ints_attribute(etrt_kernel_call *call, const char *name, int slot,
                                                uint32_t count) {
  return etrt_portable_attribute(
      call,
      (etrt_attribute){
          .name = name, .kind = ETRT_ATTRIBUTE_INTS, .count = count, .ints = call->ints[slot]});
}

/* convolution.out(input, weight, bias?, stride, padding, dilation, transposed,
 * output_padding, groups, *, out). */
static etrt_status etrt_portable_conv_attributes(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *input = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &input));
  if (input->rank < 3)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the input must have rank 3 or more");
  uint32_t spatial = (uint32_t)input->rank - 2;
  int64_t transposed = 0, groups = 1;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 6, &transposed));
  if (transposed)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "argument 6 (transposed): not supported");
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 8, &groups));
  ETRT_RETURN_IF_ERROR(etrt_portable_spatial(call, values, 3, spatial, 0, 1));
  ETRT_RETURN_IF_ERROR(etrt_portable_spatial(call, values, 4, spatial, 1, 0));
  ETRT_RETURN_IF_ERROR(etrt_portable_spatial(call, values, 5, spatial, 2, 1));
  etrt_portable_pads(call, 1, spatial);
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_attribute(call, "strides", 0, spatial));
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_attribute(call, "pads", 1, 2 * spatial));
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_attribute(call, "dilations", 2, spatial));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "group", .kind = ETRT_ATTRIBUTE_INT, .i = groups});
}
static const etrt_portable_spec convolution =
    ETRT_PORTABLE_ENGINE_FULL("aten::convolution.out", 11, "Conv", 0, 1, 2, 2, 9, -1, -1, 0, NULL,
                              etrt_portable_conv_attributes, NULL, 0);

/* _adaptive_avg_pool2d.out(self, SymInt[2] output_size, *, out): the 1x1 case. */
static etrt_status etrt_portable_adaptive_attributes(etrt_kernel_call *call,
                                                     const etrt_value *values) {
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(
      etrt_portable_ints_arg(call, values, 1, call->ints[0], ETRT_MAX_RANK, &count));
  for (uint32_t i = 0; i < count; ++i)
    if (call->ints[0][i] != 1)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "argument 1 (output_size): only 1x1 is supported");
  return ETRT_OK;
}
static const etrt_portable_spec adaptive_avg_pool2d =
    ETRT_PORTABLE_HOOKED("aten::_adaptive_avg_pool2d.out", 4, "GlobalAveragePool", 0, -1, -1, 2,
                         etrt_portable_adaptive_attributes);
static const etrt_portable_spec adaptive_avg_pool2d_public =
    ETRT_PORTABLE_HOOKED("aten::adaptive_avg_pool2d.out", 4, "GlobalAveragePool", 0, -1, -1, 2,
                         etrt_portable_adaptive_attributes);

/* avg_pool2d.out(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override?, *, out). */
static etrt_status etrt_portable_avg_pool_attributes(etrt_kernel_call *call,
                                                     const etrt_value *values) {
  int64_t ceil_mode = 0, count_include_pad = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_spatial(call, values, 1, 2, 0, 1));
  ETRT_RETURN_IF_ERROR(etrt_portable_spatial(call, values, 2, 2, 1, 0));
  if (call->ints[1][0] == 0) { /* stride [] means the kernel size */
    call->ints[1][0] = call->ints[0][0];
    call->ints[1][1] = call->ints[0][1];
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_spatial(call, values, 3, 2, 2, 0));
  etrt_portable_pads(call, 2, 2);
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 4, &ceil_mode));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 5, &count_include_pad));
  if (values[call->args[6]].tag != ETRT_VALUE_NONE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "argument 6 (divisor_override): not supported");
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_attribute(call, "kernel_shape", 0, 2));
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_attribute(call, "strides", 1, 2));
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_attribute(call, "pads", 2, 4));
  ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
      call, (etrt_attribute){.name = "ceil_mode", .kind = ETRT_ATTRIBUTE_INT, .i = ceil_mode}));
  return etrt_portable_attribute(
      call, (etrt_attribute){
                .name = "count_include_pad", .kind = ETRT_ATTRIBUTE_INT, .i = count_include_pad});
}
static const etrt_portable_spec avg_pool2d = ETRT_PORTABLE_HOOKED(
    "aten::avg_pool2d.out", 9, "AveragePool", 0, -1, -1, 7, etrt_portable_avg_pool_attributes);

const etrt_kernel_def *const etrt_portable_conv[] = {
    &convolution.def,
    &adaptive_avg_pool2d.def,
    &adaptive_avg_pool2d_public.def,
    &avg_pool2d.def,
    NULL,
};
