/* .pb tensor, sequence and optional files on arbitrary bytes; what reads must also
 * write back and read again to the same tensors. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builder/tensor_pb.h"
#include "builder/value_pb.h"

static etrt_tensor_view fuzz_view(const etrt_tensor_pb *t) {
  etrt_tensor_view view = {.data = t->data, .dtype = t->dtype, .rank = t->rank};
  memcpy(view.sizes, t->sizes, sizeof view.sizes);
  return view;
}

static int fuzz_same(const etrt_tensor_pb *a, const etrt_tensor_pb *b) {
  return a->dtype == b->dtype && a->rank == b->rank && a->nbytes == b->nbytes &&
         memcmp(a->sizes, b->sizes, sizeof a->sizes) == 0 &&
         memcmp(a->data, b->data, a->nbytes) == 0;
}

static void fuzz_tensor(const uint8_t *data, size_t size) {
  etrt_tensor_pb t;
  if (etrt_tensor_pb_read(data, size, "fuzz.pb", &t) != ETRT_OK) return;
  etrt_tensor_view view = fuzz_view(&t);
  uint8_t *bytes;
  size_t n;
  if (etrt_tensor_pb_encode(t.name, &view, &bytes, &n) != ETRT_OK) __builtin_trap();
  etrt_tensor_pb back;
  if (etrt_tensor_pb_read(bytes, n, "again.pb", &back) != ETRT_OK) __builtin_trap();
  /* The name may hold a NUL byte, which the C string ends early: compare up to it. */
  if (!fuzz_same(&back, &t) || strcmp(back.name, t.name) != 0) __builtin_trap();
  etrt_tensor_pb_release(&back);
  free(bytes);
  etrt_tensor_pb_release(&t);
}

/* Whatever value the bytes hold: its tensors written as a SequenceProto read back as
 * the same tensors. */
static void fuzz_value(const uint8_t *data, size_t size) {
  etrt_value_pb v;
  if (etrt_value_pb_read(data, size, "fuzz.pb", &v) != ETRT_OK) return;
  if (v.count > ETRT_VALUE_PB_MAX_TENSORS || (v.kind != ETRT_VALUE_PB_OPTIONAL && !v.present))
    __builtin_trap();
  etrt_tensor_view *views = calloc(v.count + 1u, sizeof *views);
  if (views == NULL) __builtin_trap();
  for (uint32_t i = 0; i < v.count; ++i) views[i] = fuzz_view(&v.tensors[i]);
  uint8_t *bytes;
  size_t n;
  if (etrt_value_pb_encode_sequence("s", views, v.count, &bytes, &n) != ETRT_OK) __builtin_trap();
  etrt_value_pb back;
  if (etrt_value_pb_read(bytes, n, "again.pb", &back) != ETRT_OK || back.count != v.count)
    __builtin_trap();
  for (uint32_t i = 0; i < v.count; ++i)
    if (!fuzz_same(&back.tensors[i], &v.tensors[i])) __builtin_trap();
  etrt_value_pb_release(&back);
  free(bytes);
  free(views);
  etrt_value_pb_release(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_tensor(data, size);
  fuzz_value(data, size);
  return 0;
}
