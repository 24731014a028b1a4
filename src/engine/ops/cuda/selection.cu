/* ArgMax/ArgMin and TopK on the GPU (ops/selection.h), with the CPU kernels' rules:
 * the first (or, with select_last_index, the last) extreme, NaN never winning a
 * comparison; TopK keeps the k best of each row in order, equal values keeping the
 * lower index first. One thread per row: simple, exact, and fast enough for the
 * short axes these operators see. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/selection.h"
}

/* The input as rows of `size` elements spaced `inner` apart. */
typedef struct etrt_selection_rows {
  int64_t outer, size, inner;
} etrt_selection_rows;

static etrt_status etrt_selection_rows_of(const etrt_node *node, const etrt_tensor *x,
                                          int64_t axis_default, etrt_selection_rows *r,
                                          int32_t *axis_out) {
  int32_t axis = 0;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, axis_default, x->rank, &axis));
  *axis_out = axis;
  r->outer = etrt_cuda_span(x, 0, axis);
  r->size = x->dims[axis];
  r->inner = etrt_cuda_span(x, axis + 1, x->rank);
  return ETRT_OK;
}

/* The element types of the CPU kernels. */
#define ETRT_SELECTION_SWITCH(dtype, T, ELSE, ...) \
  switch (dtype) {                                 \
    case ETRT_DTYPE_FLOAT32: {                     \
      typedef float T;                             \
      __VA_ARGS__;                                 \
    } break;                                       \
    case ETRT_DTYPE_FLOAT64: {                     \
      typedef double T;                            \
      __VA_ARGS__;                                 \
    } break;                                       \
    case ETRT_DTYPE_INT8: {                        \
      typedef int8_t T;                            \
      __VA_ARGS__;                                 \
    } break;                                       \
    case ETRT_DTYPE_UINT8: {                       \
      typedef uint8_t T;                           \
      __VA_ARGS__;                                 \
    } break;                                       \
    case ETRT_DTYPE_INT16: {                       \
      typedef int16_t T;                           \
      __VA_ARGS__;                                 \
    } break;                                       \
    case ETRT_DTYPE_INT32: {                       \
      typedef int32_t T;                           \
      __VA_ARGS__;                                 \
    } break;                                       \
    case ETRT_DTYPE_INT64: {                       \
      typedef int64_t T;                           \
      __VA_ARGS__;                                 \
    } break;                                       \
    default:                                       \
      ELSE;                                        \
  }

template <typename T>
__global__ void etrt_arg_kernel(const T *x, int64_t *y, etrt_selection_rows r, int want_max,
                                int last) {
  ETRT_CUDA_LOOP(t, r.outer * r.inner) {
    int64_t o = t / r.inner, j = t % r.inner;
    const T *row = x + o * r.size * r.inner + j;
    int64_t best = 0;
    T b = row[0];
    for (int64_t i = 1; i < r.size; ++i) {
      T v = row[i * r.inner];
      bool better = want_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
      if (better) {
        best = i;
        b = v;
      }
    }
    y[t] = best;
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_arg_extreme) {
  const etrt_tensor *x = &inputs[0];
  etrt_selection_rows r;
  int32_t axis = 0;
  ETRT_RETURN_IF_ERROR(etrt_selection_rows_of(node, x, 0, &r, &axis));
  int64_t rows = r.outer * r.inner;
  if (rows == 0 || r.size == 0) return ETRT_OK;
  int want_max = strcmp(node->op_type, "ArgMax") == 0;
  int last = etrt_node_attribute_int(node, "select_last_index", 0) != 0;
  ETRT_SELECTION_SWITCH(x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
                        etrt_arg_kernel<T><<<etrt_cuda_blocks(rows, ETRT_CUDA_THREADS),
                                             ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
                            (const T *)x->data, (int64_t *)outputs[0].data, r, want_max, last));
  return etrt_cuda_check(node, "arg_extreme");
}

/* Insertion into the k best kept in the outputs (strided by inner): O(size * k). */
template <typename T>
__global__ void etrt_top_k_kernel(const T *x, T *values, int64_t *indices, etrt_selection_rows r,
                                  int64_t k, int largest) {
  ETRT_CUDA_LOOP(t, r.outer * r.inner) {
    int64_t o = t / r.inner, j = t % r.inner;
    const T *row = x + o * r.size * r.inner + j;
    T *vals = values + o * k * r.inner + j;
    int64_t *idx = indices + o * k * r.inner + j;
    int64_t kept = 0;
    for (int64_t i = 0; i < r.size; ++i) {
      T v = row[i * r.inner];
      int64_t at = kept;
      while (at > 0 && (largest ? v > vals[(at - 1) * r.inner] : v < vals[(at - 1) * r.inner]))
        --at;
      if (at >= k) continue;
      int64_t end = kept < k ? kept : k - 1;
      for (int64_t m = end; m > at; --m) {
        vals[m * r.inner] = vals[(m - 1) * r.inner];
        idx[m * r.inner] = idx[(m - 1) * r.inner];
      }
      vals[at * r.inner] = v;
      idx[at * r.inner] = i;
      if (kept < k) ++kept;
    }
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_top_k) {
  const etrt_tensor *x = &inputs[0];
  etrt_selection_rows r;
  int32_t axis = 0;
  ETRT_RETURN_IF_ERROR(etrt_selection_rows_of(node, x, -1, &r, &axis));
  int64_t k = outputs[0].dims[axis];
  int64_t rows = r.outer * r.inner;
  if (k == 0 || rows == 0) return ETRT_OK;
  int largest = etrt_node_attribute_int(node, "largest", 1) != 0;
  ETRT_SELECTION_SWITCH(x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
                        etrt_top_k_kernel<T>
                        <<<etrt_cuda_blocks(rows, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                           etrt_cuda_stream(launch)>>>((const T *)x->data, (T *)outputs[0].data,
                                                       (int64_t *)outputs[1].data, r, k, largest));
  return etrt_cuda_check(node, "top_k");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_selection[] = {
    {"ArgMax", etrt_cuda_arg_extreme, NULL},
    {"ArgMin", etrt_cuda_arg_extreme, NULL},
    {"TopK", etrt_cuda_top_k, NULL},
    {NULL, NULL, NULL},
};
