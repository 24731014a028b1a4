/* Overflow-checked size arithmetic for parsers of outside bytes. */
#ifndef ETRT_BASE_CHECKED_H
#define ETRT_BASE_CHECKED_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 on success and 1 on overflow, leaving *out unspecified. */
static inline int etrt_add_overflow_size(size_t a, size_t b, size_t *out) {
  return __builtin_add_overflow(a, b, out);
}
static inline int etrt_mul_overflow_size(size_t a, size_t b, size_t *out) {
  return __builtin_mul_overflow(a, b, out);
}
static inline int etrt_mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
  return __builtin_mul_overflow(a, b, out);
}

/* True when [offset, offset + length) lies inside [0, size). */
static inline int etrt_range_ok(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

static inline size_t etrt_align_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

#endif
