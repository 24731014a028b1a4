/* The CPU executor's per-node profile (engine/cpu_profile.h): off unless
 * ETRT_CPU_PROFILE=1; on, a context that ran reports once, at its end, one line per
 * operator type with its node count, naming who ran it (etrt's kernels or a library),
 * and a context that never ran reports nothing. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "etrt/log.h"
#include "etrt/network.h"
#include "test_util.h"

static char captured[8192];

static void capture(etrt_log_level level, const char *message, void *user) {
  (void)user;
  if (level != ETRT_LOG_INFO) return;
  size_t used = strlen(captured);
  snprintf(captured + used, sizeof captured - used, "%s\n", message);
}

/* x [4, 8] -> Relu -> Relu -> Sigmoid -> y. */
static void build(uint8_t **plan, size_t *size) {
  etrt_network *net = NULL;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, a, b, y;
  const int64_t dims[2] = {4, 8};
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, dims, dims, &x));
  CHECK_OK(etrt_network_add_op(net, "Relu", "r1", 1, &x, 1, &a, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Relu", "r2", 1, &a, 1, &b, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Sigmoid", "s", 1, &b, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  CHECK_OK(etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 0}}, plan, size));
  etrt_network_destroy(net);
}

/* Creates a context, runs it `runs` times, destroys it; returns what was logged. */
static const char *profile(const uint8_t *plan, size_t size, int runs) {
  captured[0] = '\0';
  etrt_engine *engine = NULL;
  etrt_exec_context *ctx = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  float x[32], y[32];
  for (int i = 0; i < 32; ++i) x[i] = (float)i - 16.0f;
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, x));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, y));
  for (int r = 0; r < runs; ++r) CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  return captured;
}

static void test_profile_reports_per_operator(void) {
  uint8_t *plan = NULL;
  size_t size = 0;
  build(&plan, &size);
  if (plan == NULL) return;
  etrt_log_level level = etrt_log_get_level();
  etrt_log_set_level(ETRT_LOG_INFO);
  etrt_log_set_sink(capture, NULL);

  unsetenv("ETRT_CPU_PROFILE");
  CHECK(strstr(profile(plan, size, 2), "CPU profile") == NULL);
  setenv("ETRT_CPU_PROFILE", "0", 1);
  CHECK(strstr(profile(plan, size, 2), "CPU profile") == NULL);

  setenv("ETRT_CPU_PROFILE", "1", 1);
  const char *report = profile(plan, size, 3);
  CHECK(strstr(report, "CPU profile of 3 runs") != NULL);
  const char *relu = strstr(report, "Relu");
  const char *sigmoid = strstr(report, "Sigmoid");
  CHECK(relu != NULL && sigmoid != NULL);
  /* One line per operator type, with its node count and who ran it. */
  if (relu != NULL) {
    CHECK(strstr(relu, "etrt") != NULL);
    CHECK(strstr(relu, "2 nodes") != NULL && strstr(relu, "2 nodes") < strchr(relu, '\n'));
    CHECK(strstr(relu + 1, "Relu") == NULL);
  }
  if (sigmoid != NULL) CHECK(strstr(sigmoid, "1 nodes") < strchr(sigmoid, '\n'));
  /* A context that never ran has nothing to say. */
  CHECK(strstr(profile(plan, size, 0), "CPU profile") == NULL);

  unsetenv("ETRT_CPU_PROFILE");
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(level);
  free(plan);
}

int main(void) {
  RUN_TEST(test_profile_reports_per_operator);
  return TEST_EXIT();
}
