/* EtrtRefusedBranch, the stand-in for an If branch the builder could not build: its
 * outputs take the types and bounds its attributes give, running it fails with the
 * recorded reason, and malformed attributes are refused naming the attribute. */
#include "engine/op.h"
#include "op_harness.h"

static const float kX[4] = {1, 2, 3, 4};

static void test_runs_into_its_reason(void) {
  oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {4}, .data = kX};
  float y[4];
  etrt_attribute attributes[] = {
      OH_STRING("message", "Reshape 'r': shape has 3 elements, the input 4"),
      OH_INTS("dtypes", 1, ETRT_DTYPE_FLOAT32),
      OH_INTS("ranks", 1, 1),
      OH_INTS("min_dims", 1, 4),
      OH_INTS("max_dims", 1, 4),
  };
  etrt_clear_error();
  CHECK(oh_run("EtrtRefusedBranch", 1, &x, 5, attributes, 1, (void *[]){y}, NULL) ==
        ETRT_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(etrt_last_error(), "this branch cannot run with the shapes the plan was");
  CHECK_STR_CONTAINS(etrt_last_error(), "Reshape 'r': shape has 3 elements, the input 4");
}

static void test_refusals(void) {
  oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {4}, .data = kX};
  OH_CHECK_REFUSED(oh_run("EtrtRefusedBranch", 1, &x, 0, NULL, 1, NULL, NULL), "EtrtRefusedBranch",
                   "'message' is missing");
  etrt_attribute counts[] = {
      OH_STRING("message", "why"), OH_INTS("dtypes", 2, 6, 6), OH_INTS("ranks", 1, 1),
      OH_INTS("min_dims", 1, 4),   OH_INTS("max_dims", 1, 4),
  };
  OH_CHECK_REFUSED(oh_run("EtrtRefusedBranch", 1, &x, 5, counts, 1, NULL, NULL),
                   "'dtypes' and 'ranks' have 2 and 1 values", "for 1 outputs");
  etrt_attribute dtype[] = {
      OH_STRING("message", "why"), OH_INTS("dtypes", 1, 99),  OH_INTS("ranks", 1, 1),
      OH_INTS("min_dims", 1, 4),   OH_INTS("max_dims", 1, 4),
  };
  OH_CHECK_REFUSED(oh_run("EtrtRefusedBranch", 1, &x, 5, dtype, 1, NULL, NULL), "output 0",
                   "dtype 99");
  etrt_attribute few[] = {
      OH_STRING("message", "why"), OH_INTS("dtypes", 1, 6),   OH_INTS("ranks", 1, 2),
      OH_INTS("min_dims", 1, 4),   OH_INTS("max_dims", 1, 4),
  };
  OH_CHECK_REFUSED(oh_run("EtrtRefusedBranch", 1, &x, 5, few, 1, NULL, NULL), "output 0",
                   "rank 2, with 1 and 1 dims given");
  etrt_attribute order[] = {
      OH_STRING("message", "why"), OH_INTS("dtypes", 1, 6),   OH_INTS("ranks", 1, 1),
      OH_INTS("min_dims", 1, 5),   OH_INTS("max_dims", 1, 4),
  };
  OH_CHECK_REFUSED(oh_run("EtrtRefusedBranch", 1, &x, 5, order, 1, NULL, NULL), "output 0 axis 0",
                   "bounds [5, 4]");
  etrt_attribute extra[] = {
      OH_STRING("message", "why"),  OH_INTS("dtypes", 1, 6),      OH_INTS("ranks", 1, 1),
      OH_INTS("min_dims", 2, 4, 4), OH_INTS("max_dims", 2, 4, 4),
  };
  OH_CHECK_REFUSED(oh_run("EtrtRefusedBranch", 1, &x, 5, extra, 1, NULL, NULL),
                   "2 and 2 dims given", "outputs of 1 axes");
}

int main(void) {
  test_runs_into_its_reason();
  test_refusals();
  TEST_EXIT();
}
