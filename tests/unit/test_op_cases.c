/* Every operation the CUDA executor supports, CPU executor against sim executor:
 * the rows the sim executor runs (the definitions with a CUDA predicate, which a
 * CUDA build's table matches row for row, test_op_tables) each run every case of
 * tests/util/op_cases.c on a simulated cuda:0. Both sides run the CPU kernels, so
 * this proves that every case builds for a GPU, passes the CUDA predicate the sim
 * executor applies, and agrees; tests/gpu/test_cuda_ops.c runs the same cases on
 * a real GPU. A row without a case fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/sim.h"
#include "engine/op.h"
#include "op_cases.h"
#include "test_util.h"

#define MAX_ROWS 512

static void test_every_row_against_sim(void) {
  static const char *ops[MAX_ROWS];
  size_t count = 0, rows = 0;
  const etrt_op_def *const *defs = etrt_op_all(&count);
  for (size_t i = 0; i < count && rows < MAX_ROWS; ++i)
    if (defs[i]->cuda_supports != NULL) ops[rows++] = defs[i]->op_type;
  CHECK(rows > 100);
  CHECK_OK(etrt_device_select_sim(1));
  CHECK_EQ_INT(co_run_ops(ops, rows, etrt_device_sim_driver(), ETRT_EXECUTOR_CPU_ON_SIM), 0);
}

/* The coverage check can fail: a row with no case is counted (and nothing runs). */
static void test_row_without_case_fails(void) {
  const char *ops[] = {"NoSuchOp"};
  CHECK_EQ_INT(co_run_ops(ops, 1, etrt_device_sim_driver(), ETRT_EXECUTOR_CPU_ON_SIM), 1);
}

/* A case the CUDA predicate refuses is refused by the sim executor as well: the
 * GPU's MatMul takes no float64. */
static void test_sim_refuses_what_cuda_refuses(void) {
  etrt_network *net = NULL;
  CHECK_OK(etrt_network_create(&net));
  int32_t a, b, y;
  int64_t dims[2] = {2, 2};
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT64, 2, dims, dims, &a));
  CHECK_OK(etrt_network_add_input(net, "b", ETRT_DTYPE_FLOAT64, 2, dims, dims, &b));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "product", 2, (int32_t[]){a, b}, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_plan_options options = {.device = {ETRT_DEVICE_CUDA, 0}, .name = "f64"};
  uint8_t *plan = NULL;
  size_t size = 0;
  CHECK_OK(etrt_plan_build(net, &options, &plan, &size));
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_exec_context *cpu = NULL, *sim = NULL;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &cpu));
  CHECK_FAILS(etrt_exec_context_create(engine, etrt_device_sim_driver(), &sim),
              ETRT_ERROR_UNSUPPORTED, "node 0 'product': the CUDA kernel of MatMul does not take");
  CHECK(sim == NULL);
  etrt_exec_context_destroy(cpu);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

/* An out-of-range index fails the run on the CPU and on the sim executor, naming
 * the op (the CUDA executor: tests/gpu/test_cuda_ops.c). */
static void test_bad_indices_on_sim(void) {
  size_t count = 0;
  const co_case *cases = co_bad_cases(&count);
  CHECK(count > 0);
  for (size_t k = 0; k < count; ++k)
    co_run_bad(&cases[k], etrt_device_sim_driver(), ETRT_EXECUTOR_CPU_ON_SIM);
}

int main(void) {
  RUN_TEST(test_every_row_against_sim);
  RUN_TEST(test_bad_indices_on_sim);
  RUN_TEST(test_row_without_case_fails);
  RUN_TEST(test_sim_refuses_what_cuda_refuses);
  etrt_device_select_sim(0);
  return TEST_EXIT();
}
