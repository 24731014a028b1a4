/* MaxUnpool on the CPU: values worked by hand with and without output_shape, and
 * every refusal. */
#include "op_harness.h"

#define UNPOOL_ATTRS \
  (etrt_attribute[]) { OH_INTS("kernel_shape", 2, 2, 2), OH_INTS("strides", 2, 2, 2) }

static void test_max_unpool(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value x = OH_F32(4, (1, 1, 2, 2), 1, 2, 3, 4);
  const oh_value idx = OH_I64(4, (1, 1, 2, 2), 0, 3, 9, 14);
  CHECK_OK(oh_run("MaxUnpool", 2, (oh_value[]){x, idx}, 2, UNPOOL_ATTRS, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 4);
  CHECK_EQ_INT(info[0].dims[3], 4);
  OH_CHECK_FLOATS(y, ((double[]){1, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0}), 16, 0);
  /* output_shape 5x5: the indices keep their 4x4 coordinates */
  CHECK_OK(oh_run(
      "MaxUnpool", 3,
      (oh_value[]){x, OH_I64(4, (1, 1, 2, 2), 0, 3, 9, 6), OH_CONST(OH_I64(1, (4), 1, 1, 5, 5))}, 2,
      UNPOOL_ATTRS, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 5);
  OH_CHECK_FLOATS(y, ((double[]){1, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0}), 15, 0);
}

static void test_refusals(void) {
  float y[4096 / 4];
  const oh_value x = OH_F32(4, (1, 1, 2, 2), 1, 2, 3, 4);
  const oh_value idx = OH_I64(4, (1, 1, 2, 2), 0, 3, 9, 14);
  etrt_clear_error();
  CHECK(oh_run("MaxUnpool", 2, (oh_value[]){x, OH_I64(4, (1, 1, 2, 2), 0, 3, 9, -1)}, 2,
               UNPOOL_ATTRS, 1, (void *[]){y}, NULL) == ETRT_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(etrt_last_error(), "MaxUnpool");
  CHECK_STR_CONTAINS(etrt_last_error(), "index -1 is out of range");
  OH_CHECK_REFUSED(oh_run("MaxUnpool", 2, (oh_value[]){x, idx}, 0, NULL, 1, NULL, NULL),
                   "MaxUnpool", "kernel_shape");
  OH_CHECK_REFUSED(oh_run("MaxUnpool", 2, (oh_value[]){x, OH_I32(4, (1, 1, 2, 2), 0, 3, 9, 14)}, 2,
                          UNPOOL_ATTRS, 1, NULL, NULL),
                   "MaxUnpool", "int64");
  OH_CHECK_REFUSED(oh_run("MaxUnpool", 2, (oh_value[]){x, OH_I64(4, (1, 1, 1, 2), 0, 3)}, 2,
                          UNPOOL_ATTRS, 1, NULL, NULL),
                   "MaxUnpool", "shape");
  OH_CHECK_REFUSED(
      oh_run("MaxUnpool", 3, (oh_value[]){x, idx, OH_CONST(OH_I64(1, (4), 1, 1, 3, 3))}, 2,
             UNPOOL_ATTRS, 1, NULL, NULL),
      "MaxUnpool", "smaller");
  OH_CHECK_REFUSED(oh_run("MaxUnpool", 3, (oh_value[]){x, idx, OH_CONST(OH_I64(1, (3), 1, 1, 4))},
                          2, UNPOOL_ATTRS, 1, NULL, NULL),
                   "MaxUnpool", "output_shape");
  OH_CHECK_REFUSED(
      oh_run("MaxUnpool", 2, (oh_value[]){x, idx}, 2,
             (etrt_attribute[]){OH_INTS("kernel_shape", 2, 2, 2), OH_INTS("strides", 1, 2)}, 1,
             NULL, NULL),
      "MaxUnpool", "strides");
}

int main(void) {
  RUN_TEST(test_max_unpool);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
