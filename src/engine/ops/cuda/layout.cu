/* Data movement on the GPU: Reshape and its kin (copies), Transpose, Slice,
 * DepthToSpace/SpaceToDepth (strided views from the shared layout_shape.h), Expand,
 * Tile, Concat, Split (2-D copies), Gather, Cast, Shape and Size. Elements move by
 * size, so every dtype works. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/layout_shape.h"
#include "engine/ops/shape.h"
}

static etrt_status etrt_layout_no_dtype(const etrt_node *node, etrt_dtype dtype) {
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s node '%s': no CUDA kernel for %s", node->op_type,
                    etrt_cuda_name(node), etrt_dtype_name(dtype));
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

template <typename T>
__global__ void etrt_view_kernel(const T *in, T *out, int64_t n, etrt_broadcast_iter it) {
  ETRT_CUDA_LOOP(i, n) {
    int64_t off[1];
    etrt_cuda_offsets<1>(it, i, off);
    out[i] = in[off[0]];
  }
}

/* Copies the view of `in` into the contiguous `out`. */
static etrt_status etrt_view_copy(const etrt_node *node, const etrt_layout_view *view,
                                  const etrt_tensor *in, etrt_tensor *out, cudaStream_t stream) {
  int64_t n = etrt_tensor_numel(out);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  memset(&it, 0, sizeof it);
  it.count = 1;
  it.numel = n;
  it.rank = 0;
  for (int32_t d = 0; d < view->rank; ++d) {
    if (view->dims[d] == 1) continue;
    it.dims[it.rank] = view->dims[d];
    it.strides[0][it.rank] = view->strides[d];
    ++it.rank;
  }
  if (it.rank == 0) {
    it.rank = 1;
    it.dims[0] = 1;
    it.strides[0][0] = 0;
  }
  size_t elem = etrt_dtype_size(in->dtype);
  const char *base = (const char *)in->data + (size_t)view->offset * elem;
  ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_layout_no_dtype(node, in->dtype),
                         etrt_view_kernel<T><<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS),
                                               ETRT_CUDA_THREADS, 0, stream>>>(
                             (const T *)base, (T *)out->data, n, it));
  return etrt_cuda_check(node, "view");
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
  ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_layout_no_dtype(node, x->dtype),
                         etrt_tile_kernel<T><<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS),
                                               ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
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
    cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, (size_t)rows,
                      cudaMemcpyDeviceToDevice, stream);
  }
  return etrt_cuda_check(node, "copy2d");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_concat) {
  const etrt_tensor *y = &outputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(
      etrt_shape_axis(node, "axis", etrt_node_attribute_int(node, "axis", 0), y->rank, &axis));
  size_t elem = etrt_dtype_size(y->dtype);
  int64_t outer = etrt_cuda_span(y, 0, axis);
  size_t inner_bytes = (size_t)etrt_cuda_span(y, axis + 1, y->rank) * elem;
  size_t out_row = (size_t)y->dims[axis] * inner_bytes;
  size_t at = 0;
  cudaStream_t stream = etrt_cuda_stream(launch);
  for (uint32_t k = 0; k < node->num_inputs; ++k) {
    size_t block = (size_t)inputs[k].dims[axis] * inner_bytes;
    ETRT_RETURN_IF_ERROR(etrt_rows_copy(node, (char *)y->data + at, out_row, inputs[k].data,
                                        block, block, outer, stream));
    at += block;
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_split) {
  const etrt_tensor *x = &inputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(
      etrt_shape_axis(node, "axis", etrt_node_attribute_int(node, "axis", 0), x->rank, &axis));
  size_t elem = etrt_dtype_size(x->dtype);
  int64_t outer = etrt_cuda_span(x, 0, axis);
  size_t inner_bytes = (size_t)etrt_cuda_span(x, axis + 1, x->rank) * elem;
  size_t in_row = (size_t)x->dims[axis] * inner_bytes;
  size_t at = 0;
  cudaStream_t stream = etrt_cuda_stream(launch);
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    size_t block = (size_t)outputs[k].dims[axis] * inner_bytes;
    ETRT_RETURN_IF_ERROR(etrt_rows_copy(node, outputs[k].data, block, (const char *)x->data + at,
                                        in_row, block, outer, stream));
    at += block;
  }
  return ETRT_OK;
}

/* ---- Gather ---------------------------------------------------------------------- */

/* out[o][i][j] = data[o][indices[i]][j]. An index outside [-size, size) cannot be
 * reported from the device: its slice reads as zeros. */
template <typename T, typename I>
__global__ void etrt_gather_kernel(const T *data, const I *indices, T *out, int64_t n,
                                   int64_t count, int64_t size, int64_t inner) {
  ETRT_CUDA_LOOP(t, n) {
    int64_t j = t % inner;
    int64_t i = (t / inner) % count;
    int64_t o = t / (inner * count);
    int64_t at = (int64_t)indices[i];
    if (at < 0) at += size;
    out[t] = (at < 0 || at >= size) ? T(0) : data[(o * size + at) * inner + j];
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_gather) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  etrt_tensor *y = &outputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis(node, "axis", etrt_node_attribute_int(node, "axis", 0),
                                       data->rank, &axis));
  int64_t n = etrt_tensor_numel(y);
  if (n == 0) return ETRT_OK;
  int64_t size = data->dims[axis], inner = etrt_cuda_span(data, axis + 1, data->rank);
  int64_t count = etrt_tensor_numel(indices);
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  size_t elem = etrt_dtype_size(data->dtype);
  if (indices->dtype == ETRT_DTYPE_INT32) {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_layout_no_dtype(node, data->dtype),
                           etrt_gather_kernel<T, int32_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int32_t *)indices->data,
                               (T *)y->data, n, count, size, inner));
  } else {
    ETRT_CUDA_BYTES_SWITCH(elem, T, return etrt_layout_no_dtype(node, data->dtype),
                           etrt_gather_kernel<T, int64_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)data->data, (const int64_t *)indices->data,
                               (T *)y->data, n, count, size, inner));
  }
  return etrt_cuda_check(node, "gather");
}

extern "C" ETRT_CUDA_SUPPORTS(etrt_cuda_gather_supports) {
  return inputs[1].dtype == ETRT_DTYPE_INT32 || inputs[1].dtype == ETRT_DTYPE_INT64;
}

/* ---- Cast ------------------------------------------------------------------------ */

/* A value on its way between types: floats as double, integers as their 64-bit
 * two's complement bits (so integer to integer conversions wrap as C's do). */
typedef struct etrt_cast_value {
  int is_float;
  double f;
  uint64_t bits;
} etrt_cast_value;

__device__ __forceinline__ etrt_cast_value etrt_cast_load(const void *p, int64_t i, int dtype) {
  etrt_cast_value v = {0, 0.0, 0};
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32: v.is_float = 1; v.f = ((const float *)p)[i]; break;
    case ETRT_DTYPE_FLOAT64: v.is_float = 1; v.f = ((const double *)p)[i]; break;
    case ETRT_DTYPE_FLOAT16: v.is_float = 1; v.f = __half2float(((const __half *)p)[i]); break;
    case ETRT_DTYPE_BFLOAT16:
      v.is_float = 1;
      v.f = __bfloat162float(((const __nv_bfloat16 *)p)[i]);
      break;
    case ETRT_DTYPE_INT8: v.bits = (uint64_t)(int64_t)((const int8_t *)p)[i]; break;
    case ETRT_DTYPE_INT16: v.bits = (uint64_t)(int64_t)((const int16_t *)p)[i]; break;
    case ETRT_DTYPE_INT32: v.bits = (uint64_t)(int64_t)((const int32_t *)p)[i]; break;
    case ETRT_DTYPE_INT64: v.bits = (uint64_t)((const int64_t *)p)[i]; break;
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_BOOL: v.bits = ((const uint8_t *)p)[i]; break;
    case ETRT_DTYPE_UINT16: v.bits = ((const uint16_t *)p)[i]; break;
    case ETRT_DTYPE_UINT32: v.bits = ((const uint32_t *)p)[i]; break;
    case ETRT_DTYPE_UINT64: v.bits = ((const uint64_t *)p)[i]; break;
    default: break;
  }
  return v;
}

/* A float truncated toward zero and saturated to [lo, hi]; NaN gives 0. */
__device__ __forceinline__ double etrt_cast_saturate(double f, double lo, double hi) {
  if (f != f) return 0.0;
  f = trunc(f);
  return f < lo ? lo : f > hi ? hi : f;
}

/* Integers are signed unless `unsigned_source`; a float or integer as double. */
__device__ __forceinline__ double etrt_cast_as_double(const etrt_cast_value &v, int unsigned_source) {
  if (v.is_float) return v.f;
  return unsigned_source ? (double)v.bits : (double)(int64_t)v.bits;
}

#define ETRT_CAST_INT(CT, LO, HI)                                                        \
  ((CT *)q)[i] = v.is_float ? (CT)etrt_cast_saturate(v.f, (double)(LO), (double)(HI)) : (CT)v.bits

__device__ __forceinline__ void etrt_cast_store(void *q, int64_t i, int dtype,
                                                const etrt_cast_value &v, int unsigned_source) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32: ((float *)q)[i] = (float)etrt_cast_as_double(v, unsigned_source); break;
    case ETRT_DTYPE_FLOAT64: ((double *)q)[i] = etrt_cast_as_double(v, unsigned_source); break;
    case ETRT_DTYPE_FLOAT16:
      ((__half *)q)[i] = __double2half(etrt_cast_as_double(v, unsigned_source));
      break;
    case ETRT_DTYPE_BFLOAT16:
      ((__nv_bfloat16 *)q)[i] = __double2bfloat16(etrt_cast_as_double(v, unsigned_source));
      break;
    case ETRT_DTYPE_INT8: ETRT_CAST_INT(int8_t, INT8_MIN, INT8_MAX); break;
    case ETRT_DTYPE_INT16: ETRT_CAST_INT(int16_t, INT16_MIN, INT16_MAX); break;
    case ETRT_DTYPE_INT32: ETRT_CAST_INT(int32_t, INT32_MIN, INT32_MAX); break;
    case ETRT_DTYPE_INT64:
      /* 2^63 is the first double above INT64_MAX */
      ((int64_t *)q)[i] = v.is_float ? (v.f != v.f ? 0
                                       : v.f >= 9223372036854775808.0 ? INT64_MAX
                                       : v.f < -9223372036854775808.0 ? INT64_MIN
                                       : (int64_t)v.f)
                                    : (int64_t)v.bits;
      break;
    case ETRT_DTYPE_UINT8: ETRT_CAST_INT(uint8_t, 0, UINT8_MAX); break;
    case ETRT_DTYPE_UINT16: ETRT_CAST_INT(uint16_t, 0, UINT16_MAX); break;
    case ETRT_DTYPE_UINT32: ETRT_CAST_INT(uint32_t, 0, UINT32_MAX); break;
    case ETRT_DTYPE_UINT64:
      ((uint64_t *)q)[i] = v.is_float ? (v.f != v.f || v.f <= 0.0 ? 0
                                        : v.f >= 18446744073709551616.0 ? UINT64_MAX
                                        : (uint64_t)v.f)
                                     : v.bits;
      break;
    case ETRT_DTYPE_BOOL: ((uint8_t *)q)[i] = v.is_float ? (v.f != 0.0) : (v.bits != 0); break;
    default: break;
  }
}

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
                     etrt_cuda_stream(launch)>>>(x->data, y->data, n, (int)x->dtype,
                                                 (int)y->dtype, unsigned_source);
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
  for (int32_t a = start; a < end && count < ETRT_MAX_RANK; ++a) values.v[count++] = inputs[0].dims[a];
  return etrt_write_values(node, (int64_t *)outputs[0].data, count, &values,
                           etrt_cuda_stream(launch));
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_size) {
  etrt_small_values values;
  values.v[0] = etrt_tensor_numel(&inputs[0]);
  return etrt_write_values(node, (int64_t *)outputs[0].data, 1, &values, etrt_cuda_stream(launch));
}
