/* The portable binary operators: values, broadcasting, Scalar variants with alpha,
 * integer dtypes, out tensors resized within their bounds, and the refusals. */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

/* y = add(x [2, 3], b [3] constant, alpha=2): broadcasting over rows. */
static void test_add_broadcast_alpha(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float b[3] = {1, -2, 0.5f};
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t bc = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, b, 0);
  int32_t alpha = etrt_test_kp_int(&p, 2);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::add.out", (int32_t[]){x, bc, alpha, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[6] = {0, 1, 2, 3, 4, 5}, out[6];
  etrt_tensor_view v = {in, F32, 2, {2, 3}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  for (int i = 0; i < 6; ++i) CHECK_NEAR(out[i], in[i] + 2 * b[i % 3], 1e-6);
  free(pte);
}

/* add.Scalar_out(x, 3, alpha=0.5), then mul.Scalar_out(., -2), div.Scalar_out(., 4),
 * sub.out and pow.Tensor_Scalar_out(., 2) chained. */
static void test_scalar_variants(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t dims[1] = {4};
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t three = etrt_test_kp_int(&p, 3), half = etrt_test_kp_double(&p, 0.5);
  int32_t m2 = etrt_test_kp_double(&p, -2), four = etrt_test_kp_int(&p, 4);
  int32_t one = etrt_test_kp_int(&p, 1), two = etrt_test_kp_int(&p, 2);
  int32_t a = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t b = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t c = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t d = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, dims, NULL, 0);
  etrt_test_kp_call(&p, "aten::add.Scalar_out", (int32_t[]){x, three, half, a, a}, 5);
  etrt_test_kp_call(&p, "aten::mul.Scalar_out", (int32_t[]){a, m2, b, b}, 4);
  etrt_test_kp_call(&p, "aten::div.Scalar_out", (int32_t[]){b, four, c, c}, 4);
  etrt_test_kp_call(&p, "aten::sub.out", (int32_t[]){c, x, one, d, d}, 5);
  etrt_test_kp_call(&p, "aten::pow.Tensor_Scalar_out", (int32_t[]){d, two, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[4] = {1, -1, 0.25f, 8}, out[4];
  etrt_tensor_view v = {in, F32, 1, {4}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  for (int i = 0; i < 4; ++i) {
    double t = (in[i] + 1.5) * -2 / 4 - in[i];
    CHECK_NEAR(out[i], t * t, 1e-5);
  }
  free(pte);
}

/* int32 and int64 tensors: mul.Scalar_out by an integral scalar keeps the dtype; a
 * fractional one into an int32 out tensor (ATen would compute in float and refuse
 * the cast back) is refused when the method is created. */
static void test_integer_dtypes(void) {
  for (int fractional = 0; fractional < 2; ++fractional) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, NULL, 0);
    int32_t k = fractional ? etrt_test_kp_double(&p, 2.5) : etrt_test_kp_int(&p, -3);
    int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::mul.Scalar_out", (int32_t[]){x, k, y, y}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    int32_t in[3] = {1, -7, 100000}, out[3];
    etrt_tensor_view v = {in, ETRT_DTYPE_INT32, 1, {3}};
    if (fractional) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL), ETRT_ERROR_UNSUPPORTED,
                  "instruction 0 (aten::mul.Scalar_out)");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
      for (int i = 0; i < 3; ++i) CHECK_EQ_INT(out[i], in[i] * -3);
    }
    free(pte);
  }
  /* int64 maximum with broadcasting. */
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int64_t c[1] = {5};
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 2}, NULL, 0);
  int32_t cc = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){1}, c, 0);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::maximum.out", (int32_t[]){x, cc, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  int64_t in[4] = {1, 9, -4, 6}, out[4];
  etrt_tensor_view v = {in, ETRT_DTYPE_INT64, 2, {2, 2}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  CHECK(out[0] == 5 && out[1] == 9 && out[2] == 5 && out[3] == 6);
  free(pte);
}

/* ATen's promotion: int32 * 2.5 into a float out tensor, int64 / int64 into float
 * (true division), float32 + 0.5 * int32 -> float32 (alpha scales the promoted int). */
static void test_type_promotion(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int64_t d[3] = {2, 4, -8};
  float f[3] = {0.5f, 0.25f, -1};
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){3}, NULL, 0);
  int32_t k = etrt_test_kp_double(&p, 2.5), one = etrt_test_kp_int(&p, 1);
  int32_t half = etrt_test_kp_double(&p, 0.5);
  int32_t dv = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){3}, d, 0);
  int32_t fv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, f, 0);
  int32_t a = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t b = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t c = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t x64 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::mul.Scalar_out", (int32_t[]){x, k, a, a}, 4);
  etrt_test_kp_call(&p, "aten::add.out", (int32_t[]){x, dv, one, x64, x64}, 5);
  etrt_test_kp_call(&p, "aten::div.out", (int32_t[]){x64, dv, b, b}, 4);
  etrt_test_kp_call(&p, "aten::add.out", (int32_t[]){fv, x, half, c, c}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){a, b, c}, 3, &size);
  int32_t in[3] = {3, -5, 7};
  etrt_tensor_view v = {in, ETRT_DTYPE_INT32, 1, {3}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  for (int i = 0; i < 3; ++i) {
    CHECK_NEAR(((float *)o[0].data)[i], in[i] * 2.5, 1e-6);
    CHECK_NEAR(((float *)o[1].data)[i], (double)(in[i] + d[i]) / d[i], 1e-6);
    CHECK_NEAR(((float *)o[2].data)[i], f[i] + 0.5 * in[i], 1e-6);
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* A dynamic out tensor takes the input's shape within its bound; a static one that
 * does not match, or a result beyond the bound, is refused and nothing is written. */
static void test_resize_within_bounds(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, NULL, 1);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, NULL, 1);
  etrt_test_kp_call(&p, "aten::mul.out", (int32_t[]){x, x, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4];
  etrt_tensor_view v = {in, F32, 2, {2, 2}}, got;
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, &got));
  CHECK(got.rank == 2 && got.sizes[0] == 2 && got.sizes[1] == 2);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], in[i] * in[i], 1e-6);
  free(pte);

  /* x [3] dynamic (bound 3) + c [3] into a static y [2]: the result [3] is refused. */
  etrt_test_kp_init(&p);
  float c[3] = {1, 1, 1};
  x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 1);
  int32_t cc = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, c, 0);
  int32_t one = etrt_test_kp_int(&p, 1);
  y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::add.out", (int32_t[]){x, cc, one, y, y}, 5);
  pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_program_load_memory(pte, size, NULL, &program));
  CHECK_OK(etrt_method_create(program, "forward", &method));
  CHECK_OK(etrt_method_get_output(method, 0, &got));
  float *y_data = got.data;
  y_data[0] = y_data[1] = 42.0f;
  etrt_tensor_view v3 = {in, F32, 1, {3}};
  CHECK_OK(etrt_method_set_input(method, 0, &v3));
  CHECK_FAILS(etrt_method_execute(method), ETRT_ERROR_INVALID_ARGUMENT,
              "shape [3] does not fit the out tensor (planned as [2])");
  CHECK(y_data[0] == 42.0f && y_data[1] == 42.0f); /* nothing written */
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* A float result into an int32 out tensor is refused when the method is created,
 * naming both dtypes. */
static void test_wrong_out_dtype(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::div.out", (int32_t[]){x, x, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[2] = {1, 2};
  int32_t out[2];
  etrt_tensor_view v = {in, F32, 1, {2}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT,
              "instruction 0 (aten::div.out): argument 0 is float32; the result cannot be written "
              "to the int32 out tensor");
  free(pte);
}

int main(void) {
  RUN_TEST(test_add_broadcast_alpha);
  RUN_TEST(test_scalar_variants);
  RUN_TEST(test_integer_dtypes);
  RUN_TEST(test_type_promotion);
  RUN_TEST(test_resize_within_bounds);
  RUN_TEST(test_wrong_out_dtype);
  return TEST_EXIT();
}
