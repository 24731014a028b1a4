/* Operators that change only the shape, never the bytes: Reshape, Flatten,
 * Squeeze, Unsqueeze. Their CPU kernel copies the bytes (the executor may give the
 * output the input's buffer, then it does nothing). */
#ifndef ETRT_ENGINE_OPS_RESHAPE_H
#define ETRT_ENGINE_OPS_RESHAPE_H

#include "engine/op.h"

etrt_status etrt_cpu_reshape(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs);

#endif
