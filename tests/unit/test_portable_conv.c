/* The portable convolution and pools against direct loops: convolution.out with
 * stride, padding, dilation and groups (and bias None), _adaptive_avg_pool2d to 1x1,
 * avg_pool2d, and the refusals (transposed, output sizes other than 1x1). */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

/* x [1, 2, 5, 5], w [4, 1, 3, 3] (groups 2), stride 2, padding 1, dilation 1. */
static void test_convolution(void) {
  float w[36], bias[4] = {0.5f, -0.5f, 1, 0}, x[50];
  for (int i = 0; i < 36; ++i) w[i] = (float)((i * 5) % 7) / 3 - 1;
  for (int i = 0; i < 50; ++i) x[i] = (float)((i * 3) % 11) / 5 - 1;
  for (int with_bias = 0; with_bias < 2; ++with_bias) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t xv = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 5, 5}, NULL, 0);
    int32_t wv = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){4, 1, 3, 3}, w, 0);
    int32_t bv = with_bias ? etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, bias, 0)
                           : etrt_test_kp_none(&p);
    int32_t stride = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
    int32_t padding = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
    int32_t dilation = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
    int32_t no = etrt_test_kp_bool(&p, 0);
    int32_t out_pad = etrt_test_kp_ints(&p, (int64_t[]){0, 0}, 2);
    int32_t groups = etrt_test_kp_int(&p, 2);
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 4, 3, 3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::convolution.out",
                      (int32_t[]){xv, wv, bv, stride, padding, dilation, no, out_pad, groups, y, y},
                      11);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &xv, 1, &y, 1, &size);
    float out[36];
    etrt_tensor_view v = {x, F32, 4, {1, 2, 5, 5}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    for (int o = 0; o < 4; ++o) {
      int c = o / 2; /* one input channel per group */
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double acc = with_bias ? bias[o] : 0;
          for (int ki = 0; ki < 3; ++ki)
            for (int kj = 0; kj < 3; ++kj) {
              int r = i * 2 - 1 + ki, q = j * 2 - 1 + kj;
              if (r < 0 || r >= 5 || q < 0 || q >= 5) continue;
              acc += (double)x[c * 25 + r * 5 + q] * w[o * 9 + ki * 3 + kj];
            }
          CHECK_NEAR(out[o * 9 + i * 3 + j], acc, 1e-5);
        }
    }
    free(pte);
  }
}

/* adaptive average to 1x1 and avg_pool2d 2x2 stride 2 on x [1, 1, 4, 4]. */
static void test_pools(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 4, 4}, NULL, 0);
  int32_t ones = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
  int32_t g = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 1, 1}, NULL, 0);
  int32_t kernel = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
  int32_t zeros = etrt_test_kp_ints(&p, (int64_t[]){0, 0}, 2);
  int32_t no = etrt_test_kp_bool(&p, 0), yes = etrt_test_kp_bool(&p, 1);
  int32_t none = etrt_test_kp_none(&p);
  int32_t a = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::_adaptive_avg_pool2d.out", (int32_t[]){x, ones, g, g}, 4);
  etrt_test_kp_call(&p, "aten::avg_pool2d.out",
                    (int32_t[]){x, kernel, kernel, zeros, no, yes, none, a, a}, 9);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){g, a}, 2, &size);
  float in[16];
  for (int i = 0; i < 16; ++i) in[i] = (float)i;
  etrt_tensor_view v = {in, F32, 4, {1, 1, 4, 4}}, go, ao;
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &go));
  CHECK_OK(etrt_method_get_output(method, 1, &ao));
  CHECK_NEAR(((float *)go.data)[0], 7.5, 1e-6);
  const float *av = ao.data;
  CHECK(av[0] == 2.5f && av[1] == 4.5f && av[2] == 10.5f && av[3] == 12.5f);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* A transposed convolution and an adaptive pool to 2x2 are refused at creation. */
static void test_refusals(void) {
  for (int which = 0; which < 2; ++which) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    float w[4] = {1, 1, 1, 1};
    int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 4, 4}, NULL, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
    if (which == 0) {
      int32_t wv = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, w, 0);
      int32_t none = etrt_test_kp_none(&p), yes = etrt_test_kp_bool(&p, 1);
      int32_t s = etrt_test_kp_ints(&p, (int64_t[]){1}, 1), z = etrt_test_kp_ints(&p, NULL, 0);
      int32_t one = etrt_test_kp_int(&p, 1);
      etrt_test_kp_call(&p, "aten::convolution.out",
                        (int32_t[]){x, wv, none, s, z, s, yes, z, one, y, y}, 11);
    } else {
      int32_t two = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
      etrt_test_kp_call(&p, "aten::_adaptive_avg_pool2d.out", (int32_t[]){x, two, y, y}, 4);
    }
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float in[16] = {0}, out[4];
    etrt_tensor_view v = {in, F32, 4, {1, 1, 4, 4}};
    CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL), ETRT_ERROR_UNSUPPORTED,
                which == 0 ? "(transposed): not supported" : "only 1x1 is supported");
    free(pte);
  }
}

int main(void) {
  RUN_TEST(test_convolution);
  RUN_TEST(test_pools);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
