/* Writes the fixtures of the bundled-program and method-by-name tests: DIR/two.pte
 * (methods forward and double), DIR/two.bpte (three passing cases),
 * DIR/two_wrong.bpte (forward's second case expects a wrong value) and DIR/many.pte
 * (30 methods, method_00 to method_29). Used by
 * tests/python/test_bundled_cli.py and to make the fuzz seed corpus.
 *
 * etrt_bundled_fixture --wrap IN.pte OUT.bpte bundles any program whose inputs are
 * float32 tensors: one case per method, inputs at their declared sizes, expected
 * outputs from the CPU executor (a GPU run checked against the CPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "bundled_testing.h"
#include "etrt/method.h"
#include "etrt/program.h"

static int write_bundle(const char *dir, const char *name, const uint8_t *pte, size_t size,
                        float wrong) {
  bt_bundle_data d;
  etrt_bpte_file file;
  bt_bundle_fill(&d, &file, pte, size, wrong);
  uint8_t *bytes = NULL;
  size_t n = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  etrt_status s = etrt_bpte_write(&file, &bytes, &n);
  if (s == ETRT_OK) s = etrt_file_write_atomic(path, bytes, n);
  free(bytes);
  if (s != ETRT_OK) fprintf(stderr, "bundled_fixture: %s: %s\n", path, etrt_last_error());
  return s == ETRT_OK;
}

#define WRAP_MAX 64

static int wrap(const char *in, const char *out) {
  etrt_program_options options = {.force_cpu = 1};
  etrt_program *program = NULL;
  if (etrt_program_load_file(in, &options, &program) != ETRT_OK) return 0;
  uint32_t methods = etrt_program_method_count(program);
  etrt_bpte_suite *suites = calloc(methods ? methods : 1, sizeof *suites);
  etrt_bpte_case *cases = calloc(methods ? methods : 1, sizeof *cases);
  etrt_bpte_value *values = calloc((size_t)(methods ? methods : 1) * 2 * WRAP_MAX, sizeof *values);
  int32_t *sizes = calloc((size_t)(methods ? methods : 1) * 2 * WRAP_MAX * ETRT_MAX_RANK, 4);
  void **buffers = calloc((size_t)(methods ? methods : 1) * 2 * WRAP_MAX, sizeof *buffers);
  size_t used = 0;
  void *bound[WRAP_MAX] = {NULL};
  int ok = suites && cases && values && sizes && buffers;
  for (uint32_t m = 0; ok && m < methods; ++m) {
    const char *name = etrt_program_method_name(program, m);
    etrt_method *method = NULL;
    ok = etrt_method_create(program, name, &method) == ETRT_OK;
    uint32_t ni = ok ? etrt_method_input_count(method) : 0;
    uint32_t no = ok ? etrt_method_output_count(method) : 0;
    ok = ok && ni <= WRAP_MAX && no <= WRAP_MAX;
    for (uint32_t i = 0; ok && i < no; ++i) { /* outputs left to the caller (--io-on-device) */
      etrt_tensor_info info;
      ok = etrt_program_output_info(program, name, i, &info) == ETRT_OK;
      if (!ok || !info.is_tensor || info.device.type != ETRT_DEVICE_CUDA) continue;
      etrt_tensor_view v = {NULL, info.dtype, info.rank, {0}};
      memcpy(v.sizes, info.sizes, sizeof v.sizes);
      size_t n = (size_t)etrt_tensor_view_numel(&v) * etrt_dtype_size(v.dtype);
      bound[i] = malloc(n ? n : 1);
      ok = bound[i] != NULL && etrt_method_set_output(method, i, bound[i], n ? n : 1) == ETRT_OK;
    }
    etrt_bpte_value *vin = &values[used], *vout = &values[used + ni];
    for (uint32_t i = 0; ok && i < ni + no; ++i) {
      etrt_tensor_view v;
      etrt_tensor_info info;
      if (i < ni) {
        ok = etrt_program_input_info(program, name, i, &info) == ETRT_OK &&
             info.dtype == ETRT_DTYPE_FLOAT32 && info.is_tensor;
        if (!ok) {
          fprintf(stderr, "method '%s', input %u: not a float32 tensor\n", name, i);
          break;
        }
        v = (etrt_tensor_view){NULL, info.dtype, info.rank, {0}};
        memcpy(v.sizes, info.sizes, sizeof v.sizes);
      } else {
        ok = etrt_method_execute(method) == ETRT_OK || i > ni;
        ok = ok && etrt_method_get_output(method, i - ni, &v) == ETRT_OK;
        if (!ok) break;
      }
      size_t n = (size_t)etrt_tensor_view_numel(&v) * etrt_dtype_size(v.dtype);
      uint8_t *data = buffers[used + i] = malloc(n ? n : 1);
      int32_t *dims = &sizes[(used + i) * ETRT_MAX_RANK];
      ok = data != NULL;
      if (!ok) break;
      if (i < ni) {
        for (size_t k = 0; k < n / 4; ++k) ((float *)data)[k] = (float)((int)(k % 7) - 3) * 0.25f;
        v.data = data;
        ok = etrt_method_set_input(method, i, &v) == ETRT_OK;
      } else {
        memcpy(data, v.data, n);
      }
      for (int32_t d = 0; d < v.rank; ++d) dims[d] = (int32_t)v.sizes[d];
      values[used + i] =
          (etrt_bpte_value){.kind = ETRT_BPTE_VALUE_TENSOR,
                            .tensor = {v.dtype, {dims, (size_t)v.rank}, {NULL, 0}, {data, n}}};
    }
    if (ok) {
      cases[m] = (etrt_bpte_case){vin, ni, vout, no};
      suites[m] = (etrt_bpte_suite){{name, strlen(name)}, &cases[m], 1};
      used += ni + no;
    }
    etrt_method_destroy(method);
    for (uint32_t i = 0; i < WRAP_MAX; ++i) {
      free(bound[i]);
      bound[i] = NULL;
    }
  }
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (ok) {
    etrt_file_map map;
    ok = etrt_file_map_open(in, &map) == ETRT_OK;
    etrt_bpte_file file = {.suites = suites, .suites_count = methods};
    file.program.data = map.data;
    file.program.size = map.size;
    ok = ok && etrt_bpte_write(&file, &bytes, &size) == ETRT_OK &&
         etrt_file_write_atomic(out, bytes, size) == ETRT_OK;
    etrt_file_map_close(&map);
  }
  if (!ok) fprintf(stderr, "bundled_fixture --wrap: %s: %s\n", in, etrt_last_error());
  free(bytes);
  for (size_t i = 0; buffers != NULL && i < (size_t)methods * 2 * WRAP_MAX; ++i) free(buffers[i]);
  free(buffers);
  free(sizes);
  free(values);
  free(cases);
  free(suites);
  etrt_program_destroy(program);
  return ok;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--wrap") == 0) return wrap(argv[2], argv[3]) ? 0 : 1;
  if (argc != 2) {
    fprintf(stderr, "usage: etrt_bundled_fixture DIR\n");
    return 2;
  }
  size_t size = 0;
  uint8_t *pte = bt_two_method_pte(&size);
  char path[4096];
  snprintf(path, sizeof path, "%s/two.pte", argv[1]);
  int ok = pte != NULL && etrt_file_write_atomic(path, pte, size) == ETRT_OK &&
           write_bundle(argv[1], "two.bpte", pte, size, 0.0f) &&
           write_bundle(argv[1], "two_wrong.bpte", pte, size, 0.5f);
  free(pte);
  pte = ok ? bt_many_method_pte(30, &size) : NULL;
  snprintf(path, sizeof path, "%s/many.pte", argv[1]);
  ok = pte != NULL && etrt_file_write_atomic(path, pte, size) == ETRT_OK;
  if (!ok) fprintf(stderr, "bundled_fixture: %s\n", etrt_last_error());
  free(pte);
  return ok ? 0 : 1;
}
