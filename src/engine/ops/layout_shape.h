/* Geometry of the data-movement operators, computed once from attributes, value
 * inputs and input shapes, for shape inference and for the CPU and CUDA kernels
 * alike: Slice ranges, Pad amounts, Split sizes, Transpose permutations, and the
 * strided views that Transpose, Slice, Expand and DepthToSpace/SpaceToDepth read. */
#ifndef ETRT_ENGINE_OPS_LAYOUT_SHAPE_H
#define ETRT_ENGINE_OPS_LAYOUT_SHAPE_H

#include <stdint.h>

#include "engine/op.h"

/* A strided read of the input: output element (i_0 .. i_n) of dims[] is input
 * element offset + sum(i_k * strides[k]) (element units). */
typedef struct etrt_layout_view {
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
  int64_t strides[ETRT_MAX_RANK];
  int64_t offset;
} etrt_layout_view;

/* Slice (opset 1-9 attributes starts/ends/axes; opset 10+ inputs 1-4): ONNX's
 * clamping for positive and negative steps, then the view of the input. */
etrt_status etrt_slice_view(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_layout_view *view);

/* Transpose: perm (default reversed axes), checked to be a permutation. */
etrt_status etrt_transpose_perm(const etrt_node *node, int32_t rank, int32_t *perm);
/* The view that reads `input` in the order `perm`. */
void etrt_transpose_view(const etrt_tensor *input, const int32_t *perm, etrt_layout_view *view);

/* DepthToSpace (mode DCR/CRD) and SpaceToDepth as a 6-D view of the input whose
 * contiguous output is the operator's output. */
etrt_status etrt_depth_space_view(const etrt_node *node, const etrt_tensor *input,
                                  int depth_to_space, etrt_layout_view *view, int64_t *out_dims);

/* Pad: begin/end amounts per axis (negative crops) from the pads input (opset 11+,
 * with the optional axes input of opset 18) or attribute (opset 2-10). */
typedef enum etrt_pad_mode {
  ETRT_PAD_CONSTANT = 0,
  ETRT_PAD_REFLECT = 1,
  ETRT_PAD_EDGE = 2,
  ETRT_PAD_WRAP = 3
} etrt_pad_mode;

etrt_status etrt_pad_mode_parse(const etrt_node *node, etrt_pad_mode *mode);
etrt_status etrt_pad_amounts(const etrt_node *node, const etrt_tensor *inputs, int64_t *begin,
                             int64_t *end);
/* The input coordinate that output coordinate `c` (already shifted by the begin
 * pad) reads along an axis of size n, or -1 where the constant goes. Kernels call
 * it per element (CPU) or per axis position to build a table (CUDA). */
int64_t etrt_pad_source(etrt_pad_mode mode, int64_t c, int64_t n);

/* Split: the sizes of the outputs along `axis` (from the split input, the split
 * attribute, num_outputs, or equal parts). */
etrt_status etrt_split_sizes(const etrt_node *node, const etrt_tensor *inputs, int32_t *axis,
                             int64_t *sizes);

/* Squeeze and Unsqueeze axes, from the attribute (opset < 13) or input 1; `rank`
 * is the rank they refer to (the input's for Squeeze, the output's for Unsqueeze).
 * marks[i] is set for each axis; *count is how many were given. */
etrt_status etrt_squeeze_axes(const etrt_node *node, const etrt_tensor *inputs, int32_t rank,
                              uint8_t *marks, int32_t *count);

#endif
