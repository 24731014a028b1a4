/* ScatterND on the CPU: values worked by hand for each reduction, and every
 * refusal. */
#include "op_harness.h"

static void test_scatter_nd(void) {
  float y[4096 / 4];
  const oh_value data = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  /* rows 2 and 0 replaced */
  CHECK_OK(oh_run("ScatterND", 3,
                  (oh_value[]){data, OH_I64(2, (2, 1), 2, 0), OH_F32(2, (2, 2), 7, 8, 9, 10)}, 0,
                  NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){9, 10, 3, 4, 7, 8}), 6, 0);
  /* element (1, 1) twice, added; negative index -3 is row 0 */
  CHECK_OK(
      oh_run("ScatterND", 3,
             (oh_value[]){data, OH_I32(2, (3, 2), 1, 1, 1, 1, -3, 0), OH_F32(1, (3), 10, 20, 5)}, 1,
             (etrt_attribute[]){OH_STRING("reduction", "add")}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){6, 2, 3, 34, 5, 6}), 6, 0);
  CHECK_OK(oh_run("ScatterND", 3, (oh_value[]){data, OH_I64(2, (1, 2), 2, 1), OH_F32(1, (1), 3)}, 1,
                  (etrt_attribute[]){OH_STRING("reduction", "mul")}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 3, 4, 5, 18}), 6, 0);
  CHECK_OK(oh_run("ScatterND", 3,
                  (oh_value[]){data, OH_I64(2, (2, 1), 0, 1), OH_F32(2, (2, 2), 0, 9, 9, 0)}, 1,
                  (etrt_attribute[]){OH_STRING("reduction", "max")}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 9, 9, 4, 5, 6}), 6, 0);
  CHECK_OK(oh_run("ScatterND", 3,
                  (oh_value[]){data, OH_I64(2, (2, 1), 0, 1), OH_F32(2, (2, 2), 0, 9, 9, 0)}, 1,
                  (etrt_attribute[]){OH_STRING("reduction", "min")}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){0, 2, 3, 0, 5, 6}), 6, 0);
}

static void test_refusals(void) {
  float y[4096 / 4];
  const oh_value data = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  etrt_clear_error();
  CHECK(oh_run("ScatterND", 3, (oh_value[]){data, OH_I64(2, (1, 1), 3), OH_F32(2, (1, 2), 0, 0)}, 0,
               NULL, 1, (void *[]){y}, NULL) == ETRT_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(etrt_last_error(), "ScatterND");
  CHECK_STR_CONTAINS(etrt_last_error(), "index 3 is out of range");
  OH_CHECK_REFUSED(
      oh_run("ScatterND", 3, (oh_value[]){data, OH_I64(2, (1, 3), 0, 0, 0), OH_F32(1, (1), 0)}, 0,
             NULL, 1, NULL, NULL),
      "ScatterND", "last dim");
  OH_CHECK_REFUSED(
      oh_run("ScatterND", 3, (oh_value[]){data, OH_I64(2, (1, 1), 0), OH_F32(2, (1, 3), 0, 0, 0)},
             0, NULL, 1, NULL, NULL),
      "ScatterND", "updates");
  OH_CHECK_REFUSED(
      oh_run("ScatterND", 3, (oh_value[]){data, OH_F32(2, (1, 1), 0), OH_F32(2, (1, 2), 0, 0)}, 0,
             NULL, 1, NULL, NULL),
      "ScatterND", "indices");
  OH_CHECK_REFUSED(
      oh_run("ScatterND", 3,
             (oh_value[]){OH_BOOL(1, (2), 0, 1), OH_I64(2, (1, 1), 0), OH_BOOL(1, (1), 1)}, 1,
             (etrt_attribute[]){OH_STRING("reduction", "add")}, 1, NULL, NULL),
      "ScatterND", "reduction");
}

int main(void) {
  RUN_TEST(test_scatter_nd);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
