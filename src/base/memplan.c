#include "base/memplan.h"

#include <stdlib.h>

#include "base/status.h"

static int etrt_memplan_by_pass_size(const void *a, const void *b, void *context) {
  const etrt_memplan_interval *intervals = context;
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  if (intervals[i].pass != intervals[j].pass) return intervals[i].pass < intervals[j].pass ? -1 : 1;
  uint64_t si = intervals[i].size, sj = intervals[j].size;
  if (si != sj) return si > sj ? -1 : 1;
  return i < j ? -1 : i > j;
}

static int etrt_memplan_by_offset(const void *a, const void *b) {
  const uint64_t *x = a, *y = b; /* {offset, end} pairs */
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* `size` rounded up to `alignment`: cannot wrap for sizes below 2^63 (checked first). */
static uint64_t etrt_memplan_rounded(uint64_t size, uint64_t alignment) {
  return (size + alignment - 1) & ~(alignment - 1);
}

static etrt_status etrt_memplan_check(const etrt_memplan_interval *intervals, uint32_t count,
                                      uint64_t alignment, uint32_t num_buffers) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > ((uint64_t)1 << 62))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "memory planning: alignment %llu is not a power of two",
                      (unsigned long long)alignment);
  for (uint32_t i = 0; i < count; ++i) {
    const etrt_memplan_interval *t = &intervals[i];
    if (t->buffer >= num_buffers)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "memory planning: tensor %u is in buffer %u, but there are %u buffers", i,
                        t->buffer, num_buffers);
    if (t->first > t->last)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "memory planning: tensor %u ends (step %lld) before it starts (step %lld)",
                        i, (long long)t->last, (long long)t->first);
    if (t->size > (uint64_t)INT64_MAX ||
        etrt_memplan_rounded(t->size, alignment) > (uint64_t)INT64_MAX)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "memory planning: tensor %u of %llu bytes is too large", i,
                        (unsigned long long)t->size);
  }
  return ETRT_OK;
}

etrt_status etrt_memplan_place(etrt_memplan_interval *intervals, uint32_t count, uint64_t alignment,
                               uint64_t *buffer_sizes, uint32_t num_buffers) {
  for (uint32_t b = 0; b < num_buffers; ++b) buffer_sizes[b] = 0;
  ETRT_RETURN_IF_ERROR(etrt_memplan_check(intervals, count, alignment, num_buffers));
  if (count == 0) return ETRT_OK;
  uint32_t *order = malloc((size_t)count * sizeof *order);
  uint32_t *placed = malloc((size_t)count * sizeof *placed);
  uint64_t *busy = malloc((size_t)count * 2 * sizeof *busy);
  if (order == NULL || placed == NULL || busy == NULL) {
    free(order);
    free(placed);
    free(busy);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "memory planning: out of memory for %u tensors",
                      count);
  }
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  /* qsort is not stable, but the comparison is total (ties broken by index). */
  qsort_r(order, count, sizeof *order, etrt_memplan_by_pass_size, intervals);
  etrt_status status = ETRT_OK;
  uint32_t num_placed = 0;
  for (uint32_t k = 0; k < count; ++k) {
    etrt_memplan_interval *t = &intervals[order[k]];
    uint64_t need = etrt_memplan_rounded(t->size, alignment);
    /* Memory ranges of live-overlapping tensors of the same buffer, by offset. */
    uint32_t n = 0;
    for (uint32_t p = 0; p < num_placed; ++p) {
      const etrt_memplan_interval *o = &intervals[placed[p]];
      if (o->buffer != t->buffer || o->last < t->first || t->last < o->first) continue;
      busy[2 * n] = o->offset;
      busy[2 * n + 1] =
          o->offset + etrt_memplan_rounded(o->size, alignment); /* placed: below 2^63 */
      ++n;
    }
    qsort(busy, n, 2 * sizeof *busy, etrt_memplan_by_offset);
    uint64_t offset = 0;
    for (uint32_t r = 0; r < n; ++r) {
      if (busy[2 * r] >= offset + need) break; /* the gap before this range fits */
      if (busy[2 * r + 1] > offset) offset = busy[2 * r + 1];
    }
    /* offset and need are both below 2^63: the sum cannot wrap. */
    uint64_t end = offset + need;
    if (end > (uint64_t)INT64_MAX) {
      status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "memory planning: the planned memory exceeds 2^63 bytes");
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
