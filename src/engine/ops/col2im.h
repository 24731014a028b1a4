/* Col2Im(input [N, C * prod(block), L], image_shape, block_shape) -> [N, C, image...]:
 * the inverse of im2col, overlapping values summed. image_shape and block_shape are
 * value inputs; dilations, pads and strides are attributes. Each output element
 * gathers, per block offset, the one sliding position that reaches it (if any), so
 * both executors (cpu/col2im.c, cuda/col2im.cu) evaluate it the same way, with no
 * write conflicts. */
#ifndef ETRT_ENGINE_OPS_COL2IM_H
#define ETRT_ENGINE_OPS_COL2IM_H

#include <stdint.h>

#include "engine/op.h"

#define ETRT_COL2IM_MAX_DIMS (ETRT_MAX_RANK - 2)

typedef struct etrt_col2im_plan {
  int32_t dims; /* spatial */
  int64_t channels, blocks, positions;
  int64_t image[ETRT_COL2IM_MAX_DIMS], block[ETRT_COL2IM_MAX_DIMS];
  int64_t slide[ETRT_COL2IM_MAX_DIMS]; /* sliding positions per dim */
  int64_t dilation[ETRT_COL2IM_MAX_DIMS], pad[ETRT_COL2IM_MAX_DIMS], stride[ETRT_COL2IM_MAX_DIMS];
} etrt_col2im_plan;

etrt_status etrt_col2im_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_col2im_plan *plan);

#ifdef __CUDACC__
#define ETRT_COL2IM_FN __host__ __device__ static inline
#else
#define ETRT_COL2IM_FN static inline
#endif

/* Output element o ([N, C, image...]) of type T from the input's data. */
#define ETRT_COL2IM_ELEMENT(name, T)                                                         \
  ETRT_COL2IM_FN T name(const etrt_col2im_plan *p, const T *x, int64_t o) {                  \
    int64_t pos[ETRT_COL2IM_MAX_DIMS], pixels = 1;                                           \
    for (int32_t d = p->dims - 1; d >= 0; --d) {                                             \
      pos[d] = o % p->image[d];                                                              \
      o /= p->image[d];                                                                      \
      pixels *= p->image[d];                                                                 \
    }                                                                                        \
    (void)pixels;                                                                            \
    int64_t c = o % p->channels, n = o / p->channels;                                        \
    double sum = 0.0;                                                                        \
    for (int64_t k = 0; k < p->blocks; ++k) {                                                \
      int64_t rest = k, l = 0, lscale = 1;                                                   \
      int hit = 1;                                                                           \
      for (int32_t d = p->dims - 1; d >= 0 && hit; --d) {                                    \
        int64_t kd = rest % p->block[d];                                                     \
        rest /= p->block[d];                                                                 \
        int64_t at = pos[d] + p->pad[d] - kd * p->dilation[d];                               \
        if (at < 0 || at % p->stride[d] != 0 || at / p->stride[d] >= p->slide[d]) hit = 0;   \
        l += (at / p->stride[d]) * lscale;                                                   \
        lscale *= p->slide[d];                                                               \
      }                                                                                      \
      if (hit) sum += (double)x[((n * p->channels + c) * p->blocks + k) * p->positions + l]; \
    }                                                                                        \
    return (T)sum;                                                                           \
  }

ETRT_COL2IM_ELEMENT(etrt_col2im_element_f32, float)
ETRT_COL2IM_ELEMENT(etrt_col2im_element_f64, double)

#endif
