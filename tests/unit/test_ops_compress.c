/* Compress on the CPU: values worked by hand along an axis and flattened, and
 * every refusal. */
#include "op_harness.h"

static void test_compress(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value x = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (3), 1, 0, 1))}, 1,
                  (etrt_attribute[]){OH_INT("axis", 0)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 5, 6}), 4, 0);
  /* a short condition: the missing entries are false */
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (1), 1))}, 1,
                  (etrt_attribute[]){OH_INT("axis", -1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_FLOATS(y, ((double[]){1, 3, 5}), 3, 0);
  /* no axis: the flattened input; entries past its end are ignored */
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (8), 0, 1, 0, 0, 1, 0, 1, 1))},
                  0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 1);
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_FLOATS(y, ((double[]){2, 5}), 2, 0);
}

static void test_refusals(void) {
  const oh_value x = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  OH_CHECK_REFUSED(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 1, 0))}, 0, NULL,
                          1, NULL, NULL),
                   "Compress", "bool");
  OH_CHECK_REFUSED(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (3), 1, 0, 1))}, 1,
                          (etrt_attribute[]){OH_INT("axis", 2)}, 1, NULL, NULL),
                   "Compress", "axis");
  OH_CHECK_REFUSED(oh_run("Compress", 1, (oh_value[]){x}, 0, NULL, 1, NULL, NULL), "Compress",
                   "2 inputs");
  OH_CHECK_REFUSED(
      oh_run("Compress", 2, (oh_value[]){x, OH_BOOL(1, (3), 1, 0, 1)}, 0, NULL, 1, NULL, NULL),
      "Compress", "decides the output shape");
}

int main(void) {
  RUN_TEST(test_compress);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
