/* MaxUnpool: shape inference and the default shape (unpool.h). */
#include "engine/ops/unpool.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/value_bound.h"

etrt_status etrt_max_unpool_default(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *out) {
  if (node->num_inputs < 2 || node->num_inputs > 3 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 2 or 3 inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  const etrt_tensor *x = &inputs[0], *idx = &inputs[1];
  static const etrt_dtype floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                      ETRT_DTYPE_INVALID};
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0 (X)", x->dtype, floats));
  if (x->rank < 3 || idx->dtype != ETRT_DTYPE_INT64 || idx->rank != x->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "X must have rank 3 or more and I be int64 of X's shape");
  for (int32_t a = 0; a < x->rank; ++a)
    if (idx->dims[a] != x->dims[a])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "I must have X's shape (dim %d differs)", (int)a);
  int32_t spatial = x->rank - 2;
  int64_t kernel[ETRT_MAX_RANK], strides[ETRT_MAX_RANK], pads[2 * ETRT_MAX_RANK], count = 0;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "kernel_shape", kernel, ETRT_MAX_RANK, &count));
  if (count != spatial)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "kernel_shape must give %d dims, got %lld", (int)spatial,
                         (long long)count);
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "strides", strides, ETRT_MAX_RANK, &count));
  if (count == 0)
    for (int32_t a = 0; a < spatial; ++a) strides[a] = 1;
  else if (count != spatial)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "strides must give %d dims",
                         (int)spatial);
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "pads", pads, 2 * ETRT_MAX_RANK, &count));
  if (count == 0)
    memset(pads, 0, sizeof pads);
  else if (count != 2 * spatial)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "pads must give %d values",
                         (int)(2 * spatial));
  out->dtype = x->dtype;
  out->rank = x->rank;
  out->dims[0] = x->dims[0];
  out->dims[1] = x->dims[1];
  for (int32_t a = 0; a < spatial; ++a) {
    int64_t d = (x->dims[a + 2] - 1) * strides[a] - pads[a] - pads[a + spatial] + kernel[a];
    if (kernel[a] < 1 || strides[a] < 1 || d < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "kernel %lld and stride %lld give spatial dim %d size %lld",
                           (long long)kernel[a], (long long)strides[a], (int)a, (long long)d);
    out->dims[a + 2] = d;
  }
  return ETRT_OK;
}

static etrt_status etrt_max_unpool_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_max_unpool_default(node, inputs, &outputs[0]));
  if (etrt_op_has_input(node, inputs, 2)) {
    int64_t shape[ETRT_MAX_RANK], n = 0;
    ETRT_RETURN_IF_ERROR(
        etrt_op_input_ints(node, inputs, 2, "output_shape", shape, ETRT_MAX_RANK, &n));
    if (n != x->rank || shape[0] != x->dims[0] || shape[1] != x->dims[1])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "output_shape must give %d dims starting with X's N and C",
                           (int)x->rank);
    for (int32_t a = 2; a < x->rank; ++a)
      if (shape[a] < outputs[0].dims[a])
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "output_shape dim %d (%lld) is smaller than the unpooled %lld", (int)a,
                             (long long)shape[a], (long long)outputs[0].dims[a]);
    for (int32_t a = 0; a < x->rank; ++a) outputs[0].dims[a] = shape[a];
  }
  return ETRT_OK;
}

/* An output_shape known only at execute: the input's rank, any size. */
static etrt_status etrt_max_unpool_bound(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_max_unpool_default(node, inputs, &lo[0]));
  etrt_value_bound_open(&lo[0], &hi[0], lo[0].dtype, lo[0].rank);
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_max_unpool = {.op_type = "MaxUnpool",
                                                   .infer = etrt_max_unpool_infer,
                                                   .bound = etrt_max_unpool_bound,
                                                   .cuda_supports = etrt_op_supports_all,
                                                   .value_inputs = 1u << 2};

const etrt_op_def *const etrt_ops_unpool[] = {&etrt_op_def_max_unpool, NULL};
