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
  int from_pb; /* read from a .pb (uint16 there may be 16-bit float bits) */
} etrt_tool_tensor;

/* Reads `path`: .pb as a TensorProto, anything else as .npy (bfloat16 as '<V2', the
 * ml_dtypes convention: base/npy.h). */
etrt_status etrt_tool_tensor_read(const char *path, etrt_tool_tensor *out);
/* Relabels a .pb tensor of uint16 as `want` where that is bfloat16 or float16: the
 * ONNX backend test data stores them so (older ONNX releases had no other way). */
void etrt_tool_tensor_relabel(etrt_tool_tensor *t, etrt_dtype want);
/* Reads `path` as zero or more method inputs, appended at out[*count] (at most `max` in
 * all): a tensor file gives one; a .pb SequenceProto or OptionalProto gives its
 * tensors (none for an absent optional), which the program takes as consecutive
 * inputs (a sequence is unrolled when it is built); a directory gives its files 0.npy
 * (or 0.pb), 1.npy, ... in order, up to the first missing. */
etrt_status etrt_tool_values_read(const char *path, etrt_tool_tensor *out, uint32_t max,
                                  uint32_t *count);
/* Writes a host tensor as .pb (a TensorProto: bfloat16 as BFLOAT16) where `path` ends in
 * .pb, else as .npy (all or nothing). */
etrt_status etrt_tool_tensor_write(const char *path, const etrt_tensor_view *view);
void etrt_tool_tensor_release(etrt_tool_tensor *tensor);

#endif
