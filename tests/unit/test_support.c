/* The public support queries (etrt/support.h): the op table, per-node verdicts by the
 * definitions' predicates, and where planned device memory is. */
#include <string.h>

#include "device/device.h"
#include "device/sim.h"
#include "etrt/network.h"
#include "etrt/support.h"
#include "test_util.h"

static const etrt_device cpu = {ETRT_DEVICE_CPU, 0};
static const etrt_device cuda0 = {ETRT_DEVICE_CUDA, 0};

static void test_op_table(void) {
  uint32_t count = etrt_support_op_count();
  CHECK(count > 50);
  int saw_conv = 0;
  for (uint32_t i = 0; i < count; ++i) saw_conv |= strcmp(etrt_support_op_type(i), "Conv") == 0;
  CHECK(saw_conv);
  CHECK(etrt_support_op_type(count) == NULL);
  CHECK(etrt_support_op("Conv", cpu) == 1);
  CHECK(etrt_support_op("Conv", cuda0) == 1);
  CHECK(etrt_support_op("NoSuchOp", cpu) == 0);
  CHECK(etrt_support_op(NULL, cpu) == 0);
  CHECK(etrt_support_op("Conv", (etrt_device){(etrt_device_type)7, 0}) == 0);
}

static void test_node_verdicts(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t a, b, y32, y64, a64, b64;
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3},
                                  (int64_t[]){2, 3}, &a));
  CHECK_OK(etrt_network_add_input(net, "b", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){3, 4},
                                  (int64_t[]){3, 4}, &b));
  CHECK_OK(etrt_network_add_input(net, "a64", ETRT_DTYPE_FLOAT64, 2, (int64_t[]){2, 3},
                                  (int64_t[]){2, 3}, &a64));
  CHECK_OK(etrt_network_add_input(net, "b64", ETRT_DTYPE_FLOAT64, 2, (int64_t[]){3, 4},
                                  (int64_t[]){3, 4}, &b64));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm", 2, (int32_t[]){a, b}, 1, &y32, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm64", 2, (int32_t[]){a64, b64}, 1, &y64, 0, NULL));
  int yes = -1;
  CHECK_OK(etrt_support_network_node(net, y32, cpu, &yes));
  CHECK(yes == 1);
  CHECK_OK(etrt_support_network_node(net, y32, cuda0, &yes));
  CHECK(yes == 1);
  /* float64 MatMul: a CPU kernel, and a CUDA predicate that refuses it. */
  CHECK_OK(etrt_support_network_node(net, y64, cpu, &yes));
  CHECK(yes == 1);
  CHECK_OK(etrt_support_network_node(net, y64, cuda0, &yes));
  CHECK(yes == 0);
  CHECK_FAILS(etrt_support_network_node(net, a, cpu, &yes), ETRT_ERROR_INVALID_ARGUMENT,
              "value 0 ('a') is an input or a constant");
  CHECK_FAILS(etrt_support_network_node(net, 99, cpu, &yes), ETRT_ERROR_INVALID_ARGUMENT,
              "value 99 does not exist");
  CHECK_FAILS(etrt_support_network_node(NULL, y32, cpu, &yes), ETRT_ERROR_INVALID_ARGUMENT,
              "NULL network");
  etrt_network_destroy(net);
}

static void test_device_memory(void) {
  CHECK(etrt_support_device_memory_is_gpu(cpu) == 0);
  /* Simulated GPUs keep device memory on the host. */
  CHECK_OK(etrt_device_select_sim(2));
  CHECK(etrt_support_device_memory_is_gpu(cuda0) == 0);
  CHECK(etrt_support_device_memory_is_gpu((etrt_device){ETRT_DEVICE_CUDA, 1}) == 0);
}

int main(void) {
  RUN_TEST(test_op_table);
  RUN_TEST(test_node_verdicts);
  RUN_TEST(test_device_memory);
  return TEST_EXIT();
}
