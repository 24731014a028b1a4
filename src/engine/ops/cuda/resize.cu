/* Resize and Upsample on the GPU. The per-axis neighbours and weights of every
 * output coordinate come from the shared etrt_resize_neighbours (resize_shape.h),
 * computed on the host and uploaded into the workspace as one table of taps; a
 * kernel then combines, per output element, the product of its axes' taps, in the
 * CPU kernel's order and in double. Nearest moves elements by size (any dtype);
 * linear and cubic take float32 and float64, as on the CPU. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/resize.h"
}

/* The neighbours of one output coordinate along one axis (count 0: outside the
 * crop box). */
typedef struct etrt_resize_tap {
  int64_t index[4];
  double weight[4];
  int32_t count;
  int32_t unused;
} etrt_resize_tap;

/* Axis a's taps start at first[a] in the table. */
typedef struct etrt_resize_plan {
  int32_t rank;
  int64_t out[ETRT_MAX_RANK];
  int64_t first[ETRT_MAX_RANK];
  int64_t stride[ETRT_MAX_RANK]; /* the input's */
} etrt_resize_plan;

/* The taps of output element i, one per axis; false when one axis is outside. */
__device__ __forceinline__ bool etrt_resize_taps(const etrt_resize_tap *table,
                                                 const etrt_resize_plan &plan, int64_t i,
                                                 const etrt_resize_tap **taps) {
  bool inside = true;
  for (int32_t a = plan.rank - 1; a >= 0; --a) {
    taps[a] = &table[plan.first[a] + i % plan.out[a]];
    i /= plan.out[a];
    if (taps[a]->count == 0) inside = false;
  }
  return inside;
}

template <typename T>
__global__ void etrt_resize_nearest_kernel(const T *x, T *y, int64_t n,
                                           const etrt_resize_tap *table, etrt_resize_plan plan,
                                           T outside_value) {
  ETRT_CUDA_LOOP(i, n) {
    const etrt_resize_tap *taps[ETRT_MAX_RANK];
    if (!etrt_resize_taps(table, plan, i, taps)) {
      y[i] = outside_value;
      continue;
    }
    int64_t off = 0;
    for (int32_t a = 0; a < plan.rank; ++a) off += taps[a]->index[0] * plan.stride[a];
    y[i] = x[off];
  }
}

template <typename T>
__global__ void etrt_resize_weighted_kernel(const T *x, T *y, int64_t n,
                                            const etrt_resize_tap *table, etrt_resize_plan plan,
                                            double extrapolation) {
  ETRT_CUDA_LOOP(i, n) {
    const etrt_resize_tap *taps[ETRT_MAX_RANK];
    if (!etrt_resize_taps(table, plan, i, taps)) {
      y[i] = (T)extrapolation;
      continue;
    }
    int pick[ETRT_MAX_RANK];
    for (int32_t a = 0; a < plan.rank; ++a) pick[a] = 0;
    double sum = 0.0;
    for (;;) {
      int64_t off = 0;
      double w = 1.0;
      for (int32_t a = 0; a < plan.rank; ++a) {
        off += taps[a]->index[pick[a]] * plan.stride[a];
        w *= taps[a]->weight[pick[a]];
      }
      sum += w * (double)x[off];
      int32_t a = plan.rank - 1;
      for (; a >= 0; --a) {
        if (++pick[a] < taps[a]->count) break;
        pick[a] = 0;
      }
      if (a < 0) break;
    }
    y[i] = (T)sum;
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_resize) {
  const etrt_resize_params *p = (const etrt_resize_params *)node->state;
  const etrt_tensor *x = &inputs[0];
  etrt_tensor *y = &outputs[0];
  etrt_tensor host[4];
  etrt_cuda_host_inputs(inputs, node->num_inputs < 4 ? node->num_inputs : 4, host);
  etrt_resize_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_resize_geometry_compute(node, p, host, &g));
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  cudaStream_t stream = etrt_cuda_stream(launch);
  etrt_resize_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.rank = x->rank;
  etrt_shape_strides(x->rank, x->dims, plan.stride);
  etrt_cuda_uploader up;
  etrt_cuda_uploader_init(&up, node, launch->workspace, stream);
  int64_t at = 0;
  for (int32_t a = 0; a < x->rank; ++a) {
    plan.out[a] = y->dims[a];
    plan.first[a] = at;
    for (int64_t c = 0; c < y->dims[a]; ++c) {
      etrt_resize_tap tap;
      memset(&tap, 0, sizeof tap);
      tap.count = etrt_resize_neighbours(p, &g, a, c, tap.index, tap.weight);
      etrt_cuda_uploader_put(&up, &tap, sizeof tap);
    }
    at += y->dims[a];
  }
  ETRT_RETURN_IF_ERROR(etrt_cuda_uploader_finish(&up));
  const etrt_resize_tap *table = (const etrt_resize_tap *)launch->workspace;
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  if (p->mode == ETRT_RESIZE_NEAREST) {
    /* outside the crop box: extrapolation_value for the float types the CPU kernel
     * fills with it, zero for the others */
    uint8_t outside[8] = {0};
    if (x->dtype == ETRT_DTYPE_FLOAT32) {
      float f = (float)p->extrapolation_value;
      memcpy(outside, &f, sizeof f);
    } else if (x->dtype == ETRT_DTYPE_FLOAT64) {
      memcpy(outside, &p->extrapolation_value, sizeof p->extrapolation_value);
    }
    ETRT_CUDA_BYTES_SWITCH(
        etrt_dtype_size(x->dtype), T, return etrt_cuda_no_kernel(node, x->dtype), {
          T value;
          memcpy(&value, outside, sizeof value);
          etrt_resize_nearest_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
              (const T *)x->data, (T *)y->data, n, table, plan, value);
        });
    return etrt_cuda_check(node, "resize_nearest");
  }
  if (x->dtype == ETRT_DTYPE_FLOAT32) {
    etrt_resize_weighted_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        (const float *)x->data, (float *)y->data, n, table, plan, p->extrapolation_value);
  } else if (x->dtype == ETRT_DTYPE_FLOAT64) {
    etrt_resize_weighted_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        (const double *)x->data, (double *)y->data, n, table, plan, p->extrapolation_value);
  } else {
    return etrt_cuda_no_kernel(node, x->dtype);
  }
  return etrt_cuda_check(node, "resize");
}

/* One tap per output coordinate of every axis. */
extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_resize_workspace) {
  size_t entries = 0;
  for (int32_t a = 0; a < outputs[0].rank; ++a) entries += (size_t)outputs[0].dims[a];
  return entries * sizeof(etrt_resize_tap);
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_resize[] = {
    {"Resize", etrt_cuda_resize, etrt_cuda_resize_workspace},
    {"Upsample", etrt_cuda_resize, etrt_cuda_resize_workspace},
    {NULL, NULL, NULL},
};
