/* The reductions on the CPU executor: every kind against a plain reference over a
 * [2, 3, 4] tensor for several axis sets, axes as attribute / constant input / shape
 * input, keepdims, noop_with_empty_axes, integers, float16, refusals. */
#include "op_harness.h"

static const char *const kOps[] = {"ReduceSum",       "ReduceMean",     "ReduceMax", "ReduceMin",
                                   "ReduceProd",      "ReduceL1",       "ReduceL2",  "ReduceLogSum",
                                   "ReduceLogSumExp", "ReduceSumSquare"};
#define OP_COUNT 10

static float kX[24];

/* The reference: output element for each combination of kept indices. */
static void reference(int op, unsigned mask, double *out) {
  int64_t dims[3] = {2, 3, 4};
  int n = 0;
  for (int i = 0; i < (mask & 1 ? 1 : 2); ++i)
    for (int j = 0; j < (mask & 2 ? 1 : 3); ++j)
      for (int k = 0; k < (mask & 4 ? 1 : 4); ++k) {
        double acc = op == 4 ? 1 : op == 2 ? -INFINITY : op == 3 ? INFINITY : 0;
        int count = 0;
        double m = -INFINITY;
        for (int a = 0; a < dims[0]; ++a)
          for (int b = 0; b < dims[1]; ++b)
            for (int c = 0; c < dims[2]; ++c) {
              if ((!(mask & 1) && a != i) || (!(mask & 2) && b != j) || (!(mask & 4) && c != k))
                continue;
              double v = kX[(a * 3 + b) * 4 + c];
              ++count;
              m = fmax(m, v);
              switch (op) {
                case 0:
                case 1:
                case 7:
                  acc += v;
                  break;
                case 2:
                  acc = fmax(acc, v);
                  break;
                case 3:
                  acc = fmin(acc, v);
                  break;
                case 4:
                  acc *= v;
                  break;
                case 5:
                  acc += fabs(v);
                  break;
                case 6:
                case 9:
                  acc += v * v;
                  break;
                case 8:
                  break;
              }
            }
        if (op == 8) {
          for (int a = 0; a < 24; ++a) {
            int ia = a / 12, ib = (a / 4) % 3, ic = a % 4;
            if ((!(mask & 1) && ia != i) || (!(mask & 2) && ib != j) || (!(mask & 4) && ic != k))
              continue;
            acc += exp(kX[a] - m);
          }
          acc = m + log(acc);
        }
        if (op == 1) acc /= count;
        if (op == 6) acc = sqrt(acc);
        if (op == 7) acc = log(acc);
        out[n++] = acc;
      }
}

static void check_axes(unsigned mask, int keepdims) {
  int64_t axes[3];
  int64_t count = 0;
  for (int a = 0; a < 3; ++a)
    if (mask & (1u << a)) axes[count++] = a - (a == 2 ? 3 : 0); /* axis 2 written as -1 */
  int64_t out_numel = (mask & 1 ? 1 : 2) * (mask & 2 ? 1 : 3) * (mask & 4 ? 1 : 4);
  for (int op = 0; op < OP_COUNT; ++op) {
    float y[24];
    double want[24];
    oh_output info[1];
    oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 3, .dims = {2, 3, 4}, .data = kX};
    etrt_attribute attrs[2] = {
        OH_INT("keepdims", keepdims),
        {.name = "axes", .kind = ETRT_ATTRIBUTE_INTS, .count = count, .ints = axes}};
    etrt_status s = oh_run(kOps[op], 1, &x, 2, attrs, 1, (void *[]){y}, info);
    if (s != ETRT_OK) {
      etrt_test_fail(__FILE__, __LINE__, "%s mask %u: %s", kOps[op], mask, etrt_last_error());
      continue;
    }
    reference(op, mask, want);
    CHECK_EQ_INT(info[0].rank, keepdims ? 3 : 3 - count);
    int64_t numel = 1;
    for (int32_t a = 0; a < info[0].rank; ++a) numel *= info[0].dims[a];
    CHECK_EQ_INT(numel, out_numel);
    for (int64_t i = 0; i < out_numel; ++i) {
      if (!(fabs(y[i] - want[i]) <= 1e-5 + 1e-5 * fabs(want[i]))) {
        etrt_test_fail(__FILE__, __LINE__, "%s mask %u element %lld: %.9g, want %.9g", kOps[op],
                       mask, (long long)i, y[i], want[i]);
        break;
      }
    }
  }
}

static void test_every_kind_and_axis_set(void) {
  /* at most one negative in five, so every reduced group has a positive sum (LogSum) */
  for (int i = 0; i < 24; ++i)
    kX[i] = i % 5 == 0 ? -0.25f - 0.0625f * (float)(i % 3) : 0.5f + 0.125f * (float)((i * 7) % 11);
  for (unsigned mask = 1; mask < 8; ++mask) {
    check_axes(mask, 1);
    check_axes(mask, 0);
  }
}

static void test_axes_inputs(void) {
  float y[6];
  oh_output info[1];
  oh_value x = OH_F32(2, (2, 3), 1, 2, 3, 4, 5, 6);
  /* opset 13+: axes as a constant input */
  CHECK_OK(oh_run("ReduceSum", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 1))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_FLOATS(y, ((double[]){6, 15}), 2, 0);
  /* axes as a shape input, keepdims 0 */
  CHECK_OK(oh_run("ReduceMax", 2, (oh_value[]){x, OH_SHAPE_INPUT(OH_I64(1, (1), 0))}, 1,
                  (etrt_attribute[]){OH_INT("keepdims", 0)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 1);
  CHECK_EQ_INT(info[0].dims[0], 3);
  OH_CHECK_FLOATS(y, ((double[]){4, 5, 6}), 3, 0);
  /* no axes: everything; empty axes input with noop: nothing */
  CHECK_OK(oh_run("ReduceSum", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  OH_CHECK_FLOATS(y, ((double[]){21}), 1, 0);
  CHECK_OK(oh_run("ReduceMean", 2, (oh_value[]){x, OH_NONE}, 1,
                  (etrt_attribute[]){OH_INT("keepdims", 0)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 0);
  OH_CHECK_FLOATS(y, ((double[]){3.5}), 1, 0);
  oh_value empty = {
      .dtype = ETRT_DTYPE_INT64, .rank = 1, .dims = {0}, .data = y, .kind = OH_CONSTANT};
  CHECK_OK(oh_run("ReduceSum", 2, (oh_value[]){x, empty}, 1,
                  (etrt_attribute[]){OH_INT("noop_with_empty_axes", 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[1], 3);
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 3, 4, 5, 6}), 6, 0);
}

static void test_integers_and_float16(void) {
  int64_t yl[2];
  /* exact beyond 2^53 */
  CHECK_OK(oh_run("ReduceSum", 1, &(oh_value[]){OH_I64(2, (2, 2), (1LL << 60), 1, -5, 3)}[0], 2,
                  (etrt_attribute[]){OH_INTS("axes", 1, 1), OH_INT("keepdims", 0)}, 1,
                  (void *[]){yl}, NULL));
  CHECK(yl[0] == (1LL << 60) + 1 && yl[1] == -2);
  int32_t yi[2];
  oh_value xi = OH_I32(2, (2, 3), -7, 3, 2, 4, -1, 0);
  CHECK_OK(oh_run("ReduceMax", 1, &xi, 1, (etrt_attribute[]){OH_INTS("axes", 1, -1)}, 1,
                  (void *[]){yi}, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){3, 4}), 2);
  CHECK_OK(oh_run("ReduceProd", 1, &xi, 1, (etrt_attribute[]){OH_INTS("axes", 1, 1)}, 1,
                  (void *[]){yi}, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){-42, 0}), 2);
  CHECK_OK(oh_run("ReduceL1", 1, &xi, 1, (etrt_attribute[]){OH_INTS("axes", 1, 1)}, 1,
                  (void *[]){yi}, NULL));
  OH_CHECK_INTS(yi, ((int32_t[]){12, 5}), 2);
  uint16_t h[1];
  /* mean of 1, 2, 3, 4 as float16 = 2.5 (0x4100) */
  CHECK_OK(oh_run("ReduceMean", 1,
                  &(oh_value[]){OH_HALF(1, (4), 0x3C00, 0x4000, 0x4200, 0x4400)}[0], 0, NULL, 1,
                  (void *[]){h}, NULL));
  CHECK_EQ_INT(h[0], 0x4100);
}

static void test_refusals(void) {
  float y[6];
  oh_value x = OH_F32(2, (2, 3), 1, 2, 3, 4, 5, 6);
  OH_CHECK_REFUSED(oh_run("ReduceSum", 1, &x, 1, (etrt_attribute[]){OH_INTS("axes", 1, 2)}, 1,
                          (void *[]){y}, NULL),
                   "ReduceSum", "axes[0]");
  OH_CHECK_REFUSED(oh_run("ReduceSum", 1, &x, 1, (etrt_attribute[]){OH_INTS("axes", 2, 1, -1)}, 1,
                          (void *[]){y}, NULL),
                   "ReduceSum", "twice");
  OH_CHECK_REFUSED(oh_run("ReduceL2", 1, &(oh_value[]){OH_I32(1, (2), 1, 2)}[0], 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "ReduceL2", "int32");
  OH_CHECK_REFUSED(oh_run("ReduceMean", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 0))}, 1,
                          (etrt_attribute[]){OH_INTS("axes", 1, 0)}, 1, (void *[]){y}, NULL),
                   "ReduceMean", "both");
  OH_CHECK_REFUSED(oh_run("ReduceMean", 2, (oh_value[]){x, OH_CONST(OH_F32(1, (1), 0.0f))}, 0, NULL,
                          1, (void *[]){y}, NULL),
                   "ReduceMean", "axes");
}

int main(void) {
  RUN_TEST(test_every_kind_and_axis_set);
  RUN_TEST(test_axes_inputs);
  RUN_TEST(test_integers_and_float16);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
