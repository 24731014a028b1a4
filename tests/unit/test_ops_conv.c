/* Conv, ConvTranspose and EtrtFusedConv on the CPU executor against direct loops written here
 * (1-D, 2-D and 3-D, groups, strides, dilations, explicit and automatic pads, bias,
 * output_padding, output_shape), depthwise convolutions (their own kernel), the same
 * bits with one thread and with several, and their refusals. */
#include <string.h>

#include "base/thread_pool.h"
#include "op_harness.h"

static void fill(float *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
}

/* Convolution geometry for the reference: everything 3-D (unused axes have size 1). */
typedef struct ref_conv {
  int n, c, m, group;
  int in[3], k[3], s[3], d[3], pb[3], out[3];
} ref_conv;

static void ref_conv_forward(const ref_conv *g, const float *x, const float *w, const float *b,
                             double *y) {
  int cg = g->c / g->group, mg = g->m / g->group;
  for (int n = 0; n < g->n; ++n)
    for (int m = 0; m < g->m; ++m)
      for (int o0 = 0; o0 < g->out[0]; ++o0)
        for (int o1 = 0; o1 < g->out[1]; ++o1)
          for (int o2 = 0; o2 < g->out[2]; ++o2) {
            double acc = b ? b[m] : 0.0;
            int grp = m / mg;
            for (int c = 0; c < cg; ++c)
              for (int k0 = 0; k0 < g->k[0]; ++k0)
                for (int k1 = 0; k1 < g->k[1]; ++k1)
                  for (int k2 = 0; k2 < g->k[2]; ++k2) {
                    int i0 = o0 * g->s[0] - g->pb[0] + k0 * g->d[0];
                    int i1 = o1 * g->s[1] - g->pb[1] + k1 * g->d[1];
                    int i2 = o2 * g->s[2] - g->pb[2] + k2 * g->d[2];
                    if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1] || i2 < 0 ||
                        i2 >= g->in[2])
                      continue;
                    int ci = grp * cg + c;
                    acc +=
                        (double)
                            x[(((n * g->c + ci) * g->in[0] + i0) * g->in[1] + i1) * g->in[2] + i2] *
                        w[(((m * cg + c) * g->k[0] + k0) * g->k[1] + k1) * g->k[2] + k2];
                  }
            y[(((n * g->m + m) * g->out[0] + o0) * g->out[1] + o1) * g->out[2] + o2] = acc;
          }
}

/* ConvTranspose: W is [C, M/group, k...]; every input element scatters into the output. */
static void ref_conv_transpose(const ref_conv *g, const float *x, const float *w, const float *b,
                               double *y) {
  int cg = g->c / g->group, mg = g->m / g->group;
  int64_t out_count = (int64_t)g->out[0] * g->out[1] * g->out[2];
  for (int n = 0; n < g->n; ++n)
    for (int m = 0; m < g->m; ++m)
      for (int64_t p = 0; p < out_count; ++p) y[(n * g->m + m) * out_count + p] = b ? b[m] : 0.0;
  for (int n = 0; n < g->n; ++n)
    for (int c = 0; c < g->c; ++c)
      for (int i0 = 0; i0 < g->in[0]; ++i0)
        for (int i1 = 0; i1 < g->in[1]; ++i1)
          for (int i2 = 0; i2 < g->in[2]; ++i2) {
            double v = x[(((n * g->c + c) * g->in[0] + i0) * g->in[1] + i1) * g->in[2] + i2];
            int grp = c / cg;
            for (int mm = 0; mm < mg; ++mm)
              for (int k0 = 0; k0 < g->k[0]; ++k0)
                for (int k1 = 0; k1 < g->k[1]; ++k1)
                  for (int k2 = 0; k2 < g->k[2]; ++k2) {
                    int o0 = i0 * g->s[0] - g->pb[0] + k0 * g->d[0];
                    int o1 = i1 * g->s[1] - g->pb[1] + k1 * g->d[1];
                    int o2 = i2 * g->s[2] - g->pb[2] + k2 * g->d[2];
                    if (o0 < 0 || o0 >= g->out[0] || o1 < 0 || o1 >= g->out[1] || o2 < 0 ||
                        o2 >= g->out[2])
                      continue;
                    int m = grp * mg + mm;
                    y[(((n * g->m + m) * g->out[0] + o0) * g->out[1] + o1) * g->out[2] + o2] +=
                        v * w[(((c * mg + mm) * g->k[0] + k0) * g->k[1] + k1) * g->k[2] + k2];
                  }
          }
}

static float g_x[4096], g_w[4096], g_b[64], g_y[8192];
static double g_want[8192];

static void test_conv_2d_groups_strides_dilations(void) {
  /* x [2, 4, 9, 8], W [6, 2, 3, 2], group 2, strides (2, 1), dilations (2, 3), pads (1, 0, 2, 1) */
  ref_conv g = {2, 4, 6, 2, {1, 9, 8}, {1, 3, 2}, {1, 2, 1}, {1, 2, 3}, {0, 1, 0}, {1, 0, 0}};
  g.out[1] = (9 + 1 + 2 - (2 * 2 + 1)) / 2 + 1;
  g.out[2] = (8 + 0 + 1 - (1 * 3 + 1)) / 1 + 1;
  fill(g_x, 2 * 4 * 9 * 8, 1);
  fill(g_w, 6 * 2 * 3 * 2, 2);
  fill(g_b, 6, 3);
  oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {2, 4, 9, 8}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 4, {6, 2, 3, 2}, g_w, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {6}, g_b, OH_CONSTANT}};
  etrt_attribute attrs[] = {OH_INT("group", 2), OH_INTS("strides", 2, 2, 1),
                            OH_INTS("dilations", 2, 2, 3), OH_INTS("pads", 4, 1, 0, 2, 1),
                            OH_INTS("kernel_shape", 2, 3, 2)};
  oh_output info[1];
  CHECK_OK(oh_run("Conv", 3, in, 5, attrs, 1, (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].rank, 4);
  CHECK_EQ_INT(info[0].dims[1], 6);
  CHECK_EQ_INT(info[0].dims[2], g.out[1]);
  CHECK_EQ_INT(info[0].dims[3], g.out[2]);
  ref_conv_forward(&g, g_x, g_w, g_b, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 2 * 6 * g.out[1] * g.out[2], 1e-5);
}

static void test_conv_pointwise_and_deep(void) {
  /* 1x1 (the direct GEMM path) with bias */
  ref_conv g = {1, 3, 5, 1, {1, 4, 5}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 4, 5}};
  fill(g_x, 60, 4);
  fill(g_w, 15, 5);
  fill(g_b, 5, 6);
  oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {1, 3, 4, 5}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 4, {5, 3, 1, 1}, g_w, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {5}, g_b, OH_CONSTANT}};
  CHECK_OK(oh_run("Conv", 3, in, 0, NULL, 1, (void *[]){g_y}, NULL));
  ref_conv_forward(&g, g_x, g_w, g_b, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 100, 1e-5);
  /* more than one K tile (C * kernel = 40 * 9 = 360 > 128) and several N tiles */
  ref_conv h = {1, 40, 3, 1, {1, 10, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {1, 10, 10}};
  fill(g_x, 4000, 7);
  fill(g_w, 1080, 8);
  oh_value in2[2] = {{ETRT_DTYPE_FLOAT32, 4, {1, 40, 10, 10}, g_x, OH_INPUT},
                     {ETRT_DTYPE_FLOAT32, 4, {3, 40, 3, 3}, g_w, OH_CONSTANT}};
  CHECK_OK(oh_run("Conv", 2, in2, 1, (etrt_attribute[]){OH_INTS("pads", 4, 1, 1, 1, 1)}, 1,
                  (void *[]){g_y}, NULL));
  ref_conv_forward(&h, g_x, g_w, NULL, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 300, 1e-4);
}

/* Depthwise: one input channel per group, depth multiplier `mult`. */
static void run_depthwise(int c, int mult, int h, int w, int k, int sh, int sw, int dh, int dw,
                          int pt, int pl, int pb, int pr, int bias) {
  ref_conv g = {2,         c,           c * mult,    c,           {1, h, w},
                {1, k, k}, {1, sh, sw}, {1, dh, dw}, {0, pt, pl}, {1, 1, 1}};
  g.out[0] = 1;
  g.out[1] = (h + pt + pb - ((k - 1) * dh + 1)) / sh + 1;
  g.out[2] = (w + pl + pr - ((k - 1) * dw + 1)) / sw + 1;
  fill(g_x, 2 * c * h * w, 11);
  fill(g_w, c * mult * k * k, 12);
  fill(g_b, c * mult, 13);
  oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {2, c, h, w}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 4, {c * mult, 1, k, k}, g_w, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {c * mult}, g_b, OH_CONSTANT}};
  etrt_attribute attrs[] = {OH_INT("group", c), OH_INTS("strides", 2, sh, sw),
                            OH_INTS("dilations", 2, dh, dw), OH_INTS("pads", 4, pt, pl, pb, pr)};
  oh_output info[1];
  CHECK_OK(oh_run("Conv", bias ? 3 : 2, in, 4, attrs, 1, (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].dims[2], g.out[1]);
  CHECK_EQ_INT(info[0].dims[3], g.out[2]);
  ref_conv_forward(&g, g_x, g_w, bias ? g_b : NULL, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 2 * c * mult * g.out[1] * g.out[2], 1e-5);
}

static void test_conv_depthwise(void) {
  run_depthwise(6, 1, 11, 10, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1); /* MobileNet's 3x3 */
  run_depthwise(6, 2, 11, 10, 3, 2, 1, 1, 2, 1, 2, 0, 1, 1); /* multiplier 2, strides, dilations */
  run_depthwise(4, 1, 12, 9, 5, 2, 2, 1, 1, 2, 2, 2, 2, 0);  /* 5x5 stride 2, no bias */
  run_depthwise(3, 1, 5, 4, 3, 1, 3, 2, 1, 0, 3, 3, 0, 1);   /* pads wider than the input */
  run_depthwise(5, 1, 9, 11, 3, 1, 1, 2, 3, 2, 3, 1, 2, 1);  /* unit strides, dilated */
  run_depthwise(4, 3, 7, 6, 5, 1, 1, 1, 1, 0, 4, 2, 0, 0);   /* unit strides, uneven pads */
}

/* The same convolutions with one thread and with four give the same bits. */
static void test_conv_threads(void) {
  static float one[32 * 24 * 24], four[32 * 24 * 24];
  static float x[2 * 16 * 24 * 24], w[32 * 16 * 9];
  fill(x, 2 * 16 * 24 * 24, 21);
  fill(w, 32 * 16 * 9, 22);
  fill(g_b, 32, 23);
  CHECK_OK(etrt_thread_pool_acquire(4));
  const struct {
    int64_t maps, channels_per_group, k, group;
  } cases[] = {{32, 16, 3, 1}, {16, 1, 3, 16}, {32, 16, 1, 1}, {32, 4, 3, 4}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
    oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {1, 16, 24, 24}, x, OH_INPUT},
                      {ETRT_DTYPE_FLOAT32,
                       4,
                       {cases[c].maps, cases[c].channels_per_group, cases[c].k, cases[c].k},
                       w,
                       OH_CONSTANT},
                      {ETRT_DTYPE_FLOAT32, 1, {cases[c].maps}, g_b, OH_CONSTANT}};
    etrt_attribute attrs[] = {OH_INT("group", cases[c].group)};
    int64_t count = cases[c].maps * (24 - cases[c].k + 1) * (24 - cases[c].k + 1);
    etrt_thread_pool_limit_set(1);
    CHECK_OK(oh_run("Conv", 3, in, 1, attrs, 1, (void *[]){one}, NULL));
    etrt_thread_pool_limit_set(4);
    CHECK_OK(oh_run("Conv", 3, in, 1, attrs, 1, (void *[]){four}, NULL));
    CHECK(memcmp(one, four, (size_t)count * sizeof(float)) == 0);
  }
  etrt_thread_pool_limit_set(0);
  etrt_thread_pool_release();
}

/* ConvTranspose split over blocks of output maps, and over input tiles where no two
 * inputs reach one output (2x2 stride 2): the reference's values, and the same bits with
 * one thread and with four; also overlapping 3x3 stride-2 windows in two groups. */
static void test_conv_transpose_threads(void) {
  static float x[2 * 16 * 20 * 20], w[16 * 64 * 9], one[2 * 64 * 41 * 41], four[2 * 64 * 41 * 41];
  static double want[2 * 64 * 41 * 41];
  fill(x, 2 * 16 * 20 * 20, 31);
  fill(w, 16 * 64 * 9, 32);
  fill(g_b, 64, 33);
  CHECK_OK(etrt_thread_pool_acquire(4));
  const struct { int maps, k, group; } cases[] = {{64, 2, 1}, {32, 3, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
    int k = cases[c].k, maps = cases[c].maps, group = cases[c].group;
    int out = (20 - 1) * 2 + k;
    ref_conv g = {2,         16,        maps,      group,     {1, 20, 20},
                  {1, k, k}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, out, out}};
    oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {2, 16, 20, 20}, x, OH_INPUT},
                      {ETRT_DTYPE_FLOAT32, 4, {16, maps / group, k, k}, w, OH_CONSTANT},
                      {ETRT_DTYPE_FLOAT32, 1, {maps}, g_b, OH_CONSTANT}};
    etrt_attribute attrs[] = {OH_INT("group", group), OH_INTS("strides", 2, 2, 2)};
    int64_t count = 2 * (int64_t)maps * out * out;
    etrt_thread_pool_limit_set(1);
    CHECK_OK(oh_run("ConvTranspose", 3, in, 2, attrs, 1, (void *[]){one}, NULL));
    etrt_thread_pool_limit_set(4);
    CHECK_OK(oh_run("ConvTranspose", 3, in, 2, attrs, 1, (void *[]){four}, NULL));
    CHECK(memcmp(one, four, (size_t)count * sizeof(float)) == 0);
    ref_conv_transpose(&g, x, w, g_b, want);
    OH_CHECK_FLOATS(four, want, count, 1e-4);
  }
  etrt_thread_pool_limit_set(0);
  etrt_thread_pool_release();
}

static void test_conv_auto_pad(void) {
  /* in 6, kernel 3, stride 2: out 3, total pad 1: SAME_UPPER puts it at the end,
   * SAME_LOWER at the beginning; VALID uses none */
  fill(g_x, 36, 9);
  fill(g_w, 9, 10);
  oh_value in[2] = {{ETRT_DTYPE_FLOAT32, 4, {1, 1, 6, 6}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 4, {1, 1, 3, 3}, g_w, OH_CONSTANT}};
  const char *modes[3] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
  int begins[3] = {0, 1, 0}, outs[3] = {3, 3, 2};
  for (int i = 0; i < 3; ++i) {
    ref_conv g = {1,
                  1,
                  1,
                  1,
                  {1, 6, 6},
                  {1, 3, 3},
                  {1, 2, 2},
                  {1, 1, 1},
                  {0, begins[i], begins[i]},
                  {1, outs[i], outs[i]}};
    oh_output info[1];
    CHECK_OK(
        oh_run("Conv", 2, in, 2,
               (etrt_attribute[]){OH_STRING("auto_pad", modes[i]), OH_INTS("strides", 2, 2, 2)}, 1,
               (void *[]){g_y}, info));
    CHECK_EQ_INT(info[0].dims[2], outs[i]);
    ref_conv_forward(&g, g_x, g_w, NULL, g_want);
    OH_CHECK_FLOATS(g_y, g_want, outs[i] * outs[i], 1e-5);
  }
}

static void test_conv_1d_3d(void) {
  ref_conv g1 = {2, 3, 4, 1, {1, 1, 10}, {1, 1, 3}, {1, 1, 2}, {1, 1, 2}, {0, 0, 1}, {1, 1, 4}};
  fill(g_x, 60, 11);
  fill(g_w, 36, 12);
  fill(g_b, 4, 13);
  oh_value in1[3] = {{ETRT_DTYPE_FLOAT32, 3, {2, 3, 10}, g_x, OH_INPUT},
                     {ETRT_DTYPE_FLOAT32, 3, {4, 3, 3}, g_w, OH_CONSTANT},
                     {ETRT_DTYPE_FLOAT32, 1, {4}, g_b, OH_CONSTANT}};
  oh_output info[1];
  CHECK_OK(oh_run("Conv", 3, in1, 3,
                  (etrt_attribute[]){OH_INTS("strides", 1, 2), OH_INTS("dilations", 1, 2),
                                     OH_INTS("pads", 2, 1, 0)},
                  1, (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].dims[2], 4);
  ref_conv_forward(&g1, g_x, g_w, g_b, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 2 * 4 * 4, 1e-5);

  ref_conv g3 = {1, 2, 3, 1, {4, 5, 3}, {2, 3, 2}, {2, 1, 1}, {1, 1, 1}, {1, 1, 0}, {3, 5, 2}};
  fill(g_x, 120, 14);
  fill(g_w, 72, 15);
  oh_value in3[2] = {{ETRT_DTYPE_FLOAT32, 5, {1, 2, 4, 5, 3}, g_x, OH_INPUT},
                     {ETRT_DTYPE_FLOAT32, 5, {3, 2, 2, 3, 2}, g_w, OH_CONSTANT}};
  CHECK_OK(oh_run(
      "Conv", 2, in3, 2,
      (etrt_attribute[]){OH_INTS("strides", 3, 2, 1, 1), OH_INTS("pads", 6, 1, 1, 0, 1, 1, 0)}, 1,
      (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].dims[2], 3);
  CHECK_EQ_INT(info[0].dims[3], 5);
  CHECK_EQ_INT(info[0].dims[4], 2);
  ref_conv_forward(&g3, g_x, g_w, NULL, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 3 * 3 * 5 * 2, 1e-5);
}

static void test_conv_transpose(void) {
  /* x [1, 4, 3, 4], W [4, 3, 3, 2] group 2 (6 maps), strides (3, 2), pads (1, 0, 1, 1),
   * output_padding (1, 1), dilations (1, 2), bias */
  ref_conv g = {1, 4, 6, 2, {1, 3, 4}, {1, 3, 2}, {1, 3, 2}, {1, 1, 2}, {0, 1, 0}, {1, 0, 0}};
  g.out[1] = 3 * (3 - 1) + 1 + (3 - 1) * 1 + 1 - 1 - 1;
  g.out[2] = 2 * (4 - 1) + 1 + (2 - 1) * 2 + 1 - 0 - 1;
  fill(g_x, 48, 16);
  fill(g_w, 72, 17);
  fill(g_b, 6, 18);
  oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {1, 4, 3, 4}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 4, {4, 3, 3, 2}, g_w, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {6}, g_b, OH_CONSTANT}};
  oh_output info[1];
  CHECK_OK(
      oh_run("ConvTranspose", 3, in, 5,
             (etrt_attribute[]){OH_INT("group", 2), OH_INTS("strides", 2, 3, 2),
                                OH_INTS("pads", 4, 1, 0, 1, 1), OH_INTS("output_padding", 2, 1, 1),
                                OH_INTS("dilations", 2, 1, 2)},
             1, (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].dims[1], 6);
  CHECK_EQ_INT(info[0].dims[2], g.out[1]);
  CHECK_EQ_INT(info[0].dims[3], g.out[2]);
  ref_conv_transpose(&g, g_x, g_w, g_b, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 6 * g.out[1] * g.out[2], 1e-5);

  /* output_shape [10, 8] with strides (3, 2) on 3x3: the natural 9x7 output is
   * extended at the end (pads begin 0, end -1, as ONNX's floor division says) */
  ref_conv h = {1, 1, 2, 1, {1, 3, 3}, {1, 3, 3}, {1, 3, 2}, {1, 1, 1}, {0, 0, 0}, {1, 10, 8}};
  fill(g_x, 9, 19);
  fill(g_w, 18, 20);
  oh_value in2[2] = {{ETRT_DTYPE_FLOAT32, 4, {1, 1, 3, 3}, g_x, OH_INPUT},
                     {ETRT_DTYPE_FLOAT32, 4, {1, 2, 3, 3}, g_w, OH_CONSTANT}};
  CHECK_OK(
      oh_run("ConvTranspose", 2, in2, 2,
             (etrt_attribute[]){OH_INTS("strides", 2, 3, 2), OH_INTS("output_shape", 2, 10, 8)}, 1,
             (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].dims[2], 10);
  CHECK_EQ_INT(info[0].dims[3], 8);
  ref_conv_transpose(&h, g_x, g_w, NULL, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 2 * 80, 1e-5);
  CHECK_NEAR(g_y[79], 0.0, 0.0); /* the extra last row and column get nothing */

  /* SAME_UPPER: output = input * stride */
  CHECK_OK(
      oh_run("ConvTranspose", 2, in2, 2,
             (etrt_attribute[]){OH_STRING("auto_pad", "SAME_UPPER"), OH_INTS("strides", 2, 2, 2)},
             1, (void *[]){g_y}, info));
  CHECK_EQ_INT(info[0].dims[2], 6);
  ref_conv s = {1, 1, 2, 1, {1, 3, 3}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 6, 6}};
  ref_conv_transpose(&s, g_x, g_w, NULL, g_want);
  OH_CHECK_FLOATS(g_y, g_want, 2 * 36, 1e-5);
}

/* EtrtFusedConv = Relu(Conv + Z), here without B, and its refusals. */
static void test_fused_conv(void) {
  static float z[2 * 3 * 5 * 5];
  fill(g_x, 2 * 4 * 5 * 5, 21);
  fill(g_w, 3 * 4 * 3 * 3, 22);
  fill(z, 2 * 3 * 5 * 5, 23);
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {2, 4, 5, 5}, g_x, OH_INPUT};
  oh_value w = {ETRT_DTYPE_FLOAT32, 4, {3, 4, 3, 3}, g_w, OH_CONSTANT};
  oh_value zv = {ETRT_DTYPE_FLOAT32, 4, {2, 3, 5, 5}, z, OH_INPUT};
  etrt_attribute attrs[] = {OH_INTS("pads", 4, 1, 1, 1, 1), OH_STRING("activation", "Relu")};
  CHECK_OK(oh_run("EtrtFusedConv", 4, (oh_value[]){x, w, OH_NONE, zv}, 2, attrs, 1, (void *[]){g_y},
                  NULL));
  ref_conv g = {2, 4, 3, 1, {1, 5, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {1, 5, 5}};
  ref_conv_forward(&g, g_x, g_w, NULL, g_want);
  int negative = 0;
  for (int i = 0; i < 2 * 3 * 5 * 5; ++i) {
    g_want[i] += z[i];
    negative += g_want[i] < 0;
    if (g_want[i] < 0) g_want[i] = 0;
  }
  CHECK(negative > 0); /* the Relu has work to do */
  OH_CHECK_FLOATS(g_y, g_want, 2 * 3 * 5 * 5, 1e-5);

  oh_value z_small = {ETRT_DTYPE_FLOAT32, 4, {2, 3, 4, 5}, z, OH_INPUT};
  OH_CHECK_REFUSED(
      oh_run("EtrtFusedConv", 4, (oh_value[]){x, w, OH_NONE, z_small}, 1, attrs, 1, NULL, NULL),
      "EtrtFusedConv", "the residual Z must have the output's type and shape");
  OH_CHECK_REFUSED(oh_run("EtrtFusedConv", 2, (oh_value[]){x, w}, 1,
                          (etrt_attribute[]){OH_STRING("activation", "Tanh")}, 1, NULL, NULL),
                   "EtrtFusedConv", "activation 'Tanh'");
  OH_CHECK_REFUSED(
      oh_run("EtrtFusedConv", 5, (oh_value[]){x, w, OH_NONE, zv, zv}, 0, NULL, 1, NULL, NULL),
      "EtrtFusedConv", "optional Z");
}

static void test_conv_refusals(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 4, 5, 5}, g_x, OH_INPUT};
  oh_value w = {ETRT_DTYPE_FLOAT32, 4, {2, 3, 3, 3}, g_w, OH_CONSTANT};
  /* 4 channels, W expects 3 per group */
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, w}, 0, NULL, 1, NULL, NULL), "Conv",
                   "channels");
  oh_value w4 = {ETRT_DTYPE_FLOAT32, 4, {2, 4, 3, 3}, g_w, OH_CONSTANT};
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, w4}, 1,
                          (etrt_attribute[]){OH_STRING("auto_pad", "SIDEWAYS")}, 1, NULL, NULL),
                   "Conv", "auto_pad");
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, w4}, 1, (etrt_attribute[]){OH_INT("group", 0)},
                          1, NULL, NULL),
                   "Conv", "group");
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, w4}, 1,
                          (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2)}, 1, NULL, NULL),
                   "Conv", "kernel_shape");
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, w4}, 1,
                          (etrt_attribute[]){OH_INTS("strides", 2, 0, 1)}, 1, NULL, NULL),
                   "Conv", "strides");
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, w4}, 1,
                          (etrt_attribute[]){OH_INTS("pads", 3, 1, 1, 1)}, 1, NULL, NULL),
                   "Conv", "pads");
  /* the window does not fit */
  oh_value big = {ETRT_DTYPE_FLOAT32, 4, {2, 4, 7, 7}, g_w, OH_CONSTANT};
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){x, big}, 0, NULL, 1, NULL, NULL), "Conv",
                   "window");
  /* rank 2 input */
  oh_value flat = {ETRT_DTYPE_FLOAT32, 2, {4, 5}, g_x, OH_INPUT};
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){flat, w4}, 0, NULL, 1, NULL, NULL), "Conv",
                   "rank");
  /* float64 is not a CPU conv type; a bias of the wrong length */
  oh_value xd = {ETRT_DTYPE_FLOAT64, 4, {1, 4, 5, 5}, g_x, OH_INPUT};
  oh_value wd = {ETRT_DTYPE_FLOAT64, 4, {2, 4, 3, 3}, g_w, OH_CONSTANT};
  OH_CHECK_REFUSED(oh_run("Conv", 2, (oh_value[]){xd, wd}, 0, NULL, 1, NULL, NULL), "Conv",
                   "float64");
  oh_value b3 = {ETRT_DTYPE_FLOAT32, 1, {3}, g_b, OH_CONSTANT};
  OH_CHECK_REFUSED(oh_run("Conv", 3, (oh_value[]){x, w4, b3}, 0, NULL, 1, NULL, NULL), "Conv", "B");
  /* ConvTranspose: output_padding must stay below the stride */
  oh_value wt = {ETRT_DTYPE_FLOAT32, 4, {4, 2, 3, 3}, g_w, OH_CONSTANT};
  OH_CHECK_REFUSED(oh_run("ConvTranspose", 2, (oh_value[]){x, wt}, 1,
                          (etrt_attribute[]){OH_INTS("output_padding", 2, 1, 1)}, 1, NULL, NULL),
                   "ConvTranspose", "output_padding");
  oh_value wt3 = {ETRT_DTYPE_FLOAT32, 4, {3, 2, 3, 3}, g_w, OH_CONSTANT};
  OH_CHECK_REFUSED(oh_run("ConvTranspose", 2, (oh_value[]){x, wt3}, 0, NULL, 1, NULL, NULL),
                   "ConvTranspose", "channels");
}

int main(void) {
  RUN_TEST(test_conv_2d_groups_strides_dilations);
  RUN_TEST(test_conv_pointwise_and_deep);
  RUN_TEST(test_conv_depthwise);
  RUN_TEST(test_conv_threads);
  RUN_TEST(test_conv_transpose_threads);
  RUN_TEST(test_conv_auto_pad);
  RUN_TEST(test_conv_1d_3d);
  RUN_TEST(test_conv_transpose);
  RUN_TEST(test_fused_conv);
  RUN_TEST(test_conv_refusals);
  return TEST_EXIT();
}
