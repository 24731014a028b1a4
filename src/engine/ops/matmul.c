/* Definitions of MatMul (NumPy matmul: batch broadcasting, 1-D operands) and Gemm
 * (transA, transB, alpha, beta, an optional C broadcast to the output). */
#include "engine/ops/matmul.h"

#include <string.h>

#include "base/checked.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

const etrt_dtype etrt_matmul_dtypes[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                         ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INVALID};

etrt_status etrt_matmul_shape_init(const etrt_node *node, const etrt_tensor *a,
                                   const etrt_tensor *b, etrt_matmul_shape *out) {
  if (a->rank < 1 || b->rank < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "inputs must have rank 1 or more, got %d and %d", (int)a->rank,
                         (int)b->rank);
  memset(out, 0, sizeof *out);
  out->m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
  out->k = a->dims[a->rank - 1];
  int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  out->n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  if (out->k != kb)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "inner sizes differ: A has %lld columns, B has %lld rows",
                         (long long)out->k, (long long)kb);
  /* Batch axes: everything before the matrix axes, broadcast like elementwise ops. */
  etrt_tensor batch[2];
  memset(batch, 0, sizeof batch);
  batch[0].rank = a->rank > 2 ? a->rank - 2 : 0;
  batch[1].rank = b->rank > 2 ? b->rank - 2 : 0;
  memcpy(batch[0].dims, a->dims, (size_t)batch[0].rank * sizeof(int64_t));
  memcpy(batch[1].dims, b->dims, (size_t)batch[1].rank * sizeof(int64_t));
  ETRT_RETURN_IF_ERROR(etrt_shape_broadcast(node, 2, batch, &out->batch_rank, out->batch_dims));
  out->batch_count = etrt_shape_numel(out->batch_rank, out->batch_dims);
  int64_t a_matrix, b_matrix;
  if (out->batch_count < 0 || etrt_shape_numel(a->rank, a->dims) < 0 ||
      etrt_shape_numel(b->rank, b->dims) < 0 || out->m < 0 || out->n < 0 || out->k < 0 ||
      etrt_mul_overflow_i64(out->m, out->k, &a_matrix) ||
      etrt_mul_overflow_i64(out->k, out->n, &b_matrix))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "sizes overflow");
  etrt_shape_broadcast_strides(batch[0].rank, batch[0].dims, out->batch_rank, out->batch_dims,
                               out->a_batch_strides);
  etrt_shape_broadcast_strides(batch[1].rank, batch[1].dims, out->batch_rank, out->batch_dims,
                               out->b_batch_strides);
  /* A stride is nonzero only along an axis A (or B) has, so it stays within numel. */
  for (int32_t i = 0; i < out->batch_rank; ++i) {
    out->a_batch_strides[i] *= a_matrix;
    out->b_batch_strides[i] *= b_matrix;
  }
  out->out_rank = out->batch_rank;
  memcpy(out->out_dims, out->batch_dims, (size_t)out->batch_rank * sizeof(int64_t));
  if (a->rank > 1) out->out_dims[out->out_rank++] = out->m;
  if (b->rank > 1) out->out_dims[out->out_rank++] = out->n;
  if (etrt_shape_numel(out->out_rank, out->out_dims) < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "output size overflows");
  return ETRT_OK;
}

static etrt_status etrt_matmul_check_types(const etrt_node *node, const etrt_tensor *inputs,
                                           uint32_t count) {
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype, etrt_matmul_dtypes));
  for (uint32_t i = 1; i < count; ++i) {
    if (etrt_op_has_input(node, inputs, i) && inputs[i].dtype != inputs[0].dtype)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input %u has dtype %s, input 0 has %s", i,
                           etrt_dtype_name(inputs[i].dtype), etrt_dtype_name(inputs[0].dtype));
  }
  return ETRT_OK;
}

static etrt_status etrt_matmul_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  if (node->num_inputs != 2 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0) ||
      !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 inputs and 1 output");
  ETRT_RETURN_IF_ERROR(etrt_matmul_check_types(node, inputs, 2));
  etrt_matmul_shape shape;
  ETRT_RETURN_IF_ERROR(etrt_matmul_shape_init(node, &inputs[0], &inputs[1], &shape));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = shape.out_rank;
  memcpy(outputs[0].dims, shape.out_dims, (size_t)shape.out_rank * sizeof(int64_t));
  return ETRT_OK;
}

static etrt_status etrt_gemm_prepare(const etrt_node *node, void *state_) {
  etrt_gemm_state *state = state_;
  state->alpha = 1.0f;
  state->beta = 1.0f;
  state->trans_a = 0;
  state->trans_b = 0;
  for (uint32_t i = 0; i < node->num_attributes; ++i) {
    const etrt_attribute *a = &node->attributes[i];
    int is_float = strcmp(a->name, "alpha") == 0 || strcmp(a->name, "beta") == 0;
    int is_flag = strcmp(a->name, "transA") == 0 || strcmp(a->name, "transB") == 0;
    if (!is_float && !is_flag)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "unknown attribute '%s'", a->name);
    if (is_float && a->kind != ETRT_ATTRIBUTE_FLOAT)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s' must be a float",
                           a->name);
    if (is_flag && (a->kind != ETRT_ATTRIBUTE_INT || (a->i != 0 && a->i != 1)))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s' must be 0 or 1",
                           a->name);
    if (strcmp(a->name, "alpha") == 0)
      state->alpha = a->f;
    else if (strcmp(a->name, "beta") == 0)
      state->beta = a->f;
    else if (strcmp(a->name, "transA") == 0)
      state->trans_a = (int32_t)a->i;
    else
      state->trans_b = (int32_t)a->i;
  }
  return ETRT_OK;
}

etrt_status etrt_gemm_shape(const etrt_node *node, const etrt_tensor *inputs, int64_t *m,
                            int64_t *n, int64_t *k) {
  const etrt_gemm_state *state = node->state;
  const etrt_tensor *a = &inputs[0], *b = &inputs[1];
  if (a->rank != 2 || b->rank != 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "A and B must be 2-D, got rank %d and %d", (int)a->rank, (int)b->rank);
  *m = state->trans_a ? a->dims[1] : a->dims[0];
  *k = state->trans_a ? a->dims[0] : a->dims[1];
  int64_t kb = state->trans_b ? b->dims[1] : b->dims[0];
  *n = state->trans_b ? b->dims[0] : b->dims[1];
  if (*k != kb)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "inner sizes differ: A' has %lld columns, B' has %lld rows (transA %d, "
                         "transB %d)",
                         (long long)*k, (long long)kb, (int)state->trans_a, (int)state->trans_b);
  return ETRT_OK;
}

static etrt_status etrt_gemm_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  if (node->num_inputs < 2 || node->num_inputs > 3 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0) || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes inputs A, B and an optional C, and 1 output");
  ETRT_RETURN_IF_ERROR(etrt_matmul_check_types(node, inputs, node->num_inputs));
  int64_t m, n, k;
  ETRT_RETURN_IF_ERROR(etrt_gemm_shape(node, inputs, &m, &n, &k));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 2;
  outputs[0].dims[0] = m;
  outputs[0].dims[1] = n;
  if (etrt_op_has_input(node, inputs, 2) &&
      !etrt_shape_broadcastable_to(inputs[2].rank, inputs[2].dims, 2, outputs[0].dims))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "C (rank %d) does not broadcast to the output [%lld, %lld]",
                         (int)inputs[2].rank, (long long)m, (long long)n);
  return ETRT_OK;
}

/* EtrtMatMulBias: Y = activation(MatMul(A, B) + bias), A of rank 2 or more, B [K, N]
 * and bias [N], made by the builder from MatMul and Add (pass_gemm.c) for the products
 * Gemm cannot take (a batch of rows: the linear layers of transformers), so that the
 * bias (and a Relu or Gelu after it: pass_gemm_activation.c) rides in the GEMM's
 * epilogue. */
static etrt_status etrt_matmul_bias_infer(const etrt_node *node, const etrt_tensor *inputs,
                                          etrt_tensor *outputs) {
  if (node->num_inputs != 3 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0) ||
      !etrt_op_has_input(node, inputs, 1) || !etrt_op_has_input(node, inputs, 2))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes inputs A, B and bias, and 1 output");
  ETRT_RETURN_IF_ERROR(etrt_matmul_check_types(node, inputs, 3));
  if (inputs[0].dtype != ETRT_DTYPE_FLOAT32 && inputs[0].dtype != ETRT_DTYPE_FLOAT16 &&
      inputs[0].dtype != ETRT_DTYPE_BFLOAT16)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "takes float32, float16 or bfloat16, got %s",
                         etrt_dtype_name(inputs[0].dtype));
  const etrt_tensor *a = &inputs[0], *b = &inputs[1], *bias = &inputs[2];
  if (a->rank < 2 || b->rank != 2 || bias->rank != 1 || bias->dims[0] != b->dims[1])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "needs A of rank 2 or more, a 2-D B and a bias of B's %lld columns; got "
                         "ranks %d, %d and %d",
                         (long long)(b->rank == 2 ? b->dims[1] : -1), (int)a->rank, (int)b->rank,
                         (int)bias->rank);
  etrt_node product = *node;
  product.num_inputs = 2;
  return etrt_matmul_infer(&product, inputs, outputs);
}

static etrt_status etrt_matmul_bias_prepare(const etrt_node *node, void *state_) {
  etrt_matmul_bias_state *state = state_;
  state->activation = ETRT_MATMUL_ACTIVATION_NONE;
  for (uint32_t i = 0; i < node->num_attributes; ++i) {
    const etrt_attribute *a = &node->attributes[i];
    if (strcmp(a->name, "activation") != 0)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "unknown attribute '%s'", a->name);
    static const char *const names[] = {"none", "relu", "gelu_tanh"};
    int found = -1;
    for (int k = 0; k < 3 && a->kind == ETRT_ATTRIBUTE_STRING && a->s != NULL; ++k)
      if (strcmp(a->s, names[k]) == 0) found = k;
    if (found < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "attribute 'activation' must be the string none, relu or gelu_tanh");
    state->activation = (etrt_matmul_activation)found;
  }
  return ETRT_OK;
}

etrt_matmul_activation etrt_matmul_bias_activation(const etrt_node *node) {
  if (strcmp(node->op_type, "EtrtMatMulBias") != 0 || node->state == NULL)
    return ETRT_MATMUL_ACTIVATION_NONE;
  return ((const etrt_matmul_bias_state *)node->state)->activation;
}

/* The dtypes of the cuBLASLt product, both operands alike. */
static int etrt_matmul_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  etrt_dtype t = inputs[0].dtype;
  return (t == ETRT_DTYPE_FLOAT32 || t == ETRT_DTYPE_FLOAT16 || t == ETRT_DTYPE_BFLOAT16) &&
         inputs[1].dtype == t;
}

static const etrt_op_def etrt_op_matmul = {
    .op_type = "MatMul", .infer = etrt_matmul_infer, .cuda_supports = etrt_matmul_cuda_supports};
static const etrt_op_def etrt_op_gemm = {.op_type = "Gemm",
                                         .state_size = sizeof(etrt_gemm_state),
                                         .prepare = etrt_gemm_prepare,
                                         .infer = etrt_gemm_infer,
                                         .cuda_supports = etrt_matmul_cuda_supports};

static const etrt_op_def etrt_op_matmul_bias = {.op_type = "EtrtMatMulBias",
                                                .state_size = sizeof(etrt_matmul_bias_state),
                                                .prepare = etrt_matmul_bias_prepare,
                                                .infer = etrt_matmul_bias_infer,
                                                .cuda_supports = etrt_matmul_cuda_supports};

const etrt_op_def *const etrt_ops_matmul[] = {&etrt_op_matmul, &etrt_op_gemm, &etrt_op_matmul_bias,
                                              NULL};
