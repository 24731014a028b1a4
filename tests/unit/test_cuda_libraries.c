/* cuBLASLt loaded with dlopen (src/engine/ops/cuda/cuda_libraries.c): the table
 * fills from the toolkit's library, and a missing library or entry point is refused
 * naming it and what the dynamic loader said. Needs no GPU. */
#include "test_util.h"

#ifdef ETRT_HAVE_CUDA
#include "engine/ops/cuda/cuda_libraries.h"

static void test_loads_the_toolkit_library(void) {
  const etrt_cublaslt_api *lt = NULL;
  CHECK_OK(etrt_cuda_cublaslt_get(&lt));
  if (lt == NULL) return;
  CHECK(lt->create != NULL && lt->destroy != NULL && lt->matmul != NULL &&
        lt->algo_get_heuristic != NULL);
  CHECK(lt->matrix_layout_init != NULL && lt->matmul_desc_init != NULL &&
        lt->preference_init != NULL);
  CHECK(strcmp(lt->status_name(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS") == 0);
  const etrt_cublaslt_api *again = NULL;
  CHECK_OK(etrt_cuda_cublaslt_get(&again));
  CHECK(again == lt); /* loaded once */
}

static void test_missing_library_is_named(void) {
  const char *const names[] = {"libetrt-absent-cublasLt.so.99", "/nonexistent/libcublasLt.so"};
  etrt_cublaslt_api api;
  CHECK_FAILS(etrt_cuda_cublaslt_load(names, 2, &api), ETRT_ERROR_UNSUPPORTED,
              "cannot load cuBLASLt");
  CHECK_STR_CONTAINS(etrt_last_error(), "libcublasLt.so.");
  /* What dlerror said, for each file tried. */
  CHECK_STR_CONTAINS(etrt_last_error(),
                     "libetrt-absent-cublasLt.so.99: cannot open shared object file");
  CHECK_STR_CONTAINS(etrt_last_error(), "/nonexistent/libcublasLt.so");
  CHECK(api.matmul == NULL);
}

static void test_library_without_the_entry_points(void) {
  const char *const names[] = {"libm.so.6"};
  etrt_cublaslt_api api;
  CHECK_FAILS(etrt_cuda_cublaslt_load(names, 1, &api), ETRT_ERROR_UNSUPPORTED,
              "lacks cublasLtCreate");
  CHECK_STR_CONTAINS(etrt_last_error(), "undefined symbol");
  CHECK(api.create == NULL);
}

int main(void) {
  RUN_TEST(test_loads_the_toolkit_library);
  RUN_TEST(test_missing_library_is_named);
  RUN_TEST(test_library_without_the_entry_points);
  return TEST_EXIT();
}
#else
int main(void) {
  printf("skipped: built without CUDA\n");
  return 0;
}
#endif
