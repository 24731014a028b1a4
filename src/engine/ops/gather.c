/* Gather, GatherElements, GatherND, ScatterElements/Scatter and OneHot: shape
 * inference. Out-of-range indices are refused by the kernels (naming the op, the
 * index and the axis), never read past a buffer. */
#include "engine/ops/gather.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

static const etrt_dtype etrt_index_types[] = {ETRT_DTYPE_INT32, ETRT_DTYPE_INT64,
                                              ETRT_DTYPE_INVALID};

static etrt_status etrt_gather_check_io(const etrt_node *node, const etrt_tensor *inputs,
                                        uint32_t count) {
  if (node->num_inputs != count || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes %u inputs and 1 output", count);
  for (uint32_t i = 0; i < count; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  }
  if (etrt_dtype_size(inputs[0].dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "data has an unknown type");
  if (inputs[0].rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "data must have rank 1 or more");
  return etrt_op_check_dtype(node, "indices", inputs[1].dtype, etrt_index_types);
}

static etrt_status etrt_gather_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_gather_check_io(node, inputs, 2));
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &axis));
  int32_t rank = data->rank - 1 + indices->rank;
  if (rank > ETRT_MAX_RANK)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "output rank %d exceeds %d", (int)rank,
                         ETRT_MAX_RANK);
  int32_t r = 0;
  for (int32_t i = 0; i < axis; ++i) outputs[0].dims[r++] = data->dims[i];
  for (int32_t i = 0; i < indices->rank; ++i) outputs[0].dims[r++] = indices->dims[i];
  for (int32_t i = axis + 1; i < data->rank; ++i) outputs[0].dims[r++] = data->dims[i];
  outputs[0].dtype = data->dtype;
  outputs[0].rank = rank;
  return ETRT_OK;
}

/* GatherElements and ScatterElements: indices have data's rank and, off `axis`, fit
 * inside it. */
static etrt_status etrt_gather_elements_check(const etrt_node *node, const etrt_tensor *data,
                                              const etrt_tensor *indices, int32_t axis) {
  if (indices->rank != data->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "indices have rank %d, data has rank %d", (int)indices->rank,
                         (int)data->rank);
  for (int32_t i = 0; i < data->rank; ++i) {
    if (i != axis && indices->dims[i] > data->dims[i])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "indices have size %lld on axis %d, data only %lld",
                           (long long)indices->dims[i], (int)i, (long long)data->dims[i]);
  }
  return ETRT_OK;
}

static etrt_status etrt_gather_elements_infer(const etrt_node *node, const etrt_tensor *inputs,
                                              etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_gather_check_io(node, inputs, 2));
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &axis));
  ETRT_RETURN_IF_ERROR(etrt_gather_elements_check(node, data, indices, axis));
  outputs[0] = *indices;
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  outputs[0].dtype = data->dtype;
  return ETRT_OK;
}

static etrt_status etrt_gather_nd_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_gather_check_io(node, inputs, 2));
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  int64_t b = etrt_node_attribute_int(node, "batch_dims", 0);
  if (indices->rank < 1 || b < 0 || b >= indices->rank || b >= data->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "batch_dims %lld must be below the ranks of data (%d) and indices (%d)",
                         (long long)b, (int)data->rank, (int)indices->rank);
  int64_t m = indices->dims[indices->rank - 1];
  if (m < 1 || m > data->rank - b)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the last axis of indices (%lld) must be in [1, %lld]", (long long)m,
                         (long long)(data->rank - b));
  for (int64_t i = 0; i < b; ++i) {
    if (indices->dims[i] != data->dims[i])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "batch axis %lld differs: data %lld, indices %lld", (long long)i,
                           (long long)data->dims[i], (long long)indices->dims[i]);
  }
  int32_t r = 0;
  for (int32_t i = 0; i < indices->rank - 1; ++i) outputs[0].dims[r++] = indices->dims[i];
  for (int64_t i = b + m; i < data->rank; ++i) {
    if (r >= ETRT_MAX_RANK)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "output rank exceeds %d", ETRT_MAX_RANK);
    outputs[0].dims[r++] = data->dims[i];
  }
  outputs[0].dtype = data->dtype;
  outputs[0].rank = r;
  return ETRT_OK;
}

etrt_status etrt_scatter_reduction_parse(const etrt_node *node, etrt_scatter_reduction *out) {
  const char *r = etrt_node_attribute_string(node, "reduction", "none");
  if (strcmp(r, "none") == 0)
    *out = ETRT_SCATTER_NONE;
  else if (strcmp(r, "add") == 0)
    *out = ETRT_SCATTER_ADD;
  else if (strcmp(r, "mul") == 0)
    *out = ETRT_SCATTER_MUL;
  else if (strcmp(r, "max") == 0)
    *out = ETRT_SCATTER_MAX;
  else if (strcmp(r, "min") == 0)
    *out = ETRT_SCATTER_MIN;
  else
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "unknown reduction '%s'", r);
  return ETRT_OK;
}

static const etrt_dtype etrt_scatter_reduce_types[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INT32, ETRT_DTYPE_INT64, ETRT_DTYPE_INVALID};

static etrt_status etrt_scatter_elements_infer(const etrt_node *node, const etrt_tensor *inputs,
                                               etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_gather_check_io(node, inputs, 3));
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1], *updates = &inputs[2];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &axis));
  etrt_scatter_reduction reduction;
  ETRT_RETURN_IF_ERROR(etrt_scatter_reduction_parse(node, &reduction));
  if (reduction != ETRT_SCATTER_NONE)
    ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "data (with a reduction)", data->dtype,
                                             etrt_scatter_reduce_types));
  if (updates->dtype != data->dtype ||
      !etrt_shape_equal(indices->rank, indices->dims, updates->rank, updates->dims))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "updates must have data's type and indices' shape");
  ETRT_RETURN_IF_ERROR(etrt_gather_elements_check(node, data, indices, axis));
  outputs[0] = *data;
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  return ETRT_OK;
}

static const etrt_dtype etrt_one_hot_index_types[] = {
    ETRT_DTYPE_INT32, ETRT_DTYPE_INT64, ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INVALID};

static etrt_status etrt_one_hot_check(const etrt_node *node, const etrt_tensor *inputs) {
  if (node->num_inputs != 3 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0) ||
      !etrt_op_has_input(node, inputs, 1) || !etrt_op_has_input(node, inputs, 2))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes inputs indices, depth and values, and 1 output");
  const etrt_tensor *indices = &inputs[0], *values = &inputs[2];
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "indices", indices->dtype, etrt_one_hot_index_types));
  if (etrt_tensor_numel(values) != 2 || values->rank != 1 || etrt_dtype_size(values->dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "values must be 1-D of two elements");
  return ETRT_OK;
}

static etrt_status etrt_one_hot_output(const etrt_node *node, const etrt_tensor *inputs,
                                       int64_t depth, etrt_tensor *out) {
  int32_t rank = inputs[0].rank + 1, axis;
  if (rank > ETRT_MAX_RANK)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "output rank exceeds %d", ETRT_MAX_RANK);
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, -1, rank, &axis));
  for (int32_t i = 0, j = 0; i < rank; ++i) out->dims[i] = i == axis ? depth : inputs[0].dims[j++];
  out->dtype = inputs[2].dtype;
  out->rank = rank;
  return ETRT_OK;
}

/* A depth known only at execute: any (no bound). */
static etrt_status etrt_one_hot_bound(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_one_hot_check(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_one_hot_output(node, inputs, 1, &lo[0]));
  return etrt_one_hot_output(node, inputs, ETRT_OP_DIM_UNBOUNDED, &hi[0]);
}

static etrt_status etrt_one_hot_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_one_hot_check(node, inputs));
  int64_t depth, count;
  if (inputs[1].dtype == ETRT_DTYPE_FLOAT32 || inputs[1].dtype == ETRT_DTYPE_FLOAT64) {
    double d;
    ETRT_RETURN_IF_ERROR(etrt_op_input_doubles(node, inputs, 1, "depth", &d, 1, &count));
    if (!(d >= 1.0 && d <= (double)((int64_t)1 << 40)))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "depth must be positive");
    depth = (int64_t)d;
  } else {
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, 1, "depth", &depth, 1, &count));
  }
  if (count != 1 || depth < 1 || depth > ((int64_t)1 << 40))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "depth must be one positive value");
  return etrt_one_hot_output(node, inputs, depth, &outputs[0]);
}

/* ---- which nodes the CUDA kernels take: int32/int64 indices, elements moved as
 * 1, 2, 4 or 8 bytes ---- */

static int etrt_gather_index_dtype(etrt_dtype t) {
  return t == ETRT_DTYPE_INT32 || t == ETRT_DTYPE_INT64;
}

static int etrt_gather_element_size_ok(etrt_dtype t) {
  size_t size = etrt_dtype_size(t);
  return size == 1 || size == 2 || size == 4 || size == 8;
}

static int etrt_gather_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return etrt_gather_index_dtype(inputs[1].dtype);
}

/* ScatterND(data, indices [..., k], updates [indices' dims but the last, data's
 * dims from k]): data with each index tuple's slice replaced or combined. */
static etrt_status etrt_scatter_nd_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_gather_check_io(node, inputs, 3));
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1], *updates = &inputs[2];
  etrt_scatter_reduction reduction;
  ETRT_RETURN_IF_ERROR(etrt_scatter_reduction_parse(node, &reduction));
  if (reduction != ETRT_SCATTER_NONE)
    ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "data (with a reduction)", data->dtype,
                                             etrt_scatter_reduce_types));
  int64_t k = indices->rank > 0 ? indices->dims[indices->rank - 1] : 0;
  if (data->rank < 1 || indices->rank < 1 || k < 1 || k > data->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "indices' last dim (%lld) must be in [1, data's rank %d]", (long long)k,
                         (int)data->rank);
  int32_t want_rank = indices->rank - 1 + data->rank - (int32_t)k;
  int same = updates->dtype == data->dtype && updates->rank == want_rank;
  for (int32_t a = 0; same && a < want_rank; ++a)
    same = updates->dims[a] ==
           (a < indices->rank - 1 ? indices->dims[a] : data->dims[a - (indices->rank - 1) + k]);
  if (!same)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "updates must have data's type and shape indices.shape[:-1] + "
                         "data.shape[%lld:]",
                         (long long)k);
  outputs[0] = *data;
  outputs[0].data = NULL;
  outputs[0].host_value = NULL;
  return ETRT_OK;
}

static int etrt_gather_elements_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return etrt_gather_index_dtype(inputs[1].dtype) && etrt_gather_element_size_ok(inputs[0].dtype);
}

/* A reduction takes the types the CPU kernel reduces; plain updates any type. */
static int etrt_scatter_elements_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  if (!etrt_gather_elements_cuda_supports(node, inputs)) return 0;
  if (strcmp(etrt_node_attribute_string(node, "reduction", "none"), "none") == 0) return 1;
  etrt_dtype t = inputs[0].dtype;
  return t == ETRT_DTYPE_FLOAT32 || t == ETRT_DTYPE_FLOAT64 || t == ETRT_DTYPE_INT32 ||
         t == ETRT_DTYPE_INT64;
}

static int etrt_one_hot_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  etrt_dtype t = inputs[0].dtype;
  return (etrt_gather_index_dtype(t) || t == ETRT_DTYPE_FLOAT32 || t == ETRT_DTYPE_FLOAT64) &&
         etrt_gather_element_size_ok(inputs[2].dtype);
}

static const etrt_op_def etrt_op_def_gather = {
    .op_type = "Gather", .infer = etrt_gather_infer, .cuda_supports = etrt_gather_cuda_supports};
static const etrt_op_def etrt_op_def_gather_elements = {
    .op_type = "GatherElements",
    .infer = etrt_gather_elements_infer,
    .cuda_supports = etrt_gather_elements_cuda_supports};
static const etrt_op_def etrt_op_def_gather_nd = {
    .op_type = "GatherND",
    .infer = etrt_gather_nd_infer,
    .cuda_supports = etrt_gather_elements_cuda_supports};
static const etrt_op_def etrt_op_def_scatter_elements = {
    .op_type = "ScatterElements",
    .infer = etrt_scatter_elements_infer,
    .cuda_supports = etrt_scatter_elements_cuda_supports};
static const etrt_op_def etrt_op_def_scatter = {
    .op_type = "Scatter",
    .infer = etrt_scatter_elements_infer,
    .cuda_supports = etrt_scatter_elements_cuda_supports};
static const etrt_op_def etrt_op_def_scatter_nd = {
    .op_type = "ScatterND",
    .infer = etrt_scatter_nd_infer,
    .cuda_supports = etrt_scatter_elements_cuda_supports};
static const etrt_op_def etrt_op_def_one_hot = {.op_type = "OneHot",
                                                .infer = etrt_one_hot_infer,
                                                .bound = etrt_one_hot_bound,
                                                .cuda_supports = etrt_one_hot_cuda_supports,
                                                .value_inputs = 1u << 1};

const etrt_op_def *const etrt_ops_gather[] = {&etrt_op_def_gather,    &etrt_op_def_gather_elements,
                                              &etrt_op_def_gather_nd, &etrt_op_def_scatter_elements,
                                              &etrt_op_def_scatter,   &etrt_op_def_scatter_nd,
                                              &etrt_op_def_one_hot,   NULL};
