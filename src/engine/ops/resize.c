/* Resize (nearest, linear, cubic) and the older Upsample: shape inference. Linear
 * and cubic take float32/float64; nearest moves bytes and takes any type. */
#include "engine/ops/resize.h"

#include <string.h>

#include "engine/ops/op_check.h"

static const etrt_dtype etrt_resize_float_types[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                                                     ETRT_DTYPE_INVALID};

static etrt_status etrt_resize_prepare(const etrt_node *node, void *state) {
  return etrt_resize_params_parse(node, (etrt_resize_params *)state);
}

static etrt_status etrt_resize_check(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_resize_params *out) {
  if (node->num_inputs < 2 || node->num_inputs > 4 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes X, then roi, scales and sizes (or scales alone), and 1 output");
  etrt_resize_params p;
  ETRT_RETURN_IF_ERROR(etrt_resize_params_parse(node, &p));
  const etrt_tensor *x = &inputs[0];
  if (p.mode != ETRT_RESIZE_NEAREST)
    ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input X", x->dtype, etrt_resize_float_types));
  else if (etrt_dtype_size(x->dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "input X has an unknown type");
  if (x->rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "X must have rank 1 or more");
  *out = p;
  return ETRT_OK;
}

static etrt_status etrt_resize_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  etrt_resize_params p;
  ETRT_RETURN_IF_ERROR(etrt_resize_check(node, inputs, &p));
  const etrt_tensor *x = &inputs[0];
  etrt_resize_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_resize_geometry_compute(node, &p, inputs, &g));
  outputs[0].dtype = x->dtype;
  outputs[0].rank = x->rank;
  memcpy(outputs[0].dims, g.out, sizeof g.out);
  return ETRT_OK;
}

/* Scales or sizes known only at execute: any size on every axis (no bound). */
static etrt_status etrt_resize_bound(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *lo, etrt_tensor *hi) {
  etrt_resize_params p;
  ETRT_RETURN_IF_ERROR(etrt_resize_check(node, inputs, &p));
  lo[0].dtype = hi[0].dtype = inputs[0].dtype;
  lo[0].rank = hi[0].rank = inputs[0].rank;
  for (int32_t a = 0; a < inputs[0].rank; ++a) {
    lo[0].dims[a] = 0;
    hi[0].dims[a] = ETRT_OP_DIM_UNBOUNDED;
  }
  return ETRT_OK;
}

/* tf_crop_and_resize reads roi on the host, and roi (not a value input) is known
 * there only while the plan is built: such nodes stay on the CPU. Nearest moves
 * elements of 1, 2, 4 or 8 bytes; the interpolating modes take float32/float64. */
static int etrt_resize_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  const etrt_resize_params *p = (const etrt_resize_params *)node->state;
  if (p == NULL) return 0;
  if (p->transform == ETRT_RESIZE_TF_CROP_AND_RESIZE && node->num_inputs > 1 &&
      inputs[1].rank >= 0 && etrt_tensor_numel(&inputs[1]) > 0)
    return 0;
  if (p->mode == ETRT_RESIZE_NEAREST) {
    size_t size = etrt_dtype_size(inputs[0].dtype);
    return size == 1 || size == 2 || size == 4 || size == 8;
  }
  return inputs[0].dtype == ETRT_DTYPE_FLOAT32 || inputs[0].dtype == ETRT_DTYPE_FLOAT64;
}

static const etrt_op_def etrt_op_def_resize = {.op_type = "Resize",
                                               .state_size = sizeof(etrt_resize_params),
                                               .prepare = etrt_resize_prepare,
                                               .infer = etrt_resize_infer,
                                               .bound = etrt_resize_bound,
                                               .cuda_supports = etrt_resize_cuda_supports,
                                               .value_inputs = (1u << 2) | (1u << 3)};
static const etrt_op_def etrt_op_def_upsample = {.op_type = "Upsample",
                                                 .state_size = sizeof(etrt_resize_params),
                                                 .prepare = etrt_resize_prepare,
                                                 .infer = etrt_resize_infer,
                                                 .bound = etrt_resize_bound,
                                                 .cuda_supports = etrt_resize_cuda_supports,
                                                 .value_inputs = 1u << 1};

const etrt_op_def *const etrt_ops_resize[] = {&etrt_op_def_resize, &etrt_op_def_upsample, NULL};
