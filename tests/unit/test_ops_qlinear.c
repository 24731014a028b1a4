/* onnxruntime's quantized elementwise operators on the CPU executor (ops/qlinear.h):
 * QLinearAdd's fused multiply-adds with the scale ratios, QLinearMul's product times one
 * ratio, QLinearSoftmax's exponential table and floor(1 / y_scale), rounding half to
 * even and saturation, and every refusal naming the op. Bit-identity with onnxruntime
 * is checked by tests/python_pkg/test_pkg_quantized.py. */
#include "op_harness.h"

static uint8_t out8[64];

static void test_qlinear_add(void) {
  /* ratios 0.5 and 0.25, zero points 0: a / 2 + b / 4, half to even. */
  oh_value in[8] = {OH_U8(1, (5), 3, 1, 5, 7, 255),  OH_CONST(OH_F32(0, (0), 0.5f)),
                    OH_CONST(OH_U8(0, (0), 0)),      OH_U8(1, (5), 2, 2, 0, 0, 255),
                    OH_CONST(OH_F32(0, (0), 0.25f)), OH_CONST(OH_U8(0, (0), 0)),
                    OH_CONST(OH_F32(0, (0), 1.0f)),  OH_CONST(OH_U8(0, (0), 0))};
  CHECK_OK(oh_run("QLinearAdd", 8, in, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){2, 1, 2, 4, 191}), 5);
  /* A one-element b is folded into the fixed part: (a - 10) / 2 + (b - 4) / 4 + 100,
   * the last 224.5 rounded to even. */
  oh_value folded[8] = {OH_U8(1, (4), 10, 14, 0, 255),   OH_CONST(OH_F32(0, (0), 0.5f)),
                        OH_CONST(OH_U8(0, (0), 10)),     OH_U8(1, (1), 12),
                        OH_CONST(OH_F32(0, (0), 0.25f)), OH_CONST(OH_U8(0, (0), 4)),
                        OH_CONST(OH_F32(0, (0), 1.0f)),  OH_CONST(OH_U8(0, (0), 100))};
  CHECK_OK(oh_run("QLinearAdd", 8, folded, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){102, 104, 97, 224}), 4);
}

static void test_qlinear_mul(void) {
  /* ratio 0.5 * 0.5 / 0.25 = 1: (a - 10)(b - 10) + 5, saturated to uint8. */
  oh_value in[8] = {OH_U8(1, (3), 12, 0, 0),         OH_CONST(OH_F32(0, (0), 0.5f)),
                    OH_CONST(OH_U8(0, (0), 10)),     OH_U8(1, (3), 13, 0, 255),
                    OH_CONST(OH_F32(0, (0), 0.5f)),  OH_CONST(OH_U8(0, (0), 10)),
                    OH_CONST(OH_F32(0, (0), 0.25f)), OH_CONST(OH_U8(0, (0), 5))};
  CHECK_OK(oh_run("QLinearMul", 8, in, 0, NULL, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){11, 105, 0}), 3);
}

static void test_qlinear_softmax(void) {
  /* Equal inputs share the row evenly: 256 / 2 and 256 / 4 with y_scale 1/256; the
   * other row's largest input takes nearly all of it with a coarse x_scale. */
  etrt_attribute attrs[2] = {OH_INT("opset", 13), OH_INT("axis", -1)};
  oh_value in[5] = {OH_U8(2, (2, 4), 7, 7, 7, 7, 0, 0, 0, 200), OH_CONST(OH_F32(0, (0), 0.5f)),
                    OH_CONST(OH_U8(0, (0), 0)), OH_CONST(OH_F32(0, (0), 1.0f / 256.0f)),
                    OH_CONST(OH_U8(0, (0), 0))};
  CHECK_OK(oh_run("QLinearSoftmax", 5, in, 2, attrs, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){64, 64, 64, 64, 0, 0, 0, 255}), 8);
  oh_value pair[5] = {OH_U8(1, (2), 9, 9), OH_CONST(OH_F32(0, (0), 0.5f)),
                      OH_CONST(OH_U8(0, (0), 0)), OH_CONST(OH_F32(0, (0), 1.0f / 256.0f)),
                      OH_CONST(OH_U8(0, (0), 0))};
  CHECK_OK(oh_run("QLinearSoftmax", 5, pair, 2, attrs, 1, (void *[]){out8}, NULL));
  OH_CHECK_INTS(out8, ((int[]){128, 128}), 2);
}

static void test_refusals(void) {
  oh_value mixed[8] = {OH_U8(1, (2), 1, 2),
                       OH_CONST(OH_F32(0, (0), 0.5f)),
                       OH_CONST(OH_U8(0, (0), 0)),
                       OH_I8(1, (2), 1, 2),
                       OH_CONST(OH_F32(0, (0), 0.5f)),
                       OH_CONST(OH_I8(0, (0), 0)),
                       OH_CONST(OH_F32(0, (0), 1.0f)),
                       OH_CONST(OH_U8(0, (0), 0))};
  OH_CHECK_REFUSED(oh_run("QLinearAdd", 8, mixed, 0, NULL, 1, (void *[]){out8}, NULL), "QLinearAdd",
                   "b is int8, a is uint8");
  oh_value per_axis[8] = {OH_U8(1, (2), 1, 2),
                          OH_CONST(OH_F32(1, (2), 0.5f, 0.25f)),
                          OH_CONST(OH_U8(0, (0), 0)),
                          OH_U8(1, (2), 1, 2),
                          OH_CONST(OH_F32(0, (0), 0.5f)),
                          OH_CONST(OH_U8(0, (0), 0)),
                          OH_CONST(OH_F32(0, (0), 1.0f)),
                          OH_CONST(OH_U8(0, (0), 0))};
  OH_CHECK_REFUSED(oh_run("QLinearMul", 8, per_axis, 0, NULL, 1, (void *[]){out8}, NULL),
                   "QLinearMul",
                   "a_scale (input 1) has 2 elements; only one (per tensor) is supported");
  OH_CHECK_REFUSED(oh_run("QLinearAdd", 3, mixed, 0, NULL, 1, (void *[]){out8}, NULL), "QLinearAdd",
                   "takes a, a_scale, a_zero_point, b, b_scale, b_zero_point");
  oh_value sm[5] = {OH_U8(1, (2), 9, 9), OH_CONST(OH_F32(0, (0), 0.5f)), OH_CONST(OH_U8(0, (0), 0)),
                    OH_CONST(OH_F32(0, (0), 1.0f / 256.0f)), OH_CONST(OH_U8(0, (0), 0))};
  OH_CHECK_REFUSED(oh_run("QLinearSoftmax", 5, sm, 0, NULL, 1, (void *[]){out8}, NULL),
                   "QLinearSoftmax", "takes a positive int attribute 'opset'");
  oh_value sm_scale[5] = {OH_U8(1, (2), 9, 9), OH_CONST(OH_U8(0, (0), 1)),
                          OH_CONST(OH_U8(0, (0), 0)), OH_CONST(OH_F32(0, (0), 1.0f / 256.0f)),
                          OH_CONST(OH_U8(0, (0), 0))};
  etrt_attribute opset = OH_INT("opset", 13);
  OH_CHECK_REFUSED(oh_run("QLinearSoftmax", 5, sm_scale, 1, &opset, 1, (void *[]){out8}, NULL),
                   "QLinearSoftmax", "x_scale (input 1) is uint8, not float32");
}

int main(void) {
  RUN_TEST(test_qlinear_add);
  RUN_TEST(test_qlinear_mul);
  RUN_TEST(test_qlinear_softmax);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
