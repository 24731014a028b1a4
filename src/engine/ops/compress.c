/* Compress: shape inference (compress.h). */
#include "engine/ops/compress.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

etrt_status etrt_compress_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_compress_layout *out) {
  const etrt_tensor *x = &inputs[0];
  out->outer = out->inner = 1;
  if (etrt_node_attribute(node, "axis") == NULL) {
    out->length = etrt_tensor_numel(x);
  } else {
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
    out->outer = etrt_shape_numel(axis, x->dims);
    out->length = x->dims[axis];
    out->inner = etrt_shape_numel(x->rank - axis - 1, x->dims + axis + 1);
  }
  int64_t c = inputs[1].dims[0];
  out->conditions = c < out->length ? c : out->length;
  return ETRT_OK;
}

static etrt_status etrt_compress_infer(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  if (node->num_inputs != 2 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 inputs and 1 output");
  const etrt_tensor *x = &inputs[0], *cond = &inputs[1];
  if (cond->dtype != ETRT_DTYPE_BOOL || cond->rank != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input 1 (condition) must be a 1-D bool tensor");
  if (x->rank < 1 || etrt_dtype_size(x->dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 must have rank 1 or more");
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_compress_layout_of(node, inputs, &l));
  const uint8_t *c = etrt_op_input_host(cond);
  if (c == NULL)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 1 (condition) sets the output shape: its values must be known "
                         "when the engine is built");
  int64_t kept = 0;
  for (int64_t i = 0; i < l.conditions; ++i) kept += c[i] != 0;
  outputs[0].dtype = x->dtype;
  if (etrt_node_attribute(node, "axis") == NULL) {
    outputs[0].rank = 1;
    outputs[0].dims[0] = kept;
  } else {
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
    outputs[0].rank = x->rank;
    memcpy(outputs[0].dims, x->dims, sizeof outputs[0].dims);
    outputs[0].dims[axis] = kept;
  }
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_compress = {.op_type = "Compress",
                                                 .infer = etrt_compress_infer,
                                                 .cuda_supports = etrt_op_supports_all,
                                                 .value_inputs = 1u << 1};

const etrt_op_def *const etrt_ops_compress[] = {&etrt_op_def_compress, NULL};
