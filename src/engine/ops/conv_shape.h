/* Sliding-window geometry shared by Conv, ConvTranspose and the pools, and by
 * their CPU and CUDA kernels: attributes parsed once (prepare), then resolved
 * against an input shape into output sizes and explicit begin/end pads (auto_pad
 * SAME_UPPER / SAME_LOWER / VALID, ceil_mode, ConvTranspose output_shape and
 * output_padding). */
#ifndef ETRT_ENGINE_OPS_CONV_SHAPE_H
#define ETRT_ENGINE_OPS_CONV_SHAPE_H

#include <stdint.h>

#include "engine/op.h"

#define ETRT_CONV_MAX_SPATIAL (ETRT_MAX_RANK - 2)

typedef enum etrt_auto_pad {
  ETRT_AUTO_PAD_NOTSET = 0,
  ETRT_AUTO_PAD_SAME_UPPER = 1,
  ETRT_AUTO_PAD_SAME_LOWER = 2,
  ETRT_AUTO_PAD_VALID = 3
} etrt_auto_pad;

/* The attributes as the node gives them (counts are 0 where absent). */
typedef struct etrt_conv_params {
  etrt_auto_pad auto_pad;
  int64_t group;
  int ceil_mode;
  int count_include_pad;
  int64_t lp_p; /* LpPool */
  int64_t storage_order;
  /* The builder's "channels_last" attribute: X and Y are [N, spatial..., C] and Conv's W is
   * [M, kernel..., C/group] (cuDNN's NHWC filter order). The geometry below always reads
   * NCHW-ordered dims: kernels pass etrt_conv_nchw_view of their tensors. */
  int channels_last;
  int32_t kernel_count, stride_count, dilation_count, pad_count, output_padding_count,
      output_shape_count;
  int64_t kernel[ETRT_CONV_MAX_SPATIAL];
  int64_t strides[ETRT_CONV_MAX_SPATIAL];
  int64_t dilations[ETRT_CONV_MAX_SPATIAL];
  int64_t pads[2 * ETRT_CONV_MAX_SPATIAL];
  int64_t output_padding[ETRT_CONV_MAX_SPATIAL];
  int64_t output_shape[ETRT_CONV_MAX_SPATIAL];
} etrt_conv_params;

/* The window resolved for one input shape. Pads may be negative for ConvTranspose
 * with an output_shape larger than the natural one (the extra rows get only the
 * bias). */
typedef struct etrt_conv_geometry {
  int32_t spatial;
  int64_t in[ETRT_CONV_MAX_SPATIAL];
  int64_t out[ETRT_CONV_MAX_SPATIAL];
  int64_t kernel[ETRT_CONV_MAX_SPATIAL];
  int64_t stride[ETRT_CONV_MAX_SPATIAL];
  int64_t dilation[ETRT_CONV_MAX_SPATIAL];
  int64_t pad_begin[ETRT_CONV_MAX_SPATIAL];
  int64_t pad_end[ETRT_CONV_MAX_SPATIAL];
} etrt_conv_geometry;

/* Reads and checks the attributes (positive strides, dilations and group,
 * non-negative pads, a known auto_pad). `require_kernel`: pools need kernel_shape. */
etrt_status etrt_conv_params_parse(const etrt_node *node, int require_kernel,
                                   etrt_conv_params *params);

/* Conv: input [N, C, spatial...], weights [M, C/group, kernel...]. */
etrt_status etrt_conv_geometry_conv(const etrt_node *node, const etrt_conv_params *params,
                                    const etrt_tensor *input, const etrt_tensor *weights,
                                    etrt_conv_geometry *geometry);
/* ConvTranspose: input [N, C, spatial...], weights [C, M/group, kernel...]. */
etrt_status etrt_conv_geometry_transpose(const etrt_node *node, const etrt_conv_params *params,
                                         const etrt_tensor *input, const etrt_tensor *weights,
                                         etrt_conv_geometry *geometry);
/* MaxPool, AveragePool, LpPool: input [N, C, spatial...] (ceil_mode applies). */
etrt_status etrt_conv_geometry_pool(const etrt_node *node, const etrt_conv_params *params,
                                    const etrt_tensor *input, etrt_conv_geometry *geometry);

/* `t` with its last axis moved to position 1 (channels-last [N, H, W, C] seen as [N, C, H, W]);
 * the data pointer is kept, so only the dims may be read through the view. */
etrt_tensor etrt_conv_nchw_view(const etrt_tensor *t);
/* The reverse, in place: NCHW-ordered dims made channels-last ([N, C, H, W] -> [N, H, W, C]). */
void etrt_conv_nhwc_dims(etrt_tensor *t);
/* For a channels_last node, refuses inputs that are not 4-D (the layouts the kernels
 * implement) naming `what`. */
etrt_status etrt_conv_check_channels_last(const etrt_node *node, const etrt_tensor *t,
                                          const char *what);

/* Product of out[] (output positions per channel) and of kernel[]. */
int64_t etrt_conv_geometry_out_count(const etrt_conv_geometry *geometry);
int64_t etrt_conv_geometry_kernel_count(const etrt_conv_geometry *geometry);
int64_t etrt_conv_geometry_in_count(const etrt_conv_geometry *geometry);

#endif
