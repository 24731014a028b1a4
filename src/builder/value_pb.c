#include "builder/value_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/status.h"
#include "builder/protobuf.h"

/* SequenceProto.DataType and OptionalProto.DataType share their numbers. */
enum {
  ETRT_VALUE_PB_UNDEFINED = 0,
  ETRT_VALUE_PB_ELEM_TENSOR = 1,
  ETRT_VALUE_PB_ELEM_SPARSE_TENSOR = 2,
  ETRT_VALUE_PB_ELEM_SEQUENCE = 3,
  ETRT_VALUE_PB_ELEM_MAP = 4,
  ETRT_VALUE_PB_ELEM_OPTIONAL = 5
};

static const char *etrt_value_pb_elem_name(uint64_t t) {
  static const char *const names[] = {"UNDEFINED", "TENSOR", "SPARSE_TENSOR",
                                      "SEQUENCE",  "MAP",    "OPTIONAL"};
  return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

static const char *etrt_value_pb_what(const char *what) { return what ? what : "value .pb"; }

static etrt_status etrt_value_pb_fail(const char *what, const char *message, const char *field,
                                      size_t offset, const char *problem) {
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "'%s': %s field %s at byte offset %zu: %s",
                    etrt_value_pb_what(what), message, field, offset, problem);
}

static etrt_status etrt_value_pb_unsupported(const char *what, const char *message,
                                             const char *field, size_t offset,
                                             const char *problem) {
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "'%s': %s field %s at byte offset %zu: %s",
                    etrt_value_pb_what(what), message, field, offset, problem);
}

void etrt_value_pb_release(etrt_value_pb *value) {
  for (uint32_t i = 0; i < value->count; ++i) etrt_tensor_pb_release(&value->tensors[i]);
  free(value->tensors);
  free(value->name);
  memset(value, 0, sizeof *value);
}

/* One TensorProto held in field `f`, appended to out->tensors. */
static etrt_status etrt_value_pb_add_tensor(const char *what, const char *message,
                                            const char *field, const etrt_pb_field *f,
                                            etrt_value_pb *out) {
  if (out->count == ETRT_VALUE_PB_MAX_TENSORS)
    return etrt_value_pb_unsupported(what, message, field, f->offset,
                                     "more tensors than the 4096 etrt reads");
  etrt_tensor_pb *grown = realloc(out->tensors, (out->count + 1u) * sizeof *grown);
  if (grown == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "'%s': out of memory", etrt_value_pb_what(what));
  out->tensors = grown;
  etrt_status s = etrt_tensor_pb_read(f->data, f->size, what, &out->tensors[out->count]);
  if (s != ETRT_OK)
    return etrt_error_context(s,
                              "%s field %s[%u] (a TensorProto at byte offset %zu, its offsets "
                              "counted from there): ",
                              message, field, out->count, f->data_offset);
  ++out->count;
  return ETRT_OK;
}

/* name (1) and elem_type (2) of a SequenceProto or OptionalProto. */
static etrt_status etrt_value_pb_header(const etrt_pb_cursor *message, const char *what,
                                        const char *kind, etrt_pb_field *name, int *has_name,
                                        uint64_t *elem_type) {
  etrt_pb_cursor c = *message;
  etrt_pb_cursor_rewind(&c);
  etrt_pb_field f;
  int more;
  *has_name = 0;
  *elem_type = ETRT_VALUE_PB_UNDEFINED;
  etrt_status s;
  while ((s = etrt_pb_cursor_next(&c, &f, &more)) == ETRT_OK && more) {
    if (f.number < 1 || f.number > 7)
      return etrt_value_pb_fail(what, kind, "(unknown)", f.offset,
                                "field number not in 1..7 (name, elem_type, the values)");
    if (f.number == 1) {
      if (f.wire != ETRT_PB_WIRE_LEN)
        return etrt_value_pb_fail(what, kind, "name", f.offset, "not length-delimited");
      *name = f;
      *has_name = 1;
    } else if (f.number == 2) {
      if (f.wire != ETRT_PB_WIRE_VARINT)
        return etrt_value_pb_fail(what, kind, "elem_type", f.offset, "not a varint");
      if (f.value > ETRT_VALUE_PB_ELEM_OPTIONAL)
        return etrt_value_pb_fail(what, kind, "elem_type", f.offset, "not a DataType (0..5)");
      *elem_type = f.value;
    } else if (f.wire != ETRT_PB_WIRE_LEN) {
      return etrt_value_pb_fail(what, kind, "value", f.offset, "not length-delimited");
    }
  }
  if (s != ETRT_OK) return etrt_error_context(s, "'%s': %s: ", etrt_value_pb_what(what), kind);
  return ETRT_OK;
}

static etrt_status etrt_value_pb_name(const etrt_pb_field *f, int has, char **out) {
  size_t n = has ? f->size : 0;
  *out = malloc(n + 1);
  if (*out == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "value .pb: out of memory");
  if (n) memcpy(*out, f->data, n);
  (*out)[n] = '\0';
  return ETRT_OK;
}

static const char *const etrt_value_pb_field_names[8] = {"",
                                                         "name",
                                                         "elem_type",
                                                         "tensor_values",
                                                         "sparse_tensor_values",
                                                         "sequence_values",
                                                         "map_values",
                                                         "optional_values"};

static etrt_status etrt_value_pb_sequence(const etrt_pb_cursor *message, const char *what,
                                          etrt_value_pb *out) {
  const char *kind = "SequenceProto";
  etrt_pb_field name;
  int has_name;
  uint64_t elem_type;
  ETRT_RETURN_IF_ERROR(etrt_value_pb_header(message, what, kind, &name, &has_name, &elem_type));
  out->kind = ETRT_VALUE_PB_SEQUENCE;
  out->present = 1;
  ETRT_RETURN_IF_ERROR(etrt_value_pb_name(&name, has_name, &out->name));
  etrt_pb_cursor c = *message;
  etrt_pb_cursor_rewind(&c);
  etrt_pb_field f;
  int more;
  etrt_status s;
  while ((s = etrt_pb_cursor_next(&c, &f, &more)) == ETRT_OK && more) {
    if (f.number < 3) continue;
    const char *field = etrt_value_pb_field_names[f.number];
    if (f.number != 3) {
      char problem[160];
      snprintf(problem, sizeof problem,
               "a sequence of %s values is not supported (sequences of tensors only)",
               etrt_value_pb_elem_name(f.number - 2));
      return etrt_value_pb_unsupported(what, kind, field, f.offset, problem);
    }
    if (elem_type != ETRT_VALUE_PB_ELEM_TENSOR) {
      char problem[160];
      snprintf(problem, sizeof problem, "a tensor in a sequence whose elem_type is %s",
               etrt_value_pb_elem_name(elem_type));
      return etrt_value_pb_fail(what, kind, field, f.offset, problem);
    }
    ETRT_RETURN_IF_ERROR(etrt_value_pb_add_tensor(what, kind, field, &f, out));
  }
  if (s != ETRT_OK) return etrt_error_context(s, "'%s': %s: ", etrt_value_pb_what(what), kind);
  return ETRT_OK;
}

static etrt_status etrt_value_pb_optional(const etrt_pb_cursor *message, const char *what,
                                          etrt_value_pb *out) {
  const char *kind = "OptionalProto";
  etrt_pb_field name;
  int has_name;
  uint64_t elem_type;
  ETRT_RETURN_IF_ERROR(etrt_value_pb_header(message, what, kind, &name, &has_name, &elem_type));
  out->kind = ETRT_VALUE_PB_OPTIONAL;
  out->holds_sequence = elem_type == ETRT_VALUE_PB_ELEM_SEQUENCE;
  ETRT_RETURN_IF_ERROR(etrt_value_pb_name(&name, has_name, &out->name));
  etrt_pb_cursor c = *message;
  etrt_pb_cursor_rewind(&c);
  etrt_pb_field f;
  int more;
  etrt_status s;
  /* OptionalProto's value fields are singular. */
  static const char *const singular[8] = {"",
                                          "name",
                                          "elem_type",
                                          "tensor_value",
                                          "sparse_tensor_value",
                                          "sequence_value",
                                          "map_value",
                                          "optional_value"};
  while ((s = etrt_pb_cursor_next(&c, &f, &more)) == ETRT_OK && more) {
    if (f.number < 3) continue;
    const char *field = singular[f.number];
    if (out->present)
      return etrt_value_pb_fail(what, kind, field, f.offset, "a second value in an optional");
    if (f.number != 3 && f.number != 5) {
      char problem[160];
      snprintf(problem, sizeof problem,
               "an optional %s is not supported (tensors and sequences of tensors only)",
               etrt_value_pb_elem_name(f.number - 2));
      return etrt_value_pb_unsupported(what, kind, field, f.offset, problem);
    }
    uint64_t want = f.number == 3 ? ETRT_VALUE_PB_ELEM_TENSOR : ETRT_VALUE_PB_ELEM_SEQUENCE;
    if (elem_type != want) {
      char problem[160];
      snprintf(problem, sizeof problem, "a %s value in an optional whose elem_type is %s",
               etrt_value_pb_elem_name(want), etrt_value_pb_elem_name(elem_type));
      return etrt_value_pb_fail(what, kind, field, f.offset, problem);
    }
    out->present = 1;
    if (f.number == 3) {
      ETRT_RETURN_IF_ERROR(etrt_value_pb_add_tensor(what, kind, field, &f, out));
      continue;
    }
    etrt_pb_cursor inner;
    s = etrt_pb_cursor_sub(&c, &f, &inner);
    if (s != ETRT_OK) break;
    etrt_value_pb seq = {0};
    s = etrt_value_pb_sequence(&inner, what, &seq);
    if (s != ETRT_OK) {
      etrt_value_pb_release(&seq);
      return etrt_error_context(s, "%s field %s: ", kind, field);
    }
    out->tensors = seq.tensors;
    out->count = seq.count;
    free(seq.name);
  }
  if (s != ETRT_OK) return etrt_error_context(s, "'%s': %s: ", etrt_value_pb_what(what), kind);
  return ETRT_OK;
}

/* Whether the bytes have the layout of a SequenceProto or OptionalProto: name (1),
 * elem_type (2, 0..5), then values in length-delimited fields 3..7. */
static int etrt_value_pb_layout(const uint8_t *data, size_t size) {
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data, size);
  etrt_pb_field f;
  int more, has_elem_type = 0;
  while (etrt_pb_cursor_next(&c, &f, &more) == ETRT_OK && more) {
    if (f.number == 1 && f.wire == ETRT_PB_WIRE_LEN) continue;
    if (f.number == 2 && f.wire == ETRT_PB_WIRE_VARINT && f.value <= 5)
      has_elem_type = 1;
    else if (!(f.number >= 3 && f.number <= 7 && f.wire == ETRT_PB_WIRE_LEN))
      return 0;
  }
  return more == 0 && has_elem_type;
}

/* A SequenceProto of one tensor and an OptionalProto holding one are the same bytes
 * (their elem_type numbers agree), and so are an empty sequence and an absent optional
 * tensor: those read as a sequence of one tensor and as an absent optional. A caller
 * that expects the other reads `count` (and `present`) accordingly: both are lists of
 * tensors. What holds a sequence (elem_type SEQUENCE, field 5) or nothing is an
 * optional. */
static int etrt_value_pb_looks_optional(const uint8_t *data, size_t size) {
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data, size);
  etrt_pb_field f;
  int more, values = 0, elem_type = -1;
  while (etrt_pb_cursor_next(&c, &f, &more) == ETRT_OK && more) {
    if (f.number == 2) elem_type = (int)f.value;
    if (f.number >= 3) ++values;
  }
  return values == 0 || elem_type == ETRT_VALUE_PB_ELEM_SEQUENCE ||
         elem_type == ETRT_VALUE_PB_UNDEFINED;
}

etrt_status etrt_value_pb_read(const uint8_t *data, size_t size, const char *what,
                               etrt_value_pb *out) {
  memset(out, 0, sizeof *out);
  etrt_tensor_pb t;
  etrt_status s = etrt_tensor_pb_read(data, size, what, &t);
  if (s == ETRT_OK) {
    out->tensors = malloc(sizeof *out->tensors);
    if (out->tensors == NULL) {
      etrt_tensor_pb_release(&t);
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "'%s': out of memory", etrt_value_pb_what(what));
    }
    out->kind = ETRT_VALUE_PB_TENSOR;
    out->present = 1;
    out->name = t.name;
    t.name = NULL;
    out->tensors[0] = t;
    out->count = 1;
    return ETRT_OK;
  }
  /* The layout probe may overwrite the message; keep the tensor reader's. */
  char message[1024];
  snprintf(message, sizeof message, "%s", etrt_last_error());
  if (data == NULL || !etrt_value_pb_layout(data, size)) return etrt_error(s, "%s", message);
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data, size);
  s = etrt_value_pb_looks_optional(data, size) ? etrt_value_pb_optional(&c, what, out)
                                               : etrt_value_pb_sequence(&c, what, out);
  if (s != ETRT_OK) etrt_value_pb_release(out);
  return s;
}

etrt_status etrt_value_pb_read_file(const char *path, etrt_value_pb *out) {
  memset(out, 0, sizeof *out);
  etrt_file_map map;
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &map));
  etrt_status s = etrt_value_pb_read(map.data, map.size, path, out);
  etrt_file_map_close(&map);
  return s;
}

etrt_status etrt_value_pb_encode_sequence(const char *name, const etrt_tensor_view *tensors,
                                          uint32_t count, uint8_t **data, size_t *size) {
  *data = NULL;
  *size = 0;
  etrt_pb_writer w;
  etrt_pb_writer_init(&w);
  if (name != NULL) etrt_pb_write_string_field(&w, 1, name);
  etrt_pb_write_varint_field(&w, 2, ETRT_VALUE_PB_ELEM_TENSOR);
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t *bytes;
    size_t n;
    etrt_status s = etrt_tensor_pb_encode(NULL, &tensors[i], &bytes, &n);
    if (s != ETRT_OK) {
      etrt_pb_writer_release(&w);
      return etrt_error_context(s, "SequenceProto '%s' tensor %u: ", name ? name : "", i);
    }
    etrt_pb_write_bytes_field(&w, 3, bytes, n);
    free(bytes);
  }
  return etrt_pb_writer_finish(&w, data, size);
}

etrt_status etrt_value_pb_write_sequence(const char *path, const char *name,
                                         const etrt_tensor_view *tensors, uint32_t count) {
  uint8_t *data;
  size_t size;
  ETRT_RETURN_IF_ERROR(etrt_value_pb_encode_sequence(name, tensors, count, &data, &size));
  etrt_status s = etrt_file_write_atomic(path, data, size);
  free(data);
  return s;
}
