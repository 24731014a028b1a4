/* The portable unary operators and comparisons against hand-computed references:
 * the activations torchvision and transformer programs export, clamp with an
 * absent bound, float16, comparisons to bool, logical_not and where. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float inputs[6] = {-4.0f, -1.5f, -0.25f, 0.0f, 0.75f, 3.5f};

static double reference(const char *op, double x) {
  if (strcmp(op, "hardtanh") == 0) return x < -1 ? -1 : x > 1 ? 1 : x;
  if (strcmp(op, "hardswish") == 0) return x * fmin(fmax(x + 3, 0), 6) / 6;
  if (strcmp(op, "hardsigmoid") == 0) return fmin(fmax(x + 3, 0), 6) / 6;
  if (strcmp(op, "silu") == 0) return x / (1 + exp(-x));
  if (strcmp(op, "gelu") == 0) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  if (strcmp(op, "sigmoid") == 0) return 1 / (1 + exp(-x));
  if (strcmp(op, "tanh") == 0) return tanh(x);
  if (strcmp(op, "neg") == 0) return -x;
  if (strcmp(op, "rsqrt") == 0) return 1 / sqrt(fabs(x) + 1); /* on |x| + 1, see below */
  if (strcmp(op, "clamp") == 0) return x > 0.5 ? 0.5 : x;     /* min None, max 0.5 */
  return NAN;
}

/* y = op(x) for one operator; rsqrt runs on abs(x) + 1 (abs, add.Scalar_out first). */
static void check_unary(const char *op) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t dims[1] = {6};
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  char name[64];
  snprintf(name, sizeof name, "aten::%s.out", op);
  if (strcmp(op, "hardtanh") == 0) {
    int32_t lo = etrt_test_kp_double(&p, -1), hi = etrt_test_kp_int(&p, 1);
    etrt_test_kp_call(&p, name, (int32_t[]){x, lo, hi, y, y}, 5);
  } else if (strcmp(op, "clamp") == 0) {
    int32_t lo = etrt_test_kp_none(&p), hi = etrt_test_kp_double(&p, 0.5);
    etrt_test_kp_call(&p, name, (int32_t[]){x, lo, hi, y, y}, 5);
  } else if (strcmp(op, "gelu") == 0) {
    int32_t approximate = etrt_test_kp_string(&p, "none");
    etrt_test_kp_call(&p, name, (int32_t[]){x, approximate, y, y}, 4);
  } else if (strcmp(op, "rsqrt") == 0) {
    int32_t a = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
    int32_t b = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
    int32_t one = etrt_test_kp_int(&p, 1);
    etrt_test_kp_call(&p, "aten::abs.out", (int32_t[]){x, a, a}, 3);
    etrt_test_kp_call(&p, "aten::add.Scalar_out", (int32_t[]){a, one, one, b, b}, 5);
    etrt_test_kp_call(&p, name, (int32_t[]){b, y, y}, 3);
  } else {
    etrt_test_kp_call(&p, name, (int32_t[]){x, y, y}, 3);
  }
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float out[6];
  etrt_tensor_view v = {(void *)inputs, F32, 1, {6}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  for (int i = 0; i < 6; ++i) {
    double want = reference(op, inputs[i]);
    if (fabs(out[i] - want) > 1e-5)
      etrt_test_fail(__FILE__, __LINE__, "%s(%g) = %g, want %g", op, inputs[i], out[i], want);
  }
  free(pte);
}

static void test_activations(void) {
  const char *ops[] = {"hardtanh", "hardswish", "hardsigmoid", "silu",  "gelu",
                       "sigmoid",  "tanh",      "neg",         "rsqrt", "clamp"};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i) check_unary(ops[i]);
}

/* relu on float16 keeps the dtype. */
static void test_half(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT16, 1, (int32_t[]){3}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT16, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::relu.out", (int32_t[]){x, y, y}, 3);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  uint16_t in[3] = {etrt_float_to_half(-2.0f), etrt_float_to_half(0.5f), etrt_float_to_half(3.0f)},
           out[3];
  etrt_tensor_view v = {in, ETRT_DTYPE_FLOAT16, 1, {3}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  CHECK(etrt_half_to_float(out[0]) == 0.0f && etrt_half_to_float(out[1]) == 0.5f &&
        etrt_half_to_float(out[2]) == 3.0f);
  free(pte);
}

/* gelu's approximate must be 'none' or 'tanh': refused at method creation. */
static void test_gelu_bad_approximate(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t s = etrt_test_kp_string(&p, "erf");
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::gelu.out", (int32_t[]){x, s, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_program_load_memory(pte, size, NULL, &program));
  CHECK_FAILS(etrt_method_create(program, "forward", &method), ETRT_ERROR_INVALID_ARGUMENT,
              "must be 'none' or 'tanh', not 'erf'");
  etrt_program_destroy(program);
  free(pte);
}

/* mask = logical_not(eq.Scalar(x, 0)); y = where(mask, x, ne.Tensor(x, c) as ...):
 * here y = where(x != 0, x, -1) built from eq.Scalar_out, logical_not and where. */
static void test_compare_where(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t dims[1] = {5};
  float minus_one[1] = {-1};
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t zero = etrt_test_kp_int(&p, 0);
  int32_t eq = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, dims, NULL, 0);
  int32_t mask = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, dims, NULL, 0);
  int32_t m1 = etrt_test_kp_tensor(&p, F32, 0, NULL, minus_one, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t gt = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, dims, NULL, 0);
  int32_t ne = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, dims, NULL, 0);
  etrt_test_kp_call(&p, "aten::eq.Scalar_out", (int32_t[]){x, zero, eq, eq}, 4);
  etrt_test_kp_call(&p, "aten::logical_not.out", (int32_t[]){eq, mask, mask}, 3);
  etrt_test_kp_call(&p, "aten::where.self_out", (int32_t[]){mask, x, m1, y, y}, 5);
  etrt_test_kp_call(&p, "aten::gt.Tensor_out", (int32_t[]){x, m1, gt, gt}, 4);
  etrt_test_kp_call(&p, "aten::ne.Scalar_out", (int32_t[]){x, zero, ne, ne}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){y, gt, ne}, 3, &size);
  float in[5] = {0, 2, -3, 0, 0.5f};
  etrt_tensor_view v = {in, F32, 1, {5}};
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  etrt_tensor_view out, out_gt, out_ne;
  CHECK_OK(etrt_method_get_output(method, 0, &out));
  CHECK_OK(etrt_method_get_output(method, 1, &out_gt));
  CHECK_OK(etrt_method_get_output(method, 2, &out_ne));
  const float *yv = out.data;
  const uint8_t *g = out_gt.data, *n = out_ne.data;
  for (int i = 0; i < 5; ++i) {
    CHECK_NEAR(yv[i], in[i] != 0 ? in[i] : -1, 0);
    CHECK_EQ_INT(g[i], in[i] > -1);
    CHECK_EQ_INT(n[i], in[i] != 0);
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* masked_fill(x, x < 0, -inf-like -100): the attention-mask pattern. */
static void test_masked_fill(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, NULL, 0);
  int32_t zero = etrt_test_kp_int(&p, 0), fill = etrt_test_kp_double(&p, -100);
  int32_t mask = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){4}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, NULL, 0);
  etrt_test_kp_call(&p, "aten::lt.Scalar_out", (int32_t[]){x, zero, mask, mask}, 4);
  etrt_test_kp_call(&p, "aten::masked_fill.Scalar_out", (int32_t[]){x, mask, fill, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[4] = {1, -2, 0, -0.5f}, out[4];
  etrt_tensor_view v = {in, F32, 1, {4}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  CHECK(out[0] == 1 && out[1] == -100 && out[2] == 0 && out[3] == -100);
  free(pte);
}

/* Comparisons promote to the operands' common dtype: int32 < 1.5 (a float scalar)
 * and int32 tensor <= float tensor compute in float. */
static void test_compare_promotion(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float f[3] = {-0.5f, 2.5f, 3};
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, NULL, 0);
  int32_t k = etrt_test_kp_double(&p, 1.5);
  int32_t fv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, f, 0);
  int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, NULL, 0);
  int32_t b = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::lt.Scalar_out", (int32_t[]){x, k, a, a}, 4);
  etrt_test_kp_call(&p, "aten::le.Tensor_out", (int32_t[]){x, fv, b, b}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){a, b}, 2, &size);
  int32_t in[3] = {1, 2, 3};
  etrt_tensor_view v = {in, ETRT_DTYPE_INT32, 1, {3}}, o[2];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
  const uint8_t *lt = o[0].data, *le = o[1].data;
  CHECK(lt[0] == 1 && lt[1] == 0 && lt[2] == 0);
  CHECK(le[0] == 0 && le[1] == 1 && le[2] == 1);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* bitwise_and on int32 and logical_xor on bool. */
static void test_bitwise_xor(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t mask[3] = {0xF0, 0x0F, -1};
  uint8_t flags[3] = {1, 0, 1};
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, NULL, 0);
  int32_t m = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, mask, 0);
  int32_t f = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, flags, 0);
  int32_t zero = etrt_test_kp_int(&p, 0);
  int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, NULL, 0);
  int32_t nz = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, NULL, 0);
  int32_t b = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::bitwise_and.Tensor_out", (int32_t[]){x, m, a, a}, 4);
  etrt_test_kp_call(&p, "aten::ne.Scalar_out", (int32_t[]){a, zero, nz, nz}, 4);
  etrt_test_kp_call(&p, "aten::logical_xor.out", (int32_t[]){nz, f, b, b}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){a, b}, 2, &size);
  int32_t in[3] = {0x3C, 0x30, 5};
  etrt_tensor_view v = {in, ETRT_DTYPE_INT32, 1, {3}}, o[2];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
  const int32_t *av = o[0].data;
  const uint8_t *bv = o[1].data;
  CHECK(av[0] == 0x30 && av[1] == 0 && av[2] == 5);
  CHECK(bv[0] == 0 && bv[1] == 0 && bv[2] == 0); /* nonzero: 1, 0, 1 xor 1, 0, 1 */
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

int main(void) {
  RUN_TEST(test_bitwise_xor);
  RUN_TEST(test_compare_promotion);
  RUN_TEST(test_masked_fill);
  RUN_TEST(test_activations);
  RUN_TEST(test_half);
  RUN_TEST(test_gelu_bad_approximate);
  RUN_TEST(test_compare_where);
  return TEST_EXIT();
}
