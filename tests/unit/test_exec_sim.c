/* The sim executor: a CUDA plan on simulated devices. Device memory, weights shared
 * between contexts, the whole run as one host function on the stream (so a missing
 * synchronisation leaves stale outputs), snapshots of shapes and bindings taken at
 * enqueue, device checks, and clean failure under allocation faults. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/sim.h"
#include "engine/engine.h"
#include "engine_test_models.h"
#include "test_util.h"

static test_mlp mlp;
static const etrt_device_driver *sim;

typedef struct device_io {
  void *x, *y;
  float host_x[32 * MLP_IN], host_y[32 * MLP_OUT], ref[32 * MLP_OUT];
} device_io;

static etrt_engine *mlp_engine(int device, uint8_t **plan) {
  size_t size;
  etrt_engine *engine = NULL;
  if (test_mlp_plan(&mlp, (etrt_device){ETRT_DEVICE_CUDA, device}, plan, &size) != ETRT_OK ||
      etrt_engine_deserialize(*plan, size, &engine) != ETRT_OK)
    fprintf(stderr, "mlp_engine: %s\n", etrt_last_error());
  return engine;
}

static void io_prepare(device_io *io, int64_t batch, uint32_t seed, etrt_stream stream) {
  test_fill(io->host_x, (size_t)batch * MLP_IN, seed, 1.0f);
  test_mlp_reference(&mlp, io->host_x, batch, io->ref);
  CHECK_OK(sim->malloc_device(sizeof io->host_x, &io->x));
  CHECK_OK(sim->malloc_device(sizeof io->host_y, &io->y));
  CHECK_OK(sim->memcpy_async(io->x, io->host_x, (size_t)batch * MLP_IN * sizeof(float),
                             ETRT_COPY_HOST_TO_DEVICE, stream));
}

static int io_matches(const device_io *io, int64_t batch) {
  for (int64_t i = 0; i < batch * MLP_OUT; ++i) {
    if (!(fabsf(io->host_y[i] - io->ref[i]) <= 1e-4f)) return 0;
  }
  return 1;
}

static void io_release(device_io *io) {
  CHECK_OK(sim->free_device(io->x));
  CHECK_OK(sim->free_device(io->y));
}

static void test_runs_on_the_stream(void) {
  CHECK_OK(etrt_device_select_sim(2));
  uint8_t *plan;
  etrt_engine *engine = mlp_engine(0, &plan);
  CHECK(engine != NULL);
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, sim, &ctx));
  CHECK_EQ_INT(etrt_exec_context_executor(ctx), ETRT_EXECUTOR_CPU_ON_SIM);
  etrt_stream stream;
  CHECK_OK(sim->stream_create(&stream));
  static device_io a, b;
  io_prepare(&a, 4, 1, stream);
  io_prepare(&b, 2, 2, stream);
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){4, MLP_IN}));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, a.x));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, a.y));
  CHECK_OK(etrt_exec_context_enqueue(ctx, stream));
  /* Shapes and bindings change before the stream runs: the first run keeps its own. */
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){2, MLP_IN}));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, b.x));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, b.y));
  CHECK_OK(etrt_exec_context_enqueue(ctx, stream));
  for (size_t i = 0; i < 32 * MLP_OUT; ++i) a.host_y[i] = b.host_y[i] = -99.0f;
  CHECK_OK(sim->memcpy_async(a.host_y, a.y, 4 * MLP_OUT * sizeof(float), ETRT_COPY_DEVICE_TO_HOST,
                             stream));
  CHECK_OK(sim->memcpy_async(b.host_y, b.y, 2 * MLP_OUT * sizeof(float), ETRT_COPY_DEVICE_TO_HOST,
                             stream));
  /* Nothing has run: the outputs are stale until the stream is synchronised. */
  CHECK(etrt_sim_pending_work() > 0);
  CHECK(a.host_y[0] == -99.0f && b.host_y[0] == -99.0f);
  CHECK_OK(sim->stream_synchronize(stream));
  CHECK(io_matches(&a, 4));
  CHECK(io_matches(&b, 2));
  CHECK(b.host_y[2 * MLP_OUT] == -99.0f); /* nothing past batch 2 was copied */
  /* A second context shares the weights: it adds only its own intermediates. */
  size_t before = etrt_sim_bytes_in_use();
  etrt_exec_context *ctx2;
  CHECK_OK(etrt_exec_context_create(engine, sim, &ctx2));
  size_t added = etrt_sim_bytes_in_use() - before;
  CHECK(added > 0 && added < sizeof mlp);
  /* Destroying a context with work queued waits for it. */
  CHECK_OK(etrt_exec_context_set_input_shape(ctx2, 0, 2, (int64_t[]){4, MLP_IN}));
  CHECK_OK(etrt_exec_context_set_address(ctx2, 0, a.x));
  CHECK_OK(etrt_exec_context_set_address(ctx2, 1, b.y));
  CHECK_OK(etrt_exec_context_enqueue(ctx2, stream));
  etrt_exec_context_destroy(ctx2);
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK_OK(sim->memcpy_async(b.host_y, b.y, 4 * MLP_OUT * sizeof(float), ETRT_COPY_DEVICE_TO_HOST,
                             stream));
  CHECK_OK(sim->stream_synchronize(stream));
  CHECK(memcmp(a.host_y, b.host_y, 4 * MLP_OUT * sizeof(float)) == 0);
  etrt_exec_context_destroy(ctx);
  io_release(&a);
  io_release(&b);
  CHECK_OK(sim->stream_destroy(stream));
  etrt_engine_destroy(engine);
  free(plan);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_device_checks(void) {
  CHECK_OK(etrt_device_select_sim(2));
  uint8_t *plan;
  etrt_engine *engine = mlp_engine(1, &plan);
  etrt_exec_context *ctx = NULL;
  CHECK_FAILS(etrt_exec_context_create(engine, sim, &ctx), ETRT_ERROR_STATE,
              "engine 'mlp' runs on cuda:1 but the current device is 0");
  CHECK_OK(sim->set_device(1));
  CHECK_OK(etrt_exec_context_create(engine, sim, &ctx));
  etrt_exec_context_destroy(ctx);
  CHECK_OK(sim->set_device(0));
  etrt_engine_destroy(engine);
  free(plan);
  engine = mlp_engine(5, &plan);
  CHECK_FAILS(etrt_exec_context_create(engine, sim, &ctx), ETRT_ERROR_DEVICE,
              "engine 'mlp' was built for cuda:5, but the sim driver has 2 device(s)");
  etrt_engine_destroy(engine);
  free(plan);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

/* A node whose output dims are known only at execute needs its values on the host: a
 * CUDA plan holding one is refused at create, naming it. */
static void test_dims_at_execute_refused(void) {
  CHECK_OK(etrt_device_select_sim(1));
  etrt_network *net = NULL;
  int32_t x, cond, y;
  const int64_t dims[] = {4};
  CHECK_OK(etrt_network_create(&net));
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, dims, dims, &x));
  CHECK_OK(etrt_network_add_input(net, "cond", ETRT_DTYPE_BOOL, 1, dims, dims, &cond));
  CHECK_OK(etrt_network_add_op(net, "Compress", "pick", 2, (int32_t[]){x, cond}, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_plan_options options = {.device = {ETRT_DEVICE_CUDA, 0}};
  uint8_t *plan = NULL;
  size_t size = 0;
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_plan_build(net, &options, &plan, &size));
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_exec_context *ctx = NULL;
  CHECK_FAILS(etrt_exec_context_create(engine, sim, &ctx), ETRT_ERROR_UNSUPPORTED,
              "node 0 'pick' (Compress): its output dims are known only at execute");
  /* The CPU executor takes it. */
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

/* Every allocation failure during context creation fails cleanly and leaks nothing. */
static void test_allocation_faults(void) {
  for (long n = 1; n <= 3; ++n) {
    CHECK_OK(etrt_device_select_sim(1));
    uint8_t *plan;
    etrt_engine *engine = mlp_engine(0, &plan);
    etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, n);
    etrt_exec_context *ctx = NULL;
    etrt_status s = etrt_exec_context_create(engine, sim, &ctx);
    if (s == ETRT_OK) {
      etrt_exec_context_destroy(ctx);
    } else {
      CHECK_EQ_INT(s, ETRT_ERROR_DEVICE);
      CHECK(ctx == NULL);
    }
    etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 0);
    etrt_engine_destroy(engine);
    free(plan);
    CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
  }
}

int main(void) {
  test_mlp_init(&mlp, 9);
  sim = etrt_device_sim_driver();
  RUN_TEST(test_runs_on_the_stream);
  RUN_TEST(test_device_checks);
  RUN_TEST(test_dims_at_execute_refused);
  RUN_TEST(test_allocation_faults);
  etrt_device_select_sim(0);
  return TEST_EXIT();
}
