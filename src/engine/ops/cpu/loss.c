/* CPU kernel of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, in double.
 * SoftmaxCrossEntropyLoss is the NLL of LogSoftmax(scores, axis 1); its log-sum-exp
 * per position is computed on the fly, so no scratch buffer is needed when the
 * log_prob output is not asked for. */
#include <math.h>

#include "engine/ops/cpu/scalar.h"
#include "engine/ops/loss.h"
#include "engine/ops/op_check.h"

etrt_status etrt_cpu_loss(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_loss_state *s = node->state;
  const etrt_tensor *x = &inputs[0], *target = &inputs[1];
  const etrt_tensor *weight = etrt_op_has_input(node, inputs, 2) ? &inputs[2] : NULL;
  etrt_tensor *log_prob = node->num_outputs == 2 && outputs[1].rank >= 0 && outputs[1].data != NULL
                              ? &outputs[1]
                              : NULL;
  const int64_t batch = x->dims[0], classes = x->dims[1];
  int64_t inner = 1;
  for (int32_t a = 2; a < x->rank; ++a) inner *= x->dims[a];
  double total = 0, total_weight = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t position = b * inner + d;
      const int64_t first = b * classes * inner + d; /* x[b, 0, d] */
      double shift = 0; /* the log-sum-exp over the classes (SoftmaxCrossEntropyLoss) */
      if (s->softmax) {
        double m = -INFINITY;
        for (int64_t c = 0; c < classes; ++c)
          m = fmax(m, etrt_scalar_load(x->data, x->dtype, first + c * inner));
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          sum += exp(etrt_scalar_load(x->data, x->dtype, first + c * inner) - m);
        shift = m + log(sum);
        if (log_prob != NULL) {
          for (int64_t c = 0; c < classes; ++c)
            etrt_scalar_store(log_prob->data, log_prob->dtype, first + c * inner,
                              etrt_scalar_load(x->data, x->dtype, first + c * inner) - shift);
        }
      }
      int64_t label = target->dtype == ETRT_DTYPE_INT64 ? ((const int64_t *)target->data)[position]
                                                        : ((const int32_t *)target->data)[position];
      double loss = 0, w = 0;
      if (!(s->has_ignore_index && label == s->ignore_index)) {
        if (label < 0 || label >= classes)
          return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                               "target %lld at position %lld is outside [0, %lld)",
                               (long long)label, (long long)position, (long long)classes);
        w = weight != NULL ? etrt_scalar_load(weight->data, weight->dtype, label) : 1.0;
        loss = -(etrt_scalar_load(x->data, x->dtype, first + label * inner) - shift) * w;
      }
      if (s->reduction == ETRT_LOSS_NONE) {
        etrt_scalar_store(outputs[0].data, outputs[0].dtype, position, loss);
      } else {
        total += loss;
        total_weight += w;
      }
    }
  }
  if (s->reduction == ETRT_LOSS_SUM) etrt_scalar_store(outputs[0].data, outputs[0].dtype, 0, total);
  if (s->reduction == ETRT_LOSS_MEAN)
    etrt_scalar_store(outputs[0].data, outputs[0].dtype, 0, total / total_weight);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_loss[] = {
    {"NegativeLogLikelihoodLoss", etrt_cpu_loss},
    {"SoftmaxCrossEntropyLoss", etrt_cpu_loss},
    {NULL, NULL},
};
