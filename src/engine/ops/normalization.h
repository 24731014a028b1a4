/* Normalizations: BatchNormalization, InstanceNormalization,
 * LayerNormalization, GroupNormalization, LpNormalization, and EtrtAddLayerNorm
 * (LayerNormalization of a residual sum). State shared by the
 * definitions (normalization.c) and the CPU kernels (cpu/normalization.c). */
#ifndef ETRT_ENGINE_OPS_NORMALIZATION_H
#define ETRT_ENGINE_OPS_NORMALIZATION_H

#include "engine/op.h"

typedef struct etrt_norm_state {
  float epsilon;
  int64_t axis;       /* LayerNormalization, LpNormalization (as given; may be negative) */
  int64_t num_groups; /* GroupNormalization */
  int64_t p;          /* LpNormalization */
  int training;       /* BatchNormalization's training_mode: batch statistics */
  float momentum;     /* BatchNormalization training: weight of the running statistics */
} etrt_norm_state;

/* The axis of LayerNormalization/LpNormalization resolved against `rank`. */
int32_t etrt_norm_axis(const etrt_norm_state *state, int32_t rank);

etrt_status etrt_cpu_batch_norm(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs);
etrt_status etrt_cpu_instance_norm(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs);
etrt_status etrt_cpu_layer_norm(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs);
etrt_status etrt_cpu_group_norm(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs);
etrt_status etrt_cpu_add_layer_norm(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs);
etrt_status etrt_cpu_lp_norm(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs);

#endif
