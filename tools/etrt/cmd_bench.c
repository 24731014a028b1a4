/* etrt bench: figures for the device contract on the present GPU (printed, never
 * asserted). 1) the host overhead of etrt_method_execute with device-resident I/O over
 * a raw engine enqueue of the same plan; 2) staging bandwidth through the delegate with
 * pinned and pageable host I/O against plain copies of the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "device/device.h"
#include "duration.h"
#include "engine/engine.h"
#include "etrt/method.h"
#include "etrt/network.h"
#include "etrt/program.h"
#include "etrt/stream.h"

static double etrt_bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int etrt_bench_compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double etrt_bench_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, etrt_bench_compare);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* A plan of one Relu over `count` float32 values for cuda:0. */
static etrt_status etrt_bench_plan(int64_t count, uint8_t **plan, size_t *size) {
  etrt_network *net;
  if (etrt_network_create(&net) != ETRT_OK) return ETRT_ERROR_OUT_OF_MEMORY;
  int32_t x, y;
  etrt_status s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, &count, &count, &x);
  if (s == ETRT_OK) s = etrt_network_add_op(net, "Relu", "relu", 1, &x, 1, &y, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_mark_output(net, y, "y");
  etrt_plan_options options = {.device = {ETRT_DEVICE_CUDA, 0}, .name = "bench"};
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, plan, size);
  etrt_network_destroy(net);
  return s;
}

typedef struct etrt_bench_method {
  uint8_t *plan, *pte;
  size_t plan_size, pte_size;
  etrt_program *program;
  etrt_method *method;
} etrt_bench_method;

static etrt_status etrt_bench_method_open(etrt_bench_method *b, int64_t count) {
  memset(b, 0, sizeof *b);
  etrt_status s = etrt_bench_plan(count, &b->plan, &b->plan_size);
  if (s == ETRT_OK) s = etrt_plan_to_program(b->plan, b->plan_size, &b->pte, &b->pte_size);
  if (s == ETRT_OK) s = etrt_program_load_memory(b->pte, b->pte_size, NULL, &b->program);
  if (s == ETRT_OK) s = etrt_method_create(b->program, "forward", &b->method);
  return s;
}

static void etrt_bench_method_close(etrt_bench_method *b) {
  etrt_method_destroy(b->method);
  etrt_program_destroy(b->program);
  free(b->pte);
  free(b->plan);
}

#define ETRT_BENCH_CHECK(expr)                                           \
  do {                                                                   \
    etrt_status s_ = (expr);                                             \
    if (s_ != ETRT_OK) {                                                 \
      fprintf(stderr, "etrt bench: %s: %s\n", #expr, etrt_last_error()); \
      return 1;                                                          \
    }                                                                    \
  } while (0)

static int etrt_bench_overhead(const etrt_device_driver *d, int iterations) {
  const int64_t count = 256;
  etrt_bench_method b;
  ETRT_BENCH_CHECK(etrt_bench_method_open(&b, count));
  void *x, *y;
  etrt_stream stream;
  ETRT_BENCH_CHECK(d->malloc_device((size_t)count * 4, &x));
  ETRT_BENCH_CHECK(d->malloc_device((size_t)count * 4, &y));
  ETRT_BENCH_CHECK(d->memset_async(x, 0, (size_t)count * 4, ETRT_STREAM_PER_THREAD));
  ETRT_BENCH_CHECK(d->stream_synchronize(ETRT_STREAM_PER_THREAD));
  ETRT_BENCH_CHECK(d->stream_create(&stream));
  /* Raw: the engine alone, enqueue + synchronize. */
  etrt_engine *engine;
  etrt_exec_context *context;
  ETRT_BENCH_CHECK(etrt_engine_deserialize(b.plan, b.plan_size, &engine));
  ETRT_BENCH_CHECK(etrt_exec_context_create(engine, d, &context));
  ETRT_BENCH_CHECK(etrt_exec_context_set_input_shape(context, 0, 1, &count));
  ETRT_BENCH_CHECK(etrt_exec_context_set_address(context, 0, x));
  ETRT_BENCH_CHECK(etrt_exec_context_set_address(context, 1, y));
  double *raw = calloc((size_t)iterations, sizeof *raw),
         *full = calloc((size_t)iterations, sizeof *full);
  if (raw == NULL || full == NULL) return 1;
  /* The method: device-resident I/O, the same stream selected. */
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 1, {count}};
  ETRT_BENCH_CHECK(etrt_method_set_input(b.method, 0, &vx));
  ETRT_BENCH_CHECK(etrt_method_set_output(b.method, 0, y, (size_t)count * 4));
  ETRT_BENCH_CHECK(etrt_stream_push(stream));
  for (int warm = 0; warm < 100; ++warm) {
    ETRT_BENCH_CHECK(etrt_exec_context_enqueue(context, stream));
    ETRT_BENCH_CHECK(d->stream_synchronize(stream));
    ETRT_BENCH_CHECK(etrt_method_execute(b.method));
  }
  /* Interleaved, so that drift in clocks affects both alike. */
  for (int i = 0; i < iterations; ++i) {
    double t0 = etrt_bench_now();
    ETRT_BENCH_CHECK(etrt_exec_context_enqueue(context, stream));
    ETRT_BENCH_CHECK(d->stream_synchronize(stream));
    double t1 = etrt_bench_now();
    ETRT_BENCH_CHECK(etrt_method_execute(b.method));
    double t2 = etrt_bench_now();
    raw[i] = t1 - t0;
    full[i] = t2 - t1;
  }
  ETRT_BENCH_CHECK(etrt_stream_pop());
  double r = etrt_bench_median(raw, iterations), f = etrt_bench_median(full, iterations);
  char raw_text[32], full_text[32], overhead_text[32];
  printf(
      "overhead  raw enqueue+sync %10s   etrt_method_execute %10s   overhead %10s (median of %d)\n",
      etrt_tool_format_duration(r, raw_text, sizeof raw_text),
      etrt_tool_format_duration(f, full_text, sizeof full_text),
      etrt_tool_format_duration(f - r, overhead_text, sizeof overhead_text), iterations);
  free(raw);
  free(full);
  etrt_exec_context_destroy(context);
  etrt_engine_destroy(engine);
  d->stream_destroy(stream);
  d->free_device(x);
  d->free_device(y);
  etrt_bench_method_close(&b);
  return 0;
}

static int etrt_bench_staging(const etrt_device_driver *d, int pinned, int64_t count,
                              int iterations) {
  size_t bytes = (size_t)count * 4;
  etrt_bench_method b;
  ETRT_BENCH_CHECK(etrt_bench_method_open(&b, count));
  void *hx, *hy, *dx;
  if (pinned) {
    ETRT_BENCH_CHECK(d->malloc_pinned(bytes, &hx));
    ETRT_BENCH_CHECK(d->malloc_pinned(bytes, &hy));
  } else {
    hx = malloc(bytes);
    hy = malloc(bytes);
    if (hx == NULL || hy == NULL) return 1;
  }
  memset(hx, 1, bytes);
  memset(hy, 0, bytes);
  ETRT_BENCH_CHECK(d->malloc_device(bytes, &dx));
  etrt_stream stream;
  ETRT_BENCH_CHECK(d->stream_create(&stream));
  etrt_tensor_view vx = {hx, ETRT_DTYPE_FLOAT32, 1, {count}};
  ETRT_BENCH_CHECK(etrt_method_set_input(b.method, 0, &vx));
  ETRT_BENCH_CHECK(etrt_method_set_output(b.method, 0, hy, bytes));
  double *copy = calloc((size_t)iterations, sizeof *copy),
         *run = calloc((size_t)iterations, sizeof *run);
  if (copy == NULL || run == NULL) return 1;
  ETRT_BENCH_CHECK(etrt_stream_push(stream));
  ETRT_BENCH_CHECK(etrt_method_execute(b.method)); /* staging buffers allocated once */
  for (int i = 0; i < iterations; ++i) {
    double t0 = etrt_bench_now();
    ETRT_BENCH_CHECK(d->memcpy_async(dx, hx, bytes, ETRT_COPY_HOST_TO_DEVICE, stream));
    ETRT_BENCH_CHECK(d->memcpy_async(hy, dx, bytes, ETRT_COPY_DEVICE_TO_HOST, stream));
    ETRT_BENCH_CHECK(d->stream_synchronize(stream));
    double t1 = etrt_bench_now();
    ETRT_BENCH_CHECK(etrt_method_execute(b.method));
    double t2 = etrt_bench_now();
    copy[i] = t1 - t0;
    run[i] = t2 - t1;
  }
  ETRT_BENCH_CHECK(etrt_stream_pop());
  double c = etrt_bench_median(copy, iterations), r = etrt_bench_median(run, iterations);
  double gb = 2.0 * (double)bytes / 1e9;
  printf(
      "staging   %-8s %6.1f MB in + out: plain copies %6.2f GB/s   through execute %6.2f GB/s   "
      "ratio %5.1f%%\n",
      pinned ? "pinned" : "pageable", (double)bytes / 1e6, gb / c, gb / r, 100.0 * c / r);
  free(copy);
  free(run);
  d->stream_destroy(stream);
  d->free_device(dx);
  if (pinned) {
    d->free_pinned(hx);
    d->free_pinned(hy);
  } else {
    free(hx);
    free(hy);
  }
  etrt_bench_method_close(&b);
  return 0;
}

int etrt_cmd_bench(int argc, char **argv) {
  int iterations = 2000;
  int64_t mb = 64;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf(
          "usage: etrt bench [--iterations N] [--megabytes M]\n\n"
          "Measures, on the GPU: the host overhead of etrt_method_execute with device-resident\n"
          "I/O over a raw engine enqueue of the same plan, and the bandwidth of host I/O staged\n"
          "through the delegate (pinned and pageable) against plain copies of the same bytes.\n"
          "Figures are medians; compare versions within one run.\n");
      return 0;
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--megabytes") == 0 && i + 1 < argc) {
      mb = atol(argv[++i]);
    } else {
      fprintf(stderr, "etrt bench: unknown option '%s' (see etrt bench --help)\n", argv[i]);
      return 2;
    }
  }
  if (iterations < 1 || mb < 1) {
    fprintf(stderr, "etrt bench: --iterations and --megabytes take positive numbers\n");
    return 2;
  }
  const etrt_device_driver *d = etrt_device_driver_get();
  if (d == NULL) {
    fprintf(stderr, "etrt bench: no GPU is present; the benchmark measures the GPU path\n");
    return 2;
  }
  etrt_device_attributes a;
  if (d->attributes(0, &a) == ETRT_OK)
    printf("device    %s (%s driver), %d SMs\n", a.name, d->name, a.sm_count);
  int code = etrt_bench_overhead(d, iterations);
  int64_t count = mb * 1000000 / 4;
  int staged_iterations = iterations / 100 > 5 ? iterations / 100 : 5;
  if (code == 0) code = etrt_bench_staging(d, 1, count, staged_iterations);
  if (code == 0) code = etrt_bench_staging(d, 0, count, staged_iterations);
  return code;
}
