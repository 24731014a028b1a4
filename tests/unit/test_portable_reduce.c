/* The portable reductions and softmax: mean over dims with keepdim (RMSNorm's
 * pattern), sum over every dim, amax, argmax, _softmax and _log_softmax. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float x23[6] = {1, -2, 3, 0.5f, 4, -1}; /* [2, 3] */

static void test_reductions(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t last = etrt_test_kp_ints(&p, (int64_t[]){-1}, 1);
  int32_t yes = etrt_test_kp_bool(&p, 1), no = etrt_test_kp_bool(&p, 0);
  int32_t none = etrt_test_kp_none(&p), one = etrt_test_kp_int(&p, 1);
  int32_t mean = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 1}, NULL, 0);
  int32_t sum = etrt_test_kp_tensor(&p, F32, 0, NULL, NULL, 0);
  int32_t amax = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t argmax = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::mean.out", (int32_t[]){x, last, yes, none, mean, mean}, 6);
  etrt_test_kp_call(&p, "aten::sum.IntList_out", (int32_t[]){x, none, no, none, sum, sum}, 6);
  etrt_test_kp_call(&p, "aten::amax.out", (int32_t[]){x, last, no, amax, amax}, 5);
  etrt_test_kp_call(&p, "aten::argmax.out", (int32_t[]){x, one, no, argmax, argmax}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){mean, sum, amax, argmax}, 4, &size);
  etrt_tensor_view v = {(void *)x23, F32, 2, {2, 3}}, o[4];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 4; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  const float *m = o[0].data, *s = o[1].data, *a = o[2].data;
  const int64_t *am = o[3].data;
  CHECK(o[0].rank == 2 && o[0].sizes[1] == 1 && o[1].rank == 0);
  CHECK_NEAR(m[0], 2.0 / 3, 1e-6);
  CHECK_NEAR(m[1], 3.5 / 3, 1e-6);
  CHECK_NEAR(s[0], 5.5, 1e-6);
  CHECK(a[0] == 3 && a[1] == 4 && am[0] == 2 && am[1] == 1);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

static void test_softmax(void) {
  for (int log_ = 0; log_ < 2; ++log_) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t dim = etrt_test_kp_int(&p, -1), no = etrt_test_kp_bool(&p, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    etrt_test_kp_call(&p, log_ ? "aten::_log_softmax.out" : "aten::_softmax.out",
                      (int32_t[]){x, dim, no, y, y}, 5);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float out[6];
    etrt_tensor_view v = {(void *)x23, F32, 2, {2, 3}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    for (int r = 0; r < 2; ++r) {
      double total = 0;
      for (int c = 0; c < 3; ++c) total += exp(x23[r * 3 + c]);
      for (int c = 0; c < 3; ++c) {
        double want = exp(x23[r * 3 + c]) / total;
        CHECK_NEAR(out[r * 3 + c], log_ ? log(want) : want, 1e-5);
      }
    }
    free(pte);
  }
}

/* half_to_float is refused when the method is created. */
static void test_softmax_half_to_float_refused(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t dim = etrt_test_kp_int(&p, 0), yes = etrt_test_kp_bool(&p, 1);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::_softmax.out", (int32_t[]){x, dim, yes, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float out[3];
  etrt_tensor_view v = {(void *)x23, F32, 1, {3}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL), ETRT_ERROR_UNSUPPORTED,
              "half_to_float");
  free(pte);
}

/* cumsum along dim 1 of int64 [2, 3]. */
static void test_cumsum(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t one = etrt_test_kp_int(&p, 1), none = etrt_test_kp_none(&p);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::cumsum.out", (int32_t[]){x, one, none, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  int64_t in[6] = {1, 2, 3, -1, 5, 10}, out[6];
  etrt_tensor_view v = {in, ETRT_DTYPE_INT64, 2, {2, 3}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  const int64_t want[6] = {1, 3, 6, -1, 4, 14};
  CHECK(memcmp(out, want, sizeof want) == 0);
  free(pte);
}

/* any and all over the channels of a channels-last input (dim order 0, 2, 3, 1):
 * x[0, 0] = [[0, 2], [3, 0]], x[0, 1] = [[0, 5], [0, 6]]; any gives [[0, 1], [1, 1]]
 * (contiguous), all with keepdim [[0, 1], [0, 0]] into a channels-last out. */
static void test_any_all_channels_last(void) {
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT32, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
  etrt_test_kp_dim_order(&p, x, nhwc);
  int32_t c = etrt_test_kp_int(&p, 1);
  int32_t no = etrt_test_kp_bool(&p, 0), yes = etrt_test_kp_bool(&p, 1);
  int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 3, (int32_t[]){1, 2, 2}, NULL, 0);
  int32_t l = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
  etrt_test_kp_dim_order(&p, l, nhwc);
  etrt_test_kp_call(&p, "aten::any.out", (int32_t[]){x, c, no, a, a}, 5);
  etrt_test_kp_call(&p, "aten::all.out", (int32_t[]){x, c, yes, l, l}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){a, l}, 2, &size);
  const float logical[8] = {0, 2, 3, 0, 0, 5, 0, 6};
  float in[8];
  for (int i = 0; i < 8; ++i) in[(i % 4) * 2 + i / 4] = logical[i];
  etrt_tensor_view v = {in, ETRT_DTYPE_FLOAT32, 4, {1, 2, 2, 2}}, o[2];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
  const uint8_t any[4] = {0, 1, 1, 1}, all[4] = {0, 1, 0, 0};
  CHECK(memcmp(o[0].data, any, 4) == 0);
  CHECK(memcmp(o[1].data, all, 4) == 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* allclose.out: [1, 2, inf, nan] against [1 + 1e-6, 2, inf, nan] is close with
 * equal_nan and not without; against 2.1 at [1] it is not close. */
static void test_allclose(void) {
  for (int k = 0; k < 3; ++k) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT32, 1, (int32_t[]){4}, NULL, 0);
    static float other[3][4];
    const float b[4] = {1 + 1e-6f, k == 2 ? 2.1f : 2, INFINITY, NAN};
    memcpy(other[k], b, sizeof b);
    int32_t bv = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT32, 1, (int32_t[]){4}, other[k], 0);
    int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){1}, NULL, 0);
    etrt_test_kp_call(
        &p, "aten::allclose.out",
        (int32_t[]){a, bv, etrt_test_kp_double(&p, 1e-5), etrt_test_kp_double(&p, 1e-8),
                    etrt_test_kp_bool(&p, k != 1), etrt_test_kp_bool(&p, 0), y, y},
        8);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
    float in[4] = {1, 2, INFINITY, NAN};
    uint8_t out = 7;
    etrt_tensor_view v = {in, ETRT_DTYPE_FLOAT32, 1, {4}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, &out, 1, NULL));
    CHECK(out == (k == 0));
    free(pte);
  }
}

int main(void) {
  RUN_TEST(test_allclose);
  RUN_TEST(test_any_all_channels_last);
  RUN_TEST(test_cumsum);
  RUN_TEST(test_reductions);
  RUN_TEST(test_softmax);
  RUN_TEST(test_softmax_half_to_float_refused);
  return TEST_EXIT();
}
