/* Data movement on the GPU: Reshape and its kin (copies), Transpose, Slice,
 * DepthToSpace/SpaceToDepth (strided views from the shared layout_shape.h), Expand,
 * Tile, Concat, Split (2-D copies), Gather, Cast/CastLike, Shape, Size,
 * ConstantOfShape, Range, Pad (per-axis source tables from the shared
 * etrt_pad_source), Trilu and ReverseSequence. Elements move by size, so every dtype
 * works. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/layout.h"
#include "engine/ops/layout_shape.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape.h"
}

/* Same bytes, new shape: a copy unless the executor gave the output the input's
 * buffer. */
extern "C" ETRT_CUDA_RUN(etrt_cuda_copy) {
  size_t bytes = (size_t)etrt_tensor_numel(&outputs[0]) * etrt_dtype_size(outputs[0].dtype);
  if (bytes == 0 || outputs[0].data == inputs[0].data) return ETRT_OK;
  cudaMemcpyAsync(outputs[0].data, inputs[0].data, bytes, cudaMemcpyDeviceToDevice,
                  etrt_cuda_stream(launch));
  return etrt_cuda_check(node, "copy");
}

/* ---- strided views --------------------------------------------------------------- */

/* Copies the view of `in` into the contiguous `out`. Adjacent axes that stay
 * contiguous in the view are merged, so a Transpose that keeps the last axis moves
 * whole rows with wide accesses. */
static etrt_status etrt_view_copy(const etrt_node *node, const etrt_layout_view *view,
                                  const etrt_tensor *in, etrt_tensor *out, cudaStream_t stream) {
  int64_t n = etrt_tensor_numel(out);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  etrt_broadcast_iter_compact(&it, view->rank, view->dims, 1, &view->strides);
  size_t elem = etrt_dtype_size(in->dtype);
  const char *base = (const char *)in->data + (size_t)view->offset * elem;
  return etrt_cuda_plan_copy(node, it, base, out->data, elem, stream);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_transpose) {
  int32_t perm[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_transpose_perm(node, inputs[0].rank, perm));
  etrt_layout_view view;
  etrt_transpose_view(&inputs[0], perm, &view);
  return etrt_view_copy(node, &view, &inputs[0], &outputs[0], etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_slice) {
  etrt_layout_view view;
  ETRT_RETURN_IF_ERROR(etrt_slice_view(node, inputs, &view));
  return etrt_view_copy(node, &view, &inputs[0], &outputs[0], etrt_cuda_stream(launch));
}

static etrt_status etrt_depth_space(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                    int depth_to_space) {
  etrt_layout_view view;
  int64_t dims[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_depth_space_view(node, &inputs[0], depth_to_space, &view, dims));
  return etrt_view_copy(node, &view, &inputs[0], &outputs[0], etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_depth_to_space) {
  return etrt_depth_space(node, inputs, outputs, launch, 1);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_space_to_depth) {
  return etrt_depth_space(node, inputs, outputs, launch, 0);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_expand) {
  return etrt_cuda_broadcast_copy(node, &inputs[0], &outputs[0], etrt_cuda_stream(launch));
}

/* Tile: output coordinate c reads input coordinate c mod size, axis by axis. */
template <typename T>
__global__ void etrt_tile_kernel(const T *in, T *out, int64_t n, int32_t rank,
                                 etrt_broadcast_iter shapes) {
  /* shapes.dims: the output's; shapes.strides[0]: the input's strides and
   * shapes.strides[1]: the input's sizes */
  ETRT_CUDA_LOOP(i, n) {
    int64_t rest = i, off = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
      int64_t c = rest % shapes.dims[d];
      rest /= shapes.dims[d];
      off += (c % shapes.strides[1][d]) * shapes.strides[0][d];
    }
    out[i] = in[off];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_tile) {
  const etrt_tensor *x = &inputs[0];
  etrt_tensor *y = &outputs[0];
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter shapes;
  memset(&shapes, 0, sizeof shapes);
  for (int32_t d = 0; d < y->rank; ++d) {
    shapes.dims[d] = y->dims[d];
    shapes.strides[1][d] = x->dims[d];
  }
  etrt_shape_strides(x->rank, x->dims, shapes.strides[0]);
  size_t elem = etrt_dtype_size(x->dtype);
  ETRT_CUDA_BYTES_SWITCH(
      elem, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_tile_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          (const T *)x->data, (T *)y->data, n, y->rank, shapes));
  return etrt_cuda_check(node, "tile");
}

/* ---- Concat and Split: blocks of rows ------------------------------------------- */

/* Copies `rows` rows of `width` bytes between pitched buffers. */
static etrt_status etrt_rows_copy(const etrt_node *node, void *dst, size_t dst_pitch,
                                  const void *src, size_t src_pitch, size_t width, int64_t rows,
                                  cudaStream_t stream) {
  if (width == 0 || rows == 0) return ETRT_OK;
  if (rows == 1 || (dst_pitch == width && src_pitch == width)) {
    cudaMemcpyAsync(dst, src, width * (size_t)rows, cudaMemcpyDeviceToDevice, stream);
  } else {
    cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, (size_t)rows, cudaMemcpyDeviceToDevice,
                      stream);
  }
  return etrt_cuda_check(node, "copy2d");
}

/* Concat (into the whole) and Split (out of it): along `axis`, each part is a block
 * of every row of the whole, the parts side by side in order. */
static etrt_status etrt_parts_copy(const etrt_node *node, const etrt_tensor *whole,
                                   const etrt_tensor *parts, uint32_t count, bool to_whole,
                                   cudaStream_t stream) {
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, whole->rank, &axis));
  size_t elem = etrt_dtype_size(whole->dtype);
  int64_t outer = etrt_cuda_span(whole, 0, axis);
  size_t inner_bytes = (size_t)etrt_cuda_span(whole, axis + 1, whole->rank) * elem;
  size_t whole_row = (size_t)whole->dims[axis] * inner_bytes;
  size_t at = 0;
  for (uint32_t k = 0; k < count; ++k) {
    size_t block = (size_t)parts[k].dims[axis] * inner_bytes;
    char *row = (char *)whole->data + at;
    ETRT_RETURN_IF_ERROR(
        to_whole
            ? etrt_rows_copy(node, row, whole_row, parts[k].data, block, block, outer, stream)
            : etrt_rows_copy(node, parts[k].data, block, row, whole_row, block, outer, stream));
    at += block;
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_concat) {
  return etrt_parts_copy(node, &outputs[0], inputs, node->num_inputs, true,
                         etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_split) {
  return etrt_parts_copy(node, &inputs[0], outputs, node->num_outputs, false,
                         etrt_cuda_stream(launch));
}

/* ---- Gather ---------------------------------------------------------------------- */

/* out[o][i][j] = data[o][indices[i]][j]. An index outside [-size, size) is recorded
 * as the node's fault (the run fails) and its slice reads as zeros. */
template <typename T, typename I>
__global__ void etrt_gather_kernel(const T *data, const I *indices, T *out, int64_t n,
                                   int64_t count, int64_t size, int64_t inner, uint32_t *fault,
                                   uint32_t node) {
  ETRT_CUDA_LOOP(t, n) {
    int64_t j = t % inner;
    int64_t i = (t / inner) % count;
    int64_t o = t / (inner * count);
    int64_t at = (int64_t)indices[i];
    if (at < 0) at += size;
    bool bad = at < 0 || at >= size;
    if (bad) etrt_cuda_fault(fault, node);
    out[t] = bad ? T(0) : data[(o * size + at) * inner + j];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_gather) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  etrt_tensor *y = &outputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &axis));
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  int64_t size = data->dims[axis], inner = etrt_cuda_span(data, axis + 1, data->rank);
  int64_t count = etrt_tensor_numel(indices);
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  size_t elem = etrt_dtype_size(data->dtype);
  if (indices->dtype == ETRT_DTYPE_INT32) {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, data->dtype),
                           etrt_gather_kernel<T, int32_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int32_t *)indices->data, (T *)y->data,
                               n, count, size, inner, launch->fault, launch->node));
  } else {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, data->dtype),
                           etrt_gather_kernel<T, int64_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int64_t *)indices->data, (T *)y->data,
                               n, count, size, inner, launch->fault, launch->node));
  }
  return etrt_cuda_check(node, "gather");
}

/* ---- Cast ------------------------------------------------------------------------ */

__global__ void etrt_cast_kernel(const void *in, void *out, int64_t n, int from, int to,
                                 int unsigned_source) {
  ETRT_CUDA_LOOP(i, n) {
    etrt_cast_value v = etrt_cast_load(in, i, from);
    etrt_cast_store(out, i, to, v, unsigned_source);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_cast) {
  const etrt_tensor *x = &inputs[0];
  etrt_tensor *y = &outputs[0];
  int64_t n = etrt_tensor_numel(x);
  if (n == 0) return ETRT_OK;
  if (x->dtype == y->dtype) return etrt_cuda_copy(node, inputs, outputs, launch);
  int unsigned_source = x->dtype == ETRT_DTYPE_UINT8 || x->dtype == ETRT_DTYPE_UINT16 ||
                        x->dtype == ETRT_DTYPE_UINT32 || x->dtype == ETRT_DTYPE_UINT64 ||
                        x->dtype == ETRT_DTYPE_BOOL;
  etrt_cast_kernel<<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                     etrt_cuda_stream(launch)>>>(x->data, y->data, n, (int)x->dtype, (int)y->dtype,
                                                 unsigned_source);
  return etrt_cuda_check(node, "cast");
}

/* ---- Shape and Size: values known on the host, written by a kernel ------------- */

typedef struct etrt_small_values {
  int64_t v[ETRT_MAX_RANK];
} etrt_small_values;

__global__ void etrt_write_values_kernel(int64_t *out, int32_t count, etrt_small_values values) {
  int32_t i = (int32_t)threadIdx.x;
  if (i < count) out[i] = values.v[i];
}

static etrt_status etrt_write_values(const etrt_node *node, int64_t *out, int32_t count,
                                     const etrt_small_values *values, cudaStream_t stream) {
  if (count <= 0) return ETRT_OK;
  etrt_write_values_kernel<<<1, 32, 0, stream>>>(out, count, *values);
  return etrt_cuda_check(node, "write_values");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_shape) {
  int32_t start, end;
  etrt_shape_op_range(node, inputs[0].rank, &start, &end);
  etrt_small_values values;
  int32_t count = 0;
  for (int32_t a = start; a < end && count < ETRT_MAX_RANK; ++a)
    values.v[count++] = inputs[0].dims[a];
  return etrt_write_values(node, (int64_t *)outputs[0].data, count, &values,
                           etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_size) {
  etrt_small_values values;
  values.v[0] = etrt_tensor_numel(&inputs[0]);
  return etrt_write_values(node, (int64_t *)outputs[0].data, 1, &values, etrt_cuda_stream(launch));
}

/* ---- ConstantOfShape and Range: values from the host, written by a kernel ------- */

template <typename T>
__global__ void etrt_fill_kernel(T *y, int64_t n, T value) {
  ETRT_CUDA_LOOP(i, n) y[i] = value;
}

/* Fills `out` with the element whose bytes are `value` (the element size of out's
 * dtype). */
static etrt_status etrt_fill(const etrt_node *node, etrt_tensor *out, const void *value,
                             cudaStream_t stream) {
  int64_t n = etrt_tensor_numel(out);
  if (n == 0) return ETRT_OK;
  size_t elem = etrt_dtype_size(out->dtype);
  ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, out->dtype), {
    T v;
    memcpy(&v, value, sizeof v);
    etrt_fill_kernel<T><<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
        (T *)out->data, n, v);
  });
  return etrt_cuda_check(node, "fill");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_constant_of_shape) {
  const etrt_attribute *value = etrt_node_attribute(node, "value");
  uint8_t bytes[8] = {0};
  size_t elem = etrt_dtype_size(outputs[0].dtype);
  if (value != NULL && value->kind == ETRT_ATTRIBUTE_TENSOR && value->tensor.data != NULL &&
      elem <= sizeof bytes)
    memcpy(bytes, value->tensor.data, elem);
  return etrt_fill(node, &outputs[0], bytes, etrt_cuda_stream(launch));
}

template <typename T>
__global__ void etrt_eye_like_kernel(T *y, int64_t n, int64_t cols, int64_t k, T one) {
  ETRT_CUDA_LOOP(i, n) y[i] = i % cols - i / cols == k ? one : (T)0;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_eye_like) {
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  uint8_t one[8];
  etrt_eye_like_one(outputs[0].dtype, one);
  ETRT_CUDA_BYTES_SWITCH(
      etrt_dtype_size(outputs[0].dtype), T, return etrt_cuda_no_kernel(node, outputs[0].dtype), {
        T v;
        memcpy(&v, one, sizeof v);
        etrt_eye_like_kernel<T><<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                                  etrt_cuda_stream(launch)>>>(
            (T *)outputs[0].data, n, outputs[0].dims[1], etrt_eye_like_k(node), v);
      });
  return etrt_cuda_check(node, "eye_like");
}

/* start + i * delta, rounded as the CPU kernel rounds (no fused multiply-add);
 * integers wrap. */
template <typename T>
__device__ __forceinline__ T etrt_range_value(T start, int64_t i, T delta) {
  return (T)((uint64_t)start + (uint64_t)i * (uint64_t)delta);
}
template <>
__device__ __forceinline__ float etrt_range_value<float>(float start, int64_t i, float delta) {
  return __fadd_rn(start, __fmul_rn((float)i, delta));
}
template <>
__device__ __forceinline__ double etrt_range_value<double>(double start, int64_t i, double delta) {
  return __dadd_rn(start, __dmul_rn((double)i, delta));
}

template <typename T>
__global__ void etrt_range_kernel(T *y, int64_t n, T start, T delta) {
  ETRT_CUDA_LOOP(i, n) y[i] = etrt_range_value<T>(start, i, delta);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_range) {
  etrt_tensor *y = &outputs[0];
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  const void *start = inputs[0].host_value, *delta = inputs[2].host_value;
  if (start == NULL || delta == NULL) {
    return etrt_error(ETRT_ERROR_INTERNAL, "Range node '%s': start and delta are not on the host",
                      etrt_cuda_name(node));
  }
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  switch (y->dtype) {
#define ETRT_RANGE_CASE(DT, T)                                                             \
  case DT: {                                                                               \
    T s, d;                                                                                \
    memcpy(&s, start, sizeof s);                                                           \
    memcpy(&d, delta, sizeof d);                                                           \
    etrt_range_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>((T *)y->data, n, s, d); \
  } break;
    ETRT_RANGE_CASE(ETRT_DTYPE_FLOAT32, float)
    ETRT_RANGE_CASE(ETRT_DTYPE_FLOAT64, double)
    ETRT_RANGE_CASE(ETRT_DTYPE_INT32, int32_t)
    ETRT_RANGE_CASE(ETRT_DTYPE_INT64, int64_t)
#undef ETRT_RANGE_CASE
    default:
      return etrt_cuda_no_kernel(node, y->dtype);
  }
  return etrt_cuda_check(node, "range");
}

/* ---- Pad ---------------------------------------------------------------------------- */

/* Per axis, the input coordinate each output coordinate reads (-1: the constant),
 * computed on the host by the shared etrt_pad_source and uploaded into the
 * workspace: axis a's entries start at first[a]. */
typedef struct etrt_pad_plan {
  int32_t rank;
  int64_t out[ETRT_MAX_RANK];
  int64_t first[ETRT_MAX_RANK];
  int64_t stride[ETRT_MAX_RANK]; /* the input's */
} etrt_pad_plan;

/* `constant_at`: the constant_value input on the device, or NULL for `constant`. */
template <typename T>
__global__ void etrt_pad_kernel(const T *x, T *y, int64_t n, const int64_t *table,
                                etrt_pad_plan plan, const T *constant_at, T constant) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t rest = i, off = 0;
    bool outside = false;
    for (int32_t a = plan.rank - 1; a >= 0; --a) {
      int64_t src = table[plan.first[a] + rest % plan.out[a]];
      rest /= plan.out[a];
      if (src < 0)
        outside = true;
      else
        off += src * plan.stride[a];
    }
    y[i] = outside ? (constant_at != NULL ? *constant_at : constant) : x[off];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_pad) {
  const etrt_tensor *x = &inputs[0];
  etrt_tensor *y = &outputs[0];
  etrt_tensor host[4];
  uint32_t count = node->num_inputs < 4 ? node->num_inputs : 4;
  etrt_cuda_host_inputs(inputs, count, host);
  etrt_pad_mode mode = ETRT_PAD_CONSTANT;
  ETRT_RETURN_IF_ERROR(etrt_pad_mode_parse(node, &mode));
  int64_t begin[ETRT_MAX_RANK] = {0}, end[ETRT_MAX_RANK] = {0};
  ETRT_RETURN_IF_ERROR(etrt_pad_amounts(node, host, begin, end));
  /* constant_value (input 2) stays on the device; the attribute or zero otherwise */
  uint8_t constant[8] = {0};
  int device_constant = node->num_inputs > 2 && inputs[2].rank >= 0;
  if (!device_constant) ETRT_RETURN_IF_ERROR(etrt_pad_constant(node, host, x->dtype, constant));
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  etrt_pad_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.rank = y->rank;
  etrt_shape_strides(x->rank, x->dims, plan.stride);
  cudaStream_t stream = etrt_cuda_stream(launch);
  etrt_cuda_uploader up;
  etrt_cuda_uploader_init(&up, node, launch->workspace, stream);
  int64_t at = 0;
  for (int32_t a = 0; a < y->rank; ++a) {
    plan.out[a] = y->dims[a];
    plan.first[a] = at;
    for (int64_t c = 0; c < y->dims[a]; ++c) {
      int64_t src = etrt_pad_source(mode, c - begin[a], x->dims[a]);
      etrt_cuda_uploader_put(&up, &src, sizeof src);
    }
    at += y->dims[a];
  }
  ETRT_RETURN_IF_ERROR(etrt_cuda_uploader_finish(&up));
  size_t elem = etrt_dtype_size(x->dtype);
  ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_cuda_no_kernel(node, x->dtype), {
    T value;
    memcpy(&value, constant, sizeof value);
    etrt_pad_kernel<T><<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
        (const T *)x->data, (T *)y->data, n, (const int64_t *)launch->workspace, plan,
        device_constant ? (const T *)inputs[2].data : (const T *)NULL, value);
  });
  return etrt_cuda_check(node, "pad");
}

/* One entry per output coordinate of every axis. */
extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_pad_workspace) {
  size_t entries = 0;
  for (int32_t a = 0; a < outputs[0].rank; ++a) entries += (size_t)outputs[0].dims[a];
  return entries * sizeof(int64_t);
}

/* ---- Trilu -------------------------------------------------------------------------- */

template <typename T>
__global__ void etrt_trilu_kernel(const T *x, T *y, int64_t n, int64_t rows, int64_t cols,
                                  int64_t k, int upper) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t j = i % cols, r = (i / cols) % rows;
    bool keep = upper ? j - r >= k : j - r <= k;
    y[i] = keep ? x[i] : T(0);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_trilu) {
  const etrt_tensor *x = &inputs[0];
  etrt_tensor host[2];
  etrt_cuda_host_inputs(inputs, node->num_inputs < 2 ? node->num_inputs : 2, host);
  int64_t k = 0, count = 0;
  if (node->num_inputs > 1 && inputs[1].rank >= 0)
    ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, host, 1, "k", &k, 1, &count));
  int upper = etrt_node_attribute_int(node, "upper", 1) != 0;
  int64_t n = etrt_tensor_numel(x);
  if (n == 0) return ETRT_OK;
  if (x->rank < 2) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "Trilu node '%s': the input has rank %d",
                      etrt_cuda_name(node), (int)x->rank);
  }
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  size_t elem = etrt_dtype_size(x->dtype);
  ETRT_CUDA_BYTES_SWITCH(
      elem, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_trilu_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          (const T *)x->data, (T *)outputs[0].data, n, rows, cols, k, upper));
  return etrt_cuda_check(node, "trilu");
}

/* ---- ReverseSequence ---------------------------------------------------------------- */

/* Output element (i, j, k) of [d0, d1, inner]; a length outside [0, steps] (the CPU
 * kernel refuses it) is recorded as the node's fault and clamped, so it never reads
 * or writes outside the tensors. */
template <typename T>
__global__ void etrt_reverse_sequence_kernel(const T *x, const int64_t *lens, T *y, int64_t n,
                                             int64_t d1, int64_t inner, int64_t steps,
                                             int time_axis, uint32_t *fault, uint32_t node) {
  ETRT_CUDA_LOOP(e, n) {
    int64_t k = e % inner, ij = e / inner;
    int64_t i = ij / d1, j = ij % d1;
    int64_t t = time_axis ? j : i, b = time_axis ? i : j;
    int64_t len = lens[b];
    if (len < 0 || len > steps) etrt_cuda_fault(fault, node);
    len = len < 0 ? 0 : len > steps ? steps : len;
    int64_t from = t < len ? len - 1 - t : t;
    int64_t si = time_axis ? i : from, sj = time_axis ? from : j;
    y[e] = x[(si * d1 + sj) * inner + k];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_reverse_sequence) {
  const etrt_tensor *x = &inputs[0];
  int64_t n = etrt_tensor_numel(x);
  if (n == 0) return ETRT_OK;
  int time_axis = etrt_node_attribute_int(node, "time_axis", 0) == 1;
  int64_t d1 = x->dims[1], steps = x->dims[time_axis];
  int64_t inner = etrt_shape_numel(x->rank - 2, x->dims + 2);
  ETRT_CUDA_BYTES_SWITCH(
      etrt_dtype_size(x->dtype), T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_reverse_sequence_kernel<T>
      <<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
          (const T *)x->data, (const int64_t *)inputs[1].data, (T *)outputs[0].data, n, d1, inner,
          steps, time_axis, launch->fault, launch->node));
  return etrt_cuda_check(node, "reverse_sequence");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_layout[] = {
    {"Reshape", etrt_cuda_copy, NULL},
    {"Flatten", etrt_cuda_copy, NULL},
    {"Squeeze", etrt_cuda_copy, NULL},
    {"Unsqueeze", etrt_cuda_copy, NULL},
    {"Transpose", etrt_cuda_transpose, NULL},
    {"Slice", etrt_cuda_slice, NULL},
    {"DepthToSpace", etrt_cuda_depth_to_space, NULL},
    {"SpaceToDepth", etrt_cuda_space_to_depth, NULL},
    {"Expand", etrt_cuda_expand, NULL},
    {"Tile", etrt_cuda_tile, NULL},
    {"Concat", etrt_cuda_concat, NULL},
    {"Split", etrt_cuda_split, NULL},
    {"Gather", etrt_cuda_gather, NULL},
    {"Cast", etrt_cuda_cast, NULL},
    {"CastLike", etrt_cuda_cast, NULL},
    {"Shape", etrt_cuda_shape, NULL},
    {"Size", etrt_cuda_size, NULL},
    {"ConstantOfShape", etrt_cuda_constant_of_shape, NULL},
    {"Range", etrt_cuda_range, NULL},
    {"EyeLike", etrt_cuda_eye_like, NULL},
    {"Pad", etrt_cuda_pad, etrt_cuda_pad_workspace},
    {"Trilu", etrt_cuda_trilu, NULL},
    {"ReverseSequence", etrt_cuda_reverse_sequence, NULL},
    {NULL, NULL, NULL},
};
