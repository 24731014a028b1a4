/* The .npy reader on arbitrary bytes: a file that parses has its data read in full,
 * is written back, and parses again to the same tensor. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  etrt_npy npy;
  if (etrt_npy_parse(data, size, &npy) != ETRT_OK) return 0;
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < npy.nbytes; ++i) sink ^= ((const uint8_t *)npy.view.data)[i];
  (void)sink;
  uint8_t *copy;
  size_t copy_size;
  if (etrt_npy_encode(&npy.view, &copy, &copy_size) == ETRT_OK) {
    etrt_npy again;
    if (etrt_npy_parse(copy, copy_size, &again) != ETRT_OK || again.nbytes != npy.nbytes ||
        again.view.dtype != npy.view.dtype || again.view.rank != npy.view.rank ||
        memcmp(again.view.data, npy.view.data, npy.nbytes) != 0)
      abort();
    etrt_npy_release(&again);
    free(copy);
  }
  etrt_npy_release(&npy);
  return 0;
}
