/* Cast and CastLike on the CPU executor: rounding to float16/bfloat16, float to
 * integer truncation and saturation, bool, integer wrapping, refusals. */
#include "op_harness.h"

/* ONNX TensorProto.DataType numbers */
enum {
  ONNX_FLOAT = 1,
  ONNX_UINT8 = 2,
  ONNX_INT8 = 3,
  ONNX_INT32 = 6,
  ONNX_INT64 = 7,
  ONNX_STRING = 8,
  ONNX_BOOL = 9,
  ONNX_FLOAT16 = 10,
  ONNX_DOUBLE = 11,
  ONNX_BFLOAT16 = 16
};

static etrt_status cast(oh_value x, int to, void *y, oh_output *info) {
  return oh_run("Cast", 1, &x, 1, (etrt_attribute[]){OH_INT("to", to)}, 1, (void *[]){y}, info);
}

static void test_float_to_float16(void) {
  uint16_t y[11];
  oh_output info[1];
  CHECK_OK(cast(OH_F32(1, (11), 1.0f, 65504.0f, 65520.0f, 1.00048828125f /* 1 + 2^-11: tie */,
                       1.00146484375f /* 1 + 3*2^-11: tie, rounds up to even */,
                       5.9604644775390625e-8f /* 2^-24 */, 2.98023223876953125e-8f /* 2^-25 */,
                       -0.0f, NAN, -INFINITY, 0.333333333f),
                ONNX_FLOAT16, y, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT16);
  OH_CHECK_INTS(y, ((int[]){0x3C00, 0x7BFF, 0x7C00, 0x3C00, 0x3C02, 0x0001, 0x0000, 0x8000}), 8);
  CHECK((y[8] & 0x7C00) == 0x7C00 && (y[8] & 0x03FF) != 0); /* NaN stays NaN */
  CHECK_EQ_INT(y[9], 0xFC00);
  CHECK_EQ_INT(y[10], 0x3555);
}

static void test_double_to_float16_rounds_once(void) {
  /* 1 + 2^-11 + 2^-40: a float rounding would land on the tie 1 + 2^-11 and then
   * round to even (1.0); the correctly rounded half is 1 + 2^-10. */
  uint16_t y[2];
  CHECK_OK(cast(OH_F64(1, (2), 1.0 + ldexp(1, -11) + ldexp(1, -40), -2.0), ONNX_FLOAT16, y, NULL));
  OH_CHECK_INTS(y, ((int[]){0x3C01, 0xC000}), 2);
}

static void test_float16_to_others(void) {
  float y[4];
  CHECK_OK(cast(OH_HALF(1, (4), 0x3555, 0x0001, 0xFC00, 0x7BFF), ONNX_FLOAT, y, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0.333251953125, 5.9604644775390625e-8}), 2, 0);
  CHECK(isinf(y[2]) && y[2] < 0);
  CHECK(y[3] == 65504.0f);
  double d[1];
  CHECK_OK(cast(OH_HALF(1, (1), 0x3555), ONNX_DOUBLE, d, NULL));
  CHECK(d[0] == 0.333251953125);
}

static void test_bfloat16(void) {
  uint16_t y[4];
  /* 1.0; 1 + 2^-8 (tie, to even: 1.0); 1 + 3*2^-8 (tie, up); 3.0 */
  CHECK_OK(cast(OH_F32(1, (4), 1.0f, 1.00390625f, 1.01171875f, 3.0f), ONNX_BFLOAT16, y, NULL));
  OH_CHECK_INTS(y, ((int[]){0x3F80, 0x3F80, 0x3F82, 0x4040}), 4);
  float f[2];
  CHECK_OK(cast(OH_VALUE(OH_INPUT, ETRT_DTYPE_BFLOAT16, uint16_t, 1, (2), 0x3F80, 0xC0A0),
                ONNX_FLOAT, f, NULL));
  OH_CHECK_FLOATS(f, ((double[]){1.0, -5.0}), 2, 0);
}

static void test_float_to_integers(void) {
  int32_t y[6];
  CHECK_OK(cast(OH_F32(1, (6), 2.7f, -2.7f, 1e10f, -1e10f, NAN, -0.5f), ONNX_INT32, y, NULL));
  OH_CHECK_INTS(y, ((int32_t[]){2, -2, INT32_MAX, INT32_MIN, 0, 0}), 6);
  uint8_t u[3];
  CHECK_OK(cast(OH_F64(1, (3), 300.0, -4.0, 254.9), ONNX_UINT8, u, NULL));
  OH_CHECK_INTS(u, ((int[]){255, 0, 254}), 3);
  int64_t l[2];
  CHECK_OK(cast(OH_F64(1, (2), 1e30, 9007199254740993.0), ONNX_INT64, l, NULL));
  CHECK(l[0] == INT64_MAX);
  CHECK(l[1] == 9007199254740992LL);
}

static void test_integers_and_bool(void) {
  int8_t y[3];
  CHECK_OK(cast(OH_U8(1, (3), 200, 127, 0), ONNX_INT8, y, NULL)); /* wraps */
  OH_CHECK_INTS(y, ((int[]){-56, 127, 0}), 3);
  int64_t l[2];
  CHECK_OK(cast(OH_I32(1, (2), -5, INT32_MAX), ONNX_INT64, l, NULL));
  OH_CHECK_INTS(l, ((int64_t[]){-5, INT32_MAX}), 2);
  float f[1];
  CHECK_OK(cast(OH_I64(1, (1), (1LL << 53) + 1), ONNX_FLOAT, f, NULL));
  CHECK(f[0] == 9007199254740992.0f);
  uint8_t b[4];
  oh_output info[1];
  CHECK_OK(cast(OH_F32(1, (4), 0.0f, 0.5f, -2.0f, NAN), ONNX_BOOL, b, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_BOOL);
  OH_CHECK_INTS(b, ((int[]){0, 1, 1, 1}), 4);
  float fb[3];
  CHECK_OK(cast(OH_BOOL(1, (3), 1, 0, 1), ONNX_FLOAT, fb, NULL));
  OH_CHECK_FLOATS(fb, ((double[]){1, 0, 1}), 3, 0);
  int32_t same[2];
  CHECK_OK(cast(OH_I32(1, (2), 7, -7), ONNX_INT32, same, NULL));
  OH_CHECK_INTS(same, ((int[]){7, -7}), 2);
}

static void test_cast_like(void) {
  double d[2];
  oh_output info[1];
  CHECK_OK(oh_run("CastLike", 2, (oh_value[]){OH_F32(1, (2), 0.1f, -3.0f), OH_F64(0, (0), 0.0)}, 0,
                  NULL, 1, (void *[]){d}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT64);
  CHECK_EQ_INT(info[0].rank, 1);
  CHECK(d[0] == (double)0.1f && d[1] == -3.0);
  uint16_t h[1];
  CHECK_OK(oh_run("CastLike", 2, (oh_value[]){OH_F64(1, (1), 0.5), OH_HALF(1, (1), 0)}, 0, NULL, 1,
                  (void *[]){h}, NULL));
  CHECK_EQ_INT(h[0], 0x3800);
}

static void test_refusals(void) {
  float y[2];
  OH_CHECK_REFUSED(cast(OH_F32(1, (1), 1.0f), ONNX_STRING, y, NULL), "Cast", "8");
  OH_CHECK_REFUSED(cast(OH_F32(1, (1), 1.0f), 99, y, NULL), "Cast", "99");
  OH_CHECK_REFUSED(
      oh_run("Cast", 1, &(oh_value[]){OH_F32(1, (1), 1.0f)}[0], 0, NULL, 1, (void *[]){y}, NULL),
      "Cast", "'to'");
  OH_CHECK_REFUSED(oh_run("CastLike", 1, &(oh_value[]){OH_F32(1, (1), 1.0f)}[0], 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "CastLike", "2 inputs");
}

int main(void) {
  RUN_TEST(test_float_to_float16);
  RUN_TEST(test_double_to_float16_rounds_once);
  RUN_TEST(test_float16_to_others);
  RUN_TEST(test_bfloat16);
  RUN_TEST(test_float_to_integers);
  RUN_TEST(test_integers_and_bool);
  RUN_TEST(test_cast_like);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
