/* libFuzzer target for the .bpte reader: parse and touch every tensor's bytes; a
 * bundle that parses is also loaded through the public API (program and suites). */
#include <stdlib.h>
#include <string.h>

#include "etrt/bundled.h"
#include "pte/bpte.h"

static void touch(etrt_pte_bytes b) {
  if (b.size) {
    volatile uint8_t x = b.data[0];
    x = b.data[b.size - 1];
    (void)x;
  }
}

static void touch_values(const etrt_bpte_value *v, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (v[i].kind == ETRT_BPTE_VALUE_TENSOR) touch(v[i].tensor.data);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  etrt_bpte_file *file = NULL;
  if (etrt_bpte_parse(copy, size, &file) == ETRT_OK) {
    for (size_t s = 0; s < file->suites_count; ++s) {
      const etrt_bpte_suite *suite = &file->suites[s];
      for (size_t c = 0; c < suite->cases_count; ++c) {
        touch_values(suite->cases[c].inputs, suite->cases[c].inputs_count);
        touch_values(suite->cases[c].expected_outputs, suite->cases[c].expected_outputs_count);
      }
    }
    touch(file->program);
    etrt_bpte_file_free(file);
    etrt_bundled *bundled = NULL;
    if (etrt_bundled_load_memory(copy, size, NULL, &bundled) == ETRT_OK) {
      for (uint32_t s = 0; s < etrt_bundled_suite_count(bundled); ++s) {
        if (etrt_bundled_suite_method(bundled, s) == NULL) abort();
      }
      etrt_bundled_destroy(bundled);
    }
  }
  free(copy);
  return 0;
}
