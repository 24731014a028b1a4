/* CumSum: the state and axis logic shared by the definition (cumsum.c) and the CPU
 * kernel (cpu/cumsum.c). */
#ifndef ETRT_ENGINE_OPS_CUMSUM_H
#define ETRT_ENGINE_OPS_CUMSUM_H

#include <stdint.h>

#include "engine/op.h"

typedef struct etrt_cumsum_state {
  int exclusive, reverse;
} etrt_cumsum_state;

/* Input 0 as `outer` groups of `n` elements (the summed axis, input 1's value)
 * spaced `inner` apart. */
etrt_status etrt_cumsum_layout(const etrt_node *node, const etrt_tensor *inputs, int64_t *outer,
                               int64_t *n, int64_t *inner);

etrt_status etrt_cpu_cumsum(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
