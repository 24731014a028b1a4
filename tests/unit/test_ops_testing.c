/* The test-only operation EtrtSmId on the CPU executor: every "SM id" is 0, the
 * output has `blocks` int32 elements, and bad attributes or arity are refused. */
#include "engine/op.h"
#include "op_harness.h"

static const float kX[4] = {1, 2, 3, 4};

static void test_sm_id_cpu(void) {
  oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {4}, .data = kX};
  int32_t ids[300];
  for (int i = 0; i < 300; ++i) ids[i] = -7;
  oh_output info[1];
  CHECK_OK(oh_run("EtrtSmId", 1, &x, 1, (etrt_attribute[]){OH_INT("blocks", 300)}, 1,
                  (void *[]){ids}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT32);
  CHECK_EQ_INT(info[0].rank, 1);
  CHECK_EQ_INT(info[0].dims[0], 300);
  int zeros = 0;
  for (int i = 0; i < 300; ++i) zeros += ids[i] == 0;
  CHECK_EQ_INT(zeros, 300);
}

static void test_sm_id_refusals(void) {
  oh_value x = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {4}, .data = kX};
  OH_CHECK_REFUSED(oh_run("EtrtSmId", 1, &x, 0, NULL, 1, NULL, NULL), "EtrtSmId", "'blocks'");
  OH_CHECK_REFUSED(
      oh_run("EtrtSmId", 1, &x, 1, (etrt_attribute[]){OH_INT("blocks", -1)}, 1, NULL, NULL),
      "EtrtSmId", "must be in");
  OH_CHECK_REFUSED(
      oh_run("EtrtSmId", 1, &x, 1, (etrt_attribute[]){OH_INT("blocks", ((int64_t)1 << 20) + 1)}, 1,
             NULL, NULL),
      "EtrtSmId", "must be in");
  OH_CHECK_REFUSED(
      oh_run("EtrtSmId", 0, NULL, 1, (etrt_attribute[]){OH_INT("blocks", 4)}, 1, NULL, NULL),
      "EtrtSmId", "takes 1 input");
  oh_value none = OH_NONE;
  OH_CHECK_REFUSED(
      oh_run("EtrtSmId", 1, &none, 1, (etrt_attribute[]){OH_INT("blocks", 4)}, 1, NULL, NULL),
      "EtrtSmId", "input 0 is required");
}

/* Without CUDA compiled in the CUDA table is empty; with it, the table knows the
 * operations the GPU tests exercise. The definitions' CUDA predicates exist in
 * every build. */
static void test_cuda_table(void) {
  const char *ops[] = {"MatMul",    "Gemm",    "Conv",       "Add",
                       "Relu",      "Softmax", "ReduceMean", "LayerNormalization",
                       "Transpose", "Gather",  "EtrtSmId",   "Exp"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
    const etrt_op_def *def = etrt_op_find(ops[i]);
    CHECK(def != NULL && def->cuda_supports != NULL);
#ifdef ETRT_HAVE_CUDA
    const etrt_op_cuda_row *row = etrt_op_cuda_find(ops[i]);
    CHECK(row != NULL && row->run != NULL);
#endif
  }
#ifdef ETRT_HAVE_CUDA
  const etrt_op_cuda_row *conv = etrt_op_cuda_find("Conv");
  CHECK(conv != NULL && conv->workspace != NULL);
  CHECK(etrt_op_cuda_find("NoSuchOp") == NULL);
#else
  size_t count = 1;
  etrt_op_cuda_all(&count);
  CHECK_EQ_INT(count, 0);
  CHECK(etrt_op_cuda_find("MatMul") == NULL);
#endif
}

int main(void) {
  RUN_TEST(test_sm_id_cpu);
  RUN_TEST(test_sm_id_refusals);
  RUN_TEST(test_cuda_table);
  return TEST_EXIT();
}
