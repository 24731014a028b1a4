/* Reductions over a set of axes (ReduceSum ... ReduceSumSquare): the kinds, the
 * attribute state and the axes logic that the definitions (reduce.c) and the kernels
 * (cpu/reduce.c) share. */
#ifndef ETRT_ENGINE_OPS_REDUCE_H
#define ETRT_ENGINE_OPS_REDUCE_H

#include <stdint.h>

#include "engine/op.h"

/* X(KIND, "OpType", takes integers) */
#define ETRT_REDUCE_OPS(X)             \
  X(SUM, "ReduceSum", 1)               \
  X(MEAN, "ReduceMean", 1)             \
  X(MAX, "ReduceMax", 1)               \
  X(MIN, "ReduceMin", 1)               \
  X(PROD, "ReduceProd", 1)             \
  X(L1, "ReduceL1", 1)                 \
  X(L2, "ReduceL2", 0)                 \
  X(LOG_SUM, "ReduceLogSum", 0)        \
  X(LOG_SUM_EXP, "ReduceLogSumExp", 0) \
  X(SUM_SQUARE, "ReduceSumSquare", 1)

typedef enum etrt_reduce_kind {
#define ETRT_REDUCE_ENUM(kind, name, ints) ETRT_REDUCE_##kind,
  ETRT_REDUCE_OPS(ETRT_REDUCE_ENUM)
#undef ETRT_REDUCE_ENUM
      ETRT_REDUCE_KIND_COUNT
} etrt_reduce_kind;

typedef struct etrt_reduce_state {
  etrt_reduce_kind kind;
  int keepdims;
  int noop_with_empty_axes;
} etrt_reduce_state;

/* The reduced axes of input 0 (bit a set: axis a is reduced), from the `axes`
 * attribute (older opsets) or the optional axes input 1 (a value input: its values
 * are on the host during inference and execution). No axes reduce every axis, or
 * none with noop_with_empty_axes. Refuses axes out of range or repeated. */
etrt_status etrt_reduce_axes(const etrt_node *node, const etrt_reduce_state *state,
                             const etrt_tensor *inputs, uint32_t *reduced);

etrt_status etrt_cpu_reduce(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
