/* CenterCropPad on the CPU: values worked by hand (an odd crop, an odd pad, axes)
 * and every refusal. */
#include "op_harness.h"

static void test_center_crop_pad(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value x = OH_F32(2, (3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
  /* rows 3 -> 2 start at (3 - 2) / 2 = 0; columns 4 -> 7 put (7 - 4) / 2 = 1 zero first */
  CHECK_OK(oh_run("CenterCropPad", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 2, 7))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(info[0].dims[1], 7);
  OH_CHECK_FLOATS(y, ((double[]){0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 7, 0, 0}), 14, 0);
  /* axes [1]: columns 4 -> 1 start at (4 - 1) / 2 = 1 */
  CHECK_OK(oh_run("CenterCropPad", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 1))}, 1,
                  (etrt_attribute[]){OH_INTS("axes", 1, 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_FLOATS(y, ((double[]){1, 5, 9}), 3, 0);
}

static void test_refusals(void) {
  const oh_value x = OH_F32(2, (3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
  OH_CHECK_REFUSED(oh_run("CenterCropPad", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 2))}, 0, NULL,
                          1, NULL, NULL),
                   "CenterCropPad", "axes");
  OH_CHECK_REFUSED(oh_run("CenterCropPad", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 2, -1))}, 0,
                          NULL, 1, NULL, NULL),
                   "CenterCropPad", "negative");
  OH_CHECK_REFUSED(oh_run("CenterCropPad", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 2, 2))}, 1,
                          (etrt_attribute[]){OH_INTS("axes", 2, 0, -2)}, 1, NULL, NULL),
                   "CenterCropPad", "repeated");
  OH_CHECK_REFUSED(oh_run("CenterCropPad", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 2))}, 1,
                          (etrt_attribute[]){OH_INTS("axes", 1, 2)}, 1, NULL, NULL),
                   "CenterCropPad", "axes");
  OH_CHECK_REFUSED(oh_run("CenterCropPad", 1, (oh_value[]){x}, 0, NULL, 1, NULL, NULL),
                   "CenterCropPad", "2 inputs");
}

int main(void) {
  RUN_TEST(test_center_crop_pad);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
