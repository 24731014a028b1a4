/* Pooling: MaxPool, AveragePool, LpPool over windows (geometry in conv_shape.h) and
 * the Global* pools over whole planes. State shared by the definitions (pool.c) and
 * the CPU kernels (cpu/pool.c). */
#ifndef ETRT_ENGINE_OPS_POOL_H
#define ETRT_ENGINE_OPS_POOL_H

#include "engine/op.h"
#include "engine/ops/conv_shape.h"

typedef enum etrt_pool_kind {
  ETRT_POOL_MAX = 0,
  ETRT_POOL_AVERAGE = 1,
  ETRT_POOL_LP = 2
} etrt_pool_kind;

typedef struct etrt_pool_state {
  etrt_pool_kind kind;
  int global; /* GlobalMaxPool, GlobalAveragePool, GlobalLpPool */
  etrt_conv_params params;
} etrt_pool_state;

/* Reads the attributes of a pool node (any of the six) into `state`. */
etrt_status etrt_pool_state_parse(const etrt_node *node, etrt_pool_state *state);

etrt_status etrt_cpu_pool(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_global_pool(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs);

#endif
