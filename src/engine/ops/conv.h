/* Conv, ConvTranspose and EtrtFusedConv: the CPU kernels that the definitions (conv.c) list. Their
 * state is the parsed window attributes (etrt_conv_params, conv_shape.h). */
#ifndef ETRT_ENGINE_OPS_CONV_H
#define ETRT_ENGINE_OPS_CONV_H

#include "engine/op.h"
#include "engine/ops/conv_shape.h"

/* The state of EtrtFusedConv (conv.c): Conv's, so that Conv's kernels read it as
 * theirs, and whether a Relu follows. */
typedef struct etrt_fused_conv_params {
  etrt_conv_params conv;
  int relu;
} etrt_fused_conv_params;

etrt_status etrt_cpu_conv(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_fused_conv(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs);
etrt_status etrt_cpu_conv_transpose(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs);

#endif
