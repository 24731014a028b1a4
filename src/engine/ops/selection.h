/* Operators that select positions by value: ArgMax, ArgMin, TopK. Definitions in
 * selection.c, CPU kernels in cpu/selection.c. */
#ifndef ETRT_ENGINE_OPS_SELECTION_H
#define ETRT_ENGINE_OPS_SELECTION_H

#include "engine/op.h"

etrt_status etrt_cpu_arg_extreme(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs);
etrt_status etrt_cpu_top_k(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
