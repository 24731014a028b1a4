/* A small assertion layer for the C tests: each failed check prints where and why,
 * and the test exits non-zero at the end. */
#ifndef ETRT_TEST_UTIL_H
#define ETRT_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/status.h"

extern int etrt_test_failures;

void etrt_test_fail(const char *file, int line, const char *fmt, ...);

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) etrt_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
  } while (0)

#define CHECK_OK(expr)                                                                \
  do {                                                                                \
    etrt_status s_ = (expr);                                                          \
    if (s_ != ETRT_OK)                                                                \
      etrt_test_fail(__FILE__, __LINE__, "%s -> %s: %s", #expr, etrt_status_name(s_), \
                     etrt_last_error());                                              \
  } while (0)

/* The call fails with `status` and its message contains `text`. */
#define CHECK_FAILS(expr, status, text)                                                           \
  do {                                                                                            \
    etrt_clear_error();                                                                           \
    etrt_status s_ = (expr);                                                                      \
    if (s_ != (status))                                                                           \
      etrt_test_fail(__FILE__, __LINE__, "%s -> %s, wanted %s (%s)", #expr, etrt_status_name(s_), \
                     etrt_status_name(status), etrt_last_error());                                \
    else if (strstr(etrt_last_error(), (text)) == NULL)                                           \
      etrt_test_fail(__FILE__, __LINE__, "%s: message '%s' lacks '%s'", #expr, etrt_last_error(), \
                     (text));                                                                     \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                      \
  do {                                                                                          \
    long long a_ = (long long)(a), b_ = (long long)(b);                                         \
    if (a_ != b_) etrt_test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                  \
  do {                                                                         \
    double a_ = (double)(a), b_ = (double)(b);                                 \
    if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol)))                               \
      etrt_test_fail(__FILE__, __LINE__, "%s ~ %s: %g vs %g", #a, #b, a_, b_); \
  } while (0)

#define CHECK_STR_CONTAINS(haystack, needle)                                               \
  do {                                                                                     \
    const char *h_ = (haystack);                                                           \
    if (h_ == NULL || strstr(h_, (needle)) == NULL)                                        \
      etrt_test_fail(__FILE__, __LINE__, "'%s' lacks '%s'", h_ ? h_ : "(null)", (needle)); \
  } while (0)

#define RUN_TEST(fn)                                                         \
  do {                                                                       \
    int before_ = etrt_test_failures;                                        \
    fn();                                                                    \
    printf("%s %s\n", etrt_test_failures == before_ ? "ok  " : "FAIL", #fn); \
    fflush(stdout);                                                          \
  } while (0)

#define TEST_EXIT() \
  (etrt_test_failures == 0 ? 0 : (fprintf(stderr, "%d check(s) failed\n", etrt_test_failures), 1))

/* Paths: the test data folder (tests/data), the source tree, the built etrt tool, and a
 * fresh temporary folder for this test process (removed at exit). */
const char *etrt_test_fixture(const char *relative); /* returns a static buffer */
const char *etrt_test_source(const char *relative);
const char *etrt_test_tool(void);
const char *etrt_test_tmpdir(void);

/* Runs a shell command, captures its standard output (and error if `merge_stderr`)
 * into a malloc'd string; returns the exit status (or -1). */
int etrt_test_run(const char *command, int merge_stderr, char **output);

#endif
