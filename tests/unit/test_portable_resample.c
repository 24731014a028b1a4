/* The portable kernels that move elements (resample.c) against values computed with
 * torch 2.14 (committed constants): max_pool2d_with_indices with ATen's indices (NaN,
 * ceil mode, padding, channels-last, float16), nearest and bilinear upsampling, the
 * reflection and replication pads, flip, roll and pixel_unshuffle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float mp_in[50] = {
    -1.12583983f,  -1.1523602f,   -0.250578582f, -0.433878809f, 0.848710358f, 0.692009151f,
    NAN,           -2.11521935f,  0.322274923f,  -1.26333475f,  0.349983186f, 0.30813393f,
    0.119841509f,  1.2376579f,    1.11677718f,   -0.247278154f, -1.35265374f, -1.6959312f,
    0.566650629f,  0.793508351f,  0.598839462f,  -1.55509508f,  -0.34136039f, 1.85300612f,
    0.750189483f,  -0.585497558f, -0.173396751f, 0.183477938f,  1.38936615f,  1.58633423f,
    0.946298361f,  -0.843676746f, -0.613583088f, 0.0315927416f, 1.05535746f,  0.17784372f,
    -0.230335474f, -0.391754389f, 0.543294728f,  -0.395157546f, 0.205525666f, -0.450329751f,
    1.52097952f,   3.41050267f,   -1.53118432f,  -1.23413503f,  1.81972528f,  -0.551528692f,
    -1.32532597f,  0.188553572f};
static const float mp_values[18] = {
    NAN,          NAN,         0.848710358f, NAN,          NAN,         1.2376579f,
    0.598839462f, 1.85300612f, 1.85300612f,  0.946298361f, 1.38936615f, 1.58633423f,
    0.946298361f, 3.41050267f, 3.41050267f,  1.81972528f,  3.41050267f, 3.41050267f};
static const int64_t mp_indices[18] = {6, 6, 4, 6, 6,  13, 20, 23, 23,
                                       5, 3, 4, 5, 18, 18, 21, 18, 18};
static const float up_in[12] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f,
                                2.0f,  2.5f,  3.0f, 3.5f, 4.0f, 4.5f};
static const float up_nearest[35] = {-1.0f, -1.0f, -0.5f, -0.5f, 0.0f, 0.0f, 0.5f, -1.0f, -1.0f,
                                     -0.5f, -0.5f, 0.0f,  0.0f,  0.5f, 1.0f, 1.0f, 1.5f,  1.5f,
                                     2.0f,  2.0f,  2.5f,  1.0f,  1.0f, 1.5f, 1.5f, 2.0f,  2.0f,
                                     2.5f,  3.0f,  3.0f,  3.5f,  3.5f, 4.0f, 4.0f, 4.5f};
static const float up_bilinear[36] = {-1.0f, -0.75f, -0.416666627f, -0.0833333135f, 0.25f, 0.5f,
                                      -0.5f, -0.25f, 0.0833333731f, 0.416666687f,   0.75f, 1.0f,
                                      0.5f,  0.75f,  1.08333337f,   1.41666663f,    1.75f, 2.0f,
                                      1.5f,  1.75f,  2.08333349f,   2.41666651f,    2.75f, 3.0f,
                                      2.5f,  2.75f,  3.08333325f,   3.41666651f,    3.75f, 4.0f,
                                      3.0f,  3.25f,  3.58333325f,   3.91666651f,    4.25f, 4.5f};
static const float up_bilinear_ac[24] = {
    -1.0f,        -0.699999988f, -0.399999976f, -0.0999999642f, 0.200000048f, 0.5f,
    0.333333373f, 0.633333385f,  0.933333397f,  1.23333347f,    1.53333342f,  1.83333337f,
    1.66666675f,  1.96666682f,   2.26666689f,   2.5666666f,     2.86666656f,  3.16666675f,
    3.0f,         3.30000019f,   3.5999999f,    3.9000001f,     4.19999981f,  4.5f};
static const float pad_reflect[42] = {
    2.0f, 1.5f, 1.0f, 1.5f, 2.0f, 2.5f, 2.0f, 0.0f, -0.5f, -1.0f, -0.5f, 0.0f, 0.5f, 0.0f,
    2.0f, 1.5f, 1.0f, 1.5f, 2.0f, 2.5f, 2.0f, 4.0f, 3.5f,  3.0f,  3.5f,  4.0f, 4.5f, 4.0f,
    2.0f, 1.5f, 1.0f, 1.5f, 2.0f, 2.5f, 2.0f, 0.0f, -0.5f, -1.0f, -0.5f, 0.0f, 0.5f, 0.0f};
static const float pad_replicate[42] = {
    -1.0f, -1.0f, -1.0f, -0.5f, 0.0f, 0.5f, 0.5f, -1.0f, -1.0f, -1.0f, -0.5f, 0.0f, 0.5f, 0.5f,
    1.0f,  1.0f,  1.0f,  1.5f,  2.0f, 2.5f, 2.5f, 3.0f,  3.0f,  3.0f,  3.5f,  4.0f, 4.5f, 4.5f,
    3.0f,  3.0f,  3.0f,  3.5f,  4.0f, 4.5f, 4.5f, 3.0f,  3.0f,  3.0f,  3.5f,  4.0f, 4.5f, 4.5f};
static const float flip_ref[12] = {4.5f, 4.0f, 3.5f, 3.0f, 2.5f,  2.0f,
                                   1.5f, 1.0f, 0.5f, 0.0f, -0.5f, -1.0f};
static const float roll_ref[12] = {4.0f,  4.5f,  3.0f, 3.5f, 0.0f, 0.5f,
                                   -1.0f, -0.5f, 2.0f, 2.5f, 1.0f, 1.5f};
static const float roll_flat[12] = {2.5f,  3.0f, 3.5f, 4.0f, 4.5f, -1.0f,
                                    -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f};
static const float unshuffle[32] = {0.0f,  2.0f,  8.0f,  10.0f, 1.0f,  3.0f,  9.0f,  11.0f,
                                    4.0f,  6.0f,  12.0f, 14.0f, 5.0f,  7.0f,  13.0f, 15.0f,
                                    16.0f, 18.0f, 24.0f, 26.0f, 17.0f, 19.0f, 25.0f, 27.0f,
                                    20.0f, 22.0f, 28.0f, 30.0f, 21.0f, 23.0f, 29.0f, 31.0f};

static void check_floats(const char *what, const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    int same =
        isnan(want[i]) ? isnan(got[i]) : fabs(got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]));
    if (!same)
      etrt_test_fail(__FILE__, __LINE__, "%s: element %zu is %.9g, want %.9g", what, i, got[i],
                     want[i]);
  }
}

/* kernel 3, stride 2, padding 1, dilation 1, ceil mode on [1, 2, 5, 5] with a NaN;
 * channels_last: input and outputs in dim order (0, 2, 3, 1); half: float16. */
static void run_max_pool(int channels_last, int half) {
  const etrt_dtype dtype = half ? ETRT_DTYPE_FLOAT16 : F32;
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, dtype, 4, (int32_t[]){1, 2, 5, 5}, NULL, 0);
  int32_t k = etrt_test_kp_ints(&p, (int64_t[]){3, 3}, 2);
  int32_t s = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
  int32_t pad = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
  int32_t dil = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
  int32_t ceil_mode = etrt_test_kp_bool(&p, 1);
  int32_t y = etrt_test_kp_tensor(&p, dtype, 4, (int32_t[]){1, 2, 3, 3}, NULL, 0);
  int32_t i = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 4, (int32_t[]){1, 2, 3, 3}, NULL, 0);
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  if (channels_last) {
    etrt_test_kp_dim_order(&p, x, nhwc);
    etrt_test_kp_dim_order(&p, y, nhwc);
    etrt_test_kp_dim_order(&p, i, nhwc);
  }
  int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, i}, 2);
  etrt_test_kp_call(&p, "aten::max_pool2d_with_indices.out",
                    (int32_t[]){x, k, s, pad, dil, ceil_mode, y, i, ret}, 9);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){y, i}, 2, &size);
  /* The input in the program's dim order and dtype. */
  uint8_t in[50 * 4];
  for (int c = 0; c < 2; ++c)
    for (int hw = 0; hw < 25; ++hw) {
      int at = channels_last ? hw * 2 + c : c * 25 + hw;
      float v = mp_in[c * 25 + hw];
      if (half)
        ((uint16_t *)in)[at] = etrt_float_to_half(v);
      else
        ((float *)in)[at] = v;
    }
  etrt_tensor_view v = {in, dtype, 4, {1, 2, 5, 5}}, o[2];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
  float values[18];
  int64_t indices[18];
  for (int c = 0; c < 2; ++c)
    for (int hw = 0; hw < 9; ++hw) {
      int at = channels_last ? hw * 2 + c : c * 9 + hw;
      values[c * 9 + hw] = half ? etrt_half_to_float(((const uint16_t *)o[0].data)[at])
                                : ((const float *)o[0].data)[at];
      indices[c * 9 + hw] = ((const int64_t *)o[1].data)[at];
    }
  float want[18];
  for (int e = 0; e < 18; ++e)
    want[e] = half ? etrt_half_to_float(etrt_float_to_half(mp_values[e])) : mp_values[e];
  check_floats("max_pool2d values", values, want, 18);
  CHECK(memcmp(indices, mp_indices, sizeof indices) == 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

static void test_max_pool_indices(void) {
  run_max_pool(0, 0);
  run_max_pool(1, 0);
  run_max_pool(1, 1);
}

/* One call on the [1, 1, 3, 4] input `up_in`: args between the input and the out
 * tensor of `out_dims`, optionally channels-last on both. */
static void check_resample(const char *op, const int32_t *extra, int num_extra, etrt_test_kp *p,
                           int32_t x, const int32_t *out_dims, const float *want, size_t n) {
  int32_t y = etrt_test_kp_tensor(p, F32, 4, out_dims, NULL, 0);
  int32_t args[8], count = 0;
  args[count++] = x;
  for (int i = 0; i < num_extra; ++i) args[count++] = extra[i];
  args[count++] = y;
  args[count++] = y;
  etrt_test_kp_call(p, op, args, (uint32_t)count);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(p, &x, 1, &y, 1, &size);
  float out[64];
  etrt_tensor_view v = {(void *)up_in, F32, 4, {1, 1, 3, 4}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, n * sizeof(float), NULL));
  check_floats(op, out, want, n);
  free(pte);
}

static void test_upsample_and_pads(void) {
  etrt_test_kp p;
  const int32_t in_dims[4] = {1, 1, 3, 4};
#define START()          \
  etrt_test_kp_init(&p); \
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, in_dims, NULL, 0)
  {
    START();
    int32_t extra[2] = {etrt_test_kp_ints(&p, (int64_t[]){5, 7}, 2), etrt_test_kp_none(&p)};
    check_resample("aten::upsample_nearest2d.vec_out", extra, 2, &p, x, (int32_t[]){1, 1, 5, 7},
                   up_nearest, 35);
  }
  {
    START();
    /* scale factors (2.0, 1.5) as a float[] value */
    int32_t scales = etrt_test_kp_doubles(&p, (double[]){2.0, 1.5}, 2);
    int32_t extra[3] = {etrt_test_kp_none(&p), etrt_test_kp_bool(&p, 0), scales};
    check_resample("aten::upsample_bilinear2d.vec_out", extra, 3, &p, x, (int32_t[]){1, 1, 6, 6},
                   up_bilinear, 36);
  }
  {
    START();
    int32_t extra[3] = {etrt_test_kp_ints(&p, (int64_t[]){4, 6}, 2), etrt_test_kp_bool(&p, 1),
                        etrt_test_kp_none(&p)};
    check_resample("aten::upsample_bilinear2d.vec_out", extra, 3, &p, x, (int32_t[]){1, 1, 4, 6},
                   up_bilinear_ac, 24);
  }
  {
    START();
    int32_t extra[1] = {etrt_test_kp_ints(&p, (int64_t[]){2, 1, 1, 2}, 4)};
    check_resample("aten::reflection_pad2d.out", extra, 1, &p, x, (int32_t[]){1, 1, 6, 7},
                   pad_reflect, 42);
  }
  {
    START();
    int32_t extra[1] = {etrt_test_kp_ints(&p, (int64_t[]){2, 1, 1, 2}, 4)};
    check_resample("aten::replication_pad2d.out", extra, 1, &p, x, (int32_t[]){1, 1, 6, 7},
                   pad_replicate, 42);
  }
  {
    START();
    int32_t extra[1] = {etrt_test_kp_ints(&p, (int64_t[]){2, 3}, 2)};
    check_resample("aten::flip.out", extra, 1, &p, x, in_dims, flip_ref, 12);
  }
  {
    START();
    int32_t extra[2] = {etrt_test_kp_ints(&p, (int64_t[]){1, -2}, 2),
                        etrt_test_kp_ints(&p, (int64_t[]){2, 3}, 2)};
    check_resample("aten::roll.out", extra, 2, &p, x, in_dims, roll_ref, 12);
  }
  {
    START();
    int32_t extra[2] = {etrt_test_kp_ints(&p, (int64_t[]){5}, 1), etrt_test_kp_ints(&p, NULL, 0)};
    check_resample("aten::roll.out", extra, 2, &p, x, in_dims, roll_flat, 12);
  }
#undef START
}

static void test_pixel_unshuffle(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 4, 4}, NULL, 0);
  int32_t r = etrt_test_kp_int(&p, 2);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 8, 2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::pixel_unshuffle.out", (int32_t[]){x, r, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[32], out[32];
  for (int i = 0; i < 32; ++i) in[i] = (float)i;
  etrt_tensor_view v = {in, F32, 4, {1, 2, 4, 4}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  check_floats("pixel_unshuffle", out, unshuffle, 32);
  free(pte);
}

/* Reflection padding as large as the dim is refused at execute, naming the operator. */
static void test_reflection_pad_too_large(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){1, 3}, NULL, 0);
  int32_t pad = etrt_test_kp_ints(&p, (int64_t[]){3, 0}, 2);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){1, 6}, NULL, 0);
  etrt_test_kp_call(&p, "aten::reflection_pad1d.out", (int32_t[]){x, pad, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[3] = {1, 2, 3};
  etrt_tensor_view v = {in, F32, 2, {1, 3}};
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  CHECK_FAILS(etrt_test_kp_execute(pte, size, &v, 1, &program, &method),
              ETRT_ERROR_INVALID_ARGUMENT, "aten::reflection_pad1d.out (instruction 0): padding 3");
  if (method) etrt_method_destroy(method);
  if (program) etrt_program_destroy(program);
  free(pte);
}

/* constant_pad_nd on a channels-last [1, 2, 2, 2] (pad the last dim by 1 before, the
 * third by 1 after, value 0.5) into a channels-last [1, 2, 3, 3]: positions follow the
 * dim order (ExecuTorch 1.5.1's own kernel places them as if contiguous). */
static void test_constant_pad_channels_last(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
  int32_t pad = etrt_test_kp_ints(&p, (int64_t[]){1, 0, 0, 1}, 4);
  int32_t value = etrt_test_kp_double(&p, 0.5);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 3, 3}, NULL, 0);
  etrt_test_kp_dim_order(&p, x, nhwc);
  etrt_test_kp_dim_order(&p, y, nhwc);
  etrt_test_kp_call(&p, "aten::constant_pad_nd.out", (int32_t[]){x, pad, value, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[8], out[18];
  for (int c = 0; c < 2; ++c) /* logical x[0, c, h, w] = 10 c + 2 h + w, stored channels-last */
    for (int hw = 0; hw < 4; ++hw) in[hw * 2 + c] = (float)(10 * c + hw);
  etrt_tensor_view v = {in, F32, 4, {1, 2, 2, 2}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w) {
        float want = (h < 2 && w >= 1) ? (float)(10 * c + 2 * h + (w - 1)) : 0.5f;
        CHECK(out[(h * 3 + w) * 2 + c] == want);
      }
  free(pte);
}

/* diagonal_copy of [2, 3, 4] over dims (2, 1) with offset -1 (torch: [[1, 6, 11], [13, 18, 23]]).
 */
static void test_diagonal(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
  int32_t off = etrt_test_kp_int(&p, -1), d1 = etrt_test_kp_int(&p, 2);
  int32_t d2 = etrt_test_kp_int(&p, 1);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::diagonal_copy.out", (int32_t[]){x, off, d1, d2, y, y}, 6);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[24], out[6];
  for (int i = 0; i < 24; ++i) in[i] = (float)i;
  etrt_tensor_view v = {in, F32, 3, {2, 3, 4}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  check_floats("diagonal_copy", out, (const float[]){1, 6, 11, 13, 18, 23}, 6);
  free(pte);
}

int main(void) {
  RUN_TEST(test_diagonal);
  RUN_TEST(test_constant_pad_channels_last);
  RUN_TEST(test_max_pool_indices);
  RUN_TEST(test_upsample_and_pads);
  RUN_TEST(test_pixel_unshuffle);
  RUN_TEST(test_reflection_pad_too_large);
  return TEST_EXIT();
}
