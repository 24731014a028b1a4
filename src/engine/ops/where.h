/* Where: the CPU kernel the definition (where.c) names. */
#ifndef ETRT_ENGINE_OPS_WHERE_H
#define ETRT_ENGINE_OPS_WHERE_H

#include "engine/op.h"

etrt_status etrt_cpu_where(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
