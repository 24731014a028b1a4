/* libFuzzer target for the .pte reader: whatever the bytes, parsing either refuses
 * or yields a model that the writer writes back and the reader reads again into
 * an equal model. */
#include <stdlib.h>
#include <string.h>

#include "../unit/pte_testing.h"
#include "pte/pte.h"
#include "pte/pte_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The reader expects the alignment a mapped file or malloc gives. */
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  if (size) memcpy(copy, data, size);
  etrt_pte_program *program = NULL;
  if (etrt_pte_parse(copy, size, &program) == ETRT_OK) {
    char *json = NULL;
    size_t json_size = 0;
    if (etrt_pte_json(program, &json, &json_size) != ETRT_OK) abort();
    free(json);
    uint8_t *out = NULL;
    size_t out_size = 0;
    if (etrt_pte_write(program, &out, &out_size) != ETRT_OK) abort();
    etrt_pte_program *again = NULL;
    if (etrt_pte_parse(out, out_size, &again) != ETRT_OK) abort();
    if (!pte_program_eq(program, again)) abort();
    etrt_pte_program_free(again);
    free(out);
    etrt_pte_program_free(program);
  }
  free(copy);
  return 0;
}
