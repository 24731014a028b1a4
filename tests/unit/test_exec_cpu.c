/* The CPU executor end to end: an MLP built in code, serialized, deserialized and run
 * against a plain C reference; dynamic batch; binding refusals; many contexts on one
 * engine from several threads. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>

#include "engine/engine.h"
#include "engine_test_models.h"
#include "test_util.h"

static test_mlp mlp;
static uint8_t *plan;
static size_t plan_size;

static int close_enough(const float *a, const float *b, size_t n, float tol) {
  for (size_t i = 0; i < n; ++i) {
    if (!(fabsf(a[i] - b[i]) <= tol)) {
      fprintf(stderr, "element %zu: %g vs %g\n", i, a[i], b[i]);
      return 0;
    }
  }
  return 1;
}

/* Runs the MLP on `batch` rows of seed-made input; 1 when it matches the reference. */
static int run_and_check(etrt_exec_context *ctx, int64_t batch, uint32_t seed) {
  float *x = malloc((size_t)batch * MLP_IN * sizeof(float));
  float *y = malloc((size_t)batch * MLP_OUT * sizeof(float) + 1);
  float *ref = malloc((size_t)batch * MLP_OUT * sizeof(float) + 1);
  test_fill(x, (size_t)batch * MLP_IN, seed, 1.0f);
  test_mlp_reference(&mlp, x, batch, ref);
  int ok = etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){batch, MLP_IN}) == ETRT_OK;
  int32_t rank = 0;
  int64_t sizes[ETRT_MAX_RANK] = {0};
  ok = ok && etrt_exec_context_output_shape(ctx, 1, &rank, sizes) == ETRT_OK && rank == 2 &&
       sizes[0] == batch && sizes[1] == MLP_OUT;
  ok = ok && etrt_exec_context_set_address(ctx, 0, x) == ETRT_OK &&
       etrt_exec_context_set_address(ctx, 1, y) == ETRT_OK &&
       etrt_exec_context_enqueue(ctx, NULL) == ETRT_OK;
  ok = ok && close_enough(y, ref, (size_t)batch * MLP_OUT, 1e-4f);
  if (!ok) fprintf(stderr, "batch %lld: %s\n", (long long)batch, etrt_last_error());
  free(x);
  free(y);
  free(ref);
  return ok;
}

static void test_mlp_matches_reference(void) {
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  CHECK_EQ_INT(etrt_engine_io_count(engine), 2);
  CHECK_EQ_INT(etrt_engine_io_find(engine, "x"), 0);
  CHECK_EQ_INT(etrt_engine_io_find(engine, "y"), 1);
  CHECK_EQ_INT(etrt_engine_io_find(engine, "nope"), -1);
  const etrt_engine_io *y = etrt_engine_io_at(engine, 1);
  CHECK(y != NULL && !y->is_input && y->rank == 2 && y->min_sizes[0] == 1 &&
        y->max_sizes[0] == 32 && y->max_sizes[1] == MLP_OUT);
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  CHECK_EQ_INT(etrt_exec_context_executor(ctx), ETRT_EXECUTOR_CPU);
  /* Batches up and down within the bounds, repeated: the buffers are reused. */
  const int64_t batches[] = {1, 8, 32, 3, 32, 17, 1};
  for (size_t i = 0; i < sizeof batches / sizeof batches[0]; ++i)
    CHECK(run_and_check(ctx, batches[i], 100 + (uint32_t)i));
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
}

static void test_binding_refusals(void) {
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  float x[2 * MLP_IN] = {0}, y[2 * MLP_OUT];
  /* A dynamic input without a shape. */
  CHECK_FAILS(etrt_exec_context_enqueue(ctx, NULL), ETRT_ERROR_STATE,
              "input 'x' has no shape set, and axis 0 varies in [1, 32]");
  CHECK_FAILS(etrt_exec_context_output_shape(ctx, 1, NULL, NULL), ETRT_ERROR_STATE, "'x'");
  /* Shapes outside the bounds, naming the axis and bounds. */
  CHECK_FAILS(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){33, MLP_IN}),
              ETRT_ERROR_INVALID_ARGUMENT,
              "input 'x' axis 0: size 33 is outside its bounds [1, 32]");
  CHECK_FAILS(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){0, MLP_IN}),
              ETRT_ERROR_INVALID_ARGUMENT, "axis 0: size 0");
  CHECK_FAILS(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){2, 63}),
              ETRT_ERROR_INVALID_ARGUMENT, "axis 1: size 63 is outside its bounds [64, 64]");
  CHECK_FAILS(etrt_exec_context_set_input_shape(ctx, 0, 3, (int64_t[]){2, 64, 1}),
              ETRT_ERROR_INVALID_ARGUMENT, "has rank 2, not 3");
  CHECK_FAILS(etrt_exec_context_set_input_shape(ctx, 1, 2, (int64_t[]){2, 10}),
              ETRT_ERROR_INVALID_ARGUMENT, "'y' is an output");
  CHECK_FAILS(etrt_exec_context_set_input_shape(ctx, 7, 2, (int64_t[]){2, 10}),
              ETRT_ERROR_INVALID_ARGUMENT, "I/O 7 does not exist");
  CHECK_FAILS(etrt_exec_context_set_input_values(ctx, 0, (int64_t[]){1}, 1),
              ETRT_ERROR_INVALID_ARGUMENT, "not a shape input");
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 2, (int64_t[]){2, MLP_IN}));
  /* Unbound I/O. */
  CHECK_FAILS(etrt_exec_context_enqueue(ctx, NULL), ETRT_ERROR_STATE,
              "input 'x' has no address bound");
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, x));
  CHECK_FAILS(etrt_exec_context_enqueue(ctx, NULL), ETRT_ERROR_STATE,
              "output 'y' has no address bound");
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, y));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  /* Unbinding is refused at the next enqueue. */
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, NULL));
  CHECK_FAILS(etrt_exec_context_enqueue(ctx, NULL), ETRT_ERROR_STATE, "input 'x'");
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
}

/* A CUDA plan runs on the CPU executor when no driver is given. */
static void test_cuda_plan_on_cpu(void) {
  uint8_t *cuda_plan;
  size_t cuda_size;
  CHECK_OK(test_mlp_plan(&mlp, (etrt_device){ETRT_DEVICE_CUDA, 0}, &cuda_plan, &cuda_size));
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(cuda_plan, cuda_size, &engine));
  etrt_device d = etrt_engine_device(engine);
  CHECK(d.type == ETRT_DEVICE_CUDA && d.index == 0);
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  CHECK_EQ_INT(etrt_exec_context_executor(ctx), ETRT_EXECUTOR_CPU);
  CHECK(run_and_check(ctx, 5, 7));
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(cuda_plan);
}

typedef struct thread_job {
  etrt_engine *engine;
  int index;
  int failures;
} thread_job;

static void *thread_main(void *arg) {
  thread_job *job = arg;
  etrt_exec_context *ctx;
  if (etrt_exec_context_create(job->engine, NULL, &ctx) != ETRT_OK) {
    job->failures = 1000;
    return NULL;
  }
  for (int run = 0; run < 60; ++run) {
    int64_t batch = 1 + (job->index * 7 + run * 5) % 32;
    if (!run_and_check(ctx, batch, (uint32_t)(job->index * 1000 + run))) ++job->failures;
  }
  etrt_exec_context_destroy(ctx);
  return NULL;
}

static void test_many_contexts_many_threads(void) {
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  enum { THREADS = 8 };
  pthread_t threads[THREADS];
  thread_job jobs[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    jobs[t] = (thread_job){.engine = engine, .index = t};
    CHECK(pthread_create(&threads[t], NULL, thread_main, &jobs[t]) == 0);
  }
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_EQ_INT(jobs[t].failures, 0);
  }
  etrt_engine_destroy(engine);
}

/* MatMul with a broadcast batch, an Add of a bias row and a Sub, with two outputs; an
 * intermediate also used as an output. */
static void test_matmul_graph_two_outputs(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t a, w, bias, mm, add, sub;
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT64, 3, (int64_t[]){1, 2, 3},
                                  (int64_t[]){4, 2, 3}, &a));
  double wd[3 * 2] = {1, 2, 3, 4, 5, 6}, bd[2] = {0.5, -0.5};
  CHECK_OK(etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT64, 2, (int64_t[]){3, 2}, wd, &w));
  CHECK_OK(etrt_network_add_constant(net, "b", ETRT_DTYPE_FLOAT64, 1, (int64_t[]){2}, bd, &bias));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm", 2, (int32_t[]){a, w}, 1, &mm, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Add", "add", 2, (int32_t[]){mm, bias}, 1, &add, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Sub", "sub", 2, (int32_t[]){add, mm}, 1, &sub, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, add, "sum"));
  CHECK_OK(etrt_network_mark_output(net, sub, "diff"));
  uint8_t *p;
  size_t n;
  CHECK_OK(etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 0}}, &p, &n));
  etrt_network_destroy(net);
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(p, n, &engine));
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  double in[3 * 2 * 3], sum[3 * 2 * 2], diff[3 * 2 * 2];
  for (int i = 0; i < 18; ++i) in[i] = i - 4;
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 3, (int64_t[]){3, 2, 3}));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, in));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, sum));
  CHECK_OK(etrt_exec_context_set_address(ctx, 2, diff));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 2; ++c) {
      double acc = 0;
      for (int k = 0; k < 3; ++k) acc += in[r * 3 + k] * wd[k * 2 + c];
      CHECK_NEAR(sum[r * 2 + c], acc + bd[c], 1e-12);
      CHECK_NEAR(diff[r * 2 + c], bd[c], 1e-12);
    }
  }
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(p);
}

/* Plans outlive their engines (weights are used in place); freed at exit. */
static uint8_t *kept_plans[16];
static int kept_count;

static etrt_engine *build_engine(etrt_network *net) {
  uint8_t *p = NULL;
  size_t n = 0;
  etrt_engine *engine = NULL;
  if (etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 0}}, &p, &n) == ETRT_OK)
    (void)etrt_engine_deserialize(p, n, &engine);
  if (engine == NULL) fprintf(stderr, "build_engine: %s\n", etrt_last_error());
  etrt_network_destroy(net);
  if (kept_count < 16)
    kept_plans[kept_count++] = p;
  else
    free(p);
  return engine;
}

/* A shape input's values decide an output shape (ConstantOfShape); the values are
 * checked against their bounds. */
static void test_shape_input(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t shape, y;
  CHECK_OK(
      etrt_network_add_shape_input(net, "shape", 2, (int64_t[]){1, 1}, (int64_t[]){4, 3}, &shape));
  float fill = 2.5f;
  etrt_attribute value = {
      .name = "value",
      .kind = ETRT_ATTRIBUTE_TENSOR,
      .tensor = {.data = &fill, .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .sizes = {1}}};
  CHECK_OK(etrt_network_add_op(net, "ConstantOfShape", "c", 1, &shape, 1, &y, 1, &value));
  int64_t lo[2], hi[2];
  CHECK_OK(etrt_network_value_info(net, y, NULL, NULL, lo, hi));
  CHECK(lo[0] == 1 && lo[1] == 1 && hi[0] == 4 && hi[1] == 3);
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_engine *engine = build_engine(net);
  CHECK(engine != NULL);
  if (engine == NULL) return;
  const etrt_engine_io *io = etrt_engine_io_at(engine, 0);
  CHECK(io->is_input && io->is_shape_input && io->value_count == 2 && io->max_values[0] == 4);
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  CHECK_FAILS(etrt_exec_context_enqueue(ctx, NULL), ETRT_ERROR_STATE,
              "shape input 'shape' has no values");
  CHECK_FAILS(etrt_exec_context_set_input_values(ctx, 0, (int64_t[]){3, 4}, 2),
              ETRT_ERROR_INVALID_ARGUMENT,
              "shape input 'shape' value 1: 4 is outside its bounds [1, 3]");
  CHECK_FAILS(etrt_exec_context_set_input_values(ctx, 0, (int64_t[]){3}, 1),
              ETRT_ERROR_INVALID_ARGUMENT, "takes 2 values");
  CHECK_FAILS(etrt_exec_context_set_address(ctx, 0, &fill), ETRT_ERROR_INVALID_ARGUMENT,
              "passed by value");
  float out[12];
  for (int round = 0; round < 2; ++round) {
    int64_t values[2] = {round ? 4 : 3, round ? 3 : 2};
    CHECK_OK(etrt_exec_context_set_input_values(ctx, 0, values, 2));
    int32_t rank;
    int64_t sizes[ETRT_MAX_RANK];
    CHECK_OK(etrt_exec_context_output_shape(ctx, 1, &rank, sizes));
    CHECK(rank == 2 && sizes[0] == values[0] && sizes[1] == values[1]);
    for (int i = 0; i < 12; ++i) out[i] = -1;
    CHECK_OK(etrt_exec_context_set_address(ctx, 1, out));
    CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
    for (int i = 0; i < 12; ++i) CHECK(out[i] == (i < values[0] * values[1] ? 2.5f : -1.0f));
  }
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
}

/* Shape(x) is computed on the host during shape inference (a shape tensor) and
 * decides ConstantOfShape's output, which follows x's dims at run time. */
static void test_shape_tensor_on_host(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, shape, c, y;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){1, 2},
                                  (int64_t[]){4, 3}, &x));
  CHECK_OK(etrt_network_add_op(net, "Shape", "s", 1, &x, 1, &shape, 0, NULL));
  float one = 1.0f;
  etrt_attribute value = {
      .name = "value",
      .kind = ETRT_ATTRIBUTE_TENSOR,
      .tensor = {.data = &one, .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .sizes = {1}}};
  CHECK_OK(etrt_network_add_op(net, "ConstantOfShape", "c", 1, &shape, 1, &c, 1, &value));
  CHECK_OK(etrt_network_add_op(net, "Add", "add", 2, (int32_t[]){c, x}, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_engine *engine = build_engine(net);
  CHECK(engine != NULL);
  if (engine == NULL) return;
  etrt_exec_context *ctx;
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  float in[12], out[12];
  for (int i = 0; i < 12; ++i) in[i] = (float)i;
  const int64_t shapes[3][2] = {{2, 3}, {4, 2}, {1, 2}};
  for (int k = 0; k < 3; ++k) {
    CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 2, shapes[k]));
    int32_t rank;
    int64_t sizes[ETRT_MAX_RANK];
    CHECK_OK(etrt_exec_context_output_shape(ctx, 1, &rank, sizes));
    CHECK(rank == 2 && sizes[0] == shapes[k][0] && sizes[1] == shapes[k][1]);
    CHECK_OK(etrt_exec_context_set_address(ctx, 0, in));
    CHECK_OK(etrt_exec_context_set_address(ctx, 1, out));
    CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
    for (int i = 0; i < shapes[k][0] * shapes[k][1]; ++i) CHECK(out[i] == in[i] + 1.0f);
  }
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
}

int main(void) {
  test_mlp_init(&mlp, 42);
  if (test_mlp_plan(&mlp, (etrt_device){ETRT_DEVICE_CPU, 0}, &plan, &plan_size) != ETRT_OK) {
    fprintf(stderr, "building the MLP plan: %s\n", etrt_last_error());
    return 1;
  }
  RUN_TEST(test_mlp_matches_reference);
  RUN_TEST(test_binding_refusals);
  RUN_TEST(test_cuda_plan_on_cpu);
  RUN_TEST(test_many_contexts_many_threads);
  RUN_TEST(test_matmul_graph_two_outputs);
  RUN_TEST(test_shape_input);
  RUN_TEST(test_shape_tensor_on_host);
  free(plan);
  for (int i = 0; i < kept_count; ++i) free(kept_plans[i]);
  return TEST_EXIT();
}
