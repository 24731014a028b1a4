/* Logging: levels, a replaceable sink, and the ETRT_LOG environment variable. */
#ifndef ETRT_LOG_H
#define ETRT_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum etrt_log_level {
  ETRT_LOG_ERROR = 0,
  ETRT_LOG_WARN = 1,
  ETRT_LOG_INFO = 2,
  ETRT_LOG_DEBUG = 3
} etrt_log_level;

/* Receives every message at or above the current level. `message` has no trailing
 * newline. The sink may be called from any thread, one call at a time. */
typedef void (*etrt_log_sink)(etrt_log_level level, const char *message, void *user);

/* Replaces the sink; NULL restores the default (standard error). */
void etrt_log_set_sink(etrt_log_sink sink, void *user);

/* The default level is warn, or what ETRT_LOG (error|warn|info|debug) says. */
void etrt_log_set_level(etrt_log_level level);
etrt_log_level etrt_log_get_level(void);

#ifdef __cplusplus
}
#endif
#endif
