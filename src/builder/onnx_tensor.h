/* ONNX tensors: element types, the TensorProto as parsed (see onnx_model.h), and its
 * values as host memory. */
#ifndef ETRT_BUILDER_ONNX_TENSOR_H
#define ETRT_BUILDER_ONNX_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

/* A view of bytes in the model (or an external data file). data is never NULL. */
typedef struct etrt_onnx_str {
  const char *data;
  size_t size;
} etrt_onnx_str;

#define ETRT_ONNX_STR_ARGS(s) (int)(s).size, (s).data

/* True when the view holds exactly the C string `text`. */
int etrt_onnx_str_eq(etrt_onnx_str s, const char *text);

/* TensorProto.DataType, numbered as ONNX numbers it. */
typedef enum etrt_onnx_data_type {
  ETRT_ONNX_UNDEFINED = 0,
  ETRT_ONNX_FLOAT = 1,
  ETRT_ONNX_UINT8 = 2,
  ETRT_ONNX_INT8 = 3,
  ETRT_ONNX_UINT16 = 4,
  ETRT_ONNX_INT16 = 5,
  ETRT_ONNX_INT32 = 6,
  ETRT_ONNX_INT64 = 7,
  ETRT_ONNX_STRING = 8,
  ETRT_ONNX_BOOL = 9,
  ETRT_ONNX_FLOAT16 = 10,
  ETRT_ONNX_DOUBLE = 11,
  ETRT_ONNX_UINT32 = 12,
  ETRT_ONNX_UINT64 = 13,
  ETRT_ONNX_COMPLEX64 = 14,
  ETRT_ONNX_COMPLEX128 = 15,
  ETRT_ONNX_BFLOAT16 = 16
} etrt_onnx_data_type;

/* "FLOAT", "STRING", "COMPLEX64", ..., "FLOAT8E4M3FN", ...; "type N" for unknown
 * numbers (written into a static buffer per thread). */
const char *etrt_onnx_data_type_name(int32_t onnx_type);

/* The etrt element type of an ONNX element type; ETRT_ERROR_UNSUPPORTED naming the
 * type ("ONNX element type STRING (8) is not supported") when etrt has none. */
etrt_status etrt_onnx_dtype_to_etrt(int32_t onnx_type, etrt_dtype *out);
/* The inverse (for writers); ETRT_ERROR_INVALID_ARGUMENT for an unknown dtype. */
etrt_status etrt_onnx_dtype_from_etrt(etrt_dtype dtype, int32_t *out);

/* Where a tensor's values are. */
typedef enum etrt_onnx_storage {
  ETRT_ONNX_STORAGE_NONE = 0, /* no values (only valid when the tensor has 0 elements) */
  ETRT_ONNX_STORAGE_RAW,      /* raw_data: little-endian bytes */
  ETRT_ONNX_STORAGE_EXTERNAL, /* bytes of an external data file (raw_data then points there) */
  ETRT_ONNX_STORAGE_FLOAT,    /* float_data */
  ETRT_ONNX_STORAGE_INT32,    /* int32_data (also 8/16-bit ints, bool, float16, bfloat16 bits) */
  ETRT_ONNX_STORAGE_INT64,    /* int64_data */
  ETRT_ONNX_STORAGE_DOUBLE,   /* double_data */
  ETRT_ONNX_STORAGE_UINT64,   /* uint64_data (uint32, uint64) */
  ETRT_ONNX_STORAGE_STRING    /* string_data */
} etrt_onnx_storage;

/* "raw_data", "float_data", ... */
const char *etrt_onnx_storage_name(etrt_onnx_storage storage);

typedef struct etrt_onnx_tensor {
  etrt_onnx_str name;
  int32_t data_type; /* etrt_onnx_data_type, or any number the file holds */
  size_t rank;
  const int64_t *dims; /* rank entries, each >= 0 */
  int64_t numel;       /* product of dims (1 for rank 0) */
  etrt_onnx_storage storage;
  /* Exactly the array named by `storage` is set; counts are in elements. */
  const uint8_t *raw_data; /* RAW, EXTERNAL */
  size_t raw_size;
  const float *float_data;
  const int32_t *int32_data;
  const int64_t *int64_data;
  const double *double_data;
  const uint64_t *uint64_data;
  const etrt_onnx_str *string_data;
  size_t count; /* elements in the typed array */
  /* External data as written in the file (location is relative to the model). */
  etrt_onnx_str external_location;
  uint64_t external_offset, external_length;
  size_t offset; /* the TensorProto's first byte in the model, for messages */
} etrt_onnx_tensor;

/* --- tensors as host memory --------------------------------------------------------- */

typedef struct etrt_onnx_host_tensor {
  etrt_dtype dtype;
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
  int64_t numel;
  const void *data; /* contiguous little-endian elements, aligned to the element size;
                       never NULL (a dummy address when nbytes is 0) */
  size_t nbytes;
  void *owned_; /* private: a converted copy, freed by release */
} etrt_onnx_host_tensor;

/* The tensor's values as etrt elements: raw or external bytes are used in place when
 * aligned, typed fields are converted (int32_data carries the 8- and 16-bit types,
 * bool, float16 and bfloat16 as ONNX specifies; values out of range are refused).
 * Refuses element types etrt has no dtype for, rank above ETRT_MAX_RANK, and any
 * mismatch between the dims and the data. `out` stays valid while the model lives
 * and until etrt_onnx_host_tensor_release. */
etrt_status etrt_onnx_tensor_to_host(const etrt_onnx_tensor *tensor, etrt_onnx_host_tensor *out);
void etrt_onnx_host_tensor_release(etrt_onnx_host_tensor *tensor);

/* Checks the dims against the data for the element types whose size is known:
 * dims non-negative with a product that fits, one storage that ONNX allows for the
 * type, and the element count (or raw byte count) that the dims need. The message
 * names the tensor and its byte offset. Parsing calls it for every tensor. */
etrt_status etrt_onnx_tensor_check(const etrt_onnx_tensor *tensor);

#endif
