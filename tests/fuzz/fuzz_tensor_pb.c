/* .pb tensor files on arbitrary bytes; what reads must also write back and read again
 * to the same tensor. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builder/tensor_pb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  etrt_tensor_pb t;
  if (etrt_tensor_pb_read(data, size, "fuzz.pb", &t) != ETRT_OK) return 0;
  etrt_tensor_view view = {.data = t.data, .dtype = t.dtype, .rank = t.rank};
  memcpy(view.sizes, t.sizes, sizeof view.sizes);
  uint8_t *bytes;
  size_t n;
  if (etrt_tensor_pb_encode(t.name, &view, &bytes, &n) != ETRT_OK) __builtin_trap();
  etrt_tensor_pb back;
  if (etrt_tensor_pb_read(bytes, n, "again.pb", &back) != ETRT_OK) __builtin_trap();
  /* The name may hold a NUL byte, which the C string ends early: compare up to it. */
  if (back.dtype != t.dtype || back.rank != t.rank || back.nbytes != t.nbytes ||
      memcmp(back.sizes, t.sizes, sizeof t.sizes) != 0 || strcmp(back.name, t.name) != 0 ||
      memcmp(back.data, t.data, t.nbytes) != 0) {
    __builtin_trap();
  }
  etrt_tensor_pb_release(&back);
  free(bytes);
  etrt_tensor_pb_release(&t);
  return 0;
}
