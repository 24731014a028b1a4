/* The portable normalizations and max pooling against direct loops:
 * _native_batch_norm_legit_no_training, native_layer_norm (three outs and the list
 * of them as the return value), max_pool2d_with_indices, and the refusal of
 * normalizations without affine parameters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static void test_batch_norm(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float w[2] = {2, 0.5f}, b[2] = {1, -1}, mean[2] = {0.5f, -2}, var[2] = {4, 0.25f};
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 1}, NULL, 0);
  int32_t wv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, w, 0);
  int32_t bv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, b, 0);
  int32_t mv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, mean, 0);
  int32_t vv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, var, 0);
  int32_t momentum = etrt_test_kp_double(&p, 0.1), eps = etrt_test_kp_double(&p, 1e-5);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 1}, NULL, 0);
  int32_t o1 = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){0}, NULL, 0);
  int32_t o2 = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){0}, NULL, 0);
  int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, o1, o2}, 3);
  etrt_test_kp_call(&p, "aten::_native_batch_norm_legit_no_training.out",
                    (int32_t[]){x, wv, bv, mv, vv, momentum, eps, y, o1, o2, ret}, 11);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[4] = {1, 2, -3, 0.5f}, out[4];
  etrt_tensor_view v = {in, F32, 4, {1, 2, 2, 1}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  for (int i = 0; i < 4; ++i) {
    int c = i / 2;
    CHECK_NEAR(out[i], (in[i] - mean[c]) / sqrt(var[c] + 1e-5) * w[c] + b[c], 1e-5);
  }
  free(pte);
}

static void test_layer_norm(void) {
  for (int without_weight = 0; without_weight < 2; ++without_weight) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    float w[3] = {1, 2, -1}, b[3] = {0, 0.5f, 1};
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t shape = etrt_test_kp_ints(&p, (int64_t[]){3}, 1);
    int32_t wv = without_weight ? etrt_test_kp_none(&p)
                                : etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, w, 0);
    int32_t bv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, b, 0);
    int32_t eps = etrt_test_kp_double(&p, 1e-5);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t o1 = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 1}, NULL, 0);
    int32_t o2 = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 1}, NULL, 0);
    int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, o1, o2}, 3);
    etrt_test_kp_call(&p, "aten::native_layer_norm.out",
                      (int32_t[]){x, shape, wv, bv, eps, y, o1, o2, ret}, 9);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){y, o1, o2}, 3, &size);
    float in[6] = {1, 2, 6, -1, 0, 4}, out[6];
    etrt_tensor_view v = {in, F32, 2, {2, 3}};
    if (!without_weight) {
      /* The mean and the reciprocal standard deviation per row, as [2, 1]. */
      etrt_program *program;
      etrt_method *method;
      CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
      etrt_tensor_view mean, rstd;
      CHECK_OK(etrt_method_get_output(method, 1, &mean));
      CHECK_OK(etrt_method_get_output(method, 2, &rstd));
      CHECK(mean.rank == 2 && mean.sizes[0] == 2 && mean.sizes[1] == 1);
      for (int r = 0; r < 2; ++r) {
        double m = (in[r * 3] + in[r * 3 + 1] + in[r * 3 + 2]) / 3, var = 0;
        for (int c = 0; c < 3; ++c) var += (in[r * 3 + c] - m) * (in[r * 3 + c] - m) / 3;
        CHECK_NEAR(((float *)mean.data)[r], m, 1e-5);
        CHECK_NEAR(((float *)rstd.data)[r], 1 / sqrt(var + 1e-5), 1e-5);
      }
      etrt_method_destroy(method);
      etrt_program_destroy(program);
    }
    if (without_weight) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL), ETRT_ERROR_UNSUPPORTED,
                  "argument 2 is None; this kernel needs a tensor");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
      for (int r = 0; r < 2; ++r) {
        double m = (in[r * 3] + in[r * 3 + 1] + in[r * 3 + 2]) / 3, var = 0;
        for (int c = 0; c < 3; ++c) var += (in[r * 3 + c] - m) * (in[r * 3 + c] - m) / 3;
        for (int c = 0; c < 3; ++c)
          CHECK_NEAR(out[r * 3 + c], (in[r * 3 + c] - m) / sqrt(var + 1e-5) * w[c] + b[c], 1e-5);
      }
    }
    free(pte);
  }
}

/* 3x3 kernel, stride 2, padding 1 on [1, 1, 4, 4] (ResNet's stem pool). */
static void test_max_pool(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 4, 4}, NULL, 0);
  int32_t k = etrt_test_kp_ints(&p, (int64_t[]){3, 3}, 2);
  int32_t s = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
  int32_t pad = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
  int32_t d = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
  int32_t no = etrt_test_kp_bool(&p, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
  int32_t idx = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
  int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, idx}, 2);
  etrt_test_kp_call(&p, "aten::max_pool2d_with_indices.out",
                    (int32_t[]){x, k, s, pad, d, no, y, idx, ret}, 9);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[16] = {1, 9, 2, 3, 4, 5, 6, 7, 0, -1, 8, 2, 3, 3, 3, 10}, out[4];
  etrt_tensor_view v = {in, F32, 4, {1, 1, 4, 4}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  /* windows rows/cols {-1..1} and {1..3}. */
  CHECK(out[0] == 9 && out[1] == 9 && out[2] == 5 && out[3] == 10);
  free(pte);
}

int main(void) {
  RUN_TEST(test_batch_norm);
  RUN_TEST(test_layer_norm);
  RUN_TEST(test_max_pool);
  return TEST_EXIT();
}
