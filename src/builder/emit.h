/* The .pte program of a partitioned graph: one execution plan "forward" with one
 * DelegateCall per partition (EtrtBackend, the plan in a segment, compile spec
 * target_device), explicit host/device copies at GPU boundaries, and device-aware
 * memory planning as ExecuTorch records it:
 *  - a tensor on a GPU carries extra_tensor_info.device_type = CUDA and its index;
 *  - planned buffer 0 is unused (ExecuTorch's convention), buffer 1 is the host
 *    arena, then one buffer per GPU used (ascending index), each listed in
 *    non_const_buffer_device;
 *  - et_copy::_h2d_copy.out before a GPU partition reads a host value and
 *    et_copy::_d2h_copy.out right after a GPU partition writes a value the host
 *    (or another GPU) needs, with ExecuTorch's out-variant arguments
 *    [self, out, out]; a value passed between partitions on one GPU stays there;
 *  - the host memory a host-to-device copy reads is not reused before the stream
 *    has surely run the copy (the next device-to-host copy from that GPU, which
 *    waits for the stream, or the end of the method): host code runs at once;
 *  - tensors record their largest sizes, DYNAMIC_BOUND where an axis varies.
 * Which GPU a partition's tensors live on follows its target_device label (as
 * ExecuTorch's device propagation does). */
#ifndef ETRT_BUILDER_EMIT_H
#define ETRT_BUILDER_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builder/ir.h"
#include "builder/partition.h"

typedef struct etrt_emit_partition {
  const uint8_t *plan;
  size_t plan_size;
  const char *target_device; /* "cpu" or "cuda:N" */
} etrt_emit_partition;

typedef struct etrt_emit_options {
  /* Method inputs and outputs live on the GPU of the first GPU partition, are not
   * planned (the caller binds its own device memory) and need no copies. */
  bool io_on_device;
} etrt_emit_options;

/* Summary of what was emitted, for progress lines and tests. */
typedef struct etrt_emit_stats {
  uint32_t values, instructions, h2d_copies, d2h_copies;
  uint64_t host_arena_bytes, device_arena_bytes;
} etrt_emit_stats;

/* Writes the program (malloc'd bytes; deterministic). `plans` has one entry per
 * partition. */
etrt_status etrt_emit_program(const etrt_ir_graph *graph, const etrt_partitioning *partitioning,
                              const etrt_emit_partition *plans, const etrt_emit_options *options,
                              uint8_t **pte, size_t *pte_size, etrt_emit_stats *stats);

#endif
