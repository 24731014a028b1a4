/* Which driver is active: ETRT_DEVICE, etrt_device_select_sim, and never sim by
 * default. The choice is cached; etrt_device_select_sim(0) forgets it. */
#include <pthread.h>
#include <stdlib.h>

#include "device/sim.h"
#include "etrt/log.h"
#include "test_util.h"

static char logged[4096];

static void capture(etrt_log_level level, const char *message, void *user) {
  (void)user;
  size_t used = strlen(logged);
  snprintf(logged + used, sizeof logged - used, "%d:%s\n", (int)level, message);
}

static void test_env_sim(void) {
  /* Set before the first use in this process. */
  setenv("ETRT_DEVICE", "sim:2", 1);
  const etrt_device_driver *d = etrt_device_driver_get();
  CHECK(d != NULL && d == etrt_device_sim_driver());
  if (d == NULL) return;
  CHECK_EQ_INT(d->device_count(), 2);
  /* Cached: changing the variable alone changes nothing. */
  setenv("ETRT_DEVICE", "cpu", 1);
  CHECK(etrt_device_driver_get() == d);
  CHECK_EQ_INT(d->device_count(), 2);
}

static void test_select_sim_overrides_and_resets(void) {
  setenv("ETRT_DEVICE", "cpu", 1);
  CHECK_OK(etrt_device_select_sim(3));
  CHECK(etrt_device_driver_get() == etrt_device_sim_driver());
  CHECK_EQ_INT(etrt_device_driver_get()->device_count(), 3);
  CHECK_OK(etrt_device_select_sim(0));
  CHECK(etrt_device_driver_get() == NULL); /* ETRT_DEVICE=cpu read again */
  CHECK_EQ_INT(etrt_device_sim_driver()->device_count(), 0);
  CHECK_FAILS(etrt_device_select_sim(-1), ETRT_ERROR_INVALID_ARGUMENT, "0..16");
  CHECK_FAILS(etrt_device_select_sim(17), ETRT_ERROR_INVALID_ARGUMENT, "0..16");
}

static void test_env_values(void) {
  setenv("ETRT_DEVICE", "sim:16", 1);
  CHECK_OK(etrt_device_select_sim(0));
  CHECK(etrt_device_driver_get() == etrt_device_sim_driver());
  CHECK_EQ_INT(etrt_device_sim_driver()->device_count(), 16);

  /* Malformed values are ignored (logged): the default choice, never sim. */
  static const char *const bad[] = {"sim:0",  "sim:17", "sim:",   "sim",
                                    "sim:2x", "gpu",    "sim:-1", "sim:99999999999"};
  etrt_log_set_level(ETRT_LOG_WARN);
  etrt_log_set_sink(capture, NULL);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("ETRT_DEVICE", bad[i], 1);
    CHECK_OK(etrt_device_select_sim(0));
    logged[0] = '\0';
    const etrt_device_driver *d = etrt_device_driver_get();
    CHECK(d == etrt_device_cuda_driver());
    CHECK(d == NULL || strcmp(d->name, "cuda") == 0);
    char expected[128];
    snprintf(expected, sizeof expected,
             "0:ETRT_DEVICE='%s' is not sim:N (N in 1..16), cuda or cpu; ignored", bad[i]);
    CHECK_STR_CONTAINS(logged, expected);
    logged[0] = '\0';
    CHECK(etrt_device_driver_get() == d);
    CHECK_EQ_INT(strlen(logged), 0); /* said once, not on every call */
  }

  /* cuda: the CUDA driver when usable, else none. */
  setenv("ETRT_DEVICE", "cuda", 1);
  CHECK_OK(etrt_device_select_sim(0));
  logged[0] = '\0';
  CHECK(etrt_device_driver_get() == etrt_device_cuda_driver());
  if (etrt_device_cuda_driver() == NULL)
    CHECK_STR_CONTAINS(logged, "1:ETRT_DEVICE=cuda: no usable CUDA driver");
  etrt_log_set_sink(NULL, NULL);
}

static void test_default_is_never_sim(void) {
  unsetenv("ETRT_DEVICE");
  CHECK_OK(etrt_device_select_sim(0));
  const etrt_device_driver *d = etrt_device_driver_get();
  CHECK(d != etrt_device_sim_driver());
  CHECK(d == etrt_device_cuda_driver());
#ifndef ETRT_HAVE_CUDA
  CHECK(d == NULL);
#endif
}

static void *get_driver(void *arg) {
  const etrt_device_driver **out = arg;
  for (int i = 0; i < 1000; i++) *out = etrt_device_driver_get();
  return NULL;
}

static void test_concurrent_first_use(void) {
  setenv("ETRT_DEVICE", "sim:1", 1);
  CHECK_OK(etrt_device_select_sim(0));
  const etrt_device_driver *seen[4] = {NULL, NULL, NULL, NULL};
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, get_driver, &seen[i]);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++) CHECK(seen[i] == etrt_device_sim_driver());
  unsetenv("ETRT_DEVICE");
  CHECK_OK(etrt_device_select_sim(0));
}

int main(void) {
  RUN_TEST(test_env_sim); /* first: it tests the very first use */
  RUN_TEST(test_select_sim_overrides_and_resets);
  RUN_TEST(test_env_values);
  RUN_TEST(test_default_is_never_sim);
  RUN_TEST(test_concurrent_first_use);
  return TEST_EXIT();
}
