/* The model builder: an arena for everything a caller puts in the model, plus the
 * constant segment, extra segments and named data collected until write time. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "pte/pte.h"
#include "base/arena.h"
#include "pte/pte_format.h"

typedef struct builder_segment {
  const uint8_t *data; /* arena copy */
  size_t size;
  uint32_t alignment;
} builder_segment;

typedef struct builder_named {
  etrt_pte_str key;
  uint32_t segment_index;
} builder_named;

struct etrt_pte_builder {
  etrt_arena *arena;
  etrt_pte_program *program;
  bool failed; /* an allocation failed: write refuses */

  /* The constant segment is built in a growing malloc'd buffer. */
  uint8_t *constants;
  size_t constants_size;
  size_t constants_capacity;
  uint64_t *constant_offsets; /* [0] is the placeholder */
  size_t constant_count;
  size_t constant_capacity;

  builder_segment *segments; /* extra segments, numbered from 1 */
  size_t segments_count;
  size_t segments_capacity;
  builder_named *named;
  size_t named_count;
  size_t named_capacity;
};

etrt_status etrt_pte_builder_create(etrt_pte_builder **out) {
  *out = NULL;
  etrt_pte_builder *b = calloc(1, sizeof *b);
  if (b == NULL || (b->arena = etrt_arena_create()) == NULL ||
      (b->program = etrt_arena_alloc(b->arena, sizeof *b->program, 16)) == NULL) {
    if (b) etrt_arena_destroy(b->arena);
    free(b);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "program builder: out of memory");
  }
  *out = b;
  return ETRT_OK;
}

void etrt_pte_builder_destroy(etrt_pte_builder *b) {
  if (b == NULL) return;
  etrt_arena_destroy(b->arena);
  free(b->constants);
  free(b->constant_offsets);
  free(b->segments);
  free(b->named);
  free(b);
}

etrt_pte_program *etrt_pte_builder_program(etrt_pte_builder *b) { return b->program; }

void *etrt_pte_builder_alloc(etrt_pte_builder *b, size_t size) {
  void *p = etrt_arena_alloc(b->arena, size, 16);
  if (p == NULL) b->failed = true;
  return p;
}

void *etrt_pte_builder_alloc_array(etrt_pte_builder *b, size_t elem_size, size_t count) {
  void *p = etrt_arena_alloc_array(b->arena, elem_size, count, 16);
  if (p == NULL) b->failed = true;
  return p;
}

static const void *copy(etrt_pte_builder *b, const void *data, size_t size, size_t extra) {
  size_t total;
  if (etrt_add_overflow_size(size, extra, &total)) {
    b->failed = true;
    return NULL;
  }
  uint8_t *p = etrt_pte_builder_alloc(b, total);
  if (p != NULL && size > 0) memcpy(p, data, size);
  return p;
}

etrt_pte_str etrt_pte_builder_strn(etrt_pte_builder *b, const char *text, size_t size) {
  etrt_pte_str s = {copy(b, text, size, 1), 0}; /* arena memory is zeroed: NUL included */
  if (s.data) s.size = size;
  return s;
}

etrt_pte_str etrt_pte_builder_str(etrt_pte_builder *b, const char *text) {
  return etrt_pte_builder_strn(b, text, strlen(text));
}

etrt_pte_bytes etrt_pte_builder_bytes(etrt_pte_builder *b, const void *data, size_t size) {
  etrt_pte_bytes v = {copy(b, data, size, 0), 0};
  if (v.data) v.size = size;
  return v;
}

#define BUILDER_ARRAY(name, view_type, elem_type)                                                 \
  view_type etrt_pte_builder_##name(etrt_pte_builder *b, const elem_type *values, size_t count) { \
    view_type v = {NULL, 0};                                                                      \
    size_t size;                                                                                  \
    if (etrt_mul_overflow_size(count, sizeof(elem_type), &size)) {                                \
      b->failed = true;                                                                           \
      return v;                                                                                   \
    }                                                                                             \
    v.data = copy(b, values, size, 0);                                                            \
    if (v.data) v.count = count;                                                                  \
    return v;                                                                                     \
  }

BUILDER_ARRAY(i32s, etrt_pte_i32s, int32_t)
BUILDER_ARRAY(i64s, etrt_pte_i64s, int64_t)
BUILDER_ARRAY(f64s, etrt_pte_f64s, double)
BUILDER_ARRAY(u8s, etrt_pte_u8s, uint8_t)

/* Grows a malloc'd array to hold `needed` elements. */
static bool reserve(void **items, size_t *capacity, size_t needed, size_t elem_size) {
  if (needed <= *capacity) return true;
  size_t cap = *capacity ? *capacity * 2 : 16;
  while (cap < needed) cap *= 2;
  size_t bytes;
  if (etrt_mul_overflow_size(cap, elem_size, &bytes)) return false;
  void *p = realloc(*items, bytes);
  if (p == NULL) return false;
  *items = p;
  *capacity = cap;
  return true;
}

static etrt_status oom(etrt_pte_builder *b) {
  b->failed = true;
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "program builder: out of memory");
}

etrt_status etrt_pte_builder_add_constant(etrt_pte_builder *b, const void *data, size_t size,
                                          uint32_t *buffer_index) {
  if (b->constant_count == 0) {
    if (!reserve((void **)&b->constant_offsets, &b->constant_capacity, 1, sizeof(uint64_t)))
      return oom(b);
    b->constant_offsets[b->constant_count++] = 0; /* the placeholder */
  }
  if (b->constant_count >= UINT32_MAX) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "program builder: too many constants");
  }
  size_t start = etrt_align_up(b->constants_size, PTE_TENSOR_ALIGNMENT), end;
  if (start < b->constants_size || etrt_add_overflow_size(start, size, &end)) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "program builder: constants too large");
  }
  if (!reserve((void **)&b->constants, &b->constants_capacity, end, 1) ||
      !reserve((void **)&b->constant_offsets, &b->constant_capacity, b->constant_count + 1,
               sizeof(uint64_t))) {
    return oom(b);
  }
  memset(b->constants + b->constants_size, 0, start - b->constants_size);
  if (size) memcpy(b->constants + start, data, size);
  b->constants_size = end;
  b->constant_offsets[b->constant_count] = start;
  *buffer_index = (uint32_t)b->constant_count++;
  return ETRT_OK;
}

etrt_status etrt_pte_builder_add_segment(etrt_pte_builder *b, const void *data, size_t size,
                                         uint32_t alignment, uint32_t *segment_index) {
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "program builder: segment alignment %u is not a power of two", alignment);
  }
  if (b->segments_count + 1 >= UINT32_MAX) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "program builder: too many segments");
  }
  etrt_pte_bytes bytes = etrt_pte_builder_bytes(b, data, size);
  if (bytes.data == NULL) return oom(b);
  if (!reserve((void **)&b->segments, &b->segments_capacity, b->segments_count + 1,
               sizeof *b->segments)) {
    return oom(b);
  }
  b->segments[b->segments_count] = (builder_segment){bytes.data, size, alignment};
  *segment_index = (uint32_t)(++b->segments_count); /* segment 0 is the constant segment */
  return ETRT_OK;
}

etrt_status etrt_pte_builder_add_named_data(etrt_pte_builder *b, const char *key, const void *data,
                                            size_t size, uint32_t alignment) {
  uint32_t index = 0;
  ETRT_RETURN_IF_ERROR(etrt_pte_builder_add_segment(b, data, size, alignment, &index));
  etrt_pte_str k = etrt_pte_builder_str(b, key);
  if (k.data == NULL ||
      !reserve((void **)&b->named, &b->named_capacity, b->named_count + 1, sizeof *b->named)) {
    return oom(b);
  }
  b->named[b->named_count++] = (builder_named){k, index};
  return ETRT_OK;
}

etrt_status etrt_pte_builder_write(etrt_pte_builder *b, uint8_t **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  if (b->failed)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "program builder: an earlier allocation failed");
  etrt_pte_program *p = b->program;

  etrt_pte_segment *segs = ETRT_PTE_NEW(b, etrt_pte_segment, b->segments_count + 1);
  if (segs == NULL) return oom(b);
  segs[0].data.data = b->constants;
  segs[0].data.size = b->constants_size;
  for (size_t i = 0; i < b->segments_count; ++i) {
    segs[i + 1].data.data = b->segments[i].data;
    segs[i + 1].data.size = b->segments[i].size;
    segs[i + 1].alignment = b->segments[i].alignment;
  }
  p->segments = segs;
  p->segments_count = b->segments_count + 1;

  static const uint64_t placeholder = 0;
  p->has_constant_segment = true;
  p->constant_segment.segment_index = 0;
  p->constant_segment.offsets.data = b->constant_count ? b->constant_offsets : &placeholder;
  p->constant_segment.offsets.count = b->constant_count ? b->constant_count : 1;

  etrt_pte_named_data *named = NULL;
  if (b->named_count > 0) {
    named = ETRT_PTE_NEW(b, etrt_pte_named_data, b->named_count);
    if (named == NULL) return oom(b);
    for (size_t i = 0; i < b->named_count; ++i) {
      named[i].key = b->named[i].key;
      named[i].segment_index = b->named[i].segment_index;
    }
  }
  p->named_data = named;
  p->named_data_count = b->named_count;
  return etrt_pte_write(p, out, out_size);
}
