/* The CUDA math libraries the GPU executor uses, loaded at run time: cuBLASLt is
 * opened with dlopen on the first GPU engine context and cuDNN on the first context
 * with a convolution, each reached only through its table, so that processes which
 * never run a GPU plan (`etrt --help`, CPU work) do not map them. The CUDA runtime stays linked
 * statically (CMakeLists.txt). */
#ifndef ETRT_ENGINE_OPS_CUDA_CUDA_LIBRARIES_H
#define ETRT_ENGINE_OPS_CUDA_CUDA_LIBRARIES_H

#include <cublasLt.h>
#include <cudnn.h>

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

/* An entry point looked up by name into `slot`, a function pointer of `size` bytes. */
typedef struct etrt_library_symbol {
  const char *name;
  void *slot;
  size_t size;
} etrt_library_symbol;

/* Fills the slots of `symbols` from the open `library` (a dlopen handle), all or none:
 * where one is missing every slot is zeroed and its name returned; NULL when all were
 * found. For entry points a library may lack without being refused (cuDNN's backend
 * API). */
const char *etrt_cuda_library_optional(void *library, const etrt_library_symbol *symbols,
                                       size_t count);

/* The cuDNN entry points conv.cu calls (the legacy convolution API of cuDNN 9), and
 * conv_graph.cu (the backend API). */
typedef struct etrt_cudnn_api {
  cudnnStatus_t (*create)(cudnnHandle_t *handle);
  cudnnStatus_t (*destroy)(cudnnHandle_t handle);
  cudnnStatus_t (*set_stream)(cudnnHandle_t handle, cudaStream_t stream);
  const char *(*error_string)(cudnnStatus_t status);
  cudnnStatus_t (*create_tensor)(cudnnTensorDescriptor_t *desc);
  cudnnStatus_t (*set_tensor)(cudnnTensorDescriptor_t desc, cudnnDataType_t type, int rank,
                              const int dims[], const int strides[]);
  cudnnStatus_t (*destroy_tensor)(cudnnTensorDescriptor_t desc);
  cudnnStatus_t (*create_filter)(cudnnFilterDescriptor_t *desc);
  cudnnStatus_t (*set_filter)(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                              cudnnTensorFormat_t format, int rank, const int dims[]);
  cudnnStatus_t (*destroy_filter)(cudnnFilterDescriptor_t desc);
  cudnnStatus_t (*create_conv)(cudnnConvolutionDescriptor_t *desc);
  cudnnStatus_t (*set_conv)(cudnnConvolutionDescriptor_t desc, int spatial, const int pads[],
                            const int strides[], const int dilations[], cudnnConvolutionMode_t mode,
                            cudnnDataType_t compute);
  cudnnStatus_t (*set_conv_groups)(cudnnConvolutionDescriptor_t desc, int groups);
  cudnnStatus_t (*set_conv_math)(cudnnConvolutionDescriptor_t desc, cudnnMathType_t math);
  cudnnStatus_t (*destroy_conv)(cudnnConvolutionDescriptor_t desc);
  cudnnStatus_t (*create_activation)(cudnnActivationDescriptor_t *desc);
  cudnnStatus_t (*set_activation)(cudnnActivationDescriptor_t desc, cudnnActivationMode_t mode,
                                  cudnnNanPropagation_t nan, double coef);
  cudnnStatus_t (*destroy_activation)(cudnnActivationDescriptor_t desc);
  cudnnStatus_t (*find_forward)(cudnnHandle_t handle, cudnnTensorDescriptor_t x,
                                cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                                cudnnTensorDescriptor_t y, int requested, int *returned,
                                cudnnConvolutionFwdAlgoPerf_t *results);
  /* cuDNN's heuristic ranking, untimed: the same results as find_forward's, without
   * their times */
  cudnnStatus_t (*heuristic_forward)(cudnnHandle_t handle, cudnnTensorDescriptor_t x,
                                     cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                                     cudnnTensorDescriptor_t y, int requested, int *returned,
                                     cudnnConvolutionFwdAlgoPerf_t *results);
  cudnnStatus_t (*forward_workspace)(cudnnHandle_t handle, cudnnTensorDescriptor_t x,
                                     cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                                     cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
                                     size_t *bytes);
  cudnnStatus_t (*bias_activation_forward)(
      cudnnHandle_t handle, const void *alpha1, cudnnTensorDescriptor_t x_desc, const void *x,
      cudnnFilterDescriptor_t w_desc, const void *w, cudnnConvolutionDescriptor_t conv,
      cudnnConvolutionFwdAlgo_t algo, void *workspace, size_t workspace_size, const void *alpha2,
      cudnnTensorDescriptor_t z_desc, const void *z, cudnnTensorDescriptor_t bias_desc,
      const void *bias, cudnnActivationDescriptor_t activation, cudnnTensorDescriptor_t y_desc,
      void *y);
  cudnnStatus_t (*convolution_forward)(cudnnHandle_t handle, const void *alpha,
                                       cudnnTensorDescriptor_t x_desc, const void *x,
                                       cudnnFilterDescriptor_t w_desc, const void *w,
                                       cudnnConvolutionDescriptor_t conv,
                                       cudnnConvolutionFwdAlgo_t algo, void *workspace,
                                       size_t workspace_size, const void *beta,
                                       cudnnTensorDescriptor_t y_desc, void *y);
  /* The loaded library's version (major * 10000 + minor * 100 + patch in cuDNN 9): a
   * plan's recorded convolution choices are used only under the same major version. */
  size_t (*get_version)(void);
  /* The backend (graph) API that conv_graph.cu builds fused convolutions with. All NULL
   * where the loaded cuDNN lacks any of them: the graph path is then off, the rest of
   * the table serves as before. */
  cudnnStatus_t (*backend_create)(cudnnBackendDescriptorType_t type,
                                  cudnnBackendDescriptor_t *desc);
  cudnnStatus_t (*backend_destroy)(cudnnBackendDescriptor_t desc);
  cudnnStatus_t (*backend_set)(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                               cudnnBackendAttributeType_t type, int64_t count, const void *values);
  cudnnStatus_t (*backend_get)(cudnnBackendDescriptor_t const desc,
                               cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                               int64_t requested, int64_t *count, void *values);
  cudnnStatus_t (*backend_finalize)(cudnnBackendDescriptor_t desc);
  cudnnStatus_t (*backend_execute)(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                   cudnnBackendDescriptor_t variant_pack);
} etrt_cudnn_api;

/* The cuDNN table, loading the library the first time, as etrt_cuda_cublaslt_get. */
etrt_status etrt_cuda_cudnn_get(const etrt_cudnn_api **out);

/* The loaded cuDNN's cudnnGetVersion, loading it; 0 (the error cleared) where it does
 * not load. */
uint32_t etrt_cuda_cudnn_version(void);

#ifdef __cplusplus
}
#endif

#endif
