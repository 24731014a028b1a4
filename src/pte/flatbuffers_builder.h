/* A small FlatBuffers builder that writes front to back: a table is written first
 * with placeholder offsets, its children after it, and the offsets patched once
 * the children's positions are known. Offsets therefore point forward as the
 * format requires. Vtables are shared between identical tables. Every padding
 * byte is zero, so the output is a pure function of the calls made.
 *
 *   etrt_fb_table_begin(b);
 *   etrt_fb_add_i32(b, 0, value, 0);         // scalars equal to the default are omitted
 *   etrt_fb_add_offset(b, 2);                // a string / vector / table field
 *   size_t table = etrt_fb_table_end(b);
 *   size_t ref = etrt_fb_slot_pos(b, 2);     // take slot positions right after end
 *   etrt_fb_patch(b, ref, etrt_fb_add_string(b, "x", 1));
 *
 * Failures (memory, a buffer over 2 GiB) are sticky: etrt_fb_builder_status says so.
 */
#ifndef ETRT_PTE_FLATBUFFERS_BUILDER_H
#define ETRT_PTE_FLATBUFFERS_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"

#define ETRT_FB_MAX_FIELDS 32

typedef struct etrt_fb_builder_field {
  int slot;
  uint8_t size;
  uint8_t bytes[8];
  bool is_offset;
  size_t pos; /* set at table end */
} etrt_fb_builder_field;

typedef struct etrt_fb_builder {
  uint8_t *buf;
  size_t size;
  size_t capacity;
  bool failed;
  bool out_of_memory;
  bool in_table;
  etrt_fb_builder_field fields[ETRT_FB_MAX_FIELDS];
  int field_count;
  /* Positions of the vtables written so far, in an open-addressed hash table. */
  size_t *vtables;
  size_t vtable_slots;
  size_t vtable_count;
} etrt_fb_builder;

void etrt_fb_builder_init(etrt_fb_builder *b);
void etrt_fb_builder_release(etrt_fb_builder *b);

/* Starts the buffer: the root offset, the 4-character identifier, then `header`
 * zeroed bytes (e.g. an extended header) that the caller fills with etrt_fb_at. */
void etrt_fb_builder_start(etrt_fb_builder *b, const char *identifier, size_t header);

/* Appends `n` zero bytes aligned to `align` (a power of two); returns their offset. */
size_t etrt_fb_reserve(etrt_fb_builder *b, size_t n, size_t align);

/* Pointer to byte `pos` for filling reserved bytes; NULL after a failure. */
uint8_t *etrt_fb_at(etrt_fb_builder *b, size_t pos);

void etrt_fb_table_begin(etrt_fb_builder *b);
void etrt_fb_add_u8(etrt_fb_builder *b, int slot, uint8_t v, uint8_t def);
void etrt_fb_add_i8(etrt_fb_builder *b, int slot, int8_t v, int8_t def);
void etrt_fb_add_bool(etrt_fb_builder *b, int slot, bool v, bool def);
void etrt_fb_add_u16(etrt_fb_builder *b, int slot, uint16_t v, uint16_t def);
void etrt_fb_add_u32(etrt_fb_builder *b, int slot, uint32_t v, uint32_t def);
void etrt_fb_add_i32(etrt_fb_builder *b, int slot, int32_t v, int32_t def);
void etrt_fb_add_u64(etrt_fb_builder *b, int slot, uint64_t v, uint64_t def);
void etrt_fb_add_i64(etrt_fb_builder *b, int slot, int64_t v, int64_t def);
void etrt_fb_add_f64(etrt_fb_builder *b, int slot, double v, double def);
void etrt_fb_add_offset(etrt_fb_builder *b, int slot);
/* Writes the vtable (or reuses an identical one) and the table; returns its offset. */
size_t etrt_fb_table_end(etrt_fb_builder *b);
/* Offset of an offset field of the table last ended. */
size_t etrt_fb_slot_pos(const etrt_fb_builder *b, int slot);

/* Makes the uoffset at `ref` point at `target` (which must come after it). */
void etrt_fb_patch(etrt_fb_builder *b, size_t ref, size_t target);

/* Sets the root table. */
void etrt_fb_set_root(etrt_fb_builder *b, size_t table);

/* A string (length, bytes, NUL); returns its offset. */
size_t etrt_fb_add_string(etrt_fb_builder *b, const char *data, size_t size);

/* A vector of `count` scalars or structs of `elem_size` bytes copied from `elems`
 * (little-endian host; NULL leaves them zero), elements aligned to `align`; returns
 * its offset. */
size_t etrt_fb_add_vector(etrt_fb_builder *b, const void *elems, size_t count, size_t elem_size,
                          size_t align);

/* A vector of `count` offsets to fill with etrt_fb_patch(b, etrt_fb_element(v, i), ...). */
size_t etrt_fb_add_offset_vector(etrt_fb_builder *b, size_t count);
static inline size_t etrt_fb_element(size_t vector, size_t i) { return vector + 4 + 4 * i; }

/* ETRT_OK, or what went wrong (out of memory, too large). */
etrt_status etrt_fb_builder_status(const etrt_fb_builder *b);

#endif
