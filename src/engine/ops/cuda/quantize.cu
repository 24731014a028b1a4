/* The quantized operators on the GPU (ops/quantize.h): QuantizeLinear and
 * DequantizeLinear with the definitions' scale layout, DynamicQuantizeLinear (one
 * block finds the range, then a grid quantizes), and the integer products with one
 * thread per output element accumulating in int32, requantized for the QLinear ops
 * with the CPU's rounding (etrt_quant_round). Scales and zero points are read from
 * device memory, so values computed during the run (DynamicQuantizeLinear's) work. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

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

extern "C" ETRT_CUDA_RUN(etrt_cuda_qmatmul) {
  etrt_qmatmul_params p;
  ETRT_RETURN_IF_ERROR(etrt_qmatmul_params_of(node, inputs, &p));
  int ql = etrt_quant_is_qlinear(node);
  const etrt_tensor *a = &inputs[ql ? ETRT_QL_A : 0], *b = &inputs[ql ? ETRT_QL_B : 1];
  int64_t total = p.shape.batch_count * p.shape.m * p.shape.n;
  if (total == 0) return ETRT_OK;
  etrt_qd_epilogue e =
      etrt_qd_epilogue_of(node, inputs, &outputs[0], p.a_scale_count, p.b_scale_count);
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
    {"MatMulInteger", etrt_cuda_qmatmul, NULL},
    {"QLinearMatMul", etrt_cuda_qmatmul, NULL},
    {"ConvInteger", etrt_cuda_qconv, NULL},
    {"QLinearConv", etrt_cuda_qconv, NULL},
    {NULL, NULL, NULL},
};
