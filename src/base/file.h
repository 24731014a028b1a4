/* Files: read-only mapping (zero-copy reads) and all-or-nothing writes. */
#ifndef ETRT_BASE_FILE_H
#define ETRT_BASE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"

typedef struct etrt_file_map {
  const uint8_t *data; /* never NULL on success, even for an empty file */
  size_t size;
  void *mapping_; /* private: what to unmap */
  size_t mapping_size_;
} etrt_file_map;

/* Maps `path` read-only. On failure the message names the path and the reason. */
etrt_status etrt_file_map_open(const char *path, etrt_file_map *out);
void etrt_file_map_close(etrt_file_map *map);

/* Writes `size` bytes to `path` through a temporary file in the same folder and a
 * rename, so that a failure leaves either the old file or no file, never half of one. */
etrt_status etrt_file_write_atomic(const char *path, const void *data, size_t size);

/* Hints the kernel to reclaim the whole pages of `data` once a copy of them in another
 * layout is what the kernels read (reordered or packed constant weights; the originals
 * are read again only by a fallback, for other shapes). Plans are mapped from the .pte
 * file, so those pages are clean file pages: dropped from the resident set, read back
 * from the file if ever touched. Nothing is lost for any other memory either
 * (MADV_PAGEOUT never discards data), so the copy does not double the weights' resident
 * size. A no-op where the system lacks MADV_PAGEOUT. */
void etrt_file_pages_release(const void *data, size_t size);

/* Reads a whole file into malloc'd memory (for inputs that are not mapped). */
etrt_status etrt_file_read_all(const char *path, uint8_t **data, size_t *size);

#endif
