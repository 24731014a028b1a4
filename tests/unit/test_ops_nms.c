/* NonMaxSuppression on the CPU: overlaps worked by hand in both box layouts, the
 * thresholds and the maximum known at build time or only at execute, and every
 * refusal. */
#include "op_harness.h"

/* Three boxes of one class: 0 and 1 overlap with IoU 81/100, 2 is apart. */
#define NMS_BOXES OH_F32(3, (1, 3, 4), 0, 0, 10, 10, 1, 1, 10, 10, 20, 20, 30, 30)
#define NMS_CENTER OH_F32(3, (1, 3, 4), 5, 5, 10, 10, 5.5f, 5.5f, 9, 9, 25, 25, 10, 10)

static void test_nms(void) {
  int64_t y[4096 / 8];
  oh_output info[1];
  const oh_value scores = OH_F32(3, (1, 1, 3), 0.9f, 0.95f, 0.5f);
  /* box 1 scores best and suppresses box 0 */
  CHECK_OK(oh_run(
      "NonMaxSuppression", 4,
      (oh_value[]){NMS_BOXES, scores, OH_CONST(OH_I64(1, (1), 10)), OH_CONST(OH_F32(1, (1), 0.5f))},
      0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[0], 2);
  const int64_t want[] = {0, 0, 1, 0, 0, 2};
  for (int i = 0; i < 6; ++i) CHECK_EQ_INT(y[i], want[i]);
  /* a threshold above the IoU keeps all three, best first; the maximum cuts at two */
  CHECK_OK(oh_run("NonMaxSuppression", 4,
                  (oh_value[]){NMS_BOXES, scores, OH_I64(1, (1), 2), OH_F32(1, (1), 0.9f)}, 0, NULL,
                  1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(y[2], 1);
  CHECK_EQ_INT(y[5], 0);
  /* the same boxes as centers and sizes; a score threshold drops box 2 */
  CHECK_OK(oh_run("NonMaxSuppression", 5,
                  (oh_value[]){NMS_CENTER, scores, OH_I64(1, (1), 10), OH_F32(1, (1), 0.5f),
                               OH_F32(1, (1), 0.6f)},
                  1, (etrt_attribute[]){OH_INT("center_point_box", 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 1);
  CHECK_EQ_INT(y[2], 1);
  /* no maximum: nothing selected */
  CHECK_OK(oh_run("NonMaxSuppression", 2, (oh_value[]){NMS_BOXES, scores}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 0);
}

static void test_refusals(void) {
  const oh_value scores = OH_F32(3, (1, 1, 3), 0.9f, 0.95f, 0.5f);
  OH_CHECK_REFUSED(oh_run("NonMaxSuppression", 1, (oh_value[]){NMS_BOXES}, 0, NULL, 1, NULL, NULL),
                   "NonMaxSuppression", "2 to 5 inputs");
  OH_CHECK_REFUSED(
      oh_run("NonMaxSuppression", 2, (oh_value[]){OH_F32(3, (1, 1, 3), 1, 2, 3), scores}, 0, NULL,
             1, NULL, NULL),
      "NonMaxSuppression", "[batches, boxes, 4]");
  OH_CHECK_REFUSED(
      oh_run("NonMaxSuppression", 2, (oh_value[]){NMS_BOXES, OH_F32(3, (1, 1, 2), 1, 2)}, 0, NULL,
             1, NULL, NULL),
      "NonMaxSuppression", "scores must be");
  OH_CHECK_REFUSED(
      oh_run("NonMaxSuppression", 2, (oh_value[]){OH_F64(3, (1, 1, 4), 0, 0, 1, 1), scores}, 0,
             NULL, 1, NULL, NULL),
      "NonMaxSuppression", "float32");
  OH_CHECK_REFUSED(oh_run("NonMaxSuppression", 2, (oh_value[]){NMS_BOXES, scores}, 1,
                          (etrt_attribute[]){OH_INT("center_point_box", 2)}, 1, NULL, NULL),
                   "NonMaxSuppression", "center_point_box");
  OH_CHECK_REFUSED(
      oh_run("NonMaxSuppression", 3, (oh_value[]){NMS_BOXES, scores, OH_I32(1, (1), 3)}, 0, NULL, 1,
             NULL, NULL),
      "NonMaxSuppression", "max_output_boxes_per_class");
}

int main(void) {
  RUN_TEST(test_nms);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
