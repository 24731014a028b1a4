/* External data files (.ptd): written, read back, looked up by key, and refused
 * when malformed. */
#include <stdlib.h>
#include <string.h>

#include "pte/flatbuffers_reader.h"
#include "pte/ptd.h"
#include "test_util.h"

static const float weight[6] = {1, 2, 3, 4, 5, 6};
static const int32_t sizes[2] = {2, 3};
static const uint8_t order[2] = {0, 1};

static uint8_t *sample(size_t *size, bool duplicate, int32_t first_dim) {
  int32_t dims[2] = {first_dim, 3};
  etrt_ptd_blob blobs[3] = {
      {"linear.weight",
       weight,
       sizeof weight,
       0,
       true,
       {ETRT_DTYPE_FLOAT32, {dims, 2}, {order, 2}}},
      {"raw", "\x01\x02\x03", 3, 64, false, {0}},
      {"linear.bias", weight, 8, 0, true, {ETRT_DTYPE_FLOAT32, {sizes, 1}, {order, 1}}},
  };
  if (duplicate) blobs[2].key = "raw";
  uint8_t *out = NULL;
  CHECK_OK(etrt_ptd_write(blobs, 3, &out, size));
  return out;
}

static void test_round_trip(void) {
  size_t size;
  uint8_t *bytes = sample(&size, false, 2);
  if (bytes == NULL) return;
  CHECK(memcmp(bytes + 4, "FT01", 4) == 0 && memcmp(bytes + 8, "FH01", 4) == 0);
  etrt_ptd_file *f = NULL;
  CHECK_OK(etrt_ptd_parse(bytes, size, &f));
  if (f) {
    CHECK_EQ_INT(f->entries_count, 3);
    CHECK_EQ_INT(f->segments_count, 3);
    CHECK_EQ_INT(f->flatbuffer_offset, 48);
    CHECK_EQ_INT(f->segment_base_offset % 16, 0);
    CHECK_EQ_INT(f->segments[1].offset % 64, 0);
    const etrt_ptd_entry *e = NULL;
    CHECK_OK(etrt_ptd_find(f, "linear.weight", &e));
    if (e) {
      CHECK(e->has_layout);
      CHECK_EQ_INT(e->layout.scalar_type, ETRT_DTYPE_FLOAT32);
      CHECK_EQ_INT(e->layout.sizes.count, 2);
      CHECK_EQ_INT(e->data.size, sizeof weight);
      CHECK(memcmp(e->data.data, weight, sizeof weight) == 0);
      CHECK_EQ_INT((uintptr_t)e->data.data % 16, 0);
    }
    CHECK_OK(etrt_ptd_find(f, "raw", &e));
    if (e) CHECK(!e->has_layout && e->data.size == 3 && e->data.data[2] == 3);
    CHECK_OK(etrt_ptd_find(f, "linear.bias", &e));
    CHECK_FAILS(etrt_ptd_find(f, "linear", &e), ETRT_ERROR_NOT_FOUND, "'linear'");
    CHECK(e == NULL);
  }
  etrt_ptd_file_free(f);

  /* Deterministic. */
  size_t size2;
  uint8_t *again = sample(&size2, false, 2);
  CHECK(again && size2 == size && memcmp(again, bytes, size) == 0);
  free(again);
  free(bytes);
}

#define PTD_REFUSED(bytes, size, text)                                                    \
  do {                                                                                    \
    etrt_ptd_file *f_ = NULL;                                                             \
    CHECK_FAILS(etrt_ptd_parse((bytes), (size), &f_), ETRT_ERROR_INVALID_FORMAT, (text)); \
    CHECK(f_ == NULL);                                                                    \
  } while (0)

static void test_refusals(void) {
  size_t size;
  uint8_t *good = sample(&size, false, 2);
  if (good == NULL) return;
  uint8_t *b = malloc(size);

  PTD_REFUSED(good, 6, "not an ExecuTorch external data file");
  memcpy(b, good, size);
  memcpy(b + 4, "ET12", 4);
  PTD_REFUSED(b, size, "this is an ExecuTorch program");
  memcpy(b, good, size);
  b[8] = 'X';
  PTD_REFUSED(b, size, "header at byte offset 8");
  memcpy(b, good, size);
  uint32_t len = 8;
  memcpy(b + 12, &len, 4);
  PTD_REFUSED(b, size, "header length at byte offset 12");
  memcpy(b, good, size);
  uint64_t big = size;
  memcpy(b + 24, &big, 8);
  PTD_REFUSED(b, size, "flatbuffer_offset/flatbuffer_size at byte offsets 16/24");
  memcpy(b, good, size);
  memcpy(b + 40, &big, 8);
  PTD_REFUSED(b, size, "segment_base_offset/segment_data_size at byte offsets 32/40");
  uint64_t small = 8;
  memcpy(b, good, size);
  memcpy(b + 40, &small, 8);
  PTD_REFUSED(b, size, "segments[0]: DataSegment at byte offset");

  /* An entry pointing at a segment that does not exist. */
  memcpy(b, good, size);
  etrt_fb_reader r;
  etrt_fb_table root, entry;
  etrt_fb_reader_init(&r, b, size);
  CHECK_OK(etrt_fb_root(&r, "FlatTensor", &root));
  etrt_fb_vector v;
  CHECK_OK(etrt_fb_read_vector(&root, 2, "named_data", 4, 4, &v));
  CHECK_OK(etrt_fb_vector_table(&v, 1, "NamedData", &entry));
  uint32_t nine = 9;
  memcpy(b + etrt_fb_field_offset(&entry, 1), &nine, 4);
  PTD_REFUSED(b, size, "named_data[1]: NamedData.segment_index at byte offset");
  free(b);
  free(good);

  /* A layout larger than its data, and a key used twice. */
  uint8_t *bad = sample(&size, false, 3);
  if (bad) PTD_REFUSED(bad, size, "the tensor needs 36 bytes, its segment holds 24");
  free(bad);
  bad = sample(&size, true, 2);
  if (bad) PTD_REFUSED(bad, size, "key 'raw' appears more than once");
  free(bad);

  /* Bad arguments to the writer. */
  etrt_ptd_blob blob = {"k", NULL, 4, 0, false, {0}};
  uint8_t *out = NULL;
  CHECK_FAILS(etrt_ptd_write(&blob, 1, &out, &size), ETRT_ERROR_INVALID_ARGUMENT, "blob 0");
}

/* Single-byte changes and truncations: read or refused, never a crash. */
static void test_mutations(void) {
  size_t size;
  uint8_t *good = sample(&size, false, 2);
  if (good == NULL) return;
  size_t ok = 0, bad = 0;
  for (size_t n = 0; n <= size; ++n) {
    for (int v = -1; v < 3; ++v) {
      uint8_t *b = malloc(n ? n : 1);
      memcpy(b, good, n);
      if (v >= 0 && n > 0) b[(n * 7 + (size_t)v * 13) % n] ^= (uint8_t)(0x01 << (v * 3));
      etrt_ptd_file *f = NULL;
      if (etrt_ptd_parse(b, n, &f) == ETRT_OK) {
        ok++;
        for (size_t i = 0; i < f->entries_count; ++i) {
          const etrt_ptd_entry *e;
          (void)etrt_ptd_find(f, f->entries[i].key.data, &e);
        }
        etrt_ptd_file_free(f);
      } else {
        bad++;
      }
      free(b);
    }
  }
  CHECK(ok > 0 && bad > 0);
  free(good);
}

int main(void) {
  RUN_TEST(test_round_trip);
  RUN_TEST(test_refusals);
  RUN_TEST(test_mutations);
  return TEST_EXIT();
}
