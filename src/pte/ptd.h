/* ExecuTorch external data files (.ptd, FlatBuffer "FlatTensor", identifier
 * "FT01", with the "FH01" header after the identifier): named blobs, usually
 * tensors, that a program's EXTERNAL tensors and named_data refer to by key.
 *
 * Reading is zero copy as for programs: keys, layouts and data are views into the
 * input buffer, which must stay alive while the file object is used. */
#ifndef ETRT_PTE_PTD_H
#define ETRT_PTE_PTD_H

#include "pte/pte.h"

typedef struct etrt_ptd_tensor_layout {
  etrt_dtype scalar_type;
  etrt_pte_i32s sizes;
  etrt_pte_u8s dim_order; /* as many entries as sizes (checked) */
} etrt_ptd_tensor_layout;

typedef struct etrt_ptd_entry {
  etrt_pte_str key;
  uint32_t segment_index; /* checked */
  bool has_layout;
  etrt_ptd_tensor_layout layout; /* when present, its bytes fit the data (checked) */
  etrt_pte_bytes data;           /* the segment's bytes */
} etrt_ptd_entry;

typedef struct etrt_ptd_file {
  uint32_t version;
  uint64_t flatbuffer_offset; /* header fields, as recorded */
  uint64_t flatbuffer_size;
  uint64_t segment_base_offset;
  uint64_t segment_data_size;
  const etrt_pte_segment *segments; /* offset/size as recorded, data checked */
  size_t segments_count;
  const etrt_ptd_entry *entries; /* file order; keys are unique (checked) */
  size_t entries_count;
  const etrt_ptd_entry **by_key_; /* private: entries sorted by key */
  etrt_arena *arena_;             /* private */
} etrt_ptd_file;

/* Verifies the whole file and decodes it. Refuses with ETRT_ERROR_INVALID_FORMAT
 * and a message naming the field and byte offset. */
etrt_status etrt_ptd_parse(const uint8_t *data, size_t size, etrt_ptd_file **out);
void etrt_ptd_file_free(etrt_ptd_file *file);

/* The entry for `key` (binary search); ETRT_ERROR_NOT_FOUND naming the key. */
etrt_status etrt_ptd_find(const etrt_ptd_file *file, const char *key, const etrt_ptd_entry **out);

/* What etrt_ptd_write stores for one key. */
typedef struct etrt_ptd_blob {
  const char *key;
  const void *data;
  size_t size;
  uint32_t alignment; /* 0 or a power of two; at least 16 is used */
  bool has_layout;
  etrt_ptd_tensor_layout layout;
} etrt_ptd_blob;

/* Writes a .ptd as ExecuTorch's FlatTensor serializer lays it out (header padded to
 * 48 bytes, segments 16-byte aligned). Deterministic; `*out` is malloc'd. */
etrt_status etrt_ptd_write(const etrt_ptd_blob *blobs, size_t count, uint8_t **out,
                           size_t *out_size);

#endif
