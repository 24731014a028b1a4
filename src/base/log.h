/* Internal logging entry point. */
#ifndef ETRT_BASE_LOG_H
#define ETRT_BASE_LOG_H

#include "base/status.h"
#include "etrt/log.h"

/* True when a message of this level would reach the sink; lets callers skip
 * formatting work on hot paths. */
int etrt_log_enabled(etrt_log_level level);

void etrt_log(etrt_log_level level, const char *fmt, ...) ETRT_PRINTF(2, 3);

#endif
