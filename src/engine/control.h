/* Running control flow (If, Loop, Scan; engine/ops/control.h) on the host: each body
 * is an engine with an execution context of its own per enclosing context, run
 * synchronously on the CPU executor, with the loop control here. Per node and
 * context this owns the bodies' contexts and the buffers between iterations (the
 * loop-carried values, taken in turns from two sets, and the scan outputs gathered
 * so far), made when the context is created and grown only when a run needs more, so
 * that a steady state allocates nothing. Only the CPU executor runs control nodes: the
 * partitioner keeps them off GPU plans, and the CUDA and sim executors refuse them. */
#ifndef ETRT_ENGINE_CONTROL_H
#define ETRT_ENGINE_CONTROL_H

#include "engine/executor.h"

typedef struct etrt_control etrt_control;

/* The state of control node `node` (prepared: its bodies deserialized) for one context. */
etrt_status etrt_control_create(const etrt_node *node, etrt_control **out);
void etrt_control_destroy(etrt_control *control);

/* Runs node `n` of `run` on its inputs `in`: writes each output's dims and bytes into
 * `out` (the memory planned for the node's bounds; outputs with no bound are grown
 * through run->grow first). Errors name the node and, in a loop, the iteration. */
etrt_status etrt_control_run(etrt_control *control, const etrt_exec_run *run, uint32_t n,
                             etrt_tensor *in, etrt_tensor *out);

#endif
