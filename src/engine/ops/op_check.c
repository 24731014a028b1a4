#include "engine/ops/op_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"

etrt_status etrt_op_error(const etrt_node *node, etrt_status status, const char *fmt, ...) {
  char message[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  if (node->name != NULL && node->name[0] != '\0')
    return etrt_error(status, "%s '%s': %s", node->op_type, node->name, message);
  return etrt_error(status, "%s: %s", node->op_type, message);
}

etrt_status etrt_op_attribute_ints(const etrt_node *node, const char *name, int64_t *out,
                                   int64_t capacity, int64_t *count) {
  *count = 0;
  const etrt_attribute *a = etrt_node_attribute(node, name);
  if (a == NULL) return ETRT_OK;
  if (a->kind != ETRT_ATTRIBUTE_INTS)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s' must be a list of ints",
                         name);
  if (a->count < 0 || a->count > capacity)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "attribute '%s' has %lld values, at most %lld allowed", name,
                         (long long)a->count, (long long)capacity);
  if (a->count > 0) memcpy(out, a->ints, (size_t)a->count * sizeof *out);
  *count = a->count;
  return ETRT_OK;
}

int etrt_op_has_input(const etrt_node *node, const etrt_tensor *inputs, uint32_t index) {
  return index < node->num_inputs && inputs[index].rank >= 0;
}

etrt_status etrt_op_check_single_io(const etrt_node *node, const etrt_tensor *inputs) {
  if (node->num_inputs != 1 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 input and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  if (inputs[0].rank < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 is missing");
  return ETRT_OK;
}

const void *etrt_op_input_host(const etrt_tensor *tensor) {
  return tensor->host_value != NULL ? tensor->host_value : tensor->data;
}

static etrt_status etrt_op_input_vector(const etrt_node *node, const etrt_tensor *inputs,
                                        uint32_t index, const char *what, int64_t capacity,
                                        int64_t *count, const void **values) {
  const etrt_tensor *t = &inputs[index];
  if (t->rank > 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u (%s) must be a scalar or 1-D, has rank %d", index, what,
                         (int)t->rank);
  int64_t n = t->rank == 0 ? 1 : t->dims[0];
  if (n < 0 || n > capacity)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u (%s) has %lld values, at most %lld allowed", index, what,
                         (long long)n, (long long)capacity);
  *values = etrt_op_input_host(t);
  if (*values == NULL && n > 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input %u (%s) must be known when the plan is built (a constant or a "
                         "shape input)",
                         index, what);
  *count = n;
  return ETRT_OK;
}

etrt_status etrt_op_input_ints(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                               const char *what, int64_t *out, int64_t capacity, int64_t *count) {
  const etrt_tensor *t = &inputs[index];
  if (t->dtype != ETRT_DTYPE_INT64 && t->dtype != ETRT_DTYPE_INT32)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u (%s) must be int32 or int64, not %s", index, what,
                         etrt_dtype_name(t->dtype));
  const void *values;
  ETRT_RETURN_IF_ERROR(etrt_op_input_vector(node, inputs, index, what, capacity, count, &values));
  for (int64_t i = 0; i < *count; ++i) {
    if (t->dtype == ETRT_DTYPE_INT64) {
      memcpy(&out[i], (const int64_t *)values + i, sizeof out[i]);
    } else {
      int32_t v;
      memcpy(&v, (const int32_t *)values + i, sizeof v);
      out[i] = v;
    }
  }
  return ETRT_OK;
}

etrt_status etrt_op_input_doubles(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                                  const char *what, double *out, int64_t capacity, int64_t *count) {
  const etrt_tensor *t = &inputs[index];
  if (t->dtype != ETRT_DTYPE_FLOAT32 && t->dtype != ETRT_DTYPE_FLOAT64)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u (%s) must be float32 or float64, not %s", index, what,
                         etrt_dtype_name(t->dtype));
  const void *values;
  ETRT_RETURN_IF_ERROR(etrt_op_input_vector(node, inputs, index, what, capacity, count, &values));
  for (int64_t i = 0; i < *count; ++i) {
    if (t->dtype == ETRT_DTYPE_FLOAT64) {
      memcpy(&out[i], (const double *)values + i, sizeof out[i]);
    } else {
      float v;
      memcpy(&v, (const float *)values + i, sizeof v);
      out[i] = v;
    }
  }
  return ETRT_OK;
}

etrt_status etrt_op_check_dtype(const etrt_node *node, const char *what, etrt_dtype dtype,
                                const etrt_dtype *allowed) {
  for (const etrt_dtype *d = allowed; *d != ETRT_DTYPE_INVALID; ++d) {
    if (*d == dtype) return ETRT_OK;
  }
  return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "%s has type %s, which is not supported", what,
                       etrt_dtype_name(dtype));
}

etrt_status etrt_op_numel(const etrt_node *node, int32_t rank, const int64_t *dims, int64_t *out) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "axis %d has negative size %lld",
                           (int)i, (long long)dims[i]);
    if (etrt_mul_overflow_i64(n, dims[i], &n))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "element count overflows");
  }
  *out = n;
  return ETRT_OK;
}

int etrt_op_dtype_is_float(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_FLOAT32 || dtype == ETRT_DTYPE_FLOAT16 ||
         dtype == ETRT_DTYPE_BFLOAT16 || dtype == ETRT_DTYPE_FLOAT64;
}

int etrt_op_dtype_cuda_numeric(etrt_dtype dtype) {
  return etrt_op_dtype_is_float(dtype) || dtype == ETRT_DTYPE_INT8 || dtype == ETRT_DTYPE_UINT8 ||
         dtype == ETRT_DTYPE_INT32 || dtype == ETRT_DTYPE_INT64;
}

int etrt_op_float_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return etrt_op_dtype_is_float(inputs[0].dtype);
}
