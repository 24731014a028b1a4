#include "builder/protobuf.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"

const char *etrt_pb_wire_name(etrt_pb_wire wire) {
  switch (wire) {
    case ETRT_PB_WIRE_VARINT:
      return "varint";
    case ETRT_PB_WIRE_FIXED64:
      return "fixed64";
    case ETRT_PB_WIRE_LEN:
      return "length-delimited";
    case ETRT_PB_WIRE_GROUP_START:
      return "group start";
    case ETRT_PB_WIRE_GROUP_END:
      return "group end";
    case ETRT_PB_WIRE_FIXED32:
      return "fixed32";
  }
  return "invalid";
}

void etrt_pb_cursor_init(etrt_pb_cursor *cursor, const uint8_t *data, size_t size) {
  cursor->base = data;
  cursor->pos = 0;
  cursor->end = size;
  cursor->begin = 0;
  cursor->depth = 0;
}

void etrt_pb_cursor_rewind(etrt_pb_cursor *cursor) { cursor->pos = cursor->begin; }

etrt_status etrt_pb_read_varint(const uint8_t *base, size_t *pos, size_t end, uint64_t *value) {
  size_t start = *pos;
  uint64_t result = 0;
  for (unsigned i = 0; i < ETRT_PB_MAX_VARINT_BYTES; ++i) {
    if (start + i >= end) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "varint truncated at byte %zu", start);
    }
    uint8_t byte = base[start + i];
    /* The tenth byte holds bit 63 only; anything more does not fit in 64 bits. */
    if (i == ETRT_PB_MAX_VARINT_BYTES - 1 && (byte & 0x80)) break;
    if (i == ETRT_PB_MAX_VARINT_BYTES - 1 && byte > 1) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "varint overflows 64 bits at byte %zu", start);
    }
    result |= (uint64_t)(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *pos = start + i + 1;
      *value = result;
      return ETRT_OK;
    }
  }
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "varint longer than 10 bytes at byte %zu", start);
}

static etrt_status etrt_pb_read_fixed(const uint8_t *base, size_t *pos, size_t end, size_t width,
                                      uint64_t *value) {
  if (end - *pos < width) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s value truncated at byte %zu",
                      width == 4 ? "fixed32" : "fixed64", *pos);
  }
  uint64_t result = 0;
  for (size_t i = 0; i < width; ++i) result |= (uint64_t)base[*pos + i] << (8 * i);
  *pos += width;
  *value = result;
  return ETRT_OK;
}

etrt_status etrt_pb_cursor_next(etrt_pb_cursor *cursor, etrt_pb_field *field, int *more) {
  *more = 0;
  if (cursor->pos >= cursor->end) return ETRT_OK;
  size_t offset = cursor->pos;
  size_t pos = cursor->pos;
  uint64_t tag;
  ETRT_RETURN_IF_ERROR(etrt_pb_read_varint(cursor->base, &pos, cursor->end, &tag));
  if (tag > UINT32_MAX) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "field tag %llu out of range at byte %zu",
                      (unsigned long long)tag, offset);
  }
  uint32_t number = (uint32_t)(tag >> 3);
  unsigned wire = (unsigned)(tag & 7);
  if (number == 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "field number 0 at byte %zu", offset);
  }
  field->number = number;
  field->wire = (etrt_pb_wire)wire;
  field->offset = offset;
  field->value = 0;
  field->data = NULL;
  field->size = 0;
  field->data_offset = 0;
  switch (wire) {
    case ETRT_PB_WIRE_VARINT:
      ETRT_RETURN_IF_ERROR(etrt_pb_read_varint(cursor->base, &pos, cursor->end, &field->value));
      break;
    case ETRT_PB_WIRE_FIXED64:
      ETRT_RETURN_IF_ERROR(etrt_pb_read_fixed(cursor->base, &pos, cursor->end, 8, &field->value));
      break;
    case ETRT_PB_WIRE_FIXED32:
      ETRT_RETURN_IF_ERROR(etrt_pb_read_fixed(cursor->base, &pos, cursor->end, 4, &field->value));
      break;
    case ETRT_PB_WIRE_LEN: {
      uint64_t length;
      size_t length_at = pos;
      ETRT_RETURN_IF_ERROR(etrt_pb_read_varint(cursor->base, &pos, cursor->end, &length));
      if (length > cursor->end - pos) {
        return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                          "field %u: length %llu exceeds the %zu bytes left at byte %zu", number,
                          (unsigned long long)length, cursor->end - pos, length_at);
      }
      field->data = cursor->base + pos;
      field->size = (size_t)length;
      field->data_offset = pos;
      pos += (size_t)length;
      break;
    }
    case ETRT_PB_WIRE_GROUP_START:
    case ETRT_PB_WIRE_GROUP_END:
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "field %u uses the deprecated group wire type %u, which is not "
                        "supported, at byte %zu",
                        number, wire, offset);
    default:
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "field %u has invalid wire type %u at byte %zu",
                        number, wire, offset);
  }
  cursor->pos = pos;
  *more = 1;
  return ETRT_OK;
}

etrt_status etrt_pb_cursor_sub(const etrt_pb_cursor *parent, const etrt_pb_field *field,
                               etrt_pb_cursor *child) {
  ETRT_RETURN_IF_ERROR(etrt_pb_field_expect(field, ETRT_PB_WIRE_LEN));
  if (parent->depth + 1 > ETRT_PB_MAX_DEPTH) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "messages nested more than %d deep at byte %zu",
                      ETRT_PB_MAX_DEPTH, field->offset);
  }
  child->base = parent->base;
  child->pos = field->data_offset;
  child->begin = field->data_offset;
  child->end = field->data_offset + field->size;
  child->depth = parent->depth + 1;
  return ETRT_OK;
}

etrt_status etrt_pb_field_expect(const etrt_pb_field *field, etrt_pb_wire wire) {
  if (field->wire == wire) return ETRT_OK;
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "field %u has wire type %s, expected %s at byte %zu",
                    field->number, etrt_pb_wire_name(field->wire), etrt_pb_wire_name(wire),
                    field->offset);
}

etrt_status etrt_pb_field_int64(const etrt_pb_field *field, int64_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_pb_field_expect(field, ETRT_PB_WIRE_VARINT));
  *out = (int64_t)field->value;
  return ETRT_OK;
}

etrt_status etrt_pb_field_int32(const etrt_pb_field *field, int32_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_pb_field_expect(field, ETRT_PB_WIRE_VARINT));
  /* Negative int32 values are written sign-extended to 64 bits. */
  int64_t v = (int64_t)field->value;
  if (v < INT32_MIN || v > INT32_MAX) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "field %u: value %lld out of range for int32 at byte %zu", field->number,
                      (long long)v, field->offset);
  }
  *out = (int32_t)v;
  return ETRT_OK;
}

etrt_status etrt_pb_field_float(const etrt_pb_field *field, float *out) {
  ETRT_RETURN_IF_ERROR(etrt_pb_field_expect(field, ETRT_PB_WIRE_FIXED32));
  uint32_t bits = (uint32_t)field->value;
  memcpy(out, &bits, sizeof bits);
  return ETRT_OK;
}

static etrt_pb_wire etrt_pb_scalar_wire(etrt_pb_scalar kind) {
  switch (kind) {
    case ETRT_PB_SCALAR_FIXED32:
      return ETRT_PB_WIRE_FIXED32;
    case ETRT_PB_SCALAR_FIXED64:
      return ETRT_PB_WIRE_FIXED64;
    case ETRT_PB_SCALAR_VARINT:
      break;
  }
  return ETRT_PB_WIRE_VARINT;
}

etrt_status etrt_pb_repeated_begin(const etrt_pb_field *field, etrt_pb_scalar kind,
                                   etrt_pb_repeated *it, size_t *count) {
  memset(it, 0, sizeof *it);
  it->kind = kind;
  if (field->wire == etrt_pb_scalar_wire(kind)) {
    it->single = field->value;
    it->single_left = 1;
    *count = 1;
    return ETRT_OK;
  }
  if (field->wire != ETRT_PB_WIRE_LEN) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "repeated field %u has wire type %s, expected %s or packed at byte %zu",
                      field->number, etrt_pb_wire_name(field->wire),
                      etrt_pb_wire_name(etrt_pb_scalar_wire(kind)), field->offset);
  }
  /* The payload is a view into a buffer whose start is data - data_offset. */
  it->base = field->data - field->data_offset;
  it->pos = field->data_offset;
  it->end = field->data_offset + field->size;
  if (kind == ETRT_PB_SCALAR_VARINT) {
    size_t n = 0, pos = it->pos;
    uint64_t ignored;
    while (pos < it->end) {
      ETRT_RETURN_IF_ERROR(etrt_pb_read_varint(it->base, &pos, it->end, &ignored));
      ++n;
    }
    *count = n;
    return ETRT_OK;
  }
  size_t width = kind == ETRT_PB_SCALAR_FIXED32 ? 4 : 8;
  if (field->size % width != 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "packed field %u: %zu bytes is not a whole number of %zu-byte values at "
                      "byte %zu",
                      field->number, field->size, width, field->offset);
  }
  *count = field->size / width;
  return ETRT_OK;
}

int etrt_pb_repeated_next(etrt_pb_repeated *it, uint64_t *value) {
  if (it->single_left) {
    it->single_left = 0;
    *value = it->single;
    return 1;
  }
  if (it->base == NULL || it->pos >= it->end) return 0;
  switch (it->kind) {
    case ETRT_PB_SCALAR_VARINT:
      return etrt_pb_read_varint(it->base, &it->pos, it->end, value) == ETRT_OK;
    case ETRT_PB_SCALAR_FIXED32:
      return etrt_pb_read_fixed(it->base, &it->pos, it->end, 4, value) == ETRT_OK;
    case ETRT_PB_SCALAR_FIXED64:
      return etrt_pb_read_fixed(it->base, &it->pos, it->end, 8, value) == ETRT_OK;
  }
  return 0;
}

/* --- writing ------------------------------------------------------------------------- */

void etrt_pb_writer_init(etrt_pb_writer *writer) { memset(writer, 0, sizeof *writer); }

void etrt_pb_writer_release(etrt_pb_writer *writer) {
  free(writer->data);
  memset(writer, 0, sizeof *writer);
}

etrt_status etrt_pb_writer_finish(etrt_pb_writer *writer, uint8_t **data, size_t *size) {
  *data = NULL;
  *size = 0;
  if (writer->failed) {
    etrt_pb_writer_release(writer);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory encoding a protobuf message");
  }
  if (writer->data == NULL) {
    /* An empty message is still a buffer the caller can free. */
    writer->data = malloc(1);
    if (writer->data == NULL) {
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory encoding a protobuf message");
    }
  }
  *data = writer->data;
  *size = writer->size;
  memset(writer, 0, sizeof *writer);
  return ETRT_OK;
}

void etrt_pb_write_raw(etrt_pb_writer *writer, const void *data, size_t size) {
  if (writer->failed || size == 0) return;
  size_t needed;
  if (etrt_add_overflow_size(writer->size, size, &needed)) {
    writer->failed = 1;
    return;
  }
  if (needed > writer->capacity) {
    size_t capacity = writer->capacity ? writer->capacity : 256;
    while (capacity < needed) {
      if (etrt_mul_overflow_size(capacity, 2, &capacity)) {
        writer->failed = 1;
        return;
      }
    }
    uint8_t *grown = realloc(writer->data, capacity);
    if (grown == NULL) {
      writer->failed = 1;
      return;
    }
    writer->data = grown;
    writer->capacity = capacity;
  }
  memcpy(writer->data + writer->size, data, size);
  writer->size = needed;
}

void etrt_pb_write_varint(etrt_pb_writer *writer, uint64_t value) {
  uint8_t bytes[ETRT_PB_MAX_VARINT_BYTES];
  size_t n = 0;
  do {
    uint8_t byte = (uint8_t)(value & 0x7f);
    value >>= 7;
    bytes[n++] = byte | (value ? 0x80 : 0);
  } while (value);
  etrt_pb_write_raw(writer, bytes, n);
}

void etrt_pb_write_tag(etrt_pb_writer *writer, uint32_t number, etrt_pb_wire wire) {
  etrt_pb_write_varint(writer, ((uint64_t)number << 3) | (uint64_t)wire);
}

void etrt_pb_write_varint_field(etrt_pb_writer *writer, uint32_t number, uint64_t value) {
  etrt_pb_write_tag(writer, number, ETRT_PB_WIRE_VARINT);
  etrt_pb_write_varint(writer, value);
}

void etrt_pb_write_fixed32_field(etrt_pb_writer *writer, uint32_t number, uint32_t value) {
  uint8_t bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = (uint8_t)(value >> (8 * i));
  etrt_pb_write_tag(writer, number, ETRT_PB_WIRE_FIXED32);
  etrt_pb_write_raw(writer, bytes, 4);
}

void etrt_pb_write_fixed64_field(etrt_pb_writer *writer, uint32_t number, uint64_t value) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = (uint8_t)(value >> (8 * i));
  etrt_pb_write_tag(writer, number, ETRT_PB_WIRE_FIXED64);
  etrt_pb_write_raw(writer, bytes, 8);
}

void etrt_pb_write_bytes_field(etrt_pb_writer *writer, uint32_t number, const void *data,
                               size_t size) {
  etrt_pb_write_tag(writer, number, ETRT_PB_WIRE_LEN);
  etrt_pb_write_varint(writer, size);
  etrt_pb_write_raw(writer, data, size);
}

void etrt_pb_write_string_field(etrt_pb_writer *writer, uint32_t number, const char *text) {
  etrt_pb_write_bytes_field(writer, number, text, strlen(text));
}

void etrt_pb_write_message_field(etrt_pb_writer *writer, uint32_t number,
                                 const etrt_pb_writer *message) {
  if (message->failed) {
    writer->failed = 1;
    return;
  }
  etrt_pb_write_bytes_field(writer, number, message->data, message->size);
}
