/* The .ptd reader: header, FlatTensor FlatBuffer, segments and named entries, all
 * verified before use; entries indexed by key for lookups. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "pte/flatbuffers_reader.h"
#include "base/arena.h"
#include "pte/pte_format.h"
#include "pte/ptd.h"

static uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static etrt_status read_header(const uint8_t *d, size_t size, etrt_ptd_file *f) {
  if (size < 8 || memcmp(d + 4, PTD_FILE_IDENTIFIER, 4) != 0) {
    if (size >= 8 && memcmp(d + 4, PTE_FILE_IDENTIFIER, 4) == 0) {
      return etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "this is an ExecuTorch program (identifier 'ET12'), not an external data file (.ptd)");
    }
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "not an ExecuTorch external data file: expected the identifier 'FT01' at byte offset 4");
  }
  if (size < 16 || memcmp(d + 8, PTD_HEADER_MAGIC, 4) != 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "header at byte offset 8: the 'FH01' header is missing");
  }
  uint32_t length;
  memcpy(&length, d + 12, 4);
  if (length < PTD_HEADER_LENGTH || !etrt_range_ok(8, length, size)) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "header length at byte offset 12: %u is shorter than %d or runs past the end of the "
        "file (%zu bytes)",
        length, PTD_HEADER_LENGTH, size);
  }
  f->flatbuffer_offset = load_u64(d + 16);
  f->flatbuffer_size = load_u64(d + 24);
  f->segment_base_offset = load_u64(d + 32);
  f->segment_data_size = load_u64(d + 40);
  if (!etrt_range_ok(f->flatbuffer_offset, f->flatbuffer_size, size) ||
      f->flatbuffer_offset + f->flatbuffer_size < 8) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "header flatbuffer_offset/flatbuffer_size at byte offsets 16/24: %llu + %llu is not "
        "within the file (%zu bytes)",
        (unsigned long long)f->flatbuffer_offset, (unsigned long long)f->flatbuffer_size, size);
  }
  if (!etrt_range_ok(f->segment_base_offset, f->segment_data_size, size)) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "header segment_base_offset/segment_data_size at byte offsets 32/40: %llu + %llu is "
        "not within the file (%zu bytes)",
        (unsigned long long)f->segment_base_offset, (unsigned long long)f->segment_data_size, size);
  }
  return ETRT_OK;
}

static etrt_status read_layout(const etrt_fb_table *t, const etrt_pte_bytes data,
                               etrt_ptd_tensor_layout *l) {
  int8_t scalar_type;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(t, 0, "scalar_type", 0, &scalar_type));
  l->scalar_type = (etrt_dtype)scalar_type;
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 1, "sizes", &l->sizes));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 2, "dim_order", &l->dim_order));
  if (l->dim_order.count != l->sizes.count) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "TensorLayout at byte offset %zu: %zu dim_order entries for %zu sizes",
                      t->pos, l->dim_order.count, l->sizes.count);
  }
  size_t nbytes = etrt_dtype_size(l->scalar_type);
  for (size_t i = 0; i < l->sizes.count; ++i) {
    int32_t d = l->sizes.data[i];
    if (d < 0 || etrt_mul_overflow_size(nbytes, (size_t)d, &nbytes)) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "TensorLayout.sizes[%zu] at byte offset %zu: bad size %d", i, t->pos, d);
    }
  }
  if (nbytes > data.size) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "TensorLayout at byte offset %zu: the tensor needs %zu bytes, its segment holds %zu",
        t->pos, nbytes, data.size);
  }
  return ETRT_OK;
}

static int compare_keys(const etrt_pte_str *a, const etrt_pte_str *b) {
  size_t n = a->size < b->size ? a->size : b->size;
  int c = memcmp(a->data, b->data, n);
  if (c != 0) return c;
  return a->size < b->size ? -1 : a->size > b->size;
}

static int compare_entries(const void *x, const void *y) {
  const etrt_ptd_entry *const *a = x, *const *b = y;
  return compare_keys(&(*a)->key, &(*b)->key);
}

static etrt_status read_body(etrt_fb_reader *fb, const uint8_t *data, etrt_ptd_file *f) {
  etrt_fb_table root, t;
  ETRT_RETURN_IF_ERROR(etrt_fb_root(fb, "FlatTensor", &root));
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(&root, 0, "version", 0, &f->version));

  etrt_fb_vector v;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(&root, 1, "segments", 4, 4, &v));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(fb, v.count));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge_memory(fb, (uint64_t)v.count * sizeof(etrt_pte_segment)));
  etrt_pte_segment *segs = etrt_arena_alloc_array(f->arena_, sizeof *segs, v.count, 16);
  if (segs == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .ptd: out of memory");
  for (size_t i = 0; i < v.count; ++i) {
    etrt_status st = etrt_fb_vector_table(&v, i, "DataSegment", &t);
    if (st == ETRT_OK) st = etrt_fb_read_u64(&t, 0, "offset", 0, &segs[i].offset);
    if (st == ETRT_OK) st = etrt_fb_read_u64(&t, 1, "size", 0, &segs[i].size);
    if (st == ETRT_OK && !etrt_range_ok(segs[i].offset, segs[i].size, f->segment_data_size)) {
      st = etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "DataSegment at byte offset %zu: bytes [%llu, +%llu) lie outside the segment "
                      "data (%llu bytes)",
                      t.pos, (unsigned long long)segs[i].offset, (unsigned long long)segs[i].size,
                      (unsigned long long)f->segment_data_size);
    }
    if (st != ETRT_OK) return etrt_error_context(st, "segments[%zu]: ", i);
    segs[i].data.data = data + f->segment_base_offset + segs[i].offset;
    segs[i].data.size = (size_t)segs[i].size;
  }
  f->segments = segs;
  f->segments_count = v.count;

  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(&root, 2, "named_data", 4, 4, &v));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(fb, v.count));
  ETRT_RETURN_IF_ERROR(
      etrt_fb_charge_memory(fb, (uint64_t)v.count * (sizeof(etrt_ptd_entry) + sizeof(void *))));
  etrt_ptd_entry *entries = etrt_arena_alloc_array(f->arena_, sizeof *entries, v.count, 16);
  const etrt_ptd_entry **sorted = etrt_arena_alloc_array(f->arena_, sizeof *sorted, v.count, 16);
  if (entries == NULL || sorted == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .ptd: out of memory");
  for (size_t i = 0; i < v.count; ++i) {
    etrt_ptd_entry *e = &entries[i];
    etrt_fb_str key;
    etrt_fb_table layout;
    etrt_status st = etrt_fb_vector_table(&v, i, "NamedData", &t);
    if (st == ETRT_OK) st = etrt_fb_read_string(&t, 0, "key", &key);
    if (st == ETRT_OK && key.data == NULL) {
      st = etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "NamedData.key at byte offset %zu: the key is missing", t.pos);
    }
    if (st == ETRT_OK) st = etrt_fb_read_u32(&t, 1, "segment_index", 0, &e->segment_index);
    if (st == ETRT_OK && e->segment_index >= f->segments_count) {
      st = etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "NamedData.segment_index at byte offset %zu: index %u is out of range (%zu segments)",
          etrt_fb_field_offset(&t, 1), e->segment_index, f->segments_count);
    }
    if (st == ETRT_OK) {
      e->key.data = key.data;
      e->key.size = key.size;
      e->data = segs[e->segment_index].data;
      st = etrt_fb_read_table(&t, 2, "tensor_layout", "TensorLayout", &layout, &e->has_layout);
    }
    if (st == ETRT_OK && e->has_layout) st = read_layout(&layout, e->data, &e->layout);
    if (st != ETRT_OK) return etrt_error_context(st, "named_data[%zu]: ", i);
    sorted[i] = e;
  }
  qsort(sorted, v.count, sizeof *sorted, compare_entries);
  for (size_t i = 1; i < v.count; ++i) {
    if (compare_keys(&sorted[i - 1]->key, &sorted[i]->key) == 0) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "named_data: key '%s' appears more than once",
                        sorted[i]->key.data);
    }
  }
  f->entries = entries;
  f->entries_count = v.count;
  f->by_key_ = sorted;
  return ETRT_OK;
}

etrt_status etrt_ptd_parse(const uint8_t *data, size_t size, etrt_ptd_file **out) {
  *out = NULL;
  if (data == NULL && size != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "etrt_ptd_parse: NULL data");
  etrt_arena *arena = etrt_arena_create();
  etrt_ptd_file *f = arena ? etrt_arena_alloc(arena, sizeof *f, 16) : NULL;
  if (f == NULL) {
    etrt_arena_destroy(arena);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .ptd: out of memory");
  }
  f->arena_ = arena;
  etrt_status st = read_header(data, size, f);
  if (st == ETRT_OK) {
    etrt_fb_reader fb;
    etrt_fb_reader_init(&fb, data, (size_t)(f->flatbuffer_offset + f->flatbuffer_size));
    st = read_body(&fb, data, f);
  }
  if (st != ETRT_OK) {
    etrt_arena_destroy(arena);
    return etrt_error_context(st, "ExecuTorch data file: ");
  }
  *out = f;
  return ETRT_OK;
}

void etrt_ptd_file_free(etrt_ptd_file *file) {
  if (file != NULL) etrt_arena_destroy(file->arena_);
}

etrt_status etrt_ptd_find(const etrt_ptd_file *f, const char *key, const etrt_ptd_entry **out) {
  etrt_pte_str k = {key, strlen(key)};
  size_t lo = 0, hi = f->entries_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = compare_keys(&f->by_key_[mid]->key, &k);
    if (c == 0) {
      *out = f->by_key_[mid];
      return ETRT_OK;
    }
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *out = NULL;
  return etrt_error(ETRT_ERROR_NOT_FOUND, "external data: no tensor named '%s'", key);
}
