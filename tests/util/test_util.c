#include "test_util.h"

#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

int etrt_test_failures = 0;

void etrt_test_fail(const char *file, int line, const char *fmt, ...) {
  ++etrt_test_failures;
  fprintf(stderr, "%s:%d: ", file, line);
  va_list args;
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fputc('\n', stderr);
}

static const char *etrt_test_env(const char *name, const char *fallback) {
  const char *value = getenv(name);
  return value != NULL && value[0] != '\0' ? value : fallback;
}

const char *etrt_test_fixture(const char *relative) {
  static _Thread_local char path[4096];
  snprintf(path, sizeof path, "%s/%s", etrt_test_env("ETRT_FIXTURES_DIR", "tests/data"), relative);
  return path;
}

const char *etrt_test_source(const char *relative) {
  static _Thread_local char path[4096];
  snprintf(path, sizeof path, "%s/%s", etrt_test_env("ETRT_SOURCE_DIR", "."), relative);
  return path;
}

const char *etrt_test_tool(void) { return etrt_test_env("ETRT_BIN", "build/bin/etrt"); }

static char etrt_test_tmp[256];

static void etrt_test_remove_tmp(void) {
  if (etrt_test_tmp[0] == '\0') return;
  char command[300];
  snprintf(command, sizeof command, "rm -rf '%s'", etrt_test_tmp);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", etrt_test_tmp);
}

const char *etrt_test_tmpdir(void) {
  if (etrt_test_tmp[0] == '\0') {
    snprintf(etrt_test_tmp, sizeof etrt_test_tmp, "/tmp/etrt-test-XXXXXX");
    if (mkdtemp(etrt_test_tmp) == NULL) {
      perror("mkdtemp");
      exit(1);
    }
    atexit(etrt_test_remove_tmp);
  }
  return etrt_test_tmp;
}

int etrt_test_run(const char *command, int merge_stderr, char **output) {
  char full[8192];
  snprintf(full, sizeof full, "%s%s", command, merge_stderr ? " 2>&1" : "");
  FILE *pipe = popen(full, "r");
  if (pipe == NULL) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf != NULL && (n = fread(buf + len, 1, cap - len - 1, pipe)) > 0) {
    len += n;
    if (cap - len < 1024) {
      char *grown = realloc(buf, cap * 2);
      if (grown == NULL) break;
      buf = grown;
      cap *= 2;
    }
  }
  if (buf != NULL) buf[len] = '\0';
  int status = pclose(pipe);
  if (output != NULL) {
    *output = buf;
  } else {
    free(buf);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
