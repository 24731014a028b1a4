/* et_copy::_h2d_copy.out and et_copy::_d2h_copy.out: the explicit host/device copies
 * of device-aware planning (DESIGN.md section 4). Args: [self, out, ret]. Copies go
 * on the selected stream (contract rule 5) so that they order with the delegates. */
#include <string.h>

#include "base/status.h"
#include "device/device_scope.h"
#include "runtime/kernels.h"

static etrt_status etrt_copy_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_value *self = &values[call->args[0]];
  const etrt_value *out = &values[call->args[1]];
  if (self->tag != ETRT_VALUE_TENSOR || out->tag != ETRT_VALUE_TENSOR)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "arguments 0 and 1 must be tensors");
  if (self->u.tensor.dtype != out->u.tensor.dtype || self->u.tensor.rank != out->u.tensor.rank)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "source and destination differ in dtype or rank");
  return ETRT_OK;
}

static etrt_status etrt_copy_run(etrt_kernel_call *call, etrt_value *values,
                                 etrt_run_context *context, etrt_copy_kind kind) {
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[1]].u.tensor;
  if (memcmp(self->sizes, out->sizes, (size_t)self->rank * sizeof(int64_t)) != 0) {
    if (!out->dynamic)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): source and destination shapes differ",
                        call->def->name, call->instruction);
    memcpy(out->sizes, self->sizes, sizeof out->sizes);
  }
  size_t size = etrt_runtime_tensor_nbytes(out);
  if (size == SIZE_MAX || size > out->capacity)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): %zu bytes do not fit the destination", call->def->name,
                      call->instruction, size);
  if (size == 0) return ETRT_OK;
  if (self->data == NULL || out->data == NULL)
    return etrt_error(ETRT_ERROR_STATE,
                      "%s (instruction %u): a tensor has no memory (input not set?)",
                      call->def->name, call->instruction);
  const etrt_device_driver *driver = context->driver;
  if (driver == NULL) {
    /* No GPU (CPU fallback): device-planned buffers are host memory. */
    memcpy(out->data, self->data, size);
    return ETRT_OK;
  }
  /* The caller may hand device memory for a host-planned input (or the reverse);
   * the pointers say what the copy really is. */
  etrt_pointer_info src, dst;
  ETRT_RETURN_IF_ERROR(driver->pointer_info(self->data, &src));
  ETRT_RETURN_IF_ERROR(driver->pointer_info(out->data, &dst));
  int src_device = src.kind == ETRT_POINTER_DEVICE;
  int dst_device = dst.kind == ETRT_POINTER_DEVICE;
  kind = src_device ? (dst_device ? ETRT_COPY_DEVICE_TO_DEVICE : ETRT_COPY_DEVICE_TO_HOST)
                    : (dst_device ? ETRT_COPY_HOST_TO_DEVICE : kind);
  if (!src_device && !dst_device) {
    memcpy(out->data, self->data, size);
    return ETRT_OK;
  }
  /* The copy runs on the device that owns its device side: on the selected stream
   * where that stream belongs to it, else on that device's per-thread stream,
   * synchronised at once, since nothing else would order it with its consumer. */
  int device = dst_device ? dst.device : src.device;
  int stream_device;
  ETRT_RETURN_IF_ERROR(driver->stream_device(context->stream, &stream_device));
  if (stream_device == device) {
    ETRT_RETURN_IF_ERROR(driver->memcpy_async(out->data, self->data, size, kind, context->stream));
    context->stream_has_work = 1;
    if (dst_device) return ETRT_OK;
    context->stream_has_work = 0;
    return driver->stream_synchronize(context->stream); /* host code reads it next */
  }
  /* Contract rule 2: switch only when the caller is on another device, and put the
   * caller's device back whether or not the copy succeeded. */
  etrt_device_scope scope;
  ETRT_RETURN_IF_ERROR(etrt_device_scope_enter(driver, device, &scope));
  etrt_status status =
      driver->memcpy_async(out->data, self->data, size, kind, ETRT_STREAM_PER_THREAD);
  if (status == ETRT_OK) status = driver->stream_synchronize(ETRT_STREAM_PER_THREAD);
  return etrt_device_scope_exit(&scope, status);
}

static etrt_status etrt_h2d_run(etrt_kernel_call *call, etrt_value *values,
                                etrt_run_context *context) {
  return etrt_copy_run(call, values, context, ETRT_COPY_HOST_TO_DEVICE);
}

static etrt_status etrt_d2h_run(etrt_kernel_call *call, etrt_value *values,
                                etrt_run_context *context) {
  return etrt_copy_run(call, values, context, ETRT_COPY_DEVICE_TO_HOST);
}

const etrt_kernel_def etrt_kernel_h2d_copy = {"et_copy::_h2d_copy.out", 3, etrt_copy_prepare,
                                              etrt_h2d_run};
const etrt_kernel_def etrt_kernel_d2h_copy = {"et_copy::_d2h_copy.out", 3, etrt_copy_prepare,
                                              etrt_d2h_run};
