/* Col2Im on the CPU: values worked by hand (overlaps summed, a stride leaving a
 * pixel uncovered) and every refusal. */
#include "op_harness.h"

static void test_col2im(void) {
  float y[4096 / 4];
  oh_output info[1];
  /* 2x2 blocks of ones over a 3x3 image: each pixel counts the blocks covering it */
  CHECK_OK(oh_run("Col2Im", 3,
                  (oh_value[]){OH_F32(3, (1, 4, 4), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
                               OH_CONST(OH_I64(1, (2), 3, 3)), OH_CONST(OH_I64(1, (2), 2, 2))},
                  0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 4);
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 1, 2, 4, 2, 1, 2, 1}), 9, 0);
  /* 1-D, block 2, stride 2 over 5 pixels: positions 0 and 2; pixel 4 is uncovered */
  CHECK_OK(oh_run("Col2Im", 3,
                  (oh_value[]){OH_F32(3, (1, 2, 2), 1, 2, 3, 4), OH_CONST(OH_I64(1, (1), 5)),
                               OH_CONST(OH_I64(1, (1), 2))},
                  1, (etrt_attribute[]){OH_INTS("strides", 1, 2)}, 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){1, 3, 2, 4, 0}), 5, 0);
}

static void test_refusals(void) {
  const oh_value x = OH_F32(3, (1, 2, 2), 1, 2, 3, 4);
  const oh_value image = OH_CONST(OH_I64(1, (1), 5)), block = OH_CONST(OH_I64(1, (1), 2));
  OH_CHECK_REFUSED(oh_run("Col2Im", 3, (oh_value[]){x, image, block}, 0, NULL, 1, NULL, NULL),
                   "Col2Im", "must be [N, C * 2, 4]");
  OH_CHECK_REFUSED(oh_run("Col2Im", 3, (oh_value[]){x, image, OH_CONST(OH_I64(1, (2), 2, 2))}, 0,
                          NULL, 1, NULL, NULL),
                   "Col2Im", "same");
  OH_CHECK_REFUSED(oh_run("Col2Im", 3, (oh_value[]){x, image, OH_CONST(OH_I64(1, (1), 7))}, 0, NULL,
                          1, NULL, NULL),
                   "Col2Im", "no sliding position");
  OH_CHECK_REFUSED(oh_run("Col2Im", 3, (oh_value[]){x, image, block}, 1,
                          (etrt_attribute[]){OH_INTS("pads", 1, 1)}, 1, NULL, NULL),
                   "Col2Im", "pads");
  OH_CHECK_REFUSED(oh_run("Col2Im", 3, (oh_value[]){OH_F32(2, (2, 2), 1, 2, 3, 4), image, block}, 0,
                          NULL, 1, NULL, NULL),
                   "Col2Im", "input");
  OH_CHECK_REFUSED(oh_run("Col2Im", 2, (oh_value[]){x, image}, 0, NULL, 1, NULL, NULL), "Col2Im",
                   "3 inputs");
}

int main(void) {
  RUN_TEST(test_col2im);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
