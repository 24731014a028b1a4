/* Contract rule 2 (DESIGN.md section 3) at every site that runs work on another
 * device: the device scope itself, the delegate (init, execute, destroy), the
 * method's planned device buffers, the et_copy kernels and the engine's weights.
 * For each: no set_device when the caller is already on the device; exactly a
 * switch and a restore when not; the caller's device back after a failure that
 * happens once switched (sim fault injection). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "built_program_testing.h"
#include "device/device_scope.h"
#include "device/sim.h"
#include "engine/engine.h"
#include "etrt/build.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "onnx_build_testing.h"
#include "runtime/kernels.h"
#include "test_programs.h"
#include "test_util.h"

static const etrt_device_driver *sim;

static int current_device(void) {
  int device = -1;
  CHECK_OK(sim->get_device(&device));
  return device;
}

static void select_sim(int count) {
  CHECK_OK(etrt_device_select_sim(count));
  sim = etrt_device_sim_driver();
}

/* --- the helper --------------------------------------------------------------------- */

static void test_scope_sets_only_when_the_device_differs(void) {
  select_sim(2);
  etrt_device_scope scope;
  long calls = etrt_sim_set_device_calls();
  CHECK_OK(etrt_device_scope_enter(sim, 0, &scope));
  CHECK_OK(etrt_device_scope_exit(&scope, ETRT_OK));
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 0);

  calls = etrt_sim_set_device_calls();
  CHECK_OK(etrt_device_scope_enter(sim, 1, &scope));
  CHECK_EQ_INT(current_device(), 1);
  CHECK_OK(etrt_device_scope_exit(&scope, ETRT_OK));
  CHECK_EQ_INT(current_device(), 0);
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2);
  /* A second exit restores nothing more. */
  CHECK_OK(etrt_device_scope_exit(&scope, ETRT_OK));
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2);

  /* The work's failure is what the scope returns, and the device is back. */
  CHECK_OK(etrt_device_scope_enter(sim, 1, &scope));
  etrt_status failed = etrt_error(ETRT_ERROR_DEVICE, "the work failed");
  CHECK_EQ_INT(etrt_device_scope_exit(&scope, failed), ETRT_ERROR_DEVICE);
  CHECK_EQ_INT(current_device(), 0);
  CHECK_STR_CONTAINS(etrt_last_error(), "the work failed");

  /* No driver: nothing to do, nothing to restore. */
  CHECK_OK(etrt_device_scope_enter(NULL, 3, &scope));
  CHECK_EQ_INT(etrt_device_scope_exit(&scope, ETRT_ERROR_STATE), ETRT_ERROR_STATE);

  /* A device out of range: refused naming it, nothing to restore. */
  calls = etrt_sim_set_device_calls();
  CHECK_FAILS(etrt_device_scope_enter(sim, 7, &scope), ETRT_ERROR_INVALID_ARGUMENT, "cuda:7");
  CHECK_OK(etrt_device_scope_exit(&scope, ETRT_OK));
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 0);
  CHECK_EQ_INT(current_device(), 0);
}

/* --- the delegate: init, execute, destroy -------------------------------------------- */

#define IN 8
#define HIDDEN 16
#define OUT 4
#define MAX_BATCH 8

typedef etrt_test_mlp_fixture fixture;

/* An MLP program whose engine runs on cuda:`device`, loaded (not yet a method). */
static int mlp_program(fixture *f, int device, uint32_t seed) {
  memset(f, 0, sizeof *f);
  etrt_status s =
      etrt_test_mlp_program(&f->mlp, IN, HIDDEN, OUT, 0, MAX_BATCH, seed,
                            (etrt_device){ETRT_DEVICE_CUDA, device}, "scoped", &f->pte, &f->size);
  if (s == ETRT_OK) s = etrt_program_load_memory(f->pte, f->size, NULL, &f->program);
  CHECK_OK(s);
  return s == ETRT_OK;
}

static etrt_status run_host(fixture *f, int64_t batch, int salt, int *correct) {
  float x[MAX_BATCH * IN], want[MAX_BATCH * OUT], y[MAX_BATCH * OUT];
  etrt_test_mlp_fill_input(x, batch, IN, salt);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {batch, IN}};
  ETRT_RETURN_IF_ERROR(etrt_method_set_input(f->method, 0, &vx));
  ETRT_RETURN_IF_ERROR(etrt_method_set_output(f->method, 0, y, sizeof y));
  ETRT_RETURN_IF_ERROR(etrt_method_execute(f->method));
  etrt_test_mlp_reference(&f->mlp, x, batch, want);
  *correct = etrt_test_max_diff(y, want, (size_t)(batch * OUT)) < 1e-5;
  return ETRT_OK;
}

static void test_delegate_on_the_callers_device_never_sets_it(void) {
  select_sim(2);
  fixture f;
  if (!mlp_program(&f, 0, 1)) return;
  long calls = etrt_sim_set_device_calls();
  CHECK_OK(etrt_method_create(f.program, "forward", &f.method));
  int correct = 0;
  CHECK_OK(run_host(&f, 3, 0, &correct));
  CHECK(correct);
  etrt_method_destroy(f.method);
  f.method = NULL;
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 0); /* init, execute, destroy */
  etrt_test_mlp_fixture_close(&f);
}

static void test_delegate_on_another_device_switches_and_restores(void) {
  select_sim(2);
  fixture f;
  if (!mlp_program(&f, 1, 2)) return;
  CHECK_EQ_INT(current_device(), 0);
  long calls = etrt_sim_set_device_calls();
  CHECK_OK(etrt_method_create(f.program, "forward", &f.method));
  CHECK_EQ_INT(current_device(), 0);
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2); /* init: one switch, one restore */

  calls = etrt_sim_set_device_calls();
  int correct = 0;
  CHECK_OK(run_host(&f, 2, 1, &correct));
  CHECK(correct);
  CHECK_EQ_INT(current_device(), 0);
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2); /* execute */

  /* Execute fails once switched (the staged input's copy): the device is back. */
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 1);
  calls = etrt_sim_set_device_calls();
  CHECK_FAILS(run_host(&f, 2, 2, &correct), ETRT_ERROR_DEVICE, "injected copy failure");
  CHECK_EQ_INT(current_device(), 0);
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2);
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);

  calls = etrt_sim_set_device_calls();
  etrt_method_destroy(f.method);
  f.method = NULL;
  CHECK_EQ_INT(current_device(), 0);
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2); /* destroy */
  etrt_test_mlp_fixture_close(&f);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_delegate_init_failure_restores_the_device(void) {
  select_sim(2);
  fixture f;
  if (!mlp_program(&f, 1, 3)) return;
  /* Every allocation init makes on cuda:1 fails in turn. */
  long before = etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC);
  CHECK_OK(etrt_method_create(f.program, "forward", &f.method));
  long allocs = etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC) - before;
  etrt_method_destroy(f.method);
  f.method = NULL;
  CHECK(allocs > 0);
  for (long n = 1; n <= allocs; ++n) {
    etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, n);
    long calls = etrt_sim_set_device_calls();
    CHECK_FAILS(etrt_method_create(f.program, "forward", &f.method), ETRT_ERROR_DEVICE,
                "injected allocation failure");
    CHECK(f.method == NULL);
    CHECK_EQ_INT(current_device(), 0);
    /* Switched for init and for its teardown, restored after each. */
    long switched = etrt_sim_set_device_calls() - calls;
    CHECK(switched > 0 && switched % 2 == 0);
    CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
  }
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 0);
  etrt_test_mlp_fixture_close(&f);
}

/* --- the method's planned device buffers and the et_copy kernels ---------------------- */

/* The ONNX MLP built for cuda:1: x is copied to a device buffer on cuda:1 by
 * et_copy::_h2d_copy and y back by et_copy::_d2h_copy. */
static int device_planned_program(bp_loaded *l, uint8_t **pte, size_t *pte_size) {
  size_t size;
  etrt_status s = bp_build(tm_mlp(0, &size), &size, "cuda:1", NULL, 0, pte, pte_size);
  CHECK_OK(s);
  if (s != ETRT_OK) return 0;
  memset(l, 0, sizeof *l);
  l->pte = *pte;
  CHECK_OK(etrt_program_load_memory(*pte, *pte_size, NULL, &l->program));
  return l->program != NULL;
}

static etrt_status run_copies(bp_loaded *l, float *y) {
  float x[2 * 4];
  for (int i = 0; i < 8; ++i) x[i] = (float)i / 8.0f;
  etrt_tensor_view vx = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 4});
  ETRT_RETURN_IF_ERROR(etrt_method_set_input(l->method, 0, &vx));
  ETRT_RETURN_IF_ERROR(etrt_method_set_output(l->method, 0, y, 2 * 3 * sizeof(float)));
  return etrt_method_execute(l->method);
}

static void test_planned_buffers_and_copies_on_another_device(void) {
  select_sim(2);
  bp_loaded l;
  uint8_t *pte;
  size_t pte_size;
  if (!device_planned_program(&l, &pte, &pte_size)) return;
  CHECK_EQ_INT(current_device(), 0);
  long calls = etrt_sim_set_device_calls();
  CHECK_OK(etrt_method_create(l.program, "forward", &l.method));
  CHECK_EQ_INT(current_device(), 0);
  CHECK(etrt_sim_set_device_calls() - calls >= 2); /* buffers and delegate init */
  CHECK_EQ_INT((etrt_sim_set_device_calls() - calls) % 2, 0);

  /* The caller (cuda:0) runs a program on cuda:1: the copies switch and restore. */
  float reference[6], y[6];
  CHECK_OK(run_copies(&l, reference));
  CHECK_EQ_INT(current_device(), 0);
  calls = etrt_sim_set_device_calls();
  CHECK_OK(run_copies(&l, y));
  CHECK(memcmp(y, reference, sizeof y) == 0);
  /* h2d copy, delegate, d2h copy: one switch and one restore each. */
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 6);

  /* The same from cuda:1: nothing is ever set. */
  CHECK_OK(sim->set_device(1));
  calls = etrt_sim_set_device_calls();
  CHECK_OK(run_copies(&l, y));
  CHECK(memcmp(y, reference, sizeof y) == 0);
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 0);
  CHECK_OK(sim->set_device(0));

  /* Each copy fails in turn once switched: the caller's device is back every time. */
  long before = etrt_sim_call_count(ETRT_SIM_FAULT_COPY);
  CHECK_OK(run_copies(&l, y));
  long copies = etrt_sim_call_count(ETRT_SIM_FAULT_COPY) - before;
  CHECK(copies >= 2);
  for (long n = 1; n <= copies; ++n) {
    etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, n);
    CHECK_FAILS(run_copies(&l, y), ETRT_ERROR_DEVICE, "injected copy failure");
    CHECK_EQ_INT(current_device(), 0);
    CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  }
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 0);

  /* Destroy frees the planned buffers on cuda:1 and comes back. */
  calls = etrt_sim_set_device_calls();
  etrt_method_destroy(l.method);
  l.method = NULL;
  CHECK_EQ_INT(current_device(), 0);
  CHECK(etrt_sim_set_device_calls() - calls >= 2);
  CHECK_EQ_INT((etrt_sim_set_device_calls() - calls) % 2, 0);
  bp_unload(&l);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_planned_buffer_allocation_failure_restores_the_device(void) {
  select_sim(2);
  bp_loaded l;
  uint8_t *pte;
  size_t pte_size;
  if (!device_planned_program(&l, &pte, &pte_size)) return;
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 1); /* the first planned device buffer */
  CHECK_FAILS(etrt_method_create(l.program, "forward", &l.method), ETRT_ERROR_DEVICE,
              "planned buffer");
  CHECK_EQ_INT(current_device(), 0);
  bp_unload(&l);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

/* The h2d kernel alone, where its stream belongs to another device than the copy's
 * (the caller selected a stream of cuda:0, the destination is on cuda:1, the caller
 * is on cuda:1): the copy runs on cuda:1's per-thread stream, and as the caller is
 * already there, the device is never set. */
static void test_copy_kernel_on_the_callers_device_never_sets_it(void) {
  select_sim(2);
  etrt_stream stream0 = NULL;
  CHECK_OK(sim->stream_create(&stream0)); /* on cuda:0 */
  CHECK_OK(sim->set_device(1));
  void *device_buffer = NULL;
  CHECK_OK(sim->malloc_device(4 * sizeof(float), &device_buffer));
  float host[4] = {1, 2, 3, 4}, back[4] = {0};
  etrt_value values[3];
  memset(values, 0, sizeof values);
  for (int v = 0; v < 2; ++v) {
    values[v].tag = ETRT_VALUE_TENSOR;
    values[v].u.tensor.dtype = ETRT_DTYPE_FLOAT32;
    values[v].u.tensor.rank = 1;
    values[v].u.tensor.sizes[0] = values[v].u.tensor.max_sizes[0] = 4;
    values[v].u.tensor.capacity = sizeof host;
  }
  values[0].u.tensor.data = host;
  values[1].u.tensor.data = device_buffer;
  values[1].u.tensor.device = (etrt_device){ETRT_DEVICE_CUDA, 1};
  values[2].tag = ETRT_VALUE_TENSOR;
  const int32_t args[3] = {0, 1, 2};
  etrt_kernel_call call;
  memset(&call, 0, sizeof call);
  CHECK_OK(etrt_kernel_call_prepare(&call, &etrt_kernel_h2d_copy, args, 3, 0, values));
  etrt_run_context context = {
      .driver = sim, .stream = stream0, .stream_selected = 1, .method_name = "copy"};

  long calls = etrt_sim_set_device_calls();
  CHECK_OK(call.def->run(&call, values, &context));
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 0);
  CHECK_EQ_INT(current_device(), 1);
  CHECK_OK(sim->memcpy_async(back, device_buffer, sizeof back, ETRT_COPY_DEVICE_TO_HOST,
                             ETRT_STREAM_PER_THREAD));
  CHECK_OK(sim->stream_synchronize(ETRT_STREAM_PER_THREAD));
  CHECK(memcmp(back, host, sizeof host) == 0);

  /* From cuda:0: one switch and one restore, also when the copy fails. */
  CHECK_OK(sim->set_device(0));
  calls = etrt_sim_set_device_calls();
  CHECK_OK(call.def->run(&call, values, &context));
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2);
  CHECK_EQ_INT(current_device(), 0);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 1);
  calls = etrt_sim_set_device_calls();
  CHECK_FAILS(call.def->run(&call, values, &context), ETRT_ERROR_DEVICE, "injected copy failure");
  CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, 2);
  CHECK_EQ_INT(current_device(), 0);

  etrt_kernel_call_release(&call);
  CHECK_OK(sim->free_device(device_buffer));
  CHECK_OK(sim->stream_destroy(stream0));
}

/* --- the engine's device weights ------------------------------------------------------ */

static void test_engine_weights_freed_on_the_engines_device(void) {
  select_sim(2);
  for (int caller = 0; caller < 2; ++caller) {
    etrt_test_mlp mlp;
    uint8_t *plan = NULL;
    size_t size = 0;
    CHECK_OK(etrt_test_mlp_plan(&mlp, IN, HIDDEN, OUT, 0, MAX_BATCH, 5,
                                (etrt_device){ETRT_DEVICE_CUDA, 1}, "weights", &plan, &size));
    etrt_engine *engine = NULL;
    CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
    etrt_exec_context *context = NULL;
    CHECK_OK(sim->set_device(1)); /* a context is created on the engine's device */
    CHECK_OK(etrt_exec_context_create(engine, sim, &context));
    etrt_exec_context_destroy(context);
    CHECK_OK(sim->set_device(caller));
    CHECK(etrt_sim_bytes_in_use() > 0); /* the weights */
    long calls = etrt_sim_set_device_calls();
    etrt_engine_destroy(engine);
    CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
    CHECK_EQ_INT(current_device(), caller);
    CHECK_EQ_INT(etrt_sim_set_device_calls() - calls, caller == 1 ? 0 : 2);
    free(plan);
    etrt_test_mlp_free(&mlp);
  }
}

int main(void) {
  RUN_TEST(test_scope_sets_only_when_the_device_differs);
  RUN_TEST(test_delegate_on_the_callers_device_never_sets_it);
  RUN_TEST(test_delegate_on_another_device_switches_and_restores);
  RUN_TEST(test_delegate_init_failure_restores_the_device);
  RUN_TEST(test_planned_buffers_and_copies_on_another_device);
  RUN_TEST(test_planned_buffer_allocation_failure_restores_the_device);
  RUN_TEST(test_copy_kernel_on_the_callers_device_never_sets_it);
  RUN_TEST(test_engine_weights_freed_on_the_engines_device);
  etrt_device_select_sim(0);
  return TEST_EXIT();
}
