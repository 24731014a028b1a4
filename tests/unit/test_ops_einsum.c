/* Einsum on the CPU: values worked by hand (products, sums, diagonals, an
 * ellipsis, the implicit output) and every refusal. */
#include "op_harness.h"

#define EQ(e) \
  (etrt_attribute[]) { OH_STRING("equation", e) }

static void test_einsum(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value a = OH_F32(2, (2, 3), 1, 2, 3, 4, 5, 6);
  const oh_value b = OH_F32(2, (3, 2), 1, 0, 0, 1, 1, 1);
  CHECK_OK(oh_run("Einsum", 2, (oh_value[]){a, b}, 1, EQ("ij,jk->ik"), 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){4, 5, 10, 11}), 4, 0);
  /* implicit output: the letters used once, sorted: i, k */
  CHECK_OK(oh_run("Einsum", 2, (oh_value[]){a, b}, 1, EQ("ij,jk"), 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){4, 5, 10, 11}), 4, 0);
  CHECK_OK(oh_run("Einsum", 1, (oh_value[]){a}, 1, EQ("ij->ji"), 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  OH_CHECK_FLOATS(y, ((double[]){1, 4, 2, 5, 3, 6}), 6, 0);
  CHECK_OK(oh_run("Einsum", 1, (oh_value[]){a}, 1, EQ("ij->"), 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 0);
  OH_CHECK_FLOATS(y, ((double[]){21}), 1, 0);
  const oh_value sq = OH_F32(2, (2, 2), 1, 2, 3, 4);
  CHECK_OK(oh_run("Einsum", 1, (oh_value[]){sq}, 1, EQ("ii"), 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){5}), 1, 0);
  CHECK_OK(oh_run("Einsum", 1, (oh_value[]){sq}, 1, EQ("ii->i"), 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){1, 4}), 2, 0);
  /* the ellipsis broadcasts a size-1 dim: x [2, 1, 3] against y [4, 3] -> [2, 4] */
  CHECK_OK(oh_run("Einsum", 2,
                  (oh_value[]){OH_F32(3, (2, 1, 3), 1, 2, 3, 4, 5, 6),
                               OH_F32(2, (4, 3), 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1)},
                  1, EQ("...j,...j->..."), 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(info[0].dims[1], 4);
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 3, 6, 4, 5, 6, 15}), 8, 0);
}

static void test_refusals(void) {
  const oh_value a = OH_F32(2, (2, 3), 1, 2, 3, 4, 5, 6);
  OH_CHECK_REFUSED(oh_run("Einsum", 1, (oh_value[]){a}, 0, NULL, 1, NULL, NULL), "Einsum",
                   "equation");
  OH_CHECK_REFUSED(oh_run("Einsum", 1, (oh_value[]){a}, 1, EQ("i1->i"), 1, NULL, NULL), "Einsum",
                   "not a letter");
  OH_CHECK_REFUSED(oh_run("Einsum", 1, (oh_value[]){a}, 1, EQ("ijk->i"), 1, NULL, NULL), "Einsum",
                   "rank");
  OH_CHECK_REFUSED(oh_run("Einsum", 1, (oh_value[]){a}, 1, EQ("ij,jk->ik"), 1, NULL, NULL),
                   "Einsum", "term");
  OH_CHECK_REFUSED(oh_run("Einsum", 2, (oh_value[]){a, a}, 1, EQ("ij,jk->ik"), 1, NULL, NULL),
                   "Einsum", "size");
  OH_CHECK_REFUSED(oh_run("Einsum", 1, (oh_value[]){a}, 1, EQ("ij->k"), 1, NULL, NULL), "Einsum",
                   "names no input");
  OH_CHECK_REFUSED(
      oh_run("Einsum", 5, (oh_value[]){a, a, a, a, a}, 1, EQ("ij,ij,ij,ij,ij->ij"), 1, NULL, NULL),
      "Einsum", "at most");
  OH_CHECK_REFUSED(
      oh_run("Einsum", 1, (oh_value[]){OH_I64(1, (2), 1, 2)}, 1, EQ("i->i"), 1, NULL, NULL),
      "Einsum", "input");
}

int main(void) {
  RUN_TEST(test_einsum);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
