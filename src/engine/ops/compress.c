/* Compress, NonZero and Unique: shape inference (compress.h). */
#include "engine/ops/compress.h"

#include <string.h>

#include "base/half.h"

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

etrt_status etrt_compress_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_compress_layout *out) {
  const etrt_tensor *x = &inputs[0];
  out->outer = out->inner = 1;
  if (etrt_node_attribute(node, "axis") == NULL) {
    out->length = etrt_tensor_numel(x);
  } else {
    int32_t axis;
    ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
    out->outer = etrt_shape_numel(axis, x->dims);
    out->length = x->dims[axis];
    out->inner = etrt_shape_numel(x->rank - axis - 1, x->dims + axis + 1);
  }
  int64_t c = inputs[1].dims[0];
  out->conditions = c < out->length ? c : out->length;
  return ETRT_OK;
}

/* The output of `kept` slices (compress.h). */
static etrt_status etrt_compress_output(const etrt_node *node, const etrt_tensor *x, int64_t kept,
                                        etrt_tensor *out) {
  out->dtype = x->dtype;
  if (etrt_node_attribute(node, "axis") == NULL) {
    out->rank = 1;
    out->dims[0] = kept;
    return ETRT_OK;
  }
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
  out->rank = x->rank;
  memcpy(out->dims, x->dims, sizeof out->dims);
  out->dims[axis] = kept;
  return ETRT_OK;
}

static etrt_status etrt_compress_check(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_compress_layout *l) {
  if (node->num_inputs != 2 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 inputs and 1 output");
  const etrt_tensor *x = &inputs[0], *cond = &inputs[1];
  if (cond->dtype != ETRT_DTYPE_BOOL || cond->rank != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input 1 (condition) must be a 1-D bool tensor");
  if (x->rank < 1 || etrt_dtype_size(x->dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 must have rank 1 or more");
  return etrt_compress_layout_of(node, inputs, l);
}

static etrt_status etrt_compress_infer(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_compress_check(node, inputs, &l));
  const uint8_t *c = etrt_op_input_host(&inputs[1]);
  if (c == NULL)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 1 (condition) sets the output shape: its values must be known "
                         "when the engine is built");
  int64_t kept = 0;
  for (int64_t i = 0; i < l.conditions; ++i) kept += c[i] != 0;
  return etrt_compress_output(node, &inputs[0], kept, &outputs[0]);
}

/* Without the condition's values: none to all of the conditions kept. */
static etrt_status etrt_compress_bound(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *lo, etrt_tensor *hi) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_compress_check(node, inputs, &l));
  ETRT_RETURN_IF_ERROR(etrt_compress_output(node, &inputs[0], 0, &lo[0]));
  return etrt_compress_output(node, &inputs[0], l.conditions, &hi[0]);
}

static const etrt_op_def etrt_op_def_compress = {.op_type = "Compress",
                                                 .infer = etrt_compress_infer,
                                                 .bound = etrt_compress_bound,
                                                 .cuda_supports = etrt_op_supports_all,
                                                 .value_inputs = 1u << 1};

int etrt_nonzero_at(const void *data, etrt_dtype dtype, int64_t i) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT16:
    case ETRT_DTYPE_BFLOAT16:
      return (((const uint16_t *)data)[i] & 0x7fffu) != 0; /* -0 is zero */
    case ETRT_DTYPE_FLOAT32:
      return (((const uint32_t *)data)[i] & 0x7fffffffu) != 0;
    case ETRT_DTYPE_FLOAT64:
      return (((const uint64_t *)data)[i] & 0x7fffffffffffffffull) != 0;
    default: {
      size_t size = etrt_dtype_size(dtype);
      const uint8_t *p = (const uint8_t *)data + (size_t)i * size;
      for (size_t b = 0; b < size; ++b)
        if (p[b] != 0) return 1;
      return 0;
    }
  }
}

static etrt_status etrt_nonzero_check(const etrt_node *node, const etrt_tensor *inputs) {
  if (node->num_inputs != 1 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 1 input and 1 output");
  if (inputs[0].rank < 1 || etrt_dtype_size(inputs[0].dtype) == 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 0 must have rank 1 or more and a known type");
  return ETRT_OK;
}

static void etrt_nonzero_output(const etrt_tensor *x, int64_t count, etrt_tensor *out) {
  out->dtype = ETRT_DTYPE_INT64;
  out->rank = 2;
  out->dims[0] = x->rank;
  out->dims[1] = count;
}

static etrt_status etrt_nonzero_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_nonzero_check(node, inputs));
  const void *x = etrt_op_input_host(&inputs[0]);
  int64_t n = etrt_tensor_numel(&inputs[0]), count = 0;
  if (x == NULL && n > 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 0 sets the output shape: its values must be known");
  for (int64_t i = 0; i < n; ++i) count += etrt_nonzero_at(x, inputs[0].dtype, i);
  etrt_nonzero_output(&inputs[0], count, &outputs[0]);
  return ETRT_OK;
}

static etrt_status etrt_nonzero_bound(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *lo, etrt_tensor *hi) {
  ETRT_RETURN_IF_ERROR(etrt_nonzero_check(node, inputs));
  etrt_nonzero_output(&inputs[0], 0, &lo[0]);
  etrt_nonzero_output(&inputs[0], etrt_tensor_numel(&inputs[0]), &hi[0]);
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_nonzero = {.op_type = "NonZero",
                                                .infer = etrt_nonzero_infer,
                                                .bound = etrt_nonzero_bound,
                                                .value_inputs = 1u << 0};

#define ETRT_UNIQUE_CMP(T, a, b) \
  (((const T *)x)[a] < ((const T *)x)[b] ? -1 : ((const T *)x)[b] < ((const T *)x)[a] ? 1 : 0)

static int etrt_unique_compare_element(const void *x, etrt_dtype dtype, int64_t a, int64_t b) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      return ETRT_UNIQUE_CMP(float, a, b);
    case ETRT_DTYPE_FLOAT64:
      return ETRT_UNIQUE_CMP(double, a, b);
    case ETRT_DTYPE_INT8:
      return ETRT_UNIQUE_CMP(int8_t, a, b);
    case ETRT_DTYPE_INT16:
      return ETRT_UNIQUE_CMP(int16_t, a, b);
    case ETRT_DTYPE_INT32:
      return ETRT_UNIQUE_CMP(int32_t, a, b);
    case ETRT_DTYPE_INT64:
      return ETRT_UNIQUE_CMP(int64_t, a, b);
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_BOOL:
      return ETRT_UNIQUE_CMP(uint8_t, a, b);
    case ETRT_DTYPE_UINT16:
      return ETRT_UNIQUE_CMP(uint16_t, a, b);
    case ETRT_DTYPE_UINT32:
      return ETRT_UNIQUE_CMP(uint32_t, a, b);
    case ETRT_DTYPE_UINT64:
      return ETRT_UNIQUE_CMP(uint64_t, a, b);
    case ETRT_DTYPE_FLOAT16: {
      float fa = etrt_half_to_float(((const uint16_t *)x)[a]);
      float fb = etrt_half_to_float(((const uint16_t *)x)[b]);
      return fa < fb ? -1 : fb < fa ? 1 : 0;
    }
    case ETRT_DTYPE_BFLOAT16: {
      float fa = etrt_bfloat16_to_float(((const uint16_t *)x)[a]);
      float fb = etrt_bfloat16_to_float(((const uint16_t *)x)[b]);
      return fa < fb ? -1 : fb < fa ? 1 : 0;
    }
    default:
      return 0;
  }
}

int etrt_unique_compare(const etrt_compress_layout *l, const void *x, etrt_dtype dtype, int64_t a,
                        int64_t b) {
  for (int64_t o = 0; o < l->outer; ++o)
    for (int64_t i = 0; i < l->inner; ++i) {
      int c = etrt_unique_compare_element(x, dtype, (o * l->length + a) * l->inner + i,
                                          (o * l->length + b) * l->inner + i);
      if (c != 0) return c;
    }
  return 0;
}

int64_t etrt_unique_next(const etrt_compress_layout *l, const void *x, etrt_dtype dtype, int sorted,
                         int64_t previous) {
  if (!sorted) {
    for (int64_t j = previous + 1; j < l->length; ++j) {
      int64_t k = 0;
      while (k < j && etrt_unique_compare(l, x, dtype, k, j) != 0) ++k;
      if (k == j) return j;
    }
    return -1;
  }
  int64_t best = -1;
  for (int64_t j = 0; j < l->length; ++j) {
    if (previous >= 0 && etrt_unique_compare(l, x, dtype, j, previous) <= 0) continue;
    if (best < 0 || etrt_unique_compare(l, x, dtype, j, best) < 0) best = j;
  }
  return best;
}

etrt_status etrt_unique_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_compress_layout *l) {
  if (node->num_inputs != 1 || node->num_outputs < 1 || node->num_outputs > 4 ||
      !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 1 input and 1 to 4 outputs");
  const etrt_tensor *x = &inputs[0];
  static const etrt_dtype allowed[] = {ETRT_DTYPE_FLOAT32,  ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                       ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INT8,    ETRT_DTYPE_INT16,
                                       ETRT_DTYPE_INT32,    ETRT_DTYPE_INT64,   ETRT_DTYPE_UINT8,
                                       ETRT_DTYPE_UINT16,   ETRT_DTYPE_UINT32,  ETRT_DTYPE_UINT64,
                                       ETRT_DTYPE_BOOL,     ETRT_DTYPE_INVALID};
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", x->dtype, allowed));
  if (etrt_node_attribute(node, "axis") != NULL && x->rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "axis needs an input of rank 1 or more");
  etrt_tensor shape = *x;
  shape.rank = x->rank;
  etrt_tensor as_inputs[2] = {shape, {.rank = 1, .dims = {0}}};
  ETRT_RETURN_IF_ERROR(etrt_compress_layout_of(node, as_inputs, l));
  l->conditions = l->length;
  return ETRT_OK;
}

static etrt_status etrt_unique_outputs(const etrt_node *node, const etrt_tensor *x,
                                       const etrt_compress_layout *l, int64_t count,
                                       etrt_tensor *out) {
  ETRT_RETURN_IF_ERROR(etrt_compress_output(node, x, count, &out[0]));
  for (uint32_t k = 1; k < node->num_outputs; ++k) {
    out[k].dtype = ETRT_DTYPE_INT64;
    out[k].rank = 1;
    out[k].dims[0] = k == 2 ? l->length : count;
  }
  return ETRT_OK;
}

static etrt_status etrt_unique_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_unique_layout_of(node, inputs, &l));
  const void *x = etrt_op_input_host(&inputs[0]);
  if (x == NULL && l.length > 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 0 sets the output shape: its values must be known");
  int64_t count = 0;
  for (int64_t j = etrt_unique_next(&l, x, inputs[0].dtype, 0, -1); j >= 0;
       j = etrt_unique_next(&l, x, inputs[0].dtype, 0, j))
    ++count;
  return etrt_unique_outputs(node, &inputs[0], &l, count, outputs);
}

/* Without the values: one distinct slice (none of an empty input) to all of them. */
static etrt_status etrt_unique_bound(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *lo, etrt_tensor *hi) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_unique_layout_of(node, inputs, &l));
  ETRT_RETURN_IF_ERROR(etrt_unique_outputs(node, &inputs[0], &l, l.length > 0, lo));
  return etrt_unique_outputs(node, &inputs[0], &l, l.length, hi);
}

static const etrt_op_def etrt_op_def_unique = {.op_type = "Unique",
                                               .infer = etrt_unique_infer,
                                               .bound = etrt_unique_bound,
                                               .value_inputs = 1u << 0};

const etrt_op_def *const etrt_ops_compress[] = {&etrt_op_def_compress, &etrt_op_def_nonzero,
                                                &etrt_op_def_unique, NULL};
