#include "base/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t etrt_log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t etrt_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static etrt_log_level etrt_log_level_current = ETRT_LOG_WARN;
static etrt_log_sink etrt_log_sink_current = NULL;
static void *etrt_log_sink_user = NULL;

static void etrt_log_read_environment(void) {
  const char *value = getenv("ETRT_LOG");
  if (value == NULL) return;
  static const char *const names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; ++i) {
    if (strcmp(value, names[i]) == 0) etrt_log_level_current = (etrt_log_level)i;
  }
}

void etrt_log_set_sink(etrt_log_sink sink, void *user) {
  pthread_once(&etrt_log_once, etrt_log_read_environment);
  pthread_mutex_lock(&etrt_log_mutex);
  etrt_log_sink_current = sink;
  etrt_log_sink_user = user;
  pthread_mutex_unlock(&etrt_log_mutex);
}

void etrt_log_set_level(etrt_log_level level) {
  pthread_once(&etrt_log_once, etrt_log_read_environment);
  __atomic_store_n(&etrt_log_level_current, level, __ATOMIC_RELAXED);
}

etrt_log_level etrt_log_get_level(void) {
  pthread_once(&etrt_log_once, etrt_log_read_environment);
  return __atomic_load_n(&etrt_log_level_current, __ATOMIC_RELAXED);
}

int etrt_log_enabled(etrt_log_level level) { return level <= etrt_log_get_level(); }

void etrt_log(etrt_log_level level, const char *fmt, ...) {
  if (!etrt_log_enabled(level)) return;
  char message[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  static const char *const prefixes[] = {"error", "warn", "info", "debug"};
  pthread_mutex_lock(&etrt_log_mutex);
  if (etrt_log_sink_current != NULL) {
    etrt_log_sink_current(level, message, etrt_log_sink_user);
  } else {
    fprintf(stderr, "etrt %s: %s\n", prefixes[level], message);
  }
  pthread_mutex_unlock(&etrt_log_mutex);
}
