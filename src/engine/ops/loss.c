/* NegativeLogLikelihoodLoss(input [N, C, d1..dk], target [N, d1..dk], weight [C]?)
 * and SoftmaxCrossEntropyLoss(scores, labels, weights?) -> (loss, log_prob?), with
 * the attributes reduction ("none", "sum", "mean" (default)) and ignore_index. The
 * loss is [N, d1..dk] for "none", else a scalar. */
#include "engine/ops/loss.h"

#include <string.h>

#include "engine/ops/op_check.h"

static etrt_status etrt_loss_read(const etrt_node *node, etrt_loss_state *s) {
  memset(s, 0, sizeof *s);
  s->softmax = strcmp(node->op_type, "SoftmaxCrossEntropyLoss") == 0;
  const char *reduction = etrt_node_attribute_string(node, "reduction", "mean");
  if (strcmp(reduction, "none") == 0)
    s->reduction = ETRT_LOSS_NONE;
  else if (strcmp(reduction, "sum") == 0)
    s->reduction = ETRT_LOSS_SUM;
  else if (strcmp(reduction, "mean") == 0)
    s->reduction = ETRT_LOSS_MEAN;
  else
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "attribute 'reduction' is '%s'; 'none', 'sum' and 'mean' are allowed",
                         reduction);
  const etrt_attribute *ignore = etrt_node_attribute(node, "ignore_index");
  if (ignore != NULL) {
    if (ignore->kind != ETRT_ATTRIBUTE_INT)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "attribute 'ignore_index' must be an int");
    s->has_ignore_index = 1;
    s->ignore_index = ignore->i;
  }
  return ETRT_OK;
}

static etrt_status etrt_loss_prepare(const etrt_node *node, void *state) {
  return etrt_loss_read(node, state);
}

static etrt_status etrt_loss_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  static const etrt_dtype floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                      ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INVALID};
  static const etrt_dtype indices[] = {ETRT_DTYPE_INT32, ETRT_DTYPE_INT64, ETRT_DTYPE_INVALID};
  etrt_loss_state s;
  ETRT_RETURN_IF_ERROR(etrt_loss_read(node, &s));
  uint32_t max_outputs = s.softmax ? 2 : 1;
  if (node->num_inputs < 2 || node->num_inputs > 3 || node->num_outputs < 1 ||
      node->num_outputs > max_outputs)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 2 or 3 inputs and 1 to %u outputs, got %u and %u", max_outputs,
                         node->num_inputs, node->num_outputs);
  const etrt_tensor *x = &inputs[0], *target = &inputs[1];
  if (x->rank < 0 || target->rank < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "inputs 0 and 1 are required");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", x->dtype, floats));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 1 (target)", target->dtype, indices));
  if (x->rank < 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input 0 must be [N, C, ...], has rank %d", (int)x->rank);
  int ok = target->rank == x->rank - 1 && target->dims[0] == x->dims[0];
  for (int32_t a = 1; ok && a < target->rank; ++a) ok = target->dims[a] == x->dims[a + 1];
  if (!ok)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input 1 (target) must have input 0's shape without axis 1");
  if (etrt_op_has_input(node, inputs, 2)) {
    const etrt_tensor *w = &inputs[2];
    if (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != x->dims[1])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input 2 (weight) must be a 1-D %s tensor of C = %lld values",
                           etrt_dtype_name(x->dtype), (long long)x->dims[1]);
  }
  outputs[0].dtype = x->dtype;
  if (s.reduction == ETRT_LOSS_NONE) {
    outputs[0].rank = target->rank;
    memcpy(outputs[0].dims, target->dims, sizeof outputs[0].dims);
  } else {
    outputs[0].rank = 0;
  }
  if (node->num_outputs == 2) {
    outputs[1].dtype = x->dtype;
    outputs[1].rank = x->rank;
    memcpy(outputs[1].dims, x->dims, sizeof outputs[1].dims);
  }
  return ETRT_OK;
}

static int etrt_loss_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return etrt_op_dtype_is_float(inputs[0].dtype) &&
         (inputs[1].dtype == ETRT_DTYPE_INT32 || inputs[1].dtype == ETRT_DTYPE_INT64);
}

static const etrt_op_def etrt_op_def_nll = {.op_type = "NegativeLogLikelihoodLoss",
                                            .state_size = sizeof(etrt_loss_state),
                                            .prepare = etrt_loss_prepare,
                                            .infer = etrt_loss_infer,
                                            .cuda_supports = etrt_loss_cuda_supports};
static const etrt_op_def etrt_op_def_sce = {.op_type = "SoftmaxCrossEntropyLoss",
                                            .state_size = sizeof(etrt_loss_state),
                                            .prepare = etrt_loss_prepare,
                                            .infer = etrt_loss_infer,
                                            .cuda_supports = etrt_loss_cuda_supports};

const etrt_op_def *const etrt_ops_loss[] = {&etrt_op_def_nll, &etrt_op_def_sce, NULL};
