/* CenterCropPad: shape inference and the plan (crop.h). */
#include "engine/ops/crop.h"

#include "engine/ops/op_check.h"
#include "engine/ops/value_bound.h"
#include "engine/ops/shape_util.h"

etrt_status etrt_crop_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_crop_plan *plan) {
  if (node->num_inputs != 2 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 inputs and 1 output");
  const etrt_tensor *x = &inputs[0];
  int64_t axes[ETRT_MAX_RANK], shape[ETRT_MAX_RANK], naxes = 0, nshape = 0;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "axes", axes, ETRT_MAX_RANK, &naxes));
  ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "shape", shape, ETRT_MAX_RANK, &nshape));
  if (naxes == 0) {
    naxes = x->rank;
    for (int32_t a = 0; a < x->rank; ++a) axes[a] = a;
  }
  if (nshape != naxes)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape gives %lld sizes for %lld axes",
                         (long long)nshape, (long long)naxes);
  plan->rank = x->rank;
  for (int32_t a = 0; a < x->rank; ++a) {
    plan->in_dims[a] = plan->out_dims[a] = x->dims[a];
    plan->offset[a] = 0;
  }
  int seen[ETRT_MAX_RANK] = {0};
  for (int64_t k = 0; k < naxes; ++k) {
    int32_t a;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axes", axes[k], x->rank, &a));
    if (seen[a]++)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d is repeated", (int)a);
    if (shape[k] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape[%lld] is negative",
                           (long long)k);
    int64_t in = x->dims[a], out = shape[k];
    plan->out_dims[a] = out;
    plan->offset[a] = in >= out ? (in - out) / 2 : -((out - in) / 2);
  }
  return ETRT_OK;
}

static etrt_status etrt_crop_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  if (node->num_inputs >= 1 && etrt_dtype_size(inputs[0].dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "input 0 has an unknown type");
  etrt_crop_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_crop_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = plan.rank;
  for (int32_t a = 0; a < plan.rank; ++a) outputs[0].dims[a] = plan.out_dims[a];
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_center_crop_pad = {.op_type = "CenterCropPad",
                                                        .infer = etrt_crop_infer,
                                                        .bound = etrt_value_bound_open_probe,
                                                        .cuda_supports = etrt_op_supports_all,
                                                        .value_inputs = 1u << 1};

const etrt_op_def *const etrt_ops_crop[] = {&etrt_op_def_center_crop_pad, NULL};
