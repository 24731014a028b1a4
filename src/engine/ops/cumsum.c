/* CumSum(x, axis): running sums along `axis` (input 1, a 0-D or 1-element int32/int64
 * tensor whose value is needed on the host, so it is a value input), with the
 * attributes exclusive and reverse (default 0). */
#include "engine/ops/cumsum.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/value_bound.h"

static etrt_status etrt_cumsum_prepare(const etrt_node *node, void *state) {
  etrt_cumsum_state *s = state;
  s->exclusive = etrt_node_attribute_int(node, "exclusive", 0) != 0;
  s->reverse = etrt_node_attribute_int(node, "reverse", 0) != 0;
  return ETRT_OK;
}

etrt_status etrt_cumsum_layout(const etrt_node *node, const etrt_tensor *inputs, int64_t *outer,
                               int64_t *n, int64_t *inner) {
  int64_t value;
  int64_t count;
  ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "axis", &value, 1, &count));
  if (count != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 1 (axis) must hold one value");
  int32_t rank = inputs[0].rank;
  int32_t axis;
  /* a scalar input has nothing to sum along: it is its own cumulative sum */
  ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axis", value, rank > 0 ? rank : 1, &axis));
  *outer = *n = *inner = 1;
  for (int32_t a = 0; a < rank; ++a) {
    if (a < axis)
      *outer *= inputs[0].dims[a];
    else if (a == axis)
      *n = inputs[0].dims[a];
    else
      *inner *= inputs[0].dims[a];
  }
  return ETRT_OK;
}

static etrt_status etrt_cumsum_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  static const etrt_dtype allowed[] = {ETRT_DTYPE_FLOAT32,  ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                       ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INT32,   ETRT_DTYPE_INT64,
                                       ETRT_DTYPE_UINT32,   ETRT_DTYPE_UINT64,  ETRT_DTYPE_INVALID};
  if (node->num_inputs != 2 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 2 inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  if (inputs[0].rank < 0 || inputs[1].rank < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "both inputs are required");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype, allowed));
  int64_t outer, n, inner;
  ETRT_RETURN_IF_ERROR(etrt_cumsum_layout(node, inputs, &outer, &n, &inner));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof outputs[0].dims);
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_cumsum = {.op_type = "CumSum",
                                               .state_size = sizeof(etrt_cumsum_state),
                                               .prepare = etrt_cumsum_prepare,
                                               .infer = etrt_cumsum_infer,
                                               .bound = etrt_value_bound_same,
                                               .cuda_supports = etrt_op_supports_all,
                                               .value_inputs = 2u};

const etrt_op_def *const etrt_ops_cumsum[] = {&etrt_op_def_cumsum, NULL};
