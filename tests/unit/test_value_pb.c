/* .pb SequenceProto and OptionalProto files (builder/value_pb.h): what they read as, the
 * round trip of a written sequence, and every refusal, with the field and byte offset it
 * names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builder/protobuf.h"
#include "builder/tensor_pb.h"
#include "builder/value_pb.h"
#include "test_util.h"

typedef etrt_pb_writer W;

static W msg(void) {
  W w;
  etrt_pb_writer_init(&w);
  return w;
}

static void put(W *w, uint32_t number, W *sub) {
  etrt_pb_write_message_field(w, number, sub);
  etrt_pb_writer_release(sub);
}

static uint8_t *finish(W *w, size_t *size) {
  uint8_t *bytes = NULL;
  CHECK_OK(etrt_pb_writer_finish(w, &bytes, size));
  return bytes;
}

/* A float TensorProto of `n` values 0, 1, ... in raw_data. */
static W tensor(int64_t n) {
  W t = msg();
  float values[8];
  for (int64_t i = 0; i < n; ++i) values[i] = (float)i;
  etrt_pb_write_varint_field(&t, 1, (uint64_t)n);
  etrt_pb_write_varint_field(&t, 2, 1);
  etrt_pb_write_bytes_field(&t, 9, values, (size_t)n * sizeof(float));
  return t;
}

/* name, elem_type, then `count` tensors of 1, 2, ... values in field `field`. */
static uint8_t *value(const char *name, int64_t elem_type, uint32_t field, int count,
                      size_t *size) {
  W v = msg();
  if (name) etrt_pb_write_string_field(&v, 1, name);
  etrt_pb_write_varint_field(&v, 2, (uint64_t)elem_type);
  for (int i = 0; i < count; ++i) {
    W t = tensor(i + 1);
    put(&v, field, &t);
  }
  return finish(&v, size);
}

static void test_sequences(void) {
  size_t size;
  uint8_t *bytes = value("seq", 1, 3, 3, &size);
  etrt_value_pb v;
  CHECK_OK(etrt_value_pb_read(bytes, size, "seq.pb", &v));
  CHECK(v.kind == ETRT_VALUE_PB_SEQUENCE && v.present && strcmp(v.name, "seq") == 0);
  CHECK_EQ_INT(v.count, 3);
  for (uint32_t i = 0; i < v.count; ++i) {
    CHECK(v.tensors[i].dtype == ETRT_DTYPE_FLOAT32 && v.tensors[i].rank == 1);
    CHECK_EQ_INT(v.tensors[i].sizes[0], i + 1);
    CHECK(((const float *)v.tensors[i].data)[i] == (float)i);
  }
  /* Written back as a SequenceProto, the same tensors. */
  etrt_tensor_view views[3];
  for (int i = 0; i < 3; ++i) {
    views[i] = (etrt_tensor_view){
        .data = v.tensors[i].data, .dtype = v.tensors[i].dtype, .rank = v.tensors[i].rank};
    memcpy(views[i].sizes, v.tensors[i].sizes, sizeof views[i].sizes);
  }
  uint8_t *again;
  size_t again_size;
  CHECK_OK(etrt_value_pb_encode_sequence("out", views, 3, &again, &again_size));
  etrt_value_pb back;
  CHECK_OK(etrt_value_pb_read(again, again_size, "again.pb", &back));
  CHECK(back.kind == ETRT_VALUE_PB_SEQUENCE && back.count == 3 && strcmp(back.name, "out") == 0);
  for (uint32_t i = 0; i < 3; ++i)
    CHECK(back.tensors[i].nbytes == v.tensors[i].nbytes &&
          memcmp(back.tensors[i].data, v.tensors[i].data, v.tensors[i].nbytes) == 0);
  etrt_value_pb_release(&back);
  free(again);
  etrt_value_pb_release(&v);
  free(bytes);
  /* A plain TensorProto is a value of one tensor. */
  W t = tensor(2);
  bytes = finish(&t, &size);
  CHECK_OK(etrt_value_pb_read(bytes, size, "t.pb", &v));
  CHECK(v.kind == ETRT_VALUE_PB_TENSOR && v.count == 1 && v.tensors[0].sizes[0] == 2);
  etrt_value_pb_release(&v);
  free(bytes);
}

static void test_optionals(void) {
  size_t size;
  etrt_value_pb v;
  /* Absent: elem_type alone (TENSOR, or UNDEFINED). */
  for (int64_t elem = 0; elem <= 1; ++elem) {
    uint8_t *bytes = value("none", elem, 3, 0, &size);
    CHECK_OK(etrt_value_pb_read(bytes, size, "none.pb", &v));
    CHECK(v.kind == ETRT_VALUE_PB_OPTIONAL && !v.present && v.count == 0);
    etrt_value_pb_release(&v);
    free(bytes);
  }
  /* An optional sequence: elem_type SEQUENCE, the SequenceProto in sequence_value (5). */
  W opt = msg(), seq = msg();
  etrt_pb_write_string_field(&opt, 1, "opt");
  etrt_pb_write_varint_field(&opt, 2, 3);
  etrt_pb_write_varint_field(&seq, 2, 1);
  for (int i = 0; i < 2; ++i) {
    W t = tensor(i + 1);
    put(&seq, 3, &t);
  }
  put(&opt, 5, &seq);
  uint8_t *bytes = finish(&opt, &size);
  CHECK_OK(etrt_value_pb_read(bytes, size, "opt.pb", &v));
  CHECK(v.kind == ETRT_VALUE_PB_OPTIONAL && v.present && v.holds_sequence && v.count == 2);
  CHECK(strcmp(v.name, "opt") == 0 && v.tensors[1].sizes[0] == 2);
  etrt_value_pb_release(&v);
  free(bytes);
  /* An optional sequence holding an empty sequence is present. */
  opt = msg();
  seq = msg();
  etrt_pb_write_varint_field(&opt, 2, 3);
  etrt_pb_write_varint_field(&seq, 2, 1);
  put(&opt, 5, &seq);
  bytes = finish(&opt, &size);
  CHECK_OK(etrt_value_pb_read(bytes, size, "empty.pb", &v));
  CHECK(v.kind == ETRT_VALUE_PB_OPTIONAL && v.present && v.holds_sequence && v.count == 0);
  etrt_value_pb_release(&v);
  free(bytes);
}

static void test_refusals(void) {
  size_t size;
  etrt_value_pb v;
  /* An optional sequence whose sequence_value (field 5) holds a TensorProto. */
  uint8_t *bytes = value("s", 3, 5, 1, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "nested.pb", &v), ETRT_ERROR_INVALID_FORMAT,
              "OptionalProto field sequence_value: 'nested.pb': SequenceProto field name at byte "
              "offset 7: not length-delimited");
  free(bytes);
  W outer = msg();
  etrt_pb_write_string_field(&outer, 1, "s");
  etrt_pb_write_varint_field(&outer, 2, 1);
  W t1 = tensor(1), t2 = tensor(1);
  put(&outer, 3, &t1);
  put(&outer, 5, &t2);
  bytes = finish(&outer, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "seqseq.pb", &v), ETRT_ERROR_UNSUPPORTED,
              "'seqseq.pb': SequenceProto field sequence_values at byte offset 17: a sequence "
              "of SEQUENCE values is not supported");
  free(bytes);
  /* Map values, in a sequence and in an optional. */
  bytes = value("m", 1, 6, 1, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "map.pb", &v), ETRT_ERROR_UNSUPPORTED,
              "'map.pb': SequenceProto field map_values at byte offset 5: a sequence of MAP "
              "values is not supported");
  free(bytes);
  bytes = value("m", 0, 6, 1, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "optmap.pb", &v), ETRT_ERROR_UNSUPPORTED,
              "'optmap.pb': OptionalProto field map_value at byte offset 5: an optional MAP is "
              "not supported");
  free(bytes);
  /* Two values in an optional sequence: the second is refused at its offset. */
  outer = msg();
  etrt_pb_write_varint_field(&outer, 2, 3);
  W s1 = msg(), s2 = msg();
  etrt_pb_write_varint_field(&s1, 2, 1);
  etrt_pb_write_varint_field(&s2, 2, 1);
  put(&outer, 5, &s1);
  put(&outer, 5, &s2);
  bytes = finish(&outer, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "two.pb", &v), ETRT_ERROR_INVALID_FORMAT,
              "'two.pb': OptionalProto field sequence_value at byte offset 6: a second value in "
              "an optional");
  free(bytes);
  /* A tensor value where elem_type says SEQUENCE. */
  outer = msg();
  etrt_pb_write_varint_field(&outer, 2, 3);
  W s3 = msg();
  put(&outer, 3, &s3);
  etrt_pb_write_varint_field(&outer, 2, 3);
  bytes = finish(&outer, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "mixed.pb", &v), ETRT_ERROR_INVALID_FORMAT,
              "field tensor_value at byte offset 2: a TENSOR value in an optional whose elem_type "
              "is SEQUENCE");
  free(bytes);
  /* Tensors whose elem_type (the last written wins) says UNDEFINED: read as an optional,
   * whose value the type does not name. */
  outer = msg();
  etrt_pb_write_varint_field(&outer, 2, 1);
  W ta = tensor(1), tb = tensor(1);
  put(&outer, 3, &ta);
  put(&outer, 3, &tb);
  etrt_pb_write_varint_field(&outer, 2, 0);
  bytes = finish(&outer, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "untyped.pb", &v), ETRT_ERROR_INVALID_FORMAT,
              "'untyped.pb': OptionalProto field tensor_value at byte offset 2: a TENSOR value in "
              "an optional whose elem_type is UNDEFINED");
  free(bytes);
  /* A sequence holding tensors whose elem_type is an optional's. */
  bytes = value("s", 5, 3, 2, &size);
  CHECK_FAILS(etrt_value_pb_read(bytes, size, "typed.pb", &v), ETRT_ERROR_INVALID_FORMAT,
              "'typed.pb': SequenceProto field tensor_values at byte offset 5: a tensor in a "
              "sequence whose elem_type is OPTIONAL");
  free(bytes);
  /* A bad tensor inside: named by its index and where it starts. */
  outer = msg();
  etrt_pb_write_varint_field(&outer, 2, 1);
  W good = tensor(1), good2 = tensor(1), bad = msg();
  put(&outer, 3, &good);
  put(&outer, 3, &good2);
  etrt_pb_write_varint_field(&bad, 1, 4);
  etrt_pb_write_varint_field(&bad, 2, 1);
  put(&outer, 3, &bad);
  bytes = finish(&outer, &size);
  CHECK_FAILS(
      etrt_value_pb_read(bytes, size, "bad.pb", &v), ETRT_ERROR_INVALID_FORMAT,
      "SequenceProto field tensor_values[2] (a TensorProto at byte offset 28, its offsets counted "
      "from there): 'bad.pb': TensorProto: tensor '': dims [4] of FLOAT need 4 elements");
  free(bytes);
  /* Bytes that are neither keep the TensorProto reader's message. */
  CHECK_FAILS(etrt_value_pb_read((const uint8_t *)"\x08\x80", 2, "cut.pb", &v),
              ETRT_ERROR_INVALID_FORMAT, "'cut.pb': TensorProto: varint truncated at byte 1");
  CHECK_FAILS(etrt_value_pb_read_file("/nonexistent/x.pb", &v), ETRT_ERROR_IO, "cannot open");
}

int main(void) {
  RUN_TEST(test_sequences);
  RUN_TEST(test_optionals);
  RUN_TEST(test_refusals);
  TEST_EXIT();
}
