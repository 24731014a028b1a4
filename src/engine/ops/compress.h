/* Compress(input, condition [bool, 1-D], axis): the slices along `axis` (of the
 * flattened input without it) whose condition is true; condition entries past
 * the axis are ignored, missing ones are false. The output's length along the axis
 * depends on the condition's values, so it is a value input; where they are known only
 * at execute, memory is planned for every condition entry kept (op.h's `bound`).
 *
 * NonZero(X) -> int64 [rank, count]: the coordinates of X's non-zero elements in
 * row-major order (-0.0 is zero, NaN is not). X itself is the value input: without
 * its values at build time the plan allows count up to X's numel. */
#ifndef ETRT_ENGINE_OPS_COMPRESS_H
#define ETRT_ENGINE_OPS_COMPRESS_H

#include <stdint.h>

#include "engine/op.h"

/* The input as [outer, length, inner] around the axis, and the condition entries
 * that count (min(condition length, length)). */
typedef struct etrt_compress_layout {
  int64_t outer, length, inner, conditions;
} etrt_compress_layout;

etrt_status etrt_compress_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_compress_layout *out);

/* Unique(X, axis?, sorted = 1) -> Y, indices?, inverse_indices?, counts?: the distinct
 * slices of X along `axis` (its elements without one) in ascending order or in order of
 * first occurrence; each one's first index, the index in Y of every slice of X, and how
 * often each occurs. X is the value input. The kernels compare slices in place, with no
 * scratch memory: O(distinct * length) sorted, O(length^2) unsorted. Uses the layout
 * above with length = conditions = the slices compared. */
etrt_status etrt_unique_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_compress_layout *out);
/* Slices a and b of x: -1, 0 or 1. */
int etrt_unique_compare(const etrt_compress_layout *l, const void *x, etrt_dtype dtype, int64_t a,
                        int64_t b);
/* The index of the distinct slice after the one at `previous` (-1: the first), in the
 * output order; -1 after the last. */
int64_t etrt_unique_next(const etrt_compress_layout *l, const void *x, etrt_dtype dtype, int sorted,
                         int64_t previous);

/* Whether element i of a tensor of `dtype` is non-zero. */
int etrt_nonzero_at(const void *data, etrt_dtype dtype, int64_t i);

#endif
