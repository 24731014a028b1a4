/* BatchNormalization (inference and training), InstanceNormalization, LayerNormalization (with
 * its Mean and InvStdDev outputs), GroupNormalization and LpNormalization on the CPU
 * executor against references computed here, and their refusals. */
#include "engine/op.h"
#include "op_harness.h"

static float g_x[240];

static void fill(float *v, int n, uint32_t seed) {
  for (int i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) % 2001) / 500.0f - 2.0f;
  }
}

/* Normalizes x[first + i * stride], i < n (as a block) into want, then y = v * s + b. */
static void ref_block(const float *x, double *want, int first, int n, double eps, double scale,
                      double bias) {
  double mean = 0, var = 0;
  for (int i = 0; i < n; ++i) mean += x[first + i];
  mean /= n;
  for (int i = 0; i < n; ++i) var += (x[first + i] - mean) * (x[first + i] - mean);
  var /= n;
  for (int i = 0; i < n; ++i)
    want[first + i] = (x[first + i] - mean) / sqrt(var + eps) * scale + bias;
}

static void test_batch_norm(void) {
  fill(g_x, 2 * 3 * 5, 1);
  float scale[3] = {0.5f, -1.0f, 2.0f}, bias[3] = {0.1f, 0.2f, -0.3f};
  float mean[3] = {0.25f, -0.5f, 1.0f}, var[3] = {1.0f, 0.25f, 4.0f};
  oh_value in[5] = {{ETRT_DTYPE_FLOAT32, 3, {2, 3, 5}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 1, {3}, scale, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {3}, bias, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {3}, mean, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {3}, var, OH_CONSTANT}};
  float y[30];
  double want[30];
  CHECK_OK(oh_run("BatchNormalization", 5, in, 1, (etrt_attribute[]){OH_FLOAT("epsilon", 0.01f)}, 1,
                  (void *[]){y}, NULL));
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 5; ++i) {
        int at = (n * 3 + c) * 5 + i;
        want[at] = (g_x[at] - mean[c]) / sqrt(var[c] + (double)0.01f) * scale[c] + bias[c];
      }
  OH_CHECK_FLOATS(y, want, 30, 1e-5);
  /* training: the batch's statistics normalize, the running ones move by 1 - momentum */
  float running_mean[3], running_var[3];
  double want_mean[3], want_var[3];
  CHECK_OK(oh_run("BatchNormalization", 5, in, 2,
                  (etrt_attribute[]){OH_INT("training_mode", 1), OH_FLOAT("momentum", 0.75f)}, 3,
                  (void *[]){y, running_mean, running_var}, NULL));
  for (int c = 0; c < 3; ++c) {
    double sum = 0, squares = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 5; ++i) sum += g_x[(n * 3 + c) * 5 + i];
    double m = sum / 10;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 5; ++i) {
        double d = g_x[(n * 3 + c) * 5 + i] - m;
        squares += d * d;
      }
    double v = squares / 10;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 5; ++i) {
        int at = (n * 3 + c) * 5 + i;
        want[at] = (g_x[at] - m) / sqrt(v + 1e-5) * scale[c] + bias[c];
      }
    want_mean[c] = mean[c] * 0.75 + m * 0.25;
    want_var[c] = var[c] * 0.75 + v * 0.25;
  }
  OH_CHECK_FLOATS(y, want, 30, 1e-5);
  OH_CHECK_FLOATS(running_mean, want_mean, 3, 1e-6);
  OH_CHECK_FLOATS(running_var, want_var, 3, 1e-6);
  /* training with Y alone (momentum's default) normalizes the same way */
  CHECK_OK(oh_run("BatchNormalization", 5, in, 1, (etrt_attribute[]){OH_INT("training_mode", 1)}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, want, 30, 1e-5);
  /* the running statistics are written in training only */
  OH_CHECK_REFUSED(oh_run("BatchNormalization", 5, in, 0, NULL, 3, NULL, NULL),
                   "BatchNormalization", "only with training_mode=1");
  OH_CHECK_REFUSED(oh_run("BatchNormalization", 5, in, 1,
                          (etrt_attribute[]){OH_INT("training_mode", 1)}, 4, NULL, NULL),
                   "BatchNormalization", "1 to 3 outputs");
  in[3].dims[0] = 2;
  OH_CHECK_REFUSED(oh_run("BatchNormalization", 5, in, 0, NULL, 1, NULL, NULL),
                   "BatchNormalization", "input 3");
}

/* A CUDA build keeps training BatchNormalization on the CPU: its batch statistics
 * need a reduction the CUDA kernel does not have. */
static void test_batch_norm_cuda_placement(void) {
  const etrt_attribute training[] = {OH_INT("training_mode", 1)};
  etrt_tensor inputs[5];
  for (int i = 0; i < 5; ++i) inputs[i] = (etrt_tensor){.dtype = ETRT_DTYPE_FLOAT32, .rank = 1};
  inputs[0].rank = 4;
  for (uint32_t train = 0; train < 2; ++train) {
    etrt_node node = {.op_type = "BatchNormalization",
                      .name = "n",
                      .num_inputs = 5,
                      .num_outputs = 1,
                      .num_attributes = train,
                      .attributes = training};
    etrt_op_resolve(&node);
    CHECK(node.def != NULL && node.run_cpu != NULL);
    void *state = calloc(1, node.def->state_size);
    node.state = state;
    CHECK_OK(node.def->prepare(&node, state));
    CHECK_EQ_INT(etrt_op_cuda_supports(&node, inputs), (int)!train);
    free(state);
  }
}

static void test_instance_and_group_norm(void) {
  fill(g_x, 2 * 4 * 6, 2);
  float scale[4] = {1.0f, 0.5f, -2.0f, 1.5f}, bias[4] = {0.0f, 1.0f, 0.5f, -1.0f};
  oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 4, {2, 4, 2, 3}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 1, {4}, scale, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {4}, bias, OH_CONSTANT}};
  float y[48];
  double want[48];
  CHECK_OK(oh_run("InstanceNormalization", 3, in, 0, NULL, 1, (void *[]){y}, NULL));
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 4; ++c) ref_block(g_x, want, (n * 4 + c) * 6, 6, 1e-5, scale[c], bias[c]);
  OH_CHECK_FLOATS(y, want, 48, 1e-5);
  /* two groups of two channels, scale and bias per group (opset 18) */
  in[1].dims[0] = in[2].dims[0] = 2;
  CHECK_OK(oh_run("GroupNormalization", 3, in, 2,
                  (etrt_attribute[]){OH_INT("num_groups", 2), OH_FLOAT("epsilon", 1e-3f)}, 1,
                  (void *[]){y}, NULL));
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 2; ++g)
      ref_block(g_x, want, (n * 4 + g * 2) * 6, 12, (double)1e-3f, scale[g], bias[g]);
  OH_CHECK_FLOATS(y, want, 48, 1e-5);
  /* per channel (opset 21) */
  in[1].dims[0] = in[2].dims[0] = 4;
  CHECK_OK(oh_run("GroupNormalization", 3, in, 1, (etrt_attribute[]){OH_INT("num_groups", 2)}, 1,
                  (void *[]){y}, NULL));
  for (int n = 0; n < 2; ++n)
    for (int g = 0; g < 2; ++g) {
      ref_block(g_x, want, (n * 4 + g * 2) * 6, 12, 1e-5, 1.0, 0.0);
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 6; ++i) {
          int at = (n * 4 + g * 2 + c) * 6 + i;
          want[at] = want[at] * scale[g * 2 + c] + bias[g * 2 + c];
        }
    }
  OH_CHECK_FLOATS(y, want, 48, 1e-5);
  OH_CHECK_REFUSED(oh_run("GroupNormalization", 3, in, 1,
                          (etrt_attribute[]){OH_INT("num_groups", 3)}, 1, NULL, NULL),
                   "GroupNormalization", "groups");
  OH_CHECK_REFUSED(oh_run("GroupNormalization", 3, in, 0, NULL, 1, NULL, NULL),
                   "GroupNormalization", "num_groups");
  in[1].dims[0] = 3;
  OH_CHECK_REFUSED(oh_run("InstanceNormalization", 3, in, 0, NULL, 1, NULL, NULL),
                   "InstanceNormalization", "input 1");
}

static void test_layer_norm(void) {
  fill(g_x, 2 * 3 * 4, 3);
  float scale[12], bias[12];
  fill(scale, 12, 4);
  fill(bias, 12, 5);
  /* axis 1 of [2, 3, 4]: normalize blocks of 12, with Mean and InvStdDev */
  oh_value in[3] = {{ETRT_DTYPE_FLOAT32, 3, {2, 3, 4}, g_x, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 2, {3, 4}, scale, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 2, {3, 4}, bias, OH_CONSTANT}};
  float y[24], mean[2], inv[2];
  double want[24];
  oh_output info[3];
  CHECK_OK(oh_run("LayerNormalization", 3, in, 2,
                  (etrt_attribute[]){OH_INT("axis", 1), OH_FLOAT("epsilon", 0.1f)}, 3,
                  (void *[]){y, mean, inv}, info));
  CHECK_EQ_INT(info[1].rank, 3);
  CHECK_EQ_INT(info[1].dims[0], 2);
  CHECK_EQ_INT(info[1].dims[1], 1);
  for (int o = 0; o < 2; ++o) {
    double m = 0, v = 0;
    for (int i = 0; i < 12; ++i) m += g_x[o * 12 + i];
    m /= 12;
    for (int i = 0; i < 12; ++i) v += (g_x[o * 12 + i] - m) * (g_x[o * 12 + i] - m);
    v /= 12;
    double r = 1.0 / sqrt(v + (double)0.1f);
    CHECK_NEAR(mean[o], m, 1e-5);
    CHECK_NEAR(inv[o], r, 1e-5);
    for (int i = 0; i < 12; ++i) want[o * 12 + i] = (g_x[o * 12 + i] - m) * r * scale[i] + bias[i];
  }
  OH_CHECK_FLOATS(y, want, 24, 1e-5);
  /* default axis -1, scale of the last axis only broadcast over [3, 4], no bias */
  oh_value in2[2] = {in[0], {ETRT_DTYPE_FLOAT32, 1, {4}, scale, OH_CONSTANT}};
  CHECK_OK(oh_run("LayerNormalization", 2, in2, 0, NULL, 1, (void *[]){y}, NULL));
  for (int o = 0; o < 6; ++o) {
    ref_block(g_x, want, o * 4, 4, 1e-5, 1.0, 0.0);
    for (int i = 0; i < 4; ++i) want[o * 4 + i] *= scale[i];
  }
  OH_CHECK_FLOATS(y, want, 24, 1e-5);
  OH_CHECK_REFUSED(
      oh_run("LayerNormalization", 3, in, 1, (etrt_attribute[]){OH_INT("axis", 3)}, 1, NULL, NULL),
      "LayerNormalization", "axis");
  OH_CHECK_REFUSED(oh_run("LayerNormalization", 3, in, 0, NULL, 1, NULL, NULL),
                   "LayerNormalization", "trailing dims");
}

/* EtrtAddLayerNorm: LayerNormalization of A + B, with and without the Sum output and the
 * bias, against the reference; and its refusals. */
static void test_add_layer_norm(void) {
  float a[24], b[24], scale[4], bias[4], sum_in[24];
  fill(a, 24, 11);
  fill(b, 24, 12);
  fill(scale, 4, 13);
  fill(bias, 4, 14);
  for (int i = 0; i < 24; ++i) sum_in[i] = a[i] + b[i];
  oh_value in[4] = {{ETRT_DTYPE_FLOAT32, 3, {2, 3, 4}, a, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 3, {2, 3, 4}, b, OH_INPUT},
                    {ETRT_DTYPE_FLOAT32, 1, {4}, scale, OH_CONSTANT},
                    {ETRT_DTYPE_FLOAT32, 1, {4}, bias, OH_CONSTANT}};
  float y[24], sum[24];
  double want[24];
  for (int o = 0; o < 6; ++o) {
    ref_block(sum_in, want, o * 4, 4, (double)0.01f, 1.0, 0.0);
    for (int i = 0; i < 4; ++i) want[o * 4 + i] = want[o * 4 + i] * scale[i] + bias[i];
  }
  CHECK_OK(oh_run("EtrtAddLayerNorm", 4, in, 1, (etrt_attribute[]){OH_FLOAT("epsilon", 0.01f)}, 2,
                  (void *[]){y, sum}, NULL));
  OH_CHECK_FLOATS(y, want, 24, 1e-5);
  for (int i = 0; i < 24; ++i) CHECK_EQ_INT(sum[i] == sum_in[i], 1);
  /* without Sum and bias: the sum goes through Y in place */
  CHECK_OK(oh_run("EtrtAddLayerNorm", 3, in, 1, (etrt_attribute[]){OH_FLOAT("epsilon", 0.01f)}, 1,
                  (void *[]){y}, NULL));
  for (int o = 0; o < 6; ++o) {
    ref_block(sum_in, want, o * 4, 4, (double)0.01f, 1.0, 0.0);
    for (int i = 0; i < 4; ++i) want[o * 4 + i] *= scale[i];
  }
  OH_CHECK_FLOATS(y, want, 24, 1e-5);
  oh_value bad[4] = {in[0], {ETRT_DTYPE_FLOAT32, 2, {3, 4}, b, OH_INPUT}, in[2], in[3]};
  OH_CHECK_REFUSED(oh_run("EtrtAddLayerNorm", 4, bad, 0, NULL, 1, NULL, NULL), "EtrtAddLayerNorm",
                   "shape of input 0");
  float scale5[5] = {1, 2, 3, 4, 5};
  oh_value wide[3] = {in[0], in[1], {ETRT_DTYPE_FLOAT32, 1, {5}, scale5, OH_CONSTANT}};
  OH_CHECK_REFUSED(oh_run("EtrtAddLayerNorm", 3, wide, 0, NULL, 1, NULL, NULL), "EtrtAddLayerNorm",
                   "trailing dims");
  OH_CHECK_REFUSED(
      oh_run("EtrtAddLayerNorm", 3, in, 1, (etrt_attribute[]){OH_INT("axis", 3)}, 1, NULL, NULL),
      "EtrtAddLayerNorm", "axis");
  OH_CHECK_REFUSED(oh_run("EtrtAddLayerNorm", 2, in, 0, NULL, 1, NULL, NULL), "EtrtAddLayerNorm",
                   "takes 3 to 4 inputs");
}

static void test_lp_norm(void) {
  oh_value x = OH_F64(2, (2, 2), 3.0, -4.0, 6.0, 8.0);
  double y[4];
  CHECK_OK(oh_run("LpNormalization", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 0)}, 1,
                  (void *[]){y}, NULL));
  CHECK_NEAR(y[0], 3 / sqrt(45.0), 1e-12);
  CHECK_NEAR(y[3], 8 / sqrt(80.0), 1e-12);
  CHECK_OK(oh_run("LpNormalization", 1, &x, 1, (etrt_attribute[]){OH_INT("p", 1)}, 1, (void *[]){y},
                  NULL));
  CHECK_NEAR(y[1], -4 / 7.0, 1e-12);
  CHECK_NEAR(y[2], 6 / 14.0, 1e-12);
  OH_CHECK_REFUSED(
      oh_run("LpNormalization", 1, &x, 1, (etrt_attribute[]){OH_INT("p", 3)}, 1, NULL, NULL),
      "LpNormalization", "p must be 1 or 2");
  oh_value xi = OH_I32(1, (2), 1, 2);
  OH_CHECK_REFUSED(oh_run("LpNormalization", 1, &xi, 0, NULL, 1, NULL, NULL), "LpNormalization",
                   "int32");
}

int main(void) {
  RUN_TEST(test_batch_norm);
  RUN_TEST(test_batch_norm_cuda_placement);
  RUN_TEST(test_instance_and_group_norm);
  RUN_TEST(test_layer_norm);
  RUN_TEST(test_add_layer_norm);
  RUN_TEST(test_lp_norm);
  return TEST_EXIT();
}
