/* Element types, devices and tensor views shared by every part of the API. */
#ifndef ETRT_TYPES_H
#define ETRT_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ETRT_MAX_RANK 8

/* Element types, numbered as ExecuTorch's ScalarType so that .pte values map 1:1. */
typedef enum etrt_dtype {
  ETRT_DTYPE_UINT8 = 0,
  ETRT_DTYPE_INT8 = 1,
  ETRT_DTYPE_INT16 = 2,
  ETRT_DTYPE_INT32 = 3,
  ETRT_DTYPE_INT64 = 4,
  ETRT_DTYPE_FLOAT16 = 5,
  ETRT_DTYPE_FLOAT32 = 6,
  ETRT_DTYPE_FLOAT64 = 7,
  ETRT_DTYPE_BOOL = 11,
  ETRT_DTYPE_BFLOAT16 = 15,
  ETRT_DTYPE_UINT16 = 27,
  ETRT_DTYPE_UINT32 = 28,
  ETRT_DTYPE_UINT64 = 29,
  ETRT_DTYPE_INVALID = -1
} etrt_dtype;

/* Bytes per element; 0 for a type etrt does not know. */
size_t etrt_dtype_size(etrt_dtype dtype);
/* "float32", "int64", ...; "unknown" for others. */
const char *etrt_dtype_name(etrt_dtype dtype);
/* The inverse of etrt_dtype_name; ETRT_DTYPE_INVALID when unknown. */
etrt_dtype etrt_dtype_from_name(const char *name);

/* Device types, numbered as ExecuTorch's schema DeviceType. */
typedef enum etrt_device_type { ETRT_DEVICE_CPU = 0, ETRT_DEVICE_CUDA = 1 } etrt_device_type;

typedef struct etrt_device {
  etrt_device_type type;
  int32_t index; /* 0 for the CPU */
} etrt_device;

/* Writes "cpu" or "cuda:N" into buf (at least 16 bytes); returns buf. */
char *etrt_device_format(etrt_device device, char *buf, size_t size);
/* Parses "cpu", "cuda" (index 0) or "cuda:N"; 0 on success, -1 otherwise. */
int etrt_device_parse(const char *text, etrt_device *out);

/* A tensor the caller owns: where its bytes are, their type and shape. `data` may be
 * host or device memory; etrt finds out which (see the device-handling contract). */
typedef struct etrt_tensor_view {
  void *data;
  etrt_dtype dtype;
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
} etrt_tensor_view;

/* Elements in a view (1 for rank 0); -1 on overflow or negative sizes. */
int64_t etrt_tensor_view_numel(const etrt_tensor_view *view);

#ifdef __cplusplus
}
#endif
#endif
