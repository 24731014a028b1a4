/* Contract rule 2 (DESIGN.md section 3): "set the device only if the current one
 * differs, and put the caller's device back on every return path, error paths
 * included". Every place that runs work on an engine's or a buffer's device goes
 * through this pair, so the rule is implemented once. */
#include "device/device_scope.h"

#include "base/status.h"

etrt_status etrt_device_scope_enter(const etrt_device_driver *driver, int device,
                                    etrt_device_scope *scope) {
  scope->driver = NULL;
  scope->previous = device;
  scope->changed = 0;
  if (driver == NULL) return ETRT_OK;
  int previous;
  ETRT_RETURN_IF_ERROR(driver->get_device(&previous));
  if (previous == device) return ETRT_OK;
  etrt_status status = driver->set_device(device);
  if (status != ETRT_OK)
    return etrt_error_context(status, "making cuda:%d current (the caller is on cuda:%d): ", device,
                              previous);
  scope->driver = driver;
  scope->previous = previous;
  scope->changed = 1;
  return ETRT_OK;
}

etrt_status etrt_device_scope_exit(etrt_device_scope *scope, etrt_status status) {
  if (!scope->changed) return status;
  scope->changed = 0;
  etrt_error_keep keep = etrt_error_keep_first(status);
  etrt_status restored = scope->driver->set_device(scope->previous);
  if (restored != ETRT_OK)
    restored =
        etrt_error_context(restored, "putting the caller's device cuda:%d back: ", scope->previous);
  etrt_error_keep_end(keep);
  return etrt_status_first(status, restored);
}
