/* Max, Min, Sum, Mean: the elementwise result over one or more inputs of one dtype,
 * broadcast together (ONNX multidirectional broadcasting). Max and Min take every
 * numeric dtype, Sum and Mean the float types. */
#include "engine/ops/variadic.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static void etrt_variadic_read(const etrt_node *node, etrt_variadic_state *s) {
  s->mean = strcmp(node->op_type, "Mean") == 0;
  if (strcmp(node->op_type, "Max") == 0)
    s->kind = ETRT_BINARY_MAX;
  else if (strcmp(node->op_type, "Min") == 0)
    s->kind = ETRT_BINARY_MIN;
  else
    s->kind = ETRT_BINARY_ADD;
}

static etrt_status etrt_variadic_prepare(const etrt_node *node, void *state) {
  etrt_variadic_read(node, state);
  return ETRT_OK;
}

static etrt_status etrt_variadic_infer(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  static const etrt_dtype floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                      ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INVALID};
  etrt_variadic_state s;
  etrt_variadic_read(node, &s);
  if (node->num_inputs < 1 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 or more inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is missing", i);
    if (inputs[i].dtype != inputs[0].dtype)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "inputs must have one dtype: input 0 is %s, input %u is %s",
                           etrt_dtype_name(inputs[0].dtype), i, etrt_dtype_name(inputs[i].dtype));
  }
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "input 0", inputs[0].dtype,
                          s.kind == ETRT_BINARY_ADD ? floats : etrt_arithmetic_dtypes));
  outputs[0].dtype = inputs[0].dtype;
  return etrt_shape_broadcast(node, node->num_inputs, inputs, &outputs[0].rank, outputs[0].dims);
}

#define ETRT_VARIADIC_DEF(var, name, cuda)                                   \
  static const etrt_op_def var = {.op_type = name,                           \
                                  .state_size = sizeof(etrt_variadic_state), \
                                  .prepare = etrt_variadic_prepare,          \
                                  .infer = etrt_variadic_infer,              \
                                  .cuda_supports = cuda};
ETRT_VARIADIC_DEF(etrt_op_def_max, "Max", etrt_binary_cuda_supports)
ETRT_VARIADIC_DEF(etrt_op_def_min, "Min", etrt_binary_cuda_supports)
ETRT_VARIADIC_DEF(etrt_op_def_sum, "Sum", etrt_binary_cuda_supports)
ETRT_VARIADIC_DEF(etrt_op_def_mean, "Mean", etrt_binary_float_cuda_supports)
#undef ETRT_VARIADIC_DEF

const etrt_op_def *const etrt_ops_variadic[] = {&etrt_op_def_max, &etrt_op_def_min,
                                                &etrt_op_def_sum, &etrt_op_def_mean, NULL};
