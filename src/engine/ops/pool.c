/* MaxPool, AveragePool, LpPool and their Global forms: attributes and shapes. */
#include "engine/ops/pool.h"

#include <string.h>

#include "engine/ops/op_check.h"

static const etrt_dtype etrt_pool_float_types[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                                                   ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
                                                   ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_pool_max_types[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
    ETRT_DTYPE_INT8,    ETRT_DTYPE_UINT8,   ETRT_DTYPE_INVALID};

etrt_status etrt_pool_state_parse(const etrt_node *node, etrt_pool_state *state) {
  memset(state, 0, sizeof *state);
  const char *type = node->op_type;
  state->global = strncmp(type, "Global", 6) == 0;
  const char *base = state->global ? type + 6 : type;
  if (strcmp(base, "MaxPool") == 0)
    state->kind = ETRT_POOL_MAX;
  else if (strcmp(base, "AveragePool") == 0)
    state->kind = ETRT_POOL_AVERAGE;
  else
    state->kind = ETRT_POOL_LP;
  if (state->global) {
    state->params.lp_p = etrt_node_attribute_int(node, "p", 2);
    state->params.channels_last = etrt_node_attribute_int(node, "channels_last", 0) == 1;
  } else {
    ETRT_RETURN_IF_ERROR(etrt_conv_params_parse(node, 1, &state->params));
    if (state->params.group != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "has no attribute 'group'");
  }
  if (state->kind == ETRT_POOL_LP && state->params.lp_p < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "p must be positive, is %lld",
                         (long long)state->params.lp_p);
  return ETRT_OK;
}

static etrt_status etrt_pool_prepare(const etrt_node *node, void *state) {
  return etrt_pool_state_parse(node, (etrt_pool_state *)state);
}

static etrt_status etrt_pool_shape(const etrt_node *node, const etrt_pool_state *s,
                                   const etrt_tensor *x, etrt_tensor *outputs);

static etrt_status etrt_pool_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  etrt_pool_state state;
  ETRT_RETURN_IF_ERROR(etrt_pool_state_parse(node, &state));
  int with_indices = state.kind == ETRT_POOL_MAX && !state.global;
  if (node->num_inputs != 1 || !etrt_op_has_input(node, inputs, 0) || node->num_outputs < 1 ||
      node->num_outputs > (uint32_t)(with_indices ? 2 : 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         with_indices ? "takes one input and one or two outputs (Y, Indices)"
                                      : "takes one input and one output");
  /* channels_last: the shapes are worked out on X seen in NCHW order, and Y's dims are
   * then put in X's order. MaxPool's Indices (positions in NCHW order) are not offered. */
  etrt_tensor viewed;
  const etrt_tensor *x = &inputs[0];
  if (state.params.channels_last) {
    ETRT_RETURN_IF_ERROR(etrt_conv_check_channels_last(node, x, "X"));
    if (node->num_outputs != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "channels_last takes one output (no Indices)");
    viewed = etrt_conv_nchw_view(x);
    x = &viewed;
  }
  ETRT_RETURN_IF_ERROR(etrt_pool_shape(node, &state, x, outputs));
  if (state.params.channels_last) etrt_conv_nhwc_dims(&outputs[0]);
  return ETRT_OK;
}

/* Y's (and Indices') type and NCHW dims for X's NCHW dims. */
static etrt_status etrt_pool_shape(const etrt_node *node, const etrt_pool_state *s,
                                   const etrt_tensor *x, etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "input X", x->dtype,
                          s->kind == ETRT_POOL_MAX ? etrt_pool_max_types : etrt_pool_float_types));
  outputs[0].dtype = x->dtype;
  outputs[0].rank = x->rank;
  outputs[0].dims[0] = x->dims[0];
  outputs[0].dims[1] = x->dims[1];
  if (s->global) {
    if (x->rank < 2)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input must have rank 2 or more ([N, C, spatial...]), has rank %d",
                           (int)x->rank);
    for (int32_t i = 2; i < x->rank; ++i) outputs[0].dims[i] = 1;
    return ETRT_OK;
  }
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_pool(node, &s->params, x, &g));
  for (int32_t i = 0; i < g.spatial; ++i) outputs[0].dims[i + 2] = g.out[i];
  if (node->num_outputs == 2) {
    outputs[1] = outputs[0];
    outputs[1].dtype = ETRT_DTYPE_INT64;
  }
  return ETRT_OK;
}

#define ETRT_POOL_DEF(ident, name, layouts)                                                     \
  static const etrt_op_def etrt_op_def_##ident = {.op_type = name,                              \
                                                  .state_size = sizeof(etrt_pool_state),        \
                                                  .prepare = etrt_pool_prepare,                 \
                                                  .infer = etrt_pool_infer,                     \
                                                  .cuda_supports = etrt_op_float_cuda_supports, \
                                                  .channels_last = layouts};
/* Every pool has channels-last kernels but LpPool's (no network the builder sees uses it). */
ETRT_POOL_DEF(max_pool, "MaxPool", 1)
ETRT_POOL_DEF(average_pool, "AveragePool", 1)
ETRT_POOL_DEF(lp_pool, "LpPool", 0)
ETRT_POOL_DEF(global_max_pool, "GlobalMaxPool", 1)
ETRT_POOL_DEF(global_average_pool, "GlobalAveragePool", 1)
ETRT_POOL_DEF(global_lp_pool, "GlobalLpPool", 0)
#undef ETRT_POOL_DEF

const etrt_op_def *const etrt_ops_pool[] = {&etrt_op_def_max_pool,
                                            &etrt_op_def_average_pool,
                                            &etrt_op_def_lp_pool,
                                            &etrt_op_def_global_max_pool,
                                            &etrt_op_def_global_average_pool,
                                            &etrt_op_def_global_lp_pool,
                                            NULL};
