/* Internal error helpers: set the thread-local message at the point of failure. */
#ifndef ETRT_BASE_STATUS_H
#define ETRT_BASE_STATUS_H

#include "etrt/status.h"

#if defined(__GNUC__) || defined(__clang__)
#define ETRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ETRT_PRINTF(f, a)
#endif

/* Writes the message and returns `status`, so that a failure is one line:
 *   return etrt_error(ETRT_ERROR_INVALID_FORMAT, "plan: digest mismatch"); */
etrt_status etrt_error(etrt_status status, const char *fmt, ...) ETRT_PRINTF(2, 3);

/* Prepends context to the current message ("method 'forward': " + message) and
 * returns `status`; used where a lower layer failed and the caller knows more. */
etrt_status etrt_error_context(etrt_status status, const char *fmt, ...) ETRT_PRINTF(2, 3);

#define ETRT_RETURN_IF_ERROR(expr)          \
  do {                                      \
    etrt_status etrt_status_ = (expr);      \
    if (etrt_status_ != ETRT_OK) return etrt_status_; \
  } while (0)

#endif
