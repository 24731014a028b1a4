/* Half-precision tensors through float32 CPU kernels: for the kernel families whose
 * inner loops are written for float32 (convolutions, pools), a node with float16 or
 * bfloat16 tensors runs the float32 kernel on widened copies and narrows its outputs
 * (rounding to nearest even), so that sums accumulate in float32 as the CUDA kernels'
 * do, and no half variant of those loops exists. The copies are allocated per call:
 * half tensors reach the CPU kernels only on simulated GPUs and in networks built
 * with half types by hand, never in the plans the builder makes for the CPU. */
#ifndef ETRT_ENGINE_OPS_CPU_WIDEN_H
#define ETRT_ENGINE_OPS_CPU_WIDEN_H

#include <stdbool.h>

#include "engine/op.h"

/* Whether an input or output of the node is float16 or bfloat16. */
bool etrt_cpu_widen_needed(const etrt_node *node, const etrt_tensor *inputs,
                           const etrt_tensor *outputs);

/* Runs `kernel` with every float16/bfloat16 input and output as float32. */
etrt_status etrt_cpu_widen_run(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_tensor *outputs, etrt_op_cpu_fn kernel);

#endif
