/* MatMul, Gemm and EtrtMatMulBias on the GPU, through cuBLASLt. */
#include "engine/ops/cuda/gemm.h"

extern "C" {
#include "engine/ops/matmul.h"
}

/* Batch axes [from, rank) of one operand as a single strided batch: every stride 0
 * (broadcast) or the operand's matrices packed in output order. */
static int etrt_matmul_batch_run(const int64_t *strides, const int64_t *dims, int32_t from,
                                 int32_t rank, int64_t matrix, int64_t *stride) {
  int zero = 1, packed = 1;
  int64_t expect = matrix;
  for (int32_t d = rank - 1; d >= from; --d) {
    if (dims[d] == 1) continue;
    if (strides[d] != 0) zero = 0;
    if (strides[d] != expect) packed = 0;
    expect *= dims[d];
  }
  *stride = zero ? 0 : matrix;
  return zero || packed;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_matmul) {
  const etrt_tensor *a = &inputs[0], *b = &inputs[1];
  etrt_tensor *y = &outputs[0];
  etrt_matmul_shape shape;
  ETRT_RETURN_IF_ERROR(etrt_matmul_shape_init(node, a, b, &shape));
  int64_t m = shape.m, n = shape.n, k = shape.k;
  int32_t rank = shape.batch_rank;
  const int64_t *od = shape.batch_dims, *sa = shape.a_batch_strides, *sb = shape.b_batch_strides;

  /* The longest run of trailing batch axes that is one strided batch for both
   * operands goes to cuBLASLt in one call; leading axes (rare mixed broadcasts such
   * as [2,1,m,k] x [3,k,n]) loop here. */
  int32_t split = rank;
  for (;;) {
    int64_t ta, tb;
    if (split == 0 || !etrt_matmul_batch_run(sa, od, split - 1, rank, m * k, &ta) ||
        !etrt_matmul_batch_run(sb, od, split - 1, rank, k * n, &tb)) {
      break;
    }
    --split;
  }
  int64_t stride_a = 0, stride_b = 0;
  etrt_matmul_batch_run(sa, od, split, rank, m * k, &stride_a);
  etrt_matmul_batch_run(sb, od, split, rank, k * n, &stride_b);
  int64_t inner = 1, outer = 1;
  for (int32_t d = split; d < rank; ++d) inner *= od[d];
  for (int32_t d = 0; d < split; ++d) outer *= od[d];

  etrt_cuda_gemm_args g = {};
  g.dtype = a->dtype;
  g.trans_a = g.trans_b = 0;
  g.m = m, g.n = n, g.k = k, g.batch = inner;
  g.lda = k, g.ldb = n, g.ldy = n;
  g.stride_a = stride_a, g.stride_b = stride_b, g.stride_y = m * n;
  g.alpha = 1.0f, g.beta = 0.0f;
  if (inner > 1 && stride_b == 0 && stride_a == m * k) {
    /* One right-hand matrix for packed left-hand ones ([batch, s, h] x [h, o], the
     * linear layer): a single tall product is much faster than a batch. */
    g.m = m * inner;
    g.batch = 1;
  }
  size_t elem = etrt_dtype_size(a->dtype);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off_a = 0, off_b = 0, rest = o;
    for (int32_t d = split - 1; d >= 0; --d) {
      int64_t c = rest % od[d];
      rest /= od[d];
      off_a += c * sa[d];
      off_b += c * sb[d];
    }
    g.a = (const char *)a->data + off_a * elem;
    g.b = (const char *)b->data + off_b * elem;
    g.y = (char *)y->data + o * inner * m * n * elem;
    ETRT_RETURN_IF_ERROR(
        etrt_cuda_gemm_run(node, &g, launch, launch->workspace, launch->workspace_size));
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_gemm) {
  const etrt_gemm_state *state = (const etrt_gemm_state *)node->state;
  const etrt_tensor *a = &inputs[0], *b = &inputs[1];
  const etrt_tensor *c = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL;
  etrt_tensor *y = &outputs[0];
  etrt_cuda_gemm_args g = {};
  ETRT_RETURN_IF_ERROR(etrt_gemm_shape(node, inputs, &g.m, &g.n, &g.k));
  g.dtype = a->dtype;
  g.trans_a = state->trans_a != 0;
  g.trans_b = state->trans_b != 0;
  g.alpha = state->alpha;
  g.beta = state->beta;
  g.batch = 1;
  g.lda = a->dims[1], g.ldb = b->dims[1], g.ldy = g.n;
  g.stride_a = g.stride_b = g.stride_y = 0;
  g.a = a->data, g.b = b->data, g.y = y->data;
  if (c != NULL && g.beta != 0.0f) {
    ETRT_RETURN_IF_ERROR(etrt_cuda_broadcast_copy(node, c, y, etrt_cuda_stream(launch)));
  } else {
    g.beta = 0.0f;
  }
  return etrt_cuda_gemm_run(node, &g, launch, launch->workspace, launch->workspace_size);
}

/* EtrtMatMulBias: A's rows against one B, as one tall product, the bias in the epilogue
 * (or, for a bias cuBLASLt cannot take, copied into Y first and added with beta = 1). */
extern "C" ETRT_CUDA_RUN(etrt_cuda_matmul_bias) {
  const etrt_tensor *a = &inputs[0], *b = &inputs[1], *bias = &inputs[2];
  etrt_tensor *y = &outputs[0];
  etrt_cuda_gemm_args g = {};
  g.dtype = a->dtype;
  g.k = a->dims[a->rank - 1];
  g.n = b->dims[1];
  g.m = g.k > 0 ? etrt_tensor_numel(a) / g.k : etrt_tensor_numel(y) / (g.n > 0 ? g.n : 1);
  g.batch = 1;
  g.lda = g.k, g.ldb = g.n, g.ldy = g.n;
  g.a = a->data, g.b = b->data, g.y = y->data;
  g.alpha = 1.0f;
  g.activation = etrt_matmul_bias_activation(node);
  if (g.m == 0 || g.n == 0) return ETRT_OK;
  if (g.k > 0 && (uintptr_t)bias->data % 16 == 0) {
    g.bias = bias->data;
  } else {
    etrt_tensor row = *bias;
    ETRT_RETURN_IF_ERROR(etrt_cuda_broadcast_copy(node, &row, y, etrt_cuda_stream(launch)));
    g.beta = 1.0f;
  }
  return etrt_cuda_gemm_run(node, &g, launch, launch->workspace, launch->workspace_size);
}

extern "C" size_t etrt_cuda_matmul_workspace(const etrt_node *node, const etrt_tensor *inputs,
                                             const etrt_tensor *outputs) {
  return ETRT_CUDA_GEMM_WORKSPACE;
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_matmul[] = {
    {"MatMul", etrt_cuda_matmul, etrt_cuda_matmul_workspace},
    {"Gemm", etrt_cuda_gemm, etrt_cuda_matmul_workspace},
    {"EtrtMatMulBias", etrt_cuda_matmul_bias, etrt_cuda_matmul_workspace},
    {NULL, NULL, NULL},
};
