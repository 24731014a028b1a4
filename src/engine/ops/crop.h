/* CenterCropPad(input, shape [value input], axes?): each axis (all, or those of
 * `axes`) cropped or zero-padded about its centre to the size `shape` gives; a
 * crop starts at (in - out) / 2, a pad puts (out - in) / 2 zeros before the data.
 * Shared by the CPU kernel (cpu/crop.c) and the CUDA kernel (cuda/crop.cu). */
#ifndef ETRT_ENGINE_OPS_CROP_H
#define ETRT_ENGINE_OPS_CROP_H

#include <stdint.h>

#include "engine/op.h"

/* Output dims and, per dim, the input coordinate of output coordinate 0 (negative
 * inside a pad). */
typedef struct etrt_crop_plan {
  int32_t rank;
  int64_t in_dims[ETRT_MAX_RANK], out_dims[ETRT_MAX_RANK], offset[ETRT_MAX_RANK];
} etrt_crop_plan;

etrt_status etrt_crop_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_crop_plan *plan);

/* The input offset of output element o, or -1 inside a pad. */
#ifdef __CUDACC__
__host__ __device__
#endif
    static inline int64_t
    etrt_crop_source(const etrt_crop_plan *p, int64_t o) {
  int64_t at = 0, scale = 1;
  for (int32_t a = p->rank - 1; a >= 0; --a) {
    int64_t c = o % p->out_dims[a] + p->offset[a];
    o /= p->out_dims[a];
    if (c < 0 || c >= p->in_dims[a]) return -1;
    at += c * scale;
    scale *= p->in_dims[a];
  }
  return at;
}

#endif
