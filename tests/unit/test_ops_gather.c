/* Indexing and selection on the CPU executor: Gather, GatherElements, GatherND,
 * ScatterElements (reductions), OneHot, ArgMax/ArgMin (keepdims,
 * select_last_index), TopK; out-of-range indices are refused at run time. */
#include "op_harness.h"

static void test_gather(void) {
  oh_value data = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  float y[16];
  oh_output info[1];
  /* axis 0 with 2-D indices, negative ones counting from the end */
  CHECK_OK(oh_run("Gather", 2, (oh_value[]){data, OH_I64(2, (2, 2), 0, -1, 1, 2)}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 3);
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 5, 6, 3, 4, 5, 6}), 8, 0);
  /* axis 1, int32 indices, scalar index drops the axis */
  CHECK_OK(oh_run("Gather", 2, (oh_value[]){data, OH_I32(0, (0), 1)}, 1,
                  (etrt_attribute[]){OH_INT("axis", 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 1);
  OH_CHECK_FLOATS(y, ((double[]){2, 4, 6}), 3, 0);
  etrt_clear_error();
  CHECK(oh_run("Gather", 2, (oh_value[]){data, OH_I64(1, (2), 0, 3)}, 0, NULL, 1, (void *[]){y},
               NULL) == ETRT_ERROR_INVALID_ARGUMENT);
  CHECK_STR_CONTAINS(etrt_last_error(), "Gather");
  CHECK_STR_CONTAINS(etrt_last_error(), "index 3 is out of range");
  OH_CHECK_REFUSED(
      oh_run("Gather", 2, (oh_value[]){data, OH_F32(1, (1), 0)}, 0, NULL, 1, NULL, NULL), "Gather",
      "indices");
  /* GatherElements */
  CHECK_OK(oh_run("GatherElements", 2, (oh_value[]){data, OH_I64(2, (2, 2), 1, 0, -1, 1)}, 1,
                  (etrt_attribute[]){OH_INT("axis", 1)}, 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){2, 1, 4, 4}), 4, 0);
  CHECK_OK(oh_run("GatherElements", 2, (oh_value[]){data, OH_I64(2, (1, 2), 2, 0)}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){5, 2}), 2, 0);
  OH_CHECK_REFUSED(
      oh_run("GatherElements", 2, (oh_value[]){data, OH_I64(1, (2), 0, 1)}, 0, NULL, 1, NULL, NULL),
      "GatherElements", "rank");
  /* GatherND, with and without batch_dims */
  oh_value cube = OH_I32(3, (2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7);
  int32_t yi[8];
  CHECK_OK(oh_run("GatherND", 2, (oh_value[]){cube, OH_I64(3, (2, 1, 2), 0, 1, 1, 0)}, 0, NULL, 1,
                  (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].rank, 3);
  OH_CHECK_INTS(yi, ((int[]){2, 3, 4, 5}), 4);
  CHECK_OK(oh_run("GatherND", 2, (oh_value[]){cube, OH_I64(2, (2, 1), 1, 0)}, 1,
                  (etrt_attribute[]){OH_INT("batch_dims", 1)}, 1, (void *[]){yi}, info));
  OH_CHECK_INTS(yi, ((int[]){2, 3, 4, 5}), 4);
  CHECK_OK(oh_run("GatherND", 2, (oh_value[]){cube, OH_I64(2, (2, 3), 1, 1, 1, 0, 0, 1)}, 0, NULL,
                  1, (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].rank, 1);
  OH_CHECK_INTS(yi, ((int[]){7, 1}), 2);
  OH_CHECK_REFUSED(oh_run("GatherND", 2, (oh_value[]){cube, OH_I64(2, (1, 4), 0, 0, 0, 0)}, 0, NULL,
                          1, NULL, NULL),
                   "GatherND", "last axis");
}

static void test_scatter_one_hot(void) {
  oh_value data = OH_F32(2, (1, 5), 1, 2, 3, 4, 5);
  oh_value idx = OH_I64(2, (1, 2), 1, -4);
  oh_value upd = OH_F32(2, (1, 2), 1.5f, 2.5f);
  float y[10];
  CHECK_OK(oh_run("ScatterElements", 3, (oh_value[]){data, idx, upd}, 1,
                  (etrt_attribute[]){OH_INT("axis", 1)}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2.5, 3, 4, 5}), 5, 0);
  CHECK_OK(oh_run("ScatterElements", 3, (oh_value[]){data, OH_I64(2, (1, 2), 1, 1), upd}, 2,
                  (etrt_attribute[]){OH_INT("axis", 1), OH_STRING("reduction", "add")}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 6, 3, 4, 5}), 5, 0);
  CHECK_OK(oh_run("ScatterElements", 3, (oh_value[]){data, OH_I64(2, (1, 2), 4, 4), upd}, 2,
                  (etrt_attribute[]){OH_INT("axis", 1), OH_STRING("reduction", "min")}, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 3, 4, 1.5}), 5, 0);
  OH_CHECK_REFUSED(oh_run("ScatterElements", 3, (oh_value[]){data, idx, upd}, 1,
                          (etrt_attribute[]){OH_STRING("reduction", "avg")}, 1, NULL, NULL),
                   "ScatterElements", "reduction");
  etrt_clear_error();
  CHECK(oh_run("ScatterElements", 3, (oh_value[]){data, OH_I64(2, (1, 2), 0, 5), upd}, 1,
               (etrt_attribute[]){OH_INT("axis", 1)}, 1, (void *[]){y}, NULL) != ETRT_OK);
  CHECK_STR_CONTAINS(etrt_last_error(), "ScatterElements");
  /* OneHot: depth 4 (float, as a constant), axis 0, off/on values int32 */
  int32_t yi[16];
  oh_output info[1];
  CHECK_OK(oh_run(
      "OneHot", 3,
      (oh_value[]){OH_I64(1, (3), 0, -1, 7), OH_CONST(OH_F32(0, (0), 4.0f)), OH_I32(1, (2), -1, 5)},
      1, (etrt_attribute[]){OH_INT("axis", 0)}, 1, (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].dims[0], 4);
  CHECK_EQ_INT(info[0].dims[1], 3);
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT32);
  OH_CHECK_INTS(yi, ((int[]){5, -1, -1, -1, -1, -1, -1, -1, -1, -1, 5, -1}), 12);
  /* a depth known only at execute: the output's memory is the engine's */
  CHECK_OK(oh_run("OneHot", 3,
                  (oh_value[]){OH_I64(1, (3), 0, 1, 2), OH_I64(0, (0), 4), OH_I32(1, (2), 0, 1)}, 0,
                  NULL, 1, (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  CHECK_EQ_INT(info[0].dims[1], 4);
  OH_CHECK_INTS(yi, ((int[]){1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}), 12);
}

static void test_arg_top_k(void) {
  oh_value x = OH_F32(2, (2, 3), 2, 7, 7, 5, 1, 5);
  int64_t y[6];
  oh_output info[2];
  CHECK_OK(
      oh_run("ArgMax", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_INTS(y, ((int64_t[]){1, 0}), 2);
  CHECK_OK(oh_run(
      "ArgMax", 1, &x, 3,
      (etrt_attribute[]){OH_INT("axis", -1), OH_INT("keepdims", 0), OH_INT("select_last_index", 1)},
      1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 1);
  OH_CHECK_INTS(y, ((int64_t[]){2, 2}), 2);
  CHECK_OK(oh_run("ArgMin", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  OH_CHECK_INTS(y, ((int64_t[]){0, 1, 1}), 3);
  oh_value xi = OH_I64(1, (4), 3, -9, -9, 2);
  CHECK_OK(oh_run("ArgMin", 1, &xi, 1, (etrt_attribute[]){OH_INT("select_last_index", 1)}, 1,
                  (void *[]){y}, NULL));
  CHECK_EQ_INT(y[0], 2);
  OH_CHECK_REFUSED(oh_run("ArgMax", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 2)}, 1, NULL, NULL),
                   "ArgMax", "axis");
  /* TopK: ties keep the lower index first; smallest; along axis 0 */
  float v[6];
  CHECK_OK(oh_run("TopK", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 2))}, 0, NULL, 2,
                  (void *[]){v, y}, info));
  CHECK_EQ_INT(info[0].dims[1], 2);
  CHECK_EQ_INT(info[1].dtype, ETRT_DTYPE_INT64);
  OH_CHECK_FLOATS(v, ((double[]){7, 7, 5, 5}), 4, 0);
  OH_CHECK_INTS(y, ((int64_t[]){1, 2, 0, 2}), 4);
  CHECK_OK(oh_run("TopK", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 3))}, 1,
                  (etrt_attribute[]){OH_INT("largest", 0)}, 2, (void *[]){v, y}, NULL));
  OH_CHECK_FLOATS(v, ((double[]){2, 7, 7, 1, 5, 5}), 6, 0);
  OH_CHECK_INTS(y, ((int64_t[]){0, 1, 2, 1, 0, 2}), 6);
  CHECK_OK(oh_run("TopK", 2, (oh_value[]){x, OH_SHAPE_INPUT(OH_I64(1, (1), 1))}, 1,
                  (etrt_attribute[]){OH_INT("axis", 0)}, 2, (void *[]){v, y}, info));
  OH_CHECK_FLOATS(v, ((double[]){5, 7, 7}), 3, 0);
  OH_CHECK_INTS(y, ((int64_t[]){1, 0, 0}), 3);
  OH_CHECK_REFUSED(
      oh_run("TopK", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (1), 4))}, 0, NULL, 2, NULL, NULL),
      "TopK", "K");
}

int main(void) {
  RUN_TEST(test_gather);
  RUN_TEST(test_scatter_one_hot);
  RUN_TEST(test_arg_top_k);
  return TEST_EXIT();
}
