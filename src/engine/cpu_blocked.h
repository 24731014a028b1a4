/* etrt's kernels for values the CPU executor keeps in oneDNN's channel-blocked layouts
 * (nChw8c, nChw16c: channel blocks of B, each a [H, W, B] run; cpu_onednn.h), for the nodes
 * whose bytes depend on the layout and that sit between blocked convolutions: the
 * squeeze-and-excitation blocks of MobileNet v3 and EfficientNet, a global average pool
 * of a convolution's output and that output scaled per channel. The channel counts are
 * whole blocks (no padded channel). */
#ifndef ETRT_ENGINE_CPU_BLOCKED_H
#define ETRT_ENGINE_CPU_BLOCKED_H

#include <stdint.h>

/* y[n, c] = the mean of x[n, c, :, :] for x [batch, channels, hw] in blocks of `block`
 * channels; y is [batch, channels] (NCHW: the pool's [N, C, 1, 1] output). */
void etrt_cpu_blocked_global_average(const float *x, float *y, int64_t batch, int64_t channels,
                                     int64_t hw, int64_t block);

/* y = x scaled per channel: y[n, c, i] = x[n, c, i] * scale[n or 0, c] for x and y
 * [batch, channels, hw] in blocks of `block` channels; scale is [scale_batch, channels]
 * (NCHW [N or 1, C, 1, 1]), scale_batch 1 or batch. */
void etrt_cpu_blocked_channel_scale(const float *x, const float *scale, float *y, int64_t batch,
                                    int64_t channels, int64_t hw, int64_t block,
                                    int64_t scale_batch);

#endif
