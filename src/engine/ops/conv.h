/* Conv, ConvTranspose and EtrtFusedConv: the CPU kernels that the definitions (conv.c) list. Their
 * state is the parsed window attributes (etrt_conv_params, conv_shape.h). */
#ifndef ETRT_ENGINE_OPS_CONV_H
#define ETRT_ENGINE_OPS_CONV_H

#include "engine/op.h"
#include "engine/ops/conv_shape.h"

/* EtrtFusedConv (the builder's CPU fusion, engine-only): Y = act(Conv(X, W) + B + Z) with
 * inputs X, W, optional B and optional Z (the residual, Y's shape), attribute
 * "activation" (NONE, Relu, Clip with activation_min/activation_max, HardSwish,
 * Sigmoid, Silu = x * Sigmoid(x)). Its state starts with the Conv parameters, so the
 * Conv kernels read either node's state the same way. */
typedef enum etrt_conv_activation {
  ETRT_CONV_ACT_NONE = 0,
  ETRT_CONV_ACT_RELU,
  ETRT_CONV_ACT_CLIP,
  ETRT_CONV_ACT_HARD_SWISH,
  ETRT_CONV_ACT_SIGMOID,
  ETRT_CONV_ACT_SILU
} etrt_conv_activation;

typedef struct etrt_fused_conv_params {
  etrt_conv_params conv;
  etrt_conv_activation activation;
  float min, max;     /* Clip */
  float scale, shift; /* then y * scale + shift (a scalar affine block; 1 and 0: none) */
} etrt_fused_conv_params;

/* The activation named by a EtrtFusedConv "activation" string; -1 when unknown. */
int etrt_conv_activation_parse(const char *name);

/* EtrtFusedConv's epilogue after the bias: y = act(y + z) * scale + shift over n values
 * (z may be NULL; p NULL: a Conv, only z is added). */
void etrt_cpu_conv_activate(float *y, const float *z, int64_t n, const etrt_fused_conv_params *p);

/* A convolution's epilogue over an NCHW output of `planes` planes (image * maps + map) of
 * `plane_size` values: bias[map] added (bias may be NULL), then etrt_cpu_conv_activate
 * with the residual plane of z; split over the pool by planes. Nothing to do when bias,
 * z and p are all NULL. */
void etrt_cpu_conv_epilogue(float *y, const float *bias, const float *z,
                            const etrt_fused_conv_params *p, int64_t planes, int64_t maps,
                            int64_t plane_size);

etrt_status etrt_cpu_conv(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_conv_transpose(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs);

#endif
