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

/* The first error wins. Cleanup that runs after a failure (a drain, a free, a
 * destroy, putting the caller's device back) may fail too, and its message would
 * replace the one that names what went wrong. Such cleanup is bracketed:
 *
 *   etrt_error_keep keep = etrt_error_keep_first(status);
 *   (void)driver->stream_synchronize(stream);
 *   etrt_error_keep_end(keep);
 *
 * While a keep made for a failure (status != ETRT_OK) is open, etrt_error and
 * etrt_error_context on this thread return their status but leave the message as it
 * is. A keep made for ETRT_OK changes nothing, so code shared by success and failure
 * paths can bracket unconditionally. Keeps nest; each must be ended on the thread
 * that made it. */
typedef struct etrt_error_keep {
  int held;
} etrt_error_keep;

etrt_error_keep etrt_error_keep_first(etrt_status pending);
void etrt_error_keep_end(etrt_error_keep keep);

/* The status of a step followed by cleanup: the first failure, else the cleanup's. */
static inline etrt_status etrt_status_first(etrt_status first, etrt_status cleanup) {
  return first != ETRT_OK ? first : cleanup;
}

#define ETRT_RETURN_IF_ERROR(expr)                    \
  do {                                                \
    etrt_status etrt_status_ = (expr);                \
    if (etrt_status_ != ETRT_OK) return etrt_status_; \
  } while (0)

#endif
