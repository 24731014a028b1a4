#include "pte/flatbuffers_builder.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"

/* uoffsets and soffsets are 32-bit signed-positive: keep every position below 2 GiB. */
#define FB_MAX_SIZE ((size_t)INT32_MAX)

void etrt_fb_builder_init(etrt_fb_builder *b) { memset(b, 0, sizeof *b); }

void etrt_fb_builder_release(etrt_fb_builder *b) {
  free(b->buf);
  free(b->vtables);
  memset(b, 0, sizeof *b);
}

static bool grow(etrt_fb_builder *b, size_t needed) {
  if (b->failed) return false;
  if (needed > FB_MAX_SIZE) {
    b->failed = true;
    return false;
  }
  if (needed <= b->capacity) return true;
  size_t capacity = b->capacity ? b->capacity : 4096;
  while (capacity < needed) capacity = capacity > FB_MAX_SIZE / 2 ? FB_MAX_SIZE : capacity * 2;
  uint8_t *buf = realloc(b->buf, capacity);
  if (buf == NULL) {
    b->failed = true;
    b->out_of_memory = true;
    return false;
  }
  b->buf = buf;
  b->capacity = capacity;
  return true;
}

size_t etrt_fb_reserve(etrt_fb_builder *b, size_t n, size_t align) {
  size_t start = etrt_align_up(b->size, align ? align : 1);
  size_t end;
  if (start < b->size || etrt_add_overflow_size(start, n, &end) || !grow(b, end)) return 0;
  memset(b->buf + b->size, 0, end - b->size);
  b->size = end;
  return start;
}

uint8_t *etrt_fb_at(etrt_fb_builder *b, size_t pos) { return b->failed ? NULL : b->buf + pos; }

static void store_u32(etrt_fb_builder *b, size_t pos, uint32_t v) {
  if (!b->failed) memcpy(b->buf + pos, &v, 4);
}

void etrt_fb_builder_start(etrt_fb_builder *b, const char *identifier, size_t header) {
  size_t pos = etrt_fb_reserve(b, 8 + header, 16);
  if (!b->failed) memcpy(b->buf + pos + 4, identifier, 4);
}

void etrt_fb_set_root(etrt_fb_builder *b, size_t table) { store_u32(b, 0, (uint32_t)table); }

void etrt_fb_table_begin(etrt_fb_builder *b) {
  b->in_table = true;
  b->field_count = 0;
}

static void add_field(etrt_fb_builder *b, int slot, const void *bytes, size_t size,
                      bool is_offset) {
  if (b->field_count >= ETRT_FB_MAX_FIELDS || slot < 0 || slot >= ETRT_FB_MAX_FIELDS) {
    b->failed = true; /* a writer bug, reported as a failed build */
    return;
  }
  etrt_fb_builder_field *f = &b->fields[b->field_count++];
  memset(f, 0, sizeof *f);
  f->slot = slot;
  f->size = (uint8_t)size;
  f->is_offset = is_offset;
  if (bytes) memcpy(f->bytes, bytes, size);
}

#define FB_ADDER(name, type)                                                \
  void etrt_fb_add_##name(etrt_fb_builder *b, int slot, type v, type def) { \
    if (v != def) add_field(b, slot, &v, sizeof v, false);                  \
  }

FB_ADDER(u8, uint8_t)
FB_ADDER(i8, int8_t)
FB_ADDER(u16, uint16_t)
FB_ADDER(u32, uint32_t)
FB_ADDER(i32, int32_t)
FB_ADDER(u64, uint64_t)
FB_ADDER(i64, int64_t)

void etrt_fb_add_f64(etrt_fb_builder *b, int slot, double v, double def) {
  /* Compare bits, so that -0.0 and NaN payloads survive a round trip. */
  if (memcmp(&v, &def, sizeof v) != 0) add_field(b, slot, &v, sizeof v, false);
}

void etrt_fb_add_bool(etrt_fb_builder *b, int slot, bool v, bool def) {
  uint8_t byte = v ? 1 : 0;
  if (v != def) add_field(b, slot, &byte, 1, false);
}

void etrt_fb_add_offset(etrt_fb_builder *b, int slot) { add_field(b, slot, NULL, 4, true); }

static int field_order(const void *a, const void *b) {
  const etrt_fb_builder_field *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return x->slot - y->slot;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Finds an earlier identical vtable; returns its position or SIZE_MAX. */
static size_t find_vtable(const etrt_fb_builder *b, const uint8_t *vt, size_t vsize) {
  if (b->vtable_slots == 0) return SIZE_MAX;
  size_t mask = b->vtable_slots - 1;
  for (size_t i = (size_t)hash_bytes(vt, vsize) & mask;; i = (i + 1) & mask) {
    size_t pos = b->vtables[i];
    if (pos == 0) return SIZE_MAX;
    if (memcmp(b->buf + pos, vt, vsize) == 0) return pos;
  }
}

static void remember_vtable(etrt_fb_builder *b, size_t pos, size_t vsize) {
  if (b->failed) return;
  if ((b->vtable_count + 1) * 2 > b->vtable_slots) {
    size_t slots = b->vtable_slots ? b->vtable_slots * 2 : 64;
    size_t *table = calloc(slots, sizeof *table);
    if (table == NULL) {
      b->failed = b->out_of_memory = true;
      return;
    }
    for (size_t i = 0; i < b->vtable_slots; ++i) {
      size_t old = b->vtables[i];
      if (old == 0) continue;
      uint16_t old_size;
      memcpy(&old_size, b->buf + old, 2);
      size_t j = (size_t)hash_bytes(b->buf + old, old_size) & (slots - 1);
      while (table[j] != 0) j = (j + 1) & (slots - 1);
      table[j] = old;
    }
    free(b->vtables);
    b->vtables = table;
    b->vtable_slots = slots;
  }
  size_t mask = b->vtable_slots - 1;
  size_t i = (size_t)hash_bytes(b->buf + pos, vsize) & mask;
  while (b->vtables[i] != 0) i = (i + 1) & mask;
  b->vtables[i] = pos; /* never 0: the buffer starts with the root offset */
  b->vtable_count++;
}

size_t etrt_fb_table_end(etrt_fb_builder *b) {
  b->in_table = false;
  if (b->failed) return 0;
  qsort(b->fields, (size_t)b->field_count, sizeof b->fields[0], field_order);

  /* Layout inside the table: the soffset, then fields by decreasing size so that
   * each is naturally aligned once the table itself is aligned to the largest. */
  size_t align = 4, offset = 4;
  int max_slot = -1;
  for (int i = 0; i < b->field_count; ++i) {
    etrt_fb_builder_field *f = &b->fields[i];
    if (f->size > align) align = f->size;
    offset = etrt_align_up(offset, f->size);
    f->pos = offset; /* relative for now */
    offset += f->size;
    if (f->slot > max_slot) max_slot = f->slot;
  }
  size_t table_size = offset;
  size_t vsize = 4 + 2 * (size_t)(max_slot + 1);
  uint8_t vt[4 + 2 * ETRT_FB_MAX_FIELDS];
  memset(vt, 0, sizeof vt);
  uint16_t v16 = (uint16_t)vsize;
  memcpy(vt, &v16, 2);
  v16 = (uint16_t)table_size;
  memcpy(vt + 2, &v16, 2);
  for (int i = 0; i < b->field_count; ++i) {
    v16 = (uint16_t)b->fields[i].pos;
    memcpy(vt + 4 + 2 * b->fields[i].slot, &v16, 2);
  }

  size_t vpos = find_vtable(b, vt, vsize);
  if (vpos == SIZE_MAX) {
    vpos = etrt_fb_reserve(b, vsize, 2);
    if (b->failed) return 0;
    memcpy(b->buf + vpos, vt, vsize);
    remember_vtable(b, vpos, vsize);
  }
  size_t pos = etrt_fb_reserve(b, table_size, align);
  if (b->failed) return 0;
  int32_t soffset = (int32_t)(pos - vpos);
  memcpy(b->buf + pos, &soffset, 4);
  for (int i = 0; i < b->field_count; ++i) {
    etrt_fb_builder_field *f = &b->fields[i];
    f->pos += pos;
    if (!f->is_offset) memcpy(b->buf + f->pos, f->bytes, f->size);
  }
  return pos;
}

size_t etrt_fb_slot_pos(const etrt_fb_builder *b, int slot) {
  for (int i = 0; i < b->field_count; ++i) {
    if (b->fields[i].slot == slot) return b->fields[i].pos;
  }
  return 0;
}

void etrt_fb_patch(etrt_fb_builder *b, size_t ref, size_t target) {
  if (b->failed) return;
  if (ref == 0 || target <= ref) {
    b->failed = true;
    return;
  }
  store_u32(b, ref, (uint32_t)(target - ref));
}

size_t etrt_fb_add_string(etrt_fb_builder *b, const char *data, size_t size) {
  size_t total;
  if (size > UINT32_MAX || etrt_add_overflow_size(size, 5, &total)) {
    b->failed = true;
    return 0;
  }
  size_t pos = etrt_fb_reserve(b, total, 4);
  if (b->failed) return 0;
  store_u32(b, pos, (uint32_t)size);
  if (size) memcpy(b->buf + pos + 4, data, size);
  return pos;
}

size_t etrt_fb_add_vector(etrt_fb_builder *b, const void *elems, size_t count, size_t elem_size,
                          size_t align) {
  size_t bytes;
  if (count > UINT32_MAX || etrt_mul_overflow_size(count, elem_size, &bytes)) {
    b->failed = true;
    return 0;
  }
  if (align < 4) align = 4;
  /* The elements, not the length before them, carry the alignment. */
  size_t start = etrt_align_up(b->size + 4, align) - 4;
  if (start > b->size) etrt_fb_reserve(b, start - b->size, 1);
  size_t pos = etrt_fb_reserve(b, 4 + bytes, 4);
  if (b->failed) return 0;
  store_u32(b, pos, (uint32_t)count);
  if (bytes && elems) memcpy(b->buf + pos + 4, elems, bytes);
  return pos;
}

size_t etrt_fb_add_offset_vector(etrt_fb_builder *b, size_t count) {
  return etrt_fb_add_vector(b, NULL, count, 4, 4);
}

etrt_status etrt_fb_builder_status(const etrt_fb_builder *b) {
  if (b->out_of_memory)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "FlatBuffer builder: out of memory");
  if (b->failed) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "FlatBuffer builder: the output would exceed 2 GiB or a table was malformed");
  }
  return ETRT_OK;
}
