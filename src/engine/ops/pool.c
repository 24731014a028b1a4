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
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(
      node, "input X", x->dtype,
      state.kind == ETRT_POOL_MAX ? etrt_pool_max_types : etrt_pool_float_types));
  outputs[0].dtype = x->dtype;
  outputs[0].rank = x->rank;
  outputs[0].dims[0] = x->dims[0];
  outputs[0].dims[1] = x->dims[1];
  if (state.global) {
    if (x->rank < 2)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input must have rank 2 or more ([N, C, spatial...]), has rank %d",
                           (int)x->rank);
    for (int32_t i = 2; i < x->rank; ++i) outputs[0].dims[i] = 1;
    return ETRT_OK;
  }
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_pool(node, &state.params, x, &g));
  for (int32_t i = 0; i < g.spatial; ++i) outputs[0].dims[i + 2] = g.out[i];
  if (node->num_outputs == 2) {
    outputs[1] = outputs[0];
    outputs[1].dtype = ETRT_DTYPE_INT64;
  }
  return ETRT_OK;
}

#define ETRT_POOL_DEF(ident, name)                                                       \
  static const etrt_op_def etrt_op_def_##ident = {.op_type = name,                       \
                                                  .state_size = sizeof(etrt_pool_state), \
                                                  .prepare = etrt_pool_prepare,          \
                                                  .infer = etrt_pool_infer,              \
                                                  .cuda_supports = etrt_op_float_cuda_supports};
ETRT_POOL_DEF(max_pool, "MaxPool")
ETRT_POOL_DEF(average_pool, "AveragePool")
ETRT_POOL_DEF(lp_pool, "LpPool")
ETRT_POOL_DEF(global_max_pool, "GlobalMaxPool")
ETRT_POOL_DEF(global_average_pool, "GlobalAveragePool")
ETRT_POOL_DEF(global_lp_pool, "GlobalLpPool")
#undef ETRT_POOL_DEF

const etrt_op_def *const etrt_ops_pool[] = {&etrt_op_def_max_pool,
                                            &etrt_op_def_average_pool,
                                            &etrt_op_def_lp_pool,
                                            &etrt_op_def_global_max_pool,
                                            &etrt_op_def_global_average_pool,
                                            &etrt_op_def_global_lp_pool,
                                            NULL};
