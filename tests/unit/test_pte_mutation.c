/* Every single-byte change (several values per position) and every truncation of
 * the fixture programs, and of a writer-made program with segments, is either read
 * or refused: never a crash or a sanitizer report. What is read is also rendered as
 * JSON and written back, and the rewrite must read again. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "pte/pte.h"
#include "pte/pte_json.h"
#include "pte_testing.h"
#include "test_util.h"

static size_t accepted, refused;

static void try_parse(const uint8_t *data, size_t size) {
  etrt_pte_program *p = NULL;
  if (etrt_pte_parse(data, size, &p) != ETRT_OK) {
    CHECK(p == NULL);
    CHECK(etrt_last_error()[0] != 0);
    refused++;
    return;
  }
  accepted++;
  char *json = NULL;
  size_t json_size = 0;
  CHECK_OK(etrt_pte_json(p, &json, &json_size));
  free(json);
  uint8_t *out = NULL;
  size_t out_size = 0;
  CHECK_OK(etrt_pte_write(p, &out, &out_size));
  etrt_pte_program *again = NULL;
  if (out) CHECK_OK(etrt_pte_parse(out, out_size, &again));
  if (again) CHECK(pte_program_eq(p, again));
  etrt_pte_program_free(again);
  free(out);
  etrt_pte_program_free(p);
}

static void mutate_all(const char *what, const uint8_t *good, size_t size) {
  size_t before_ok = accepted, before_bad = refused;
  uint8_t *buf = malloc(size);
  for (size_t i = 0; i < size; ++i) {
    const uint8_t values[] = {
        0x00, 0xff, (uint8_t)(good[i] ^ 0x01), (uint8_t)(good[i] ^ 0x80), (uint8_t)(good[i] + 4),
        0x7f};
    for (size_t k = 0; k < sizeof values; ++k) {
      if (values[k] == good[i]) continue;
      memcpy(buf, good, size);
      buf[i] = values[k];
      try_parse(buf, size);
    }
  }
  /* Truncations, each in a buffer of exactly that size so that the sanitizer sees
   * any read past the end. */
  for (size_t n = 0; n < size; ++n) {
    uint8_t *cut = malloc(n ? n : 1);
    memcpy(cut, good, n);
    try_parse(cut, n);
    free(cut);
  }
  free(buf);
  printf("%s: %zu mutants read, %zu refused\n", what, accepted - before_ok, refused - before_bad);
}

static void test_fixtures(void) {
  const char *names[] = {"pte/add.pte", "pte/linear_inline_constants.pte"};
  for (size_t i = 0; i < 2; ++i) {
    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_OK(etrt_file_read_all(etrt_test_fixture(names[i]), &data, &size));
    if (data) mutate_all(names[i], data, size);
    free(data);
  }
}

static void test_writer_output(void) {
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(pte_write_sample(NULL, &bytes, &size));
  if (bytes) mutate_all("sample program", bytes, size);
  free(bytes);
}

int main(void) {
  RUN_TEST(test_fixtures);
  RUN_TEST(test_writer_output);
  /* The mutants must exercise both outcomes, or the test proves nothing. */
  CHECK(accepted > 100);
  CHECK(refused > 1000);
  return TEST_EXIT();
}
