/* IR nodes seen through the engine's operation interface (src/engine/op.h): for
 * constant folding with the CPU kernels and for asking a CUDA kernel whether it
 * handles a node. */
#ifndef ETRT_BUILDER_NODE_EVAL_H
#define ETRT_BUILDER_NODE_EVAL_H

#include "builder/ir.h"
#include "engine/op.h"

/* An engine node over an IR node (strings and arrays shared, not copied), its
 * definition resolved and its state prepared (free with etrt_node_eval_release).
 * NOT_FOUND when the engine has no such operator. */
etrt_status etrt_node_eval_prepare(const etrt_ir_graph *graph, const etrt_ir_node *ir_node,
                                   etrt_node *out);
void etrt_node_eval_release(etrt_node *node);

/* The node's input tensors as shape inference sees them: dtype, the largest dims,
 * and host_value (and data) for constants; omitted inputs have rank -1. `tensors`
 * holds node->num_inputs entries. */
void etrt_node_eval_inputs(const etrt_ir_graph *graph, const etrt_ir_node *ir_node,
                           etrt_tensor *tensors);

/* Runs a node whose inputs are all constants with its CPU kernel: the outputs'
 * bytes are allocated in the graph, the output values become constants and the node
 * is marked dead. Where the outputs would exceed `limit_bytes` in all, or the
 * operator has no CPU kernel, nothing changes and *folded is false. */
etrt_status etrt_node_eval_fold(etrt_ir_graph *graph, uint32_t node_index, size_t limit_bytes,
                                bool *folded);

#endif
