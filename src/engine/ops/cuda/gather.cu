/* Indexing operators on the GPU (ops/gather.h): GatherElements, GatherND,
 * ScatterElements (and Scatter), ScatterND and OneHot. Data moves by element size, so every
 * dtype works; indices are int32 or int64 (OneHot's also float). The CPU kernels
 * refuse an out-of-range index; a kernel cannot return an error, so it records the
 * node's fault (etrt_cuda_fault: the executor fails the run, naming the node) and
 * never reads or writes outside a buffer: a gathered element with such an index
 * reads as zero and a scattered update with one is skipped. OneHot leaves such
 * positions "off", as ONNX says (the CPU does the same), which is no fault. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/gather.h"
}

/* Index i mapped into [0, size), or -1 when out of range. */
template <typename I>
__device__ __forceinline__ int64_t etrt_gather_at(const I *indices, int64_t i, int64_t size) {
  int64_t v = (int64_t)indices[i];
  if (v < 0) v += size;
  return (v < 0 || v >= size) ? -1 : v;
}

/* Shapes for the element-wise indexing operators: the indices' dims, the data's
 * strides, and the axis. */
typedef struct etrt_gather_plan {
  int32_t rank, axis;
  int64_t dims[ETRT_MAX_RANK];    /* indices (and updates) */
  int64_t strides[ETRT_MAX_RANK]; /* data */
  int64_t size;                   /* data's size along the axis */
} etrt_gather_plan;

static etrt_status etrt_gather_plan_make(const etrt_node *node, const etrt_tensor *data,
                                         const etrt_tensor *indices, etrt_gather_plan *plan) {
  memset(plan, 0, sizeof *plan);
  int32_t axis = 0;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &axis));
  if (indices->rank != data->rank) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s node '%s': indices have rank %d, data %d",
                      node->op_type, etrt_cuda_name(node), (int)indices->rank, (int)data->rank);
  }
  plan->rank = data->rank;
  plan->axis = axis;
  plan->size = data->dims[axis];
  for (int32_t a = 0; a < data->rank; ++a) plan->dims[a] = indices->dims[a];
  etrt_shape_strides(data->rank, data->dims, plan->strides);
  return ETRT_OK;
}

/* The data offset of indices element i without its axis term. */
__device__ __forceinline__ int64_t etrt_gather_base(const etrt_gather_plan &plan, int64_t i) {
  int64_t off = 0;
  for (int32_t a = plan.rank - 1; a >= 0; --a) {
    if (a != plan.axis) off += (i % plan.dims[a]) * plan.strides[a];
    i /= plan.dims[a];
  }
  return off;
}

/* ---- GatherElements ------------------------------------------------------------------ */

template <typename T, typename I>
__global__ void etrt_gather_elements_kernel(const T *data, const I *indices, T *out, int64_t n,
                                            etrt_gather_plan plan, uint32_t *fault, uint32_t node) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t at = etrt_gather_at(indices, i, plan.size);
    if (at < 0) etrt_cuda_fault(fault, node);
    out[i] = at < 0 ? T(0) : data[etrt_gather_base(plan, i) + at * plan.strides[plan.axis]];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_gather_elements) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  etrt_gather_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_gather_plan_make(node, data, indices, &plan));
  int64_t n = etrt_tensor_numel(indices);
  if (n == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  size_t elem = etrt_dtype_size(data->dtype);
  if (indices->dtype == ETRT_DTYPE_INT32) {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, data->dtype),
                           etrt_gather_elements_kernel<T, int32_t>
                           <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int32_t *)indices->data,
                               (T *)outputs[0].data, n, plan, launch->fault, launch->node));
  } else {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, data->dtype),
                           etrt_gather_elements_kernel<T, int64_t>
                           <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int64_t *)indices->data,
                               (T *)outputs[0].data, n, plan, launch->fault, launch->node));
  }
  return etrt_cuda_check(node, "gather_elements");
}

/* ---- ScatterElements, Scatter ---------------------------------------------------------- */

/* *d combined with u as the reduction says. */
template <typename T>
__device__ __forceinline__ void etrt_scatter_apply(T *d, T u, int reduction) {
  switch (reduction) {
    case ETRT_SCATTER_ADD:
      *d = (T)(*d + u);
      break;
    case ETRT_SCATTER_MUL:
      *d = (T)(*d * u);
      break;
    case ETRT_SCATTER_MAX:
      if (u > *d) *d = u;
      break;
    case ETRT_SCATTER_MIN:
      if (u < *d) *d = u;
      break;
    default:
      *d = u;
      break;
  }
}

/* Updates combine in the order the CPU kernel applies them: a thread owns one line
 * of indices along the axis (every other coordinate fixed, so no other line can
 * reach its outputs) and walks it from the start. */
template <typename T, typename I>
__global__ void etrt_scatter_kernel(const I *indices, const T *updates, T *out, int64_t lines,
                                    etrt_gather_plan plan, int reduction, uint32_t *fault,
                                    uint32_t node) {
  int64_t count = plan.dims[plan.axis];
  int64_t step = 1;
  for (int32_t a = plan.axis + 1; a < plan.rank; ++a) step *= plan.dims[a];
  ETRT_CUDA_LOOP(line, lines) {
    /* the first indices element of the line: axis coordinate 0 */
    int64_t first = (line / step) * count * step + line % step;
    int64_t base = etrt_gather_base(plan, first);
    for (int64_t t = 0; t < count; ++t) {
      int64_t i = first + t * step;
      int64_t at = etrt_gather_at(indices, i, plan.size);
      if (at < 0) {
        etrt_cuda_fault(fault, node);
        continue;
      }
      etrt_scatter_apply(&out[base + at * plan.strides[plan.axis]], updates[i], reduction);
    }
  }
}

/* Integer sums and products wrap, as on the CPU: they run on the unsigned type. */
template <typename T>
struct etrt_scatter_math {
  typedef T type;
};
template <>
struct etrt_scatter_math<int32_t> {
  typedef uint32_t type;
};
template <>
struct etrt_scatter_math<int64_t> {
  typedef uint64_t type;
};

/* ScatterND: data's strides over the k indexed dims, the slice each tuple names. */
typedef struct etrt_scatter_nd_plan {
  int32_t k;
  int64_t tuples, slice;
  int64_t dims[ETRT_MAX_RANK];    /* data */
  int64_t strides[ETRT_MAX_RANK]; /* data */
} etrt_scatter_nd_plan;

/* Tuples combine in order, as on the CPU: a thread owns one element of the slice
 * (no other thread reaches its outputs) and walks every tuple. */
template <typename T, typename I>
__global__ void etrt_scatter_nd_kernel(const I *indices, const T *updates, T *out, int64_t slice,
                                       etrt_scatter_nd_plan plan, int reduction, uint32_t *fault,
                                       uint32_t node) {
  ETRT_CUDA_LOOP(e, slice) {
    for (int64_t t = 0; t < plan.tuples; ++t) {
      int64_t off = 0;
      bool inside = true;
      for (int32_t a = 0; a < plan.k; ++a) {
        int64_t at = etrt_gather_at(indices, t * plan.k + a, plan.dims[a]);
        if (at < 0) inside = false;
        off += at * plan.strides[a];
      }
      if (!inside) {
        etrt_cuda_fault(fault, node);
        continue;
      }
      etrt_scatter_apply(&out[off + e], updates[t * plan.slice + e], reduction);
    }
  }
}

/* One launch of the scatter kernel of the plan's kind over n threads' work. */
template <typename T, typename I>
static void etrt_scatter_go(const I *indices, const T *updates, T *out, int64_t n,
                            const etrt_gather_plan &plan, int reduction,
                            const etrt_cuda_launch *launch) {
  etrt_scatter_kernel<T, I>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          indices, updates, out, n, plan, reduction, launch->fault, launch->node);
}
template <typename T, typename I>
static void etrt_scatter_go(const I *indices, const T *updates, T *out, int64_t n,
                            const etrt_scatter_nd_plan &plan, int reduction,
                            const etrt_cuda_launch *launch) {
  etrt_scatter_nd_kernel<T, I>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          indices, updates, out, n, plan, reduction, launch->fault, launch->node);
}

template <typename T, typename I, typename P>
static void etrt_scatter_launch(const I *indices, const void *updates, void *out, int64_t lines,
                                const P &plan, etrt_scatter_reduction reduction,
                                const etrt_cuda_launch *launch) {
  if (reduction == ETRT_SCATTER_ADD || reduction == ETRT_SCATTER_MUL) {
    typedef typename etrt_scatter_math<T>::type W;
    etrt_scatter_go<W, I>(indices, (const W *)updates, (W *)out, lines, plan, (int)reduction,
                          launch);
  } else {
    etrt_scatter_go<T, I>(indices, (const T *)updates, (T *)out, lines, plan, (int)reduction,
                          launch);
  }
}

template <typename I, typename P>
static etrt_status etrt_scatter_dispatch(const etrt_node *node, const I *indices,
                                         const etrt_tensor *data, const void *updates, void *out,
                                         int64_t lines, const P &plan,
                                         etrt_scatter_reduction reduction,
                                         const etrt_cuda_launch *launch) {
  if (reduction == ETRT_SCATTER_NONE) {
    ETRT_CUDA_BYTES_SWITCH(
        etrt_dtype_size(data->dtype), T, return etrt_cuda_no_kernel(node, data->dtype),
        etrt_scatter_launch<T, I, P>(indices, updates, out, lines, plan, reduction, launch));
    return ETRT_OK;
  }
  switch (data->dtype) {
    case ETRT_DTYPE_FLOAT32:
      etrt_scatter_launch<float, I, P>(indices, updates, out, lines, plan, reduction, launch);
      break;
    case ETRT_DTYPE_FLOAT64:
      etrt_scatter_launch<double, I, P>(indices, updates, out, lines, plan, reduction, launch);
      break;
    case ETRT_DTYPE_INT32:
      etrt_scatter_launch<int32_t, I, P>(indices, updates, out, lines, plan, reduction, launch);
      break;
    case ETRT_DTYPE_INT64:
      etrt_scatter_launch<int64_t, I, P>(indices, updates, out, lines, plan, reduction, launch);
      break;
    default:
      return etrt_cuda_no_kernel(node, data->dtype);
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_scatter_elements) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1], *updates = &inputs[2];
  etrt_tensor *y = &outputs[0];
  etrt_gather_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_gather_plan_make(node, data, indices, &plan));
  etrt_scatter_reduction reduction = ETRT_SCATTER_NONE;
  ETRT_RETURN_IF_ERROR(etrt_scatter_reduction_parse(node, &reduction));
  cudaStream_t stream = etrt_cuda_stream(launch);
  size_t bytes = (size_t)etrt_tensor_numel(data) * etrt_dtype_size(data->dtype);
  if (bytes > 0 && y->data != data->data) {
    cudaMemcpyAsync(y->data, data->data, bytes, cudaMemcpyDeviceToDevice, stream);
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "copy"));
  }
  int64_t count = indices->dims[plan.axis];
  int64_t n = etrt_tensor_numel(indices);
  if (n == 0 || count == 0) return ETRT_OK;
  int64_t lines = n / count;
  if (indices->dtype == ETRT_DTYPE_INT32) {
    ETRT_RETURN_IF_ERROR(etrt_scatter_dispatch(node, (const int32_t *)indices->data, data,
                                               updates->data, y->data, lines, plan, reduction,
                                               launch));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_scatter_dispatch(node, (const int64_t *)indices->data, data,
                                               updates->data, y->data, lines, plan, reduction,
                                               launch));
  }
  return etrt_cuda_check(node, "scatter_elements");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_scatter_nd) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1], *updates = &inputs[2];
  etrt_tensor *y = &outputs[0];
  etrt_scatter_reduction reduction = ETRT_SCATTER_NONE;
  ETRT_RETURN_IF_ERROR(etrt_scatter_reduction_parse(node, &reduction));
  etrt_scatter_nd_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.k = (int32_t)indices->dims[indices->rank - 1];
  plan.tuples = etrt_shape_numel(indices->rank - 1, indices->dims);
  plan.slice = etrt_shape_numel(data->rank - plan.k, data->dims + plan.k);
  for (int32_t a = 0; a < data->rank; ++a) plan.dims[a] = data->dims[a];
  etrt_shape_strides(data->rank, data->dims, plan.strides);
  cudaStream_t stream = etrt_cuda_stream(launch);
  size_t bytes = (size_t)etrt_tensor_numel(data) * etrt_dtype_size(data->dtype);
  if (bytes > 0 && y->data != data->data) {
    cudaMemcpyAsync(y->data, data->data, bytes, cudaMemcpyDeviceToDevice, stream);
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "copy"));
  }
  if (plan.tuples == 0 || plan.slice == 0) return ETRT_OK;
  if (indices->dtype == ETRT_DTYPE_INT32) {
    ETRT_RETURN_IF_ERROR(etrt_scatter_dispatch(node, (const int32_t *)indices->data, data,
                                               updates->data, y->data, plan.slice, plan, reduction,
                                               launch));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_scatter_dispatch(node, (const int64_t *)indices->data, data,
                                               updates->data, y->data, plan.slice, plan, reduction,
                                               launch));
  }
  return etrt_cuda_check(node, "scatter_nd");
}

/* ---- GatherND ------------------------------------------------------------------------- */

typedef struct etrt_gather_nd_plan {
  int32_t batch_dims, m;
  int64_t per_batch; /* index tuples per batch */
  int64_t slice;     /* elements copied per tuple */
  int64_t batch_stride;
  int64_t dims[ETRT_MAX_RANK];    /* data */
  int64_t strides[ETRT_MAX_RANK]; /* data */
} etrt_gather_nd_plan;

template <typename T, typename I>
__global__ void etrt_gather_nd_kernel(const T *data, const I *indices, T *out, int64_t n,
                                      etrt_gather_nd_plan plan, uint32_t *fault, uint32_t node) {
  ETRT_CUDA_LOOP(t, n) {
    int64_t s = t % plan.slice, tuple = t / plan.slice;
    int64_t off = (tuple / plan.per_batch) * plan.batch_stride + s;
    bool inside = true;
    for (int32_t k = 0; k < plan.m; ++k) {
      int32_t axis = plan.batch_dims + k;
      int64_t at = etrt_gather_at(indices, tuple * plan.m + k, plan.dims[axis]);
      if (at < 0) inside = false;
      off += at * plan.strides[axis];
    }
    if (!inside) etrt_cuda_fault(fault, node);
    out[t] = inside ? data[off] : T(0);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_gather_nd) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  int64_t b = etrt_node_attribute_int(node, "batch_dims", 0);
  int64_t m = indices->rank > 0 ? indices->dims[indices->rank - 1] : 0;
  if (indices->rank < 1 || b < 0 || b >= indices->rank || m < 1 || b + m > data->rank) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "GatherND node '%s': batch_dims %lld and tuples of %lld for data of rank %d",
                      etrt_cuda_name(node), (long long)b, (long long)m, (int)data->rank);
  }
  etrt_gather_nd_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.batch_dims = (int32_t)b;
  plan.m = (int32_t)m;
  for (int32_t a = 0; a < data->rank; ++a) plan.dims[a] = data->dims[a];
  etrt_shape_strides(data->rank, data->dims, plan.strides);
  plan.per_batch = etrt_cuda_span(indices, (int32_t)b, indices->rank - 1);
  plan.slice = etrt_cuda_span(data, (int32_t)(b + m), data->rank);
  plan.batch_stride = b > 0 ? plan.strides[b - 1] : 0;
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0 || plan.per_batch == 0 || plan.slice == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  size_t elem = etrt_dtype_size(data->dtype);
  if (indices->dtype == ETRT_DTYPE_INT32) {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, data->dtype),
                           etrt_gather_nd_kernel<T, int32_t>
                           <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int32_t *)indices->data,
                               (T *)outputs[0].data, n, plan, launch->fault, launch->node));
  } else {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, data->dtype),
                           etrt_gather_nd_kernel<T, int64_t>
                           <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int64_t *)indices->data,
                               (T *)outputs[0].data, n, plan, launch->fault, launch->node));
  }
  return etrt_cuda_check(node, "gather_nd");
}

/* ---- OneHot --------------------------------------------------------------------------- */

/* Index i of OneHot's indices as an integer (floats truncated toward zero, as the
 * reference's cast to int64); false for a non-finite or huge float. */
template <typename I>
__device__ __forceinline__ bool etrt_one_hot_index(I v, int64_t *out) {
  *out = (int64_t)v;
  return true;
}
template <>
__device__ __forceinline__ bool etrt_one_hot_index<float>(float v, int64_t *out) {
  double d = v;
  if (!(fabs(d) < 9.0e15)) return false;
  *out = (int64_t)d;
  return true;
}
template <>
__device__ __forceinline__ bool etrt_one_hot_index<double>(double v, int64_t *out) {
  if (!(fabs(v) < 9.0e15)) return false;
  *out = (int64_t)v;
  return true;
}

/* values = [off, on] on the device. */
template <typename T, typename I>
__global__ void etrt_one_hot_kernel(const I *indices, const T *values, T *out, int64_t n,
                                    int64_t depth, int64_t inner) {
  ETRT_CUDA_LOOP(t, n) {
    int64_t j = t % inner, d = (t / inner) % depth, o = t / (inner * depth);
    int64_t v = 0;
    bool hit = etrt_one_hot_index<I>(indices[o * inner + j], &v);
    if (hit && v < 0) v += depth;
    out[t] = hit && v == d ? values[1] : values[0];
  }
}

template <typename T>
static void etrt_one_hot_launch(const etrt_tensor *indices, const void *values, void *out,
                                int64_t n, int64_t depth, int64_t inner, cudaStream_t stream) {
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  switch (indices->dtype) {
    case ETRT_DTYPE_INT32:
      etrt_one_hot_kernel<T, int32_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
          (const int32_t *)indices->data, (const T *)values, (T *)out, n, depth, inner);
      break;
    case ETRT_DTYPE_FLOAT32:
      etrt_one_hot_kernel<T, float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
          (const float *)indices->data, (const T *)values, (T *)out, n, depth, inner);
      break;
    case ETRT_DTYPE_FLOAT64:
      etrt_one_hot_kernel<T, double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
          (const double *)indices->data, (const T *)values, (T *)out, n, depth, inner);
      break;
    default:
      etrt_one_hot_kernel<T, int64_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
          (const int64_t *)indices->data, (const T *)values, (T *)out, n, depth, inner);
      break;
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_one_hot) {
  const etrt_tensor *indices = &inputs[0];
  etrt_tensor *y = &outputs[0];
  int32_t axis = 0;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, -1, y->rank, &axis));
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  int64_t depth = y->dims[axis], inner = etrt_cuda_span(y, axis + 1, y->rank);
  ETRT_CUDA_BYTES_SWITCH(etrt_dtype_size(y->dtype), T, return etrt_cuda_no_kernel(node, y->dtype),
                         etrt_one_hot_launch<T>(indices, inputs[2].data, y->data, n, depth, inner,
                                                etrt_cuda_stream(launch)));
  return etrt_cuda_check(node, "one_hot");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_gather[] = {
    {"GatherElements", etrt_cuda_gather_elements, NULL},
    {"GatherND", etrt_cuda_gather_nd, NULL},
    {"ScatterElements", etrt_cuda_scatter_elements, NULL},
    {"Scatter", etrt_cuda_scatter_elements, NULL},
    {"ScatterND", etrt_cuda_scatter_nd, NULL},
    {"OneHot", etrt_cuda_one_hot, NULL},
    {NULL, NULL, NULL},
};
