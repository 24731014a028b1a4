/* Det(X [..., n, n]) -> [...]: float32 or float64. */
#include "engine/ops/det.h"

#include "engine/op.h"
#include "engine/ops/op_check.h"

static etrt_status etrt_det_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  static const etrt_dtype allowed[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INVALID};
  ETRT_RETURN_IF_ERROR(etrt_op_check_single_io(node, inputs));
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", x->dtype, allowed));
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input must be square matrices [..., n, n] (rank %d)", (int)x->rank);
  outputs[0].dtype = x->dtype;
  outputs[0].rank = x->rank - 2;
  for (int32_t a = 0; a < x->rank - 2; ++a) outputs[0].dims[a] = x->dims[a];
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_det = {
    .op_type = "Det", .infer = etrt_det_infer, .cuda_supports = etrt_op_supports_all};

const etrt_op_def *const etrt_ops_det[] = {&etrt_op_def_det, NULL};
