/* Max, Min, Sum, Mean of one or more broadcast inputs: the state the definitions
 * (variadic.c) and the CPU kernel (cpu/variadic.c) share. */
#ifndef ETRT_ENGINE_OPS_VARIADIC_H
#define ETRT_ENGINE_OPS_VARIADIC_H

#include "engine/op.h"
#include "engine/ops/elementwise.h"

typedef struct etrt_variadic_state {
  etrt_binary_kind kind; /* folded over the inputs: MAX, MIN or ADD */
  int mean;              /* Mean: the sum divided by the input count */
} etrt_variadic_state;

etrt_status etrt_cpu_variadic(const etrt_node *node, const etrt_tensor *inputs,
                              etrt_tensor *outputs);

#endif
