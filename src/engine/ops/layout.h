/* Data-movement operators: Transpose, Slice, Concat, Split, Expand, Tile, Pad,
 * Trilu, DepthToSpace, SpaceToDepth. They move bytes and work on every dtype.
 * Definitions in layout.c, geometry in layout_shape.h, CPU kernels in cpu/layout.c. */
#ifndef ETRT_ENGINE_OPS_LAYOUT_H
#define ETRT_ENGINE_OPS_LAYOUT_H

#include "engine/op.h"

etrt_status etrt_cpu_transpose(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_tensor *outputs);
etrt_status etrt_cpu_slice(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_concat(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_split(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_expand(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_tile(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_pad(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_trilu(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_depth_space(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs);

/* Pad's constant as bytes of `dtype` (at most 8): from input 2, the 'value'
 * attribute (opset < 11), or zero. */
etrt_status etrt_pad_constant(const etrt_node *node, const etrt_tensor *inputs, etrt_dtype dtype,
                              uint8_t *bytes);

#endif
