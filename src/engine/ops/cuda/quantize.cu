/* The quantized operators on the GPU (ops/quantize.h): QuantizeLinear and
 * DequantizeLinear with the definitions' scale layout, DynamicQuantizeLinear (one
 * block finds the range, then a grid quantizes), and the integer products: with a
 * constant weight one int8 cuBLASLt product on the tensor cores (below), otherwise one
 * thread per output element accumulating in int32; both requantize for the QLinear ops
 * with the CPU's rounding (etrt_quant_round). Scales and zero points are read from
 * device memory, so values computed during the run (DynamicQuantizeLinear's) work. */
#include <stdlib.h>
#include <string.h>

#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"
#include "engine/ops/cuda/gemm.h"

extern "C" {
#include "engine/ops/op_check.h"
#include "engine/ops/quantize.h"
}

__device__ __forceinline__ float etrt_qd_load_float(const void *p, etrt_dtype t, int64_t i) {
  if (t == ETRT_DTYPE_FLOAT16) return __half2float(((const __half *)p)[i]);
  return ((const float *)p)[i];
}

/* An optional zero point (NULL: 0). */
struct etrt_qd_zp {
  const void *data;
  etrt_dtype dtype;
};

__device__ __forceinline__ int32_t etrt_qd_zp_at(etrt_qd_zp zp, int64_t i) {
  return zp.data != NULL ? etrt_quant_load_int(zp.data, zp.dtype, i) : 0;
}

static etrt_qd_zp etrt_qd_zp_of(const etrt_node *node, const etrt_tensor *inputs, uint32_t index) {
  etrt_qd_zp zp = {NULL, ETRT_DTYPE_INT32};
  if (index < node->num_inputs && etrt_op_has_input(node, inputs, index)) {
    zp.data = inputs[index].data;
    zp.dtype = inputs[index].dtype;
  }
  return zp;
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------------------- */

__global__ void etrt_qd_quantize_kernel(etrt_quant_layout q, const void *x, etrt_dtype xt,
                                        const void *scale, etrt_dtype st, etrt_qd_zp zp, void *y,
                                        etrt_dtype yt, int32_t lo, int32_t hi, int64_t n) {
  ETRT_CUDA_LOOP(e, n) {
    int64_t s = etrt_quant_scale_index(&q, e);
    float v = etrt_qd_load_float(x, xt, e) / etrt_qd_load_float(scale, st, s);
    etrt_quant_store_int(y, yt, e, etrt_quant_round(v, etrt_qd_zp_at(zp, s), lo, hi));
  }
}

__global__ void etrt_qd_dequantize_kernel(etrt_quant_layout q, const void *x, etrt_dtype xt,
                                          const void *scale, etrt_dtype st, etrt_qd_zp zp, void *y,
                                          etrt_dtype yt, int64_t n) {
  ETRT_CUDA_LOOP(e, n) {
    int64_t s = etrt_quant_scale_index(&q, e);
    int64_t v = (int64_t)etrt_quant_load_int(x, xt, e) - etrt_qd_zp_at(zp, s);
    float f = (float)v * etrt_qd_load_float(scale, st, s);
    if (yt == ETRT_DTYPE_FLOAT16)
      ((__half *)y)[e] = __float2half_rn(f);
    else
      ((float *)y)[e] = f;
  }
}

static etrt_status etrt_cuda_quantize_common(const etrt_node *node, const etrt_tensor *inputs,
                                             etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                             int dequantize) {
  etrt_quant_layout q;
  ETRT_RETURN_IF_ERROR(etrt_quant_layout_of(node, inputs, &q));
  int64_t n = etrt_tensor_numel(&inputs[0]);
  if (n == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(n, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  etrt_qd_zp zp = etrt_qd_zp_of(node, inputs, 2);
  if (dequantize) {
    etrt_qd_dequantize_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        q, inputs[0].data, inputs[0].dtype, inputs[1].data, inputs[1].dtype, zp, outputs[0].data,
        outputs[0].dtype, n);
    return etrt_cuda_check(node, "dequantize");
  }
  int32_t lo, hi;
  etrt_quant_range(outputs[0].dtype, &lo, &hi);
  etrt_qd_quantize_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
      q, inputs[0].data, inputs[0].dtype, inputs[1].data, inputs[1].dtype, zp, outputs[0].data,
      outputs[0].dtype, lo, hi, n);
  return etrt_cuda_check(node, "quantize");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_quantize_linear) {
  return etrt_cuda_quantize_common(node, inputs, outputs, launch, 0);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_dequantize_linear) {
  return etrt_cuda_quantize_common(node, inputs, outputs, launch, 1);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------------ */

#define ETRT_QD_RANGE_THREADS 1024

/* One block: the range of x widened to include 0, then scale and zero point as the
 * CPU kernel computes them. */
__global__ void etrt_qd_range_kernel(const float *x, int64_t n, float *scale, uint8_t *zero_point) {
  __shared__ float lo_s[ETRT_QD_RANGE_THREADS], hi_s[ETRT_QD_RANGE_THREADS];
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    lo = fminf(lo, x[i]);
    hi = fmaxf(hi, x[i]);
  }
  lo_s[threadIdx.x] = lo;
  hi_s[threadIdx.x] = hi;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      lo_s[threadIdx.x] = fminf(lo_s[threadIdx.x], lo_s[threadIdx.x + stride]);
      hi_s[threadIdx.x] = fmaxf(hi_s[threadIdx.x], hi_s[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    float l = lo_s[0], h = hi_s[0];
    float s = h == l ? 1.0f : (h - l) / 255.0f;
    float z = 0.0f - l / s;
    z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
    *scale = s;
    *zero_point = (uint8_t)rintf(z);
  }
}

__global__ void etrt_qd_dynamic_kernel(const float *x, int64_t n, const float *scale,
                                       const uint8_t *zero_point, uint8_t *y) {
  float s = *scale;
  int32_t zp = *zero_point;
  ETRT_CUDA_LOOP(i, n) { y[i] = (uint8_t)etrt_quant_round(x[i] / s, zp, 0, 255); }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_dynamic_quantize_linear) {
  int64_t n = etrt_tensor_numel(&inputs[0]);
  cudaStream_t stream = etrt_cuda_stream(launch);
  const float *x = (const float *)inputs[0].data;
  float *scale = (float *)outputs[1].data;
  uint8_t *zp = (uint8_t *)outputs[2].data;
  etrt_qd_range_kernel<<<1, ETRT_QD_RANGE_THREADS, 0, stream>>>(x, n, scale, zp);
  ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "dynamic quantize range"));
  if (n == 0) return ETRT_OK;
  etrt_qd_dynamic_kernel<<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
      x, n, scale, zp, (uint8_t *)outputs[0].data);
  return etrt_cuda_check(node, "dynamic quantize");
}

/* ---- integer products ----------------------------------------------------------------- */

/* What happens to an accumulator: stored as int32, or requantized (bias first). */
struct etrt_qd_epilogue {
  int qlinear;
  const void *a_scale, *b_scale, *y_scale;
  etrt_dtype a_scale_dtype, b_scale_dtype, y_scale_dtype;
  int64_t a_scale_count, b_scale_count;
  etrt_qd_zp y_zp;
  const int32_t *bias;
  etrt_dtype y_dtype;
  int32_t lo, hi;
};

/* Row i (A's row, W's output channel), column j (B's column; -1 for a convolution,
 * whose weight scales follow the row). */
__device__ __forceinline__ void etrt_qd_finish(const etrt_qd_epilogue &e, void *y, int64_t at,
                                               int32_t acc, int64_t i, int64_t j) {
  if (!e.qlinear) {
    ((int32_t *)y)[at] = acc;
    return;
  }
  if (e.bias != NULL) acc += e.bias[j < 0 ? i : j];
  float as = etrt_qd_load_float(e.a_scale, e.a_scale_dtype, e.a_scale_count > 1 ? i : 0);
  float bs =
      etrt_qd_load_float(e.b_scale, e.b_scale_dtype, e.b_scale_count > 1 ? (j < 0 ? i : j) : 0);
  float multiplier = as * bs / etrt_qd_load_float(e.y_scale, e.y_scale_dtype, 0);
  etrt_quant_store_int(
      y, e.y_dtype, at,
      etrt_quant_round((float)acc * multiplier, etrt_qd_zp_at(e.y_zp, 0), e.lo, e.hi));
}

static etrt_qd_epilogue etrt_qd_epilogue_of(const etrt_node *node, const etrt_tensor *inputs,
                                            const etrt_tensor *y, int64_t a_scale_count,
                                            int64_t b_scale_count) {
  etrt_qd_epilogue e;
  memset(&e, 0, sizeof e);
  e.qlinear = etrt_quant_is_qlinear(node);
  e.y_dtype = y->dtype;
  if (!e.qlinear) return e;
  e.a_scale = inputs[ETRT_QL_A_SCALE].data;
  e.b_scale = inputs[ETRT_QL_B_SCALE].data;
  e.y_scale = inputs[ETRT_QL_Y_SCALE].data;
  e.a_scale_dtype = inputs[ETRT_QL_A_SCALE].dtype;
  e.b_scale_dtype = inputs[ETRT_QL_B_SCALE].dtype;
  e.y_scale_dtype = inputs[ETRT_QL_Y_SCALE].dtype;
  e.a_scale_count = a_scale_count;
  e.b_scale_count = b_scale_count;
  e.y_zp = etrt_qd_zp_of(node, inputs, ETRT_QL_Y_ZP);
  if (node->num_inputs > ETRT_QL_BIAS && etrt_op_has_input(node, inputs, ETRT_QL_BIAS))
    e.bias = (const int32_t *)inputs[ETRT_QL_BIAS].data;
  etrt_quant_range(y->dtype, &e.lo, &e.hi);
  return e;
}

__device__ __forceinline__ int32_t etrt_qd_byte(const uint8_t *p, int is_signed, int64_t i) {
  return is_signed ? (int32_t)(int8_t)p[i] : (int32_t)p[i];
}

__global__ void etrt_qd_matmul_kernel(etrt_matmul_shape s, const uint8_t *a, int a_signed,
                                      etrt_qd_zp a_zp, int64_t a_zp_count, const uint8_t *b,
                                      int b_signed, etrt_qd_zp b_zp, int64_t b_zp_count,
                                      etrt_qd_epilogue e, void *y) {
  int64_t total = s.batch_count * s.m * s.n;
  ETRT_CUDA_LOOP(t, total) {
    int64_t j = t % s.n, i = t / s.n % s.m, batch = t / s.n / s.m;
    int64_t a_off = 0, b_off = 0, rest = batch;
    for (int32_t d = s.batch_rank - 1; d >= 0; --d) {
      int64_t c = rest % s.batch_dims[d];
      rest /= s.batch_dims[d];
      a_off += c * s.a_batch_strides[d];
      b_off += c * s.b_batch_strides[d];
    }
    int32_t za = etrt_qd_zp_at(a_zp, a_zp_count > 1 ? i : 0);
    int32_t zb = etrt_qd_zp_at(b_zp, b_zp_count > 1 ? j : 0);
    const uint8_t *ar = a + a_off + i * s.k;
    const uint8_t *bc = b + b_off + j;
    int32_t acc = 0;
    for (int64_t k = 0; k < s.k; ++k)
      acc += (etrt_qd_byte(ar, a_signed, k) - za) * (etrt_qd_byte(bc, b_signed, k * s.n) - zb);
    etrt_qd_finish(e, y, t, acc, i, j);
  }
}

/* ---- integer products on the tensor cores --------------------------------------------
 *
 * With a constant weight (the usual case: exported models quantize their weights ahead),
 * MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv (group 1) run as one int8 x
 * int8 -> int32 cuBLASLt product. Its integer kernels take int8 operands only, both with
 * K contiguous, and K, the weight's column count and the leading dimensions multiples of
 * 4. So a uint8 operand moves to int8 by subtracting 128 from its values and its zero
 * point alike, which leaves every difference (a - za) as it was, and K and the columns
 * are padded with zeros:
 * - setup packs the weight once per context into device memory, [cols4][k4] (B's
 *   columns, W's output channels, as rows), with the sum of each row;
 * - a launch gathers the rows of A (the im2col rows of a convolution: one per output
 *   position, padding taps at x's zero point) into the workspace where they need moving,
 *   with their sums; cuBLASLt multiplies a chunk of rows; one pass applies the zero
 *   points, sum((a - za)(b - zb)) = sum(ab) - zb sum(a) - za sum(b) + k za zb, then the
 *   epilogue of the naive kernels above, so results are the same integers.
 * ETRT_CUDA_INT8_GEMM=0 keeps the one-thread-per-output kernels, to compare the two. */

/* What setup made for a product with a constant weight. */
struct etrt_qd_packed {
  int8_t *weight;   /* device [cols4][k4] */
  int32_t *row_sum; /* device [cols4]: the sum of each packed weight row */
  int64_t k, k4, cols, cols4;
  int32_t weight_shift; /* 128 where the weight is uint8 */
};

/* cuBLASLt's own scratch, and how much of the workspace a chunk of rows may take. */
#define ETRT_QD_GEMM_SCRATCH ((size_t)4 << 20)
#define ETRT_QD_CHUNK_BYTES ((size_t)32 << 20)
#define ETRT_QD_ALIGN ((size_t)256)

static int64_t etrt_qd_round4(int64_t v) { return (v + 3) / 4 * 4; }
static size_t etrt_qd_aligned(size_t v) { return (v + ETRT_QD_ALIGN - 1) & ~(ETRT_QD_ALIGN - 1); }

/* Workspace bytes per row of a chunk: its gathered row (when it needs one), its sum and
 * its int32 products. Three parts, each aligned. */
static size_t etrt_qd_row_bytes(int64_t k4, int64_t cols4, int gather) {
  return (gather ? (size_t)k4 : 0) + sizeof(int32_t) + sizeof(int32_t) * (size_t)cols4;
}

/* Rows per chunk that `bytes` of workspace hold (0: not one). */
static int64_t etrt_qd_chunk_rows(int64_t rows, int64_t k4, int64_t cols4, int gather,
                                  size_t bytes) {
  if (bytes < ETRT_QD_GEMM_SCRATCH + 3 * ETRT_QD_ALIGN) return 0;
  int64_t fit = (int64_t)((bytes - ETRT_QD_GEMM_SCRATCH - 3 * ETRT_QD_ALIGN) /
                          etrt_qd_row_bytes(k4, cols4, gather));
  return fit < rows ? fit : rows;
}

/* What a launch with the packed weight asks of the workspace (the rows gathered). */
static size_t etrt_qd_workspace(int64_t rows, int64_t k, int64_t cols) {
  int64_t k4 = etrt_qd_round4(k), cols4 = etrt_qd_round4(cols);
  size_t per_row = etrt_qd_row_bytes(k4, cols4, 1);
  int64_t chunk = (int64_t)(ETRT_QD_CHUNK_BYTES / per_row);
  if (chunk < 1) chunk = 1;
  if (chunk > rows) chunk = rows;
  return ETRT_QD_GEMM_SCRATCH + 3 * ETRT_QD_ALIGN + (size_t)chunk * per_row;
}

static int etrt_qd_enabled(void) {
  const char *env = getenv("ETRT_CUDA_INT8_GEMM");
  return env == NULL || strcmp(env, "0") != 0;
}

static void etrt_qd_release(void *state) {
  etrt_qd_packed *p = (etrt_qd_packed *)state;
  if (p == NULL) return;
  cudaFree(p->weight);
  cudaFree(p->row_sum);
  free(p);
}

/* Packs weight element (position kk, column c), at w[kk * cols + c] (`by_column`: a
 * matrix B) or w[c * k + kk] (a convolution's W). */
static etrt_status etrt_qd_pack(const etrt_node *node, const void *w, etrt_dtype wt, int by_column,
                                int64_t k, int64_t cols, void **state) {
  int64_t k4 = etrt_qd_round4(k), cols4 = etrt_qd_round4(cols);
  size_t bytes = (size_t)(cols4 * k4);
  etrt_qd_packed *p = (etrt_qd_packed *)calloc(1, sizeof *p);
  int8_t *host = (int8_t *)calloc(bytes, 1);
  int32_t *sums = (int32_t *)calloc((size_t)cols4, sizeof *sums);
  etrt_status s = ETRT_OK;
  if (p == NULL || host == NULL || sums == NULL) {
    s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s node '%s': out of memory packing its weight",
                   node->op_type, etrt_cuda_name(node));
    goto done;
  }
  p->k = k;
  p->k4 = k4;
  p->cols = cols;
  p->cols4 = cols4;
  p->weight_shift = wt == ETRT_DTYPE_UINT8 ? 128 : 0;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t kk = 0; kk < k; ++kk) {
      int64_t at = by_column ? kk * cols + c : c * k + kk;
      int32_t v = (wt == ETRT_DTYPE_INT8 ? (int32_t)((const int8_t *)w)[at]
                                         : (int32_t)((const uint8_t *)w)[at]) -
                  p->weight_shift;
      host[c * k4 + kk] = (int8_t)v;
      sums[c] += v;
    }
  }
  /* Context creation, not a launch: synchronous copies are fine here. */
  if (cudaMalloc((void **)&p->weight, bytes) != cudaSuccess ||
      cudaMalloc((void **)&p->row_sum, (size_t)cols4 * sizeof(int32_t)) != cudaSuccess ||
      cudaMemcpy(p->weight, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(p->row_sum, sums, (size_t)cols4 * sizeof(int32_t), cudaMemcpyHostToDevice) !=
          cudaSuccess) {
    cudaError_t e = cudaGetLastError();
    s = etrt_error(ETRT_ERROR_DEVICE, "%s node '%s': %zu bytes of packed int8 weight: %s",
                   node->op_type, etrt_cuda_name(node), bytes, cudaGetErrorString(e));
  }
done:
  free(host);
  free(sums);
  if (s == ETRT_OK) {
    *state = p;
  } else {
    etrt_qd_release(p);
  }
  return s;
}

static etrt_status etrt_qd_matmul_setup(const etrt_node *node, const etrt_tensor *inputs,
                                        const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                        void **state) {
  (void)outputs;
  (void)launch;
  *state = NULL;
  const etrt_tensor *b = &inputs[etrt_quant_is_qlinear(node) ? ETRT_QL_B : 1];
  if (!etrt_qd_enabled() || b->host_value == NULL || b->rank != 2 || b->dims[0] == 0 ||
      b->dims[1] == 0)
    return ETRT_OK;
  return etrt_qd_pack(node, b->host_value, b->dtype, 1, b->dims[0], b->dims[1], state);
}

static etrt_status etrt_qd_conv_setup(const etrt_node *node, const etrt_tensor *inputs,
                                      const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                      void **state) {
  (void)outputs;
  (void)launch;
  *state = NULL;
  etrt_qconv_params p;
  const etrt_tensor *w = &inputs[etrt_quant_is_qlinear(node) ? ETRT_QL_B : 1];
  if (!etrt_qd_enabled() || w->host_value == NULL ||
      etrt_qconv_params_of(node, inputs, &p) != ETRT_OK || p.group != 1 || p.maps == 0)
    return ETRT_OK;
  int64_t k = p.channels * etrt_conv_geometry_kernel_count(&p.g);
  if (k == 0) return ETRT_OK;
  return etrt_qd_pack(node, w->host_value, w->dtype, 0, k, p.maps, state);
}

#define ETRT_QD_WARPS 8

/* A warp per row of a matrix: a - 128 for uint8 (0 beyond k), written to `out` when
 * given, and the row's sum. */
__global__ void etrt_qd_rows_kernel(const uint8_t *a, int a_signed, int64_t k, int64_t k4,
                                    int64_t rows, int8_t *out, int32_t *sums) {
  int lane = threadIdx.x & 31;
  for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows;
       r += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    const uint8_t *ar = a + r * k;
    int32_t sum = 0;
    for (int64_t i = lane; i < k4; i += 32) {
      int32_t v = i >= k ? 0 : a_signed ? (int32_t)(int8_t)ar[i] : (int32_t)ar[i] - 128;
      if (out != NULL) out[r * k4 + i] = (int8_t)v;
      sum += v;
    }
    for (int d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (lane == 0) sums[r] = sum;
  }
}

/* A warp per output position (rows row0 .. row0 + rows of all images' positions): its
 * im2col row, the taps outside x at x's zero point so they add nothing, and its sum. */
__global__ void etrt_qd_im2col_kernel(etrt_qconv_params p, const uint8_t *x, int x_signed,
                                      etrt_qd_zp x_zp, int64_t in_count, int64_t out_count,
                                      int64_t kernel_count, int64_t k4, int64_t row0, int64_t rows,
                                      int8_t *out, int32_t *sums) {
  const etrt_conv_geometry &g = p.g;
  int lane = threadIdx.x & 31;
  int32_t shift = x_signed ? 0 : 128;
  int32_t zx = etrt_qd_zp_at(x_zp, 0) - shift;
  int64_t k = p.channels * kernel_count;
  for (int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < rows;
       r += ((int64_t)gridDim.x * blockDim.x) >> 5) {
    int64_t image = (row0 + r) / out_count, pos = (row0 + r) % out_count;
    int64_t origin[ETRT_CONV_MAX_SPATIAL];
    int64_t rest = pos;
    for (int32_t d = g.spatial - 1; d >= 0; --d) {
      origin[d] = rest % g.out[d] * g.stride[d] - g.pad_begin[d];
      rest /= g.out[d];
    }
    const uint8_t *xi = x + image * p.channels * in_count;
    int32_t sum = 0;
    for (int64_t i = lane; i < k4; i += 32) {
      int32_t v = 0;
      if (i < k) {
        int64_t c = i / kernel_count, tap = i % kernel_count, index = 0;
        int64_t stride = 1;
        int inside = 1;
        for (int32_t d = g.spatial - 1; d >= 0; --d) {
          int64_t at = origin[d] + tap % g.kernel[d] * g.dilation[d];
          tap /= g.kernel[d];
          inside &= at >= 0 && at < g.in[d];
          index += at * stride;
          stride *= g.in[d];
        }
        v = !inside    ? zx
            : x_signed ? (int32_t)(int8_t)xi[c * in_count + index]
                       : (int32_t)xi[c * in_count + index] - 128;
      }
      out[r * k4 + i] = (int8_t)v;
      sum += v;
    }
    for (int d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if (lane == 0) sums[r] = sum;
  }
}

/* Where a product's rows come from and where its outputs go. */
struct etrt_qd_product {
  int conv;
  int64_t m;         /* matrix: rows of one matrix (zero points and scales per row repeat) */
  int64_t out_count; /* convolution: output positions per image */
  int32_t a_shift;
  etrt_qd_zp a_zp, b_zp;
  int64_t a_zp_count, b_zp_count;
};

/* One thread per output of a chunk: the zero points applied to the int32 products, then
 * the epilogue. */
__global__ void etrt_qd_apply_kernel(etrt_qd_product q, const int32_t *products,
                                     const int32_t *a_sums, const int32_t *b_sums, int64_t k,
                                     int64_t cols, int64_t cols4, int32_t b_shift, int64_t row0,
                                     int64_t rows, etrt_qd_epilogue e, void *y) {
  ETRT_CUDA_LOOP(t, rows * cols) {
    int64_t r = t / cols, c = t % cols, row = row0 + r;
    int64_t i = q.conv ? 0 : row % q.m;
    int64_t za = etrt_qd_zp_at(q.a_zp, q.a_zp_count > 1 ? i : 0) - q.a_shift;
    int64_t zb = etrt_qd_zp_at(q.b_zp, q.b_zp_count > 1 ? c : 0) - b_shift;
    int32_t acc =
        (int32_t)((int64_t)products[r * cols4 + c] - zb * a_sums[r] - za * b_sums[c] + k * za * zb);
    if (q.conv) {
      int64_t image = row / q.out_count, pos = row % q.out_count;
      etrt_qd_finish(e, y, (image * cols + c) * q.out_count + pos, acc, c, -1);
    } else {
      etrt_qd_finish(e, y, row * cols + c, acc, i, c);
    }
  }
}

/* The product through cuBLASLt, chunk by chunk of rows. `a` is the matrix (rows of k) or
 * x; `p` the convolution's parameters (NULL: a matrix). Returns 0 in *done where the
 * workspace cannot hold a row: the caller runs its naive kernel. */
static etrt_status etrt_qd_gemm_run(const etrt_node *node, const etrt_cuda_launch *launch,
                                    const etrt_qd_packed *w, const etrt_qd_product &q,
                                    const etrt_qconv_params *p, const etrt_tensor *a, int64_t rows,
                                    const etrt_qd_epilogue &e, void *y, int *done) {
  int a_signed = a->dtype == ETRT_DTYPE_INT8;
  /* An int8 matrix whose rows cuBLASLt can read where they are needs no gathering. */
  int gather = p != NULL || !a_signed || w->k4 != w->k || ((uintptr_t)a->data & 15) != 0;
  int64_t chunk = etrt_qd_chunk_rows(rows, w->k4, w->cols4, gather, launch->workspace_size);
  *done = 0;
  if (chunk == 0) return ETRT_OK;
  *done = 1;
  cudaStream_t stream = etrt_cuda_stream(launch);
  char *base = (char *)launch->workspace;
  int8_t *gathered = gather ? (int8_t *)base : NULL;
  size_t at = gather ? etrt_qd_aligned((size_t)(chunk * w->k4)) : 0;
  int32_t *a_sums = (int32_t *)(base + at);
  at += etrt_qd_aligned((size_t)chunk * sizeof(int32_t));
  int32_t *products = (int32_t *)(base + at);
  at += etrt_qd_aligned((size_t)(chunk * w->cols4) * sizeof(int32_t));
  int threads = 32 * ETRT_QD_WARPS;
  for (int64_t row0 = 0; row0 < rows; row0 += chunk) {
    int64_t n = rows - row0 < chunk ? rows - row0 : chunk;
    unsigned blocks = etrt_cuda_blocks(n, ETRT_QD_WARPS);
    const uint8_t *src = (const uint8_t *)a->data;
    if (p != NULL) {
      etrt_qd_im2col_kernel<<<blocks, threads, 0, stream>>>(
          *p, src, a_signed, q.a_zp, etrt_conv_geometry_in_count(&p->g), q.out_count,
          etrt_conv_geometry_kernel_count(&p->g), w->k4, row0, n, gathered, a_sums);
    } else {
      etrt_qd_rows_kernel<<<blocks, threads, 0, stream>>>(src + row0 * w->k, a_signed, w->k, w->k4,
                                                          n, gathered, a_sums);
    }
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "integer product rows"));
    etrt_cuda_gemm_args g;
    memset(&g, 0, sizeof g);
    g.dtype = ETRT_DTYPE_INT8;
    g.trans_b = 1;
    g.m = n;
    g.n = w->cols4;
    g.k = w->k4;
    g.batch = 1;
    g.a = gather ? (const void *)gathered : (const void *)(src + row0 * w->k);
    g.lda = w->k4;
    g.b = w->weight;
    g.ldb = w->k4;
    g.y = products;
    g.ldy = w->cols4;
    g.alpha = 1.0f;
    ETRT_RETURN_IF_ERROR(
        etrt_cuda_gemm_run(node, &g, launch, base + at, launch->workspace_size - at));
    etrt_qd_apply_kernel<<<etrt_cuda_blocks(n * w->cols, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                           stream>>>(q, products, a_sums, w->row_sum, w->k, w->cols, w->cols4,
                                     w->weight_shift, row0, n, e, y);
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "integer product zero points"));
  }
  return ETRT_OK;
}

static const etrt_qd_packed *etrt_qd_state(const etrt_cuda_launch *launch) {
  return launch->node_state != NULL ? (const etrt_qd_packed *)launch->node_state[launch->node]
                                    : NULL;
}

extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_qmatmul_workspace) {
  (void)outputs;
  etrt_qmatmul_params p;
  const etrt_tensor *b = &inputs[etrt_quant_is_qlinear(node) ? ETRT_QL_B : 1];
  if (b->rank != 2 || etrt_qmatmul_params_of(node, inputs, &p) != ETRT_OK) return 0;
  return etrt_qd_workspace(p.shape.batch_count * p.shape.m, p.shape.k, p.shape.n);
}

extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_qconv_workspace) {
  (void)outputs;
  etrt_qconv_params p;
  if (etrt_qconv_params_of(node, inputs, &p) != ETRT_OK || p.group != 1) return 0;
  return etrt_qd_workspace(p.batch * etrt_conv_geometry_out_count(&p.g),
                           p.channels * etrt_conv_geometry_kernel_count(&p.g), p.maps);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_qmatmul) {
  etrt_qmatmul_params p;
  ETRT_RETURN_IF_ERROR(etrt_qmatmul_params_of(node, inputs, &p));
  int ql = etrt_quant_is_qlinear(node);
  const etrt_tensor *a = &inputs[ql ? ETRT_QL_A : 0], *b = &inputs[ql ? ETRT_QL_B : 1];
  int64_t total = p.shape.batch_count * p.shape.m * p.shape.n;
  if (total == 0) return ETRT_OK;
  etrt_qd_epilogue e =
      etrt_qd_epilogue_of(node, inputs, &outputs[0], p.a_scale_count, p.b_scale_count);
  const etrt_qd_packed *packed = etrt_qd_state(launch);
  if (packed != NULL && packed->k == p.shape.k && packed->cols == p.shape.n) {
    etrt_qd_product q;
    memset(&q, 0, sizeof q);
    q.m = p.shape.m;
    q.a_shift = a->dtype == ETRT_DTYPE_INT8 ? 0 : 128;
    q.a_zp = etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_A_ZP : 2);
    q.a_zp_count = p.a_zp_count;
    q.b_zp = etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_B_ZP : 3);
    q.b_zp_count = p.b_zp_count;
    int done = 0;
    ETRT_RETURN_IF_ERROR(etrt_qd_gemm_run(node, launch, packed, q, NULL, a,
                                          p.shape.batch_count * p.shape.m, e, outputs[0].data,
                                          &done));
    if (done) return ETRT_OK;
  }
  etrt_qd_matmul_kernel<<<etrt_cuda_blocks(total, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                          etrt_cuda_stream(launch)>>>(
      p.shape, (const uint8_t *)a->data, a->dtype == ETRT_DTYPE_INT8,
      etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_A_ZP : 2), p.a_zp_count, (const uint8_t *)b->data,
      b->dtype == ETRT_DTYPE_INT8, etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_B_ZP : 3), p.b_zp_count,
      e, outputs[0].data);
  return etrt_cuda_check(node, "integer matmul");
}

/* One thread per output element; taps outside the input count 0 (padding with x's
 * zero point). */
__global__ void etrt_qd_conv_kernel(etrt_qconv_params p, const uint8_t *x, int x_signed,
                                    etrt_qd_zp x_zp, const uint8_t *w, int w_signed,
                                    etrt_qd_zp w_zp, etrt_qd_epilogue e, void *y, int64_t in_count,
                                    int64_t out_count, int64_t kernel_count) {
  const etrt_conv_geometry &g = p.g;
  int64_t cpg = p.channels / p.group, mpg = p.maps / p.group;
  int64_t total = p.batch * p.maps * out_count;
  int32_t zx = etrt_qd_zp_at(x_zp, 0);
  ETRT_CUDA_LOOP(t, total) {
    int64_t pos = t % out_count, m = t / out_count % p.maps, n = t / out_count / p.maps;
    int64_t grp = m / mpg;
    int64_t origin[ETRT_CONV_MAX_SPATIAL];
    int64_t rest = pos;
    for (int32_t d = g.spatial - 1; d >= 0; --d) {
      origin[d] = rest % g.out[d] * g.stride[d] - g.pad_begin[d];
      rest /= g.out[d];
    }
    int32_t zw = etrt_qd_zp_at(w_zp, p.w_zp_count > 1 ? m : 0);
    const uint8_t *xg = x + (n * p.channels + grp * cpg) * in_count;
    const uint8_t *wm = w + m * cpg * kernel_count;
    int32_t acc = 0;
    for (int64_t tap = 0; tap < kernel_count; ++tap) {
      int64_t index = 0, r = tap;
      int inside = 1;
      int64_t kc[ETRT_CONV_MAX_SPATIAL];
      for (int32_t d = g.spatial - 1; d >= 0; --d) {
        kc[d] = r % g.kernel[d];
        r /= g.kernel[d];
      }
      for (int32_t d = 0; d < g.spatial; ++d) {
        int64_t at = origin[d] + kc[d] * g.dilation[d];
        inside &= at >= 0 && at < g.in[d];
        index = index * g.in[d] + at;
      }
      if (!inside) continue;
      for (int64_t c = 0; c < cpg; ++c)
        acc += (etrt_qd_byte(xg, x_signed, c * in_count + index) - zx) *
               (etrt_qd_byte(wm, w_signed, c * kernel_count + tap) - zw);
    }
    etrt_qd_finish(e, y, t, acc, m, -1);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_qconv) {
  etrt_qconv_params p;
  ETRT_RETURN_IF_ERROR(etrt_qconv_params_of(node, inputs, &p));
  int ql = etrt_quant_is_qlinear(node);
  const etrt_tensor *x = &inputs[ql ? ETRT_QL_A : 0], *w = &inputs[ql ? ETRT_QL_B : 1];
  int64_t out_count = etrt_conv_geometry_out_count(&p.g);
  int64_t total = p.batch * p.maps * out_count;
  if (total == 0) return ETRT_OK;
  etrt_qd_epilogue e = etrt_qd_epilogue_of(node, inputs, &outputs[0], 1, p.w_scale_count);
  const etrt_qd_packed *packed = etrt_qd_state(launch);
  if (packed != NULL && p.group == 1 && packed->cols == p.maps &&
      packed->k == p.channels * etrt_conv_geometry_kernel_count(&p.g)) {
    etrt_qd_product q;
    memset(&q, 0, sizeof q);
    q.conv = 1;
    q.out_count = out_count;
    q.a_shift = x->dtype == ETRT_DTYPE_INT8 ? 0 : 128;
    q.a_zp = etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_A_ZP : 2);
    q.b_zp = etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_B_ZP : 3);
    q.b_zp_count = p.w_zp_count;
    int done = 0;
    ETRT_RETURN_IF_ERROR(etrt_qd_gemm_run(node, launch, packed, q, &p, x, p.batch * out_count, e,
                                          outputs[0].data, &done));
    if (done) return ETRT_OK;
  }
  etrt_qd_conv_kernel<<<etrt_cuda_blocks(total, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                        etrt_cuda_stream(launch)>>>(
      p, (const uint8_t *)x->data, x->dtype == ETRT_DTYPE_INT8,
      etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_A_ZP : 2), (const uint8_t *)w->data,
      w->dtype == ETRT_DTYPE_INT8, etrt_qd_zp_of(node, inputs, ql ? ETRT_QL_B_ZP : 3), e,
      outputs[0].data, etrt_conv_geometry_in_count(&p.g), out_count,
      etrt_conv_geometry_kernel_count(&p.g));
  return etrt_cuda_check(node, "integer convolution");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_quantize[] = {
    {"QuantizeLinear", etrt_cuda_quantize_linear, NULL},
    {"DequantizeLinear", etrt_cuda_dequantize_linear, NULL},
    {"DynamicQuantizeLinear", etrt_cuda_dynamic_quantize_linear, NULL},
    {"MatMulInteger", etrt_cuda_qmatmul, etrt_cuda_qmatmul_workspace},
    {"QLinearMatMul", etrt_cuda_qmatmul, etrt_cuda_qmatmul_workspace},
    {"ConvInteger", etrt_cuda_qconv, etrt_cuda_qconv_workspace},
    {"QLinearConv", etrt_cuda_qconv, etrt_cuda_qconv_workspace},
    {NULL, NULL, NULL},
};

extern "C" const etrt_op_cuda_setup_row etrt_cuda_setups_quantize[] = {
    {"MatMulInteger", etrt_qd_matmul_setup, etrt_qd_release},
    {"QLinearMatMul", etrt_qd_matmul_setup, etrt_qd_release},
    {"ConvInteger", etrt_qd_conv_setup, etrt_qd_release},
    {"QLinearConv", etrt_qd_conv_setup, etrt_qd_release},
    {NULL, NULL, NULL},
};
