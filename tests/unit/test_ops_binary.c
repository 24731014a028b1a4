/* The broadcasting operations beyond Add/Sub/Mul/Div on the CPU executor: Pow, Mod,
 * PRelu, BitShift, Bitwise*, And/Or/Xor, the comparisons, the variadic Max/Min/Sum/
 * Mean, and Where. */
#include "op_harness.h"

static etrt_status binary(const char *op, oh_value a, oh_value b, void *y, oh_output *info) {
  return oh_run(op, 2, (oh_value[]){a, b}, 0, NULL, 1, (void *[]){y}, info);
}

static void test_pow(void) {
  float y[6];
  oh_output info[1];
  /* [2, 3] ** [3] */
  CHECK_OK(binary("Pow", OH_F32(2, (2, 3), 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f),
                  OH_F32(1, (3), 2.0f, 0.5f, -1.0f), y, info));
  CHECK_EQ_INT(info[0].rank, 2);
  OH_CHECK_FLOATS(y, ((double[]){1, sqrt(2.0), 1 / 3.0, 16, sqrt(5.0), 1 / 6.0}), 6, 1e-6);
  int32_t yi[5];
  CHECK_OK(
      binary("Pow", OH_I32(1, (5), 3, 2, -1, -1, 7), OH_I32(1, (5), 5, -1, -3, 2, 0), yi, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){243, 0, -1, 1, 1}), 5);
  int64_t yl[2];
  CHECK_OK(binary("Pow", OH_I64(1, (2), 3, -2), OH_I64(1, (2), 39, 63), yl, NULL));
  CHECK(yl[0] == 4052555153018976267LL); /* 3^39, exact: no trip through double */
  CHECK(yl[1] == INT64_MIN);
  /* mixed dtypes: float base, integer exponent; integer base, float exponent */
  CHECK_OK(binary("Pow", OH_F32(1, (3), 2.0f, -3.0f, 0.5f), OH_I64(1, (3), 10, 3, -2), y, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT32);
  OH_CHECK_FLOATS(y, ((double[]){1024, -27, 4}), 3, 0);
  CHECK_OK(binary("Pow", OH_I32(1, (3), 4, 2, 9), OH_F32(1, (3), 1.5f, 0.5f, 0.5f), yi, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT32);
  OH_CHECK_INTS(yi, ((int32_t[]){8, 1, 3}), 3);
  /* a square is a product, bit for bit pow's, special values included */
  float sq[6];
  CHECK_OK(binary("Pow", OH_F32(1, (6), -3.1f, 1e20f, 1e-30f, -INFINITY, NAN, 7.000001f),
                  OH_F32(1, (1), 2.0f), sq, info));
  const float base[6] = {-3.1f, 1e20f, 1e-30f, -INFINITY, NAN, 7.000001f};
  for (int i = 0; i < 6; ++i) {
    float want = (float)pow((double)base[i], 2.0);
    CHECK(memcmp(&sq[i], &want, sizeof want) == 0 || (isnan(sq[i]) && isnan(want)));
  }
}

static void test_mod(void) {
  int32_t y[6];
  oh_value a = OH_I32(1, (6), -4, 4, -4, 4, 7, 5);
  oh_value b = OH_I32(1, (6), 3, -3, -3, 3, 0, 5);
  CHECK_OK(binary("Mod", a, b, y, NULL)); /* the divisor's sign; x % 0 gives 0 */
  OH_CHECK_INTS(y, ((int32_t[]){2, -2, -1, 1, 0, 0}), 6);
  CHECK_OK(oh_run("Mod", 2, (oh_value[]){a, b}, 1, (etrt_attribute[]){OH_INT("fmod", 1)}, 1,
                  (void *[]){y}, NULL)); /* the dividend's sign */
  OH_CHECK_INTS(y, ((int32_t[]){-1, 1, -1, 1, 0, 0}), 6);
  int64_t yl[1];
  CHECK_OK(binary("Mod", OH_I64(1, (1), INT64_MIN), OH_I64(1, (1), -1), yl, NULL));
  CHECK(yl[0] == 0);
  uint8_t yu[2];
  CHECK_OK(binary("Mod", OH_U8(1, (2), 250, 7), OH_U8(0, (0), 7), yu, NULL));
  OH_CHECK_INTS(yu, ((int[]){5, 0}), 2);
  float yf[3];
  CHECK_OK(oh_run("Mod", 2, (oh_value[]){OH_F32(1, (3), -4.5f, 4.5f, 5.0f), OH_F32(0, (0), 2.0f)},
                  1, (etrt_attribute[]){OH_INT("fmod", 1)}, 1, (void *[]){yf}, NULL));
  OH_CHECK_FLOATS(yf, ((double[]){-0.5, 0.5, 1.0}), 3, 0);
}

static void test_prelu(void) {
  /* x [1, 2, 2, 2], slope [2, 1, 1] (per channel) */
  float y[8];
  oh_output info[1];
  CHECK_OK(binary("PRelu", OH_F32(4, (1, 2, 2, 2), -1, 2, -3, 4, -1, 2, -3, 4),
                  OH_F32(3, (2, 1, 1), 0.5f, 0.25f), y, info));
  CHECK_EQ_INT(info[0].rank, 4);
  OH_CHECK_FLOATS(y, ((double[]){-0.5, 2, -1.5, 4, -0.25, 2, -0.75, 4}), 8, 0);
  /* a 1-D slope of the channel count that does not broadcast: per channel (opset 6) */
  CHECK_OK(binary("PRelu", OH_F32(3, (1, 2, 3), -1, 2, -3, -4, 5, -6), OH_F32(1, (2), 0.5f, 0.25f),
                  y, info));
  OH_CHECK_FLOATS(y, ((double[]){-0.5, 2, -1.5, -1, 5, -1.5}), 6, 0);
  OH_CHECK_REFUSED(
      binary("PRelu", OH_F32(1, (2), 1.0f, 2.0f), OH_F32(1, (3), 1.0f, 2.0f, 3.0f), y, NULL),
      "PRelu", "slope");
  OH_CHECK_REFUSED(
      binary("PRelu", OH_F32(1, (2), 1.0f, 2.0f), OH_F32(2, (2, 2), 1, 2, 3, 4), y, NULL), "PRelu",
      "slope");
}

static void test_bit_operations(void) {
  uint8_t y[4];
  oh_value a = OH_U8(1, (4), 1, 16, 255, 3);
  oh_value b = OH_U8(1, (4), 7, 2, 8, 1);
  CHECK_OK(oh_run("BitShift", 2, (oh_value[]){a, b}, 1,
                  (etrt_attribute[]){OH_STRING("direction", "LEFT")}, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){128, 64, 0, 6}), 4);
  CHECK_OK(oh_run("BitShift", 2, (oh_value[]){a, b}, 1,
                  (etrt_attribute[]){OH_STRING("direction", "RIGHT")}, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 4, 0, 1}), 4);
  uint64_t y64[1];
  CHECK_OK(oh_run("BitShift", 2, (oh_value[]){OH_U64(1, (1), 1), OH_U64(1, (1), 63)}, 1,
                  (etrt_attribute[]){OH_STRING("direction", "LEFT")}, 1, (void *[]){y64}, NULL));
  CHECK(y64[0] == (1ULL << 63));
  int32_t yi[3];
  oh_value c = OH_I32(1, (3), 12, -1, 5);
  oh_value d = OH_I32(1, (3), 10, 6, -2);
  CHECK_OK(binary("BitwiseAnd", c, d, yi, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){8, 6, 4}), 3);
  CHECK_OK(binary("BitwiseOr", c, d, yi, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){14, -1, -1}), 3);
  CHECK_OK(binary("BitwiseXor", c, d, yi, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){6, -7, -5}), 3);
  OH_CHECK_REFUSED(
      oh_run("BitShift", 2, (oh_value[]){c, d}, 1,
             (etrt_attribute[]){OH_STRING("direction", "LEFT")}, 1, (void *[]){yi}, NULL),
      "BitShift", "int32");
  OH_CHECK_REFUSED(binary("BitShift", a, b, y, NULL), "BitShift", "direction");
  OH_CHECK_REFUSED(binary("BitwiseAnd", OH_F32(1, (1), 1.0f), OH_F32(1, (1), 1.0f), y, NULL),
                   "BitwiseAnd", "float32");
}

static void test_logic_and_comparisons(void) {
  uint8_t y[6];
  oh_output info[1];
  /* [2, 1] with [3]: broadcast to [2, 3] */
  oh_value p = OH_BOOL(2, (2, 1), 1, 0);
  oh_value q = OH_BOOL(1, (3), 1, 0, 1);
  CHECK_OK(binary("And", p, q, y, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(info[0].dims[1], 3);
  OH_CHECK_INTS(y, ((int[]){1, 0, 1, 0, 0, 0}), 6);
  CHECK_OK(binary("Or", p, q, y, NULL));
  OH_CHECK_INTS(y, ((int[]){1, 1, 1, 1, 0, 1}), 6);
  CHECK_OK(binary("Xor", p, q, y, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 1, 0, 1, 0, 1}), 6);
  CHECK_OK(binary("Equal", p, q, y, NULL));
  OH_CHECK_INTS(y, ((int[]){1, 0, 1, 0, 1, 0}), 6);

  oh_value a = OH_F32(2, (2, 3), 1.0f, 2.0f, 3.0f, NAN, -1.0f, 2.0f);
  oh_value b = OH_F32(1, (3), 2.0f, 2.0f, 2.0f);
  CHECK_OK(binary("Less", a, b, y, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_BOOL);
  OH_CHECK_INTS(y, ((int[]){1, 0, 0, 0, 1, 0}), 6);
  CHECK_OK(binary("LessOrEqual", a, b, y, NULL));
  OH_CHECK_INTS(y, ((int[]){1, 1, 0, 0, 1, 1}), 6);
  CHECK_OK(binary("Greater", a, b, y, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 0, 1, 0, 0, 0}), 6);
  CHECK_OK(binary("GreaterOrEqual", a, b, y, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 1, 1, 0, 0, 1}), 6);
  CHECK_OK(binary("Equal", a, b, y, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 1, 0, 0, 0, 1}), 6);
  CHECK_OK(binary("Equal", OH_I64(1, (2), INT64_MAX, INT64_MAX - 1), OH_I64(0, (0), INT64_MAX), y,
                  NULL)); /* exact: no trip through double */
  OH_CHECK_INTS(y, ((int[]){1, 0}), 2);
  CHECK_OK(binary("Less", OH_U64(1, (1), UINT64_MAX), OH_U64(1, (1), 1), y, NULL));
  CHECK_EQ_INT(y[0], 0);

  OH_CHECK_REFUSED(binary("And", a, b, y, NULL), "And", "float32");
  OH_CHECK_REFUSED(binary("Less", p, q, y, NULL), "Less", "bool");
  OH_CHECK_REFUSED(binary("Equal", a, OH_F64(1, (1), 1.0), y, NULL), "Equal", "float64");
  OH_CHECK_REFUSED(binary("Equal", a, OH_F32(1, (4), 1.0f, 2.0f, 3.0f, 4.0f), y, NULL), "Equal",
                   "broadcast");
}

static void test_variadic(void) {
  float y[6];
  oh_output info[1];
  oh_value a = OH_F32(2, (2, 3), 1.0f, 5.0f, 3.0f, NAN, -1.0f, 2.0f);
  oh_value b = OH_F32(1, (3), 2.0f, 2.0f, 2.0f);
  oh_value c = OH_F32(2, (2, 1), 4.0f, -4.0f);
  CHECK_OK(oh_run("Max", 3, (oh_value[]){a, b, c}, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  OH_CHECK_FLOATS(y, ((double[]){4, 5, 4, NAN, 2, 2}), 6, 0);
  CHECK_OK(oh_run("Min", 3, (oh_value[]){a, b, c}, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 2, NAN, -4, -4}), 6, 0);
  CHECK_OK(oh_run("Sum", 3, (oh_value[]){a, b, c}, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){7, 11, 9, NAN, -3, 0}), 6, 0);
  CHECK_OK(oh_run("Mean", 3, (oh_value[]){a, b, c}, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){7 / 3.0, 11 / 3.0, 3, NAN, -1, 0}), 6, 1e-6);
  CHECK_OK(oh_run("Mean", 1, &b, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){2, 2, 2}), 3, 0);
  /* integers: exact at the extremes */
  uint64_t yu[2];
  CHECK_OK(oh_run("Max", 2,
                  (oh_value[]){OH_U64(1, (2), UINT64_MAX, 3), OH_U64(1, (2), 1, UINT64_MAX - 1)}, 0,
                  NULL, 1, (void *[]){yu}, NULL));
  CHECK(yu[0] == UINT64_MAX && yu[1] == UINT64_MAX - 1);
  int8_t y8[2];
  CHECK_OK(oh_run("Min", 2, (oh_value[]){OH_I8(1, (2), -128, 5), OH_I8(0, (0), 0)}, 0, NULL, 1,
                  (void *[]){y8}, NULL));
  OH_CHECK_INTS(y8, ((int[]){-128, 0}), 2);
  OH_CHECK_REFUSED(oh_run("Sum", 2, (oh_value[]){OH_I32(1, (1), 1), OH_I32(1, (1), 2)}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "Sum", "int32");
  OH_CHECK_REFUSED(
      oh_run("Max", 2, (oh_value[]){a, OH_F64(1, (1), 1.0)}, 0, NULL, 1, (void *[]){y}, NULL),
      "Max", "float64");
}

static void test_where(void) {
  /* condition [2, 1], X [1, 3], Y scalar: output [2, 3] */
  int64_t y[6];
  oh_output info[1];
  CHECK_OK(
      oh_run("Where", 3,
             (oh_value[]){OH_BOOL(2, (2, 1), 1, 0), OH_I64(2, (1, 3), 1, 2, 3), OH_I64(0, (0), -9)},
             0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[1], 3);
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT64);
  OH_CHECK_INTS(y, ((int64_t[]){1, 2, 3, -9, -9, -9}), 6);
  uint16_t h[2];
  CHECK_OK(oh_run("Where", 3,
                  (oh_value[]){OH_BOOL(1, (2), 0, 1), OH_HALF(1, (2), 0x3C00, 0x4000),
                               OH_HALF(1, (2), 0xBC00, 0xC000)},
                  0, NULL, 1, (void *[]){h}, NULL));
  OH_CHECK_INTS(h, ((int[]){0xBC00, 0x4000}), 2);
  OH_CHECK_REFUSED(
      oh_run("Where", 3, (oh_value[]){OH_I32(1, (1), 1), OH_I64(1, (1), 1), OH_I64(1, (1), 2)}, 0,
             NULL, 1, (void *[]){y}, NULL),
      "Where", "int32");
  OH_CHECK_REFUSED(
      oh_run("Where", 3, (oh_value[]){OH_BOOL(1, (1), 1), OH_I64(1, (1), 1), OH_I32(1, (1), 2)}, 0,
             NULL, 1, (void *[]){y}, NULL),
      "Where", "one dtype");
}

int main(void) {
  RUN_TEST(test_pow);
  RUN_TEST(test_mod);
  RUN_TEST(test_prelu);
  RUN_TEST(test_bit_operations);
  RUN_TEST(test_logic_and_comparisons);
  RUN_TEST(test_variadic);
  RUN_TEST(test_where);
  return TEST_EXIT();
}
