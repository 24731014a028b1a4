/* The normalizations: attributes and shape inference. Statistics are computed in
 * double whatever the input type (stash_type is therefore always honoured). */
#include "engine/ops/normalization.h"

#include <string.h>

#include "engine/ops/op_check.h"

static const etrt_dtype etrt_norm_types[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                                             ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
                                             ETRT_DTYPE_INVALID};

int32_t etrt_norm_axis(const etrt_norm_state *state, int32_t rank) {
  return (int32_t)(state->axis < 0 ? state->axis + rank : state->axis);
}

static etrt_status etrt_norm_parse(const etrt_node *node, etrt_norm_state *s) {
  memset(s, 0, sizeof *s);
  s->epsilon = etrt_node_attribute_float(node, "epsilon", 1e-5f);
  s->axis = etrt_node_attribute_int(node, "axis", -1);
  s->num_groups = etrt_node_attribute_int(node, "num_groups", 0);
  s->p = etrt_node_attribute_int(node, "p", 2);
  if (!(s->epsilon >= 0.0f))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "epsilon must not be negative");
  if (strcmp(node->op_type, "BatchNormalization") == 0) {
    s->training = etrt_node_attribute_int(node, "training_mode", 0) != 0;
    s->momentum = etrt_node_attribute_float(node, "momentum", 0.9f);
    if (etrt_node_attribute_int(node, "spatial", 1) != 1)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "spatial=0 is not supported");
  }
  if (strcmp(node->op_type, "GroupNormalization") == 0 && s->num_groups < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "attribute 'num_groups' must be given and positive");
  if (strcmp(node->op_type, "LpNormalization") == 0 && s->p != 1 && s->p != 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "p must be 1 or 2, is %lld",
                         (long long)s->p);
  return ETRT_OK;
}

static etrt_status etrt_norm_prepare(const etrt_node *node, void *state) {
  return etrt_norm_parse(node, (etrt_norm_state *)state);
}

/* Checks input count, the presence of the required ones, and X's type; copies X's
 * type and shape to output 0. */
static etrt_status etrt_norm_common(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs, uint32_t min_inputs, uint32_t max_inputs,
                                    uint32_t max_outputs, int32_t min_rank) {
  if (node->num_inputs < min_inputs || node->num_inputs > max_inputs || node->num_outputs < 1 ||
      node->num_outputs > max_outputs)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes %u to %u inputs and 1 to %u outputs, has %u and %u", min_inputs,
                         max_inputs, max_outputs, node->num_inputs, node->num_outputs);
  for (uint32_t i = 0; i < min_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  }
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input X", inputs[0].dtype, etrt_norm_types));
  for (uint32_t i = 1; i < node->num_inputs; ++i) {
    if (etrt_op_has_input(node, inputs, i) && inputs[i].dtype != inputs[0].dtype)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u has type %s, X has %s", i,
                           etrt_dtype_name(inputs[i].dtype), etrt_dtype_name(inputs[0].dtype));
  }
  if (inputs[0].rank < min_rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "X must have rank %d or more, has %d",
                         (int)min_rank, (int)inputs[0].rank);
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof outputs[0].dims);
  return ETRT_OK;
}

/* Inputs first..last must be 1-D of `size` elements (per-channel parameters). */
static etrt_status etrt_norm_check_vectors(const etrt_node *node, const etrt_tensor *inputs,
                                           uint32_t first, uint32_t last, int64_t size,
                                           const char *what) {
  for (uint32_t i = first; i <= last && i < node->num_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i)) continue;
    if (inputs[i].rank != 1 || inputs[i].dims[0] != size)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input %u must be 1-D with %lld elements (%s)", i, (long long)size,
                           what);
  }
  return ETRT_OK;
}

static etrt_status etrt_batch_norm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  etrt_norm_state s;
  ETRT_RETURN_IF_ERROR(etrt_norm_parse(node, &s));
  /* Opset 14 on: running_mean and running_var are written in training mode only
   * (the saved statistics of opsets 9 to 13 are not). */
  if (node->num_outputs > 1 && !s.training)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "the running mean/variance outputs are written only with training_mode=1");
  ETRT_RETURN_IF_ERROR(etrt_norm_common(node, inputs, outputs, 5, 5, 3, 2));
  ETRT_RETURN_IF_ERROR(
      etrt_norm_check_vectors(node, inputs, 1, 4, inputs[0].dims[1], "one per channel"));
  for (uint32_t o = 1; o < node->num_outputs; ++o) {
    outputs[o].dtype = inputs[3].dtype;
    outputs[o].rank = 1;
    outputs[o].dims[0] = inputs[0].dims[1];
  }
  return ETRT_OK;
}

static etrt_status etrt_instance_norm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                            etrt_tensor *outputs) {
  etrt_norm_state s;
  ETRT_RETURN_IF_ERROR(etrt_norm_parse(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_norm_common(node, inputs, outputs, 3, 3, 1, 3));
  return etrt_norm_check_vectors(node, inputs, 1, 2, inputs[0].dims[1], "one per channel");
}

static etrt_status etrt_group_norm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  etrt_norm_state s;
  ETRT_RETURN_IF_ERROR(etrt_norm_parse(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_norm_common(node, inputs, outputs, 3, 3, 1, 3));
  int64_t channels = inputs[0].dims[1];
  if (channels % s.num_groups != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "%lld channels do not split into %lld groups", (long long)channels,
                         (long long)s.num_groups);
  /* Opset 18 gives scale and bias per group, opset 21 per channel. */
  int64_t size = inputs[1].rank == 1 && inputs[1].dims[0] == channels ? channels : s.num_groups;
  return etrt_norm_check_vectors(node, inputs, 1, 2, size, "one per group or per channel");
}

/* Scale and bias of LayerNormalization: after leading 1s, their dims must be the
 * trailing dims of X from `axis` on (a suffix broadcasts over the rest). */
static etrt_status etrt_layer_norm_check_param(const etrt_node *node, const etrt_tensor *x,
                                               int32_t axis, const etrt_tensor *p, uint32_t index) {
  int32_t lead = 0;
  while (lead < p->rank && p->dims[lead] == 1) ++lead;
  int ok = p->rank - lead <= x->rank - axis;
  for (int32_t i = lead; ok && i < p->rank; ++i)
    ok = p->dims[i] == x->dims[x->rank - (p->rank - i)];
  if (!ok)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u must have the trailing dims of X from axis %d", index,
                         (int)axis);
  return ETRT_OK;
}

static etrt_status etrt_layer_norm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  etrt_norm_state s;
  ETRT_RETURN_IF_ERROR(etrt_norm_parse(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_norm_common(node, inputs, outputs, 2, 3, 3, 1));
  const etrt_tensor *x = &inputs[0];
  if (s.axis < -x->rank || s.axis >= x->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                         (long long)s.axis, (int)x->rank);
  int32_t axis = etrt_norm_axis(&s, x->rank);
  ETRT_RETURN_IF_ERROR(etrt_layer_norm_check_param(node, x, axis, &inputs[1], 1));
  if (etrt_op_has_input(node, inputs, 2))
    ETRT_RETURN_IF_ERROR(etrt_layer_norm_check_param(node, x, axis, &inputs[2], 2));
  for (uint32_t o = 1; o < node->num_outputs; ++o) {
    outputs[o].dtype = ETRT_DTYPE_FLOAT32; /* stash_type 1, the only one ONNX defines */
    outputs[o].rank = x->rank;
    for (int32_t i = 0; i < x->rank; ++i) outputs[o].dims[i] = i < axis ? x->dims[i] : 1;
  }
  return ETRT_OK;
}

/* EtrtAddLayerNorm(A, B, scale[, bias]) -> Y[, Sum]: LayerNormalization of A + B,
 * the residual connection of a transformer block in one pass; Sum is A + B for
 * the readers of the residual stream. A and B have one shape: the builder fuses
 * only an Add that does not broadcast. */
static etrt_status etrt_add_layer_norm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                             etrt_tensor *outputs) {
  etrt_norm_state s;
  ETRT_RETURN_IF_ERROR(etrt_norm_parse(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_norm_common(node, inputs, outputs, 3, 4, 2, 1));
  const etrt_tensor *x = &inputs[0];
  int same = inputs[1].rank == x->rank;
  for (int32_t i = 0; same && i < x->rank; ++i) same = inputs[1].dims[i] == x->dims[i];
  if (!same)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input 1 (B) must have the shape of input 0 (A)");
  if (s.axis < -x->rank || s.axis >= x->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                         (long long)s.axis, (int)x->rank);
  int32_t axis = etrt_norm_axis(&s, x->rank);
  ETRT_RETURN_IF_ERROR(etrt_layer_norm_check_param(node, x, axis, &inputs[2], 2));
  if (etrt_op_has_input(node, inputs, 3))
    ETRT_RETURN_IF_ERROR(etrt_layer_norm_check_param(node, x, axis, &inputs[3], 3));
  if (node->num_outputs > 1) {
    outputs[1].dtype = x->dtype;
    outputs[1].rank = x->rank;
    memcpy(outputs[1].dims, x->dims, sizeof outputs[1].dims);
  }
  return ETRT_OK;
}

static etrt_status etrt_lp_norm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  etrt_norm_state s;
  ETRT_RETURN_IF_ERROR(etrt_norm_parse(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_norm_common(node, inputs, outputs, 1, 1, 1, 1));
  if (s.axis < -inputs[0].rank || s.axis >= inputs[0].rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                         (long long)s.axis, (int)inputs[0].rank);
  return ETRT_OK;
}

/* X and every parameter of one float dtype (LayerNormalization's optional Mean and
 * InvStdDev outputs are float32 as on the CPU). */
static int etrt_norm_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  etrt_dtype t = inputs[0].dtype;
  if (!etrt_op_dtype_is_float(t)) return 0;
  /* Batch statistics need a reduction per channel that the CUDA kernel lacks. */
  if (((const etrt_norm_state *)node->state)->training) return 0;
  for (uint32_t k = 1; k < node->num_inputs; ++k) {
    if (inputs[k].rank >= 0 && inputs[k].dtype != t) return 0;
  }
  return 1;
}

#define ETRT_NORM_DEF(ident, name, infer_fn)                                             \
  static const etrt_op_def etrt_op_def_##ident = {.op_type = name,                       \
                                                  .state_size = sizeof(etrt_norm_state), \
                                                  .prepare = etrt_norm_prepare,          \
                                                  .infer = infer_fn,                     \
                                                  .cuda_supports = etrt_norm_cuda_supports};
ETRT_NORM_DEF(batch_norm, "BatchNormalization", etrt_batch_norm_infer)
ETRT_NORM_DEF(instance_norm, "InstanceNormalization", etrt_instance_norm_infer)
ETRT_NORM_DEF(layer_norm, "LayerNormalization", etrt_layer_norm_infer)
ETRT_NORM_DEF(group_norm, "GroupNormalization", etrt_group_norm_infer)
ETRT_NORM_DEF(lp_norm, "LpNormalization", etrt_lp_norm_infer)
ETRT_NORM_DEF(add_layer_norm, "EtrtAddLayerNorm", etrt_add_layer_norm_infer)
#undef ETRT_NORM_DEF

const etrt_op_def *const etrt_ops_normalization[] = {&etrt_op_def_batch_norm,
                                                     &etrt_op_def_instance_norm,
                                                     &etrt_op_def_layer_norm,
                                                     &etrt_op_def_group_norm,
                                                     &etrt_op_def_lp_norm,
                                                     &etrt_op_def_add_layer_norm,
                                                     NULL};
