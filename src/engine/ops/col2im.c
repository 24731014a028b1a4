/* Col2Im: shape inference and the plan (col2im.h). */
#include "engine/ops/col2im.h"

#include "engine/ops/op_check.h"

/* An INTS attribute of `count` values, or `fallback` for each when absent. */
static etrt_status etrt_col2im_ints(const etrt_node *node, const char *name, int64_t count,
                                    int64_t fallback, int64_t *out) {
  int64_t n = 0;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, name, out, count, &n));
  if (n == 0)
    for (int64_t i = 0; i < count; ++i) out[i] = fallback;
  else if (n != count)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s must give %lld values", name,
                         (long long)count);
  return ETRT_OK;
}

etrt_status etrt_col2im_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_col2im_plan *plan) {
  if (node->num_inputs != 3 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 1) ||
      !etrt_op_has_input(node, inputs, 2))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 3 inputs and 1 output");
  const etrt_tensor *x = &inputs[0];
  static const etrt_dtype allowed[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INVALID};
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", x->dtype, allowed));
  if (x->rank != 3)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input must be [N, C * block, L]");
  int64_t image[ETRT_MAX_RANK], block[ETRT_MAX_RANK], ni = 0, nb = 0;
  ETRT_RETURN_IF_ERROR(
      etrt_op_input_ints(node, inputs, 1, "image_shape", image, ETRT_MAX_RANK, &ni));
  ETRT_RETURN_IF_ERROR(
      etrt_op_input_ints(node, inputs, 2, "block_shape", block, ETRT_MAX_RANK, &nb));
  if (ni != nb || ni < 1 || ni > ETRT_COL2IM_MAX_DIMS)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "image_shape and block_shape must give the same 1 to %d dims",
                         ETRT_COL2IM_MAX_DIMS);
  int32_t dims = (int32_t)ni;
  int64_t pads[2 * ETRT_COL2IM_MAX_DIMS];
  plan->dims = dims;
  ETRT_RETURN_IF_ERROR(etrt_col2im_ints(node, "dilations", dims, 1, plan->dilation));
  ETRT_RETURN_IF_ERROR(etrt_col2im_ints(node, "strides", dims, 1, plan->stride));
  ETRT_RETURN_IF_ERROR(etrt_col2im_ints(node, "pads", 2 * dims, 0, pads));
  plan->blocks = plan->positions = 1;
  for (int32_t d = 0; d < dims; ++d) {
    plan->image[d] = image[d];
    plan->block[d] = block[d];
    plan->pad[d] = pads[d];
    int64_t span = plan->dilation[d] * (block[d] - 1) + 1;
    int64_t room = image[d] + pads[d] + pads[d + dims] - span;
    if (image[d] < 1 || block[d] < 1 || plan->dilation[d] < 1 || plan->stride[d] < 1 ||
        pads[d] < 0 || pads[d + dims] < 0 || room < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "dim %d: image %lld, block %lld, dilation %lld, stride %lld and pads "
                           "leave no sliding position",
                           (int)d, (long long)image[d], (long long)block[d],
                           (long long)plan->dilation[d], (long long)plan->stride[d]);
    plan->slide[d] = room / plan->stride[d] + 1;
    plan->blocks *= block[d];
    plan->positions *= plan->slide[d];
  }
  if (x->dims[1] % plan->blocks != 0 || x->dims[2] != plan->positions)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input [%lld, %lld, %lld] must be [N, C * %lld, %lld]",
                         (long long)x->dims[0], (long long)x->dims[1], (long long)x->dims[2],
                         (long long)plan->blocks, (long long)plan->positions);
  plan->channels = x->dims[1] / plan->blocks;
  return ETRT_OK;
}

static etrt_status etrt_col2im_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  etrt_col2im_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_col2im_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = plan.dims + 2;
  outputs[0].dims[0] = inputs[0].dims[0];
  outputs[0].dims[1] = plan.channels;
  for (int32_t d = 0; d < plan.dims; ++d) outputs[0].dims[d + 2] = plan.image[d];
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_col2im = {.op_type = "Col2Im",
                                               .infer = etrt_col2im_infer,
                                               .cuda_supports = etrt_op_supports_all,
                                               .value_inputs = (1u << 1) | (1u << 2)};

const etrt_op_def *const etrt_ops_col2im[] = {&etrt_op_def_col2im, NULL};
