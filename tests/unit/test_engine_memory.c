/* The peak device memory of a plan (etrt_engine_plan_memory, shown by etrt inspect):
 * weights, intermediates placed by lifetime at the largest shapes, workspace. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "test_programs.h"
#include "test_util.h"

#define IN 64
#define HIDDEN 128
#define OUT 16
#define MAX_BATCH 32

static uint64_t round256(uint64_t bytes) { return (bytes + 255u) & ~(uint64_t)255u; }

static void check_mlp(etrt_device device) {
  etrt_test_mlp mlp;
  uint8_t *plan = NULL;
  size_t size = 0;
  CHECK_OK(
      etrt_test_mlp_plan(&mlp, IN, HIDDEN, OUT, 1, MAX_BATCH, 7, device, "memory", &plan, &size));
  etrt_engine_memory m;
  CHECK(etrt_engine_plan_memory(plan, size, &m));
  CHECK(m.weights >= (uint64_t)(IN * HIDDEN + HIDDEN + HIDDEN * OUT + OUT) * sizeof(float));
  /* The hidden activations at the largest batch, two alive at once at most: a chain
   * of MatMul, Add and Relu shares memory by lifetime. */
  uint64_t hidden = round256((uint64_t)MAX_BATCH * HIDDEN * sizeof(float));
  CHECK(m.intermediates >= hidden);
  CHECK(m.intermediates <= 2 * hidden + round256((uint64_t)MAX_BATCH * OUT * sizeof(float)));
  if (device.type == ETRT_DEVICE_CPU) {
    CHECK(m.workspace_known);
    CHECK(m.workspace == 0);
  }
  CHECK(m.total == m.weights + m.intermediates + m.workspace);
  /* A damaged plan has no figures. */
  plan[size / 2] ^= 0x5a;
  CHECK(!etrt_engine_plan_memory(plan, size, &m));
  free(plan);
  etrt_test_mlp_free(&mlp);
}

static void test_cpu_plan(void) { check_mlp((etrt_device){ETRT_DEVICE_CPU, 0}); }

static void test_cuda_plan(void) { check_mlp((etrt_device){ETRT_DEVICE_CUDA, 0}); }

static void test_not_a_plan(void) {
  etrt_engine_memory m;
  const char text[] = "PK\x03\x04 not a plan";
  CHECK(!etrt_engine_plan_memory(text, sizeof text, &m));
  CHECK(!etrt_engine_plan_memory(text, 3, &m));
}

int main(void) {
  RUN_TEST(test_cpu_plan);
  RUN_TEST(test_cuda_plan);
  RUN_TEST(test_not_a_plan);
  return TEST_EXIT();
}
