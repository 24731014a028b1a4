/* Cast (attribute `to`, an ONNX TensorProto.DataType number) and CastLike (the
 * dtype of input 1). Every numeric and bool dtype pair converts; `saturate` only
 * concerns float8 types, which etrt does not have, so it is ignored. */
#include "engine/ops/cast.h"

#include <string.h>

#include "base/dtype.h"
#include "engine/ops/op_check.h"

typedef struct etrt_cast_state {
  etrt_dtype to;
} etrt_cast_state;

static const etrt_dtype etrt_cast_dtypes[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
    ETRT_DTYPE_INT8,    ETRT_DTYPE_INT16,   ETRT_DTYPE_INT32,   ETRT_DTYPE_INT64,
    ETRT_DTYPE_UINT8,   ETRT_DTYPE_UINT16,  ETRT_DTYPE_UINT32,  ETRT_DTYPE_UINT64,
    ETRT_DTYPE_BOOL,    ETRT_DTYPE_INVALID};

static etrt_status etrt_cast_read(const etrt_node *node, etrt_cast_state *s) {
  const etrt_attribute *to = etrt_node_attribute(node, "to");
  if (to == NULL || to->kind != ETRT_ATTRIBUTE_INT)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "needs the int attribute 'to'");
  s->to = etrt_dtype_from_onnx(to->i); /* ONNX numbers the types its own way */
  if (s->to == ETRT_DTYPE_INVALID)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "attribute 'to' is ONNX element type %lld, which is not supported",
                         (long long)to->i);
  return ETRT_OK;
}

static etrt_status etrt_cast_prepare(const etrt_node *node, void *state) {
  return etrt_cast_read(node, state);
}

static etrt_status etrt_cast_shape(const etrt_node *node, const etrt_tensor *inputs,
                                   uint32_t num_inputs, etrt_dtype to, etrt_tensor *outputs) {
  if (node->num_inputs != num_inputs || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes %u input(s) and 1 output, got %u and %u", num_inputs,
                         node->num_inputs, node->num_outputs);
  for (uint32_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].rank < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is missing", i);
  }
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype, etrt_cast_dtypes));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "the target type", to, etrt_cast_dtypes));
  outputs[0].dtype = to;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof outputs[0].dims);
  return ETRT_OK;
}

static etrt_status etrt_cast_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  etrt_cast_state s;
  ETRT_RETURN_IF_ERROR(etrt_cast_read(node, &s));
  return etrt_cast_shape(node, inputs, 1, s.to, outputs);
}

static etrt_status etrt_cast_like_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  if (node->num_inputs < 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 inputs, got %u",
                         node->num_inputs);
  return etrt_cast_shape(node, inputs, 2, inputs[1].dtype, outputs);
}

/* The kernel converts to the output's dtype, so both operators share it. */
static const etrt_op_def etrt_op_def_cast = {.op_type = "Cast",
                                             .state_size = sizeof(etrt_cast_state),
                                             .prepare = etrt_cast_prepare,
                                             .infer = etrt_cast_infer,
                                             .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_cast_like = {.op_type = "CastLike",
                                                  .infer = etrt_cast_like_infer,
                                                  .cuda_supports = etrt_op_supports_all,
                                                  .dims_only_inputs = 2u};

const etrt_op_def *const etrt_ops_cast[] = {&etrt_op_def_cast, &etrt_op_def_cast_like, NULL};
