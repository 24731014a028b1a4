/* The caller's stream selection (contract rule 5) and green-context streams (rule 6).
 * The selection is a small per-thread stack: no allocation, no lock, so delegates
 * may ask for it on every execute. */
#include "etrt/stream.h"

#include "base/status.h"
#include "device/device.h"

#define ETRT_STREAM_STACK_DEPTH 16

static _Thread_local struct {
  int depth;
  void *streams[ETRT_STREAM_STACK_DEPTH];
} selection;

etrt_status etrt_stream_push(void *stream) {
  if (selection.depth == ETRT_STREAM_STACK_DEPTH) {
    return etrt_error(ETRT_ERROR_STATE,
                      "etrt_stream_push: stream selections nested deeper than %d on this thread",
                      ETRT_STREAM_STACK_DEPTH);
  }
  selection.streams[selection.depth++] = stream;
  return ETRT_OK;
}

etrt_status etrt_stream_pop(void) {
  if (selection.depth == 0) {
    return etrt_error(ETRT_ERROR_STATE,
                      "etrt_stream_pop: no stream selection to pop on this thread");
  }
  selection.depth--;
  return ETRT_OK;
}

int etrt_stream_selected(void **stream) {
  if (selection.depth == 0) return 0;
  if (stream != NULL) *stream = selection.streams[selection.depth - 1];
  return 1;
}

/* The active driver's green-context support for `call`, with the checks every
 * caller needs. */
static etrt_status green_driver(const char *call, const etrt_device_driver **out) {
  const etrt_device_driver *driver = etrt_device_driver_get();
  if (driver == NULL) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: no GPU (no usable CUDA driver and device): green contexts need one",
                      call);
  }
  if (driver->green_stream_create == NULL || driver->green_stream_destroy == NULL) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: the %s driver has no green contexts (they need an NVIDIA driver of CUDA "
                      "12.5 or later)",
                      call, driver->name);
  }
  *out = driver;
  return ETRT_OK;
}

etrt_status etrt_green_stream_create(int device, int sm_count, void **stream, int *granted_sms) {
  static const char call[] = "etrt_green_stream_create";
  if (stream == NULL || granted_sms == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: NULL %s", call,
                      stream == NULL ? "stream" : "granted_sms");
  }
  *stream = NULL;
  *granted_sms = 0;
  const etrt_device_driver *driver = NULL;
  ETRT_RETURN_IF_ERROR(green_driver(call, &driver));
  int count = driver->device_count();
  if (device < 0 || device >= count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: device %d out of range (%d %s devices)",
                      call, device, count, driver->name);
  }
  etrt_device_attributes attributes;
  etrt_status status = driver->attributes(device, &attributes);
  if (status != ETRT_OK) return etrt_error_context(status, "%s: ", call);
  if (sm_count < 1 || sm_count > attributes.sm_count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s: sm_count %d out of range (%s:%d has %d SMs)", call, sm_count,
                      driver->name, device, attributes.sm_count);
  }
  status = driver->green_stream_create(device, sm_count, stream, granted_sms);
  if (status != ETRT_OK) return etrt_error_context(status, "%s: ", call);
  return ETRT_OK;
}

etrt_status etrt_green_stream_destroy(void *stream) {
  static const char call[] = "etrt_green_stream_destroy";
  if (stream == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: NULL stream", call);
  const etrt_device_driver *driver = NULL;
  ETRT_RETURN_IF_ERROR(green_driver(call, &driver));
  etrt_status status = driver->green_stream_destroy(stream);
  if (status != ETRT_OK) return etrt_error_context(status, "%s: ", call);
  return ETRT_OK;
}
