#include "base/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ETRT_ERROR_CAPACITY 1024

static _Thread_local char etrt_error_message[ETRT_ERROR_CAPACITY];
/* Open keeps made for a failure: while above zero the message is frozen. */
static _Thread_local int etrt_error_held;

const char *etrt_status_name(etrt_status status) {
  switch (status) {
    case ETRT_OK:
      return "ok";
    case ETRT_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case ETRT_ERROR_INVALID_FORMAT:
      return "invalid format";
    case ETRT_ERROR_NOT_FOUND:
      return "not found";
    case ETRT_ERROR_UNSUPPORTED:
      return "unsupported";
    case ETRT_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case ETRT_ERROR_IO:
      return "i/o error";
    case ETRT_ERROR_DEVICE:
      return "device error";
    case ETRT_ERROR_STATE:
      return "invalid state";
    case ETRT_ERROR_ALREADY_EXISTS:
      return "already exists";
    case ETRT_ERROR_INTERNAL:
      return "internal error";
  }
  return "unknown status";
}

const char *etrt_last_error(void) { return etrt_error_message; }

void etrt_clear_error(void) { etrt_error_message[0] = '\0'; }

etrt_error_keep etrt_error_keep_first(etrt_status pending) {
  etrt_error_keep keep = {pending != ETRT_OK};
  etrt_error_held += keep.held;
  return keep;
}

void etrt_error_keep_end(etrt_error_keep keep) {
  if (keep.held && etrt_error_held > 0) --etrt_error_held;
}

etrt_status etrt_error(etrt_status status, const char *fmt, ...) {
  if (etrt_error_held > 0) return status;
  va_list args;
  va_start(args, fmt);
  vsnprintf(etrt_error_message, sizeof etrt_error_message, fmt, args);
  va_end(args);
  return status;
}

etrt_status etrt_error_context(etrt_status status, const char *fmt, ...) {
  if (etrt_error_held > 0) return status;
  char previous[ETRT_ERROR_CAPACITY];
  memcpy(previous, etrt_error_message, sizeof previous);
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(etrt_error_message, sizeof etrt_error_message, fmt, args);
  va_end(args);
  if (n >= 0 && (size_t)n < sizeof etrt_error_message) {
    snprintf(etrt_error_message + n, sizeof etrt_error_message - (size_t)n, "%s", previous);
  }
  return status;
}
