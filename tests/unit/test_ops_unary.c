/* The one-input elementwise operations (math, activations, Clip) on the CPU
 * executor, against references computed here in double. */
#include <math.h>

#include "op_harness.h"

static const float kInputs[6] = {-2.5f, -0.75f, -0.0f, 0.3f, 0.9f, 3.25f};

typedef double (*ref_fn)(double);
static double ref_sigmoid(double v) { return 1 / (1 + exp(-v)); }
static double ref_neg(double v) { return -v; }
static double ref_reciprocal(double v) { return 1 / v; }
static double ref_softplus(double v) { return log(exp(v) + 1); }
static double ref_softsign(double v) { return v / (1 + fabs(v)); }
static double ref_sign(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }
static double ref_hardswish(double v) { return v * fmax(0, fmin(1, v / 6 + 0.5)); }
static double ref_mish(double v) { return v * tanh(log1p(exp(v))); }
static double ref_gelu(double v) { return 0.5 * v * (1 + erf(v / sqrt(2.0))); }
static double ref_selu(double v) {
  const double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
  return v <= 0 ? gamma * (alpha * exp(v) - alpha) : gamma * v;
}

/* op(x) for the six inputs (clamped into the op's domain by `lo`/`hi`). */
static void check_float_op(const char *op, ref_fn ref, double lo, double hi) {
  float x[6], y[6];
  double want[6];
  for (int i = 0; i < 6; ++i) {
    x[i] = (float)fmin(hi, fmax(lo, kInputs[i]));
    want[i] = ref((double)x[i]);
  }
  oh_value in = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 2, .dims = {2, 3}, .data = x};
  oh_output info[1];
  etrt_status s = oh_run(op, 1, &in, 0, NULL, 1, (void *[]){y}, info);
  if (s != ETRT_OK) {
    etrt_test_fail(__FILE__, __LINE__, "%s: %s", op, etrt_last_error());
    return;
  }
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[1], 3);
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT32);
  for (int i = 0; i < 6; ++i) {
    if (!(fabs(y[i] - want[i]) <= 1e-5 + 1e-5 * fabs(want[i])))
      etrt_test_fail(__FILE__, __LINE__, "%s(%g) = %.9g, want %.9g", op, x[i], y[i], want[i]);
  }
}

static void test_float_math(void) {
  check_float_op("Abs", fabs, -1e9, 1e9);
  check_float_op("Neg", ref_neg, -1e9, 1e9);
  check_float_op("Ceil", ceil, -1e9, 1e9);
  check_float_op("Floor", floor, -1e9, 1e9);
  check_float_op("Sqrt", sqrt, 0.01, 1e9);
  check_float_op("Reciprocal", ref_reciprocal, 0.1, 1e9);
  check_float_op("Exp", exp, -1e9, 1e9);
  check_float_op("Log", log, 0.01, 1e9);
  check_float_op("Sin", sin, -1e9, 1e9);
  check_float_op("Cos", cos, -1e9, 1e9);
  check_float_op("Tan", tan, -1e9, 1e9);
  check_float_op("Asin", asin, -0.99, 0.99);
  check_float_op("Acos", acos, -0.99, 0.99);
  check_float_op("Atan", atan, -1e9, 1e9);
  check_float_op("Sinh", sinh, -1e9, 1e9);
  check_float_op("Cosh", cosh, -1e9, 1e9);
  check_float_op("Tanh", tanh, -1e9, 1e9);
  check_float_op("Asinh", asinh, -1e9, 1e9);
  check_float_op("Acosh", acosh, 1.01, 1e9);
  check_float_op("Atanh", atanh, -0.99, 0.99);
  check_float_op("Erf", erf, -1e9, 1e9);
  check_float_op("Sign", ref_sign, -1e9, 1e9);
}

static void test_activations(void) {
  check_float_op("Sigmoid", ref_sigmoid, -1e9, 1e9);
  check_float_op("Softplus", ref_softplus, -1e9, 1e9);
  check_float_op("Softsign", ref_softsign, -1e9, 1e9);
  check_float_op("HardSwish", ref_hardswish, -1e9, 1e9);
  check_float_op("Mish", ref_mish, -1e9, 1e9);
  check_float_op("Gelu", ref_gelu, -1e9, 1e9);
  check_float_op("Selu", ref_selu, -1e9, 1e9);
}

static void test_activation_attributes(void) {
  float y[4];
  oh_value x = OH_F32(1, (4), -2.0f, -0.5f, 0.5f, 3.0f);
  CHECK_OK(oh_run("LeakyRelu", 1, &x, 1, (etrt_attribute[]){OH_FLOAT("alpha", 0.1f)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-0.2, -0.05, 0.5, 3.0}), 4, 1e-6);
  CHECK_OK(oh_run("LeakyRelu", 1, &x, 0, NULL, 1, (void *[]){y}, NULL)); /* alpha 0.01 */
  OH_CHECK_FLOATS(y, ((double[]){-0.02, -0.005, 0.5, 3.0}), 4, 1e-6);
  CHECK_OK(oh_run("HardSigmoid", 1, &x, 2,
                  (etrt_attribute[]){OH_FLOAT("alpha", 0.5f), OH_FLOAT("beta", 0.6f)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0.0, 0.35, 0.85, 1.0}), 4, 1e-6);
  CHECK_OK(
      oh_run("Elu", 1, &x, 1, (etrt_attribute[]){OH_FLOAT("alpha", 2.0f)}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){2 * (exp(-2.0) - 1), 2 * (exp(-0.5) - 1), 0.5, 3.0}), 4, 1e-6);
  CHECK_OK(oh_run("Celu", 1, &x, 1, (etrt_attribute[]){OH_FLOAT("alpha", 2.0f)}, 1, (void *[]){y},
                  NULL));
  OH_CHECK_FLOATS(y, ((double[]){2 * (exp(-1.0) - 1), 2 * (exp(-0.25) - 1), 0.5, 3.0}), 4, 1e-6);
  CHECK_OK(oh_run("ThresholdedRelu", 1, &x, 1, (etrt_attribute[]){OH_FLOAT("alpha", 0.5f)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0, 0, 0, 3.0}), 4, 0);
  CHECK_OK(oh_run("Shrink", 1, &x, 2,
                  (etrt_attribute[]){OH_FLOAT("lambd", 1.0f), OH_FLOAT("bias", 0.25f)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-1.75, 0, 0, 2.75}), 4, 0);
  CHECK_OK(oh_run("Gelu", 1, &x, 1, (etrt_attribute[]){OH_STRING("approximate", "tanh")}, 1,
                  (void *[]){y}, NULL));
  double want[4];
  const double xs[4] = {-2.0, -0.5, 0.5, 3.0};
  for (int i = 0; i < 4; ++i)
    want[i] = 0.5 * xs[i] * (1 + tanh(sqrt(2 / M_PI) * (xs[i] + 0.044715 * pow(xs[i], 3))));
  OH_CHECK_FLOATS(y, want, 4, 1e-6);
  /* extreme inputs: no overflow to NaN */
  oh_value big = OH_F32(1, (2), -100.0f, 100.0f);
  CHECK_OK(oh_run("Sigmoid", 1, &big, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0.0, 1.0}), 2, 1e-30);
  CHECK_OK(oh_run("Softplus", 1, &big, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0.0, 100.0}), 2, 1e-30);
}

static void test_round_half_to_even(void) {
  float y[8];
  oh_value x = OH_F32(1, (8), 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, 3.5f);
  CHECK_OK(oh_run("Round", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0, 2, 2, -0.0, -2, 2, -3, 4}), 8, 0);
}

static void test_nan_inf_tests(void) {
  uint8_t y[5];
  oh_value x = OH_F32(1, (5), NAN, INFINITY, -INFINITY, 1.0f, -0.0f);
  oh_output info[1];
  CHECK_OK(oh_run("IsNaN", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_BOOL);
  OH_CHECK_INTS(y, ((int[]){1, 0, 0, 0, 0}), 5);
  CHECK_OK(oh_run("IsInf", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 1, 1, 0, 0}), 5);
  CHECK_OK(oh_run("IsInf", 1, &x, 1, (etrt_attribute[]){OH_INT("detect_negative", 0)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 1, 0, 0, 0}), 5);
  CHECK_OK(oh_run("IsInf", 1, &x, 1, (etrt_attribute[]){OH_INT("detect_positive", 0)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0, 0, 1, 0, 0}), 5);
}

static void test_integers_and_bools(void) {
  int32_t y32[4];
  oh_value x32 = OH_I32(1, (4), INT32_MIN, -7, 0, 9);
  CHECK_OK(oh_run("Abs", 1, &x32, 0, NULL, 1, (void *[]){y32}, NULL));
  OH_CHECK_INTS(y32, ((int32_t[]){INT32_MIN, 7, 0, 9}), 4); /* wraps, as two's complement does */
  CHECK_OK(oh_run("Neg", 1, &x32, 0, NULL, 1, (void *[]){y32}, NULL));
  OH_CHECK_INTS(y32, ((int32_t[]){INT32_MIN, 7, 0, -9}), 4);
  CHECK_OK(oh_run("Sign", 1, &x32, 0, NULL, 1, (void *[]){y32}, NULL));
  OH_CHECK_INTS(y32, ((int32_t[]){-1, -1, 0, 1}), 4);
  int64_t y64[3];
  oh_value x64 = OH_I64(1, (3), INT64_MIN + 1, -3, 4);
  CHECK_OK(oh_run("Abs", 1, &x64, 0, NULL, 1, (void *[]){y64}, NULL));
  OH_CHECK_INTS(y64, ((int64_t[]){INT64_MAX, 3, 4}), 3);
  uint8_t yu[3];
  oh_value xu = OH_U8(1, (3), 0, 5, 255);
  CHECK_OK(oh_run("BitwiseNot", 1, &xu, 0, NULL, 1, (void *[]){yu}, NULL));
  OH_CHECK_INTS(yu, ((int[]){255, 250, 0}), 3);
  CHECK_OK(oh_run("Abs", 1, &xu, 0, NULL, 1, (void *[]){yu}, NULL));
  OH_CHECK_INTS(yu, ((int[]){0, 5, 255}), 3);
  uint8_t yb[3];
  oh_value xb = OH_BOOL(1, (3), 1, 0, 1);
  CHECK_OK(oh_run("Not", 1, &xb, 0, NULL, 1, (void *[]){yb}, NULL));
  OH_CHECK_INTS(yb, ((int[]){0, 1, 0}), 3);
  CHECK_OK(oh_run("Identity", 1, &xb, 0, NULL, 1, (void *[]){yb}, NULL));
  OH_CHECK_INTS(yb, ((int[]){1, 0, 1}), 3);
}

static void test_float16(void) {
  /* -1.5, 4, 0.25 as float16 bits */
  uint16_t y[3];
  oh_value x = OH_HALF(1, (3), 0xBE00, 0x4400, 0x3400);
  CHECK_OK(oh_run("Abs", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0x3E00, 0x4400, 0x3400}), 3);
  CHECK_OK(oh_run("Sqrt", 1, &(oh_value[]){OH_HALF(1, (3), 0x4400, 0x3400, 0x3C00)}[0], 0, NULL, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0x4000, 0x3800, 0x3C00}), 3); /* 2, 0.5, 1 */
  CHECK_OK(oh_run("Neg", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){0x3E00, 0xC400, 0xB400}), 3);
}

static void test_clip(void) {
  float y[5];
  oh_value x = OH_F32(1, (5), -3.0f, -1.0f, 0.0f, 1.0f, 3.0f);
  /* bounds as runtime inputs */
  CHECK_OK(oh_run("Clip", 3, (oh_value[]){x, OH_F32(0, (0), -1.5f), OH_F32(0, (0), 2.0f)}, 0, NULL,
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-1.5, -1, 0, 1, 2}), 5, 0);
  /* only max, as a constant; min omitted */
  CHECK_OK(oh_run("Clip", 3, (oh_value[]){x, OH_NONE, OH_CONST(OH_F32(0, (0), 0.5f))}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-3, -1, 0, 0.5, 0.5}), 5, 0);
  /* min > max: every element becomes max */
  CHECK_OK(oh_run("Clip", 3, (oh_value[]){x, OH_F32(0, (0), 2.0f), OH_F32(0, (0), 1.0f)}, 0, NULL,
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 1, 1, 1, 1}), 5, 0);
  /* opset 6: attributes */
  CHECK_OK(oh_run("Clip", 1, &x, 2,
                  (etrt_attribute[]){OH_FLOAT("min", -0.5f), OH_FLOAT("max", 0.5f)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-0.5, -0.5, 0, 0.5, 0.5}), 5, 0);
  /* no bounds at all */
  CHECK_OK(oh_run("Clip", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-3, -1, 0, 1, 3}), 5, 0);
  /* int8 with a max only */
  int8_t y8[4];
  CHECK_OK(oh_run("Clip", 3,
                  (oh_value[]){OH_I8(1, (4), -128, -5, 5, 127), OH_NONE, OH_I8(0, (0), 0)}, 0, NULL,
                  1, (void *[]){y8}, NULL));
  OH_CHECK_INTS(y8, ((int[]){-128, -5, 0, 0}), 4);
}

static void test_refusals(void) {
  int32_t y[4];
  oh_value x32 = OH_I32(1, (4), 1, 2, 3, 4);
  OH_CHECK_REFUSED(oh_run("Exp", 1, &x32, 0, NULL, 1, (void *[]){y}, NULL), "Exp", "int32");
  OH_CHECK_REFUSED(oh_run("Sigmoid", 1, &x32, 0, NULL, 1, (void *[]){y}, NULL), "Sigmoid", "int32");
  OH_CHECK_REFUSED(
      oh_run("Neg", 1, &(oh_value[]){OH_U8(1, (1), 1)}[0], 0, NULL, 1, (void *[]){y}, NULL), "Neg",
      "uint8");
  OH_CHECK_REFUSED(oh_run("Not", 1, &x32, 0, NULL, 1, (void *[]){y}, NULL), "Not", "int32");
  OH_CHECK_REFUSED(oh_run("BitwiseNot", 1, &(oh_value[]){OH_F32(1, (1), 1.0f)}[0], 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "BitwiseNot", "float32");
  oh_value xf = OH_F32(1, (2), 1.0f, 2.0f);
  OH_CHECK_REFUSED(oh_run("Gelu", 1, &xf, 1, (etrt_attribute[]){OH_STRING("approximate", "fast")},
                          1, (void *[]){y}, NULL),
                   "Gelu", "fast");
  OH_CHECK_REFUSED(oh_run("Celu", 1, &xf, 1, (etrt_attribute[]){OH_FLOAT("alpha", 0.0f)}, 1,
                          (void *[]){y}, NULL),
                   "Celu", "alpha");
  OH_CHECK_REFUSED(
      oh_run("Clip", 1, &x32, 1, (etrt_attribute[]){OH_FLOAT("min", 0.0f)}, 1, (void *[]){y}, NULL),
      "Clip", "int32");
  OH_CHECK_REFUSED(oh_run("Clip", 2, (oh_value[]){xf, OH_F32(0, (0), 0.0f)}, 1,
                          (etrt_attribute[]){OH_FLOAT("min", 0.0f)}, 1, (void *[]){y}, NULL),
                   "Clip", "both");
  OH_CHECK_REFUSED(
      oh_run("Clip", 2, (oh_value[]){xf, OH_F64(0, (0), 0.0)}, 0, NULL, 1, (void *[]){y}, NULL),
      "Clip", "float64");
  OH_CHECK_REFUSED(oh_run("Clip", 2, (oh_value[]){xf, OH_F32(1, (2), 0.0f, 1.0f)}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "Clip", "one value");
}

int main(void) {
  RUN_TEST(test_float_math);
  RUN_TEST(test_activations);
  RUN_TEST(test_activation_attributes);
  RUN_TEST(test_round_half_to_even);
  RUN_TEST(test_nan_inf_tests);
  RUN_TEST(test_integers_and_bools);
  RUN_TEST(test_float16);
  RUN_TEST(test_clip);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
