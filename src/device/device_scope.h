/* Running code on a given device for the length of a scope (contract rule 2). */
#ifndef ETRT_DEVICE_DEVICE_SCOPE_H
#define ETRT_DEVICE_DEVICE_SCOPE_H

#include "device/device.h"

typedef struct etrt_device_scope {
  const etrt_device_driver *driver; /* NULL: nothing to restore */
  int previous;                     /* the caller's device */
  int changed;                      /* enter called set_device */
} etrt_device_scope;

/* Makes `device` current for the scope, calling set_device only when the current
 * device differs. A NULL driver (no GPU: the CPU executor) enters a scope that does
 * nothing. On failure the scope is left as one that restores nothing, so exit is
 * always safe to call. */
etrt_status etrt_device_scope_enter(const etrt_device_driver *driver, int device,
                                    etrt_device_scope *scope);

/* Puts the caller's device back when enter changed it; call it on every return path
 * that follows enter, error paths included, passing the status of the scope's work:
 *   return etrt_device_scope_exit(&scope, status);
 * Returns `status` when it is a failure (a failing restore then leaves its message
 * alone: the first error wins), else the restore's own status. */
etrt_status etrt_device_scope_exit(etrt_device_scope *scope, etrt_status status);

#endif
