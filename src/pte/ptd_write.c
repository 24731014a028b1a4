/* The .ptd writer, in the layout of ExecuTorch's FlatTensor serializer. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "pte/flatbuffers_builder.h"
#include "pte/pte_format.h"
#include "pte/ptd.h"

static size_t segment_alignment(const etrt_ptd_blob *b) {
  return b->alignment > PTD_SEGMENT_ALIGNMENT ? b->alignment : PTD_SEGMENT_ALIGNMENT;
}

etrt_status etrt_ptd_write(const etrt_ptd_blob *blobs, size_t count, uint8_t **out,
                           size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t a = blobs[i].alignment;
    if ((a & (a - 1)) != 0 || blobs[i].key == NULL || (blobs[i].size && blobs[i].data == NULL)) {
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "writing a .ptd: blob %zu has no key, no data or a bad alignment", i);
    }
  }
  uint64_t *offsets = calloc(count ? count : 1, sizeof *offsets);
  if (offsets == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "writing a .ptd: out of memory");
  uint64_t end = 0;
  for (size_t i = 0; i < count; ++i) {
    offsets[i] = etrt_align_up(end, segment_alignment(&blobs[i]));
    end = offsets[i] + blobs[i].size;
  }

  etrt_fb_builder b;
  etrt_fb_builder_init(&b);
  etrt_fb_builder_start(&b, PTD_FILE_IDENTIFIER, PTD_HEADER_PADDED);
  etrt_fb_table_begin(&b);
  etrt_fb_add_u32(&b, 0, 0, 0);
  etrt_fb_add_offset(&b, 1);
  etrt_fb_add_offset(&b, 2);
  etrt_fb_set_root(&b, etrt_fb_table_end(&b));
  size_t ref_segments = etrt_fb_slot_pos(&b, 1), ref_named = etrt_fb_slot_pos(&b, 2);
  size_t segments = etrt_fb_add_offset_vector(&b, count);
  etrt_fb_patch(&b, ref_segments, segments);
  for (size_t i = 0; i < count; ++i) {
    etrt_fb_table_begin(&b);
    etrt_fb_add_u64(&b, 0, offsets[i], 0);
    etrt_fb_add_u64(&b, 1, blobs[i].size, 0);
    etrt_fb_patch(&b, etrt_fb_element(segments, i), etrt_fb_table_end(&b));
  }
  size_t named = etrt_fb_add_offset_vector(&b, count);
  etrt_fb_patch(&b, ref_named, named);
  for (size_t i = 0; i < count; ++i) {
    const etrt_ptd_blob *blob = &blobs[i];
    etrt_fb_table_begin(&b);
    etrt_fb_add_offset(&b, 0);
    etrt_fb_add_u32(&b, 1, (uint32_t)i, 0);
    if (blob->has_layout) etrt_fb_add_offset(&b, 2);
    etrt_fb_patch(&b, etrt_fb_element(named, i), etrt_fb_table_end(&b));
    size_t ref_key = etrt_fb_slot_pos(&b, 0), ref_layout = etrt_fb_slot_pos(&b, 2);
    etrt_fb_patch(&b, ref_key, etrt_fb_add_string(&b, blob->key, strlen(blob->key)));
    if (blob->has_layout) {
      const etrt_ptd_tensor_layout *l = &blob->layout;
      etrt_fb_table_begin(&b);
      etrt_fb_add_i8(&b, 0, (int8_t)l->scalar_type, 0);
      etrt_fb_add_offset(&b, 1);
      etrt_fb_add_offset(&b, 2);
      etrt_fb_patch(&b, ref_layout, etrt_fb_table_end(&b));
      size_t ref_sizes = etrt_fb_slot_pos(&b, 1), ref_order = etrt_fb_slot_pos(&b, 2);
      etrt_fb_patch(&b, ref_sizes, etrt_fb_add_vector(&b, l->sizes.data, l->sizes.count, 4, 4));
      etrt_fb_patch(&b, ref_order,
                    etrt_fb_add_vector(&b, l->dim_order.data, l->dim_order.count, 1, 1));
    }
  }
  size_t fb_size = b.size;
  size_t base = etrt_align_up(fb_size, PTD_SEGMENT_ALIGNMENT);
  uint8_t *header = etrt_fb_at(&b, 8);
  if (header != NULL) {
    uint32_t length = PTD_HEADER_LENGTH;
    uint64_t fields[4] = {PTD_HEADER_PADDED, fb_size - PTD_HEADER_PADDED, base, end};
    memcpy(header, PTD_HEADER_MAGIC, 4);
    memcpy(header + 4, &length, 4);
    memcpy(header + 8, fields, sizeof fields);
  }
  etrt_status st = etrt_fb_builder_status(&b);
  uint8_t *file = NULL;
  if (st == ETRT_OK && end >= SIZE_MAX - base)
    st = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "data too large");
  if (st == ETRT_OK && (file = calloc(base + end + 1, 1)) == NULL)
    st = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (st != ETRT_OK) {
    free(offsets);
    etrt_fb_builder_release(&b);
    return etrt_error_context(st, "writing a .ptd: ");
  }
  memcpy(file, b.buf, fb_size);
  etrt_fb_builder_release(&b);
  for (size_t i = 0; i < count; ++i) {
    if (blobs[i].size) memcpy(file + base + offsets[i], blobs[i].data, blobs[i].size);
  }
  free(offsets);
  *out = file;
  *out_size = base + end;
  return ETRT_OK;
}
