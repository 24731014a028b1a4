/* The random generators and Dropout on the CPU: seeded streams repeat across loads,
 * unseeded ones do not, the values follow their distributions, which nodes a CUDA
 * build takes, and every refusal. */
#include "engine/op.h"
#include "op_harness.h"

#define N 1000

static void test_uniform(void) {
  float a[N], b[N];
  oh_output info[1];
  const etrt_attribute seeded[] = {OH_INTS("shape", 2, 10, 100), OH_FLOAT("low", -1.0f),
                                   OH_FLOAT("high", 3.0f), OH_FLOAT("seed", 2.0f)};
  CHECK_OK(oh_run("RandomUniform", 0, NULL, 4, seeded, 1, (void *[]){a}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT32 && info[0].rank == 2 && info[0].dims[1] == 100);
  double sum = 0;
  int in_range = 1;
  for (int i = 0; i < N; ++i) {
    in_range &= a[i] >= -1.0f && a[i] < 3.0f;
    sum += a[i];
  }
  CHECK(in_range);
  CHECK(fabs(sum / N - 1.0) < 0.15);
  /* the same seed: the same values in a program built and loaded again */
  CHECK_OK(oh_run("RandomUniform", 0, NULL, 4, seeded, 1, (void *[]){b}, info));
  CHECK(memcmp(a, b, sizeof a) == 0);
  /* another seed, or none: other values, also from one load to the next */
  const etrt_attribute other[] = {OH_INTS("shape", 2, 10, 100), OH_FLOAT("low", -1.0f),
                                  OH_FLOAT("high", 3.0f), OH_FLOAT("seed", 3.0f)};
  CHECK_OK(oh_run("RandomUniform", 0, NULL, 4, other, 1, (void *[]){b}, info));
  CHECK(memcmp(a, b, sizeof a) != 0);
  CHECK_OK(oh_run("RandomUniform", 0, NULL, 3, seeded, 1, (void *[]){a}, info));
  CHECK_OK(oh_run("RandomUniform", 0, NULL, 3, seeded, 1, (void *[]){b}, info));
  CHECK(memcmp(a, b, sizeof a) != 0);
  /* the *Like form takes the input's shape; `dtype` sets the output's */
  CHECK_OK(oh_run("RandomUniformLike", 1, (oh_value[]){OH_I32(2, (2, 3), 1, 2, 3, 4, 5, 6)}, 1,
                  (etrt_attribute[]){OH_INT("dtype", 11)}, 1, (void *[]){a}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT64 && info[0].rank == 2 && info[0].dims[0] == 2 &&
        info[0].dims[1] == 3);
  const double *d = (const double *)a;
  for (int i = 0; i < 6; ++i) CHECK(d[i] >= 0.0 && d[i] < 1.0);
}

static void test_normal(void) {
  float a[N];
  oh_output info[1];
  CHECK_OK(oh_run("RandomNormal", 0, NULL, 4,
                  (etrt_attribute[]){OH_INTS("shape", 1, N), OH_FLOAT("mean", 2.0f),
                                     OH_FLOAT("scale", 0.5f), OH_FLOAT("seed", 1.0f)},
                  1, (void *[]){a}, info));
  double sum = 0, squares = 0;
  for (int i = 0; i < N; ++i) sum += a[i];
  double mean = sum / N;
  for (int i = 0; i < N; ++i) squares += (a[i] - mean) * (a[i] - mean);
  CHECK(fabs(mean - 2.0) < 0.05);
  CHECK(fabs(sqrt(squares / N) - 0.5) < 0.05);
  /* the *Like form takes the input's dtype where `dtype` is absent */
  CHECK_OK(oh_run("RandomNormalLike", 1, (oh_value[]){OH_F64(1, (3), 1, 2, 3)}, 0, NULL, 1,
                  (void *[]){a}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT64 && info[0].dims[0] == 3);
}

static void test_bernoulli(void) {
  uint8_t flags[N];
  float p[N], y[N];
  oh_output info[1];
  /* probabilities 0 and 1 decide every draw */
  CHECK_OK(oh_run("Bernoulli", 1, (oh_value[]){OH_F32(1, (4), 0, 1, 1, 0)}, 1,
                  (etrt_attribute[]){OH_INT("dtype", 9)}, 1, (void *[]){flags}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_BOOL);
  CHECK(flags[0] == 0 && flags[1] == 1 && flags[2] == 1 && flags[3] == 0);
  for (int i = 0; i < N; ++i) p[i] = 0.25f;
  oh_value probabilities = {
      .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {N}, .data = p, .kind = OH_INPUT};
  CHECK_OK(oh_run("Bernoulli", 1, &probabilities, 1, (etrt_attribute[]){OH_FLOAT("seed", 9.0f)}, 1,
                  (void *[]){y}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT32);
  double ones = 0;
  int binary = 1;
  for (int i = 0; i < N; ++i) {
    binary &= y[i] == 0.0f || y[i] == 1.0f;
    ones += y[i];
  }
  CHECK(binary);
  CHECK(fabs(ones / N - 0.25) < 0.05);
}

static void test_multinomial(void) {
  int64_t y[500];
  int32_t y32[500];
  oh_output info[1];
  /* one class that is all but certain per row */
  CHECK_OK(oh_run(
      "Multinomial", 1, (oh_value[]){OH_F32(2, (2, 3), 0, -1000, -1000, -1000, -1000, 0)}, 2,
      (etrt_attribute[]){OH_INT("sample_size", 4), OH_INT("dtype", 7)}, 1, (void *[]){y}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_INT64 && info[0].dims[0] == 2 && info[0].dims[1] == 4);
  for (int i = 0; i < 4; ++i) CHECK(y[i] == 0 && y[4 + i] == 2);
  /* probabilities 1/4 and 3/4 */
  CHECK_OK(oh_run("Multinomial", 1, (oh_value[]){OH_F32(2, (1, 2), -1.0986123f, 0)}, 2,
                  (etrt_attribute[]){OH_INT("sample_size", 500), OH_FLOAT("seed", 1.0f)}, 1,
                  (void *[]){y32}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_INT32);
  double ones = 0;
  for (int i = 0; i < 500; ++i) ones += y32[i];
  CHECK(fabs(ones / 500 - 0.75) < 0.06);
}

/* Dropout: the identity unless training; in training the kept elements (the mask)
 * are scaled by 1 / (1 - ratio), about 1 - ratio of them, the same for one seed. */
static void test_dropout(void) {
  static float x[N], y[N], y2[N];
  static double want[N];
  static uint8_t mask[N], mask2[N];
  for (int i = 0; i < N; ++i) x[i] = (float)(i % 17) - 8.5f;
  oh_value data = {
      .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {N}, .data = x, .kind = OH_INPUT};
  const oh_value on = OH_BOOL(0, (0), 1), off = OH_BOOL(0, (0), 0);
  const etrt_attribute seed = OH_INT("seed", 4);
  oh_output info[2];
  /* no training_mode, or false: the identity whatever the ratio */
  CHECK_OK(oh_run("Dropout", 1, &data, 0, NULL, 2, (void *[]){y, mask}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT32 && info[1].dtype == ETRT_DTYPE_BOOL &&
        info[1].rank == 1 && info[1].dims[0] == N);
  CHECK(memcmp(x, y, sizeof x) == 0);
  for (int i = 0; i < N; ++i) CHECK_EQ_INT(mask[i], 1);
  CHECK_OK(oh_run("Dropout", 3, (oh_value[]){data, OH_F32(0, (0), 0.9f), off}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  CHECK(memcmp(x, y, sizeof x) == 0);
  /* training with ratio 0 keeps every element as it is */
  CHECK_OK(oh_run("Dropout", 3, (oh_value[]){data, OH_F32(0, (0), 0.0f), on}, 0, NULL, 2,
                  (void *[]){y, mask}, NULL));
  CHECK(memcmp(x, y, sizeof x) == 0);
  for (int i = 0; i < N; ++i) CHECK_EQ_INT(mask[i], 1);
  /* ratio 0.25 (float64) */
  CHECK_OK(oh_run("Dropout", 3, (oh_value[]){data, OH_F64(0, (0), 0.25), on}, 1, &seed, 2,
                  (void *[]){y, mask}, NULL));
  double kept = 0;
  for (int i = 0; i < N; ++i) {
    want[i] = mask[i] ? x[i] / 0.75 : 0.0;
    kept += mask[i];
  }
  OH_CHECK_FLOATS(y, want, N, 1e-6);
  CHECK(fabs(kept / N - 0.75) < 0.05);
  /* the same seed: the same draws in another load */
  CHECK_OK(oh_run("Dropout", 3, (oh_value[]){data, OH_F64(0, (0), 0.25), on}, 1, &seed, 2,
                  (void *[]){y2, mask2}, NULL));
  CHECK(memcmp(y, y2, sizeof y) == 0 && memcmp(mask, mask2, sizeof mask) == 0);
  /* ratio left out: 0.5 */
  CHECK_OK(oh_run("Dropout", 3, (oh_value[]){data, OH_NONE, on}, 1, &seed, 2, (void *[]){y, mask},
                  NULL));
  kept = 0;
  for (int i = 0; i < N; ++i) {
    CHECK_NEAR(y[i], mask[i] ? 2.0f * x[i] : 0.0f, 0);
    kept += mask[i];
  }
  CHECK(fabs(kept / N - 0.5) < 0.06);
}

/* Two executes of one loaded program: a seeded generator repeats, an unseeded one
 * draws anew. */
static void test_executes(void) {
  for (int seeded = 0; seeded < 2; ++seeded) {
    etrt_network *net = NULL;
    etrt_engine *engine = NULL;
    etrt_exec_context *ctx = NULL;
    uint8_t *plan = NULL;
    size_t plan_size = 0;
    int32_t out;
    const etrt_attribute attributes[] = {OH_INTS("shape", 1, 64), OH_FLOAT("seed", 5.0f)};
    float a[64], b[64];
    CHECK_OK(etrt_network_create(&net));
    CHECK_OK(etrt_network_add_op(net, "RandomNormal", "node", 0, NULL, 1, &out,
                                 (uint32_t)(1 + seeded), attributes));
    CHECK_OK(etrt_network_mark_output(net, out, "y"));
    etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}};
    CHECK_OK(etrt_plan_build(net, &options, &plan, &plan_size));
    CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
    CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
    CHECK_OK(etrt_exec_context_set_address(ctx, 0, a));
    CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
    CHECK_OK(etrt_exec_context_set_address(ctx, 0, b));
    CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
    CHECK_EQ_INT(memcmp(a, b, sizeof a) == 0, seeded);
    etrt_exec_context_destroy(ctx);
    etrt_engine_destroy(engine);
    free(plan);
    etrt_network_destroy(net);
  }
}

/* A CUDA build takes seeded generators only: an unseeded key advances per execute on
 * the host, which a replayed CUDA graph could not do. */
static void test_cuda_placement(void) {
  const etrt_attribute seeded[] = {OH_INTS("shape", 1, 4), OH_FLOAT("seed", 1.0f)};
  for (uint32_t with_seed = 0; with_seed < 2; ++with_seed) {
    etrt_node node = {.op_type = "RandomUniform",
                      .name = "n",
                      .num_attributes = 1 + with_seed,
                      .attributes = seeded};
    etrt_op_resolve(&node);
    CHECK(node.def != NULL && node.run_cpu != NULL);
    void *state = calloc(1, node.def->state_size);
    node.state = state;
    CHECK_OK(node.def->prepare(&node, state));
    CHECK_EQ_INT(etrt_op_cuda_supports(&node, NULL), (int)with_seed);
    free(state);
  }
}

/* Dropout goes to a CUDA build when seeded, like the generators. */
static void test_dropout_cuda_placement(void) {
  const etrt_attribute seeded[] = {OH_INT("seed", 1)};
  for (uint32_t with_seed = 0; with_seed < 2; ++with_seed) {
    etrt_node node = {
        .op_type = "Dropout", .name = "n", .num_attributes = with_seed, .attributes = seeded};
    etrt_op_resolve(&node);
    CHECK(node.def != NULL && node.run_cpu != NULL);
    void *state = calloc(1, node.def->state_size);
    node.state = state;
    CHECK_OK(node.def->prepare(&node, state));
    CHECK_EQ_INT(etrt_op_cuda_supports(&node, NULL), (int)with_seed);
    free(state);
  }
}

static void test_dropout_refusals(void) {
  const oh_value x = OH_F32(1, (2), 0.5f, 0.5f), on = OH_BOOL(0, (0), 1);
  /* a ratio outside [0, 1) is an execute error in training */
  OH_CHECK_REFUSED(
      oh_run("Dropout", 3, (oh_value[]){x, OH_F32(0, (0), 1.0f), on}, 0, NULL, 1, NULL, NULL),
      "Dropout", "ratio 1 is not in [0, 1)");
  OH_CHECK_REFUSED(
      oh_run("Dropout", 3, (oh_value[]){x, OH_F32(0, (0), -0.5f), on}, 0, NULL, 1, NULL, NULL),
      "Dropout", "ratio -0.5 is not in [0, 1)");
  OH_CHECK_REFUSED(
      oh_run("Dropout", 1, &x, 1, (etrt_attribute[]){OH_FLOAT("seed", 1.0f)}, 1, NULL, NULL),
      "Dropout", "seed must be an int");
  OH_CHECK_REFUSED(oh_run("Dropout", 1, (oh_value[]){OH_I32(1, (2), 1, 2)}, 0, NULL, 1, NULL, NULL),
                   "Dropout", "data");
  OH_CHECK_REFUSED(
      oh_run("Dropout", 2, (oh_value[]){x, OH_F32(1, (2), 0.1f, 0.2f)}, 0, NULL, 1, NULL, NULL),
      "Dropout", "ratio must be a scalar");
  OH_CHECK_REFUSED(oh_run("Dropout", 2, (oh_value[]){x, OH_I32(0, (0), 0)}, 0, NULL, 1, NULL, NULL),
                   "Dropout", "ratio");
  OH_CHECK_REFUSED(oh_run("Dropout", 3, (oh_value[]){x, OH_F32(0, (0), 0.1f), OH_F32(0, (0), 1)}, 0,
                          NULL, 1, NULL, NULL),
                   "Dropout", "training_mode");
  OH_CHECK_REFUSED(
      oh_run("Dropout", 3, (oh_value[]){x, OH_F32(0, (0), 0.1f), OH_BOOL(1, (2), 1, 1)}, 0, NULL, 1,
             NULL, NULL),
      "Dropout", "training_mode must be a scalar");
  OH_CHECK_REFUSED(oh_run("Dropout", 1, &x, 0, NULL, 3, NULL, NULL), "Dropout",
                   "takes 1 to 3 inputs and 1 or 2 outputs, has 1 and 3");
  OH_CHECK_REFUSED(
      oh_run("Dropout", 3, (oh_value[]){OH_NONE, OH_F32(0, (0), 0.1f), on}, 0, NULL, 1, NULL, NULL),
      "Dropout", "input 0 (data) is required");
}

static void test_refusals(void) {
  const oh_value x = OH_F32(1, (2), 0.5f, 0.5f);
  OH_CHECK_REFUSED(oh_run("RandomUniform", 0, NULL, 0, NULL, 1, NULL, NULL), "RandomUniform",
                   "needs the shape attribute");
  OH_CHECK_REFUSED(oh_run("RandomNormal", 0, NULL, 1,
                          (etrt_attribute[]){OH_INTS("shape", 2, 2, -1)}, 1, NULL, NULL),
                   "RandomNormal", "shape[1] is negative (-1)");
  OH_CHECK_REFUSED(oh_run("RandomUniform", 0, NULL, 3,
                          (etrt_attribute[]){OH_INTS("shape", 1, 2), OH_FLOAT("low", 2.0f),
                                             OH_FLOAT("high", 1.0f)},
                          1, NULL, NULL),
                   "RandomUniform", "high 1 is below low 2");
  OH_CHECK_REFUSED(
      oh_run("RandomUniform", 0, NULL, 2,
             (etrt_attribute[]){OH_INTS("shape", 1, 2), OH_INT("dtype", 6)}, 1, NULL, NULL),
      "RandomUniform", "dtype int32 is not supported (float32 or float64)");
  OH_CHECK_REFUSED(
      oh_run("RandomNormal", 0, NULL, 2,
             (etrt_attribute[]){OH_INTS("shape", 1, 2), OH_INT("seed", 1)}, 1, NULL, NULL),
      "RandomNormal", "seed must be a float");
  OH_CHECK_REFUSED(
      oh_run("RandomUniform", 1, &x, 1, (etrt_attribute[]){OH_INTS("shape", 1, 2)}, 1, NULL, NULL),
      "RandomUniform", "takes no input and 1 output");
  OH_CHECK_REFUSED(
      oh_run("RandomNormalLike", 1, (oh_value[]){OH_I32(1, (2), 1, 2)}, 0, NULL, 1, NULL, NULL),
      "RandomNormalLike", "dtype int32 is not supported");
  OH_CHECK_REFUSED(
      oh_run("Bernoulli", 1, (oh_value[]){OH_I32(1, (2), 1, 2)}, 0, NULL, 1, NULL, NULL),
      "Bernoulli", "input");
  OH_CHECK_REFUSED(
      oh_run("Bernoulli", 1, &x, 1, (etrt_attribute[]){OH_INT("dtype", 3)}, 1, NULL, NULL),
      "Bernoulli", "dtype");
  OH_CHECK_REFUSED(oh_run("Multinomial", 1, (oh_value[]){OH_F32(2, (1, 2), 0, 0)}, 1,
                          (etrt_attribute[]){OH_INT("sample_size", 0)}, 1, NULL, NULL),
                   "Multinomial", "sample_size must be positive, not 0");
  OH_CHECK_REFUSED(oh_run("Multinomial", 1, (oh_value[]){OH_F32(2, (1, 2), 0, 0)}, 1,
                          (etrt_attribute[]){OH_INT("dtype", 1)}, 1, NULL, NULL),
                   "Multinomial", "dtype float32 is not supported (int32 or int64)");
  OH_CHECK_REFUSED(oh_run("Multinomial", 1, &x, 0, NULL, 1, NULL, NULL), "Multinomial",
                   "input must be [batch, classes]");
}

int main(void) {
  RUN_TEST(test_uniform);
  RUN_TEST(test_normal);
  RUN_TEST(test_bernoulli);
  RUN_TEST(test_multinomial);
  RUN_TEST(test_executes);
  RUN_TEST(test_cuda_placement);
  RUN_TEST(test_refusals);
  RUN_TEST(test_dropout);
  RUN_TEST(test_dropout_cuda_placement);
  RUN_TEST(test_dropout_refusals);
  return TEST_EXIT();
}
