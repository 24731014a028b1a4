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
enum { R_U8, R_I32, R_U64, R_F64, R_FLAG, R_NAME, R_BYTES, R_LONGS, R_INNERS, R_NAMES, R_UTYPE, R_U, R_CHILD };

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
  for (int i = 0; i < 3; ++i) etrt_fb_patch(&b, etrt_fb_element(inners, i), build_inner(&b, 10 + i, "in"));
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
  CHECK_FAILS(etrt_fb_table_at(&r, root_pos + 1, 0, "Root", &t), ETRT_ERROR_INVALID_FORMAT, "not 4-byte aligned");

  /* A vtable offset pointing outside the buffer. */
  memcpy(buf, good, size);
  int32_t soff = -(int32_t)size;
  memcpy(buf + root_pos, &soff, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "vtable offset");

  /* An odd vtable size, and a table size past the end. */
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
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "table size");

  /* A field whose voffset points past the table. */
  memcpy(buf, good, size);
  uint16_t far = 0x7ff0;
  memcpy(buf + vt_pos + 4 + 2 * R_I32, &far, 2);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  int32_t i32;
  CHECK_FAILS(etrt_fb_read_i32(&root, R_I32, "i32", 0, &i32), ETRT_ERROR_INVALID_FORMAT, "Root.i32 at byte offset");

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
  CHECK_FAILS(etrt_fb_read_string(&root, R_NAME, "name", &s), ETRT_ERROR_INVALID_FORMAT, "terminating NUL");
  memcpy(buf, good, size);
  uint32_t huge = 0x7fffffff;
  memcpy(buf + name_pos, &huge, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, R_NAME, "name", &s), ETRT_ERROR_INVALID_FORMAT, "runs past the end");

  /* An offset pointing outside, and one that is not 4-byte aligned. */
  memcpy(buf, good, size);
  memcpy(buf + name_field, &huge, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_string(&root, R_NAME, "name", &s), ETRT_ERROR_INVALID_FORMAT, "points outside");

  /* A vector with too many elements, and one whose 8-byte elements are misaligned. */
  uint32_t longs_off;
  memcpy(&longs_off, good + longs_field, 4);
  size_t longs_pos = longs_field + longs_off;
  memcpy(buf, good, size);
  memcpy(buf + longs_pos, &huge, 4);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_vector(&root, R_LONGS, "longs", 8, 8, &v), ETRT_ERROR_INVALID_FORMAT, "Root.longs: vector at byte offset");
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
    CHECK_FAILS(etrt_fb_read_vector(&root, R_LONGS, "longs", 8, 8, &v), ETRT_ERROR_INVALID_FORMAT, "not 8-byte aligned");
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
  CHECK_FAILS(etrt_fb_read_union(&root, R_UTYPE, "u", 1, union_names, &tag, &t), ETRT_ERROR_INVALID_FORMAT,
              "union tag 9");
  memcpy(buf, good, size);
  memcpy(buf + vt_pos + 4 + 2 * R_U, &zero, 2);
  etrt_fb_reader_init(&r, buf, size);
  CHECK_OK(etrt_fb_root(&r, "Root", &root));
  CHECK_FAILS(etrt_fb_read_union(&root, R_UTYPE, "u", 1, union_names, &tag, &t), ETRT_ERROR_INVALID_FORMAT,
              "has no value");

  /* The depth limit. */
  etrt_fb_reader_init(&r, good, size);
  CHECK_FAILS(etrt_fb_table_at(&r, root_pos, ETRT_FB_MAX_DEPTH + 1, "Root", &t), ETRT_ERROR_INVALID_FORMAT,
              "nested deeper");

  /* The work and memory budgets. */
  etrt_fb_reader_init(&r, good, size);
  r.budget = 0;
  CHECK_FAILS(etrt_fb_root(&r, "Root", &root), ETRT_ERROR_INVALID_FORMAT, "more work");
  etrt_fb_reader_init(&r, good, size);
  CHECK_FAILS(etrt_fb_charge_memory(&r, (uint64_t)1 << 40), ETRT_ERROR_INVALID_FORMAT, "more memory");

  free(buf);
  free(good);
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
  RUN_TEST(test_builder_failure_is_sticky);
  return TEST_EXIT();
}
