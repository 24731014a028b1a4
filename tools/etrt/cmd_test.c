/* etrt test FILE.bpte: runs the test cases a bundled program carries and compares
 * each output with the expected one. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "commands.h"
#include "device/device.h"
#include "device/device_scope.h"
#include "etrt/bundled.h"
#include "etrt/method.h"
#include "etrt/program.h"

#define ETRT_TEST_RTOL 1e-5
#define ETRT_TEST_ATOL 1e-8

static void etrt_test_usage(FILE *out) {
  fprintf(out,
          "usage: etrt test FILE.bpte [--method NAME] [--rtol R] [--atol A] [--allow-cpu]\n\n"
          "Runs every test case of every method a bundled program (.bpte) carries, or of\n"
          "the method named, and compares each output with the expected one. Prints one\n"
          "line per case (method, case index, passed or failed, worst error) and a summary.\n\n"
          "  --method NAME   only the cases of this method\n"
          "  --rtol R        relative tolerance (default 1e-05)\n"
          "  --atol A        absolute tolerance (default 1e-08)\n"
          "  --allow-cpu     run methods built for a GPU on the CPU when there is none\n\n"
          "A floating-point element passes when |actual - expected| <= A + R * M, where M\n"
          "is the largest |expected| of that output; integers and bools must be equal, and\n"
          "NaN matches NaN only. The worst error is the largest |actual - expected|.\n\n"
          "Exit status: 0 all cases passed, 1 a case failed, 2 bad usage or a file that is\n"
          "not a valid bundled program.\n");
}

static int etrt_test_number(const char *option, const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(v >= 0.0) || isinf(v)) {
    fprintf(stderr, "etrt test: %s '%s': expected a number >= 0\n", option, text);
    return 2;
  }
  *out = v;
  return 0;
}

typedef struct etrt_test_options {
  const char *path;
  const char *method;
  double rtol, atol;
  int allow_cpu;
} etrt_test_options;

/* 0 to go on, -1 after --help, 2 for bad usage. */
static int etrt_test_parse(int argc, char **argv, etrt_test_options *o) {
  o->rtol = ETRT_TEST_RTOL;
  o->atol = ETRT_TEST_ATOL;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    int takes_value =
        strcmp(a, "--method") == 0 || strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0;
    if (takes_value && next == NULL) {
      fprintf(stderr, "etrt test: %s needs a value\n", a);
      return 2;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      etrt_test_usage(stdout);
      return -1;
    } else if (strcmp(a, "--method") == 0) {
      o->method = argv[++i];
    } else if (strcmp(a, "--rtol") == 0) {
      if (etrt_test_number(a, argv[++i], &o->rtol)) return 2;
    } else if (strcmp(a, "--atol") == 0) {
      if (etrt_test_number(a, argv[++i], &o->atol)) return 2;
    } else if (strcmp(a, "--allow-cpu") == 0) {
      o->allow_cpu = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "etrt test: unknown option '%s'\n\n", a);
      etrt_test_usage(stderr);
      return 2;
    } else if (o->path == NULL) {
      o->path = a;
    } else {
      fprintf(stderr, "etrt test: one FILE only ('%s' and '%s')\n\n", o->path, a);
      etrt_test_usage(stderr);
      return 2;
    }
  }
  if (o->path == NULL) {
    etrt_test_usage(stderr);
    return 2;
  }
  return 0;
}

/* An output in host memory: as it is, or copied from the GPU into *copy (freed by
 * the caller) where the method leaves it in device memory. */
static etrt_status etrt_test_host_output(const etrt_tensor_view *v, etrt_tensor_view *host,
                                         void **copy) {
  *host = *v;
  *copy = NULL;
  const etrt_device_driver *driver = etrt_device_driver_get();
  etrt_pointer_info info = {ETRT_POINTER_PAGEABLE_HOST, -1};
  if (driver == NULL || v->data == NULL || driver->pointer_info(v->data, &info) != ETRT_OK ||
      info.kind != ETRT_POINTER_DEVICE)
    return ETRT_OK;
  size_t nbytes = (size_t)etrt_tensor_view_numel(v) * etrt_dtype_size(v->dtype);
  if ((*copy = malloc(nbytes ? nbytes : 1)) == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory copying an output");
  etrt_device_scope scope;
  etrt_status s = etrt_device_scope_enter(driver, info.device, &scope);
  if (s != ETRT_OK) return s;
  s = driver->memcpy_async(*copy, v->data, nbytes, ETRT_COPY_DEVICE_TO_HOST,
                           ETRT_STREAM_PER_THREAD);
  if (s == ETRT_OK) s = driver->stream_synchronize(ETRT_STREAM_PER_THREAD);
  host->data = *copy;
  return etrt_device_scope_exit(&scope, s);
}

#define ETRT_TEST_MAX_OUTPUTS 256

/* Outputs a program leaves to the caller on a GPU (built with --io-on-device) get
 * host buffers of their largest size, which the runtime stages through device
 * memory (contract rule 3); the others stay in the method's own memory. */
static etrt_status etrt_test_bind_outputs(const etrt_program *program, const char *name,
                                          etrt_method *m, void **buffers) {
  uint32_t count = etrt_method_output_count(m);
  if (count > ETRT_TEST_MAX_OUTPUTS)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%u outputs; etrt test handles %d", count,
                      ETRT_TEST_MAX_OUTPUTS);
  for (uint32_t i = 0; i < count; ++i) {
    etrt_tensor_info info;
    ETRT_RETURN_IF_ERROR(etrt_program_output_info(program, name, i, &info));
    if (!info.is_tensor || info.device.type != ETRT_DEVICE_CUDA) continue;
    etrt_tensor_view largest = {.dtype = info.dtype, .rank = info.rank};
    memcpy(largest.sizes, info.sizes, sizeof largest.sizes);
    size_t size = (size_t)etrt_tensor_view_numel(&largest) * etrt_dtype_size(info.dtype);
    if ((buffers[i] = malloc(size ? size : 1)) == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for output %u", i);
    ETRT_RETURN_IF_ERROR(etrt_method_set_output(m, i, buffers[i], size ? size : 1));
  }
  return ETRT_OK;
}

/* Runs one case; *worst gets its worst error. 1 passed, 0 failed (the reason printed
 * in `reason`). */
static int etrt_test_case(const etrt_bundled *b, uint32_t suite, uint32_t c, etrt_method *m,
                          const etrt_test_options *o, double *worst, char *reason,
                          size_t reason_size) {
  uint32_t num_inputs, num_expected;
  *worst = 0.0;
  etrt_status s = etrt_bundled_case_io(b, suite, c, &num_inputs, &num_expected);
  if (s == ETRT_OK) s = etrt_bundled_set_inputs(b, suite, c, m);
  if (s == ETRT_OK) s = etrt_method_execute(m);
  if (s != ETRT_OK) {
    snprintf(reason, reason_size, "%s", etrt_last_error());
    *worst = INFINITY;
    return 0;
  }
  if (num_expected != etrt_method_output_count(m)) {
    snprintf(reason, reason_size, "the case expects %u outputs, the method gives %u", num_expected,
             etrt_method_output_count(m));
    *worst = INFINITY;
    return 0;
  }
  int passed = 1;
  for (uint32_t i = 0; i < num_expected; ++i) {
    etrt_bundled_value expected;
    etrt_tensor_view output, actual;
    void *copy = NULL;
    double w = INFINITY;
    int ok = 0;
    s = etrt_bundled_expected_output(b, suite, c, i, &expected);
    if (s == ETRT_OK) s = etrt_method_get_output(m, i, &output);
    if (s == ETRT_OK) s = etrt_test_host_output(&output, &actual, &copy);
    if (s == ETRT_OK) s = etrt_bundled_compare(&expected, &actual, o->rtol, o->atol, &w, &ok);
    free(copy);
    if (s != ETRT_OK) {
      snprintf(reason, reason_size, "output %u: %s", i, etrt_last_error());
      *worst = INFINITY;
      return 0;
    }
    if (!ok && passed) {
      if (isinf(w) &&
          (actual.dtype != expected.tensor.dtype || actual.rank != expected.tensor.rank ||
           memcmp(actual.sizes, expected.tensor.sizes,
                  sizeof(int64_t) * (size_t)(actual.rank > 0 ? actual.rank : 0)) != 0))
        snprintf(reason, reason_size, "output %u: dtype or shape differs from the expected one", i);
      else
        snprintf(reason, reason_size, "output %u out of tolerance", i);
      passed = 0;
    }
    if (w > *worst || isnan(w)) *worst = w;
  }
  return passed;
}

int etrt_cmd_test(int argc, char **argv) {
  etrt_test_options o = {0};
  int code = etrt_test_parse(argc, argv, &o);
  if (code != 0) return code < 0 ? 0 : code;

  etrt_program_options options = {.allow_cpu_fallback = o.allow_cpu};
  etrt_bundled *b = NULL;
  if (etrt_bundled_load_file(o.path, &options, &b) != ETRT_OK) {
    fprintf(stderr, "etrt test: %s\n", etrt_last_error());
    return 2;
  }
  uint32_t suites = etrt_bundled_suite_count(b), selected = 0;
  for (uint32_t s = 0; s < suites; ++s)
    selected += o.method == NULL || strcmp(etrt_bundled_suite_method(b, s), o.method) == 0;
  if (o.method != NULL && selected == 0) {
    fprintf(stderr, "etrt test: %s has no test cases for method '%s' (it tests", o.path, o.method);
    for (uint32_t s = 0; s < suites; ++s)
      fprintf(stderr, "%s '%s'", s ? "," : "", etrt_bundled_suite_method(b, s));
    fprintf(stderr, "%s)\n", suites ? "" : " no method");
    etrt_bundled_destroy(b);
    return 2;
  }
  unsigned passed = 0, failed = 0;
  for (uint32_t s = 0; s < suites; ++s) {
    const char *name = etrt_bundled_suite_method(b, s);
    if (o.method != NULL && strcmp(name, o.method) != 0) continue;
    etrt_method *m = NULL;
    void *outputs[ETRT_TEST_MAX_OUTPUTS] = {NULL};
    if (etrt_method_create(etrt_bundled_program(b), name, &m) != ETRT_OK ||
        etrt_test_bind_outputs(etrt_bundled_program(b), name, m, outputs) != ETRT_OK) {
      fprintf(stderr, "etrt test: method '%s': %s\n", name, etrt_last_error());
      failed += etrt_bundled_case_count(b, s);
      etrt_method_destroy(m);
      for (uint32_t i = 0; i < ETRT_TEST_MAX_OUTPUTS; ++i) free(outputs[i]);
      continue;
    }
    for (uint32_t c = 0; c < etrt_bundled_case_count(b, s); ++c) {
      char reason[512] = "";
      double worst = 0.0;
      int ok = etrt_test_case(b, s, c, m, &o, &worst, reason, sizeof reason);
      printf("method %s, case %u: %s, worst error %.3g%s%s\n", name, c, ok ? "passed" : "failed",
             worst, ok ? "" : ": ", ok ? "" : reason);
      if (ok)
        ++passed;
      else
        ++failed;
    }
    etrt_method_destroy(m);
    for (uint32_t i = 0; i < ETRT_TEST_MAX_OUTPUTS; ++i) free(outputs[i]);
  }
  printf("%u passed, %u failed\n", passed, failed);
  etrt_bundled_destroy(b);
  if (fflush(stdout) != 0) return 1;
  return failed ? 1 : 0;
}
