/* MaxPool (with Indices, both storage orders), AveragePool (count_include_pad,
 * ceil_mode, auto_pad), LpPool and the Global pools on the CPU executor, checked
 * against hand-computed values and a direct reference, and their refusals. */
#include "op_harness.h"

static const float k4x4[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void test_max_pool(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 4, 4}, k4x4, OH_INPUT};
  float y[16];
  int64_t idx[16];
  oh_output info[2];
  /* kernel 3, stride 2, ceil_mode: a second window hangs over the edge */
  CHECK_OK(oh_run("MaxPool", 1, &x, 3,
                  (etrt_attribute[]){OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("strides", 2, 2, 2),
                                     OH_INT("ceil_mode", 1)},
                  2, (void *[]){y, idx}, info));
  CHECK_EQ_INT(info[0].dims[2], 2);
  CHECK_EQ_INT(info[1].dtype, ETRT_DTYPE_INT64);
  OH_CHECK_FLOATS(y, ((double[]){11, 12, 15, 16}), 4, 0);
  OH_CHECK_INTS(idx, ((int64_t[]){10, 11, 14, 15}), 4);
  /* without ceil_mode only one window fits */
  CHECK_OK(oh_run("MaxPool", 1, &x, 2,
                  (etrt_attribute[]){OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("strides", 2, 2, 2)},
                  1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 1);
  CHECK_NEAR(y[0], 11, 0);
  /* dilations 2: windows {1,3,9,11}... */
  CHECK_OK(
      oh_run("MaxPool", 1, &x, 2,
             (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_INTS("dilations", 2, 2, 2)}, 1,
             (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){11, 12, 15, 16}), 4, 0);
  /* storage_order 1: indices count columns first */
  CHECK_OK(oh_run("MaxPool", 1, &x, 3,
                  (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_INTS("strides", 2, 2, 2),
                                     OH_INT("storage_order", 1)},
                  2, (void *[]){y, idx}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){6, 8, 14, 16}), 4, 0);
  OH_CHECK_INTS(idx, ((int64_t[]){5, 13, 7, 15}), 4);
  /* uint8 with pads: padding never wins */
  oh_value u = OH_U8(4, (1, 1, 2, 3), 9, 200, 3, 4, 5, 6);
  uint8_t yu[12];
  CHECK_OK(
      oh_run("MaxPool", 1, &u, 2,
             (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_INTS("pads", 4, 1, 1, 1, 1)},
             1, (void *[]){yu}, info));
  CHECK_EQ_INT(info[0].dims[3], 4);
  OH_CHECK_INTS(yu, ((int[]){9, 200, 200, 3, 9, 200, 200, 6, 4, 5, 6, 6}), 12);
}

static void test_average_pool(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 4, 4}, k4x4, OH_INPUT};
  float y[25];
  oh_output info[1];
  /* ceil_mode: the overhanging windows average only what they cover */
  CHECK_OK(oh_run("AveragePool", 1, &x, 3,
                  (etrt_attribute[]){OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("strides", 2, 2, 2),
                                     OH_INT("ceil_mode", 1)},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){6, 7.5, 12, 13.5}), 4, 1e-6);
  /* pads 1: corner window covers 4 values; count_include_pad divides by 9 */
  etrt_attribute a[3] = {OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("pads", 4, 1, 1, 1, 1),
                         OH_INT("count_include_pad", 0)};
  CHECK_OK(oh_run("AveragePool", 1, &x, 3, a, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 4);
  CHECK_NEAR(y[0], (1 + 2 + 5 + 6) / 4.0, 1e-6);
  CHECK_NEAR(y[5], (1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11) / 9.0, 1e-6);
  a[2] = OH_INT("count_include_pad", 1);
  CHECK_OK(oh_run("AveragePool", 1, &x, 3, a, 1, (void *[]){y}, NULL));
  CHECK_NEAR(y[0], (1 + 2 + 5 + 6) / 9.0, 1e-6);
  /* SAME_LOWER with an even kernel pads at the beginning */
  CHECK_OK(oh_run(
      "AveragePool", 1, &x, 2,
      (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_STRING("auto_pad", "SAME_LOWER")}, 1,
      (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 4);
  CHECK_NEAR(y[0], 1, 1e-6);
  CHECK_NEAR(y[5], (1 + 2 + 5 + 6) / 4.0, 1e-6);
  CHECK_OK(oh_run(
      "AveragePool", 1, &x, 2,
      (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_STRING("auto_pad", "SAME_UPPER")}, 1,
      (void *[]){y}, NULL));
  CHECK_NEAR(y[0], (1 + 2 + 5 + 6) / 4.0, 1e-6);
  CHECK_NEAR(y[15], 16, 1e-6);
  /* 1-D and 3-D */
  oh_value x1 = OH_F32(3, (1, 2, 5), 1, 2, 3, 4, 5, -1, -2, -3, -4, -5);
  CHECK_OK(oh_run("AveragePool", 1, &x1, 2,
                  (etrt_attribute[]){OH_INTS("kernel_shape", 1, 2), OH_INTS("strides", 1, 2)}, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 2);
  OH_CHECK_FLOATS(y, ((double[]){1.5, 3.5, -1.5, -3.5}), 4, 1e-6);
  oh_value x3 = {ETRT_DTYPE_FLOAT32, 5, {1, 1, 2, 2, 4}, k4x4, OH_INPUT};
  CHECK_OK(oh_run("AveragePool", 1, &x3, 1, (etrt_attribute[]){OH_INTS("kernel_shape", 3, 2, 2, 2)},
                  1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[4], 3);
  OH_CHECK_FLOATS(y, ((double[]){7.5, 8.5, 9.5}), 3, 1e-6);
}

static void test_lp_and_global_pools(void) {
  oh_value x = OH_F32(4, (1, 2, 2, 2), 3, 4, 0, 0, 1, -2, 3, 4);
  float y[4];
  oh_output info[1];
  CHECK_OK(oh_run("GlobalAveragePool", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 4);
  CHECK_EQ_INT(info[0].dims[2], 1);
  OH_CHECK_FLOATS(y, ((double[]){1.75, 1.5}), 2, 1e-6);
  CHECK_OK(oh_run("GlobalMaxPool", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){4, 4}), 2, 0);
  CHECK_OK(oh_run("GlobalLpPool", 1, &x, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){5, sqrt(30.0)}), 2, 1e-6);
  CHECK_OK(oh_run("LpPool", 1, &x, 2,
                  (etrt_attribute[]){OH_INTS("kernel_shape", 2, 1, 2), OH_INT("p", 1)}, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[3], 1);
  OH_CHECK_FLOATS(y, ((double[]){7, 0, 3, 7}), 4, 1e-6);
}

static void test_pool_refusals(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 4, 4}, k4x4, OH_INPUT};
  OH_CHECK_REFUSED(oh_run("MaxPool", 1, &x, 0, NULL, 1, NULL, NULL), "MaxPool", "kernel_shape");
  OH_CHECK_REFUSED(oh_run("AveragePool", 1, &x, 1,
                          (etrt_attribute[]){OH_INTS("kernel_shape", 1, 2)}, 1, NULL, NULL),
                   "AveragePool", "spatial");
  OH_CHECK_REFUSED(oh_run("MaxPool", 1, &x, 1, (etrt_attribute[]){OH_INTS("kernel_shape", 2, 5, 5)},
                          1, NULL, NULL),
                   "MaxPool", "window");
  OH_CHECK_REFUSED(oh_run("AveragePool", 1, &x, 1,
                          (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2)}, 2, NULL, NULL),
                   "AveragePool", "output");
  OH_CHECK_REFUSED(
      oh_run("LpPool", 1, &x, 2,
             (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_INT("p", 0)}, 1, NULL, NULL),
      "LpPool", "p must be positive");
  oh_value xi = OH_I32(3, (1, 1, 2), 1, 2);
  OH_CHECK_REFUSED(oh_run("AveragePool", 1, &xi, 1,
                          (etrt_attribute[]){OH_INTS("kernel_shape", 1, 2)}, 1, NULL, NULL),
                   "AveragePool", "int32");
  oh_value flat = OH_F32(1, (4), 1, 2, 3, 4);
  OH_CHECK_REFUSED(oh_run("GlobalMaxPool", 1, &flat, 0, NULL, 1, NULL, NULL), "GlobalMaxPool",
                   "rank");
}

int main(void) {
  RUN_TEST(test_max_pool);
  RUN_TEST(test_average_pool);
  RUN_TEST(test_lp_and_global_pools);
  RUN_TEST(test_pool_refusals);
  return TEST_EXIT();
}
