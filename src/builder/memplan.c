#include "builder/memplan.h"

#include <stdlib.h>

#include "base/checked.h"
#include "base/status.h"

static int etrt_memplan_by_size(const void *a, const void *b, void *context) {
  const etrt_memplan_tensor *tensors = context;
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  uint64_t si = tensors[i].size, sj = tensors[j].size;
  if (si != sj) return si > sj ? -1 : 1;
  return i < j ? -1 : i > j;
}

static int etrt_memplan_by_offset(const void *a, const void *b) {
  const uint64_t *x = a, *y = b; /* {offset, end} pairs */
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

etrt_status etrt_memplan_place(etrt_memplan_tensor *tensors, uint32_t count,
                               uint64_t *buffer_sizes, uint32_t num_buffers) {
  for (uint32_t b = 0; b < num_buffers; ++b) buffer_sizes[b] = 0;
  if (count == 0) return ETRT_OK;
  uint32_t *order = malloc(count * sizeof *order);
  uint32_t *placed = malloc(count * sizeof *placed);
  uint64_t *busy = malloc((size_t)count * 2 * sizeof *busy);
  if (!order || !placed || !busy) {
    free(order);
    free(placed);
    free(busy);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "memory planning: out of memory");
  }
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  /* qsort is not stable, but the comparison is total (ties broken by index). */
  qsort_r(order, count, sizeof *order, etrt_memplan_by_size, tensors);
  etrt_status status = ETRT_OK;
  uint32_t num_placed = 0;
  for (uint32_t k = 0; k < count && status == ETRT_OK; ++k) {
    etrt_memplan_tensor *t = &tensors[order[k]];
    uint64_t need = etrt_align_up(t->size, ETRT_MEMPLAN_ALIGNMENT);
    if (need < t->size || need > (uint64_t)INT64_MAX) {
      status = etrt_error(ETRT_ERROR_UNSUPPORTED, "memory planning: a tensor is too large");
      break;
    }
    /* Memory ranges of live-overlapping tensors of the same buffer, by offset. */
    uint32_t n = 0;
    for (uint32_t p = 0; p < num_placed; ++p) {
      const etrt_memplan_tensor *o = &tensors[placed[p]];
      if (o->buffer != t->buffer || o->last < t->first || t->last < o->first) continue;
      busy[2 * n] = o->offset;
      busy[2 * n + 1] = o->offset + etrt_align_up(o->size, ETRT_MEMPLAN_ALIGNMENT); /* placed: fits */
      ++n;
    }
    qsort(busy, n, 2 * sizeof *busy, etrt_memplan_by_offset);
    uint64_t offset = 0;
    for (uint32_t r = 0; r < n; ++r) {
      if (busy[2 * r] >= offset + need) break; /* the gap before this range fits */
      if (busy[2 * r + 1] > offset) offset = busy[2 * r + 1];
    }
    uint64_t end;
    if (__builtin_add_overflow(offset, need, &end) || end > (uint64_t)INT64_MAX) {
      status = etrt_error(ETRT_ERROR_UNSUPPORTED, "memory planning: the planned memory exceeds 2^63 bytes");
      break;
    }
    t->offset = offset;
    if (end > buffer_sizes[t->buffer]) buffer_sizes[t->buffer] = end;
    placed[num_placed++] = order[k];
  }
  free(order);
  free(placed);
  free(busy);
  return status;
}
