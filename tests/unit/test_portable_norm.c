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

/* _native_batch_norm_legit (InstanceNorm's decomposition and training-mode BatchNorm)
 * on x [2, 3, 2, 2] against torch's values: no_stats (batch statistics), .out in
 * training (the running statistics move by momentum 0.1 towards the batch's, the
 * variance unbiased) and .out in eval (the running statistics normalize; save_mean
 * and save_invstd are empty). */
static const float bn_x[24] = {1,  2, 3, -4, 0.5f, 0.25f, 8,  -1, 2, 2, 2, 3,
                               -1, 0, 6, 2,  1,    1.5f,  -2, 4,  0, 7, 1, -3};
static const float bn_w[3] = {2, 0.5f, -1}, bn_b[3] = {1, -1, 0.5f};
static const float bn_batch[24] = {0.9093714f,  1.6344001f,  2.3594289f,  -2.7157724f, -1.1745567f,
                                   -1.2168734f, 0.0949463f,  -1.4284573f, 0.4050843f,  0.4050843f,
                                   0.4050843f,  0.0254213f,  -0.5406861f, 0.1843427f,  4.5345154f,
                                   1.6344001f,  -1.0899231f, -1.0052896f, -1.5977243f, -0.582122f,
                                   1.1644101f,  -1.4932303f, 0.7847472f,  2.3033988f};

static void test_batch_norm_legit(void) {
  for (int mode = 0; mode < 3; ++mode) { /* no_stats, training, eval */
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){2, 3, 2, 2}, NULL, 0);
    int32_t rm = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    int32_t rv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    int32_t wv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, bn_w, 0);
    int32_t bv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, bn_b, 0);
    int32_t training = etrt_test_kp_bool(&p, mode < 2);
    int32_t momentum = etrt_test_kp_double(&p, 0.1), eps = etrt_test_kp_double(&p, 1e-5);
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){2, 3, 2, 2}, NULL, 0);
    int32_t stat = mode == 2 ? 0 : 3;
    int32_t sm = etrt_test_kp_tensor(&p, F32, 1, &stat, NULL, 0);
    int32_t si = etrt_test_kp_tensor(&p, F32, 1, &stat, NULL, 0);
    int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, sm, si}, 3);
    int32_t rm_out = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    int32_t rv_out = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    int32_t none = etrt_test_kp_none(&p);
    if (mode == 0)
      etrt_test_kp_call(&p, "aten::_native_batch_norm_legit.no_stats_out",
                        (int32_t[]){x, wv, bv, training, momentum, eps, y, sm, si, ret}, 10);
    else
      etrt_test_kp_call(&p, "aten::_native_batch_norm_legit.out",
                        (int32_t[]){x, wv, bv, rm, rv, training, momentum, eps, y, sm, si, ret},
                        12);
    etrt_test_kp_call(&p, "aten::clone.out", (int32_t[]){rm, none, rm_out, rm_out}, 4);
    etrt_test_kp_call(&p, "aten::clone.out", (int32_t[]){rv, none, rv_out, rv_out}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, (int32_t[]){x, rm, rv}, 3,
                                      (int32_t[]){y, sm, si, rm_out, rv_out}, 5, &size);
    float mean[3] = {0.5f, -1, 2}, var[3] = {1, 2, 0.5f};
    etrt_tensor_view in[3] = {{(void *)bn_x, F32, 4, {2, 3, 2, 2}},
                              {mean, F32, 1, {3}},
                              {var, F32, 1, {3}}},
                     o[5];
    etrt_program *program;
    etrt_method *method;
    CHECK_OK(etrt_test_kp_execute(pte, size, in, 3, &program, &method));
    for (uint32_t i = 0; i < 5; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
    const float *yv = o[0].data;
    static const float eval[24] = {1.999995f,   3.999985f,   5.9999752f,  -7.9999552f, -0.4696713f,
                                   -0.5580594f, 2.1819725f,  -1.0f,       0.5f,        0.5f,
                                   0.5f,        -0.9141994f, -1.999985f,  5e-06f,      11.9999447f,
                                   3.999985f,   -0.292895f,  -0.1161188f, -1.3535526f, 0.7677624f,
                                   3.3283987f,  -6.5709968f, 1.9141994f,  7.5709968f};
    for (int i = 0; i < 24; ++i) CHECK_NEAR(yv[i], mode == 2 ? eval[i] : bn_batch[i], 2e-5);
    if (mode < 2) {
      static const float bmean[3] = {1.125f, 1.53125f, 1.75f};
      static const float binv[3] = {0.3625144f, 0.3385341f, 0.3796629f};
      for (int c = 0; c < 3; ++c) {
        CHECK_NEAR(((const float *)o[1].data)[c], bmean[c], 1e-6);
        CHECK_NEAR(((const float *)o[2].data)[c], binv[c], 1e-6);
      }
    } else {
      CHECK(o[1].rank == 1 && o[1].sizes[0] == 0 && o[2].sizes[0] == 0);
    }
    static const float rm_after[3] = {0.5625f, -0.746875f, 1.9749999f};
    static const float rv_after[3] = {1.7696428f, 2.7972097f, 1.2428571f};
    for (int c = 0; c < 3; ++c) {
      CHECK_NEAR(((const float *)o[3].data)[c], mode == 1 ? rm_after[c] : mean[c], 1e-6);
      CHECK_NEAR(((const float *)o[4].data)[c], mode == 1 ? rv_after[c] : var[c], 1e-6);
    }
    etrt_method_destroy(method);
    etrt_program_destroy(program);
    free(pte);
  }
}

/* no_stats outside training has nothing to normalize with: refused when the method
 * is created; a weight of the wrong length when it runs, with nothing written. */
static void test_batch_norm_legit_refusals(void) {
  for (int bad_weight = 0; bad_weight < 2; ++bad_weight) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    float w[4] = {1, 1, 1, 1};
    int32_t x = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){1, 3, 2}, NULL, 0);
    int32_t wv = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){bad_weight ? 4 : 3}, w, 0);
    int32_t none = etrt_test_kp_none(&p), training = etrt_test_kp_bool(&p, bad_weight);
    int32_t momentum = etrt_test_kp_double(&p, 0.1), eps = etrt_test_kp_double(&p, 1e-5);
    int32_t y = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){1, 3, 2}, NULL, 0);
    int32_t sm = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    int32_t si = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, sm, si}, 3);
    etrt_test_kp_call(&p, "aten::_native_batch_norm_legit.no_stats_out",
                      (int32_t[]){x, wv, none, training, momentum, eps, y, sm, si, ret}, 10);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float in[6] = {1, 2, 3, 4, 5, 6}, out[6] = {7, 7, 7, 7, 7, 7};
    etrt_tensor_view v = {in, F32, 3, {1, 3, 2}};
    if (bad_weight) {
      etrt_program *program;
      etrt_method *method;
      CHECK_OK(etrt_program_load_memory(pte, size, NULL, &program));
      CHECK_OK(etrt_method_create(program, "forward", &method));
      CHECK_OK(etrt_method_set_input(method, 0, &v));
      etrt_tensor_view before;
      CHECK_OK(etrt_method_get_output(method, 0, &before));
      memcpy(before.data, out, sizeof out);
      CHECK_FAILS(etrt_method_execute(method), ETRT_ERROR_INVALID_ARGUMENT,
                  "aten::_native_batch_norm_legit.no_stats_out (instruction 0): the weight must "
                  "have shape [3]");
      CHECK(memcmp(before.data, out, sizeof out) == 0);
      etrt_method_destroy(method);
      etrt_program_destroy(program);
    } else {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "argument 3 (training) is false and there are no running statistics");
    }
    free(pte);
  }
}

int main(void) {
  RUN_TEST(test_batch_norm_legit);
  RUN_TEST(test_batch_norm_legit_refusals);
  RUN_TEST(test_batch_norm);
  RUN_TEST(test_layer_norm);
  RUN_TEST(test_max_pool);
  return TEST_EXIT();
}
