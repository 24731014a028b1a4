/* Resize (opsets 10-18) and Upsample: attributes, output sizes from the scales or
 * sizes input, and the mapping of an output coordinate to input neighbours and
 * weights (every coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
 * exclude_outside) as the ONNX reference computes them. Shared by the CPU kernel
 * and CUDA kernels. */
#ifndef ETRT_ENGINE_OPS_RESIZE_SHAPE_H
#define ETRT_ENGINE_OPS_RESIZE_SHAPE_H

#include <stdint.h>

#include "engine/op.h"

typedef enum etrt_resize_mode {
  ETRT_RESIZE_NEAREST = 0,
  ETRT_RESIZE_LINEAR = 1,
  ETRT_RESIZE_CUBIC = 2
} etrt_resize_mode;

typedef enum etrt_resize_transform {
  ETRT_RESIZE_HALF_PIXEL = 0,
  ETRT_RESIZE_PYTORCH_HALF_PIXEL = 1,
  ETRT_RESIZE_ALIGN_CORNERS = 2,
  ETRT_RESIZE_ASYMMETRIC = 3,
  ETRT_RESIZE_TF_HALF_PIXEL_FOR_NN = 4,
  ETRT_RESIZE_TF_CROP_AND_RESIZE = 5
} etrt_resize_transform;

typedef enum etrt_resize_nearest {
  ETRT_RESIZE_ROUND_PREFER_FLOOR = 0,
  ETRT_RESIZE_ROUND_PREFER_CEIL = 1,
  ETRT_RESIZE_FLOOR = 2,
  ETRT_RESIZE_CEIL = 3
} etrt_resize_nearest;

typedef struct etrt_resize_params {
  etrt_resize_mode mode;
  etrt_resize_transform transform;
  etrt_resize_nearest nearest;
  double cubic_a;
  int exclude_outside;
  double extrapolation_value;
  uint32_t scales_input, sizes_input; /* input indices; 0 where the node has none */
} etrt_resize_params;

etrt_status etrt_resize_params_parse(const etrt_node *node, etrt_resize_params *params);

/* The resize of one input shape: output sizes, the scale per axis (output/input
 * when sizes were given) and the crop box of tf_crop_and_resize. */
typedef struct etrt_resize_geometry {
  int32_t rank;
  int64_t in[ETRT_MAX_RANK];
  int64_t out[ETRT_MAX_RANK];
  double scale[ETRT_MAX_RANK];
  double roi_start[ETRT_MAX_RANK];
  double roi_end[ETRT_MAX_RANK];
} etrt_resize_geometry;

/* Reads scales or sizes (host values) and roi (host values, needed only for
 * tf_crop_and_resize). */
etrt_status etrt_resize_geometry_compute(const etrt_node *node, const etrt_resize_params *params,
                                         const etrt_tensor *inputs, etrt_resize_geometry *geometry);

/* Up to 4 input neighbours of output coordinate `x` along `axis` with their
 * weights (zero weights dropped); returns their count, or 0 when the coordinate
 * falls outside the crop box (the output takes extrapolation_value). */
int etrt_resize_neighbours(const etrt_resize_params *params, const etrt_resize_geometry *geometry,
                           int32_t axis, int64_t x, int64_t *index, double *weight);

#endif
