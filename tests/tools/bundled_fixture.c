/* Writes the fixtures of the bundled-program and method-by-name tests: DIR/two.pte
 * (methods forward and double), DIR/two.bpte (three passing cases),
 * DIR/two_wrong.bpte (forward's second case expects a wrong value) and DIR/many.pte
 * (30 methods, method_00 to method_29). Used by
 * tests/python/test_bundled_cli.py and to make the fuzz seed corpus. */
#include <stdio.h>
#include <stdlib.h>

#include "base/file.h"
#include "bundled_testing.h"

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

int main(int argc, char **argv) {
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
