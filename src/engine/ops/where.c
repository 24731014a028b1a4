/* Where(condition, X, Y): X where condition is true, else Y, the three inputs
 * broadcast together (ONNX multidirectional broadcasting). X and Y share any dtype;
 * the output has it. */
#include "engine/ops/where.h"

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static etrt_status etrt_where_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  static const etrt_dtype conditions[] = {ETRT_DTYPE_BOOL, ETRT_DTYPE_INVALID};
  if (node->num_inputs != 3 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 3 inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  for (uint32_t i = 0; i < 3; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  }
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "input 0 (condition)", inputs[0].dtype, conditions));
  if (inputs[1].dtype != inputs[2].dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "X and Y must have one dtype, got %s and %s",
                         etrt_dtype_name(inputs[1].dtype), etrt_dtype_name(inputs[2].dtype));
  size_t size = etrt_dtype_size(inputs[1].dtype);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "X has type %s, which is not supported",
                         etrt_dtype_name(inputs[1].dtype));
  outputs[0].dtype = inputs[1].dtype;
  return etrt_shape_broadcast(node, 3, inputs, &outputs[0].rank, outputs[0].dims);
}

static int etrt_where_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return inputs[0].dtype == ETRT_DTYPE_BOOL && inputs[1].dtype == inputs[2].dtype;
}

static const etrt_op_def etrt_op_def_where = {
    .op_type = "Where", .infer = etrt_where_infer, .cuda_supports = etrt_where_cuda_supports};

const etrt_op_def *const etrt_ops_where[] = {&etrt_op_def_where, NULL};
