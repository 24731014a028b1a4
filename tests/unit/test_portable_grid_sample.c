/* grid_sampler_2d against torch 2.14's values (committed constants): input [1, 2, 3, 4],
 * a [1, 2, 3, 2] grid with points outside [-1, 1], for bilinear, nearest and bicubic
 * with each padding mode; the input channels-last; the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float grid_x[24] = {
    -0.899999976f, -0.529999971f, -0.159999967f,  0.210000038f, 0.580000043f, 0.950000048f,
    -0.779999852f, -0.409999728f, -0.0399998426f, 0.330000043f, 0.700000167f, 1.07000029f,
    -0.659999728f, -0.289999843f, 0.0800005198f,  0.450000405f, 0.820000291f, 1.19000018f,
    -0.539999843f, -0.16999948f,  0.200000405f,   0.570000291f, 0.940000653f, -0.789999366f};
static const float grid_g[12] = {-1.29999995f, -0.899999976f, -0.400000006f, 0.25f,
                                 0.600000024f, 1.20000005f,   1.10000002f,   -0.200000003f,
                                 0.0f,         0.0f,          0.949999988f,  0.699999988f};
static const float grid_ref[8][12] = {
    {0.0f, 0.606500089f, 0.191799879f, -0.0671999902f, 0.0850000978f, 0.609899938f, 0.0f,
     0.846500218f, -0.0541998409f, 0.00480014086f, 0.325000167f, -0.450299501f},
    {-0.751999915f, 0.758000016f, 0.848000288f, -0.285999775f, 0.0850000978f, 0.598250389f,
     -0.511999667f, 0.998000205f, 0.248000488f, -0.0459995084f, 0.325000167f, -0.521499634f},
    {-0.863000035f, 0.606500089f, 0.959000289f, -0.223999828f, 0.0850000978f, 1.07000029f,
     -0.622999787f, 0.846500218f, -0.270999432f, 0.0160004497f, 0.325000167f, -0.789999366f},
    {-0.899999976f, 0.950000048f, 0.700000167f, -0.409999728f, -0.779999852f, 1.07000029f,
     -0.659999728f, 1.19000018f, 0.940000653f, -0.16999948f, -0.539999843f, -0.789999366f},
    {-0.899999976f, 0.950000048f, 0.700000167f, -0.409999728f, -0.779999852f, 1.07000029f,
     -0.659999728f, 1.19000018f, 0.940000653f, -0.16999948f, -0.539999843f, -0.789999366f},
    {0.0464430377f, 0.955353856f, 0.235808f, -0.0905762166f, 0.0850001127f, 0.698139846f,
     0.0367172845f, 1.22326183f, -0.0664196983f, 0.0550827831f, 0.325000077f, -0.664485335f},
    {-1.06414104f, 0.91868794f, 1.02215433f, -0.382707268f, 0.0850001127f, 1.16004884f,
     -0.824140608f, 1.15868819f, -0.288284242f, 0.0997571498f, 0.325000077f, -1.00549853f},
    {-0.763923824f, 0.996154368f, 0.753292799f, -0.466932178f, 0.0850001127f, 0.786141336f,
     -0.523923635f, 1.23615444f, 0.104573041f, -0.0346875228f, 0.325000077f, -0.698311031f},
};

/* interpolation, padding, align_corners of each row of grid_ref. */
static const int combos[8][3] = {{0, 0, 0}, {0, 1, 1}, {0, 2, 0}, {1, 0, 1},
                                 {1, 2, 1}, {2, 0, 0}, {2, 1, 0}, {2, 2, 1}};

static void test_grid_sampler(void) {
  for (int k = 0; k < 9; ++k) {
    const int channels_last = k == 8, *c = combos[channels_last ? 5 : k];
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 3, 4}, NULL, 0);
    if (channels_last) etrt_test_kp_dim_order(&p, x, (const uint8_t[]){0, 2, 3, 1});
    int32_t g = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 3, 2}, grid_g, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::grid_sampler_2d.out",
                      (int32_t[]){x, g, etrt_test_kp_int(&p, c[0]), etrt_test_kp_int(&p, c[1]),
                                  etrt_test_kp_bool(&p, c[2]), y, y},
                      7);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float in[24], out[12];
    for (int i = 0; i < 24; ++i) /* logical i = ch * 12 + hw; NHWC stores it at hw * 2 + ch */
      in[channels_last ? (i % 12) * 2 + i / 12 : i] = grid_x[i];
    etrt_tensor_view v = {in, F32, 4, {1, 2, 3, 4}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    const float *want = grid_ref[channels_last ? 5 : k];
    for (int i = 0; i < 12; ++i)
      if (!(fabs(out[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]))))
        etrt_test_fail(__FILE__, __LINE__,
                       "mode %d padding %d align %d%s: element %d is %.9g, "
                       "want %.9g",
                       c[0], c[1], c[2], channels_last ? " (channels-last)" : "", i, out[i],
                       want[i]);
    free(pte);
  }
}

/* An unknown interpolation mode is refused when the method is created; a grid whose
 * last dim is not 2 when it runs, with nothing written. */
static void test_grid_sampler_refusals(void) {
  for (int bad_grid = 0; bad_grid < 2; ++bad_grid) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 3, 4}, NULL, 0);
    int32_t g = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, bad_grid ? 3 : 2}, grid_g, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
    etrt_test_kp_call(&p, "aten::grid_sampler_2d.out",
                      (int32_t[]){x, g, etrt_test_kp_int(&p, bad_grid ? 0 : 3),
                                  etrt_test_kp_int(&p, 0), etrt_test_kp_bool(&p, 0), y, y},
                      7);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float in[24] = {0}, out[8];
    etrt_tensor_view v = {in, F32, 4, {1, 2, 3, 4}};
    if (bad_grid)
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "aten::grid_sampler_2d.out (instruction 0): the grid must be [1, H, W, 2], not "
                  "[1, 2, 2, 3]");
    else
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT, "argument 2 (interpolation_mode) is 3");
    free(pte);
  }
}

int main(void) {
  RUN_TEST(test_grid_sampler);
  RUN_TEST(test_grid_sampler_refusals);
  return TEST_EXIT();
}
