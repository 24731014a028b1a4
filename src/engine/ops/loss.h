/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the state the definitions
 * (loss.c) and the CPU kernel (cpu/loss.c) share. */
#ifndef ETRT_ENGINE_OPS_LOSS_H
#define ETRT_ENGINE_OPS_LOSS_H

#include <stdint.h>

#include "engine/op.h"

typedef enum etrt_loss_reduction {
  ETRT_LOSS_NONE,
  ETRT_LOSS_SUM,
  ETRT_LOSS_MEAN
} etrt_loss_reduction;

typedef struct etrt_loss_state {
  int softmax; /* SoftmaxCrossEntropyLoss: the scores go through LogSoftmax on axis 1 */
  etrt_loss_reduction reduction;
  int has_ignore_index;
  int64_t ignore_index;
} etrt_loss_state;

etrt_status etrt_cpu_loss(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
