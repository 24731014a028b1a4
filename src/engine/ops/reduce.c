/* ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceLogSum, ReduceLogSumExp, ReduceSumSquare: attributes keepdims (default 1) and
 * noop_with_empty_axes (default 0); axes as an attribute (older opsets) or as the
 * optional input 1 (opset 13 for ReduceSum, 18 for the others). */
#include "engine/ops/reduce.h"

#include <stdio.h>
#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/value_bound.h"

static const struct {
  const char *op_type;
  int takes_integers;
} etrt_reduce_table[ETRT_REDUCE_KIND_COUNT] = {
#define ETRT_REDUCE_ROW(kind, name, ints) {name, ints},
    ETRT_REDUCE_OPS(ETRT_REDUCE_ROW)
#undef ETRT_REDUCE_ROW
};

static etrt_status etrt_reduce_read(const etrt_node *node, etrt_reduce_state *s) {
  memset(s, 0, sizeof *s);
  s->kind = ETRT_REDUCE_KIND_COUNT;
  for (int k = 0; k < ETRT_REDUCE_KIND_COUNT; ++k) {
    if (strcmp(etrt_reduce_table[k].op_type, node->op_type) == 0) s->kind = (etrt_reduce_kind)k;
  }
  if (s->kind == ETRT_REDUCE_KIND_COUNT)
    return etrt_op_error(node, ETRT_ERROR_INTERNAL, "not a reduction");
  s->keepdims = etrt_node_attribute_int(node, "keepdims", 1) != 0;
  s->noop_with_empty_axes = etrt_node_attribute_int(node, "noop_with_empty_axes", 0) != 0;
  return ETRT_OK;
}

static etrt_status etrt_reduce_prepare(const etrt_node *node, void *state) {
  return etrt_reduce_read(node, state);
}

etrt_status etrt_reduce_axes(const etrt_node *node, const etrt_reduce_state *state,
                             const etrt_tensor *inputs, uint32_t *reduced) {
  int64_t axes[ETRT_MAX_RANK];
  int64_t count = 0;
  int32_t rank = inputs[0].rank;
  int has_input = etrt_op_has_input(node, inputs, 1);
  if (etrt_node_attribute(node, "axes") != NULL) {
    if (has_input)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axes are given both as an attribute and as input 1");
    ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "axes", axes, ETRT_MAX_RANK, &count));
  } else if (has_input) {
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "axes", axes, ETRT_MAX_RANK, &count));
  }
  *reduced = 0;
  if (count == 0) {
    if (!state->noop_with_empty_axes) *reduced = rank > 0 ? (1u << rank) - 1u : 0u;
    return ETRT_OK;
  }
  for (int64_t i = 0; i < count; ++i) {
    char what[32];
    snprintf(what, sizeof what, "axes[%lld]", (long long)i);
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, what, axes[i], rank, &axis));
    if (*reduced & (1u << axis))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d is listed twice", (int)axis);
    *reduced |= 1u << axis;
  }
  return ETRT_OK;
}

static etrt_status etrt_reduce_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  static const etrt_dtype floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                      ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INVALID};
  static const etrt_dtype numeric[] = {ETRT_DTYPE_FLOAT32,  ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                       ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INT8,    ETRT_DTYPE_INT16,
                                       ETRT_DTYPE_INT32,    ETRT_DTYPE_INT64,   ETRT_DTYPE_UINT8,
                                       ETRT_DTYPE_UINT16,   ETRT_DTYPE_UINT32,  ETRT_DTYPE_UINT64,
                                       ETRT_DTYPE_INVALID};
  etrt_reduce_state s;
  ETRT_RETURN_IF_ERROR(etrt_reduce_read(node, &s));
  if (node->num_inputs < 1 || node->num_inputs > 2 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 or 2 inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  if (inputs[0].rank < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 is missing");
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "input 0", inputs[0].dtype,
                          etrt_reduce_table[s.kind].takes_integers ? numeric : floats));
  uint32_t reduced;
  ETRT_RETURN_IF_ERROR(etrt_reduce_axes(node, &s, inputs, &reduced));
  etrt_tensor *out = &outputs[0];
  out->dtype = inputs[0].dtype;
  out->rank = 0;
  for (int32_t a = 0; a < inputs[0].rank; ++a) {
    if (!(reduced & (1u << a))) {
      out->dims[out->rank++] = inputs[0].dims[a];
    } else if (s.keepdims) {
      out->dims[out->rank++] = 1;
    }
  }
  return ETRT_OK;
}

/* Axes known only at execute: with keepdims each axis is its size or 1; without, the
 * rank is the input's less the number of axes, each at most the largest input axis. */
static etrt_status etrt_reduce_bound(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *lo, etrt_tensor *hi) {
  etrt_reduce_state s;
  ETRT_RETURN_IF_ERROR(etrt_reduce_read(node, &s));
  if (node->num_inputs != 2 || node->num_outputs != 1 || inputs[0].rank < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes inputs data and axes");
  const etrt_tensor *x = &inputs[0];
  int64_t count;
  ETRT_RETURN_IF_ERROR(etrt_value_bound_count(node, inputs, 1, x->rank, &count));
  if (count == 0) { /* no axes: there are no values to wait for */
    ETRT_RETURN_IF_ERROR(etrt_value_bound_probe(node, inputs, 0, lo));
    hi[0] = lo[0];
    return ETRT_OK;
  }
  int32_t rank = s.keepdims ? x->rank : x->rank - (int32_t)count;
  etrt_value_bound_open(&lo[0], &hi[0], x->dtype, rank);
  int64_t largest = 1;
  for (int32_t a = 0; a < x->rank; ++a)
    if (x->dims[a] > largest) largest = x->dims[a];
  for (int32_t a = 0; a < rank; ++a) {
    int64_t d = x->dims[a];
    lo[0].dims[a] = s.keepdims && d < 1 ? d : s.keepdims ? 1 : 0;
    hi[0].dims[a] = s.keepdims ? (d > 1 ? d : 1) : largest;
  }
  return ETRT_OK;
}

/* Floats for every kind; int32/int64 for the kinds that stay integers. */
static int etrt_reduce_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  const etrt_reduce_state *s = (const etrt_reduce_state *)node->state;
  etrt_dtype t = inputs[0].dtype;
  if (s == NULL) return 0;
  if (etrt_op_dtype_is_float(t)) return 1;
  if (t != ETRT_DTYPE_INT32 && t != ETRT_DTYPE_INT64) return 0;
  return s->kind == ETRT_REDUCE_SUM || s->kind == ETRT_REDUCE_MAX || s->kind == ETRT_REDUCE_MIN ||
         s->kind == ETRT_REDUCE_PROD || s->kind == ETRT_REDUCE_SUM_SQUARE ||
         s->kind == ETRT_REDUCE_L1;
}

#define ETRT_REDUCE_DEF(kind, name, ints)                \
  static const etrt_op_def etrt_op_def_reduce_##kind = { \
      .op_type = name,                                   \
      .state_size = sizeof(etrt_reduce_state),           \
      .prepare = etrt_reduce_prepare,                    \
      .infer = etrt_reduce_infer,                        \
      .bound = etrt_reduce_bound,                        \
      .cuda_supports = etrt_reduce_cuda_supports,        \
      .value_inputs = 2u};
ETRT_REDUCE_OPS(ETRT_REDUCE_DEF)
#undef ETRT_REDUCE_DEF

const etrt_op_def *const etrt_ops_reduce[] = {
#define ETRT_REDUCE_REF(kind, name, ints) &etrt_op_def_reduce_##kind,
    ETRT_REDUCE_OPS(ETRT_REDUCE_REF)
#undef ETRT_REDUCE_REF
        NULL,
};
