/* _cdist_forward and _pdist_forward against torch 2.14's values (committed constants):
 * x1 [2, 2, 3] against x2 [1, 3, 3] (the batch broadcast) for p = 2, 1, 0, inf and 3,
 * x1 channels-last-like (dim order 0, 2, 1) for p = 2; pdist of the four rows for p = 2
 * and 0.5; and the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float x1[12] = {0.5f, -1, 2, 1.5f, 0, -0.5f, 3, 1, 1, -2, 0.25f, 0};
static const float x2[9] = {1, 1, 1, 0, -1, 2, 0.5f, 0.5f, -1};
static const double ps[5] = {2, 1, 0, INFINITY, 3};
static const float cdist_ref[5][12] = {
    {2.2912879f, 0.5f, 3.3541019f, 1.87082875f, 3.08220696f, 1.22474492f, 2.0f, 3.7416575f,
     3.24037027f, 3.25f, 3.09232926f, 2.70416355f},
    {3.5f, 0.5f, 4.5f, 3.0f, 5.0f, 2.0f, 2.0f, 6.0f, 5.0f, 4.75f, 5.25f, 3.75f},
    {3.0f, 1.0f, 2.0f, 3.0f, 3.0f, 3.0f, 1.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f},
    {2.0f, 0.5f, 3.0f, 1.5f, 2.5f, 1.0f, 2.0f, 3.0f, 2.5f, 3.0f, 2.0f, 2.5f},
    {2.0896697f, 0.5f, 3.12012577f, 1.65096366f, 2.7144177f, 1.07721734f, 2.0f, 3.30192733f,
     2.87444854f, 3.05176377f, 2.61846447f, 2.55303359f}};
static const float pdist_ref[2][6] = {
    {2.87228131f, 3.3541019f, 3.43693185f, 2.34520793f, 3.54436183f, 5.15388203f},
    {12.8245554f, 15.9628401f, 16.9199505f, 11.8989782f, 9.47368622f, 16.8271732f}};

static void check_close(const char *what, int k, const float *got, const float *want, int n) {
  for (int i = 0; i < n; ++i)
    if (!(fabs(got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]))))
      etrt_test_fail(__FILE__, __LINE__, "%s %d: element %d is %.9g, want %.9g", what, k, i, got[i],
                     want[i]);
}

static void test_cdist(void) {
  for (int k = 0; k < 6; ++k) {
    const int permuted = k == 5;
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 3}, NULL, 0);
    if (permuted) etrt_test_kp_dim_order(&p, a, (const uint8_t[]){0, 2, 1});
    int32_t b = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){1, 3, 3}, x2, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::_cdist_forward.out",
                      (int32_t[]){a, b, etrt_test_kp_double(&p, ps[permuted ? 0 : k]),
                                  etrt_test_kp_none(&p), y, y},
                      6);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
    float in[12], out[12];
    for (int i = 0; i < 12;
         ++i) /* logical [batch][row][col]; dim order 0, 2, 1: [batch][col][row] */
      in[permuted ? (i / 6) * 6 + (i % 3) * 2 + (i / 3) % 2 : i] = x1[i];
    etrt_tensor_view v = {in, F32, 3, {2, 2, 3}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    check_close("cdist", k, out, cdist_ref[permuted ? 0 : k], 12);
    free(pte);
  }
}

static void test_pdist(void) {
  for (int k = 0; k < 2; ++k) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 3}, NULL, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    etrt_test_kp_call(&p, "aten::_pdist_forward.out",
                      (int32_t[]){a, etrt_test_kp_double(&p, k ? 0.5 : 2), y, y}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
    float out[6];
    etrt_tensor_view v = {(void *)x1, F32, 2, {4, 3}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    check_close("pdist", k, out, pdist_ref[k], 6);
    free(pte);
  }
}

/* A negative p is refused when the method is created; rows of different lengths when
 * it runs. */
static void test_distance_refusals(void) {
  for (int rows = 0; rows < 2; ++rows) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 3}, NULL, 0);
    int32_t b = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, rows ? 4 : 3}, x2, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, NULL, 0);
    etrt_test_kp_call(
        &p, "aten::_cdist_forward.out",
        (int32_t[]){a, b, etrt_test_kp_double(&p, rows ? 2 : -1), etrt_test_kp_none(&p), y, y}, 6);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
    float out[8];
    etrt_tensor_view v = {(void *)x1, F32, 2, {4, 3}};
    CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                ETRT_ERROR_INVALID_ARGUMENT,
                rows ? "aten::_cdist_forward.out (instruction 0): x1 rows have 3 elements, x2 "
                       "rows 4"
                     : "argument 2 (p) is -1; p >= 0 is needed");
    free(pte);
  }
}

int main(void) {
  RUN_TEST(test_cdist);
  RUN_TEST(test_pdist);
  RUN_TEST(test_distance_refusals);
  return TEST_EXIT();
}
