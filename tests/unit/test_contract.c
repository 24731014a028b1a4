/* The device-handling contract (DESIGN.md section 3) on simulated GPUs: every rule,
 * the seeds' test plans, fault injection. Simulated streams run work only when
 * synchronised, so a missing wait shows as a wrong answer here. */
#include <stdlib.h>
#include <string.h>

#include "device/sim.h"
#include "etrt/build.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "etrt/stream.h"
#include "onnx_build_testing.h"
#include "pte/pte.h"
#include "test_programs.h"
#include "test_util.h"

#define IN 8
#define HIDDEN 16
#define OUT 4
#define MAX_BATCH 8

static const etrt_device_driver *sim;

/* --- helpers -------------------------------------------------------------------- */

typedef etrt_test_mlp_fixture fixture;

static int fixture_open(fixture *f, int device, const char *name, uint32_t seed) {
  return etrt_test_mlp_fixture_open(f, IN, HIDDEN, OUT, MAX_BATCH,
                                    (etrt_device){ETRT_DEVICE_CUDA, device}, name, seed);
}

static void fill_input(float *x, int64_t batch, int salt) {
  etrt_test_mlp_fill_input(x, batch, IN, salt);
}

static void *device_alloc(int device, size_t size) {
  int previous;
  void *p = NULL;
  sim->get_device(&previous);
  sim->set_device(device);
  if (sim->malloc_device(size, &p) != ETRT_OK) p = NULL;
  sim->set_device(previous);
  return p;
}

static void device_free(int device, void *p) {
  (void)device;
  sim->free_device(p);
}

/* A synchronous copy on the per-thread stream of the device that owns `device_ptr`
 * (the simulator refuses a device pointer on another device's stream). */
static void copy_on_owner(void *dst, const void *src, size_t size, etrt_copy_kind kind,
                          const void *device_ptr) {
  etrt_pointer_info info;
  int previous;
  CHECK_OK(sim->pointer_info(device_ptr, &info));
  sim->get_device(&previous);
  sim->set_device(info.device);
  CHECK_OK(sim->memcpy_async(dst, src, size, kind, ETRT_STREAM_PER_THREAD));
  CHECK_OK(sim->stream_synchronize(ETRT_STREAM_PER_THREAD));
  sim->set_device(previous);
}

static void to_device(void *dst, const void *src, size_t size) {
  copy_on_owner(dst, src, size, ETRT_COPY_HOST_TO_DEVICE, dst);
}

static void to_host(void *dst, const void *src, size_t size) {
  copy_on_owner(dst, src, size, ETRT_COPY_DEVICE_TO_HOST, src);
}

static int check_host_run(fixture *f, int64_t batch, int salt) {
  float x[MAX_BATCH * IN], want[MAX_BATCH * OUT];
  fill_input(x, batch, salt);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {batch, IN}};
  if (etrt_method_set_input(f->method, 0, &vx) != ETRT_OK) return 0;
  if (etrt_method_execute(f->method) != ETRT_OK) return 0;
  etrt_tensor_view out;
  if (etrt_method_get_output(f->method, 0, &out) != ETRT_OK || out.sizes[0] != batch) return 0;
  etrt_test_mlp_reference(&f->mlp, x, batch, want);
  return etrt_test_max_diff(out.data, want, (size_t)(batch * OUT)) < 1e-5;
}

/* --- rule 3 and 4: staging, zero copy, the one log line ---------------------------- */

static void test_host_io_is_staged_and_logged_once_per_engine(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  etrt_test_staging_log_start();
  fixture a, b;
  CHECK(fixture_open(&a, 0, "engine_a", 1));
  CHECK(fixture_open(&b, 0, "engine_b", 2));
  CHECK(check_host_run(&a, 3, 0));
  CHECK_EQ_INT(etrt_test_staging_log_count(), 1);
  CHECK_STR_CONTAINS(etrt_test_staging_log_last(), "engine_a");
  for (int i = 0; i < 5; ++i) CHECK(check_host_run(&a, 1 + i, i));
  CHECK_EQ_INT(etrt_test_staging_log_count(), 1); /* repeated calls never repeat it */
  CHECK(check_host_run(&b, 2, 9));
  CHECK_EQ_INT(etrt_test_staging_log_count(), 2); /* a second engine logs once for itself */
  CHECK_STR_CONTAINS(etrt_test_staging_log_last(), "engine_b");
  CHECK(check_host_run(&b, 2, 10));
  CHECK_EQ_INT(etrt_test_staging_log_count(), 2);
  etrt_test_staging_log_stop();
  etrt_test_mlp_fixture_close(&a);
  etrt_test_mlp_fixture_close(&b);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_device_io_is_zero_copy_and_silent(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  etrt_test_staging_log_start();
  fixture f;
  CHECK(fixture_open(&f, 0, "device_io", 3));
  float x[4 * IN], y[4 * OUT], want[4 * OUT];
  fill_input(x, 4, 1);
  void *dx = device_alloc(0, sizeof x), *dy = device_alloc(0, MAX_BATCH * OUT * sizeof(float));
  to_device(dx, x, sizeof x);
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {4, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  long set_device_calls = etrt_sim_set_device_calls();
  long allocs = etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC);
  long copies = etrt_sim_call_count(ETRT_SIM_FAULT_COPY);
  for (int i = 0; i < 3; ++i) CHECK_OK(etrt_method_execute(f.method));
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), allocs); /* nothing staged */
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_COPY), copies);
  /* Rule 2: the current device is the engine's, so it is never set. */
  CHECK_EQ_INT(etrt_sim_set_device_calls(), set_device_calls);
  etrt_tensor_view out;
  CHECK_OK(etrt_method_get_output(f.method, 0, &out));
  CHECK(out.data == dy);
  to_host(y, dy, sizeof y);
  etrt_test_mlp_reference(&f.mlp, x, 4, want);
  CHECK(etrt_test_max_diff(y, want, 4 * OUT) < 1e-5);
  CHECK_EQ_INT(etrt_test_staging_log_count(), 0);
  etrt_test_staging_log_stop();
  etrt_test_mlp_fixture_close(&f);
  device_free(0, dx);
  device_free(0, dy);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_pointer_on_another_device_is_refused(void) {
  etrt_device_select_sim(2);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "engine0", 4));
  void *dx = device_alloc(1, MAX_BATCH * IN * sizeof(float));
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {2, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  sim->set_device(1);
  CHECK_FAILS(etrt_method_execute(f.method), ETRT_ERROR_INVALID_ARGUMENT,
              "input 0: pointer is on cuda:1, engine runs on cuda:0");
  int current = -1;
  sim->get_device(&current);
  CHECK_EQ_INT(current, 1);                 /* rule 2: restored on the error path too */
  CHECK_EQ_INT(etrt_sim_pending_work(), 0); /* rule 9 */
  sim->set_device(0);
  CHECK(check_host_run(&f, 2, 3)); /* the method stays usable */
  etrt_test_mlp_fixture_close(&f);
  device_free(1, dx);
}

static void test_pageable_memory_bound_directly_where_the_device_reads_it(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  etrt_device_attributes attributes;
  sim->attributes(0, &attributes);
  attributes.integrated = 1;
  attributes.pageable_memory_access = 1;
  etrt_sim_set_attributes(0, &attributes);
  etrt_test_staging_log_start();
  fixture f;
  CHECK(fixture_open(&f, 0, "integrated", 5));
  long allocs = etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC);
  CHECK(check_host_run(&f, 3, 2));
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), allocs);
  CHECK_EQ_INT(etrt_test_staging_log_count(), 0);
  etrt_test_staging_log_stop();
  etrt_test_mlp_fixture_close(&f);
}

static void test_staging_buffers_grow_and_are_reused(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "grow", 6));
  CHECK(check_host_run(&f, 2, 0));
  long allocs = etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC);
  CHECK(check_host_run(&f, 2, 1));
  CHECK(check_host_run(&f, 1, 2));
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), allocs); /* reused */
  CHECK(check_host_run(&f, 8, 3));
  long grown = etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC);
  CHECK(grown > allocs); /* grew once for the larger batch */
  CHECK(check_host_run(&f, 4, 4));
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), grown);
  etrt_test_mlp_fixture_close(&f);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_zero_size_tensors_bind_a_valid_address(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "empty", 7));
  float dummy;
  etrt_tensor_view vx = {&dummy, ETRT_DTYPE_FLOAT32, 2, {0, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_execute(f.method));
  etrt_tensor_view out;
  CHECK_OK(etrt_method_get_output(f.method, 0, &out));
  CHECK_EQ_INT(out.sizes[0], 0);
  etrt_test_mlp_fixture_close(&f);
}

/* --- rules 1 and 2: the engine's device decides, set-device only when needed ------ */

static etrt_pte_str relabel_to;
static void relabel_target_device(etrt_pte_program *pte) {
  etrt_pte_delegate *d = (etrt_pte_delegate *)&pte->plans[0].delegates[0];
  etrt_pte_compile_spec *spec = (etrt_pte_compile_spec *)&d->compile_specs[0];
  spec->value = (etrt_pte_bytes){(const uint8_t *)relabel_to.data, relabel_to.size};
}

static void test_engine_device_is_the_truth(void) {
  etrt_device_select_sim(2);
  sim = etrt_device_sim_driver();
  fixture f;
  memset(&f, 0, sizeof f);
  CHECK_OK(etrt_test_mlp_program(&f.mlp, IN, HIDDEN, OUT, 0, MAX_BATCH, 8,
                                 (etrt_device){ETRT_DEVICE_CUDA, 1}, "on_cuda1", &f.pte, &f.size));
  /* The AOT label says cuda:0; the plan says cuda:1; the plan wins. */
  etrt_pte_program *pte;
  CHECK_OK(etrt_pte_parse(f.pte, f.size, &pte));
  relabel_to = (etrt_pte_str){"cuda:0", 6};
  relabel_target_device(pte);
  uint8_t *relabelled;
  size_t size;
  CHECK_OK(etrt_pte_write(pte, &relabelled, &size));
  etrt_pte_program_free(pte);
  CHECK_OK(etrt_program_load_memory(relabelled, size, NULL, &f.program));
  sim->set_device(0);
  CHECK_OK(etrt_method_create(f.program, "forward", &f.method));
  float x[2 * IN], y[2 * OUT], want[2 * OUT];
  fill_input(x, 2, 5);
  void *dx = device_alloc(1, sizeof x), *dy = device_alloc(1, MAX_BATCH * OUT * sizeof(float));
  to_device(dx, x, sizeof x);
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {2, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  /* The caller's stream selection must be on the engine's device: select none. */
  CHECK_OK(etrt_method_execute(f.method));
  int current = -1;
  sim->get_device(&current);
  CHECK_EQ_INT(current, 0); /* rule 2: the caller's device is back */
  /* Rule 2: one set to the engine's device and one back, per call. */
  long calls = etrt_sim_set_device_calls();
  CHECK_OK(etrt_method_execute(f.method));
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2);
  to_host(y, dy, sizeof y);
  etrt_test_mlp_reference(&f.mlp, x, 2, want);
  CHECK(etrt_test_max_diff(y, want, 2 * OUT) < 1e-5);
  etrt_method_destroy(f.method);
  etrt_program_destroy(f.program);
  f.method = NULL;
  f.program = NULL;
  free(relabelled);
  etrt_test_mlp_fixture_close(&f);
  device_free(1, dx);
  device_free(1, dy);
}

/* --- rules 5 and 6: the caller's stream; green contexts ----------------------------- */

static void test_selected_stream_carries_the_work(void) {
  etrt_device_select_sim(2);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "streams", 9));
  float x[3 * IN], y[3 * OUT], want[3 * OUT], poison[3 * OUT];
  fill_input(x, 3, 4);
  void *dx = device_alloc(0, sizeof x), *dy = device_alloc(0, MAX_BATCH * OUT * sizeof(float));
  to_device(dx, x, sizeof x);
  to_host(poison, dy, sizeof poison);
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {3, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  etrt_stream stream;
  CHECK_OK(sim->stream_create(&stream));
  CHECK_OK(etrt_stream_push(stream));
  void *event = NULL;
  CHECK_OK(etrt_method_execute_async(f.method, &event));
  CHECK(event != NULL);
  CHECK(etrt_sim_pending_work() > 0); /* queued on the selected stream, not run */
  CHECK(sim->event_query(event) == ETRT_ERROR_STATE);
  to_host(y, dy, sizeof y); /* the per-thread stream does not carry the work */
  CHECK(memcmp(y, poison, sizeof y) == 0);
  CHECK_OK(sim->event_synchronize(event));
  to_host(y, dy, sizeof y);
  etrt_test_mlp_reference(&f.mlp, x, 3, want);
  CHECK(etrt_test_max_diff(y, want, 3 * OUT) < 1e-5);
  CHECK_OK(etrt_stream_pop());
  /* A stream of another device is refused. */
  etrt_stream other;
  sim->set_device(1);
  CHECK_OK(sim->stream_create(&other));
  sim->set_device(0);
  CHECK_OK(etrt_stream_push(other));
  CHECK_FAILS(etrt_method_execute(f.method), ETRT_ERROR_INVALID_ARGUMENT,
              "the selected stream is on cuda:1");
  CHECK_OK(etrt_stream_pop());
  /* execute_async is refused where an output is host memory. */
  float host_out[MAX_BATCH * OUT];
  CHECK_OK(etrt_method_set_output(f.method, 0, host_out, sizeof host_out));
  CHECK_FAILS(etrt_method_execute_async(f.method, &event), ETRT_ERROR_INVALID_ARGUMENT,
              "host memory");
  sim->stream_destroy(stream);
  sim->stream_destroy(other);
  etrt_test_mlp_fixture_close(&f);
  device_free(0, dx);
  device_free(0, dy);
}

static void test_green_context_streams(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "green", 10));
  void *green = NULL;
  int granted = 0;
  CHECK_OK(etrt_green_stream_create(0, 12, &green, &granted));
  CHECK(granted >= 12);
  CHECK_EQ_INT(etrt_sim_stream_sm_count(green), granted);
  etrt_sim_set_green_context_current(1);
  float x[2 * IN];
  fill_input(x, 2, 1);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {2, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  /* The per-thread default stream is invalid under a green context: say what to do. */
  CHECK_FAILS(etrt_method_execute(f.method), ETRT_ERROR_STATE, "etrt_stream_push");
  ETRT_STREAM_SCOPE(green) { CHECK(check_host_run(&f, 2, 1)); }
  void *selected;
  CHECK_EQ_INT(etrt_stream_selected(&selected), 0); /* the scope popped it */
  etrt_sim_set_green_context_current(0);
  etrt_test_mlp_fixture_close(&f);
  CHECK_OK(etrt_green_stream_destroy(green));
}

/* --- rule 7: completion ------------------------------------------------------------- */

static void test_ten_thousand_async_runs_never_see_stale_output(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "async", 11));
  void *dx = device_alloc(0, IN * sizeof(float)),
       *dy = device_alloc(0, MAX_BATCH * OUT * sizeof(float));
  etrt_stream stream;
  CHECK_OK(sim->stream_create(&stream));
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {1, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  int stale = 0;
  float x[IN], y[OUT], want[OUT];
  CHECK_OK(etrt_stream_push(stream));
  for (int i = 0; i < 10000; ++i) {
    fill_input(x, 1, i);
    /* The input is written on the same stream, ahead of the run. */
    sim->memcpy_async(dx, x, sizeof x, ETRT_COPY_HOST_TO_DEVICE, stream);
    void *event = NULL;
    if (etrt_method_execute_async(f.method, &event) != ETRT_OK || event == NULL) {
      ++stale;
      break;
    }
    sim->event_synchronize(event);
    sim->memcpy_async(y, dy, sizeof y, ETRT_COPY_DEVICE_TO_HOST, stream);
    sim->stream_synchronize(stream);
    etrt_test_mlp_reference(&f.mlp, x, 1, want);
    if (etrt_test_max_diff(y, want, OUT) > 1e-5) ++stale;
  }
  CHECK_OK(etrt_stream_pop());
  printf("10000 async runs: %d stale\n", stale);
  CHECK_EQ_INT(stale, 0);
  etrt_test_mlp_fixture_close(&f); /* destroy waits for work in flight */
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  sim->stream_destroy(stream);
  device_free(0, dx);
  device_free(0, dy);
}

/* Rule 7 with one event: the engine's context records a completion event after each
 * enqueue and the delegate and the method wait on that one; an execute records
 * exactly one, synchronous or not, staged or not, and execute_async hands it out. */
static void test_one_completion_event_per_execute(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "one_event", 15));
  /* Host I/O, staged both ways. */
  CHECK(check_host_run(&f, 3, 0));
  long records = etrt_sim_event_records();
  CHECK(check_host_run(&f, 3, 1));
  CHECK_EQ_INT(etrt_sim_event_records() - records, 1);
  records = etrt_sim_event_records();
  CHECK(check_host_run(&f, 5, 2));
  CHECK_EQ_INT(etrt_sim_event_records() - records, 1);

  /* Device I/O, synchronous and asynchronous. */
  float x[2 * IN], y[2 * OUT], want[2 * OUT];
  void *dx = device_alloc(0, sizeof x), *dy = device_alloc(0, MAX_BATCH * OUT * sizeof(float));
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {2, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  for (int async = 0; async < 2; ++async) {
    for (int i = 0; i < 3; ++i) {
      fill_input(x, 2, 10 * async + i);
      to_device(dx, x, sizeof x);
      records = etrt_sim_event_records();
      void *event = NULL;
      if (async) {
        CHECK_OK(etrt_method_execute_async(f.method, &event));
        CHECK(event != NULL);
        CHECK_EQ_INT(sim->event_query(event), ETRT_ERROR_STATE); /* still in flight */
        CHECK_OK(sim->event_synchronize(event));
      } else {
        CHECK_OK(etrt_method_execute(f.method));
      }
      CHECK_EQ_INT(etrt_sim_event_records() - records, 1);
      to_host(y, dy, sizeof y);
      etrt_test_mlp_reference(&f.mlp, x, 2, want);
      CHECK(etrt_test_max_diff(y, want, 2 * OUT) < 1e-5);
    }
  }
  /* Two execute_async calls without a wait between them: the second waits on the
   * first's event before reconfiguring, and its own event covers its run. */
  fill_input(x, 2, 40);
  to_device(dx, x, sizeof x);
  void *first = NULL, *second = NULL;
  CHECK_OK(etrt_method_execute_async(f.method, &first));
  records = etrt_sim_event_records();
  CHECK_OK(etrt_method_execute_async(f.method, &second));
  CHECK_EQ_INT(etrt_sim_event_records() - records, 1);
  CHECK_OK(sim->event_synchronize(second));
  to_host(y, dy, sizeof y);
  etrt_test_mlp_reference(&f.mlp, x, 2, want);
  CHECK(etrt_test_max_diff(y, want, 2 * OUT) < 1e-5);
  /* Destroy waits for an execute_async nobody waited for. */
  CHECK_OK(etrt_method_execute_async(f.method, &first));
  CHECK(etrt_sim_pending_work() > 0);
  etrt_test_mlp_fixture_close(&f);
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  device_free(0, dx);
  device_free(0, dy);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

/* Delegates on two devices leave work on two streams: execute_async joins them in
 * one event of the method's (one record per delegate, one for the join), which
 * completes only after both. With `stream_device` >= 0 the caller selects a stream of
 * that device while cuda:0 stays current: the join event must then belong to the
 * stream's device, not to the current one. */
static void run_async_over_two_devices(int stream_device, int one_device) {
  etrt_device_select_sim(2);
  sim = etrt_device_sim_driver();
  size_t onnx_size;
  uint8_t *onnx = tm_mlp(0, &onnx_size);
  etrt_build_options o;
  etrt_build_options_init(&o);
  etrt_build_placement place = {"mm2", "cuda:1"};
  o.device = one_device ? "cuda:1" : "cuda:0";
  o.placements = one_device ? NULL : &place;
  o.num_placements = one_device ? 0 : 1;
  o.io_on_device = !one_device; /* one device: host-planned input, so the method queues its copy */
  uint8_t *pte = NULL;
  size_t pte_size = 0;
  CHECK_OK(etrt_build_onnx_memory(onnx, onnx_size, &o, &pte, &pte_size));
  free(onnx);
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  if (pte != NULL) CHECK_OK(etrt_program_load_memory(pte, pte_size, NULL, &program));
  if (program != NULL) CHECK_OK(etrt_method_create(program, "forward", &method));
  if (method == NULL) {
    etrt_program_destroy(program);
    free(pte);
    return;
  }
  float x[2 * 4], want[2 * 3], y[2 * 3];
  for (int i = 0; i < 8; ++i) x[i] = (float)(i - 3) / 4.0f;
  void *dx = device_alloc(0, sizeof x), *dy = device_alloc(1, sizeof y);
  to_device(dx, x, sizeof x);
  etrt_tensor_view vx = {one_device ? (void *)x : dx, ETRT_DTYPE_FLOAT32, 2, {2, 4}};
  CHECK_OK(etrt_method_set_input(method, 0, &vx));
  CHECK_OK(etrt_method_set_output(method, 0, dy, sizeof y));
  CHECK_OK(etrt_method_execute(method));
  to_host(want, dy, sizeof want);
  float zero[2 * 3] = {0};
  to_device(dy, zero, sizeof zero);
  etrt_stream stream = NULL;
  if (stream_device >= 0) {
    CHECK_OK(sim->set_device(stream_device));
    CHECK_OK(sim->stream_create(&stream));
    CHECK_OK(sim->set_device(0));
    CHECK_OK(etrt_stream_push(stream));
  }
  long records = etrt_sim_event_records();
  void *event = NULL;
  CHECK_OK(etrt_method_execute_async(method, &event));
  CHECK(event != NULL);
  /* Two devices: one record per delegate and the join. One device with host-planned
   * output: the delegate's and one after the method's copy of the output. */
  CHECK_EQ_INT(etrt_sim_event_records() - records, one_device ? 2 : 3);
  if (event != NULL)
    CHECK_OK(sim->event_synchronize(event)); /* runs every stream through the join */
  to_host(y, dy, sizeof y);
  CHECK(memcmp(y, want, sizeof y) == 0);
  int current = -1;
  sim->get_device(&current);
  CHECK_EQ_INT(current, 0);
  /* A second run on the same stream reuses the method's join event. */
  if (stream_device >= 0) {
    to_device(dy, zero, sizeof zero);
    CHECK_OK(etrt_method_execute_async(method, &event));
    if (event != NULL) CHECK_OK(sim->event_synchronize(event));
    to_host(y, dy, sizeof y);
    CHECK(memcmp(y, want, sizeof y) == 0);
    CHECK_OK(etrt_stream_pop());
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
  if (stream != NULL) CHECK_OK(sim->stream_destroy(stream));
  device_free(0, dx);
  device_free(1, dy);
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_async_over_two_devices_joins_the_streams(void) {
  run_async_over_two_devices(-1, 0);
}

/* A program on cuda:1 run asynchronously on the caller's cuda:1 stream while cuda:0 is
 * current: whatever event the caller gets belongs to the stream's device. */
static void test_async_event_belongs_to_the_callers_stream_device(void) {
  run_async_over_two_devices(1, 1);
}

/* --- rule 8: one call at a time per method instance ----------------------------------- */

static void test_two_threads_on_one_method(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "shared", 12));
  CHECK_EQ_INT(etrt_test_mlp_fixture_race(&f, 300, 1e-5), 0);
  etrt_test_mlp_fixture_close(&f);
}

/* --- rule 9 and fault injection ------------------------------------------------------ */

static void sweep_faults(etrt_sim_fault fault) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  /* How many calls of this kind method creation and a first execute make. */
  fixture f;
  long before = etrt_sim_call_count(fault);
  CHECK(fixture_open(&f, 0, "faults", 13));
  CHECK(check_host_run(&f, 4, 0));
  long calls = etrt_sim_call_count(fault) - before;
  etrt_test_mlp_fixture_close(&f);
  CHECK(calls > 0);
  /* Each of them fails in turn: a clear error, nothing queued or leaked, and the
   * method (where it was created) works once the fault is gone. Past the last one,
   * everything succeeds. */
  int failures = 0;
  for (long n = 1; n <= calls + 3; ++n) {
    etrt_device_select_sim(1);
    sim = etrt_device_sim_driver();
    memset(&f, 0, sizeof f);
    etrt_status s =
        etrt_test_mlp_program(&f.mlp, IN, HIDDEN, OUT, 0, MAX_BATCH, 13,
                              (etrt_device){ETRT_DEVICE_CUDA, 0}, "faults", &f.pte, &f.size);
    if (s == ETRT_OK) s = etrt_program_load_memory(f.pte, f.size, NULL, &f.program);
    etrt_sim_fail_nth(fault, n);
    if (s == ETRT_OK) s = etrt_method_create(f.program, "forward", &f.method);
    int failed = s != ETRT_OK || !check_host_run(&f, 4, (int)n);
    if (failed) {
      ++failures;
      if (strstr(etrt_last_error(), "injected") == NULL)
        etrt_test_fail(__FILE__, __LINE__, "n=%ld: %s", n, etrt_last_error());
      CHECK_EQ_INT(etrt_sim_pending_work(), 0); /* rule 9: nothing left queued */
    }
    etrt_sim_fail_nth(fault, 0);
    if (failed && f.method != NULL) CHECK(check_host_run(&f, 4, 1)); /* usable afterwards */
    CHECK_EQ_INT(failed, n <= calls);
    etrt_test_mlp_fixture_close(&f);
    CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0); /* nothing leaked */
  }
  printf("%s faults: %ld calls in creation and a first execute, each failed cleanly: %s\n",
         fault == ETRT_SIM_FAULT_ALLOC  ? "allocation"
         : fault == ETRT_SIM_FAULT_COPY ? "copy"
                                        : "synchronisation",
         calls, failures == calls ? "yes" : "no");
  CHECK_EQ_INT(failures, calls);
}

/* Rule 9's drain after a failure can fail too; the caller still reads the first
 * failure, the one that says what went wrong. */
static void test_failing_drain_keeps_the_first_error(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "first_error", 14));
  CHECK(check_host_run(&f, 2, 0));
  /* Host I/O: the input's staging copy, the run, then the output's copy back. The
   * copy back fails, and so does the drain of what was queued before it. */
  long syncs = etrt_sim_call_count(ETRT_SIM_FAULT_SYNC);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 2);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_SYNC, 1);
  float x[2 * IN];
  fill_input(x, 2, 1);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {2, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_FAILS(etrt_method_execute(f.method), ETRT_ERROR_DEVICE, "injected copy failure");
  CHECK(strstr(etrt_last_error(), "synchronize") == NULL);
  CHECK_STR_CONTAINS(etrt_last_error(), "method 'forward'");
  CHECK(etrt_sim_call_count(ETRT_SIM_FAULT_SYNC) > syncs); /* the drain ran, and failed */
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 0);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_SYNC, 0);
  CHECK_OK(sim->stream_synchronize(ETRT_STREAM_PER_THREAD)); /* what the failed drain left */
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK(check_host_run(&f, 2, 2)); /* usable afterwards */
  etrt_test_mlp_fixture_close(&f);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

/* Device I/O: the method waits on the delegate's completion event; where that wait
 * fails, the method drains what it left (rule 9) and reports the wait's failure. */
static void test_failing_wait_is_drained(void) {
  etrt_device_select_sim(1);
  sim = etrt_device_sim_driver();
  fixture f;
  CHECK(fixture_open(&f, 0, "failed_wait", 16));
  float x[2 * IN], y[2 * OUT], want[2 * OUT];
  fill_input(x, 2, 3);
  void *dx = device_alloc(0, sizeof x), *dy = device_alloc(0, MAX_BATCH * OUT * sizeof(float));
  to_device(dx, x, sizeof x);
  etrt_tensor_view vx = {dx, ETRT_DTYPE_FLOAT32, 2, {2, IN}};
  CHECK_OK(etrt_method_set_input(f.method, 0, &vx));
  CHECK_OK(etrt_method_set_output(f.method, 0, dy, MAX_BATCH * OUT * sizeof(float)));
  CHECK_OK(etrt_method_execute(f.method));
  long before = etrt_sim_call_count(ETRT_SIM_FAULT_SYNC);
  CHECK_OK(etrt_method_execute(f.method));
  long syncs = etrt_sim_call_count(ETRT_SIM_FAULT_SYNC) - before;
  CHECK(syncs >= 1);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_SYNC, syncs); /* the method's wait, the last one */
  CHECK_FAILS(etrt_method_execute(f.method), ETRT_ERROR_DEVICE, "injected synchronize failure");
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_SYNC, 0);
  fill_input(x, 2, 4);
  to_device(dx, x, sizeof x);
  CHECK_OK(etrt_method_execute(f.method));
  to_host(y, dy, sizeof y);
  etrt_test_mlp_reference(&f.mlp, x, 2, want);
  CHECK(etrt_test_max_diff(y, want, 2 * OUT) < 1e-5);
  etrt_test_mlp_fixture_close(&f);
  device_free(0, dx);
  device_free(0, dy);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_fault_injection_allocations(void) { sweep_faults(ETRT_SIM_FAULT_ALLOC); }
static void test_fault_injection_copies(void) { sweep_faults(ETRT_SIM_FAULT_COPY); }
static void test_fault_injection_synchronisations(void) { sweep_faults(ETRT_SIM_FAULT_SYNC); }

int main(void) {
  RUN_TEST(test_host_io_is_staged_and_logged_once_per_engine);
  RUN_TEST(test_device_io_is_zero_copy_and_silent);
  RUN_TEST(test_pointer_on_another_device_is_refused);
  RUN_TEST(test_pageable_memory_bound_directly_where_the_device_reads_it);
  RUN_TEST(test_staging_buffers_grow_and_are_reused);
  RUN_TEST(test_zero_size_tensors_bind_a_valid_address);
  RUN_TEST(test_engine_device_is_the_truth);
  RUN_TEST(test_selected_stream_carries_the_work);
  RUN_TEST(test_green_context_streams);
  RUN_TEST(test_ten_thousand_async_runs_never_see_stale_output);
  RUN_TEST(test_one_completion_event_per_execute);
  RUN_TEST(test_async_over_two_devices_joins_the_streams);
  RUN_TEST(test_async_event_belongs_to_the_callers_stream_device);
  RUN_TEST(test_two_threads_on_one_method);
  RUN_TEST(test_failing_drain_keeps_the_first_error);
  RUN_TEST(test_failing_wait_is_drained);
  RUN_TEST(test_fault_injection_allocations);
  RUN_TEST(test_fault_injection_copies);
  RUN_TEST(test_fault_injection_synchronisations);
  etrt_device_select_sim(0);
  return TEST_EXIT();
}
