/* Softmax, LogSoftmax, Hardmax along `axis`.
 *
 * Opset 13 changed their meaning: from 13 on, `axis` (default -1) is the one axis
 * normalized; before, the input was coerced to 2-D at `axis` (default 1) and the
 * normalization ran over all the trailing axes at once. The network API cannot know
 * the model's opset, so the importer passes it as the int attribute "_opset" for these
 * three operators; without it, opset 13 semantics apply. */
#include "engine/ops/softmax.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static etrt_status etrt_softmax_read(const etrt_node *node, etrt_softmax_state *s) {
  memset(s, 0, sizeof *s);
  if (strcmp(node->op_type, "LogSoftmax") == 0)
    s->kind = ETRT_SOFTMAX_LOG;
  else if (strcmp(node->op_type, "Hardmax") == 0)
    s->kind = ETRT_SOFTMAX_HARD;
  else
    s->kind = ETRT_SOFTMAX;
  int64_t opset = etrt_node_attribute_int(node, "_opset", 13);
  s->legacy = opset < 13;
  s->axis = etrt_node_attribute_int(node, "axis", s->legacy ? 1 : -1);
  return ETRT_OK;
}

static etrt_status etrt_softmax_prepare(const etrt_node *node, void *state) {
  return etrt_softmax_read(node, state);
}

etrt_status etrt_softmax_layout(const etrt_node *node, const etrt_softmax_state *state,
                                const etrt_tensor *input, int64_t *outer, int64_t *n,
                                int64_t *inner) {
  int32_t rank = input->rank;
  int32_t axis;
  if (rank == 0) {
    /* a scalar is one group of one element */
    *outer = *n = *inner = 1;
    return ETRT_OK;
  }
  if (state->legacy && state->axis == rank) {
    axis = rank; /* legacy 2-D coercion allows axis == rank: groups of one element */
  } else {
    ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axis", state->axis, rank, &axis));
  }
  *outer = 1;
  *n = 1;
  *inner = 1;
  for (int32_t a = 0; a < rank; ++a) {
    if (a < axis)
      *outer *= input->dims[a];
    else if (a == axis || state->legacy)
      *n *= input->dims[a];
    else
      *inner *= input->dims[a];
  }
  return ETRT_OK;
}

static etrt_status etrt_softmax_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  static const etrt_dtype floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                      ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INVALID};
  etrt_softmax_state s;
  ETRT_RETURN_IF_ERROR(etrt_softmax_read(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_op_check_single_io(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype, floats));
  int64_t outer, n, inner;
  ETRT_RETURN_IF_ERROR(etrt_softmax_layout(node, &s, &inputs[0], &outer, &n, &inner));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof outputs[0].dims);
  return ETRT_OK;
}

#define ETRT_SOFTMAX_DEF(var, name)                                         \
  static const etrt_op_def var = {.op_type = name,                          \
                                  .state_size = sizeof(etrt_softmax_state), \
                                  .prepare = etrt_softmax_prepare,          \
                                  .infer = etrt_softmax_infer,              \
                                  .cuda_supports = etrt_op_float_cuda_supports};
ETRT_SOFTMAX_DEF(etrt_op_def_softmax, "Softmax")
ETRT_SOFTMAX_DEF(etrt_op_def_log_softmax, "LogSoftmax")
ETRT_SOFTMAX_DEF(etrt_op_def_hardmax, "Hardmax")
#undef ETRT_SOFTMAX_DEF

const etrt_op_def *const etrt_ops_softmax[] = {&etrt_op_def_softmax, &etrt_op_def_log_softmax,
                                               &etrt_op_def_hardmax, NULL};
