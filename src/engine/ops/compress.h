/* Compress(input, condition [bool, 1-D], axis): the slices along `axis` (of the
 * flattened input without it) whose condition is true; condition entries past
 * the axis are ignored, missing ones are false. The output's length along the axis
 * depends on the condition's values, so it is a value input. */
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

#endif
