/* Det on the CPU: values worked by hand (a row swap, a singular matrix, a batch)
 * and every refusal. */
#include "op_harness.h"

static void test_det(void) {
  float y[4096 / 4];
  double d[4096 / 8];
  oh_output info[1];
  CHECK_OK(oh_run("Det", 1, (oh_value[]){OH_F32(2, (2, 2), 1, 2, 3, 4)}, 0, NULL, 1, (void *[]){y},
                  info));
  CHECK_EQ_INT(info[0].rank, 0);
  OH_CHECK_FLOATS(y, ((double[]){-2}), 1, 1e-6);
  /* the first pivot is 0: a row swap flips the sign; then singular; then diagonal */
  CHECK_OK(oh_run("Det", 1,
                  (oh_value[]){OH_F32(3, (3, 3, 3), 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 2, 3, 2, 4, 6, 7,
                                      8, 9, 2, 0, 0, 0, 3, 0, 0, 0, 4)},
                  0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  OH_CHECK_FLOATS(y, ((double[]){-1, 0, 24}), 3, 1e-6);
  CHECK_OK(oh_run("Det", 1, (oh_value[]){OH_F64(2, (2, 2), 2, 1, 1, 3)}, 0, NULL, 1, (void *[]){d},
                  NULL));
  CHECK(fabs(d[0] - 5.0) < 1e-12);
}

static void test_refusals(void) {
  OH_CHECK_REFUSED(
      oh_run("Det", 1, (oh_value[]){OH_F32(2, (2, 3), 1, 2, 3, 4, 5, 6)}, 0, NULL, 1, NULL, NULL),
      "Det", "square");
  OH_CHECK_REFUSED(
      oh_run("Det", 1, (oh_value[]){OH_F32(1, (4), 1, 2, 3, 4)}, 0, NULL, 1, NULL, NULL), "Det",
      "square");
  OH_CHECK_REFUSED(oh_run("Det", 1, (oh_value[]){OH_I64(2, (1, 1), 1)}, 0, NULL, 1, NULL, NULL),
                   "Det", "input");
}

int main(void) {
  RUN_TEST(test_det);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
