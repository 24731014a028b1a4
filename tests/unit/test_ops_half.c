/* The CPU kernels of the families half-precision GPU plans use (convolution, pooling,
 * normalisation, EtrtMatMulBias) on float16 and bfloat16 tensors, as simulated GPUs run
 * them: each result against the float32 kernel's on the same (rounded) values, within
 * the type's rounding, and sums that a half-precision accumulator would get wrong. */
#include <math.h>
#include <stdint.h>

#include "base/half.h"
#include "op_test_util.h"
#include "test_util.h"

#define MAX_IN 5
#define MAX_ELEMS 8192

typedef struct half_case {
  const char *op;
  uint32_t num_inputs;
  int32_t rank[MAX_IN];
  int64_t dims[MAX_IN][4];
  uint32_t num_attributes;
  etrt_attribute attributes[3];
} half_case;

static uint16_t narrow(etrt_dtype t, float v) {
  return t == ETRT_DTYPE_FLOAT16 ? etrt_float_to_half(v) : etrt_float_to_bfloat16(v);
}

static float widen(etrt_dtype t, uint16_t v) {
  return t == ETRT_DTYPE_FLOAT16 ? etrt_half_to_float(v) : etrt_bfloat16_to_float(v);
}

static int64_t numel(const half_case *c, uint32_t i) {
  int64_t n = 1;
  for (int32_t a = 0; a < c->rank[i]; ++a) n *= c->dims[i][a];
  return n;
}

static etrt_tensor tensor_of(const half_case *c, uint32_t i, etrt_dtype t, void *data) {
  etrt_tensor x = op_tensor(t, data, 0);
  x.rank = c->rank[i];
  for (int32_t a = 0; a < c->rank[i]; ++a) x.dims[a] = c->dims[i][a];
  return x;
}

/* Runs the case in float32 and in `t` on the same values (already representable in t),
 * and compares within `tolerance` of the largest output. */
static void check_case(const half_case *c, etrt_dtype t, double tolerance) {
  static float in32[MAX_IN][MAX_ELEMS], out32[MAX_ELEMS];
  static uint16_t in16[MAX_IN][MAX_ELEMS], out16[MAX_ELEMS];
  etrt_tensor a32[MAX_IN], a16[MAX_IN];
  for (uint32_t i = 0; i < c->num_inputs; ++i) {
    int64_t n = numel(c, i);
    for (int64_t k = 0; k < n; ++k) {
      /* a deterministic spread of values; variances (BatchNormalization input 4) positive */
      float v =
          (float)sin(0.7 * (double)k + 1.3 * i) * (i == 4 ? 0.5f : 1.0f) + (i == 4 ? 1.0f : 0.0f);
      in16[i][k] = narrow(t, v);
      in32[i][k] = widen(t, in16[i][k]);
    }
    a32[i] = tensor_of(c, i, ETRT_DTYPE_FLOAT32, in32[i]);
    a16[i] = tensor_of(c, i, t, in16[i]);
  }
  etrt_tensor y32 = op_tensor(ETRT_DTYPE_FLOAT32, out32, 0), y16 = op_tensor(t, out16, 0);
  CHECK_OK(op_run(c->op, c->num_inputs, a32, &y32, c->num_attributes, c->attributes));
  CHECK_OK(op_run(c->op, c->num_inputs, a16, &y16, c->num_attributes, c->attributes));
  CHECK_EQ_INT(y16.dtype, t);
  CHECK_EQ_INT(y16.rank, y32.rank);
  int64_t n = etrt_tensor_numel(&y32);
  double largest = 0, worst = 0;
  for (int64_t k = 0; k < n; ++k) largest = fmax(largest, fabs(out32[k]));
  for (int64_t k = 0; k < n; ++k) worst = fmax(worst, fabs(widen(t, out16[k]) - out32[k]));
  if (!(worst <= tolerance * largest))
    etrt_test_fail(__FILE__, __LINE__, "%s in %s: error %g of the largest output %g", c->op,
                   etrt_dtype_name(t), worst / largest, largest);
}

static const etrt_attribute pads1 = {
    .name = "pads", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = (const int64_t[]){1, 1, 1, 1}};
static const etrt_attribute kernel2 = {.name = "kernel_shape",
                                       .kind = ETRT_ATTRIBUTE_INTS,
                                       .count = 2,
                                       .ints = (const int64_t[]){2, 2}};
static const etrt_attribute groups2 = {.name = "num_groups", .kind = ETRT_ATTRIBUTE_INT, .i = 2};

static void test_families(void) {
  const half_case cases[] = {
      {"Conv", 3, {4, 4, 1}, {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, 1, {pads1}},
      {"ConvTranspose", 2, {4, 4}, {{1, 3, 4, 4}, {3, 2, 3, 3}}, 0, {{0}}},
      {"MaxPool", 1, {4}, {{2, 3, 6, 6}}, 1, {kernel2}},
      {"AveragePool", 1, {4}, {{2, 3, 6, 6}}, 1, {kernel2}},
      {"GlobalAveragePool", 1, {4}, {{2, 3, 6, 6}}, 0, {{0}}},
      {"LayerNormalization", 3, {3, 1, 1}, {{2, 3, 16}, {16}, {16}}, 0, {{0}}},
      {"BatchNormalization", 5, {4, 1, 1, 1, 1}, {{2, 4, 3, 3}, {4}, {4}, {4}, {4}}, 0, {{0}}},
      {"GroupNormalization", 3, {4, 1, 1}, {{2, 4, 3, 3}, {4}, {4}}, 1, {groups2}},
      {"EtrtMatMulBias", 3, {3, 2, 1}, {{2, 3, 8}, {8, 5}, {5}}, 0, {{0}}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    check_case(&cases[k], ETRT_DTYPE_FLOAT16, 2e-3);
    check_case(&cases[k], ETRT_DTYPE_BFLOAT16, 1.5e-2);
  }
}

/* 4096 ones summed: a float16 accumulator stops at 2048 (2048 + 1 rounds back to 2048). */
static void test_float32_accumulation(void) {
  static uint16_t x[4096], w[4096], y[1];
  for (int k = 0; k < 4096; ++k) x[k] = w[k] = etrt_float_to_half(1.0f);
  etrt_tensor in[2] = {
      op_tensor(ETRT_DTYPE_FLOAT16, x, 4, (int64_t)1, (int64_t)4096, (int64_t)1, (int64_t)1),
      op_tensor(ETRT_DTYPE_FLOAT16, w, 4, (int64_t)1, (int64_t)4096, (int64_t)1, (int64_t)1)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT16, y, 0);
  CHECK_OK(op_run("Conv", 2, in, &out, 0, NULL));
  CHECK_NEAR(etrt_half_to_float(y[0]), 4096.0, 0);
  etrt_tensor plane =
      op_tensor(ETRT_DTYPE_FLOAT16, x, 4, (int64_t)1, (int64_t)1, (int64_t)64, (int64_t)64);
  CHECK_OK(op_run("GlobalAveragePool", 1, &plane, &out, 0, NULL));
  CHECK_NEAR(etrt_half_to_float(y[0]), 1.0, 0);
}

int main(void) {
  RUN_TEST(test_families);
  RUN_TEST(test_float32_accumulation);
  return TEST_EXIT();
}
