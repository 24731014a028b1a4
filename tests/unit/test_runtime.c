/* The runtime on the CPU: real ExecuTorch programs, programs from plans, every
 * refusal, threads, and memory over many load/run/drop cycles. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "delegate/etrt_backend.h"
#include "runtime/backend.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "pte/pte.h"
#include "test_programs.h"
#include "test_util.h"

static const etrt_device cpu = {ETRT_DEVICE_CPU, 0};

static void test_fixture_add(void) {
  etrt_program *p;
  CHECK_OK(etrt_program_load_file(etrt_test_fixture("pte/add.pte"), NULL, &p));
  if (p == NULL) return;
  CHECK_EQ_INT(etrt_program_method_count(p), 1);
  CHECK(strcmp(etrt_program_method_name(p, 0), "forward") == 0);
  etrt_method *m;
  CHECK_OK(etrt_method_create(p, "forward", &m));
  float a = 2.5f, b = -0.75f;
  etrt_tensor_view va = {&a, ETRT_DTYPE_FLOAT32, 1, {1}}, vb = {&b, ETRT_DTYPE_FLOAT32, 1, {1}};
  CHECK_OK(etrt_method_set_input(m, 0, &va));
  CHECK_OK(etrt_method_set_input(m, 1, &vb));
  CHECK_OK(etrt_method_execute(m));
  etrt_tensor_view out;
  CHECK_OK(etrt_method_get_output(m, 0, &out));
  CHECK_EQ_INT(out.rank, 1);
  CHECK_NEAR(*(float *)out.data, 1.75, 0);
  /* Wrong shapes and types are refused naming the input and axis. */
  etrt_tensor_view wrong = {&a, ETRT_DTYPE_FLOAT32, 1, {2}};
  CHECK_FAILS(etrt_method_set_input(m, 0, &wrong), ETRT_ERROR_INVALID_ARGUMENT,
              "input 0, axis 0: size 2");
  wrong = (etrt_tensor_view){&a, ETRT_DTYPE_INT32, 1, {1}};
  CHECK_FAILS(etrt_method_set_input(m, 1, &wrong), ETRT_ERROR_INVALID_ARGUMENT, "dtype int32");
  CHECK_FAILS(etrt_method_set_input(m, 2, &va), ETRT_ERROR_INVALID_ARGUMENT, "has 2 inputs");
  etrt_method_destroy(m);
  CHECK_FAILS(etrt_method_create(p, "backward", &m), ETRT_ERROR_NOT_FOUND, "no method 'backward'");
  etrt_program_destroy(p);
}

static void test_fixture_linear_inline_constants(void) {
  /* forward(x) = x * w + b with w and b inline constants: read them from the file
   * to compute the expected answer independently of the runtime. */
  etrt_file_map map;
  CHECK_OK(etrt_file_map_open(etrt_test_fixture("pte/linear_inline_constants.pte"), &map));
  etrt_pte_program *pte;
  CHECK_OK(etrt_pte_parse(map.data, map.size, &pte));
  if (pte == NULL) return;
  const etrt_pte_plan *plan = &pte->plans[0];
  const float *constants[2] = {NULL, NULL};
  int found = 0;
  for (size_t i = 0; i < plan->values_count && found < 2; ++i) {
    const etrt_pte_value *v = &plan->values[i];
    if (v->kind != ETRT_PTE_VALUE_TENSOR || v->tensor.data_buffer_idx == 0) continue;
    etrt_pte_bytes bytes;
    CHECK_OK(etrt_pte_program_constant(pte, v->tensor.data_buffer_idx, 16, &bytes));
    constants[found++] = (const float *)bytes.data;
  }
  CHECK_EQ_INT(found, 2);
  etrt_program *p;
  CHECK_OK(etrt_program_load_file(etrt_test_fixture("pte/linear_inline_constants.pte"), NULL, &p));
  etrt_method *m;
  CHECK_OK(etrt_method_create(p, "forward", &m));
  float x[4] = {1.0f, -2.0f, 3.5f, 0.25f};
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {2, 2}};
  CHECK_OK(etrt_method_set_input(m, 0, &vx));
  CHECK_OK(etrt_method_execute(m));
  etrt_tensor_view out;
  CHECK_OK(etrt_method_get_output(m, 0, &out));
  for (int i = 0; i < 4 && found == 2; ++i) {
    /* The first constant in value order is the multiplier (mul comes first). */
    CHECK_NEAR(((float *)out.data)[i], x[i] * constants[0][i] + constants[1][i], 1e-6);
  }
  etrt_method_destroy(m);
  etrt_program_destroy(p);
  etrt_pte_program_free(pte);
  etrt_file_map_close(&map);
}

static void test_program_from_plan_with_dynamic_batch(void) {
  etrt_test_mlp mlp;
  uint8_t *pte = NULL;
  size_t size = 0;
  CHECK_OK(etrt_test_mlp_program(&mlp, 16, 32, 4, 1, 8, 3, cpu, "mlp", &pte, &size));
  etrt_program *p;
  CHECK_OK(etrt_program_load_memory(pte, size, NULL, &p));
  etrt_method *m;
  CHECK_OK(etrt_method_create(p, "forward", &m));
  float x[8 * 16], y[8 * 4];
  for (int i = 0; i < 8 * 16; ++i) x[i] = (float)((i * 37) % 19) / 9.0f - 1.0f;
  for (int64_t batch = 1; batch <= 8; batch += 3) {
    etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {batch, 16}};
    CHECK_OK(etrt_method_set_input(m, 0, &vx));
    CHECK_OK(etrt_method_execute(m));
    etrt_tensor_view out;
    CHECK_OK(etrt_method_get_output(m, 0, &out));
    CHECK_EQ_INT(out.sizes[0], batch);
    etrt_test_mlp_reference(&mlp, x, batch, y);
    CHECK(etrt_test_max_diff(out.data, y, (size_t)(batch * 4)) < 1e-5);
  }
  etrt_tensor_view too_big = {x, ETRT_DTYPE_FLOAT32, 2, {9, 16}};
  CHECK_FAILS(etrt_method_set_input(m, 0, &too_big), ETRT_ERROR_INVALID_ARGUMENT,
              "axis 0: size 9, the method takes at most 8");
  etrt_method_destroy(m);
  /* An input left unset is refused at execute. */
  CHECK_OK(etrt_method_create(p, "forward", &m));
  etrt_method_destroy(m);
  etrt_program_destroy(p);
  free(pte);
  etrt_test_mlp_free(&mlp);
}

/* Rewrites a fixture-like program through the model so that a refusal path can be
 * reached: `edit` changes the parsed model in place before it is written back. */
static int write_edited(const uint8_t *bytes, size_t size, void (*edit)(etrt_pte_program *),
                        uint8_t **out, size_t *out_size) {
  etrt_pte_program *pte;
  if (etrt_pte_parse(bytes, size, &pte) != ETRT_OK) return -1;
  edit(pte);
  etrt_status s = etrt_pte_write(pte, out, out_size);
  etrt_pte_program_free(pte);
  return s == ETRT_OK ? 0 : -1;
}

static void rename_operator(etrt_pte_program *pte) {
  etrt_pte_operator *op = (etrt_pte_operator *)&pte->plans[0].operators[0];
  op->name = (etrt_pte_str){"aten::frobnicate", 16};
}

static void rename_delegate(etrt_pte_program *pte) {
  etrt_pte_delegate *d = (etrt_pte_delegate *)&pte->plans[0].delegates[0];
  d->id = (etrt_pte_str){"NoSuchBackend", 13};
}

static void make_input_external(etrt_pte_program *pte) {
  etrt_pte_plan *plan = (etrt_pte_plan *)&pte->plans[0];
  etrt_pte_value *v = (etrt_pte_value *)&plan->values[plan->inputs.data[0]];
  v->tensor.has_allocation_info = 0;
  v->tensor.has_extra_tensor_info = 1;
  v->tensor.extra_tensor_info.location = ETRT_PTE_TENSOR_EXTERNAL;
  v->tensor.extra_tensor_info.fully_qualified_name = (etrt_pte_str){"layer.weight", 12};
}

static void test_refusals(void) {
  etrt_file_map map;
  CHECK_OK(etrt_file_map_open(etrt_test_fixture("pte/add.pte"), &map));
  uint8_t *edited = NULL;
  size_t size = 0;
  etrt_program *p = NULL;
  CHECK(write_edited(map.data, map.size, rename_operator, &edited, &size) == 0);
  CHECK_FAILS(etrt_program_load_memory(edited, size, NULL, &p), ETRT_ERROR_UNSUPPORTED,
              "aten::frobnicate.out");
  free(edited);
  etrt_file_map_close(&map);

  etrt_test_mlp mlp;
  uint8_t *pte = NULL;
  CHECK_OK(etrt_test_mlp_program(&mlp, 4, 8, 2, 1, 2, 5, cpu, "mlp", &pte, &size));
  CHECK(write_edited(pte, size, rename_delegate, &edited, &size) == 0);
  CHECK_FAILS(etrt_program_load_memory(edited, size, NULL, &p), ETRT_ERROR_UNSUPPORTED,
              "'NoSuchBackend'");
  free(edited);
  free(pte);

  etrt_test_mlp_free(&mlp);
  /* A tensor kept in a .ptd file: without the file, a clear refusal. */
  CHECK_OK(etrt_test_mlp_program(&mlp, 4, 8, 2, 1, 2, 5, cpu, "mlp", &pte, &size));
  CHECK(write_edited(pte, size, make_input_external, &edited, &size) == 0);
  CHECK_OK(etrt_program_load_memory(edited, size, NULL, &p));
  etrt_method *m = NULL;
  CHECK_FAILS(etrt_method_create(p, "forward", &m), ETRT_ERROR_NOT_FOUND, "--data");
  etrt_program_destroy(p);
  etrt_program_options missing = {.data_path = "/nonexistent/weights.ptd"};
  CHECK_FAILS(etrt_program_load_memory(edited, size, &missing, &p), ETRT_ERROR_IO,
              "/nonexistent/weights.ptd");
  free(edited);
  free(pte);
  etrt_test_mlp_free(&mlp);

  /* A corrupted plan inside the delegate payload: refused at init, never run. */
  CHECK_OK(etrt_test_mlp_program(&mlp, 4, 8, 2, 1, 2, 5, cpu, "mlp", &pte, &size));
  etrt_pte_program *parsed = NULL;
  CHECK_OK(etrt_pte_parse(pte, size, &parsed));
  etrt_pte_bytes payload = {0};
  if (parsed != NULL)
    CHECK_OK(etrt_pte_program_delegate_data(parsed, &parsed->plans[0].delegates[0], &payload));
  etrt_pte_program_free(parsed);
  if (payload.data != NULL) {
    pte[(size_t)(payload.data - pte) + payload.size - 3] ^= 0x40;
    CHECK_OK(etrt_program_load_memory(pte, size, NULL, &p));
    CHECK_FAILS(etrt_method_create(p, "forward", &m), ETRT_ERROR_INVALID_FORMAT, "digest");
    etrt_program_destroy(p);
  }
  free(pte);
  etrt_test_mlp_free(&mlp);

  /* A second registration of an id is refused. */
  CHECK_FAILS(etrt_backend_register(&etrt_backend_etrt), ETRT_ERROR_ALREADY_EXISTS, "EtrtBackend");
  CHECK_FAILS(etrt_program_load_file("/nonexistent/x.pte", NULL, &p), ETRT_ERROR_IO,
              "/nonexistent/x.pte");
}

typedef struct thread_job {
  const etrt_program *program;
  const etrt_test_mlp *mlp;
  int seed;
  int runs;
  int mismatches;
  etrt_status status;
} thread_job;

static void *thread_main(void *arg) {
  thread_job *job = arg;
  etrt_method *m;
  job->status = etrt_method_create(job->program, "forward", &m);
  if (job->status != ETRT_OK) return NULL;
  float x[2 * 8], y[2 * 3];
  for (int run = 0; run < job->runs; ++run) {
    for (int i = 0; i < 16; ++i) x[i] = (float)((run * 7 + i * 13 + job->seed) % 23) / 11.0f - 1.0f;
    int64_t batch = 1 + run % 2;
    etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {batch, 8}};
    etrt_tensor_view out;
    if (etrt_method_set_input(m, 0, &vx) != ETRT_OK || etrt_method_execute(m) != ETRT_OK ||
        etrt_method_get_output(m, 0, &out) != ETRT_OK || out.sizes[0] != batch) {
      ++job->mismatches;
      continue;
    }
    etrt_test_mlp_reference(job->mlp, x, batch, y);
    if (etrt_test_max_diff(out.data, y, (size_t)(batch * 3)) > 1e-5) ++job->mismatches;
  }
  etrt_method_destroy(m);
  return NULL;
}

static void test_threads_share_a_program(void) {
  etrt_test_mlp mlp;
  uint8_t *pte = NULL;
  size_t size = 0;
  CHECK_OK(etrt_test_mlp_program(&mlp, 8, 16, 3, 1, 2, 9, cpu, "mlp", &pte, &size));
  etrt_program *p;
  CHECK_OK(etrt_program_load_memory(pte, size, NULL, &p));
  pthread_t threads[8];
  thread_job jobs[8];
  for (int t = 0; t < 8; ++t) {
    jobs[t] = (thread_job){p, &mlp, t * 101, 10000, 0, ETRT_OK};
    pthread_create(&threads[t], NULL, thread_main, &jobs[t]);
  }
  int mismatches = 0;
  for (int t = 0; t < 8; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_OK(jobs[t].status);
    mismatches += jobs[t].mismatches;
  }
  printf("8 threads x 10000 runs: %d mismatches\n", mismatches);
  CHECK_EQ_INT(mismatches, 0);
  etrt_program_destroy(p);
  free(pte);
  etrt_test_mlp_free(&mlp);
}

/* Live heap bytes: the sanitizer's count where it runs (quarantine does not distort
 * it), else resident memory from /proc. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static double heap_bytes(void) {
  if (__sanitizer_get_current_allocated_bytes != NULL)
    return (double)__sanitizer_get_current_allocated_bytes();
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f != NULL) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return (double)resident * 4096.0;
}

static void test_load_run_drop_does_not_grow(void) {
  etrt_test_mlp mlp;
  uint8_t *pte = NULL;
  size_t size = 0;
  CHECK_OK(etrt_test_mlp_program(&mlp, 8, 16, 3, 1, 2, 4, cpu, "mlp", &pte, &size));
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {1, 8}};
  double first = 0.0, sum_i = 0.0, sum_b = 0.0, sum_ii = 0.0, sum_ib = 0.0;
  int n = 0;
  for (int i = 0; i < 1000; ++i) {
    etrt_program *p;
    etrt_method *m;
    if (etrt_program_load_memory(pte, size, NULL, &p) != ETRT_OK) break;
    if (etrt_method_create(p, "forward", &m) == ETRT_OK) {
      (void)etrt_method_set_input(m, 0, &vx);
      (void)etrt_method_execute(m);
      etrt_method_destroy(m);
    }
    etrt_program_destroy(p);
    if (i >= 100) { /* after warm-up */
      double b = heap_bytes();
      if (i == 100) first = b;
      sum_i += i;
      sum_b += b;
      sum_ii += (double)i * i;
      sum_ib += (double)i * b;
      ++n;
    }
  }
  double slope = (n * sum_ib - sum_i * sum_b) / (n * sum_ii - sum_i * sum_i);
  printf("load/run/drop x1000: heap slope %.2f bytes per cycle (from %.0f bytes)\n", slope, first);
  CHECK(slope < 64.0); /* a leak of one small allocation per cycle would show */
  free(pte);
  etrt_test_mlp_free(&mlp);
}

int main(void) {
  RUN_TEST(test_fixture_add);
  RUN_TEST(test_fixture_linear_inline_constants);
  RUN_TEST(test_program_from_plan_with_dynamic_batch);
  RUN_TEST(test_refusals);
  RUN_TEST(test_threads_share_a_program);
  RUN_TEST(test_load_run_drop_does_not_grow);
  return TEST_EXIT();
}
