#include <stdint.h>

#include "builder/protobuf.h"
#include "test_util.h"

static etrt_status read_varint(const uint8_t *bytes, size_t size, uint64_t *value, size_t *used) {
  size_t pos = 0;
  etrt_status s = etrt_pb_read_varint(bytes, &pos, size, value);
  *used = pos;
  return s;
}

static void test_varints(void) {
  uint64_t v;
  size_t used;
  CHECK_OK(read_varint((const uint8_t[]){0x00}, 1, &v, &used));
  CHECK_EQ_INT(v, 0);
  CHECK_EQ_INT(used, 1);
  CHECK_OK(read_varint((const uint8_t[]){0xac, 0x02}, 2, &v, &used));
  CHECK_EQ_INT(v, 300);
  CHECK_EQ_INT(used, 2);
  /* UINT64_MAX: nine 0xff and a final 0x01. */
  const uint8_t max[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  CHECK_OK(read_varint(max, 10, &v, &used));
  CHECK(v == UINT64_MAX);
  CHECK_EQ_INT(used, 10);
  /* A redundant (non-minimal) encoding is still a valid varint. */
  CHECK_OK(read_varint((const uint8_t[]){0x81, 0x80, 0x00}, 3, &v, &used));
  CHECK_EQ_INT(v, 1);
}

static void test_varint_refusals(void) {
  uint64_t v;
  size_t used;
  const uint8_t overflow[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  CHECK_FAILS(read_varint(overflow, 10, &v, &used), ETRT_ERROR_INVALID_FORMAT, "overflows 64 bits");
  const uint8_t eleven[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  CHECK_FAILS(read_varint(eleven, 11, &v, &used), ETRT_ERROR_INVALID_FORMAT,
              "longer than 10 bytes");
  const uint8_t long_zero[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
  CHECK_FAILS(read_varint(long_zero, 11, &v, &used), ETRT_ERROR_INVALID_FORMAT,
              "longer than 10 bytes");
  CHECK_FAILS(read_varint((const uint8_t[]){0x80, 0x80}, 2, &v, &used), ETRT_ERROR_INVALID_FORMAT,
              "varint truncated at byte 0");
  CHECK_FAILS(read_varint((const uint8_t[]){0x00}, 0, &v, &used), ETRT_ERROR_INVALID_FORMAT,
              "truncated");
}

/* Every wire type in one message, read back field by field. */
static void test_fields_of_every_wire_type(void) {
  etrt_pb_writer w;
  etrt_pb_writer_init(&w);
  etrt_pb_write_varint_field(&w, 1, 150);
  etrt_pb_write_fixed64_field(&w, 2, 0x0102030405060708ull);
  etrt_pb_write_bytes_field(&w, 3, "abc", 3);
  etrt_pb_write_fixed32_field(&w, 4, 0x3f800000u); /* 1.0f */
  etrt_pb_write_varint_field(&w, ETRT_PB_MAX_FIELD_NUMBER, (uint64_t)(int64_t)-2);
  uint8_t *bytes;
  size_t size;
  CHECK_OK(etrt_pb_writer_finish(&w, &bytes, &size));
  CHECK_EQ_INT(bytes[0], 0x08);
  CHECK_EQ_INT(bytes[1], 0x96);
  CHECK_EQ_INT(bytes[2], 0x01);

  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, bytes, size);
  etrt_pb_field f;
  int more;
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  CHECK(more && f.number == 1 && f.wire == ETRT_PB_WIRE_VARINT && f.value == 150);
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  CHECK(more && f.number == 2 && f.wire == ETRT_PB_WIRE_FIXED64 &&
        f.value == 0x0102030405060708ull);
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  CHECK(more && f.number == 3 && f.wire == ETRT_PB_WIRE_LEN && f.size == 3);
  CHECK(memcmp(f.data, "abc", 3) == 0);
  CHECK_EQ_INT(f.data_offset, f.offset + 2);
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  float fl = 0;
  CHECK_OK(etrt_pb_field_float(&f, &fl));
  CHECK(fl == 1.0f);
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  CHECK(more && f.number == ETRT_PB_MAX_FIELD_NUMBER);
  int64_t i64;
  int32_t i32;
  CHECK_OK(etrt_pb_field_int64(&f, &i64));
  CHECK_EQ_INT(i64, -2);
  CHECK_OK(etrt_pb_field_int32(&f, &i32));
  CHECK_EQ_INT(i32, -2);
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  CHECK(!more);
  /* Rewind gives the same first field again. */
  etrt_pb_cursor_rewind(&c);
  CHECK_OK(etrt_pb_cursor_next(&c, &f, &more));
  CHECK(more && f.number == 1);
  free(bytes);
}

static etrt_status first_field(const uint8_t *bytes, size_t size, etrt_pb_field *f) {
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, bytes, size);
  int more;
  return etrt_pb_cursor_next(&c, f, &more);
}

static void test_field_refusals(void) {
  etrt_pb_field f;
  /* Groups (wire types 3 and 4) are deprecated and refused by name. */
  CHECK_FAILS(first_field((const uint8_t[]){0x0b, 0x0c}, 2, &f), ETRT_ERROR_INVALID_FORMAT,
              "deprecated group wire type 3");
  CHECK_FAILS(first_field((const uint8_t[]){0x0c}, 1, &f), ETRT_ERROR_INVALID_FORMAT,
              "deprecated group wire type 4");
  CHECK_FAILS(first_field((const uint8_t[]){0x0e}, 1, &f), ETRT_ERROR_INVALID_FORMAT,
              "invalid wire type 6");
  CHECK_FAILS(first_field((const uint8_t[]){0x0f}, 1, &f), ETRT_ERROR_INVALID_FORMAT,
              "invalid wire type 7");
  CHECK_FAILS(first_field((const uint8_t[]){0x00}, 1, &f), ETRT_ERROR_INVALID_FORMAT,
              "field number 0");
  /* A tag above 32 bits. */
  CHECK_FAILS(first_field((const uint8_t[]){0x80, 0x80, 0x80, 0x80, 0x10, 0x00}, 6, &f),
              ETRT_ERROR_INVALID_FORMAT, "out of range");
  /* Length beyond the message, and truncated fixed-size values. */
  CHECK_FAILS(first_field((const uint8_t[]){0x0a, 0x05, 'a', 'b'}, 4, &f),
              ETRT_ERROR_INVALID_FORMAT, "length 5 exceeds the 2 bytes left at byte 1");
  CHECK_FAILS(first_field((const uint8_t[]){0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0x01},
                          11, &f),
              ETRT_ERROR_INVALID_FORMAT, "exceeds");
  CHECK_FAILS(first_field((const uint8_t[]){0x0d, 0x01, 0x02}, 3, &f), ETRT_ERROR_INVALID_FORMAT,
              "fixed32 value truncated at byte 1");
  CHECK_FAILS(first_field((const uint8_t[]){0x09, 0x01, 0x02, 3, 4, 5, 6, 7}, 8, &f),
              ETRT_ERROR_INVALID_FORMAT, "fixed64 value truncated");
  CHECK_FAILS(first_field((const uint8_t[]){0x08}, 1, &f), ETRT_ERROR_INVALID_FORMAT,
              "varint truncated at byte 1");
  /* Wrong wire type for a declared scalar, and int32 range. */
  static const uint8_t empty_len[] = {0x0a, 0x00};
  static const uint8_t big[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x08};
  CHECK_OK(first_field(empty_len, sizeof empty_len, &f));
  int64_t i64;
  CHECK_FAILS(etrt_pb_field_int64(&f, &i64), ETRT_ERROR_INVALID_FORMAT,
              "wire type length-delimited, expected varint");
  CHECK_OK(first_field(big, sizeof big, &f));
  int32_t i32;
  CHECK_FAILS(etrt_pb_field_int32(&f, &i32), ETRT_ERROR_INVALID_FORMAT, "out of range for int32");
}

/* An unknown field of every wire type is skipped, so the known one after it reads. */
static void test_unknown_fields_skipped(void) {
  etrt_pb_writer w, inner;
  etrt_pb_writer_init(&w);
  etrt_pb_writer_init(&inner);
  etrt_pb_write_varint_field(&inner, 1, 7);
  etrt_pb_write_varint_field(&w, 100, 1ull << 62);
  etrt_pb_write_fixed64_field(&w, 101, 5);
  etrt_pb_write_message_field(&w, 102, &inner);
  etrt_pb_write_fixed32_field(&w, 103, 5);
  etrt_pb_write_bytes_field(&w, 104, "", 0);
  etrt_pb_write_varint_field(&w, 1, 42);
  uint8_t *bytes;
  size_t size;
  CHECK_OK(etrt_pb_writer_finish(&w, &bytes, &size));
  etrt_pb_writer_release(&inner);
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, bytes, size);
  etrt_pb_field f;
  int more, seen = 0, count = 0;
  etrt_status s;
  while ((s = etrt_pb_cursor_next(&c, &f, &more)) == ETRT_OK && more) {
    ++count;
    if (f.number == 1) seen = (int)f.value;
  }
  CHECK_OK(s);
  CHECK_EQ_INT(count, 6);
  CHECK_EQ_INT(seen, 42);
  free(bytes);
}

static void test_nesting_depth(void) {
  /* 70 messages, each the only field of its parent. */
  etrt_pb_writer levels[71];
  etrt_pb_writer_init(&levels[0]);
  etrt_pb_write_varint_field(&levels[0], 1, 1);
  for (int i = 1; i <= 70; ++i) {
    etrt_pb_writer_init(&levels[i]);
    etrt_pb_write_message_field(&levels[i], 2, &levels[i - 1]);
    etrt_pb_writer_release(&levels[i - 1]);
  }
  uint8_t *bytes;
  size_t size;
  CHECK_OK(etrt_pb_writer_finish(&levels[70], &bytes, &size));
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, bytes, size);
  etrt_status s = ETRT_OK;
  int depth = 0;
  for (;;) {
    etrt_pb_field f;
    int more;
    s = etrt_pb_cursor_next(&c, &f, &more);
    if (s != ETRT_OK || !more || f.wire != ETRT_PB_WIRE_LEN) break;
    etrt_pb_cursor child;
    s = etrt_pb_cursor_sub(&c, &f, &child);
    if (s != ETRT_OK) break;
    c = child;
    ++depth;
  }
  CHECK_EQ_INT(s, ETRT_ERROR_INVALID_FORMAT);
  CHECK_STR_CONTAINS(etrt_last_error(), "nested more than 64 deep");
  CHECK_EQ_INT(depth, ETRT_PB_MAX_DEPTH);
  free(bytes);
  /* A sub-cursor needs a length-delimited field. */
  etrt_pb_field scalar = {.number = 3, .wire = ETRT_PB_WIRE_VARINT};
  etrt_pb_cursor root, child;
  etrt_pb_cursor_init(&root, (const uint8_t *)"", 0);
  CHECK_FAILS(etrt_pb_cursor_sub(&root, &scalar, &child), ETRT_ERROR_INVALID_FORMAT,
              "expected length-delimited");
}

static size_t read_repeated(const etrt_pb_field *f, etrt_pb_scalar kind, uint64_t *out,
                            size_t cap) {
  etrt_pb_repeated it;
  size_t count = 0, n = 0;
  if (etrt_pb_repeated_begin(f, kind, &it, &count) != ETRT_OK) return (size_t)-1;
  uint64_t v;
  while (n < cap && etrt_pb_repeated_next(&it, &v)) out[n++] = v;
  return n == count ? n : (size_t)-2;
}

/* The same values packed and unpacked read the same. */
static void test_packed_and_unpacked(void) {
  etrt_pb_writer w, packed;
  etrt_pb_writer_init(&w);
  etrt_pb_writer_init(&packed);
  etrt_pb_write_varint(&packed, 3);
  etrt_pb_write_varint(&packed, 270);
  etrt_pb_write_varint(&packed, 86942);
  etrt_pb_write_message_field(&w, 4, &packed); /* packed: one field */
  etrt_pb_write_varint_field(&w, 4, 3);        /* unpacked: one field per value */
  etrt_pb_write_varint_field(&w, 4, 270);
  etrt_pb_write_varint_field(&w, 4, 86942);
  uint8_t *bytes;
  size_t size;
  CHECK_OK(etrt_pb_writer_finish(&w, &bytes, &size));
  etrt_pb_writer_release(&packed);
  CHECK_EQ_INT(bytes[0], 0x22); /* 4 << 3 | 2, as in the protobuf documentation */
  CHECK_EQ_INT(bytes[1], 0x06);
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, bytes, size);
  uint64_t all[8];
  size_t total = 0;
  etrt_pb_field f;
  int more;
  while (etrt_pb_cursor_next(&c, &f, &more) == ETRT_OK && more) {
    size_t n = read_repeated(&f, ETRT_PB_SCALAR_VARINT, all + total, 8 - total);
    CHECK(n <= 3);
    if (n <= 3) total += n;
  }
  CHECK_EQ_INT(total, 6);
  for (int i = 0; i < 3; ++i) CHECK(all[i] == all[i + 3]);
  CHECK_EQ_INT(all[2], 86942);
  free(bytes);

  /* Packed fixed32 and fixed64. */
  const uint8_t floats[] = {0x0a, 0x08, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
  CHECK_OK(first_field(floats, sizeof floats, &f));
  CHECK_EQ_INT(read_repeated(&f, ETRT_PB_SCALAR_FIXED32, all, 8), 2);
  CHECK_EQ_INT(all[0], 0x3f800000);
  CHECK_EQ_INT(all[1], 0x40000000);
  const uint8_t doubles[] = {0x0a, 0x08, 1, 2, 3, 4, 5, 6, 7, 8};
  CHECK_OK(first_field(doubles, sizeof doubles, &f));
  CHECK_EQ_INT(read_repeated(&f, ETRT_PB_SCALAR_FIXED64, all, 8), 1);
  CHECK(all[0] == 0x0807060504030201ull);
}

static void test_repeated_refusals(void) {
  etrt_pb_field f;
  etrt_pb_repeated it;
  size_t count;
  /* Packed fixed32 whose size is not a multiple of 4. */
  static const uint8_t odd[] = {0x0a, 0x03, 1, 2, 3};
  static const uint8_t cut[] = {0x0a, 0x02, 0x01, 0x80};
  static const uint8_t fixed[] = {0x09, 1, 2, 3, 4, 5, 6, 7, 8};
  /* The field views point into these arrays, so they must outlive the checks. */
  CHECK_OK(first_field(odd, sizeof odd, &f));
  CHECK_FAILS(etrt_pb_repeated_begin(&f, ETRT_PB_SCALAR_FIXED32, &it, &count),
              ETRT_ERROR_INVALID_FORMAT, "not a whole number of 4-byte values");
  /* Packed varints whose last one is cut. */
  CHECK_OK(first_field(cut, sizeof cut, &f));
  CHECK_FAILS(etrt_pb_repeated_begin(&f, ETRT_PB_SCALAR_VARINT, &it, &count),
              ETRT_ERROR_INVALID_FORMAT, "varint truncated at byte 3");
  /* A fixed64 field where varints are expected. */
  CHECK_OK(first_field(fixed, sizeof fixed, &f));
  CHECK_FAILS(etrt_pb_repeated_begin(&f, ETRT_PB_SCALAR_VARINT, &it, &count),
              ETRT_ERROR_INVALID_FORMAT, "expected varint or packed");
}

static void test_writer_empty_message(void) {
  etrt_pb_writer w;
  etrt_pb_writer_init(&w);
  uint8_t *bytes;
  size_t size;
  CHECK_OK(etrt_pb_writer_finish(&w, &bytes, &size));
  CHECK(bytes != NULL);
  CHECK_EQ_INT(size, 0);
  free(bytes);
  /* A failed nested message fails the outer one. */
  etrt_pb_writer bad = {.failed = 1};
  etrt_pb_writer_init(&w);
  etrt_pb_write_message_field(&w, 1, &bad);
  CHECK_FAILS(etrt_pb_writer_finish(&w, &bytes, &size), ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
}

int main(void) {
  RUN_TEST(test_varints);
  RUN_TEST(test_varint_refusals);
  RUN_TEST(test_fields_of_every_wire_type);
  RUN_TEST(test_field_refusals);
  RUN_TEST(test_unknown_fields_skipped);
  RUN_TEST(test_nesting_depth);
  RUN_TEST(test_packed_and_unpacked);
  RUN_TEST(test_repeated_refusals);
  RUN_TEST(test_writer_empty_message);
  return TEST_EXIT();
}
