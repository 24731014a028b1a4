/* MaxUnpool(X [N, C, D...], I [X's shape, int64], output_shape?): I holds MaxPool's
 * flat indices into the default output, whose spatial dims are
 * (in - 1) * stride - pad_begin - pad_end + kernel; output_shape (a value input,
 * no smaller) pads that output with zeros at the end of each dim. The kernels write
 * X[i] at I[i]'s coordinates in the default shape, re-flattened in the output's. */
#ifndef ETRT_ENGINE_OPS_UNPOOL_H
#define ETRT_ENGINE_OPS_UNPOOL_H

#include "engine/op.h"

/* The default output (dtype, rank, dims), from X and the attributes. */
etrt_status etrt_max_unpool_default(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *out);

/* The flat offset in an output of dims `to` of flat index `at` of dims `from`. */
#ifdef __CUDACC__
__host__ __device__
#endif
    static inline int64_t
    etrt_max_unpool_remap(int32_t rank, const int64_t *from, const int64_t *to, int64_t at) {
  int64_t off = 0, scale = 1;
  for (int32_t a = rank - 1; a >= 0; --a) {
    off += (at % from[a]) * scale;
    at /= from[a];
    scale *= to[a];
  }
  return off;
}

#endif
