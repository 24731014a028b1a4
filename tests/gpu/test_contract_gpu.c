/* The device-handling contract on a real NVIDIA GPU: the rules the simulated tests
 * check, where the hardware can show them, plus green-context confinement seen from
 * inside the engine's own kernels and by throughput. Skips without a GPU. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/status.h"
#include "device/device.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "etrt/stream.h"
#include "test_programs.h"
#include "test_util.h"

#define IN 64
#define HIDDEN 128
#define OUT 16
#define MAX_BATCH 32

static const etrt_device_driver *d;

typedef etrt_test_mlp_fixture fixture;

static int fixture_open(fixture *f, const char *name, uint32_t seed) {
  return etrt_test_mlp_fixture_open(f, IN, HIDDEN, OUT, MAX_BATCH,
                                    (etrt_device){ETRT_DEVICE_CUDA, 0}, name, seed);
}

static void fill_input(float *x, int64_t batch, int salt) {
  etrt_test_mlp_fill_input(x, batch, IN, salt);
}

static void copy_sync(void *dst, const void *src, size_t size, etrt_copy_kind kind) {
  CHECK_OK(d->memcpy_async(dst, src, size, kind, ETRT_STREAM_PER_THREAD));
  CHECK_OK(d->stream_synchronize(ETRT_STREAM_PER_THREAD));
}

/* float32 matrix work on the GPU: TF32 is not used in FP32 mode, so 1e-4 covers
 * summation order. */
#define TOLERANCE 1e-4

static int host_run(fixture *f, int64_t batch, int salt) {
  float x[MAX_BATCH * IN], want[MAX_BATCH * OUT];
  fill_input(x, batch, salt);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {batch, IN}};
  etrt_tensor_view out;
  if (etrt_method_set_input(f->method, 0, &vx) != ETRT_OK ||
      etrt_method_execute(f->method) != ETRT_OK ||
      etrt_method_get_output(f->method, 0, &out) != ETRT_OK || out.sizes[0] != batch) {
    fprintf(stderr, "host_run: %s\n", etrt_last_error());
    return 0;
  }
  etrt_test_mlp_reference(&f->mlp, x, batch, want);
  return etrt_test_max_diff(out.data, want, (size_t)(batch * OUT)) < TOLERANCE;
}

static void test_staging_logged_once_per_engine(void) {
  etrt_test_staging_log_start();
  fixture a, b;
  CHECK(fixture_open(&a, "gpu_engine_a", 1));
  CHECK(fixture_open(&b, "gpu_engine_b", 2));
  for (int i = 0; i < 4; ++i) CHECK(host_run(&a, 1 + i * 7, i));
  CHECK_EQ_INT(etrt_test_staging_log_count(), 1);
  CHECK_STR_CONTAINS(etrt_test_staging_log_last(), "gpu_engine_a");
  for (int i = 0; i < 3; ++i) CHECK(host_run(&b, 5, i));
  CHECK_EQ_INT(etrt_test_staging_log_count(), 2);
  CHECK_STR_CONTAINS(etrt_test_staging_log_last(), "gpu_engine_b");
  etrt_test_staging_log_stop();
  etrt_test_mlp_fixture_close(&a);
  etrt_test_mlp_fixture_close(&b);
}

static void test_device_io_zero_copy_silent(void) {
  etrt_test_staging_log_start();
  fixture f;
  CHECK(fixture_open(&f, "gpu_device_io", 3));
  float x[8 * IN], y[8 * OUT], want[8 * OUT];
  fill_input(x, 8, 1);
  void *dx = NULL, *dy = NULL, *managed = NULL;
  CHECK_OK(d->malloc_device(sizeof x, &dx));
  CHECK_OK(d->malloc_device(MAX_BATCH * OUT * sizeof(float), &dy));
  copy_sync(dx, x, sizeof x, ETRT_COPY_HOST_TO_DEVICE);
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {8, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  for (int i = 0; i < 3; ++i) CHECK_OK(etrt_method_execute(f.method));
  copy_sync(y, dy, sizeof y, ETRT_COPY_DEVICE_TO_HOST);
  etrt_test_mlp_reference(&f.mlp, x, 8, want);
  CHECK(etrt_test_max_diff(y, want, 8 * OUT) < TOLERANCE);
  /* Managed memory is bound in place too. */
  CHECK_OK(d->malloc_managed(sizeof x, &managed));
  memcpy(managed, x, sizeof x);
  vx.data = managed;
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_execute(f.method));
  copy_sync(y, dy, sizeof y, ETRT_COPY_DEVICE_TO_HOST);
  CHECK(etrt_test_max_diff(y, want, 8 * OUT) < TOLERANCE);
  CHECK_EQ_INT(etrt_test_staging_log_count(), 0);
  etrt_test_staging_log_stop();
  etrt_test_mlp_fixture_close(&f);
  d->free_device(dx);
  d->free_device(dy);
  d->free_device(managed);
}

static void test_pinned_host_io(void) {
  fixture f;
  CHECK(fixture_open(&f, "gpu_pinned", 4));
  float *x = NULL, *y = NULL, want[4 * OUT];
  CHECK_OK(d->malloc_pinned(4 * IN * sizeof(float), (void **)&x));
  CHECK_OK(d->malloc_pinned(MAX_BATCH * OUT * sizeof(float), (void **)&y));
  fill_input(x, 4, 2);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {4, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, y, MAX_BATCH * OUT * sizeof(float)));
  CHECK_OK(etrt_method_execute(f.method));
  etrt_test_mlp_reference(&f.mlp, x, 4, want);
  CHECK(etrt_test_max_diff(y, want, 4 * OUT) < TOLERANCE);
  etrt_test_mlp_fixture_close(&f);
  d->free_pinned(x);
  d->free_pinned(y);
}

static void test_async_runs_never_stale(void) {
  fixture f;
  CHECK(fixture_open(&f, "gpu_async", 5));
  void *dx = NULL, *dy = NULL;
  CHECK_OK(d->malloc_device(IN * sizeof(float), &dx));
  CHECK_OK(d->malloc_device(MAX_BATCH * OUT * sizeof(float), &dy));
  etrt_stream stream;
  CHECK_OK(d->stream_create(&stream));
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {1, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  float *x = NULL, *y = NULL, want[OUT];
  CHECK_OK(d->malloc_pinned(IN * sizeof(float), (void **)&x));
  CHECK_OK(d->malloc_pinned(OUT * sizeof(float), (void **)&y));
  int stale = 0;
  /* Under compute-sanitizer (ETRT_TEST_UNDER_SANITIZER=1) every launch is slow. */
  int runs = getenv("ETRT_TEST_UNDER_SANITIZER") != NULL ? 300 : 10000;
  ETRT_STREAM_SCOPE(stream) {
    for (int i = 0; i < runs; ++i) {
      fill_input(x, 1, i);
      d->memcpy_async(dx, x, IN * sizeof(float), ETRT_COPY_HOST_TO_DEVICE, stream);
      void *event = NULL;
      if (etrt_method_execute_async(f.method, &event) != ETRT_OK || event == NULL) {
        ++stale;
        break;
      }
      d->memcpy_async(y, dy, OUT * sizeof(float), ETRT_COPY_DEVICE_TO_HOST, stream);
      d->event_synchronize(event);
      d->stream_synchronize(stream);
      etrt_test_mlp_reference(&f.mlp, x, 1, want);
      if (etrt_test_max_diff(y, want, OUT) > TOLERANCE) ++stale;
    }
  }
  printf("%d async runs on the GPU: %d stale\n", runs, stale);
  CHECK_EQ_INT(stale, 0);
  float host_out[MAX_BATCH * OUT];
  void *event;
  CHECK_OK(etrt_method_set_output(f.method, 0, host_out, sizeof host_out));
  CHECK_FAILS(etrt_method_execute_async(f.method, &event), ETRT_ERROR_INVALID_ARGUMENT,
              "host memory");
  etrt_test_mlp_fixture_close(&f);
  d->stream_destroy(stream);
  d->free_device(dx);
  d->free_device(dy);
  d->free_pinned(x);
  d->free_pinned(y);
}

static void test_two_threads_one_method(void) {
  fixture f;
  CHECK(fixture_open(&f, "gpu_shared", 6));
  CHECK_EQ_INT(etrt_test_mlp_fixture_race(&f, 500, TOLERANCE), 0);
  etrt_test_mlp_fixture_close(&f);
}

/* --- green contexts ------------------------------------------------------------- */

/* A plan whose one kernel records the SM of each of `blocks` blocks. */
static etrt_status sm_id_method(int64_t blocks, fixture *f) {
  memset(f, 0, sizeof *f);
  etrt_network *net;
  ETRT_RETURN_IF_ERROR(etrt_network_create(&net));
  int32_t x, y;
  int64_t one = 1;
  etrt_attribute attribute = {.name = "blocks", .kind = ETRT_ATTRIBUTE_INT, .i = blocks};
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_status s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, &one, &one, &x);
  if (s == ETRT_OK) s = etrt_network_add_op(net, "EtrtSmId", "sm_id", 1, &x, 1, &y, 1, &attribute);
  if (s == ETRT_OK) s = etrt_network_mark_output(net, y, "sm");
  etrt_plan_options options = {.device = {ETRT_DEVICE_CUDA, 0}, .name = "sm_id"};
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, &plan, &plan_size);
  etrt_network_destroy(net);
  if (s == ETRT_OK) s = etrt_plan_to_program(plan, plan_size, &f->pte, &f->size);
  free(plan);
  if (s == ETRT_OK) s = etrt_program_load_memory(f->pte, f->size, NULL, &f->program);
  if (s == ETRT_OK) s = etrt_method_create(f->program, "forward", &f->method);
  return s;
}

static int distinct_sms(const int32_t *ids, int64_t n) {
  int seen[1024] = {0}, count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] >= 0 && ids[i] < 1024 && !seen[ids[i]]) {
      seen[ids[i]] = 1;
      ++count;
    }
  }
  return count;
}

static void test_green_context_confines_the_engine(void) {
  etrt_device_attributes a;
  CHECK_OK(d->attributes(0, &a));
  const int64_t blocks = 4096;
  fixture f;
  CHECK_OK(sm_id_method(blocks, &f));
  float x = 0.0f;
  etrt_tensor_view vx = {&x, ETRT_DTYPE_FLOAT32, 1, {1}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_execute(f.method));
  etrt_tensor_view out;
  CHECK_OK(etrt_method_get_output(f.method, 0, &out));
  int all = distinct_sms(out.data, blocks);
  printf("green: default stream, %d blocks ran on %d of %d SMs\n", (int)blocks, all, a.sm_count);
  CHECK(all > a.sm_count / 2);
  const int asks[] = {16, 32, 64};
  for (size_t i = 0; i < sizeof asks / sizeof asks[0]; ++i) {
    void *green = NULL;
    int granted = 0;
    CHECK_OK(etrt_green_stream_create(0, asks[i], &green, &granted));
    if (green == NULL) break;
    ETRT_STREAM_SCOPE(green) { CHECK_OK(etrt_method_execute(f.method)); }
    CHECK_OK(etrt_method_get_output(f.method, 0, &out));
    int used = distinct_sms(out.data, blocks);
    printf("green: %d SMs asked, %d granted, the engine's kernel ran on %d SMs\n", asks[i], granted,
           used);
    CHECK(granted >= asks[i]);
    CHECK(used <= granted);
    CHECK(used >= granted / 2);
    CHECK_OK(etrt_green_stream_destroy(green));
  }
  etrt_test_mlp_fixture_close(&f);
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Throughput of a matrix-bound engine falls with the SMs it is given. */
static void test_green_context_throughput(void) {
  if (getenv("ETRT_TEST_UNDER_SANITIZER") != NULL) {
    printf("green throughput: timings mean nothing under compute-sanitizer; skipped\n");
    return;
  }
  const int64_t n = 2048;
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t a, b, y;
  int64_t dims[2] = {n, n};
  float *weights = calloc((size_t)(n * n), sizeof *weights);
  for (int64_t i = 0; i < n * n; ++i) weights[i] = (float)(i % 7) * 0.01f;
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 2, dims, dims, &a));
  CHECK_OK(etrt_network_add_constant(net, "b", ETRT_DTYPE_FLOAT32, 2, dims, weights, &b));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm", 2, (int32_t[]){a, b}, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  uint8_t *plan = NULL, *pte = NULL;
  size_t plan_size = 0, pte_size = 0;
  etrt_plan_options options = {.device = {ETRT_DEVICE_CUDA, 0}, .name = "matmul"};
  CHECK_OK(etrt_plan_build(net, &options, &plan, &plan_size));
  etrt_network_destroy(net);
  CHECK_OK(etrt_plan_to_program(plan, plan_size, &pte, &pte_size));
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_program_load_memory(pte, pte_size, NULL, &program));
  CHECK_OK(etrt_method_create(program, "forward", &method));
  void *da = NULL, *dy = NULL;
  CHECK_OK(d->malloc_device((size_t)(n * n) * 4, &da));
  CHECK_OK(d->malloc_device((size_t)(n * n) * 4, &dy));
  CHECK_OK(d->memset_async(da, 0, (size_t)(n * n) * 4, ETRT_STREAM_PER_THREAD));
  etrt_tensor_view va = {da, ETRT_DTYPE_FLOAT32, 2, {n, n}};
  CHECK_OK(etrt_method_set_input(method, 0, &va));
  CHECK_OK(etrt_method_set_output(method, 0, dy, (size_t)(n * n) * 4));
  const int sms[] = {16, 32, 64, 0};
  double times[4] = {0};
  for (int i = 0; i < 4; ++i) {
    void *stream = NULL;
    int granted = 0;
    if (sms[i] > 0)
      CHECK_OK(etrt_green_stream_create(0, sms[i], &stream, &granted));
    else
      CHECK_OK(d->stream_create(&stream));
    ETRT_STREAM_SCOPE(stream) {
      for (int w = 0; w < 3; ++w) CHECK_OK(etrt_method_execute(method));
      double t0 = seconds();
      for (int r = 0; r < 20; ++r) CHECK_OK(etrt_method_execute(method));
      times[i] = (seconds() - t0) / 20;
    }
    printf("green throughput: %s%3d SMs: %.3f ms per %lldx%lld matmul (%.1f TFLOP/s)\n",
           sms[i] ? "" : "all ", sms[i] ? granted : 0, times[i] * 1e3, (long long)n, (long long)n,
           2.0 * n * n * n / times[i] / 1e12);
    if (sms[i] > 0)
      CHECK_OK(etrt_green_stream_destroy(stream));
    else
      d->stream_destroy(stream);
  }
  CHECK(times[0] > 1.5 * times[2]); /* 16 SMs are clearly slower than 64 */
  CHECK(times[2] >= times[3] * 0.9);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  d->free_device(da);
  d->free_device(dy);
  free(pte);
  free(plan);
  free(weights);
}

int main(void) {
  d = etrt_device_driver_get();
  if (d == NULL || strcmp(d->name, "cuda") != 0) {
    printf("no GPU: the GPU contract tests need an NVIDIA GPU; skipped\n");
    return 0;
  }
  RUN_TEST(test_staging_logged_once_per_engine);
  RUN_TEST(test_device_io_zero_copy_silent);
  RUN_TEST(test_pinned_host_io);
  RUN_TEST(test_async_runs_never_stale);
  RUN_TEST(test_two_threads_one_method);
  RUN_TEST(test_green_context_confines_the_engine);
  RUN_TEST(test_green_context_throughput);
  return TEST_EXIT();
}
