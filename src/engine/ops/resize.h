/* Resize and Upsample: the CPU kernel that the definitions (resize.c) list; the
 * geometry is in resize_shape.h. */
#ifndef ETRT_ENGINE_OPS_RESIZE_H
#define ETRT_ENGINE_OPS_RESIZE_H

#include "engine/op.h"
#include "engine/ops/resize_shape.h"

etrt_status etrt_cpu_resize(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
