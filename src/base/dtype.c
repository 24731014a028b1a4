#include "base/dtype.h"

#include <stdio.h>
#include <string.h>

/* Per dtype: its name, bytes per element and ONNX's TensorProto.DataType number. */
static const struct {
  etrt_dtype dtype;
  const char *name;
  size_t size;
  int32_t onnx;
} etrt_dtype_table[] = {
    {ETRT_DTYPE_UINT8, "uint8", 1, 2},     {ETRT_DTYPE_INT8, "int8", 1, 3},
    {ETRT_DTYPE_INT16, "int16", 2, 5},     {ETRT_DTYPE_INT32, "int32", 4, 6},
    {ETRT_DTYPE_INT64, "int64", 8, 7},     {ETRT_DTYPE_FLOAT16, "float16", 2, 10},
    {ETRT_DTYPE_FLOAT32, "float32", 4, 1}, {ETRT_DTYPE_FLOAT64, "float64", 8, 11},
    {ETRT_DTYPE_BOOL, "bool", 1, 9},       {ETRT_DTYPE_BFLOAT16, "bfloat16", 2, 16},
    {ETRT_DTYPE_UINT16, "uint16", 2, 4},   {ETRT_DTYPE_UINT32, "uint32", 4, 12},
    {ETRT_DTYPE_UINT64, "uint64", 8, 13},
};

#define ETRT_DTYPE_COUNT (sizeof etrt_dtype_table / sizeof etrt_dtype_table[0])

size_t etrt_dtype_size(etrt_dtype dtype) {
  for (size_t i = 0; i < ETRT_DTYPE_COUNT; ++i) {
    if (etrt_dtype_table[i].dtype == dtype) return etrt_dtype_table[i].size;
  }
  return 0;
}

const char *etrt_dtype_name(etrt_dtype dtype) {
  for (size_t i = 0; i < ETRT_DTYPE_COUNT; ++i) {
    if (etrt_dtype_table[i].dtype == dtype) return etrt_dtype_table[i].name;
  }
  return "unknown";
}

etrt_dtype etrt_dtype_from_name(const char *name) {
  for (size_t i = 0; i < ETRT_DTYPE_COUNT; ++i) {
    if (strcmp(etrt_dtype_table[i].name, name) == 0) return etrt_dtype_table[i].dtype;
  }
  return ETRT_DTYPE_INVALID;
}

etrt_dtype etrt_dtype_from_onnx(int64_t onnx_type) {
  for (size_t i = 0; i < ETRT_DTYPE_COUNT; ++i) {
    if (etrt_dtype_table[i].onnx == onnx_type) return etrt_dtype_table[i].dtype;
  }
  return ETRT_DTYPE_INVALID;
}

int32_t etrt_dtype_to_onnx(etrt_dtype dtype) {
  for (size_t i = 0; i < ETRT_DTYPE_COUNT; ++i) {
    if (etrt_dtype_table[i].dtype == dtype) return etrt_dtype_table[i].onnx;
  }
  return 0;
}

char *etrt_device_format(etrt_device device, char *buf, size_t size) {
  if (device.type == ETRT_DEVICE_CPU) {
    snprintf(buf, size, "cpu");
  } else if (device.type == ETRT_DEVICE_CUDA) {
    snprintf(buf, size, "cuda:%d", (int)device.index);
  } else {
    snprintf(buf, size, "device%d:%d", (int)device.type, (int)device.index);
  }
  return buf;
}

int etrt_device_parse(const char *text, etrt_device *out) {
  if (strcmp(text, "cpu") == 0) {
    out->type = ETRT_DEVICE_CPU;
    out->index = 0;
    return 0;
  }
  if (strcmp(text, "cuda") == 0) {
    out->type = ETRT_DEVICE_CUDA;
    out->index = 0;
    return 0;
  }
  if (strncmp(text, "cuda:", 5) != 0) return -1;
  const char *p = text + 5;
  if (*p < '0' || *p > '9') return -1;
  long index = 0;
  for (; *p >= '0' && *p <= '9'; ++p) {
    index = index * 10 + (*p - '0');
    if (index > 1023) return -1;
  }
  if (*p != '\0') return -1;
  out->type = ETRT_DEVICE_CUDA;
  out->index = (int32_t)index;
  return 0;
}

int64_t etrt_tensor_view_numel(const etrt_tensor_view *view) {
  if (view->rank < 0 || view->rank > ETRT_MAX_RANK) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < view->rank; ++i) {
    if (view->sizes[i] < 0) return -1;
    if (view->sizes[i] != 0 && n > INT64_MAX / view->sizes[i]) return -1;
    n *= view->sizes[i];
  }
  return n;
}
