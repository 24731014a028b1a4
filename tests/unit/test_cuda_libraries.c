/* cuBLASLt loaded with dlopen (src/engine/ops/cuda/cuda_libraries.c): the table
 * fills from the toolkit's library, and a missing library or entry point is refused
 * naming it and what the dynamic loader said; optional entry points (cuDNN's backend
 * API) come all or none. Needs no GPU. */
#include "test_util.h"

#ifdef ETRT_HAVE_CUDA
#include <dlfcn.h>

#include "base/status.h"
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

/* Optional entry points come all or none: one missing zeroes every slot and is named. */
static void test_optional_entry_points(void) {
  void *library = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  CHECK(library != NULL);
  if (library == NULL) return;
  double (*cosine)(double) = NULL, (*sine)(double) = NULL, (*absent)(double) = NULL;
  const etrt_library_symbol present[] = {{"cos", &cosine, sizeof cosine},
                                         {"sin", &sine, sizeof sine}};
  CHECK(etrt_cuda_library_optional(library, present, 2) == NULL);
  CHECK(cosine != NULL && sine != NULL);
  if (cosine != NULL) CHECK(cosine(0.0) == 1.0);
  const etrt_library_symbol partial[] = {{"cos", &cosine, sizeof cosine},
                                         {"etrt_absent_entry_point", &absent, sizeof absent},
                                         {"sin", &sine, sizeof sine}};
  const char *missing = etrt_cuda_library_optional(library, partial, 3);
  CHECK(missing != NULL && strcmp(missing, "etrt_absent_entry_point") == 0);
  CHECK(cosine == NULL && absent == NULL && sine == NULL);
  dlclose(library);
}

/* Where cuDNN 9 loads, its table has the backend (graph) API that conv_graph.cu uses. */
static void test_cudnn_backend_entry_points(void) {
  const etrt_cudnn_api *dnn = NULL;
  if (etrt_cuda_cudnn_get(&dnn) != ETRT_OK) {
    printf("  cuDNN does not load here: %s\n", etrt_last_error());
    etrt_clear_error();
    return;
  }
  CHECK(dnn->backend_create != NULL && dnn->backend_destroy != NULL && dnn->backend_set != NULL &&
        dnn->backend_get != NULL && dnn->backend_finalize != NULL && dnn->backend_execute != NULL);
}

int main(void) {
  RUN_TEST(test_loads_the_toolkit_library);
  RUN_TEST(test_optional_entry_points);
  RUN_TEST(test_cudnn_backend_entry_points);
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
