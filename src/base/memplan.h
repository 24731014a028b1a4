/* The memory planner of the builder (the .pte's planned buffers) and of the engine
 * (an execution context's intermediates): tensors with a lifetime and a size are
 * placed into buffers so that two tensors alive at the same step never overlap,
 * and space is reused between tensors whose lifetimes do not meet.
 *
 * Lifetimes are inclusive step ranges [first, last] in the caller's numbering
 * (instructions, nodes): a tensor written at step 3 and last read at step 5 conflicts
 * with any tensor alive at 3, 4 or 5. Each size is rounded up to `alignment`, so that
 * every offset is a multiple of it; a size of 0 takes no room (callers that want an
 * address of its own for an empty tensor ask for a non-zero size).
 *
 * Placement is greedy: by pass, then largest first (ties by index, so the result
 * depends only on the input), each at the lowest offset its buffer has free over its
 * lifetime. A later pass takes what the earlier ones leave free: short-lived scratch
 * placed after the tensors fills the gaps between them, where placed among them by
 * size it could push them up. It is quadratic in the number of tensors, which plans
 * of thousands of values afford. */
#ifndef ETRT_BASE_MEMPLAN_H
#define ETRT_BASE_MEMPLAN_H

#include <stdint.h>

#include "etrt/status.h"

typedef struct etrt_memplan_interval {
  uint64_t size;       /* in: bytes */
  uint32_t buffer;     /* in: the buffer it lives in, < num_buffers */
  int64_t first, last; /* in: lifetime, inclusive; first <= last */
  uint32_t pass;       /* in: placed after every tensor of a lower pass (0: first) */
  uint64_t offset;     /* out: a multiple of the alignment */
} etrt_memplan_interval;

/* Writes each interval's offset and each buffer's size (the end of its last tensor,
 * 0 for a buffer nothing is placed in). `alignment` is a power of two. Refuses a bad
 * alignment, a buffer index or lifetime out of range, and plans whose offsets would
 * exceed 2^63 bytes. */
etrt_status etrt_memplan_place(etrt_memplan_interval *intervals, uint32_t count, uint64_t alignment,
                               uint64_t *buffer_sizes, uint32_t num_buffers);

#endif
