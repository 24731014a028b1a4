/* Memory planning of the program's non-constant tensors: offsets inside planned
 * buffers, reusing memory between tensors whose lifetimes do not overlap. */
#ifndef ETRT_BUILDER_MEMPLAN_H
#define ETRT_BUILDER_MEMPLAN_H

#include <stdint.h>

#include "etrt/status.h"

#define ETRT_MEMPLAN_ALIGNMENT 64

typedef struct etrt_memplan_tensor {
  uint32_t buffer;     /* < num_buffers */
  uint64_t size;       /* bytes */
  int32_t first, last; /* instruction indices of the first write and the last read */
  uint64_t offset;     /* out: aligned to ETRT_MEMPLAN_ALIGNMENT */
} etrt_memplan_tensor;

/* Places the tensors (largest first, then by index, so the result is deterministic)
 * at the lowest offset where no tensor of the same buffer with an overlapping
 * lifetime lies, and writes each buffer's size. */
etrt_status etrt_memplan_place(etrt_memplan_tensor *tensors, uint32_t count,
                               uint64_t *buffer_sizes, uint32_t num_buffers);

#endif
