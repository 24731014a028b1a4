/* The protobuf wire format, read with bounds checks and written for tests and tools.
 *
 * Reading is a cursor over one message's bytes. Every offset a cursor or a field holds
 * is absolute (from the start of the outermost buffer), so that error messages name
 * the byte of the file where the problem is.
 *
 *   etrt_pb_cursor c;
 *   etrt_pb_cursor_init(&c, data, size);
 *   etrt_pb_field f;
 *   int more;
 *   while ((s = etrt_pb_cursor_next(&c, &f, &more)) == ETRT_OK && more) {
 *     switch (f.number) { case 1: ... etrt_pb_cursor_sub(&c, &f, &child) ... }
 *   }
 *
 * etrt_pb_cursor_next reads one whole field (a length-delimited field's payload is a
 * view, not copied) and so skips any field the caller ignores, whatever its wire type.
 * The deprecated group wire types (3, 4) are refused. Messages nest at most
 * ETRT_PB_MAX_DEPTH deep. Failures write "<what> at byte N" to the last error; callers
 * prepend the field path with etrt_error_context. */
#ifndef ETRT_BUILDER_PROTOBUF_H
#define ETRT_BUILDER_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"

#define ETRT_PB_MAX_DEPTH 64
#define ETRT_PB_MAX_VARINT_BYTES 10
#define ETRT_PB_MAX_FIELD_NUMBER 536870911u /* 2^29 - 1 */

typedef enum etrt_pb_wire {
  ETRT_PB_WIRE_VARINT = 0,
  ETRT_PB_WIRE_FIXED64 = 1,
  ETRT_PB_WIRE_LEN = 2,
  ETRT_PB_WIRE_GROUP_START = 3, /* deprecated: refused */
  ETRT_PB_WIRE_GROUP_END = 4,   /* deprecated: refused */
  ETRT_PB_WIRE_FIXED32 = 5
} etrt_pb_wire;

/* "varint", "fixed64", "length-delimited", ... */
const char *etrt_pb_wire_name(etrt_pb_wire wire);

typedef struct etrt_pb_cursor {
  const uint8_t *base; /* the outermost buffer; pos and end are offsets into it */
  size_t pos;          /* the next byte to read */
  size_t end;          /* one past this message's last byte */
  size_t begin;        /* this message's first byte (for rewinding) */
  int depth;           /* 0 for the outermost message */
} etrt_pb_cursor;

typedef struct etrt_pb_field {
  uint32_t number;
  etrt_pb_wire wire;
  size_t offset;       /* the field's tag */
  uint64_t value;      /* VARINT, FIXED64, FIXED32 (zero-extended) */
  const uint8_t *data; /* LEN: the payload, a view into the buffer */
  size_t size;         /* LEN: the payload's size */
  size_t data_offset;  /* LEN: the payload's first byte */
} etrt_pb_field;

void etrt_pb_cursor_init(etrt_pb_cursor *cursor, const uint8_t *data, size_t size);

/* Reads the next field. *more is 0 at the end of the message (and the field is
 * untouched), 1 when a field was read. */
etrt_status etrt_pb_cursor_next(etrt_pb_cursor *cursor, etrt_pb_field *field, int *more);

/* A cursor over a length-delimited field's payload, read as a nested message. Refuses
 * nesting deeper than ETRT_PB_MAX_DEPTH and a field that is not length-delimited. */
etrt_status etrt_pb_cursor_sub(const etrt_pb_cursor *parent, const etrt_pb_field *field,
                               etrt_pb_cursor *child);

/* Back to the message's first field (for a second pass). */
void etrt_pb_cursor_rewind(etrt_pb_cursor *cursor);

/* Decodes one varint from [*pos, end) of base, advancing *pos. Refuses more than 10
 * bytes, bits beyond 64 and truncation. */
etrt_status etrt_pb_read_varint(const uint8_t *base, size_t *pos, size_t end, uint64_t *value);

/* Refuses a field whose wire type is not `wire`, naming both. */
etrt_status etrt_pb_field_expect(const etrt_pb_field *field, etrt_pb_wire wire);

/* Scalar conversions that refuse values out of range for the declared type. */
etrt_status etrt_pb_field_int32(const etrt_pb_field *field, int32_t *out); /* int32, enum */
etrt_status etrt_pb_field_int64(const etrt_pb_field *field, int64_t *out); /* int64 */
etrt_status etrt_pb_field_float(const etrt_pb_field *field, float *out);   /* float */

/* Repeated scalar fields arrive packed (one length-delimited field holding many
 * values) or unpacked (one field per value), and a message may mix both; a reader
 * must accept either. */
typedef enum etrt_pb_scalar {
  ETRT_PB_SCALAR_VARINT = 0,  /* int32, int64, uint64, bool, enum */
  ETRT_PB_SCALAR_FIXED32 = 1, /* float, fixed32 */
  ETRT_PB_SCALAR_FIXED64 = 2  /* double, fixed64 */
} etrt_pb_scalar;

typedef struct etrt_pb_repeated {
  const uint8_t *base;
  size_t pos, end;
  etrt_pb_scalar kind;
  uint64_t single; /* the value of an unpacked field */
  int single_left; /* 1 until an unpacked field's value is returned */
} etrt_pb_repeated;

/* Validates one occurrence of a repeated scalar field (every value whole and well
 * formed), writes how many values it carries to *count and prepares `it` to return
 * them. Refuses a wire type that is neither the scalar's nor length-delimited. */
etrt_status etrt_pb_repeated_begin(const etrt_pb_field *field, etrt_pb_scalar kind,
                                   etrt_pb_repeated *it, size_t *count);
/* The next value as raw bits (FIXED32 zero-extended); 0 when none is left. Only valid
 * after a successful etrt_pb_repeated_begin. */
int etrt_pb_repeated_next(etrt_pb_repeated *it, uint64_t *value);

/* --- writing ---------------------------------------------------------------------------
 * A growing buffer; a failed allocation is remembered and reported by finish, so that
 * a sequence of writes needs one check. */
typedef struct etrt_pb_writer {
  uint8_t *data;
  size_t size, capacity;
  int failed;
} etrt_pb_writer;

void etrt_pb_writer_init(etrt_pb_writer *writer);
void etrt_pb_writer_release(etrt_pb_writer *writer);
/* Hands the bytes to the caller (malloc'd, free()) and resets the writer. */
etrt_status etrt_pb_writer_finish(etrt_pb_writer *writer, uint8_t **data, size_t *size);

void etrt_pb_write_raw(etrt_pb_writer *writer, const void *data, size_t size);
void etrt_pb_write_varint(etrt_pb_writer *writer, uint64_t value);
void etrt_pb_write_tag(etrt_pb_writer *writer, uint32_t number, etrt_pb_wire wire);
void etrt_pb_write_varint_field(etrt_pb_writer *writer, uint32_t number, uint64_t value);
void etrt_pb_write_fixed32_field(etrt_pb_writer *writer, uint32_t number, uint32_t value);
void etrt_pb_write_fixed64_field(etrt_pb_writer *writer, uint32_t number, uint64_t value);
void etrt_pb_write_bytes_field(etrt_pb_writer *writer, uint32_t number, const void *data,
                               size_t size);
void etrt_pb_write_string_field(etrt_pb_writer *writer, uint32_t number, const char *text);
/* A nested message written into its own writer first. */
void etrt_pb_write_message_field(etrt_pb_writer *writer, uint32_t number,
                                 const etrt_pb_writer *message);

#endif
