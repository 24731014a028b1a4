/* libFuzzer target for the .ptd reader: parse, then look every key up. */
#include <stdlib.h>
#include <string.h>

#include "pte/ptd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  etrt_ptd_file *file = NULL;
  if (etrt_ptd_parse(copy, size, &file) == ETRT_OK) {
    for (size_t i = 0; i < file->entries_count; ++i) {
      const etrt_ptd_entry *e = NULL;
      const etrt_ptd_entry *want = &file->entries[i];
      /* A key without embedded NULs finds its own entry. */
      if (strlen(want->key.data) == want->key.size &&
          (etrt_ptd_find(file, want->key.data, &e) != ETRT_OK || e != want)) {
        abort();
      }
      /* Touch the first and last byte, so the sanitizer checks the bounds. */
      if (want->data.size) {
        volatile uint8_t x = want->data.data[0];
        x = want->data.data[want->data.size - 1];
        (void)x;
      }
    }
    etrt_ptd_file_free(file);
  }
  free(copy);
  return 0;
}
