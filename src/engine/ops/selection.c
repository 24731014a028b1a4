/* ArgMax/ArgMin (keepdims, select_last_index) and TopK: shape inference. */
#include "engine/ops/selection.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/value_bound.h"

static const etrt_dtype etrt_selection_types[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INT8,  ETRT_DTYPE_UINT8,
    ETRT_DTYPE_INT16,   ETRT_DTYPE_INT32,   ETRT_DTYPE_INT64, ETRT_DTYPE_INVALID};

static etrt_status etrt_arg_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  if (node->num_inputs != 1 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 1 input and 1 output");
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", x->dtype, etrt_selection_types));
  if (x->rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must have rank 1 or more");
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
  if (x->dims[axis] == 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d is empty", (int)axis);
  int keepdims = etrt_node_attribute_int(node, "keepdims", 1) != 0;
  int32_t r = 0;
  for (int32_t i = 0; i < x->rank; ++i) {
    if (i != axis)
      outputs[0].dims[r++] = x->dims[i];
    else if (keepdims)
      outputs[0].dims[r++] = 1;
  }
  outputs[0].dtype = ETRT_DTYPE_INT64;
  outputs[0].rank = r;
  return ETRT_OK;
}

static etrt_status etrt_top_k_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  if (node->num_inputs != 2 || node->num_outputs != 2 || !etrt_op_has_input(node, inputs, 0) ||
      !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes inputs X and K, and outputs Values and Indices");
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", x->dtype, etrt_selection_types));
  if (x->rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must have rank 1 or more");
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, -1, x->rank, &axis));
  int64_t k, count;
  ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "K", &k, 1, &count));
  if (count != 1 || k < 0 || k > x->dims[axis])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "K must be one value in [0, %lld] (the size of axis %d)",
                         (long long)x->dims[axis], (int)axis);
  for (int o = 0; o < 2; ++o) {
    outputs[o].rank = x->rank;
    memcpy(outputs[o].dims, x->dims, sizeof outputs[o].dims);
    outputs[o].dims[axis] = k;
  }
  outputs[0].dtype = x->dtype;
  outputs[1].dtype = ETRT_DTYPE_INT64;
  return ETRT_OK;
}

static int etrt_selection_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  switch (inputs[0].dtype) {
    case ETRT_DTYPE_FLOAT32:
    case ETRT_DTYPE_FLOAT64:
    case ETRT_DTYPE_INT8:
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_INT16:
    case ETRT_DTYPE_INT32:
    case ETRT_DTYPE_INT64:
      return 1;
    default:
      return 0;
  }
}

static const etrt_op_def etrt_op_def_arg_max = {
    .op_type = "ArgMax", .infer = etrt_arg_infer, .cuda_supports = etrt_selection_cuda_supports};
static const etrt_op_def etrt_op_def_arg_min = {
    .op_type = "ArgMin", .infer = etrt_arg_infer, .cuda_supports = etrt_selection_cuda_supports};
/* K known only at execute: from none to all of the axis. */
static etrt_status etrt_top_k_bound(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_value_bound_probe(node, inputs, 0, lo));
  for (int o = 0; o < 2; ++o) {
    hi[o] = lo[o];
    memcpy(hi[o].dims, inputs[0].dims, sizeof hi[o].dims);
  }
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_top_k = {.op_type = "TopK",
                                              .infer = etrt_top_k_infer,
                                              .bound = etrt_top_k_bound,
                                              .cuda_supports = etrt_selection_cuda_supports,
                                              .value_inputs = 1u << 1};

const etrt_op_def *const etrt_ops_selection[] = {&etrt_op_def_arg_max, &etrt_op_def_arg_min,
                                                 &etrt_op_def_top_k, NULL};
