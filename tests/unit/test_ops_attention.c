/* EtrtAttention on the CPU executor against a reference written out here (heads as
 * Reshape + Transpose would make them, softmax in double): column offsets into packed
 * inputs, a broadcast mask; and its refusals. */
#include <math.h>

#include "engine/op.h"
#include "op_harness.h"

#define B 2
#define SQ 3
#define SK 5
#define H 2
#define D 4
#define W (3 * H * D) /* packed columns: Q, K, V side by side */

static float g_packed[B * SK * W];
static float g_mask[SK];

static void fill(float *v, int n, uint32_t seed) {
  for (int i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
  }
}

static void test_packed_with_mask(void) {
  fill(g_packed, B * SK * W, 3);
  fill(g_mask, SK, 9);
  g_mask[2] = -INFINITY; /* key 2 masked out everywhere */
  /* Q is the first SQ rows of the packed tensor's first third, K and V all SK rows. */
  float q[B * SQ * W];
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < SQ * W; ++i) q[b * SQ * W + i] = g_packed[b * SK * W + i];
  oh_value in[4] = {{ETRT_DTYPE_FLOAT32, 3, {B, SQ, W}, q, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 3, {B, SK, W}, g_packed, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 3, {B, SK, W}, g_packed, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 4, {1, 1, 1, SK}, g_mask, OH_INPUT}};
  const float scale = 0.7f;
  etrt_attribute attributes[] = {OH_INT("num_heads", H), OH_INT("head_size", D),
                                 OH_FLOAT("scale", scale),
                                 OH_INTS("offsets", 3, 0, H * D, 2 * H * D)};
  float y[B * SQ * H * D];
  oh_output info[1];
  CHECK_OK(oh_run("EtrtAttention", 4, in, 4, attributes, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 3);
  CHECK_EQ_INT(info[0].dims[2], H * D);
  double want[B * SQ * H * D];
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < SQ; ++i) {
        double s[SK], top = -INFINITY, sum = 0;
        for (int j = 0; j < SK; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += (double)q[(b * SQ + i) * W + h * D + d] *
                   g_packed[(b * SK + j) * W + H * D + h * D + d];
          s[j] = dot * scale + g_mask[j];
          top = fmax(top, s[j]);
        }
        for (int j = 0; j < SK; ++j) sum += s[j] = exp(s[j] - top);
        for (int d = 0; d < D; ++d) {
          double acc = 0;
          for (int j = 0; j < SK; ++j)
            acc += s[j] / sum * g_packed[(b * SK + j) * W + 2 * H * D + h * D + d];
          want[(b * SQ + i) * H * D + h * D + d] = acc;
        }
      }
  OH_CHECK_FLOATS(y, want, B * SQ * H * D, 1e-5);
}

static void test_refusals(void) {
  float x[B * SK * W] = {0};
  oh_value in[4] = {{ETRT_DTYPE_FLOAT32, 3, {B, SQ, W}, x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 3, {B, SK, W}, x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 3, {B, SK, W}, x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 2, {SQ, 4}, x, OH_INPUT}};
  etrt_attribute ok[] = {OH_INT("num_heads", H), OH_INT("head_size", D)};
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 3, in, 1, ok, 1, NULL, NULL), "EtrtAttention",
                   "num_heads 2 and head_size 0");
  etrt_attribute huge[] = {OH_INT("num_heads", 1), OH_INT("head_size", 300)};
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 3, in, 2, huge, 1, NULL, NULL), "EtrtAttention",
                   "head_size 1 to 256");
  etrt_attribute two[] = {OH_INT("num_heads", H), OH_INT("head_size", D),
                          OH_INTS("offsets", 2, 0, 0)};
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 3, in, 3, two, 1, NULL, NULL), "'offsets' has 2",
                   "not 3");
  etrt_attribute past[] = {OH_INT("num_heads", H), OH_INT("head_size", D),
                           OH_INTS("offsets", 3, 0, 0, 20)};
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 3, in, 3, past, 1, NULL, NULL), "V has 24 columns",
                   "offset 20 + 2 heads of 4");
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 4, in, 2, ok, 1, NULL, NULL), "the mask's axis 1",
                   "not 1 or 5");
  oh_value flat[3] = {{ETRT_DTYPE_FLOAT32, 2, {SQ, W}, x, OH_INPUT}, in[1], in[2]};
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 3, flat, 2, ok, 1, NULL, NULL), "Q must have rank 3",
                   "got 2");
  oh_value rows[3] = {in[0], in[1], {ETRT_DTYPE_FLOAT32, 3, {B, SQ, W}, x, OH_INPUT}};
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 3, rows, 2, ok, 1, NULL, NULL), "K has 5 rows", "V 3");
  OH_CHECK_REFUSED(oh_run("EtrtAttention", 2, in, 2, ok, 1, NULL, NULL), "EtrtAttention",
                   "takes 3 or 4 inputs");
}

int main(void) {
  test_packed_with_mask();
  test_refusals();
  TEST_EXIT();
}
