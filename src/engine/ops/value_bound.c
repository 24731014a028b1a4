#include "engine/ops/value_bound.h"

#include <string.h>

#include "engine/ops/op_check.h"

#define ETRT_VALUE_BOUND_PROBE_MAX 64

etrt_status etrt_value_bound_count(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                                   int64_t capacity, int64_t *count) {
  const etrt_tensor *t = &inputs[index];
  if (t->rank > 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u must be a scalar or 1-D, has rank %d", index, (int)t->rank);
  *count = t->rank == 1 ? t->dims[0] : 1;
  if (*count < 0 || *count > capacity)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u holds %lld values, at most %lld are allowed", index,
                         (long long)*count, (long long)capacity);
  return ETRT_OK;
}

void etrt_value_bound_open(etrt_tensor *lo, etrt_tensor *hi, etrt_dtype dtype, int32_t rank) {
  memset(lo, 0, sizeof *lo);
  memset(hi, 0, sizeof *hi);
  lo->dtype = hi->dtype = dtype;
  lo->rank = hi->rank = rank;
  for (int32_t a = 0; a < rank; ++a) hi->dims[a] = ETRT_OP_DIM_UNBOUNDED;
}

etrt_status etrt_value_bound_probe(const etrt_node *node, const etrt_tensor *inputs, int64_t probe,
                                   etrt_tensor *out) {
  etrt_tensor in[32];
  int64_t values[32][ETRT_VALUE_BOUND_PROBE_MAX];
  uint32_t n = node->num_inputs < 32 ? node->num_inputs : 32;
  if (node->num_inputs > 32)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "%u inputs, more than 32", node->num_inputs);
  for (uint32_t i = 0; i < n; ++i) {
    in[i] = inputs[i];
    if (!(node->def->value_inputs >> i & 1u) || !etrt_op_has_input(node, inputs, i) ||
        etrt_op_input_host(&inputs[i]) != NULL)
      continue;
    int64_t count = 0;
    ETRT_RETURN_IF_ERROR(
        etrt_value_bound_count(node, inputs, i, ETRT_VALUE_BOUND_PROBE_MAX, &count));
    int32_t *narrow = (int32_t *)values[i];
    for (int64_t k = 0; k < count; ++k) {
      if (inputs[i].dtype == ETRT_DTYPE_INT32)
        narrow[k] = (int32_t)probe;
      else
        values[i][k] = probe;
    }
    in[i].host_value = values[i];
  }
  return node->def->infer(node, in, out);
}

etrt_status etrt_value_bound_same(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *lo,
                                  etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_value_bound_probe(node, inputs, 0, lo));
  for (uint32_t o = 0; o < node->num_outputs; ++o) hi[o] = lo[o];
  return ETRT_OK;
}

etrt_status etrt_value_bound_open_probe(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_value_bound_probe(node, inputs, 1, lo));
  for (uint32_t o = 0; o < node->num_outputs; ++o)
    etrt_value_bound_open(&lo[o], &hi[o], lo[o].dtype, lo[o].rank);
  return ETRT_OK;
}
