/* Softmax, LogSoftmax and Hardmax: the state the definitions (softmax.c) and the CPU
 * kernel (cpu/softmax.c) share. */
#ifndef ETRT_ENGINE_OPS_SOFTMAX_H
#define ETRT_ENGINE_OPS_SOFTMAX_H

#include <stdint.h>

#include "engine/op.h"

typedef enum etrt_softmax_kind {
  ETRT_SOFTMAX,
  ETRT_SOFTMAX_LOG,
  ETRT_SOFTMAX_HARD
} etrt_softmax_kind;

typedef struct etrt_softmax_state {
  etrt_softmax_kind kind;
  int64_t axis; /* as given: may be negative */
  int legacy;   /* opset < 13: the input is read as 2-D, [axes before axis, the rest] */
} etrt_softmax_state;

/* The operation as three sizes: `outer` independent groups of `n` elements (the
 * normalized axis, or the flattened trailing axes for legacy semantics) spaced
 * `inner` elements apart. Refuses an axis out of range. */
etrt_status etrt_softmax_layout(const etrt_node *node, const etrt_softmax_state *state,
                                const etrt_tensor *input, int64_t *outer, int64_t *n,
                                int64_t *inner);

etrt_status etrt_cpu_softmax(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs);

#endif
