/* Element type numberings beside etrt's own (include/etrt/types.h): ONNX's
 * TensorProto.DataType, which both the ONNX reader and the engine's Cast (its `to`
 * attribute) read, so that one table serves both. */
#ifndef ETRT_BASE_DTYPE_H
#define ETRT_BASE_DTYPE_H

#include <stdint.h>

#include "etrt/types.h"

/* The dtype of an ONNX element type number; ETRT_DTYPE_INVALID when etrt has none
 * (STRING, the complex and float8 types, unknown numbers). */
etrt_dtype etrt_dtype_from_onnx(int64_t onnx_type);
/* The inverse; 0 (ONNX's UNDEFINED) for ETRT_DTYPE_INVALID or an unknown dtype. */
int32_t etrt_dtype_to_onnx(etrt_dtype dtype);

#endif
