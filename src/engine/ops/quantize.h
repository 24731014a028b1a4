/* Quantized operators (ops/quantize.c): QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.
 * What the definitions work out once and the CPU (cpu/quantize.c) and CUDA
 * (cuda/quantize.cu) kernels share: where each element's scale and zero point are,
 * and the integer products' operand layout. Rounding is onnxruntime's: half to even,
 * then saturation to the output type. */
#ifndef ETRT_ENGINE_OPS_QUANTIZE_H
#define ETRT_ENGINE_OPS_QUANTIZE_H

#include <math.h>
#include <stdint.h>

#include "engine/op.h"
#include "engine/ops/conv_shape.h"
#include "engine/ops/matmul.h"

#ifdef __CUDACC__
#define ETRT_QUANT_HD __host__ __device__
#else
#define ETRT_QUANT_HD
#endif

/* How a Quantize/DequantizeLinear's scale covers x, viewed as [outer, axis, inner]:
 * one scale (per tensor), one per index along `axis` (per axis), or one per `block`
 * consecutive indices along `axis` of each (outer, inner) line (blocked, opset 21). */
typedef enum etrt_quant_mode {
  ETRT_QUANT_PER_TENSOR = 0,
  ETRT_QUANT_PER_AXIS = 1,
  ETRT_QUANT_BLOCKED = 2
} etrt_quant_mode;

typedef struct etrt_quant_layout {
  etrt_quant_mode mode;
  int64_t outer, axis, inner;
  int64_t block;  /* blocked: indices along the axis per scale */
  int64_t blocks; /* blocked: scales along the axis, ceil(axis / block) */
  int has_zero_point;
} etrt_quant_layout;

/* The scale (and zero point) index of element e of x. */
ETRT_QUANT_HD static inline int64_t etrt_quant_scale_index(const etrt_quant_layout *q, int64_t e) {
  switch (q->mode) {
    case ETRT_QUANT_PER_AXIS:
      return e / q->inner % q->axis;
    case ETRT_QUANT_BLOCKED: {
      int64_t i = e % q->inner, a = e / q->inner % q->axis, o = e / q->inner / q->axis;
      return (o * q->blocks + a / q->block) * q->inner + i;
    }
    default:
      return 0;
  }
}

/* v rounded half to even (the default rounding mode), plus the zero point, saturated
 * to [lo, hi]: QuantizeLinear (v = x / scale) and the requantization of an int32
 * accumulator (v = acc * (a_scale * b_scale / y_scale)), as onnxruntime computes them. */
ETRT_QUANT_HD static inline int32_t etrt_quant_round(float v, int32_t zp, int32_t lo, int32_t hi) {
  float f = rintf(v) + (float)zp;
  if (!(f >= (float)lo)) return f != f ? zp : lo;
  if (f >= (float)hi) return hi;
  return (int32_t)f;
}

/* QuantizeLinear / DequantizeLinear: inputs x, scale, zero point (optional), attributes
 * axis, block_size, saturate and (QuantizeLinear) output_dtype. */
etrt_status etrt_quant_layout_of(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_quant_layout *out);

/* The integer range of a quantized dtype (int8, uint8, int16, uint16, int32). */
void etrt_quant_range(etrt_dtype dtype, int32_t *lo, int32_t *hi);

/* One operand of an integer product: zero points per tensor (count 1) or one per row
 * of A / column of B (count M / N); QLinear* scales likewise. */
typedef struct etrt_qmatmul_params {
  etrt_matmul_shape shape;
  int64_t a_zp_count, b_zp_count;
  int64_t a_scale_count, b_scale_count; /* QLinearMatMul */
} etrt_qmatmul_params;

/* MatMulInteger (a, b, a_zero_point, b_zero_point) and QLinearMatMul (a, a_scale,
 * a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point): checks and layout. */
etrt_status etrt_qmatmul_params_of(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_qmatmul_params *out);

/* ConvInteger (x, w, x_zero_point, w_zero_point) and QLinearConv (x, x_scale,
 * x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B): the window and
 * the per-output-channel counts of the weight's zero points and scales (1 or M). */
typedef struct etrt_qconv_params {
  etrt_conv_geometry g;
  int64_t batch, channels, maps, group;
  int64_t w_zp_count, w_scale_count;
} etrt_qconv_params;

etrt_status etrt_qconv_params_of(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_qconv_params *out);

/* Input positions of QLinearMatMul and QLinearConv. */
enum {
  ETRT_QL_A = 0,
  ETRT_QL_A_SCALE = 1,
  ETRT_QL_A_ZP = 2,
  ETRT_QL_B = 3,
  ETRT_QL_B_SCALE = 4,
  ETRT_QL_B_ZP = 5,
  ETRT_QL_Y_SCALE = 6,
  ETRT_QL_Y_ZP = 7,
  /* QLinearConv's B, one per output channel; on a QLinearMatMul (made by the builder from
   * a quantized Gemm) one per column of B. Added to the int32 accumulator. */
  ETRT_QL_BIAS = 8
};

/* True for QLinearMatMul and QLinearConv, whose inputs follow the ETRT_QL_* order; the
 * *Integer ops take (a, b, a_zero_point, b_zero_point). */
int etrt_quant_is_qlinear(const etrt_node *node);

/* Element access of the integer types these operators take, shared by the CPU and CUDA
 * kernels (int8, uint8, int16, uint16; anything else is int32). */
#ifdef __CUDACC__
#define ETRT_QUANT_FN __host__ __device__ static inline
#else
#define ETRT_QUANT_FN static inline
#endif

ETRT_QUANT_FN int32_t etrt_quant_load_int(const void *p, etrt_dtype t, int64_t i) {
  switch (t) {
    case ETRT_DTYPE_INT8:
      return ((const int8_t *)p)[i];
    case ETRT_DTYPE_UINT8:
      return ((const uint8_t *)p)[i];
    case ETRT_DTYPE_INT16:
      return ((const int16_t *)p)[i];
    case ETRT_DTYPE_UINT16:
      return ((const uint16_t *)p)[i];
    default:
      return ((const int32_t *)p)[i];
  }
}

ETRT_QUANT_FN void etrt_quant_store_int(void *p, etrt_dtype t, int64_t i, int32_t v) {
  switch (t) {
    case ETRT_DTYPE_INT8:
      ((int8_t *)p)[i] = (int8_t)v;
      break;
    case ETRT_DTYPE_UINT8:
      ((uint8_t *)p)[i] = (uint8_t)v;
      break;
    case ETRT_DTYPE_INT16:
      ((int16_t *)p)[i] = (int16_t)v;
      break;
    case ETRT_DTYPE_UINT16:
      ((uint16_t *)p)[i] = (uint16_t)v;
      break;
    default:
      ((int32_t *)p)[i] = v;
      break;
  }
}

#endif
