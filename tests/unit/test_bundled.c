/* Bundled programs (.bpte): the writer/reader round trip, running every case of a
 * two-method bundle through the public API, a refusal for each bad field, and the
 * method's own checks at its edge (input count, dtype, shape bound) that the cases
 * rely on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bundled_testing.h"
#include "etrt/bundled.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "pte/bpte.h"
#include "test_util.h"

static uint8_t *pte;
static size_t pte_size;

/* A bundle of the two-method program, edited by `edit` before it is written. */
static uint8_t *write_bundle(void (*edit)(bt_bundle_data *, etrt_bpte_file *), size_t *size) {
  static bt_bundle_data d;
  etrt_bpte_file file;
  bt_bundle_fill(&d, &file, pte, pte_size, 0.0f);
  if (edit != NULL) edit(&d, &file);
  uint8_t *bytes = NULL;
  CHECK_OK(etrt_bpte_write(&file, &bytes, size));
  return bytes;
}

static void test_round_trip(void) {
  bt_bundle_data d;
  etrt_bpte_file file;
  bt_bundle_fill(&d, &file, pte, pte_size, 0.0f);
  file.version = 7;
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(etrt_bpte_write(&file, &bytes, &size));
  CHECK(size > 8 && memcmp(bytes + 4, "BP08", 4) == 0);
  etrt_bpte_file *back = NULL;
  CHECK_OK(etrt_bpte_parse(bytes, size, &back));
  if (back == NULL) return;
  CHECK_EQ_INT(back->version, 7);
  CHECK_EQ_INT(back->program.size, pte_size);
  CHECK(memcmp(back->program.data, pte, pte_size) == 0);
  CHECK_EQ_INT((uintptr_t)(back->program.data - bytes) % BPTE_PROGRAM_ALIGNMENT, 0);
  CHECK_EQ_INT(back->suites_count, 2);
  for (size_t s = 0; s < back->suites_count && s < 2; ++s) {
    const etrt_bpte_suite *x = &back->suites[s], *y = &file.suites[s];
    CHECK(x->method_name.size == y->method_name.size &&
          memcmp(x->method_name.data, y->method_name.data, x->method_name.size) == 0);
    CHECK_EQ_INT(x->cases_count, y->cases_count);
    for (size_t c = 0; c < x->cases_count && c < y->cases_count; ++c) {
      CHECK_EQ_INT(x->cases[c].inputs_count, y->cases[c].inputs_count);
      CHECK_EQ_INT(x->cases[c].expected_outputs_count, y->cases[c].expected_outputs_count);
      for (size_t i = 0; i < x->cases[c].inputs_count; ++i) {
        const etrt_bpte_tensor *a = &x->cases[c].inputs[i].tensor,
                               *b = &y->cases[c].inputs[i].tensor;
        CHECK_EQ_INT(x->cases[c].inputs[i].kind, ETRT_BPTE_VALUE_TENSOR);
        CHECK_EQ_INT(a->scalar_type, b->scalar_type);
        CHECK(a->sizes.count == b->sizes.count &&
              memcmp(a->sizes.data, b->sizes.data, 4 * a->sizes.count) == 0);
        CHECK(a->data.size == b->data.size &&
              memcmp(a->data.data, b->data.data, a->data.size) == 0);
        CHECK_EQ_INT((uintptr_t)(a->data.data - bytes) % BPTE_TENSOR_ALIGNMENT, 0);
      }
    }
  }
  etrt_bpte_file_free(back);
  free(bytes);
}

/* Scalars of every kind survive the round trip. */
static void test_scalar_values(void) {
  etrt_bpte_value values[3] = {{.kind = ETRT_BPTE_VALUE_INT, .int_val = -1234567890123LL},
                               {.kind = ETRT_BPTE_VALUE_BOOL, .bool_val = true},
                               {.kind = ETRT_BPTE_VALUE_DOUBLE, .double_val = 0.125}};
  etrt_bpte_case c = {values, 3, values, 1};
  etrt_bpte_suite s = {{"forward", 7}, &c, 1};
  etrt_bpte_file file = {.suites = &s, .suites_count = 1, .program = {pte, pte_size}};
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(etrt_bpte_write(&file, &bytes, &size));
  etrt_bpte_file *back = NULL;
  CHECK_OK(etrt_bpte_parse(bytes, size, &back));
  if (back != NULL) {
    const etrt_bpte_value *v = back->suites[0].cases[0].inputs;
    CHECK(v[0].kind == ETRT_BPTE_VALUE_INT && v[0].int_val == -1234567890123LL);
    CHECK(v[1].kind == ETRT_BPTE_VALUE_BOOL && v[1].bool_val);
    CHECK(v[2].kind == ETRT_BPTE_VALUE_DOUBLE && v[2].double_val == 0.125);
  }
  etrt_bpte_file_free(back);
  /* Through the API: a bool input is refused naming the input. */
  etrt_bundled *bundled = NULL;
  CHECK_OK(etrt_bundled_load_memory(bytes, size, NULL, &bundled));
  if (bundled != NULL) {
    etrt_bundled_value value;
    CHECK_OK(etrt_bundled_input(bundled, 0, 0, 0, &value));
    CHECK(value.kind == ETRT_BUNDLED_INT && value.int_value == -1234567890123LL);
    etrt_method *m = NULL;
    CHECK_OK(etrt_method_create(etrt_bundled_program(bundled), "forward", &m));
    CHECK_FAILS(etrt_bundled_set_inputs(bundled, 0, 0, m), ETRT_ERROR_INVALID_ARGUMENT,
                "the case has 3 inputs, the method takes 2");
    etrt_method_destroy(m);
  }
  etrt_bundled_destroy(bundled);
  free(bytes);
}

/* Runs every case; returns how many passed and sets the worst error seen. */
static int run_all(const etrt_bundled *b, double *worst_seen) {
  int passed_cases = 0;
  *worst_seen = 0.0;
  for (uint32_t s = 0; s < etrt_bundled_suite_count(b); ++s) {
    etrt_method *m = NULL;
    CHECK_OK(etrt_method_create(etrt_bundled_program(b), etrt_bundled_suite_method(b, s), &m));
    if (m == NULL) continue;
    for (uint32_t c = 0; c < etrt_bundled_case_count(b, s); ++c) {
      uint32_t ni, no;
      CHECK_OK(etrt_bundled_case_io(b, s, c, &ni, &no));
      CHECK_OK(etrt_bundled_set_inputs(b, s, c, m));
      CHECK_OK(etrt_method_execute(m));
      int all = 1;
      for (uint32_t o = 0; o < no; ++o) {
        etrt_bundled_value expected;
        etrt_tensor_view actual;
        double worst;
        int passed;
        CHECK_OK(etrt_bundled_expected_output(b, s, c, o, &expected));
        CHECK_OK(etrt_method_get_output(m, o, &actual));
        CHECK_OK(etrt_bundled_compare(&expected, &actual, 1e-5, 1e-8, &worst, &passed));
        all &= passed;
        if (worst > *worst_seen) *worst_seen = worst;
      }
      passed_cases += all;
    }
    etrt_method_destroy(m);
  }
  return passed_cases;
}

static void test_run_cases(void) {
  size_t size;
  uint8_t *bytes = write_bundle(NULL, &size);
  etrt_bundled *b = NULL;
  CHECK_OK(etrt_bundled_load_memory(bytes, size, NULL, &b));
  if (b != NULL) {
    CHECK_EQ_INT(etrt_bundled_suite_count(b), 2);
    CHECK(strcmp(etrt_bundled_suite_method(b, 0), "forward") == 0);
    CHECK(strcmp(etrt_bundled_suite_method(b, 1), "double") == 0);
    CHECK(etrt_bundled_suite_method(b, 2) == NULL);
    CHECK_EQ_INT(etrt_bundled_case_count(b, 0), 2);
    CHECK_EQ_INT(etrt_bundled_case_count(b, 1), 1);
    CHECK_EQ_INT(etrt_bundled_case_count(b, 5), 0);
    etrt_bundled_value v;
    CHECK_OK(etrt_bundled_input(b, 0, 1, 1, &v));
    CHECK(v.kind == ETRT_BUNDLED_TENSOR && v.tensor.dtype == ETRT_DTYPE_FLOAT32 &&
          v.tensor.rank == 2 && v.tensor.sizes[1] == 3 && v.nbytes == 24);
    CHECK_FAILS(etrt_bundled_input(b, 0, 2, 0, &v), ETRT_ERROR_INVALID_ARGUMENT,
                "has 2 test cases, not a case 2");
    CHECK_FAILS(etrt_bundled_input(b, 0, 0, 2, &v), ETRT_ERROR_INVALID_ARGUMENT,
                "has 2 inputs, not an input 2");
    CHECK_FAILS(etrt_bundled_expected_output(b, 3, 0, 0, &v), ETRT_ERROR_INVALID_ARGUMENT,
                "suite 3 is out of range");
    double worst;
    CHECK_EQ_INT(run_all(b, &worst), 3);
    CHECK(worst <= 1e-6);
  }
  etrt_bundled_destroy(b);
  free(bytes);
}

static void make_wrong(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->forward_out[1][4] += 0.5f;
}

static void test_failing_case(void) {
  size_t size;
  uint8_t *bytes = write_bundle(make_wrong, &size);
  etrt_bundled *b = NULL;
  CHECK_OK(etrt_bundled_load_memory(bytes, size, NULL, &b));
  if (b != NULL) {
    double worst;
    CHECK_EQ_INT(run_all(b, &worst), 2);
    CHECK_NEAR(worst, 0.5, 1e-6);
  }
  etrt_bundled_destroy(b);
  free(bytes);
}

static void test_compare(void) {
  float e[3] = {1.0f, -100.0f, NAN}, a[3] = {1.0f, -100.0009f, NAN};
  etrt_bundled_value expected = {
      .kind = ETRT_BUNDLED_TENSOR, .tensor = {e, ETRT_DTYPE_FLOAT32, 1, {3}}, .nbytes = sizeof e};
  etrt_tensor_view actual = {a, ETRT_DTYPE_FLOAT32, 1, {3}};
  double worst;
  int passed;
  /* The tolerance scales with the largest expected value (100): 0.0009 < 1e-5 * 100. */
  CHECK_OK(etrt_bundled_compare(&expected, &actual, 1e-5, 0.0, &worst, &passed));
  CHECK(passed && worst > 0.0008 && worst < 0.001);
  CHECK_OK(etrt_bundled_compare(&expected, &actual, 1e-6, 0.0, &worst, &passed));
  CHECK(!passed);
  a[2] = 0.0f; /* NaN matches NaN only */
  CHECK_OK(etrt_bundled_compare(&expected, &actual, 1e-5, 0.0, &worst, &passed));
  CHECK(!passed && isinf(worst));
  actual.sizes[0] = 2; /* a shape that differs fails the comparison */
  CHECK_OK(etrt_bundled_compare(&expected, &actual, 1e-5, 1.0, &worst, &passed));
  CHECK(!passed && isinf(worst));
  int64_t ie[2] = {(1LL << 60) + 1, 5}, ia[2] = {1LL << 60, 5};
  etrt_bundled_value iexp = {
      .kind = ETRT_BUNDLED_TENSOR, .tensor = {ie, ETRT_DTYPE_INT64, 1, {2}}, .nbytes = sizeof ie};
  etrt_tensor_view iact = {ia, ETRT_DTYPE_INT64, 1, {2}};
  /* Integers compare exactly, even beyond a double's precision and any tolerance. */
  CHECK_OK(etrt_bundled_compare(&iexp, &iact, 1.0, 1.0, &worst, &passed));
  CHECK(!passed && worst >= 1.0);
  ia[0] = ie[0];
  CHECK_OK(etrt_bundled_compare(&iexp, &iact, 0.0, 0.0, &worst, &passed));
  CHECK(passed && worst == 0.0);
  etrt_bundled_value scalar = {.kind = ETRT_BUNDLED_DOUBLE, .double_value = 1.0};
  CHECK_FAILS(etrt_bundled_compare(&scalar, &iact, 0.0, 0.0, &worst, &passed),
              ETRT_ERROR_UNSUPPORTED, "a double expected output is not supported");
}

/* ---- refusals ---------------------------------------------------------------------- */

static void refused(void (*edit)(bt_bundle_data *, etrt_bpte_file *), etrt_status status,
                    const char *text) {
  size_t size;
  uint8_t *bytes = write_bundle(edit, &size);
  etrt_bundled *b = NULL;
  CHECK_FAILS(etrt_bundled_load_memory(bytes, size, NULL, &b), status, text);
  CHECK(b == NULL);
  free(bytes);
}

static void no_program(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)d;
  f->program.size = 0;
}
static void bad_program(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)d;
  f->program.size = 16;
}
static void no_name(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->suites[1].method_name = (etrt_pte_str){NULL, 0};
}
static void unknown_method(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->suites[1].method_name = (etrt_pte_str){"triple", 6};
}
static void no_value(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->forward_in[1][0].kind = (etrt_bpte_value_kind)0;
}
static void bad_tag(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->double_expected[0].kind = (etrt_bpte_value_kind)9;
}
static void bad_type(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->forward_in[0][1].tensor.scalar_type = (etrt_dtype)8;
}
static void negative_size(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  static const int32_t sizes[2] = {2, -3};
  d->forward_in[0][0].tensor.sizes.data = sizes;
}
static void high_rank(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  static const int32_t sizes[9] = {1, 1, 1, 1, 1, 1, 1, 1, 4};
  d->double_in[0].tensor.sizes = (etrt_pte_i32s){sizes, 9};
  d->double_in[0].tensor.dim_order.count = 0;
}
static void short_order(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->forward_in[0][0].tensor.dim_order.count = 1;
}
static void channels_last(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  static const uint8_t order[2] = {1, 0};
  d->forward_in[0][0].tensor.dim_order.data = order;
}
static void short_data(bt_bundle_data *d, etrt_bpte_file *f) {
  (void)f;
  d->forward_expected[1][0].tensor.data.size -= 4;
}

static void test_refusals(void) {
  refused(no_program, ETRT_ERROR_INVALID_FORMAT, "BundledProgram.program at byte offset");
  refused(bad_program, ETRT_ERROR_INVALID_FORMAT, "");
  refused(no_name, ETRT_ERROR_INVALID_FORMAT,
          "method_test_suites[1]: BundledMethodTestSuite.method_name at byte offset");
  refused(unknown_method, ETRT_ERROR_INVALID_FORMAT,
          "method_test_suites[1]: the program has no method 'triple' (it has 'forward', "
          "'double')");
  refused(no_value, ETRT_ERROR_INVALID_FORMAT,
          "test_cases[1]: inputs[0]: Value.val at byte offset");
  refused(bad_tag, ETRT_ERROR_INVALID_FORMAT, "expected_outputs[0]: ");
  refused(bad_type, ETRT_ERROR_INVALID_FORMAT, "inputs[1]: Tensor.scalar_type at byte offset");
  refused(negative_size, ETRT_ERROR_INVALID_FORMAT, "Tensor.sizes[1] at byte offset");
  refused(high_rank, ETRT_ERROR_INVALID_FORMAT, "rank 9 is above");
  refused(short_order, ETRT_ERROR_INVALID_FORMAT, "Tensor.dim_order at byte offset");
  refused(channels_last, ETRT_ERROR_UNSUPPORTED, "only contiguous tensors");
  refused(short_data, ETRT_ERROR_INVALID_FORMAT, "Tensor.data at byte offset");

  etrt_bundled *b = NULL;
  CHECK_FAILS(etrt_bundled_load_memory(pte, pte_size, NULL, &b), ETRT_ERROR_INVALID_FORMAT,
              "this is an ExecuTorch program (identifier 'ET12')");
  static const uint8_t junk[16] = {4, 0, 0, 0, 'X', 'Y', 'Z', 'W'};
  CHECK_FAILS(etrt_bundled_load_memory(junk, sizeof junk, NULL, &b), ETRT_ERROR_INVALID_FORMAT,
              "expected the identifier 'BP08' at byte offset 4");
  CHECK_FAILS(etrt_bundled_load_file("/nonexistent/x.bpte", NULL, &b), ETRT_ERROR_IO,
              "/nonexistent/x.bpte");
  /* Every truncation of a good bundle is refused, never read past. */
  size_t size;
  uint8_t *bytes = write_bundle(NULL, &size);
  int accepted = 0;
  for (size_t cut = 0; cut < size; cut += 7) {
    uint8_t *copy = malloc(cut ? cut : 1);
    memcpy(copy, bytes, cut);
    etrt_bpte_file *f = NULL;
    if (etrt_bpte_parse(copy, cut, &f) == ETRT_OK) ++accepted;
    etrt_bpte_file_free(f);
    free(copy);
  }
  CHECK_EQ_INT(accepted, 0);
  free(bytes);
}

/* ---- the method's edge, through the C API ------------------------------------------ */

static void test_method_edge(void) {
  etrt_program *program = NULL;
  CHECK_OK(etrt_program_load_memory(pte, pte_size, NULL, &program));
  if (program == NULL) return;
  CHECK_EQ_INT(etrt_program_method_count(program), 2);
  CHECK(strcmp(etrt_program_method_name(program, 1), "double") == 0);
  etrt_method *m = NULL;
  CHECK_FAILS(etrt_method_create(program, "triple", &m), ETRT_ERROR_NOT_FOUND,
              "the program has no method 'triple' (it has 'forward', 'double')");
  CHECK_OK(etrt_method_create(program, "double", &m));
  if (m != NULL) {
    float x[4] = {1, 2, 3, 4};
    int32_t xi[4] = {0};
    CHECK_EQ_INT(etrt_method_input_count(m), 1);
    etrt_tensor_view v = {x, ETRT_DTYPE_FLOAT32, 1, {4}};
    CHECK_FAILS(etrt_method_execute(m), ETRT_ERROR_STATE, "method 'double': input 0 is not set");
    CHECK_FAILS(etrt_method_set_input(m, 1, &v), ETRT_ERROR_INVALID_ARGUMENT,
                "method 'double' has 1 inputs, not 2");
    etrt_tensor_view wrong_type = {xi, ETRT_DTYPE_INT32, 1, {4}};
    CHECK_FAILS(etrt_method_set_input(m, 0, &wrong_type), ETRT_ERROR_INVALID_ARGUMENT,
                "method 'double', input 0: dtype int32, the method takes float32");
    etrt_tensor_view wrong_shape = {x, ETRT_DTYPE_FLOAT32, 1, {3}};
    CHECK_FAILS(etrt_method_set_input(m, 0, &wrong_shape), ETRT_ERROR_INVALID_ARGUMENT,
                "method 'double', input 0, axis 0: size 3, the method takes 4");
    CHECK_OK(etrt_method_set_input(m, 0, &v));
    CHECK_OK(etrt_method_execute(m));
    etrt_tensor_view out;
    CHECK_OK(etrt_method_get_output(m, 0, &out));
    CHECK(out.rank == 1 && out.sizes[0] == 4 && ((float *)out.data)[3] == 8.0f);
    etrt_method_destroy(m);
  }
  CHECK_OK(etrt_method_create(program, "forward", &m));
  if (m != NULL) {
    float a[9] = {0};
    etrt_tensor_view beyond = {a, ETRT_DTYPE_FLOAT32, 2, {3, 3}};
    CHECK_FAILS(etrt_method_set_input(m, 0, &beyond), ETRT_ERROR_INVALID_ARGUMENT,
                "method 'forward', input 0, axis 0: size 3, the method takes at most 2");
    etrt_method_destroy(m);
  }
  etrt_program_destroy(program);
}

/* The real ExecuTorch bundle when it is there (ETRT_BPTE_FIXTURE or tests/data). */
static void test_executorch_bundle(void) {
  const char *path = getenv("ETRT_BPTE_FIXTURE");
  if (path == NULL) path = etrt_test_fixture("executorch/matmul_mlp_bundled.bpte");
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    printf("skipped: %s is absent\n", path);
    return;
  }
  fclose(f);
  etrt_bundled *b = NULL;
  CHECK_OK(etrt_bundled_load_file(path, NULL, &b));
  if (b != NULL) {
    double worst;
    uint32_t total = 0;
    for (uint32_t s = 0; s < etrt_bundled_suite_count(b); ++s)
      total += etrt_bundled_case_count(b, s);
    CHECK(total > 0);
    CHECK_EQ_INT(run_all(b, &worst), total);
  }
  etrt_bundled_destroy(b);
}

int main(void) {
  pte = bt_two_method_pte(&pte_size);
  CHECK(pte != NULL);
  if (pte == NULL) return TEST_EXIT();
  RUN_TEST(test_round_trip);
  RUN_TEST(test_scalar_values);
  RUN_TEST(test_run_cases);
  RUN_TEST(test_failing_case);
  RUN_TEST(test_compare);
  RUN_TEST(test_refusals);
  RUN_TEST(test_method_edge);
  RUN_TEST(test_executorch_bundle);
  free(pte);
  return TEST_EXIT();
}
