/* Matrix products through cuBLASLt (see gemm.h). cuBLASLt is column-major: a
 * row-major Y = op(A) op(B) is computed as the column-major Y^T = op(B)^T op(A)^T,
 * which reads the same bytes without moving them. Descriptors live on the stack
 * (the *Init forms), so a launch allocates nothing. cuBLASLt is reached through the
 * table of cuda_libraries.h (loaded with the first handle), never linked. */
#include "engine/ops/cuda/cuda_libraries.h"
#include "engine/ops/cuda/gemm.h"

static cudaDataType_t etrt_gemm_data_type(etrt_dtype dtype) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT16:
      return CUDA_R_16F;
    case ETRT_DTYPE_BFLOAT16:
      return CUDA_R_16BF;
    case ETRT_DTYPE_INT8:
      return CUDA_R_8I;
    default:
      return CUDA_R_32F;
  }
}

/* float32 data computes as the plan's precision allows (TF32, or down-conversion to
 * half types on tensor cores); half-type data always accumulates in float. */
static cublasComputeType_t etrt_gemm_compute_type(etrt_dtype dtype, etrt_precision precision) {
  if (dtype == ETRT_DTYPE_INT8) return CUBLAS_COMPUTE_32I;
  if (dtype != ETRT_DTYPE_FLOAT32) return CUBLAS_COMPUTE_32F;
  switch (precision) {
    case ETRT_PRECISION_TF32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case ETRT_PRECISION_FP16:
      return CUBLAS_COMPUTE_32F_FAST_16F;
    case ETRT_PRECISION_BF16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    default:
      return CUBLAS_COMPUTE_32F;
  }
}

/* Largest power of two (up to 256) that divides the address and every batch step. */
static uint32_t etrt_gemm_alignment(const void *ptr, int64_t stride, size_t elem, int64_t batch) {
  uint64_t bits = (uint64_t)(uintptr_t)ptr | 256u;
  if (batch > 1 && stride != 0) bits |= (uint64_t)stride * elem;
  return (uint32_t)(bits & (~bits + 1));
}

static etrt_status etrt_gemm_failed(const etrt_cublaslt_api *lt, const etrt_node *node,
                                    const char *call, cublasStatus_t st) {
  return etrt_error(ETRT_ERROR_DEVICE, "%s node '%s': %s failed: %s (%d)", node->op_type,
                    etrt_cuda_name(node), call, lt->status_name(st), (int)st);
}

#define ETRT_LT_TRY(node, name, call)                                               \
  do {                                                                              \
    cublasStatus_t st_ = (call);                                                    \
    if (st_ != CUBLAS_STATUS_SUCCESS) return etrt_gemm_failed(lt, node, name, st_); \
  } while (0)

static etrt_status etrt_gemm_layout(const etrt_cublaslt_api *lt, const etrt_node *node,
                                    cublasLtMatrixLayoutOpaque_t *layout, cudaDataType_t type,
                                    int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                                    int64_t stride) {
  ETRT_LT_TRY(
      node, "cublasLtMatrixLayoutInit",
      lt->matrix_layout_init(layout, sizeof *layout, type, (uint64_t)rows, (uint64_t)cols, ld));
  if (batch > 1) {
    int32_t count = (int32_t)batch;
    ETRT_LT_TRY(node, "cublasLtMatrixLayoutSetAttribute",
                lt->matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                sizeof count));
    ETRT_LT_TRY(node, "cublasLtMatrixLayoutSetAttribute",
                lt->matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                &stride, sizeof stride));
  }
  return ETRT_OK;
}

static etrt_status etrt_gemm_try(const etrt_cublaslt_api *lt, const etrt_node *node,
                                 const etrt_cuda_gemm_args *g, cublasComputeType_t compute,
                                 const etrt_cuda_launch *launch, void *workspace,
                                 size_t workspace_size, int *no_algorithm) {
  cublasLtHandle_t handle = (cublasLtHandle_t)launch->cublaslt;
  cudaDataType_t type = etrt_gemm_data_type(g->dtype);
  size_t elem = etrt_dtype_size(g->dtype);
  /* Integer products: int8 operands, int32 sums and scale factors. */
  int integer = g->dtype == ETRT_DTYPE_INT8;
  cudaDataType_t y_type = integer ? CUDA_R_32I : type;
  size_t y_elem = integer ? sizeof(int32_t) : elem;
  *no_algorithm = 0;

  cublasLtMatmulDescOpaque_t desc;
  ETRT_LT_TRY(node, "cublasLtMatmulDescInit",
              lt->matmul_desc_init(&desc, sizeof desc, compute, integer ? CUDA_R_32I : CUDA_R_32F));
  /* cuBLASLt's A is our B and its B is our A (see the file comment). */
  cublasOperation_t op_a = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_b = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  ETRT_LT_TRY(
      node, "cublasLtMatmulDescSetAttribute",
      lt->matmul_desc_set_attribute(&desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
  ETRT_LT_TRY(
      node, "cublasLtMatmulDescSetAttribute",
      lt->matmul_desc_set_attribute(&desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
  /* The activation applies to the whole sum (alpha A.B + beta C + bias); cuBLASLt's
   * GELU is the tanh form, which is what ETRT_MATMUL_ACTIVATION_GELU_TANH means. */
  static const cublasLtEpilogue_t epilogues[3][2] = {
      {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS},
      {CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS},
      {CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS}};
  cublasLtEpilogue_t epilogue = epilogues[g->activation][g->bias != NULL];
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    ETRT_LT_TRY(node, "cublasLtMatmulDescSetAttribute",
                lt->matmul_desc_set_attribute(&desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof epilogue));
  if (g->bias != NULL) /* Column-major D^T has our n rows: the bias vector runs along them. */
    ETRT_LT_TRY(node, "cublasLtMatmulDescSetAttribute",
                lt->matmul_desc_set_attribute(&desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g->bias,
                                              sizeof g->bias));

  /* Row-major [r][c] with leading dimension ld is column-major c x r. */
  int64_t b_rows = g->trans_b ? g->n : g->k, b_cols = g->trans_b ? g->k : g->n;
  int64_t a_rows = g->trans_a ? g->k : g->m, a_cols = g->trans_a ? g->m : g->k;
  cublasLtMatrixLayoutOpaque_t lt_a, lt_b, lt_d;
  ETRT_RETURN_IF_ERROR(
      etrt_gemm_layout(lt, node, &lt_a, type, b_cols, b_rows, g->ldb, g->batch, g->stride_b));
  ETRT_RETURN_IF_ERROR(
      etrt_gemm_layout(lt, node, &lt_b, type, a_cols, a_rows, g->lda, g->batch, g->stride_a));
  ETRT_RETURN_IF_ERROR(
      etrt_gemm_layout(lt, node, &lt_d, y_type, g->n, g->m, g->ldy, g->batch, g->stride_y));

  cublasLtMatmulPreferenceOpaque_t pref;
  ETRT_LT_TRY(node, "cublasLtMatmulPreferenceInit", lt->preference_init(&pref, sizeof pref));
  uint64_t ws = workspace_size;
  ETRT_LT_TRY(node, "cublasLtMatmulPreferenceSetAttribute",
              lt->preference_set_attribute(&pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                           sizeof ws));
  uint32_t align_a = etrt_gemm_alignment(g->b, g->stride_b, elem, g->batch);
  uint32_t align_b = etrt_gemm_alignment(g->a, g->stride_a, elem, g->batch);
  uint32_t align_d = etrt_gemm_alignment(g->y, g->stride_y, y_elem, g->batch);
  const void *c = g->c != NULL ? g->c : g->y;
  uint32_t align_c = etrt_gemm_alignment(c, g->stride_y, y_elem, g->batch);
  ETRT_LT_TRY(node, "cublasLtMatmulPreferenceSetAttribute",
              lt->preference_set_attribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                           &align_a, sizeof align_a));
  ETRT_LT_TRY(node, "cublasLtMatmulPreferenceSetAttribute",
              lt->preference_set_attribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                           &align_b, sizeof align_b));
  ETRT_LT_TRY(node, "cublasLtMatmulPreferenceSetAttribute",
              lt->preference_set_attribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                           &align_c, sizeof align_c));
  ETRT_LT_TRY(node, "cublasLtMatmulPreferenceSetAttribute",
              lt->preference_set_attribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                           &align_d, sizeof align_d));

  /* cuBLASLt caches heuristic answers, so asking on every launch costs little. */
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  cublasStatus_t st =
      lt->algo_get_heuristic(handle, &desc, &lt_a, &lt_b, &lt_d, &lt_d, &pref, 1, &result, &found);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0)) {
    *no_algorithm = 1;
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s node '%s': cuBLASLt has no algorithm for %lld x %lld x %lld (%s)",
                      node->op_type, etrt_cuda_name(node), (long long)g->m, (long long)g->n,
                      (long long)g->k, etrt_dtype_name(g->dtype));
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    return etrt_gemm_failed(lt, node, "cublasLtMatmulAlgoGetHeuristic", st);

  float alpha = g->alpha, beta = g->beta;
  int32_t alpha_i = (int32_t)g->alpha, beta_i = (int32_t)g->beta;
  ETRT_LT_TRY(
      node, "cublasLtMatmul",
      lt->matmul(handle, &desc, integer ? (const void *)&alpha_i : (const void *)&alpha, g->b,
                 &lt_a, g->a, &lt_b, integer ? (const void *)&beta_i : (const void *)&beta, c,
                 &lt_d, g->y, &lt_d, &result.algo, workspace, result.workspaceSize,
                 etrt_cuda_stream(launch)));
  return ETRT_OK;
}

etrt_status etrt_cuda_gemm_run(const etrt_node *node, const etrt_cuda_gemm_args *gemm,
                               const etrt_cuda_launch *launch, void *workspace,
                               size_t workspace_size) {
  if (gemm->m == 0 || gemm->n == 0 || gemm->batch == 0) return ETRT_OK;
  if (gemm->batch > INT32_MAX) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s node '%s': batch of %lld matrices", node->op_type,
                      etrt_cuda_name(node), (long long)gemm->batch);
  }
  if (launch->cublaslt == NULL) {
    return etrt_error(ETRT_ERROR_INTERNAL, "%s: no cuBLASLt handle in the launch", node->op_type);
  }
  if (gemm->k == 0 && gemm->bias != NULL) {
    return etrt_error(ETRT_ERROR_INTERNAL, "%s: k = 0 with a bias epilogue", node->op_type);
  }
  if (gemm->k == 0 && gemm->c != NULL && gemm->c != gemm->y) {
    return etrt_error(ETRT_ERROR_INTERNAL, "%s: k = 0 with a separate C", node->op_type);
  }
  if (gemm->k == 0) {
    /* An empty sum: cuBLASLt refuses k = 0, and Y = beta * Y is what remains. */
    if (gemm->beta == 1.0f) return ETRT_OK;
    if (gemm->beta != 0.0f) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: k = 0 with a scaled bias", node->op_type);
    }
    cudaStream_t stream = etrt_cuda_stream(launch);
    size_t elem = gemm->dtype == ETRT_DTYPE_INT8 ? sizeof(int32_t) : etrt_dtype_size(gemm->dtype);
    for (int64_t b = 0; b < gemm->batch; ++b) {
      cudaError_t err =
          cudaMemset2DAsync((char *)gemm->y + b * gemm->stride_y * elem, (size_t)gemm->ldy * elem,
                            0, (size_t)gemm->n * elem, (size_t)gemm->m, stream);
      if (err != cudaSuccess) return etrt_cuda_check(node, "memset");
    }
    return ETRT_OK;
  }
  const etrt_cublaslt_api *lt = NULL;
  ETRT_RETURN_IF_ERROR(etrt_cuda_cublaslt_get(&lt));
  cublasComputeType_t compute = etrt_gemm_compute_type(gemm->dtype, launch->precision);
  int no_algorithm = 0;
  etrt_status st =
      etrt_gemm_try(lt, node, gemm, compute, launch, workspace, workspace_size, &no_algorithm);
  if (st != ETRT_OK && no_algorithm && compute != CUBLAS_COMPUTE_32F) {
    /* A reduced-precision mode is permission, not a requirement. */
    st = etrt_gemm_try(lt, node, gemm, CUBLAS_COMPUTE_32F, launch, workspace, workspace_size,
                       &no_algorithm);
  }
  return st;
}

/* The first handle of the process loads cuBLASLt (cuda_libraries.c). */
extern "C" etrt_status etrt_cuda_blas_create(void **handle) {
  const etrt_cublaslt_api *lt = NULL;
  ETRT_RETURN_IF_ERROR(etrt_cuda_cublaslt_get(&lt));
  cublasLtHandle_t h = NULL;
  cublasStatus_t st = lt->create(&h);
  if (st != CUBLAS_STATUS_SUCCESS) {
    return etrt_error(ETRT_ERROR_DEVICE, "cublasLtCreate failed: %s (%d)", lt->status_name(st),
                      (int)st);
  }
  *handle = h;
  return ETRT_OK;
}

extern "C" void etrt_cuda_blas_destroy(void *handle) {
  const etrt_cublaslt_api *lt = NULL;
  /* A handle exists only where the library loaded. */
  if (handle != NULL && etrt_cuda_cublaslt_get(&lt) == ETRT_OK)
    lt->destroy((cublasLtHandle_t)handle);
}
