/* CPU kernels of Shape, Size, ConstantOfShape, Range and EyeLike. */
#include "engine/ops/shape.h"

#include <string.h>

#include "engine/ops/cpu/copy_util.h"
#include "engine/ops/op_check.h"

etrt_status etrt_cpu_shape(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  int32_t start, end;
  etrt_shape_op_range(node, inputs[0].rank, &start, &end);
  int64_t *y = outputs[0].data;
  for (int32_t i = start; i < end; ++i) y[i - start] = inputs[0].dims[i];
  return ETRT_OK;
}

etrt_status etrt_cpu_size(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  *(int64_t *)outputs[0].data = etrt_tensor_numel(&inputs[0]);
  return ETRT_OK;
}

etrt_status etrt_cpu_constant_of_shape(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  const etrt_attribute *value = etrt_node_attribute(node, "value");
  size_t element = etrt_dtype_size(outputs[0].dtype);
  int64_t total = etrt_tensor_numel(&outputs[0]);
  uint8_t *y = outputs[0].data;
  if (value == NULL) {
    if (total > 0) memset(y, 0, (size_t)total * element);
    return ETRT_OK;
  }
  for (int64_t i = 0; i < total; ++i)
    etrt_cpu_copy_element(y + (size_t)i * element, value->tensor.data, element);
  return ETRT_OK;
}

etrt_status etrt_cpu_range(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  int64_t count = outputs[0].dims[0];
  const void *start = etrt_op_input_host(&inputs[0]), *delta = etrt_op_input_host(&inputs[2]);
  switch (outputs[0].dtype) {
    case ETRT_DTYPE_FLOAT32: {
      float s = *(const float *)start, d = *(const float *)delta, *y = outputs[0].data;
      for (int64_t i = 0; i < count; ++i) y[i] = s + (float)i * d;
      break;
    }
    case ETRT_DTYPE_FLOAT64: {
      double s = *(const double *)start, d = *(const double *)delta, *y = outputs[0].data;
      for (int64_t i = 0; i < count; ++i) y[i] = s + (double)i * d;
      break;
    }
    case ETRT_DTYPE_INT32: {
      int32_t s = *(const int32_t *)start, d = *(const int32_t *)delta, *y = outputs[0].data;
      /* wrapping arithmetic: hostile values must not be undefined behaviour */
      for (int64_t i = 0; i < count; ++i)
        y[i] = (int32_t)(uint32_t)((uint32_t)s + (uint32_t)i * (uint32_t)d);
      break;
    }
    default: {
      int64_t s = *(const int64_t *)start, d = *(const int64_t *)delta, *y = outputs[0].data;
      for (int64_t i = 0; i < count; ++i) y[i] = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);
      break;
    }
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_eye_like(const etrt_node *node, const etrt_tensor *inputs,
                              etrt_tensor *outputs) {
  uint8_t one[8];
  etrt_eye_like_one(outputs[0].dtype, one);
  size_t element = etrt_dtype_size(outputs[0].dtype);
  int64_t rows = outputs[0].dims[0], cols = outputs[0].dims[1], k = etrt_eye_like_k(node);
  uint8_t *y = outputs[0].data;
  if (rows * cols > 0) memset(y, 0, (size_t)(rows * cols) * element);
  for (int64_t r = 0; r < rows; ++r) {
    /* compared before adding: a huge k must not overflow */
    if (k >= cols || k <= -rows) break;
    int64_t c = r + k;
    if (c >= 0 && c < cols) memcpy(y + (size_t)(r * cols + c) * element, one, element);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_shape[] = {
    {"Shape", etrt_cpu_shape},
    {"Size", etrt_cpu_size},
    {"ConstantOfShape", etrt_cpu_constant_of_shape},
    {"Range", etrt_cpu_range},
    {"EyeLike", etrt_cpu_eye_like},
    {NULL, NULL},
};
