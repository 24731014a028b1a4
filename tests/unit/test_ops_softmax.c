/* Softmax, LogSoftmax, Hardmax (opset 13 and the older 2-D coercion), CumSum, and the
 * losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) on the CPU executor. */
#include "op_harness.h"

static const float kX[12] = {1, 2, 3, 4, -1, 0, 5, 5, 0.5f, 2, -3, 1};

/* softmax (or log-softmax) of x[start + k * stride], k < n, into want[same places] */
static void ref_softmax(const float *x, double *want, int start, int n, int stride, int log_form) {
  double m = -INFINITY, sum = 0;
  for (int k = 0; k < n; ++k) m = fmax(m, x[start + k * stride]);
  for (int k = 0; k < n; ++k) sum += exp(x[start + k * stride] - m);
  for (int k = 0; k < n; ++k) {
    double v = x[start + k * stride] - m;
    want[start + k * stride] = log_form ? v - log(sum) : exp(v) / sum;
  }
}

static void test_softmax_axes(void) {
  oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 3, .dims = {2, 3, 2}, .data = kX};
  float y[12];
  double want[12];
  for (int log_form = 0; log_form < 2; ++log_form) {
    const char *op = log_form ? "LogSoftmax" : "Softmax";
    /* default axis -1: groups of 2 */
    CHECK_OK(oh_run(op, 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
    for (int g = 0; g < 6; ++g) ref_softmax(kX, want, g * 2, 2, 1, log_form);
    OH_CHECK_FLOATS(y, want, 12, 1e-6);
    /* axis 1: groups of 3, stride 2 */
    CHECK_OK(oh_run(op, 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 1)}, 1, (void *[]){y}, NULL));
    for (int o = 0; o < 2; ++o)
      for (int i = 0; i < 2; ++i) ref_softmax(kX, want, o * 6 + i, 3, 2, log_form);
    OH_CHECK_FLOATS(y, want, 12, 1e-6);
    /* opset 11: axis 1 coerces to [2, 6] */
    CHECK_OK(oh_run(op, 1, &x, 2, (etrt_attribute[]){OH_INT("axis", 1), OH_INT("_opset", 11)}, 1,
                    (void *[]){y}, NULL));
    for (int o = 0; o < 2; ++o) ref_softmax(kX, want, o * 6, 6, 1, log_form);
    OH_CHECK_FLOATS(y, want, 12, 1e-6);
    /* opset 11, default axis (1) */
    CHECK_OK(
        oh_run(op, 1, &x, 1, (etrt_attribute[]){OH_INT("_opset", 11)}, 1, (void *[]){y}, NULL));
    OH_CHECK_FLOATS(y, want, 12, 1e-6);
  }
  /* large inputs stay finite */
  oh_value big = OH_F32(1, (3), 1000.0f, 1001.0f, 1002.0f);
  CHECK_OK(oh_run("Softmax", 1, &big, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0.09003057317038046, 0.24472847105479764, 0.6652409557748219}), 3,
                  1e-6);
  double yd[3];
  CHECK_OK(oh_run("LogSoftmax", 1, &(oh_value[]){OH_F64(1, (3), 1000.0, 1001.0, 1002.0)}[0], 0,
                  NULL, 1, (void *[]){yd}, NULL));
  CHECK_NEAR(yd[0], -2.4076059644443806, 1e-12);
}

static void test_hardmax(void) {
  float y[6];
  /* ties: the first maximum wins */
  oh_value x = OH_F32(2, (2, 3), 1, 3, 3, 7, 2, 7);
  CHECK_OK(oh_run("Hardmax", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0, 1, 0, 1, 0, 0}), 6, 0);
  CHECK_OK(
      oh_run("Hardmax", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 0)}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0, 1, 0, 1, 0, 1}), 6, 0);
}

static void test_softmax_refusals(void) {
  float y[4];
  oh_value x = OH_F32(2, (2, 2), 1, 2, 3, 4);
  OH_CHECK_REFUSED(
      oh_run("Softmax", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 2)}, 1, (void *[]){y}, NULL),
      "Softmax", "axis");
  OH_CHECK_REFUSED(oh_run("LogSoftmax", 1, &(oh_value[]){OH_I32(1, (2), 1, 2)}[0], 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "LogSoftmax", "int32");
}

static void test_cumsum(void) {
  oh_value x = OH_F64(1, (5), 1, 2, 3, 4, 5);
  double y[6];
  struct {
    int exclusive, reverse;
    double want[5];
  } cases[] = {{0, 0, {1, 3, 6, 10, 15}},
               {1, 0, {0, 1, 3, 6, 10}},
               {0, 1, {15, 14, 12, 9, 5}},
               {1, 1, {14, 12, 9, 5, 0}}};
  for (int c = 0; c < 4; ++c) {
    CHECK_OK(oh_run("CumSum", 2, (oh_value[]){x, OH_CONST(OH_I32(0, (0), 0))}, 2,
                    (etrt_attribute[]){OH_INT("exclusive", cases[c].exclusive),
                                       OH_INT("reverse", cases[c].reverse)},
                    1, (void *[]){y}, NULL));
    for (int i = 0; i < 5; ++i) CHECK_NEAR(y[i], cases[c].want[i], 0);
  }
  /* 2-D, axis 0 and axis -1 (as a shape input) */
  oh_value m = OH_F64(2, (2, 3), 1, 2, 3, 4, 5, 6);
  CHECK_OK(oh_run("CumSum", 2, (oh_value[]){m, OH_CONST(OH_I64(1, (1), 0))}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], ((double[]){1, 2, 3, 5, 7, 9})[i], 0);
  CHECK_OK(oh_run("CumSum", 2, (oh_value[]){m, OH_SHAPE_INPUT(OH_I64(1, (1), -1))}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], ((double[]){1, 3, 6, 4, 9, 15})[i], 0);
  int64_t yl[3];
  CHECK_OK(
      oh_run("CumSum", 2,
             (oh_value[]){OH_I64(1, (3), (1LL << 62), (1LL << 62), 7), OH_CONST(OH_I64(0, (0), 0))},
             1, (etrt_attribute[]){OH_INT("reverse", 1)}, 1, (void *[]){yl}, NULL));
  CHECK(yl[2] == 7 && yl[1] == (1LL << 62) + 7 && yl[0] == INT64_MIN + 7); /* wraps */
  OH_CHECK_REFUSED(oh_run("CumSum", 2, (oh_value[]){x, OH_CONST(OH_I32(0, (0), 1))}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "CumSum", "axis");
  OH_CHECK_REFUSED(oh_run("CumSum", 2, (oh_value[]){OH_I8(1, (1), 1), OH_CONST(OH_I32(0, (0), 0))},
                          0, NULL, 1, (void *[]){y}, NULL),
                   "CumSum", "int8");
}

/* NLL over x [N=2, C=3, d=2], target [2, 2] (class 1 ignored when ii is 1). */
static const float kScores[12] = {0.1f, -1.0f, 2.0f,  0.5f, -0.3f, 1.2f,
                                  1.0f, 0.2f,  -2.0f, 0.7f, 0.4f,  -0.9f};
static const int64_t kTargets[4] = {2, 0, 1, 2};
static const float kWeights[3] = {0.5f, 2.0f, 1.5f};

static double ref_loss(int softmax, const char *reduction, int weighted, int ignore, double *each) {
  double total = 0, total_weight = 0;
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) {
      int t = (int)kTargets[n * 2 + d];
      double shift = 0;
      if (softmax) {
        double m = -INFINITY, sum = 0;
        for (int c = 0; c < 3; ++c) m = fmax(m, kScores[n * 6 + c * 2 + d]);
        for (int c = 0; c < 3; ++c) sum += exp(kScores[n * 6 + c * 2 + d] - m);
        shift = m + log(sum);
      }
      double w = t == ignore ? 0 : weighted ? kWeights[t] : 1;
      double l = -(kScores[n * 6 + t * 2 + d] - shift) * w;
      each[n * 2 + d] = l;
      total += l;
      total_weight += w;
    }
  return strcmp(reduction, "sum") == 0 ? total : total / total_weight;
}

static void test_losses(void) {
  const char *ops[2] = {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"};
  const char *reductions[3] = {"none", "sum", "mean"};
  oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 3, .dims = {2, 3, 2}, .data = kScores};
  oh_value t = {.dtype = ETRT_DTYPE_INT64, .rank = 2, .dims = {2, 2}, .data = kTargets};
  oh_value w = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {3}, .data = kWeights};
  for (int op = 0; op < 2; ++op)
    for (int r = 0; r < 3; ++r)
      for (int weighted = 0; weighted < 2; ++weighted)
        for (int ignore = -1; ignore < 2; ignore += 2) {
          float y[4];
          double each[4];
          oh_output info[1];
          etrt_attribute attrs[2] = {OH_STRING("reduction", reductions[r]),
                                     OH_INT("ignore_index", ignore)};
          etrt_status s = oh_run(ops[op], weighted ? 3 : 2, (oh_value[]){x, t, w},
                                 ignore >= 0 ? 2 : 1, attrs, 1, (void *[]){y}, info);
          if (s != ETRT_OK) {
            etrt_test_fail(__FILE__, __LINE__, "%s: %s", ops[op], etrt_last_error());
            continue;
          }
          double total = ref_loss(op, reductions[r], weighted, ignore, each);
          if (r == 0) {
            CHECK_EQ_INT(info[0].rank, 2);
            OH_CHECK_FLOATS(y, each, 4, 1e-6);
          } else {
            CHECK_EQ_INT(info[0].rank, 0);
            OH_CHECK_FLOATS(y, &total, 1, 1e-6);
          }
        }
  /* SoftmaxCrossEntropyLoss's second output: the log-probabilities */
  float loss[1], log_prob[12];
  oh_output info[2];
  CHECK_OK(oh_run("SoftmaxCrossEntropyLoss", 2, (oh_value[]){x, t}, 0, NULL, 2,
                  (void *[]){loss, log_prob}, info));
  CHECK_EQ_INT(info[1].rank, 3);
  double want[12];
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) ref_softmax(kScores, want, n * 6 + d, 3, 2, 1);
  OH_CHECK_FLOATS(log_prob, want, 12, 1e-6);
  /* refusals */
  float y[4];
  OH_CHECK_REFUSED(
      oh_run(ops[0], 2, (oh_value[]){x, t}, 1, (etrt_attribute[]){OH_STRING("reduction", "avg")}, 1,
             (void *[]){y}, NULL),
      ops[0], "avg");
  OH_CHECK_REFUSED(oh_run(ops[0], 2, (oh_value[]){x, OH_I64(1, (4), 0, 1, 2, 0)}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   ops[0], "target");
  OH_CHECK_REFUSED(oh_run(ops[1], 2, (oh_value[]){x, OH_F32(2, (2, 2), 0, 1, 2, 0)}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   ops[1], "float32");
  /* a class index out of range is refused when it runs */
  CHECK_FAILS(oh_run(ops[0], 2, (oh_value[]){x, OH_I64(2, (2, 2), 0, 3, 1, 1)}, 0, NULL, 1,
                     (void *[]){y}, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "outside [0, 3)");
}

int main(void) {
  RUN_TEST(test_softmax_axes);
  RUN_TEST(test_hardmax);
  RUN_TEST(test_softmax_refusals);
  RUN_TEST(test_cumsum);
  RUN_TEST(test_losses);
  return TEST_EXIT();
}
