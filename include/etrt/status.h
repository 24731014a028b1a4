/* Status codes and the thread-local last-error message. */
#ifndef ETRT_STATUS_H
#define ETRT_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum etrt_status {
  ETRT_OK = 0,
  ETRT_ERROR_INVALID_ARGUMENT = 1, /* the caller passed something wrong */
  ETRT_ERROR_INVALID_FORMAT = 2,   /* bytes from outside (a file) are malformed */
  ETRT_ERROR_NOT_FOUND = 3,        /* a named thing does not exist */
  ETRT_ERROR_UNSUPPORTED = 4,      /* valid, but not something etrt can do */
  ETRT_ERROR_OUT_OF_MEMORY = 5,
  ETRT_ERROR_IO = 6,     /* the operating system refused a file operation */
  ETRT_ERROR_DEVICE = 7, /* the GPU (or its driver) failed */
  ETRT_ERROR_STATE = 8,  /* the object is not in a state that allows this */
  ETRT_ERROR_ALREADY_EXISTS = 9,
  ETRT_ERROR_INTERNAL = 10
} etrt_status;

/* A short stable name for a status ("invalid format"). */
const char *etrt_status_name(etrt_status status);

/* The message written by the last failing call on this thread; "" when none. The
 * string stays valid until the next etrt call on the same thread. */
const char *etrt_last_error(void);

void etrt_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
