/* The CUDA math libraries the GPU executor uses, loaded at run time: cuBLASLt is
 * opened with dlopen on the first GPU engine context and reached only through this
 * table, so that processes which never run a GPU plan (`etrt --help`, CPU work) do
 * not map it. The CUDA runtime stays linked statically (CMakeLists.txt). */
#ifndef ETRT_ENGINE_OPS_CUDA_CUDA_LIBRARIES_H
#define ETRT_ENGINE_OPS_CUDA_CUDA_LIBRARIES_H

#include <cublasLt.h>

#include "etrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cuBLASLt entry points gemm.cu calls. The *_init members are the _internal
 * functions behind the header's inline cublasLt*Init wrappers (they take the size of
 * the opaque structure). */
typedef struct etrt_cublaslt_api {
  cublasStatus_t (*create)(cublasLtHandle_t *handle);
  cublasStatus_t (*destroy)(cublasLtHandle_t handle);
  const char *(*status_name)(cublasStatus_t status);
  cublasStatus_t (*matmul_desc_init)(cublasLtMatmulDesc_t desc, size_t size,
                                     cublasComputeType_t compute, cudaDataType_t scale);
  cublasStatus_t (*matmul_desc_set_attribute)(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t size);
  cublasStatus_t (*matrix_layout_init)(cublasLtMatrixLayout_t layout, size_t size,
                                       cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld);
  cublasStatus_t (*matrix_layout_set_attribute)(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size);
  cublasStatus_t (*preference_init)(cublasLtMatmulPreference_t pref, size_t size);
  cublasStatus_t (*preference_set_attribute)(cublasLtMatmulPreference_t pref,
                                             cublasLtMatmulPreferenceAttributes_t attr,
                                             const void *buf, size_t size);
  cublasStatus_t (*algo_get_heuristic)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                       cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                       cublasLtMatmulPreference_t pref, int requested,
                                       cublasLtMatmulHeuristicResult_t results[], int *found);
  cublasStatus_t (*matmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha,
                           const void *a, cublasLtMatrixLayout_t a_desc, const void *b,
                           cublasLtMatrixLayout_t b_desc, const void *beta, const void *c,
                           cublasLtMatrixLayout_t c_desc, void *d, cublasLtMatrixLayout_t d_desc,
                           const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspace_size,
                           cudaStream_t stream);
} etrt_cublaslt_api;

/* The cuBLASLt table, loading the library the first time (once per process; safe
 * from any thread). A missing library or entry point fails with
 * ETRT_ERROR_UNSUPPORTED naming it and what the dynamic loader said, on this and
 * every later call. */
etrt_status etrt_cuda_cublaslt_get(const etrt_cublaslt_api **out);

/* Loads the table from the first of `names` that opens (each a file name for dlopen
 * or a path), without caching; the loaded library stays open. For tests of the
 * refusal; everything else calls etrt_cuda_cublaslt_get. */
etrt_status etrt_cuda_cublaslt_load(const char *const *names, size_t count, etrt_cublaslt_api *out);

#ifdef __cplusplus
}
#endif

#endif
