#include "pte/flatbuffers_reader.h"

#include <string.h>

#include "base/checked.h"
#include "base/status.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the FlatBuffers reader hands out views of little-endian data: little-endian hosts only"
#endif

#define FB_BUDGET_PER_BYTE 32u
#define FB_BUDGET_FLOOR 100000u
#define FB_MEMORY_PER_BYTE 32u
#define FB_MEMORY_FLOOR (4u << 20)

void etrt_fb_reader_init(etrt_fb_reader *reader, const uint8_t *data, size_t size) {
  reader->data = data;
  reader->size = size;
  reader->budget = (uint64_t)size * FB_BUDGET_PER_BYTE + FB_BUDGET_FLOOR;
  reader->memory_budget = (uint64_t)size * FB_MEMORY_PER_BYTE + FB_MEMORY_FLOOR;
  reader->tables = 0;
}

etrt_status etrt_fb_charge(etrt_fb_reader *reader, uint64_t units) {
  if (units > reader->budget) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "the file asks for more work than its size justifies (%zu bytes); "
                      "refused as malformed",
                      reader->size);
  }
  reader->budget -= units;
  return ETRT_OK;
}

etrt_status etrt_fb_charge_memory(etrt_fb_reader *reader, uint64_t bytes) {
  if (bytes > reader->memory_budget) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "decoding the file would take more memory than its size justifies (%zu bytes); "
        "refused as malformed",
        reader->size);
  }
  reader->memory_budget -= bytes;
  return ETRT_OK;
}

bool etrt_fb_has_identifier(const uint8_t *data, size_t size, const char *identifier) {
  return size >= 8 && memcmp(data + 4, identifier, 4) == 0;
}

static uint16_t load_u16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint32_t load_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* The verifier's alignment rule: relative to the buffer's start. The start itself
 * is checked 4-byte aligned in memory by etrt_fb_root, so 2- and 4-byte alignment
 * hold in memory too. */
static bool aligned(size_t pos, size_t align) { return align <= 1 || pos % align == 0; }

/* Vectors are handed out as typed views, so their elements must also be aligned in
 * memory (the same thing whenever the buffer is 8-byte aligned, as loaded files are). */
static bool aligned_in_memory(const etrt_fb_reader *r, size_t pos, size_t align) {
  return align <= 1 || ((uintptr_t)(r->data + pos)) % align == 0;
}

etrt_status etrt_fb_table_at(etrt_fb_reader *r, size_t pos, int depth, const char *type,
                             etrt_fb_table *out) {
  if (depth < 0 || depth >= ETRT_FB_MAX_DEPTH) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: nested deeper than %d tables", type, pos,
                      ETRT_FB_MAX_DEPTH);
  }
  if (r->tables >= ETRT_FB_MAX_TABLES) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: the data holds more than %u tables", type, pos,
                      ETRT_FB_MAX_TABLES);
  }
  r->tables++;
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(r, 1));
  if (!etrt_range_ok(pos, 4, r->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: table starts past the end of the data (%zu bytes)",
                      type, pos, r->size);
  }
  if (!aligned(pos, 4)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: table is not 4-byte aligned", type, pos);
  }
  int32_t soffset = (int32_t)load_u32(r->data + pos);
  int64_t vt = (int64_t)pos - (int64_t)soffset;
  if (vt < 0 || !etrt_range_ok((uint64_t)vt, 2, r->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: vtable offset %lld lies outside the data (%zu bytes)",
                      type, pos, (long long)vt, r->size);
  }
  size_t vtable = (size_t)vt;
  if (!aligned(vtable, 2)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: vtable at byte offset %zu is not 2-byte aligned",
                      type, pos, vtable);
  }
  /* The verifier asks only that the vtable be even-sized and inside the data; one
   * shorter than 4 bytes declares no fields (all read as absent). The inline table
   * size it declares is not checked by the verifier, so it is not checked here. */
  uint16_t vsize = load_u16(r->data + vtable);
  if (vsize % 2 != 0 || !etrt_range_ok(vtable, vsize, r->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s at byte offset %zu: vtable at byte offset %zu has a bad size %u", type,
                      pos, vtable, (unsigned)vsize);
  }
  uint16_t tsize = vsize >= 4 ? load_u16(r->data + vtable + 2) : 0;
  out->reader = r;
  out->pos = pos;
  out->vtable = vtable;
  out->vtable_size = vsize;
  out->table_size = tsize;
  out->depth = depth;
  out->type = type;
  return ETRT_OK;
}

etrt_status etrt_fb_root(etrt_fb_reader *r, const char *type, etrt_fb_table *out) {
  if (r->size < 8) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s: %zu bytes is too short for a FlatBuffer (root offset + identifier)",
                      type, r->size);
  }
  if (!aligned_in_memory(r, 0, 4)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: the data is not 4-byte aligned in memory",
                      type);
  }
  uint32_t root = load_u32(r->data);
  if (root == 0 || root > (uint32_t)INT32_MAX || root >= r->size) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s: root table offset %u at byte offset 0 lies outside the data (%zu bytes)",
                      type, root, r->size);
  }
  return etrt_fb_table_at(r, root, 0, type, out);
}

/* The voffset of `slot`, 0 when the field is absent. */
static uint16_t field_offset(const etrt_fb_table *t, int slot) {
  size_t entry = 4 + 2 * (size_t)slot;
  if (slot < 0 || entry + 2 > t->vtable_size) return 0;
  return load_u16(t->reader->data + t->vtable + entry);
}

bool etrt_fb_table_has(const etrt_fb_table *t, int slot) { return field_offset(t, slot) != 0; }

size_t etrt_fb_field_offset(const etrt_fb_table *t, int slot) {
  return t->pos + field_offset(t, slot);
}

/* Byte offset of a present field of `size` bytes (scalars, and 4-byte offsets);
 * 0 when absent (a field can never sit at offset 0: that is the soffset). As in the
 * verifier, the field must lie inside the data and be aligned to its size; it may
 * end past the inline size the vtable declares (writers emit such tables). */
static etrt_status field_pos(const etrt_fb_table *t, int slot, const char *field, size_t size,
                             size_t *pos) {
  uint16_t voff = field_offset(t, slot);
  *pos = 0;
  if (voff == 0) return ETRT_OK;
  size_t at = t->pos + voff;
  if (!etrt_range_ok(at, size, t->reader->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: field (%zu bytes at +%u) runs past the end of the "
                      "data (%zu bytes)",
                      t->type, field, at, size, (unsigned)voff, t->reader->size);
  }
  if (!aligned(at, size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: field of %zu bytes is not %zu-byte aligned",
                      t->type, field, at, size, size);
  }
  *pos = at;
  return ETRT_OK;
}

static etrt_status read_scalar(const etrt_fb_table *t, int slot, const char *field, size_t size,
                               void *out) {
  size_t pos;
  ETRT_RETURN_IF_ERROR(field_pos(t, slot, field, size, &pos));
  if (pos != 0) memcpy(out, t->reader->data + pos, size);
  return ETRT_OK;
}

#define FB_SCALAR_READER(name, type)                                                             \
  etrt_status etrt_fb_read_##name(const etrt_fb_table *t, int slot, const char *field, type def, \
                                  type *out) {                                                   \
    type v = def;                                                                                \
    ETRT_RETURN_IF_ERROR(read_scalar(t, slot, field, sizeof v, &v));                             \
    *out = v;                                                                                    \
    return ETRT_OK;                                                                              \
  }

FB_SCALAR_READER(u8, uint8_t)
FB_SCALAR_READER(i8, int8_t)
FB_SCALAR_READER(u16, uint16_t)
FB_SCALAR_READER(u32, uint32_t)
FB_SCALAR_READER(i32, int32_t)
FB_SCALAR_READER(u64, uint64_t)
FB_SCALAR_READER(i64, int64_t)
FB_SCALAR_READER(f64, double)

etrt_status etrt_fb_read_bool(const etrt_fb_table *t, int slot, const char *field, bool def,
                              bool *out) {
  uint8_t v = def ? 1 : 0;
  ETRT_RETURN_IF_ERROR(read_scalar(t, slot, field, 1, &v));
  *out = v != 0;
  return ETRT_OK;
}

/* Follows the uoffset stored at `pos` (a field or a vector element). */
static etrt_status follow(etrt_fb_reader *r, size_t pos, const char *type, const char *field,
                          size_t *target) {
  if (!aligned(pos, 4)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: offset is not 4-byte aligned", type, field, pos);
  }
  if (!etrt_range_ok(pos, 4, r->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: offset lies outside the data (%zu bytes)", type,
                      field, pos, r->size);
  }
  uint32_t off = load_u32(r->data + pos);
  if (off == 0 || off > (uint32_t)INT32_MAX || !etrt_range_ok(pos, off, r->size) ||
      pos + off >= r->size) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: offset %u points outside the data (%zu bytes)",
                      type, field, pos, off, r->size);
  }
  *target = pos + off;
  return ETRT_OK;
}

static etrt_status string_at(etrt_fb_reader *r, size_t pos, const char *type, const char *field,
                             etrt_fb_str *out) {
  if (!aligned(pos, 4) || !etrt_range_ok(pos, 4, r->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s: string at byte offset %zu is misaligned or outside the data", type,
                      field, pos);
  }
  uint32_t len = load_u32(r->data + pos);
  if (!etrt_range_ok(pos + 4, (uint64_t)len + 1, r->size)) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "%s.%s: string at byte offset %zu (length %u) runs past the end of the data (%zu bytes)",
        type, field, pos, len, r->size);
  }
  if (r->data[pos + 4 + len] != 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s: string at byte offset %zu lacks its terminating NUL", type, field,
                      pos);
  }
  out->data = (const char *)(r->data + pos + 4);
  out->size = len;
  return ETRT_OK;
}

etrt_status etrt_fb_read_string(const etrt_fb_table *t, int slot, const char *field,
                                etrt_fb_str *out) {
  size_t pos = 0, target = 0;
  out->data = NULL;
  out->size = 0;
  ETRT_RETURN_IF_ERROR(field_pos(t, slot, field, 4, &pos));
  if (pos == 0) return ETRT_OK;
  ETRT_RETURN_IF_ERROR(follow(t->reader, pos, t->type, field, &target));
  return string_at(t->reader, target, t->type, field, out);
}

etrt_status etrt_fb_read_table(const etrt_fb_table *t, int slot, const char *field,
                               const char *type, etrt_fb_table *out, bool *present) {
  size_t pos = 0, target = 0;
  *present = false;
  ETRT_RETURN_IF_ERROR(field_pos(t, slot, field, 4, &pos));
  if (pos == 0) return ETRT_OK;
  ETRT_RETURN_IF_ERROR(follow(t->reader, pos, t->type, field, &target));
  ETRT_RETURN_IF_ERROR(etrt_fb_table_at(t->reader, target, t->depth + 1, type, out));
  *present = true;
  return ETRT_OK;
}

etrt_status etrt_fb_read_vector(const etrt_fb_table *t, int slot, const char *field,
                                size_t elem_size, size_t align, etrt_fb_vector *out) {
  size_t pos = 0, target = 0;
  memset(out, 0, sizeof *out);
  out->reader = t->reader;
  out->elem_size = elem_size;
  out->depth = t->depth;
  out->field = field;
  ETRT_RETURN_IF_ERROR(field_pos(t, slot, field, 4, &pos));
  if (pos == 0) return ETRT_OK;
  etrt_fb_reader *r = t->reader;
  ETRT_RETURN_IF_ERROR(follow(r, pos, t->type, field, &target));
  if (!aligned(target, 4) || !etrt_range_ok(target, 4, r->size)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s: vector at byte offset %zu is misaligned or outside the data", t->type,
                      field, target);
  }
  uint32_t count = load_u32(r->data + target);
  size_t bytes;
  if (etrt_mul_overflow_size(count, elem_size, &bytes) ||
      !etrt_range_ok(target + 4, bytes, r->size)) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "%s.%s: vector at byte offset %zu (%u elements of %zu bytes) runs past the end of "
        "the data (%zu bytes)",
        t->type, field, target, count, elem_size, r->size);
  }
  if (!aligned(target + 4, align) || !aligned_in_memory(r, target + 4, align)) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s: vector elements at byte offset %zu are not %zu-byte aligned", t->type,
                      field, target + 4, align);
  }
  out->pos = target + 4;
  out->count = count;
  out->present = true;
  return ETRT_OK;
}

etrt_status etrt_fb_read_numbers(const etrt_fb_table *t, int slot, const char *field,
                                 size_t elem_size, const void **data, size_t *count) {
  etrt_fb_vector v;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(t, slot, field, elem_size, elem_size, &v));
  *data = etrt_fb_vector_data(&v);
  *count = v.count;
  return ETRT_OK;
}

etrt_status etrt_fb_vector_table(const etrt_fb_vector *v, size_t i, const char *type,
                                 etrt_fb_table *out) {
  size_t target = 0;
  ETRT_RETURN_IF_ERROR(follow(v->reader, v->pos + i * 4, v->field, "element", &target));
  return etrt_fb_table_at(v->reader, target, v->depth + 1, type, out);
}

etrt_status etrt_fb_vector_string(const etrt_fb_vector *v, size_t i, etrt_fb_str *out) {
  size_t target = 0;
  ETRT_RETURN_IF_ERROR(follow(v->reader, v->pos + i * 4, v->field, "element", &target));
  return string_at(v->reader, target, v->field, "element", out);
}

const void *etrt_fb_vector_data(const etrt_fb_vector *v) {
  return v->count == 0 ? NULL : v->reader->data + v->pos;
}

etrt_status etrt_fb_read_union(const etrt_fb_table *t, int type_slot, const char *field,
                               uint8_t max_tag, const char *const *type_names, uint8_t *tag,
                               etrt_fb_table *value) {
  uint8_t kind = 0;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u8(t, type_slot, field, 0, &kind));
  *tag = kind;
  if (kind == 0) return ETRT_OK;
  if (kind > max_tag) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: union tag %u is not a known type (1..%u)", t->type,
                      field, t->pos + field_offset(t, type_slot), (unsigned)kind,
                      (unsigned)max_tag);
  }
  bool present = false;
  ETRT_RETURN_IF_ERROR(
      etrt_fb_read_table(t, type_slot + 1, field, type_names[kind], value, &present));
  if (!present) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: union tag %u (%s) has no value", t->type, field,
                      t->pos, (unsigned)kind, type_names[kind]);
  }
  return ETRT_OK;
}
