/* Tensors in files for the command line: NumPy .npy and ONNX TensorProto .pb. */
#ifndef ETRT_TOOLS_TENSOR_FILE_H
#define ETRT_TOOLS_TENSOR_FILE_H

#include <stddef.h>

#include "etrt/status.h"
#include "etrt/types.h"

/* A host tensor the tool owns (view.data is malloc'd). */
typedef struct etrt_tool_tensor {
  etrt_tensor_view view;
  size_t nbytes;
} etrt_tool_tensor;

/* Reads `path`: .pb as a TensorProto, anything else as .npy (bfloat16 as '<V2', the
 * ml_dtypes convention: base/npy.h). */
etrt_status etrt_tool_tensor_read(const char *path, etrt_tool_tensor *out);
/* The same for an input that takes `want`: a .pb of uint16 is taken as bfloat16 or
 * float16 bits where `want` is one of those, since the ONNX backend test data stores
 * them so (older ONNX releases had no other way). */
etrt_status etrt_tool_tensor_read_for(const char *path, etrt_dtype want, etrt_tool_tensor *out);
/* Writes a host tensor as .npy (all or nothing). */
etrt_status etrt_tool_tensor_write_npy(const char *path, const etrt_tensor_view *view);
void etrt_tool_tensor_release(etrt_tool_tensor *tensor);

#endif
