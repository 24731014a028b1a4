/* Indexing operators: Gather, GatherElements, GatherND, ScatterElements (and the
 * older Scatter), OneHot. Definitions in gather.c, CPU kernels in cpu/gather.c.
 * Data moves by element size (any dtype); indices are int32 or int64. */
#ifndef ETRT_ENGINE_OPS_GATHER_H
#define ETRT_ENGINE_OPS_GATHER_H

#include <string.h>

#include "engine/op.h"

typedef enum etrt_scatter_reduction {
  ETRT_SCATTER_NONE = 0,
  ETRT_SCATTER_ADD = 1,
  ETRT_SCATTER_MUL = 2,
  ETRT_SCATTER_MAX = 3,
  ETRT_SCATTER_MIN = 4
} etrt_scatter_reduction;

etrt_status etrt_scatter_reduction_parse(const etrt_node *node, etrt_scatter_reduction *out);

/* Index i of an int32 or int64 tensor's bytes. */
static inline int64_t etrt_gather_index(const void *data, etrt_dtype dtype, int64_t i) {
  if (dtype == ETRT_DTYPE_INT32) {
    int32_t v;
    memcpy(&v, (const int32_t *)data + i, sizeof v);
    return v;
  }
  int64_t v;
  memcpy(&v, (const int64_t *)data + i, sizeof v);
  return v;
}

etrt_status etrt_cpu_gather(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_gather_elements(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs);
etrt_status etrt_cpu_gather_nd(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_tensor *outputs);
etrt_status etrt_cpu_scatter_elements(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs);
etrt_status etrt_cpu_one_hot(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs);

#endif
