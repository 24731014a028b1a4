/* The FlatBuffers layer on its own: builder output read back, shared vtables, and
 * every refusal of the reader on hand-made buffers. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "pte/flatbuffers_builder.h"
#include "pte/flatbuffers_reader.h"
#include "test_util.h"

/* A schema for the test:
 *   table Inner { a: int; name: string; }
 *   union U { Inner }
 *   table Root { u8: ubyte = 7; i32: int; u64: ulong; f64: double; flag: bool;
 *                name: string; bytes: [ubyte]; longs: [long]; inners: [Inner];
 *                names: [string]; u_type/u: U; child: Inner; } */
enum {
  R_U8,
  R_I32,
  R_U64,
  R_F64,
  R_FLAG,
  R_NAME,
  R_BYTES,
  R_LONGS,
  R_INNERS,
  R_NAMES,
  R_UTYPE,
  R_U,
  R_CHILD
};

static const char *const union_names[] = {"NONE", "Inner"};

static size_t build_inner(etrt_fb_builder *b, int32_t a, const char *name) {
  etrt_fb_table_begin(b);
  etrt_fb_add_i32(b, 0, a, 0);
  etrt_fb_add_offset(b, 1);
  size_t pos = etrt_fb_table_end(b);
  etrt_fb_patch(b, etrt_fb_slot_pos(b, 1), etrt_fb_add_string(b, name, strlen(name)));
  return pos;
}

/* Builds the sample buffer into a malloc'd copy (16-byte aligned). */
static uint8_t *build_sample(size_t *size, size_t *vtables_before_inners) {
  etrt_fb_builder b;
  etrt_fb_builder_init(&b);
  etrt_fb_builder_start(&b, "TST1", 0);
  etrt_fb_table_begin(&b);
  etrt_fb_add_u8(&b, R_U8, 7, 7); /* equal to the default: omitted */
  etrt_fb_add_i32(&b, R_I32, -5, 0);
  etrt_fb_add_u64(&b, R_U64, 0x1122334455667788ull, 0);
  etrt_fb_add_f64(&b, R_F64, 2.5, 0.0);
  etrt_fb_add_bool(&b, R_FLAG, true, false);
  for (int s = R_NAME; s <= R_NAMES; ++s) etrt_fb_add_offset(&b, s);
  etrt_fb_add_u8(&b, R_UTYPE, 1, 0);
  etrt_fb_add_offset(&b, R_U);
  etrt_fb_add_offset(&b, R_CHILD);
  size_t root = etrt_fb_table_end(&b);
  size_t refs[R_CHILD + 1];
  for (int s = 0; s <= R_CHILD; ++s) refs[s] = etrt_fb_slot_pos(&b, s);
  etrt_fb_set_root(&b, root);
  etrt_fb_patch(&b, refs[R_NAME], etrt_fb_add_string(&b, "root", 4));
  uint8_t bytes[3] = {1, 2, 3};
  etrt_fb_patch(&b, refs[R_BYTES], etrt_fb_add_vector(&b, bytes, 3, 1, 1));
  int64_t longs[2] = {-1, 1ll << 40};
  etrt_fb_patch(&b, refs[R_LONGS], etrt_fb_add_vector(&b, longs, 2, 8, 8));
  size_t inners = etrt_fb_add_offset_vector(&b, 3);
  etrt_fb_patch(&b, refs[R_INNERS], inners);
  *vtables_before_inners = b.vtable_count;
  for (int i = 0; i < 3; ++i)
    etrt_fb_patch(&b, etrt_fb_element(inners, i), build_inner(&b, 10 + i, "in"));
  size_t names = etrt_fb_add_offset_vector(&b, 2);
  etrt_fb_patch(&b, refs[R_NAMES], names);
  etrt_fb_patch(&b, etrt_fb_element(names, 0), etrt_fb_add_string(&b, "x", 1));
  etrt_fb_patch(&b, etrt_fb_element(names, 1), etrt_fb_add_string(&b, "yz", 2));
  etrt_fb_patch(&b, refs[R_U], build_inner(&b, 99, "u"));
  etrt_fb_patch(&b, refs[R_CHILD], build_inner(&b, 7, "child"));
  CHECK_OK(etrt_fb_builder_status(&b));
  /* Three identical Inner layouts and the child share one vtable. */
  CHECK_EQ_INT(b.vtable_count, *vtables_before_inners + 1);
  uint8_t *copy = aligned_alloc(16, etrt_align_up(b.size, 16));
  memcpy(copy, b.buf, b.size);
  *size = b.size;
  etrt_fb_builder_release(&b);
  return copy;
}

static void test_round_trip(void) {
  size_t size, vt;
  uint8_t *buf = build_sample(&size, &vt);
  CHECK(etrt_fb_has_identifier(buf, size, "TST1"));
  CHECK(!etrt_fb_has_identifier(buf, size, "ET12"));
  etrt_fb_reader r;
  etrt_fb_reader_init(&r, buf, size);
  etrt_fb_table root;
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  uint8_t u8 = 0;
  CHECK_OK(etrt_fb_read_u8(&root, R_U8, "u8", 7, &u8));
  CHECK_EQ_INT(u8, 7);
  CHECK(!etrt_fb_table_has(&root, R_U8));
  int32_t i32 = 0;
  CHECK_OK(etrt_fb_read_i32(&root, R_I32, "i32", 0, &i32));
  CHECK_EQ_INT(i32, -5);
  uint64_t u64 = 0;
  CHECK_OK(etrt_fb_read_u64(&root, R_U64, "u64", 0, &u64));
  CHECK(u64 == 0x1122334455667788ull);
  double f64 = 0;
  CHECK_OK(etrt_fb_read_f64(&root, R_F64, "f64", 0, &f64));
  CHECK_NEAR(f64, 2.5, 0);
  bool flag = false;
  CHECK_OK(etrt_fb_read_bool(&root, R_FLAG, "flag", false, &flag));
  CHECK(flag);
  /* A slot past the vtable reads as the default. */
  int32_t absent = 0;
  CHECK_OK(etrt_fb_read_i32(&root, 30, "absent", 123, &absent));
  CHECK_EQ_INT(absent, 123);

  etrt_fb_str s;
  CHECK_OK(etrt_fb_read_string(&root, R_NAME, "name", &s));
  CHECK(s.size == 4 && strcmp(s.data, "root") == 0);
  etrt_fb_vector v;
  CHECK_OK(etrt_fb_read_vector(&root, R_BYTES, "bytes", 1, 1, &v));
  CHECK_EQ_INT(v.count, 3);
  CHECK(memcmp(etrt_fb_vector_data(&v), "\1\2\3", 3) == 0);
  const int64_t *longs;
  size_t count;
  CHECK_OK(etrt_fb_read_numbers(&root, R_LONGS, "longs", 8, (const void **)&longs, &count));
  CHECK(count == 2 && longs[0] == -1 && longs[1] == (1ll << 40));
  CHECK_EQ_INT((uintptr_t)longs % 8, 0);
  CHECK_OK(etrt_fb_read_vector(&root, R_INNERS, "inners", 4, 4, &v));
  CHECK_EQ_INT(v.count, 3);
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table t;
    CHECK_OK(etrt_fb_vector_table(&v, i, "Inner", &t));
    CHECK_OK(etrt_fb_read_i32(&t, 0, "a", 0, &i32));
    CHECK_EQ_INT(i32, 10 + (int)i);
    CHECK_OK(etrt_fb_read_string(&t, 1, "name", &s));
    CHECK(strcmp(s.data, "in") == 0);
  }
  CHECK_OK(etrt_fb_read_vector(&root, R_NAMES, "names", 4, 4, &v));
  CHECK_OK(etrt_fb_vector_string(&v, 1, &s));
  CHECK(s.size == 2 && strcmp(s.data, "yz") == 0);
  uint8_t tag = 0;
  etrt_fb_table u;
  CHECK_OK(etrt_fb_read_union(&root, R_UTYPE, "u", 1, union_names, &tag, &u));
  CHECK_EQ_INT(tag, 1);
  CHECK_OK(etrt_fb_read_i32(&u, 0, "a", 0, &i32));
  CHECK_EQ_INT(i32, 99);
  bool present = false;
  etrt_fb_table child;
  CHECK_OK(etrt_fb_read_table(&root, R_CHILD, "child", "Inner", &child, &present));
  CHECK(present);
  CHECK_EQ_INT(child.depth, 1);
  free(buf);
}

/* Each refusal: a mutation of the sample, the read that must fail, and the text. */
static void test_refusals(void) {
  size_t size, vt;
  uint8_t *good = build_sample(&size, &vt);
  uint8_t *buf = aligned_alloc(16, etrt_align_up(size + 16, 16));
  etrt_fb_reader r;
  etrt_fb_table root, t;
  etrt_fb_vector v;
  etrt_fb_str s;
  uint32_t root_pos;
  memcpy(&root_pos, good, 4);

  /* Too short, and a root offset outside the buffer. */
  etrt_fb_reader_init(&r, good, 6);
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "too short");
  memcpy(buf, good, size);
  uint32_t bad = (uint32_t)size + 4;
  memcpy(buf, &bad, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "root table offset");

  /* A misaligned table. */
  etrt_fb_reader_init(&r, good, size);
  CHECK_FAILS(etrt_fb_table_at(&r, root_pos + 1, 0, "Root", &t), ETRT_ERROR_INVALID_FORMAT,
              "not 4-byte aligned");

  /* A vtable offset pointing outside the buffer. */
  memcpy(buf, good, size);
  int32_t soff = -(int32_t)size;
  memcpy(buf + root_pos, &soff, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "vtable offset");

  /* An odd vtable size is refused; a declared table size past the end is not
   * checked (the verifier ignores it), and the fields still read. */
  int32_t real_soff;
  memcpy(&real_soff, good + root_pos, 4);
  size_t vt_pos = root_pos - real_soff;
  memcpy(buf, good, size);
  buf[vt_pos] = 5;
  buf[vt_pos + 1] = 0;
  etrt_fb_reader_init(&r, buf, size);
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "bad size 5");
  memcpy(buf, good, size);
  buf[vt_pos + 2] = 0xff;
  buf[vt_pos + 3] = 0xff;
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  int32_t i32;
  CHECK_OK(etrt_fb_read_i32(&root, R_I32, "i32", 0, &i32));
  CHECK_EQ_INT(i32, -5);

  /* A field whose voffset points past the end of the data. */
  memcpy(buf, good, size);
  uint16_t far = 0x7ff0;
  memcpy(buf + vt_pos + 4 + 2 * R_I32, &far, 2);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_i32(&root, R_I32, "i32", 0, &i32), ETRT_ERROR_INVALID_FORMAT,
              "runs past the end of the data");

  /* Offsets of the name string, the longs vector and the inners vector. */
  etrt_fb_reader_init(&r, good, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  size_t name_field = etrt_fb_field_offset(&root, R_NAME);
  size_t longs_field = etrt_fb_field_offset(&root, R_LONGS);
  uint32_t name_off;
  memcpy(&name_off, good + name_field, 4);
  size_t name_pos = name_field + name_off;

  /* A string whose NUL is missing, and one longer than the buffer. */
  memcpy(buf, good, size);
  buf[name_pos + 4 + 4] = 'X';
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, R_NAME, "name", &s), ETRT_ERROR_INVALID_FORMAT,
              "terminating NUL");
  memcpy(buf, good, size);
  uint32_t huge = 0x7fffffff;
  memcpy(buf + name_pos, &huge, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, R_NAME, "name", &s), ETRT_ERROR_INVALID_FORMAT,
              "runs past the end");

  /* An offset pointing outside, and one that is not 4-byte aligned. */
  memcpy(buf, good, size);
  memcpy(buf + name_field, &huge, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, R_NAME, "name", &s), ETRT_ERROR_INVALID_FORMAT,
              "points outside");

  /* A vector with too many elements, and one whose 8-byte elements are misaligned. */
  uint32_t longs_off;
  memcpy(&longs_off, good + longs_field, 4);
  size_t longs_pos = longs_field + longs_off;
  memcpy(buf, good, size);
  memcpy(buf + longs_pos, &huge, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_vector(&root, R_LONGS, "longs", 8, 8, &v), ETRT_ERROR_INVALID_FORMAT,
              "Root.longs: vector at byte offset");
  /* Point the field at the byte-vector's position shifted by 4: aligned to 4, not 8. */
  memcpy(buf, good, size);
  uint32_t shifted = longs_off + ((longs_pos + 4) % 8 == 0 ? 4 : 0);
  uint32_t two = 2;
  memcpy(buf + longs_field, &shifted, 4);
  memcpy(buf + longs_field + shifted, &two, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  etrt_status st = etrt_fb_read_vector(&root, R_LONGS, "longs", 8, 8, &v);
  if (longs_field + shifted + 16 <= size) {
    CHECK_FAILS(etrt_fb_read_vector(&root, R_LONGS, "longs", 8, 8, &v), ETRT_ERROR_INVALID_FORMAT,
                "not 8-byte aligned");
  } else {
    CHECK(st != ETRT_OK);
  }

  /* A union tag past the known members, and a tag whose value is missing. */
  etrt_fb_reader_init(&r, good, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  size_t tag_pos = etrt_fb_field_offset(&root, R_UTYPE);
  uint16_t zero = 0;
  memcpy(buf, good, size);
  buf[tag_pos] = 9;
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  uint8_t tag;
  CHECK_FAILS(etrt_fb_read_union(&root, R_UTYPE, "u", 1, union_names, &tag, &t),
              ETRT_ERROR_INVALID_FORMAT, "union tag 9");
  memcpy(buf, good, size);
  memcpy(buf + vt_pos + 4 + 2 * R_U, &zero, 2);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_union(&root, R_UTYPE, "u", 1, union_names, &tag, &t),
              ETRT_ERROR_INVALID_FORMAT, "has no value");

  /* The depth limit: the root is depth 0, so depth 63 is the 64th level. */
  etrt_fb_reader_init(&r, good, size);
  CHECK_OK(etrt_fb_table_at(&r, root_pos, ETRT_FB_MAX_DEPTH - 1, "Root", &t));
  CHECK_FAILS(etrt_fb_table_at(&r, root_pos, ETRT_FB_MAX_DEPTH, "Root", &t),
              ETRT_ERROR_INVALID_FORMAT, "nested deeper");

  /* The work and memory budgets. */
  etrt_fb_reader_init(&r, good, size);
  r.budget = 0;
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "more work");
  etrt_fb_reader_init(&r, good, size);
  CHECK_FAILS(etrt_fb_charge_memory(&r, (uint64_t)1 << 40), ETRT_ERROR_INVALID_FORMAT,
              "more memory");

  free(buf);
  free(good);
}

/* Hand-laid buffers for the verifier's rules, little-endian writes at fixed
 * offsets. The layout of most of them:
 *   0: root uoffset   4: "TST1"   8: vtable (vsize, tsize, voff0, voff1, ...)
 *   then the table, 4-byte aligned, with its soffset back to the vtable at 8. */
static void put16(uint8_t *b, size_t at, uint16_t v) { memcpy(b + at, &v, 2); }
static void put32(uint8_t *b, size_t at, uint32_t v) { memcpy(b + at, &v, 4); }
static void put64(uint8_t *b, size_t at, uint64_t v) { memcpy(b + at, &v, 8); }

/* A table at 16 whose vtable (at 8) lists `nfields` voffsets from `voffs`. */
static void lay_table(uint8_t *b, uint16_t tsize, const uint16_t *voffs, int nfields) {
  put32(b, 0, 16);
  memcpy(b + 4, "TST1", 4);
  put16(b, 8, (uint16_t)(4 + 2 * nfields));
  put16(b, 10, tsize);
  for (int i = 0; i < nfields; ++i) put16(b, 12 + 2 * (size_t)i, voffs[i]);
  put32(b, 16, 16 - 8);
}

static void test_verifier_rules(void) {
  uint8_t *b = aligned_alloc(16, 64);
  etrt_fb_reader r;
  etrt_fb_table root;
  etrt_fb_str s;
  etrt_fb_vector v;
  int32_t i32 = 0;
  int64_t i64 = 0;

  /* Accepted: the vtable declares a 4-byte table (the soffset alone), yet its
   * fields lie beyond: an int at +4 and a long at +8, inside the data. */
  memset(b, 0, 64);
  uint16_t two_fields[2] = {4, 8};
  lay_table(b, 4, two_fields, 2);
  put32(b, 20, 0x12345678u);
  put64(b, 24, (uint64_t)-42);
  etrt_fb_reader_init(&r, b, 32);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_EQ_INT(root.table_size, 4);
  CHECK_OK(etrt_fb_read_i32(&root, 0, "a", 0, &i32));
  CHECK_EQ_INT(i32, 0x12345678);
  CHECK_OK(etrt_fb_read_i64(&root, 1, "b", 0, &i64));
  CHECK(i64 == -42);

  /* Accepted: a vtable of 2 bytes declares no fields, which read as defaults. */
  put16(b, 8, 2);
  etrt_fb_reader_init(&r, b, 32);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_EQ_INT(root.table_size, 0);
  CHECK_OK(etrt_fb_read_i32(&root, 0, "a", 7, &i32));
  CHECK_EQ_INT(i32, 7);

  /* Refused: the long ends 4 bytes past the end of the data. */
  lay_table(b, 4, two_fields, 2);
  etrt_fb_reader_init(&r, b, 28);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_OK(etrt_fb_read_i32(&root, 0, "a", 0, &i32));
  CHECK_FAILS(
      etrt_fb_read_i64(&root, 1, "b", 0, &i64), ETRT_ERROR_INVALID_FORMAT,
      "Root.b at byte offset 24: field (8 bytes at +8) runs past the end of the data (28 bytes)");

  /* Refused: an int at byte 22 and a long at byte 20 (both relative to the start). */
  uint16_t skewed[2] = {6, 4};
  lay_table(b, 16, skewed, 2);
  etrt_fb_reader_init(&r, b, 40);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_i32(&root, 0, "a", 0, &i32), ETRT_ERROR_INVALID_FORMAT,
              "Root.a at byte offset 22: field of 4 bytes is not 4-byte aligned");
  CHECK_FAILS(etrt_fb_read_i64(&root, 1, "b", 0, &i64), ETRT_ERROR_INVALID_FORMAT,
              "Root.b at byte offset 20: field of 8 bytes is not 8-byte aligned");

  /* Refused: a string offset at byte 22, not 4-byte aligned. */
  etrt_fb_reader_init(&r, b, 40);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, 0, "name", &s), ETRT_ERROR_INVALID_FORMAT,
              "Root.name at byte offset 22: field of 4 bytes is not 4-byte aligned");

  /* A string at 24 ("abc"): accepted; then its NUL replaced, then cut off so the
   * terminator would lie past the end. */
  uint16_t one_field[1] = {4};
  memset(b, 0, 64);
  lay_table(b, 8, one_field, 1);
  put32(b, 20, 4); /* 20 + 4 = 24 */
  put32(b, 24, 3);
  memcpy(b + 28, "abc", 4);
  etrt_fb_reader_init(&r, b, 32);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_OK(etrt_fb_read_string(&root, 0, "name", &s));
  CHECK(s.size == 3 && strcmp(s.data, "abc") == 0);
  b[31] = 'd';
  etrt_fb_reader_init(&r, b, 32);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, 0, "name", &s), ETRT_ERROR_INVALID_FORMAT,
              "Root.name: string at byte offset 24 lacks its terminating NUL");
  put32(b, 24, 4);
  etrt_fb_reader_init(&r, b, 32);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(
      etrt_fb_read_string(&root, 0, "name", &s), ETRT_ERROR_INVALID_FORMAT,
      "Root.name: string at byte offset 24 (length 4) runs past the end of the data (32 bytes)");

  /* A vector of two ints at 24: accepted; then three, past the end; then with
   * its length at a misaligned byte. */
  put32(b, 24, 2);
  put32(b, 28, 5);
  put32(b, 32, 6);
  const int32_t *ints;
  size_t count;
  etrt_fb_reader_init(&r, b, 36);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_OK(etrt_fb_read_numbers(&root, 0, "ints", 4, (const void **)&ints, &count));
  CHECK(count == 2 && ints[0] == 5 && ints[1] == 6);
  put32(b, 24, 3);
  etrt_fb_reader_init(&r, b, 36);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(
      etrt_fb_read_vector(&root, 0, "ints", 4, 4, &v), ETRT_ERROR_INVALID_FORMAT,
      "Root.ints: vector at byte offset 24 (3 elements of 4 bytes) runs past the end of the data "
      "(36 bytes)");
  put32(b, 20, 6);
  etrt_fb_reader_init(&r, b, 36);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_vector(&root, 0, "ints", 4, 4, &v), ETRT_ERROR_INVALID_FORMAT,
              "Root.ints: vector at byte offset 26 is misaligned");

  /* A vtable at an odd byte (soffset 7 from the table at 16). */
  put32(b, 16, 7);
  etrt_fb_reader_init(&r, b, 36);
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT,
              "Root at byte offset 16: vtable at byte offset 9 is not 2-byte aligned");
  free(b);
}

/* 65 tables, each holding an offset to the next: 64 levels are accepted, the 65th
 * is refused. All share one vtable at 8 (one offset field at +4). */
static void test_depth_limit(void) {
  enum { LEVELS = ETRT_FB_MAX_DEPTH + 1 };
  size_t size = 16 + 8 * (size_t)LEVELS;
  uint8_t *b = aligned_alloc(16, etrt_align_up(size, 16));
  memset(b, 0, size);
  put32(b, 0, 16);
  memcpy(b + 4, "TST1", 4);
  put16(b, 8, 6);
  put16(b, 10, 8);
  put16(b, 12, 4);
  for (size_t i = 0; i < LEVELS; ++i) {
    size_t pos = 16 + 8 * i;
    put32(b, pos, (uint32_t)(pos - 8));
    put32(b, pos + 4, 4); /* the next table, 8 bytes on */
  }
  etrt_fb_reader r;
  etrt_fb_table t, child;
  bool present = false;
  etrt_fb_reader_init(&r, b, size);
  CHECK_OK(etrt_fb_root(&r, "Node", &t));
  for (int level = 1; level < ETRT_FB_MAX_DEPTH; ++level) {
    CHECK_OK(etrt_fb_read_table(&t, 0, "next", "Node", &child, &present));
    CHECK(present);
    t = child;
  }
  CHECK_EQ_INT(t.depth, ETRT_FB_MAX_DEPTH - 1);
  CHECK_FAILS(etrt_fb_read_table(&t, 0, "next", "Node", &child, &present),
              ETRT_ERROR_INVALID_FORMAT, "nested deeper than 64 tables");
  free(b);
}

/* A vector of 1,000,000 offsets to one shared table: with the root that makes
 * 1,000,001 table visits, one more than the verifier allows. */
static void test_table_count_limit(void) {
  const size_t n = ETRT_FB_MAX_TABLES;
  /* 0: root uoffset, 4: id, 8: vtable {6, 8, 4}, 16: root table (offset to the
   * vector at 24), 24: vector, then the shared table with a 4-byte vtable. */
  size_t vec = 24, shared_vt = vec + 4 + 4 * n, shared = shared_vt + 4;
  size_t size = shared + 4;
  uint8_t *b = aligned_alloc(16, etrt_align_up(size, 16));
  memset(b, 0, size);
  put32(b, 0, 16);
  memcpy(b + 4, "TST1", 4);
  put16(b, 8, 6);
  put16(b, 10, 8);
  put16(b, 12, 4);
  put32(b, 16, 8);
  put32(b, 20, (uint32_t)(vec - 20));
  put32(b, vec, (uint32_t)n);
  for (size_t i = 0; i < n; ++i) put32(b, vec + 4 + 4 * i, (uint32_t)(shared - (vec + 4 + 4 * i)));
  put16(b, shared_vt, 4);
  put16(b, shared_vt + 2, 4);
  put32(b, shared, 4);
  etrt_fb_reader r;
  etrt_fb_table root, t;
  etrt_fb_vector v;
  etrt_fb_reader_init(&r, b, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_OK(etrt_fb_read_vector(&root, 0, "items", 4, 4, &v));
  CHECK(v.count == n);
  size_t i = 0;
  while (i + 1 < n && etrt_fb_vector_table(&v, i, "Item", &t) == ETRT_OK) ++i;
  CHECK(i == n - 1);
  CHECK_FAILS(etrt_fb_vector_table(&v, n - 1, "Item", &t), ETRT_ERROR_INVALID_FORMAT,
              "more than 1000000 tables");
  free(b);
}

static void test_builder_failure_is_sticky(void) {
  etrt_fb_builder b;
  etrt_fb_builder_init(&b);
  etrt_fb_builder_start(&b, "TST1", 0);
  etrt_fb_table_begin(&b);
  etrt_fb_add_i32(&b, 40, 1, 0); /* slot past the builder's limit */
  etrt_fb_table_end(&b);
  CHECK_FAILS(etrt_fb_builder_status(&b), ETRT_ERROR_INVALID_ARGUMENT, "FlatBuffer builder");
  CHECK(etrt_fb_at(&b, 0) == NULL);
  etrt_fb_builder_release(&b);

  /* A patch that would point backwards is a builder misuse, also refused. */
  etrt_fb_builder_init(&b);
  etrt_fb_builder_start(&b, "TST1", 0);
  size_t s1 = etrt_fb_add_string(&b, "a", 1);
  size_t v = etrt_fb_add_offset_vector(&b, 1);
  etrt_fb_patch(&b, etrt_fb_element(v, 0), s1);
  CHECK(etrt_fb_builder_status(&b) != ETRT_OK);
  etrt_fb_builder_release(&b);
}

int main(void) {
  RUN_TEST(test_round_trip);
  RUN_TEST(test_refusals);
  RUN_TEST(test_verifier_rules);
  RUN_TEST(test_depth_limit);
  RUN_TEST(test_table_count_limit);
  RUN_TEST(test_builder_failure_is_sticky);
  return TEST_EXIT();
}
