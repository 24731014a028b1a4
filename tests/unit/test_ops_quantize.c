/* The quantized operators on the CPU executor: onnxruntime's rounding (half to even,
 * then saturation), per-axis and blocked scales, DynamicQuantizeLinear's range, the
 * integer products' zero points and requantization, and every refusal naming the op. */
#include "engine/ops/cpu/gemm_util.h"
#include "op_harness.h"

#define OH_I16(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_INT16, int16_t, rank, dims, __VA_ARGS__)

static uint8_t out8[4096];
static int32_t out32[1024];
static float outf[1024];

static void test_quantize_rounds_half_to_even_and_saturates(void) {
  oh_value in[3] = {OH_F32(1, (9), 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.0f, -300.0f, 127.4f, -2.5f),
                    OH_CONST(OH_F32(0, (0), 1.0f)), OH_CONST(OH_I8(0, (0), 0))};
  CHECK_OK(oh_run("QuantizeLinear", 3, in, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS((int8_t *)out8, ((int[]){0, 2, 2, 0, -2, 127, -128, 127, -2}), 9);
  /* uint8 with zero point 128 and scale 0.5: x / 0.5 rounded, plus 128. */
  oh_value u[3] = {OH_F32(1, (5), 0.25f, 0.75f, -64.5f, 100.0f, -0.25f),
                   OH_CONST(OH_F32(0, (0), 0.5f)), OH_CONST(OH_U8(0, (0), 128))};
  CHECK_OK(oh_run("QuantizeLinear", 3, u, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){128, 130, 0, 255, 128}), 5);
  /* No zero point: uint8, zero point 0. */
  oh_value none[2] = {OH_F32(1, (3), -1.0f, 3.0f, 1000.0f), OH_CONST(OH_F32(0, (0), 1.0f))};
  oh_output info[1];
  CHECK_OK(oh_run("QuantizeLinear", 2, none, 0, NULL, 1, (void *[]){out8}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_UINT8);
  OH_CHECK_INTS(out8, ((int[]){0, 3, 255}), 3);
}

static void test_per_axis_and_blocked(void) {
  /* x [2, 3] per axis 1: scales 1, 2, 4 and zero points 0, 1, -1. */
  oh_value in[3] = {OH_I8(2, (2, 3), 1, 2, 3, -4, -5, -6),
                    OH_CONST(OH_F32(1, (3), 1.0f, 2.0f, 4.0f)), OH_CONST(OH_I8(1, (3), 0, 1, -1))};
  CHECK_OK(oh_run("DequantizeLinear", 3, in, 0, NULL, 1, (void *[]){outf}, NULL));
  OH_CHECK_FLOATS(outf, ((double[]){1, 2, 16, -4, -12, -20}), 6, 0);
  /* Blocks of 2 along axis 1 of [2, 5]: scales [2, 3]. */
  oh_value b[2] = {OH_I8(2, (2, 5), 1, 1, 1, 1, 1, 2, 2, 2, 2, 2),
                   OH_CONST(OH_F32(2, (2, 3), 1.0f, 10.0f, 100.0f, 2.0f, 20.0f, 200.0f))};
  etrt_attribute attrs[2] = {OH_INT("axis", 1), OH_INT("block_size", 2)};
  CHECK_OK(oh_run("DequantizeLinear", 2, b, 2, attrs, 1, (void *[]){outf}, NULL));
  OH_CHECK_FLOATS(outf, ((double[]){1, 1, 10, 10, 100, 4, 4, 40, 40, 400}), 10, 0);
  /* int32 (a bias) dequantizes without a zero point. */
  oh_value i32[2] = {OH_I32(1, (2), 1000000, -7), OH_CONST(OH_F32(0, (0), 0.5f))};
  CHECK_OK(oh_run("DequantizeLinear", 2, i32, 0, NULL, 1, (void *[]){outf}, NULL));
  OH_CHECK_FLOATS(outf, ((double[]){500000, -3.5}), 2, 0);
}

static void test_dynamic_quantize(void) {
  /* Range [-1, 3] widened to include 0: scale 4 / 255, zero point round(255 / 4). */
  oh_value in[1] = {OH_F32(1, (4), -1.0f, 0.0f, 3.0f, 1.0f)};
  float scale[1];
  uint8_t zp[1];
  CHECK_OK(oh_run("DynamicQuantizeLinear", 1, in, 0, NULL, 3, (void *[]){out8, scale, zp}, NULL));
  CHECK(fabsf(scale[0] - 4.0f / 255.0f) < 1e-9f);
  CHECK_EQ_INT(zp[0], 64);
  OH_CHECK_INTS(out8, ((int[]){0, 64, 255, 128}), 4);
  /* All zeros: scale 1 (onnxruntime's choice where the range is empty). */
  oh_value zeros[1] = {OH_F32(1, (2), 0.0f, 0.0f)};
  CHECK_OK(
      oh_run("DynamicQuantizeLinear", 1, zeros, 0, NULL, 3, (void *[]){out8, scale, zp}, NULL));
  CHECK(scale[0] == 1.0f);
  CHECK_EQ_INT(zp[0], 0);
}

static void test_integer_products(void) {
  /* Per-row zero points of A, per-column of B. */
  oh_value mm[4] = {OH_U8(2, (2, 2), 3, 5, 10, 10), OH_I8(2, (2, 2), 1, 2, 3, 4),
                    OH_CONST(OH_U8(1, (2), 1, 10)), OH_CONST(OH_I8(1, (2), 0, 1))};
  CHECK_OK(oh_run("MatMulInteger", 4, mm, 0, NULL, 1, (void *[]){out32}, NULL));
  /* rows (2, 4) and (0, 0); columns (1, 3) and (1, 3). */
  OH_CHECK_INTS(out32, ((int[]){14, 14, 0, 0}), 4);
  /* QLinearMatMul: acc 14 times 0.5 * 0.25 / 0.5 = 3.5 -> 4 (half to even) + 10. */
  oh_value ql[8] = {OH_U8(2, (1, 2), 2, 4),          OH_CONST(OH_F32(0, (0), 0.5f)),
                    OH_CONST(OH_U8(0, (0), 0)),      OH_CONST(OH_I8(2, (2, 2), 1, 1, 3, 1)),
                    OH_CONST(OH_F32(0, (0), 0.25f)), OH_CONST(OH_I8(0, (0), 0)),
                    OH_CONST(OH_F32(0, (0), 0.5f)),  OH_CONST(OH_U8(0, (0), 10))};
  CHECK_OK(oh_run("QLinearMatMul", 8, ql, 0, NULL, 1, (void *[]){out8}, NULL));
  /* column 0: acc 14 -> 3.5 -> 4; column 1: acc 6 -> 1.5 -> 2. */
  OH_CHECK_INTS(out8, ((int[]){14, 12}), 2);
  /* The builder's per-column bias joins the accumulator: (14 + 3) / 4 = 4.25 -> 4, and
   * (6 + 4) / 4 = 2.5 -> 2 (half to even). */
  oh_value qb[9];
  memcpy(qb, ql, sizeof ql);
  qb[8] = OH_CONST(OH_I32(1, (2), 3, 4));
  CHECK_OK(oh_run("QLinearMatMul", 9, qb, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){14, 12}), 2);
  qb[8] = OH_CONST(OH_I32(1, (2), 6, -6));
  CHECK_OK(oh_run("QLinearMatMul", 9, qb, 0, NULL, 1, (void *[]){out8}, NULL));
  /* (14 + 6) / 4 = 5 -> 15; (6 - 6) / 4 = 0 -> 10. */
  OH_CHECK_INTS(out8, ((int[]){15, 10}), 2);
  /* ConvInteger pads with x's zero point: a 1x1 input, 3x3 kernel of ones, pad 1. */
  oh_value conv[3] = {OH_U8(4, (1, 1, 1, 1), 9),
                      OH_CONST(OH_I8(4, (1, 1, 3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1)),
                      OH_U8(0, (0), 4)};
  etrt_attribute pads = OH_INTS("pads", 4, 1, 1, 1, 1);
  CHECK_OK(oh_run("ConvInteger", 3, conv, 1, &pads, 1, (void *[]){out32}, NULL));
  OH_CHECK_INTS(out32, ((int[]){5}), 1);
  /* QLinearConv with a bias: (5 + 7) * 1 * 1 / 2 = 6 -> + 1. */
  oh_value qc[9] = {OH_U8(4, (1, 1, 1, 1), 9),      OH_CONST(OH_F32(0, (0), 1.0f)),
                    OH_CONST(OH_U8(0, (0), 4)),     OH_CONST(OH_I8(4, (1, 1, 1, 1), 1)),
                    OH_CONST(OH_F32(1, (1), 1.0f)), OH_CONST(OH_I8(1, (1), 0)),
                    OH_CONST(OH_F32(0, (0), 2.0f)), OH_CONST(OH_I8(0, (0), 1)),
                    OH_CONST(OH_I32(1, (1), 7))};
  CHECK_OK(oh_run("QLinearConv", 9, qc, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS((int8_t *)out8, ((int[]){7}), 1);
}

/* The integer products again with the baseline dot-product row instead of the AVX2 one
 * (chosen like the float GEMM's micro-kernel): the same answers. */
static void test_integer_products_baseline(void) {
  etrt_cpu_gemm_isa_limit(ETRT_CPU_ISA_PORTABLE);
  test_integer_products();
  etrt_cpu_gemm_isa_limit(ETRT_CPU_ISA_AVX512);
}

static void test_refusals(void) {
  oh_value x23 = OH_F32(2, (2, 3), 1, 2, 3, 4, 5, 6);
  etrt_attribute axis5 = OH_INT("axis", 5);
  OH_CHECK_REFUSED(
      oh_run("QuantizeLinear", 2, (oh_value[]){x23, OH_CONST(OH_F32(1, (3), 1.0f, 1.0f, 1.0f))}, 1,
             &axis5, 1, (void *[]){out8}, NULL),
      "QuantizeLinear", "axis 5 is outside [-2, 2)");
  OH_CHECK_REFUSED(oh_run("QuantizeLinear", 2,
                          (oh_value[]){x23, OH_CONST(OH_F32(1, (4), 1.0f, 1.0f, 1.0f, 1.0f))}, 0,
                          NULL, 1, (void *[]){out8}, NULL),
                   "QuantizeLinear", "per-axis scales along axis 1 of x [2, 3] must be 1-D of 3");
  OH_CHECK_REFUSED(oh_run("QuantizeLinear", 3,
                          (oh_value[]){x23, OH_CONST(OH_F32(1, (3), 1.0f, 1.0f, 1.0f)),
                                       OH_CONST(OH_I8(1, (2), 0, 0))},
                          0, NULL, 1, (void *[]){out8}, NULL),
                   "QuantizeLinear", "zero point has shape [2], scale has [3]");
  etrt_attribute blocked[2] = {OH_INT("axis", 1), OH_INT("block_size", 2)};
  OH_CHECK_REFUSED(
      oh_run("QuantizeLinear", 2, (oh_value[]){x23, OH_CONST(OH_F32(2, (2, 1), 1.0f, 1.0f))}, 2,
             blocked, 1, (void *[]){out8}, NULL),
      "QuantizeLinear", "blocks of 2 along axis 1");
  etrt_attribute negative = OH_INT("block_size", -1);
  OH_CHECK_REFUSED(oh_run("DequantizeLinear", 2,
                          (oh_value[]){OH_I8(1, (2), 1, 2), OH_CONST(OH_F32(0, (0), 1.0f))}, 1,
                          &negative, 1, (void *[]){outf}, NULL),
                   "DequantizeLinear", "block_size -1 is negative");
  /* Unsupported types, named with the input. */
  OH_CHECK_REFUSED(
      oh_run("QuantizeLinear", 2, (oh_value[]){OH_I32(1, (1), 1), OH_CONST(OH_F32(0, (0), 1.0f))},
             0, NULL, 1, (void *[]){out8}, NULL),
      "QuantizeLinear", "x");
  etrt_attribute to_float = OH_INT("output_dtype", 1);
  OH_CHECK_REFUSED(oh_run("QuantizeLinear", 2,
                          (oh_value[]){OH_F32(1, (1), 1.0f), OH_CONST(OH_F32(0, (0), 1.0f))}, 1,
                          &to_float, 1, (void *[]){out8}, NULL),
                   "QuantizeLinear", "the output");
  OH_CHECK_REFUSED(
      oh_run("DequantizeLinear", 2, (oh_value[]){OH_I64(1, (1), 1), OH_CONST(OH_F32(0, (0), 1.0f))},
             0, NULL, 1, (void *[]){outf}, NULL),
      "DequantizeLinear", "x");
  OH_CHECK_REFUSED(oh_run("DequantizeLinear", 3,
                          (oh_value[]){OH_I8(1, (1), 1), OH_CONST(OH_F32(0, (0), 1.0f)),
                                       OH_CONST(OH_U8(0, (0), 1))},
                          0, NULL, 1, (void *[]){outf}, NULL),
                   "DequantizeLinear", "zero point is uint8, x is int8");
  OH_CHECK_REFUSED(oh_run("DynamicQuantizeLinear", 1, (oh_value[]){OH_HALF(1, (1), 0x3C00)}, 0,
                          NULL, 3, (void *[]){out8, outf, out8}, NULL),
                   "DynamicQuantizeLinear", "x");
  OH_CHECK_REFUSED(
      oh_run("MatMulInteger", 2, (oh_value[]){OH_I16(2, (1, 1), 1), OH_I8(2, (1, 1), 1)}, 0, NULL,
             1, (void *[]){out32}, NULL),
      "MatMulInteger", "A");
  OH_CHECK_REFUSED(oh_run("MatMulInteger", 3,
                          (oh_value[]){OH_U8(2, (2, 1), 1, 2), OH_I8(2, (1, 1), 1),
                                       OH_CONST(OH_U8(1, (3), 1, 2, 3))},
                          0, NULL, 1, (void *[]){out32}, NULL),
                   "MatMulInteger",
                   "A's zero point has shape [3]; it must be a scalar or 1-D of 2");
  OH_CHECK_REFUSED(oh_run("MatMulInteger", 4,
                          (oh_value[]){OH_U8(2, (2, 1), 1, 2), OH_I8(2, (1, 1), 1),
                                       OH_CONST(OH_U8(0, (0), 1)), OH_CONST(OH_U8(0, (0), 1))},
                          0, NULL, 1, (void *[]){out32}, NULL),
                   "MatMulInteger", "B's zero point is uint8, its operand is int8");
  OH_CHECK_REFUSED(oh_run("QLinearMatMul", 8,
                          (oh_value[]){OH_U8(2, (1, 1), 1), OH_NONE, OH_NONE, OH_I8(2, (1, 1), 1),
                                       OH_CONST(OH_F32(0, (0), 1.0f)), OH_NONE,
                                       OH_CONST(OH_F32(0, (0), 1.0f)), OH_NONE},
                          0, NULL, 1, (void *[]){out8}, NULL),
                   "QLinearMatMul", "input 1 is missing");
  OH_CHECK_REFUSED(
      oh_run("QLinearMatMul", 9,
             (oh_value[]){OH_U8(2, (1, 1), 1), OH_CONST(OH_F32(0, (0), 1.0f)), OH_NONE,
                          OH_CONST(OH_I8(2, (1, 2), 1, 1)), OH_CONST(OH_F32(0, (0), 1.0f)), OH_NONE,
                          OH_CONST(OH_F32(0, (0), 1.0f)), OH_NONE, OH_CONST(OH_I32(1, (1), 5))},
             0, NULL, 1, (void *[]){out8}, NULL),
      "QLinearMatMul", "the bias must be a 1-D int32 tensor of 2 elements");
  OH_CHECK_REFUSED(
      oh_run("ConvInteger", 4,
             (oh_value[]){OH_U8(4, (1, 1, 1, 1), 1), OH_CONST(OH_I8(4, (2, 1, 1, 1), 1, 1)),
                          OH_NONE, OH_CONST(OH_I8(1, (3), 0, 0, 0))},
             0, NULL, 1, (void *[]){out32}, NULL),
      "ConvInteger", "w's zero point has shape [3]; it must be a scalar or 1-D of 2");
  OH_CHECK_REFUSED(
      oh_run("QLinearConv", 9,
             (oh_value[]){OH_U8(4, (1, 1, 1, 1), 9), OH_CONST(OH_F32(0, (0), 1.0f)),
                          OH_CONST(OH_U8(0, (0), 4)), OH_CONST(OH_I8(4, (1, 1, 1, 1), 1)),
                          OH_CONST(OH_F32(0, (0), 1.0f)), OH_CONST(OH_I8(0, (0), 0)),
                          OH_CONST(OH_F32(0, (0), 2.0f)), OH_CONST(OH_I8(0, (0), 1)),
                          OH_CONST(OH_F32(1, (1), 7.0f))},
             0, NULL, 1, (void *[]){out8}, NULL),
      "QLinearConv", "B must be a 1-D int32 tensor of 1 elements");
}

int main(void) {
  RUN_TEST(test_quantize_rounds_half_to_even_and_saturates);
  RUN_TEST(test_per_axis_and_blocked);
  RUN_TEST(test_dynamic_quantize);
  RUN_TEST(test_integer_products);
  RUN_TEST(test_integer_products_baseline);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
