/* CPU kernels of the quantized operators (ops/quantize.h). The integer products run
 * an integer GEMM: tiles of both operands are packed as int16 with their zero points
 * subtracted (a padded convolution tap is then 0, as padding with x's zero point
 * gives), multiplied with int32 accumulation, and the accumulators either stored
 * (MatMulInteger, ConvInteger) or requantized (QLinearMatMul, QLinearConv). Tiles live
 * on the stack: nothing is allocated on the run path. */
#include <math.h>
#include <string.h>

#include "base/half.h"
#include "base/thread_pool.h"
#include "engine/ops/cpu/gemm_util.h"
#include "engine/ops/op_check.h"
#include "engine/ops/quantize.h"
#include "engine/ops/shape_util.h"

#define ETRT_Q_KT 256 /* reduction depth of a packed tile */
#define ETRT_Q_NT 64  /* output columns (or positions) of a tile */
#define ETRT_Q_MT 64  /* output rows (or channels) of a tile */
/* Output channels of a convolution tile: its im2col panel is packed once per tile, so
 * more channels share each packing (64 KiB of accumulators on the stack). */
#define ETRT_Q_CONV_MT 256

static inline float etrt_q_load_float(const void *p, etrt_dtype t, int64_t i) {
  if (t == ETRT_DTYPE_FLOAT16) return etrt_half_to_float(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

/* An optional zero point's element i (0 when absent). */
static inline int32_t etrt_q_zp(const etrt_tensor *zp, int64_t i) {
  return zp != NULL && zp->data != NULL ? etrt_quant_load_int(zp->data, zp->dtype, i) : 0;
}

static const etrt_tensor *etrt_q_optional(const etrt_node *node, const etrt_tensor *inputs,
                                          uint32_t index) {
  return etrt_op_has_input(node, inputs, index) ? &inputs[index] : NULL;
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------------------- */

typedef struct etrt_q_linear_job {
  etrt_quant_layout layout;
  const etrt_tensor *x, *scale, *zp;
  etrt_tensor *y;
  int32_t lo, hi;
} etrt_q_linear_job;

/* Per tensor, float32 to 8 bits: the usual QDQ activation, with the scale and zero point
 * read once (the same arithmetic as the general loop). */
static int etrt_q_quantize_8bit(const etrt_q_linear_job *j, int64_t begin, int64_t end) {
  if (j->layout.mode != ETRT_QUANT_PER_TENSOR || j->x->dtype != ETRT_DTYPE_FLOAT32 ||
      j->scale->dtype != ETRT_DTYPE_FLOAT32)
    return 0;
  const float *restrict x = j->x->data;
  float scale = *(const float *)j->scale->data;
  int32_t zp = etrt_q_zp(j->zp, 0);
  if (j->y->dtype == ETRT_DTYPE_UINT8) {
    uint8_t *restrict y = j->y->data;
    for (int64_t e = begin; e < end; ++e)
      y[e] = (uint8_t)etrt_quant_round(x[e] / scale, zp, j->lo, j->hi);
    return 1;
  }
  if (j->y->dtype == ETRT_DTYPE_INT8) {
    int8_t *restrict y = j->y->data;
    for (int64_t e = begin; e < end; ++e)
      y[e] = (int8_t)etrt_quant_round(x[e] / scale, zp, j->lo, j->hi);
    return 1;
  }
  return 0;
}

static void etrt_q_quantize_range(void *ctx, int64_t begin, int64_t end) {
  const etrt_q_linear_job *j = ctx;
  if (etrt_q_quantize_8bit(j, begin, end)) return;
  for (int64_t e = begin; e < end; ++e) {
    int64_t s = etrt_quant_scale_index(&j->layout, e);
    float v = etrt_q_load_float(j->x->data, j->x->dtype, e) /
              etrt_q_load_float(j->scale->data, j->scale->dtype, s);
    etrt_quant_store_int(j->y->data, j->y->dtype, e,
                         etrt_quant_round(v, etrt_q_zp(j->zp, s), j->lo, j->hi));
  }
}

/* Per tensor, 8 bits to float32 (as the general loop computes it). */
static int etrt_q_dequantize_8bit(const etrt_q_linear_job *j, int64_t begin, int64_t end) {
  if (j->layout.mode != ETRT_QUANT_PER_TENSOR || j->y->dtype != ETRT_DTYPE_FLOAT32 ||
      j->scale->dtype != ETRT_DTYPE_FLOAT32)
    return 0;
  float *restrict y = j->y->data;
  float scale = *(const float *)j->scale->data;
  int32_t zp = etrt_q_zp(j->zp, 0);
  if (j->x->dtype == ETRT_DTYPE_UINT8) {
    const uint8_t *restrict x = j->x->data;
    for (int64_t e = begin; e < end; ++e) y[e] = (float)((int32_t)x[e] - zp) * scale;
    return 1;
  }
  if (j->x->dtype == ETRT_DTYPE_INT8) {
    const int8_t *restrict x = j->x->data;
    for (int64_t e = begin; e < end; ++e) y[e] = (float)((int32_t)x[e] - zp) * scale;
    return 1;
  }
  return 0;
}

static void etrt_q_dequantize_range(void *ctx, int64_t begin, int64_t end) {
  const etrt_q_linear_job *j = ctx;
  if (etrt_q_dequantize_8bit(j, begin, end)) return;
  for (int64_t e = begin; e < end; ++e) {
    int64_t s = etrt_quant_scale_index(&j->layout, e);
    int64_t q = (int64_t)etrt_quant_load_int(j->x->data, j->x->dtype, e) - etrt_q_zp(j->zp, s);
    float v = (float)q * etrt_q_load_float(j->scale->data, j->scale->dtype, s);
    if (j->y->dtype == ETRT_DTYPE_FLOAT16)
      ((uint16_t *)j->y->data)[e] = etrt_float_to_half(v);
    else
      ((float *)j->y->data)[e] = v;
  }
}

static etrt_status etrt_cpu_quantize_linear_run(const etrt_node *node, const etrt_tensor *inputs,
                                                etrt_tensor *outputs, int dequantize) {
  etrt_q_linear_job j = {.x = &inputs[0],
                         .scale = &inputs[1],
                         .zp = etrt_q_optional(node, inputs, 2),
                         .y = &outputs[0]};
  ETRT_RETURN_IF_ERROR(etrt_quant_layout_of(node, inputs, &j.layout));
  etrt_quant_range(outputs[0].dtype, &j.lo, &j.hi);
  etrt_parallel_for(etrt_tensor_numel(&inputs[0]), 16384,
                    dequantize ? etrt_q_dequantize_range : etrt_q_quantize_range, &j);
  return ETRT_OK;
}

static etrt_status etrt_cpu_quantize_linear(const etrt_node *node, const etrt_tensor *inputs,
                                            etrt_tensor *outputs) {
  return etrt_cpu_quantize_linear_run(node, inputs, outputs, 0);
}

static etrt_status etrt_cpu_dequantize_linear(const etrt_node *node, const etrt_tensor *inputs,
                                              etrt_tensor *outputs) {
  return etrt_cpu_quantize_linear_run(node, inputs, outputs, 1);
}

/* ONNX: the range of x widened to include 0 maps onto [0, 255]; a range of one value
 * gets scale 1 (as onnxruntime, where the formula would divide by zero). */
static etrt_status etrt_cpu_dynamic_quantize_linear(const etrt_node *node,
                                                    const etrt_tensor *inputs,
                                                    etrt_tensor *outputs) {
  (void)node;
  const float *x = inputs[0].data;
  int64_t n = etrt_tensor_numel(&inputs[0]);
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float zp_f = 0.0f - lo / scale;
  zp_f = zp_f < 0.0f ? 0.0f : zp_f > 255.0f ? 255.0f : zp_f;
  int32_t zp = (int32_t)rintf(zp_f);
  uint8_t *y = outputs[0].data;
  for (int64_t i = 0; i < n; ++i) y[i] = (uint8_t)etrt_quant_round(x[i] / scale, zp, 0, 255);
  *(float *)outputs[1].data = scale;
  *(uint8_t *)outputs[2].data = (uint8_t)zp;
  return ETRT_OK;
}

/* ---- integer GEMM --------------------------------------------------------------------- */

/* acc[jj] += the dot product of a[0..kt) and column jj of b, for jj in [0, nt): b holds
 * each column's kt values contiguously, ETRT_Q_KT apart, so the inner loop is a
 * contiguous int16 dot product that compilers turn into multiply-add instructions. */
static inline __attribute__((always_inline)) void etrt_q_acc_row_body(int32_t *restrict acc,
                                                                      const int16_t *restrict a,
                                                                      const int16_t *restrict b,
                                                                      int64_t kt, int64_t nt) {
  int64_t jj = 0;
  /* Four columns at a time: each element of a is loaded once for four products. */
  for (; jj + 4 <= nt; jj += 4) {
    const int16_t *restrict b0 = b + jj * ETRT_Q_KT, *restrict b1 = b0 + ETRT_Q_KT;
    const int16_t *restrict b2 = b1 + ETRT_Q_KT, *restrict b3 = b2 + ETRT_Q_KT;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t kk = 0; kk < kt; ++kk) {
      int32_t av = a[kk];
      s0 += av * b0[kk];
      s1 += av * b1[kk];
      s2 += av * b2[kk];
      s3 += av * b3[kk];
    }
    acc[jj] += s0;
    acc[jj + 1] += s1;
    acc[jj + 2] += s2;
    acc[jj + 3] += s3;
  }
  for (; jj < nt; ++jj) {
    const int16_t *restrict bc = b + jj * ETRT_Q_KT;
    int32_t sum = 0;
    for (int64_t kk = 0; kk < kt; ++kk) sum += (int32_t)a[kk] * (int32_t)bc[kk];
    acc[jj] += sum;
  }
}

static void etrt_q_acc_row_base(int32_t *restrict acc, const int16_t *restrict a,
                                const int16_t *restrict b, int64_t kt, int64_t nt) {
  etrt_q_acc_row_body(acc, a, b, kt, nt);
}

typedef void (*etrt_q_acc_row_fn)(int32_t *restrict acc, const int16_t *restrict a,
                                  const int16_t *restrict b, int64_t kt, int64_t nt);

#if defined(__x86_64__) || defined(__i386__)
/* The same loop compiled for AVX2: twice as many int16 multiply-adds per instruction.
 * Integer sums, so the bits are those of the baseline build. */
__attribute__((target("avx2"))) static void etrt_q_acc_row_avx2(int32_t *restrict acc,
                                                                const int16_t *restrict a,
                                                                const int16_t *restrict b,
                                                                int64_t kt, int64_t nt) {
  etrt_q_acc_row_body(acc, a, b, kt, nt);
}
#endif

/* The float GEMM's choice (etrt_cpu_gemm_isa, which the tests can lower). */
static etrt_q_acc_row_fn etrt_q_acc_row_for(void) {
#if defined(__x86_64__) || defined(__i386__)
  if (etrt_cpu_gemm_isa() >= ETRT_CPU_ISA_AVX2) return etrt_q_acc_row_avx2;
#endif
  return etrt_q_acc_row_base;
}

/* out[0..n) = p[i * stride] - zp for i in [0, n). */
static void etrt_q_pack(const void *p, etrt_dtype t, int64_t stride, int64_t n, int32_t zp,
                        int16_t *out) {
  if (t == ETRT_DTYPE_INT8) {
    const int8_t *s = p;
    for (int64_t i = 0; i < n; ++i) out[i] = (int16_t)(s[i * stride] - zp);
  } else {
    const uint8_t *s = p;
    for (int64_t i = 0; i < n; ++i) out[i] = (int16_t)(s[i * stride] - zp);
  }
}

static inline const void *etrt_q_at(const etrt_tensor *t, int64_t i) {
  return (const uint8_t *)t->data + i; /* int8 and uint8: one byte per element */
}

/* What happens to an accumulator: stored as int32, or requantized. */
typedef struct etrt_q_epilogue {
  int qlinear;
  const etrt_tensor *a_scale, *b_scale, *y_scale, *y_zp, *bias;
  int64_t a_scale_count, b_scale_count;
  int32_t lo, hi;
} etrt_q_epilogue;

/* Output elements [at, at + n) from the accumulators of row i (A's row, or W's output
 * channel) and columns [j0, j0 + n) (B's columns; j0 < 0 for a convolution, whose weight
 * scales follow the row). The multiplier is worked out once per row unless B's scales
 * are per column. */
static void etrt_q_finish_row(const etrt_q_epilogue *e, etrt_tensor *y, int64_t at,
                              const int32_t *acc, int64_t n, int64_t i, int64_t j0) {
  if (!e->qlinear) {
    memcpy((int32_t *)y->data + at, acc, (size_t)n * sizeof *acc);
    return;
  }
  const int32_t *column_bias = e->bias != NULL && j0 >= 0 ? (const int32_t *)e->bias->data : NULL;
  int32_t bias = e->bias != NULL && j0 < 0 ? ((const int32_t *)e->bias->data)[i] : 0;
  float as = etrt_q_load_float(e->a_scale->data, e->a_scale->dtype, e->a_scale_count > 1 ? i : 0);
  float ys = etrt_q_load_float(e->y_scale->data, e->y_scale->dtype, 0);
  int per_column = j0 >= 0 && e->b_scale_count > 1;
  float multiplier = as *
                     etrt_q_load_float(e->b_scale->data, e->b_scale->dtype,
                                       j0 < 0 && e->b_scale_count > 1 ? i : 0) /
                     ys;
  int32_t zp = etrt_q_zp(e->y_zp, 0);
  for (int64_t k = 0; k < n; ++k) {
    if (per_column)
      multiplier = as * etrt_q_load_float(e->b_scale->data, e->b_scale->dtype, j0 + k) / ys;
    if (column_bias != NULL) bias = column_bias[j0 + k];
    int32_t v = etrt_quant_round((float)(acc[k] + bias) * multiplier, zp, e->lo, e->hi);
    if (y->dtype == ETRT_DTYPE_INT8)
      ((int8_t *)y->data)[at + k] = (int8_t)v;
    else
      ((uint8_t *)y->data)[at + k] = (uint8_t)v;
  }
}

/* One output element (the empty convolution's). */
static inline void etrt_q_finish(const etrt_q_epilogue *e, etrt_tensor *y, int64_t at, int32_t acc,
                                 int64_t i, int64_t j) {
  if (!e->qlinear) {
    ((int32_t *)y->data)[at] = acc;
    return;
  }
  if (e->bias != NULL) acc += ((const int32_t *)e->bias->data)[j < 0 ? i : j];
  float as = etrt_q_load_float(e->a_scale->data, e->a_scale->dtype, e->a_scale_count > 1 ? i : 0);
  float bs = etrt_q_load_float(e->b_scale->data, e->b_scale->dtype,
                               e->b_scale_count > 1 ? (j < 0 ? i : j) : 0);
  float multiplier = as * bs / etrt_q_load_float(e->y_scale->data, e->y_scale->dtype, 0);
  etrt_quant_store_int(
      y->data, y->dtype, at,
      etrt_quant_round((float)acc * multiplier, etrt_q_zp(e->y_zp, 0), e->lo, e->hi));
}

static void etrt_q_epilogue_init(const etrt_node *node, const etrt_tensor *inputs,
                                 const etrt_tensor *y, int64_t a_scale_count, int64_t b_scale_count,
                                 etrt_q_epilogue *e) {
  memset(e, 0, sizeof *e);
  e->qlinear = etrt_quant_is_qlinear(node);
  if (!e->qlinear) return;
  e->a_scale = &inputs[ETRT_QL_A_SCALE];
  e->b_scale = &inputs[ETRT_QL_B_SCALE];
  e->y_scale = &inputs[ETRT_QL_Y_SCALE];
  e->y_zp = etrt_q_optional(node, inputs, ETRT_QL_Y_ZP);
  e->bias = node->num_inputs > ETRT_QL_BIAS ? etrt_q_optional(node, inputs, ETRT_QL_BIAS) : NULL;
  e->a_scale_count = a_scale_count;
  e->b_scale_count = b_scale_count;
  etrt_quant_range(y->dtype, &e->lo, &e->hi);
}

typedef struct etrt_q_matmul_job {
  etrt_qmatmul_params p;
  const etrt_tensor *a, *b, *a_zp, *b_zp;
  etrt_tensor *y;
  etrt_q_epilogue e;
  int64_t row_blocks;
  etrt_q_acc_row_fn acc_row;
} etrt_q_matmul_job;

static int64_t etrt_q_batch_offset(const etrt_matmul_shape *s, int64_t batch,
                                   const int64_t *strides) {
  int64_t off = 0;
  for (int32_t d = s->batch_rank - 1; d >= 0; --d) {
    off += batch % s->batch_dims[d] * strides[d];
    batch /= s->batch_dims[d];
  }
  return off;
}

/* Tasks [begin, end): task = batch * row_blocks + row block. */
static void etrt_q_matmul_tasks(void *ctx, int64_t begin, int64_t end) {
  const etrt_q_matmul_job *j = ctx;
  const etrt_matmul_shape *s = &j->p.shape;
  int16_t btile[ETRT_Q_KT * ETRT_Q_NT], arow[ETRT_Q_KT];
  int32_t acc[ETRT_Q_MT][ETRT_Q_NT], bzp[ETRT_Q_NT];
  int b_int8 = j->b->dtype == ETRT_DTYPE_INT8;
  for (int64_t t = begin; t < end; ++t) {
    int64_t batch = t / j->row_blocks, i0 = t % j->row_blocks * ETRT_Q_MT;
    int64_t mt = s->m - i0 < ETRT_Q_MT ? s->m - i0 : ETRT_Q_MT;
    int64_t a_off = etrt_q_batch_offset(s, batch, s->a_batch_strides);
    int64_t b_off = etrt_q_batch_offset(s, batch, s->b_batch_strides);
    int64_t y_off = batch * s->m * s->n;
    for (int64_t j0 = 0; j0 < s->n; j0 += ETRT_Q_NT) {
      int64_t nt = s->n - j0 < ETRT_Q_NT ? s->n - j0 : ETRT_Q_NT;
      for (int64_t jj = 0; jj < nt; ++jj)
        bzp[jj] = etrt_q_zp(j->b_zp, j->p.b_zp_count > 1 ? j0 + jj : 0);
      memset(acc, 0, sizeof acc);
      for (int64_t k0 = 0; k0 < s->k; k0 += ETRT_Q_KT) {
        int64_t kt = s->k - k0 < ETRT_Q_KT ? s->k - k0 : ETRT_Q_KT;
        /* B's tile, one column at a time (its zero point is per column). */
        for (int64_t kk = 0; kk < kt; ++kk) {
          const void *row = etrt_q_at(j->b, b_off + (k0 + kk) * s->n + j0);
          if (b_int8)
            for (int64_t jj = 0; jj < nt; ++jj)
              btile[jj * ETRT_Q_KT + kk] = (int16_t)(((const int8_t *)row)[jj] - bzp[jj]);
          else
            for (int64_t jj = 0; jj < nt; ++jj)
              btile[jj * ETRT_Q_KT + kk] = (int16_t)(((const uint8_t *)row)[jj] - bzp[jj]);
        }
        for (int64_t ii = 0; ii < mt; ++ii) {
          int64_t i = i0 + ii;
          etrt_q_pack(etrt_q_at(j->a, a_off + i * s->k + k0), j->a->dtype, 1, kt,
                      etrt_q_zp(j->a_zp, j->p.a_zp_count > 1 ? i : 0), arow);
          j->acc_row(acc[ii], arow, btile, kt, nt);
        }
      }
      for (int64_t ii = 0; ii < mt; ++ii)
        etrt_q_finish_row(&j->e, j->y, y_off + (i0 + ii) * s->n + j0, acc[ii], nt, i0 + ii, j0);
    }
  }
}

static etrt_status etrt_cpu_qmatmul(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  etrt_q_matmul_job j;
  j.acc_row = etrt_q_acc_row_for();
  ETRT_RETURN_IF_ERROR(etrt_qmatmul_params_of(node, inputs, &j.p));
  int ql = etrt_quant_is_qlinear(node);
  j.a = &inputs[ql ? ETRT_QL_A : 0];
  j.b = &inputs[ql ? ETRT_QL_B : 1];
  j.a_zp = etrt_q_optional(node, inputs, ql ? ETRT_QL_A_ZP : 2);
  j.b_zp = node->num_inputs > 3 || ql ? etrt_q_optional(node, inputs, ql ? ETRT_QL_B_ZP : 3) : NULL;
  j.y = &outputs[0];
  etrt_q_epilogue_init(node, inputs, &outputs[0], j.p.a_scale_count, j.p.b_scale_count, &j.e);
  j.row_blocks = (j.p.shape.m + ETRT_Q_MT - 1) / ETRT_Q_MT;
  int64_t tasks = j.p.shape.batch_count * j.row_blocks;
  if (tasks == 0 || j.p.shape.n == 0) return ETRT_OK;
  int64_t work = j.p.shape.n * j.p.shape.k * ETRT_Q_MT;
  etrt_parallel_for(tasks, 1 + (1 << 18) / (work + 1), etrt_q_matmul_tasks, &j);
  return ETRT_OK;
}

/* ---- integer convolution --------------------------------------------------------------- */

typedef struct etrt_q_conv_job {
  etrt_qconv_params p;
  const etrt_tensor *x, *w, *x_zp, *w_zp;
  etrt_tensor *y;
  etrt_q_epilogue e;
  int64_t kernel_count, in_count, out_count, k_total, tiles;
  etrt_q_acc_row_fn acc_row;
} etrt_q_conv_job;

/* Packs taps [k0, k0 + kt) of positions [p0, p0 + nt) of one group's input channels
 * (im2col): out[jj][kk] (a position's taps contiguous), zero outside the input. */
static void etrt_q_conv_pack(const etrt_q_conv_job *j, const uint8_t *xg, int32_t xzp, int64_t k0,
                             int64_t kt, int64_t p0, int64_t nt, int16_t *out) {
  const etrt_conv_geometry *g = &j->p.g;
  int64_t origin[ETRT_CONV_MAX_SPATIAL][ETRT_Q_NT];
  for (int64_t jj = 0; jj < nt; ++jj) {
    int64_t p = p0 + jj;
    for (int32_t d = g->spatial - 1; d >= 0; --d) {
      origin[d][jj] = p % g->out[d] * g->stride[d] - g->pad_begin[d];
      p /= g->out[d];
    }
  }
  /* int8 bytes read as (byte ^ 128) - 128, uint8 as they are: no branch per element. */
  int32_t flip = j->x->dtype == ETRT_DTYPE_INT8 ? 128 : 0;
  for (int64_t kk = 0; kk < kt; ++kk) {
    int64_t kf = k0 + kk, c = kf / j->kernel_count, tap = kf % j->kernel_count;
    int64_t kc[ETRT_CONV_MAX_SPATIAL];
    for (int32_t d = g->spatial - 1; d >= 0; --d) {
      kc[d] = tap % g->kernel[d] * g->dilation[d];
      tap /= g->kernel[d];
    }
    const uint8_t *xc = xg + c * j->in_count;
    int16_t *o = out + kk;
    for (int64_t jj = 0; jj < nt; ++jj) {
      int64_t index = 0;
      int inside = 1;
      for (int32_t d = 0; d < g->spatial; ++d) {
        int64_t at = origin[d][jj] + kc[d];
        inside &= at >= 0 && at < g->in[d];
        index = index * g->in[d] + at;
      }
      if (!inside) {
        o[jj * ETRT_Q_KT] = 0;
        continue;
      }
      o[jj * ETRT_Q_KT] = (int16_t)(((int32_t)xc[index] ^ flip) - flip - xzp);
    }
  }
}

/* Tasks [begin, end): task = ((batch * group) + grp) * tiles + tile. */
static void etrt_q_conv_tasks(void *ctx, int64_t begin, int64_t end) {
  const etrt_q_conv_job *j = ctx;
  const etrt_qconv_params *p = &j->p;
  int16_t cols[ETRT_Q_KT * ETRT_Q_NT], wrow[ETRT_Q_KT];
  int32_t acc[ETRT_Q_CONV_MT][ETRT_Q_NT];
  int64_t cpg = p->channels / p->group, mpg = p->maps / p->group;
  int32_t xzp = etrt_q_zp(j->x_zp, 0);
  for (int64_t t = begin; t < end; ++t) {
    int64_t tile = t % j->tiles, grp = t / j->tiles % p->group, n = t / j->tiles / p->group;
    const uint8_t *xg = etrt_q_at(j->x, (n * p->channels + grp * cpg) * j->in_count);
    int64_t p0 = tile * ETRT_Q_NT;
    int64_t nt = j->out_count - p0 < ETRT_Q_NT ? j->out_count - p0 : ETRT_Q_NT;
    for (int64_t m0 = 0; m0 < mpg; m0 += ETRT_Q_CONV_MT) {
      int64_t mt = mpg - m0 < ETRT_Q_CONV_MT ? mpg - m0 : ETRT_Q_CONV_MT;
      memset(acc, 0, (size_t)mt * sizeof acc[0]);
      for (int64_t k0 = 0; k0 < j->k_total; k0 += ETRT_Q_KT) {
        int64_t kt = j->k_total - k0 < ETRT_Q_KT ? j->k_total - k0 : ETRT_Q_KT;
        etrt_q_conv_pack(j, xg, xzp, k0, kt, p0, nt, cols);
        for (int64_t mi = 0; mi < mt; ++mi) {
          int64_t m = grp * mpg + m0 + mi;
          etrt_q_pack(etrt_q_at(j->w, m * j->k_total + k0), j->w->dtype, 1, kt,
                      etrt_q_zp(j->w_zp, p->w_zp_count > 1 ? m : 0), wrow);
          j->acc_row(acc[mi], wrow, cols, kt, nt);
        }
      }
      for (int64_t mi = 0; mi < mt; ++mi) {
        int64_t m = grp * mpg + m0 + mi;
        etrt_q_finish_row(&j->e, j->y, (n * p->maps + m) * j->out_count + p0, acc[mi], nt, m, -1);
      }
    }
  }
}

static etrt_status etrt_cpu_qconv(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_q_conv_job j;
  j.acc_row = etrt_q_acc_row_for();
  ETRT_RETURN_IF_ERROR(etrt_qconv_params_of(node, inputs, &j.p));
  int ql = etrt_quant_is_qlinear(node);
  j.x = &inputs[ql ? ETRT_QL_A : 0];
  j.w = &inputs[ql ? ETRT_QL_B : 1];
  j.x_zp = etrt_q_optional(node, inputs, ql ? ETRT_QL_A_ZP : 2);
  j.w_zp = node->num_inputs > 3 || ql ? etrt_q_optional(node, inputs, ql ? ETRT_QL_B_ZP : 3) : NULL;
  j.y = &outputs[0];
  /* The weight's scales are per output channel: row i of the epilogue. */
  etrt_q_epilogue_init(node, inputs, &outputs[0], 1, j.p.w_scale_count, &j.e);
  j.kernel_count = etrt_conv_geometry_kernel_count(&j.p.g);
  j.in_count = etrt_conv_geometry_in_count(&j.p.g);
  j.out_count = etrt_conv_geometry_out_count(&j.p.g);
  j.k_total = j.p.channels / j.p.group * j.kernel_count;
  j.tiles = (j.out_count + ETRT_Q_NT - 1) / ETRT_Q_NT;
  int64_t tasks = j.p.batch * j.p.group * j.tiles;
  if (tasks == 0 || j.p.maps == 0) return ETRT_OK;
  if (j.k_total == 0) {
    /* No taps (zero input channels): every accumulator is 0. */
    for (int64_t n = 0; n < j.p.batch; ++n)
      for (int64_t m = 0; m < j.p.maps; ++m)
        for (int64_t q = 0; q < j.out_count; ++q)
          etrt_q_finish(&j.e, j.y, (n * j.p.maps + m) * j.out_count + q, 0, m, -1);
    return ETRT_OK;
  }
  int64_t work = j.p.maps / j.p.group * j.k_total * ETRT_Q_NT;
  etrt_parallel_for(tasks, 1 + (1 << 18) / (work + 1), etrt_q_conv_tasks, &j);
  return ETRT_OK;
}

const etrt_op_cpu_row etrt_cpu_rows_quantize[] = {
    {"QuantizeLinear", etrt_cpu_quantize_linear},
    {"DequantizeLinear", etrt_cpu_dequantize_linear},
    {"DynamicQuantizeLinear", etrt_cpu_dynamic_quantize_linear},
    {"MatMulInteger", etrt_cpu_qmatmul},
    {"QLinearMatMul", etrt_cpu_qmatmul},
    {"ConvInteger", etrt_cpu_qconv},
    {"QLinearConv", etrt_cpu_qconv},
    {NULL, NULL},
};
