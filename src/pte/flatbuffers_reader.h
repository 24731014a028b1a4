/* A small, bounds-checked FlatBuffers reader: tables with vtables, scalars with
 * defaults, strings, vectors (of scalars, structs, tables, strings), unions and
 * nested tables. Every offset, length and alignment is checked against the buffer
 * before anything is read through it, and a failure names the schema type, the
 * field and the byte offset.
 *
 * What is accepted and refused follows the official FlatBuffers verifier (what
 * ExecuTorch runs on a program before loading it): every field, offset, vector and
 * string is bounded by the buffer and aligned to its size relative to the buffer's
 * start; a field is never compared with the inline size its table's vtable
 * declares, since the verifier does not either and real writers rely on it. The
 * verifier's limits apply too: tables nest at most 64 deep and at most 1,000,000
 * tables are visited.
 *
 * Offsets between tables only point forward in FlatBuffers (unsigned), so walks
 * terminate; the depth limit and a work budget keep hostile buffers (many elements
 * sharing one large child) linear in the buffer size.
 */
#ifndef ETRT_PTE_FLATBUFFERS_READER_H
#define ETRT_PTE_FLATBUFFERS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"

/* The verifier's defaults: the root table is at depth 1 and no table may sit
 * deeper than 64; no more than 1,000,000 tables per buffer. */
#define ETRT_FB_MAX_DEPTH 64
#define ETRT_FB_MAX_TABLES 1000000u

typedef struct etrt_fb_reader {
  const uint8_t *data;
  size_t size;
  uint64_t budget;        /* elements and tables that may still be visited */
  uint64_t memory_budget; /* bytes a decoder may still allocate for what it reads */
  uint32_t tables;        /* tables visited so far */
} etrt_fb_reader;

typedef struct etrt_fb_table {
  etrt_fb_reader *reader;
  size_t pos;    /* byte offset of the table */
  size_t vtable; /* byte offset of its vtable */
  uint16_t vtable_size;
  uint16_t table_size; /* as the vtable declares it (0 when the vtable is too short
                        * to say); informative only, fields are not bounded by it */
  int depth;           /* 0 for the root */
  const char *type;    /* schema type name, for messages */
} etrt_fb_table;

typedef struct etrt_fb_vector {
  etrt_fb_reader *reader;
  size_t pos;   /* byte offset of the first element (after the length) */
  size_t count; /* 0 when absent */
  size_t elem_size;
  int depth; /* depth of the table holding the vector */
  bool present;
  const char *field; /* for messages */
} etrt_fb_vector;

typedef struct etrt_fb_str {
  const char *data; /* NUL-terminated; NULL when absent */
  size_t size;
} etrt_fb_str;

/* Both budgets are proportional to the buffer (32 visits and 32 bytes of decoded
 * structs per byte, plus a floor): far above what real files need, and they keep a
 * small hostile file whose tables share children from costing unbounded time or
 * memory. */
void etrt_fb_reader_init(etrt_fb_reader *reader, const uint8_t *data, size_t size);

/* Spends `units` of the work budget; fails once it is exhausted. */
etrt_status etrt_fb_charge(etrt_fb_reader *reader, uint64_t units);

/* Spends `bytes` of the memory budget, for decoders that allocate per element. */
etrt_status etrt_fb_charge_memory(etrt_fb_reader *reader, uint64_t bytes);

/* True when bytes 4..8 hold `identifier` (4 characters). */
bool etrt_fb_has_identifier(const uint8_t *data, size_t size, const char *identifier);

/* The root table (uoffset at byte 0). */
etrt_status etrt_fb_root(etrt_fb_reader *reader, const char *type, etrt_fb_table *out);

/* The table at byte offset `pos`, with its vtable checked; `depth` is 0 for the
 * root, so a table at depth ETRT_FB_MAX_DEPTH or more is refused. */
etrt_status etrt_fb_table_at(etrt_fb_reader *reader, size_t pos, int depth, const char *type,
                             etrt_fb_table *out);

/* True when field `slot` (0-based, schema order) is present. */
bool etrt_fb_table_has(const etrt_fb_table *table, int slot);

/* Byte offset of field `slot` for messages: the field's own offset when present,
 * the table's otherwise. */
size_t etrt_fb_field_offset(const etrt_fb_table *table, int slot);

/* Scalars: `*out` receives the stored value or `def` when the field is absent. */
etrt_status etrt_fb_read_u8(const etrt_fb_table *t, int slot, const char *field, uint8_t def,
                            uint8_t *out);
etrt_status etrt_fb_read_i8(const etrt_fb_table *t, int slot, const char *field, int8_t def,
                            int8_t *out);
etrt_status etrt_fb_read_bool(const etrt_fb_table *t, int slot, const char *field, bool def,
                              bool *out);
etrt_status etrt_fb_read_u16(const etrt_fb_table *t, int slot, const char *field, uint16_t def,
                             uint16_t *out);
etrt_status etrt_fb_read_u32(const etrt_fb_table *t, int slot, const char *field, uint32_t def,
                             uint32_t *out);
etrt_status etrt_fb_read_i32(const etrt_fb_table *t, int slot, const char *field, int32_t def,
                             int32_t *out);
etrt_status etrt_fb_read_u64(const etrt_fb_table *t, int slot, const char *field, uint64_t def,
                             uint64_t *out);
etrt_status etrt_fb_read_i64(const etrt_fb_table *t, int slot, const char *field, int64_t def,
                             int64_t *out);
etrt_status etrt_fb_read_f64(const etrt_fb_table *t, int slot, const char *field, double def,
                             double *out);

/* A string field; out->data == NULL when absent. */
etrt_status etrt_fb_read_string(const etrt_fb_table *t, int slot, const char *field,
                                etrt_fb_str *out);

/* A sub-table field; *present false (and *out untouched) when absent. */
etrt_status etrt_fb_read_table(const etrt_fb_table *t, int slot, const char *field,
                               const char *type, etrt_fb_table *out, bool *present);

/* A vector field whose elements are `elem_size` bytes, each aligned to `align`
 * (in memory: the element type's alignment; 4 for tables and strings).
 * Absent: count 0, present false. */
etrt_status etrt_fb_read_vector(const etrt_fb_table *t, int slot, const char *field,
                                size_t elem_size, size_t align, etrt_fb_vector *out);

/* A vector of little-endian numbers, as a view: `*data` (NULL when empty) and
 * `*count`; elements aligned to their size. */
etrt_status etrt_fb_read_numbers(const etrt_fb_table *t, int slot, const char *field,
                                 size_t elem_size, const void **data, size_t *count);

/* Fills any {data, count} view struct from a vector field of its element type. */
#define ETRT_FB_READ_VIEW(t, slot, field, view)                                                  \
  etrt_fb_read_numbers((t), (slot), (field), sizeof *(view)->data, (const void **)&(view)->data, \
                       &(view)->count)

/* Element i of a vector of tables / strings (i < count is the caller's job). */
etrt_status etrt_fb_vector_table(const etrt_fb_vector *v, size_t i, const char *type,
                                 etrt_fb_table *out);
etrt_status etrt_fb_vector_string(const etrt_fb_vector *v, size_t i, etrt_fb_str *out);

/* Address of a vector's first element (NULL when empty), checked aligned. */
const void *etrt_fb_vector_data(const etrt_fb_vector *v);

/* A union: the type field in slot `type_slot` and the value table in the next slot
 * (FlatBuffers' layout for `name: Union`). Tags above `max_tag` are refused; tag 0
 * (NONE) gives *tag 0 and no table. `type_names[tag]` names the member type. */
etrt_status etrt_fb_read_union(const etrt_fb_table *t, int type_slot, const char *field,
                               uint8_t max_tag, const char *const *type_names, uint8_t *tag,
                               etrt_fb_table *value);

#endif
