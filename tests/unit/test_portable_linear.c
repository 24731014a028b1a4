/* The portable matrix products: linear (constant and non-constant weight, with and
 * without bias, rank-3 input, dynamic batch), bmm, and addmm on the same numbers. */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

/* y[b, o] = sum_i x[b, i] w[o, i] (+ bias[o]). */
static void reference(const float *x, const float *w, const float *bias, int64_t batch, int64_t in,
                      int64_t out, float *y) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias ? bias[o] : 0;
      for (int64_t i = 0; i < in; ++i) acc += (double)x[b * in + i] * w[o * in + i];
      y[b * out + o] = (float)acc;
    }
}

/* linear(x [<=4, 5], w [3, 5], bias?) with w a constant or a second input; the out
 * tensor is dynamic, so a batch of 2 resizes it. */
static void test_linear(void) {
  float w[15], bias[3] = {0.5f, -1, 2}, x[20], y[12], want[12];
  for (int i = 0; i < 15; ++i) w[i] = (float)((i * 7) % 11) / 4 - 1;
  for (int i = 0; i < 20; ++i) x[i] = (float)((i * 5) % 9) / 3 - 1;
  for (int weight_input = 0; weight_input < 2; ++weight_input) {
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      etrt_test_kp p;
      etrt_test_kp_init(&p);
      int32_t xv = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 5}, NULL, 1);
      int32_t wv = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 5}, weight_input ? NULL : w, 0);
      int32_t bv = with_bias ? etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, bias, 0)
                             : etrt_test_kp_none(&p);
      int32_t yv = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 3}, NULL, 1);
      etrt_test_kp_call(&p, "aten::linear.out", (int32_t[]){xv, wv, bv, yv, yv}, 5);
      size_t size;
      uint8_t *pte =
          etrt_test_kp_write(&p, (int32_t[]){xv, wv}, weight_input ? 2 : 1, &yv, 1, &size);
      etrt_tensor_view v[2] = {{x, F32, 2, {2, 5}}, {w, F32, 2, {3, 5}}}, got;
      CHECK_OK(etrt_test_kp_run(pte, size, v, weight_input ? 2 : 1, y, 6 * sizeof *y, &got));
      CHECK(got.rank == 2 && got.sizes[0] == 2 && got.sizes[1] == 3);
      reference(x, w, with_bias ? bias : NULL, 2, 5, 3, want);
      CHECK(etrt_test_max_diff(y, want, 6) < 1e-5);
      free(pte);
    }
  }
}

/* A rank-3 input to linear, and bmm on [2, 2, 3] x [2, 3, 2]. */
static void test_linear_rank3_and_bmm(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float w[6] = {1, 2, 3, -1, 0, 1}; /* [2, 3] */
  float b2[12];
  for (int i = 0; i < 12; ++i) b2[i] = (float)(i % 5) - 2;
  int32_t x = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 3}, NULL, 0);
  int32_t wv = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, w, 0);
  int32_t none = etrt_test_kp_none(&p);
  int32_t l = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 2}, NULL, 0);
  int32_t bv = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 2}, b2, 0);
  int32_t m = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::linear.out", (int32_t[]){x, wv, none, l, l}, 5);
  etrt_test_kp_call(&p, "aten::bmm.out", (int32_t[]){x, bv, m, m}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){l, m}, 2, &size);
  float in[12];
  for (int i = 0; i < 12; ++i) in[i] = (float)i / 3 - 1;
  etrt_tensor_view v = {in, F32, 3, {2, 2, 3}};
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  etrt_tensor_view lo, mo;
  CHECK_OK(etrt_method_get_output(method, 0, &lo));
  CHECK_OK(etrt_method_get_output(method, 1, &mo));
  float want[8];
  reference(in, w, NULL, 4, 3, 2, want);
  CHECK(lo.rank == 3 && etrt_test_max_diff(lo.data, want, 8) < 1e-5);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        double acc = 0;
        for (int k = 0; k < 3; ++k) acc += in[b * 6 + i * 3 + k] * b2[b * 6 + k * 2 + j];
        CHECK_NEAR(((float *)mo.data)[b * 4 + i * 2 + j], acc, 1e-5);
      }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* A linear weight must have rank 2. */
static void test_linear_weight_rank(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float w[6] = {0};
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){1, 6}, NULL, 0);
  int32_t wv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, w, 0);
  int32_t none = etrt_test_kp_none(&p);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){1}, NULL, 0);
  etrt_test_kp_call(&p, "aten::linear.out", (int32_t[]){x, wv, none, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[6] = {0}, out[1];
  etrt_tensor_view v = {in, F32, 2, {1, 6}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT,
              "instruction 0 (aten::linear.out): the weight must have rank 2");
  free(pte);
}

int main(void) {
  RUN_TEST(test_linear);
  RUN_TEST(test_linear_rank3_and_bmm);
  RUN_TEST(test_linear_weight_rank);
  return TEST_EXIT();
}
