/* MatMul and Gemm: the shape logic that the definitions (matmul.c), the CPU kernels
 * (cpu/matmul.c) and CUDA kernels share. */
#ifndef ETRT_ENGINE_OPS_MATMUL_H
#define ETRT_ENGINE_OPS_MATMUL_H

#include "engine/op.h"

/* A MatMul with NumPy semantics: A [..., M, K] times B [..., K, N]; a 1-D A is a row
 * [1, K] and a 1-D B a column [K, 1], their unit axis removed from the output; the
 * batch axes (all but the last two) broadcast. */
typedef struct etrt_matmul_shape {
  int64_t m, n, k;
  int32_t batch_rank;
  int64_t batch_dims[ETRT_MAX_RANK];
  int64_t batch_count;                    /* product of batch_dims */
  int64_t a_batch_strides[ETRT_MAX_RANK]; /* elements; 0 where A broadcasts */
  int64_t b_batch_strides[ETRT_MAX_RANK];
  int32_t out_rank;
  int64_t out_dims[ETRT_MAX_RANK];
} etrt_matmul_shape;

/* Refuses scalars, mismatched K and batch axes that do not broadcast, naming the op. */
etrt_status etrt_matmul_shape_init(const etrt_node *node, const etrt_tensor *a,
                                   const etrt_tensor *b, etrt_matmul_shape *out);

/* Gemm's attributes, read once by prepare: Y = alpha * A' B' + beta * C, where A' is
 * A or its transpose (transA), B' likewise (transB), C optional and broadcast
 * (unidirectionally) to [M, N]. */
typedef struct etrt_gemm_state {
  float alpha, beta;
  int32_t trans_a, trans_b;
} etrt_gemm_state;

/* M, N, K of a Gemm from its 2-D inputs and state; refuses the mismatches. */
etrt_status etrt_gemm_shape(const etrt_node *node, const etrt_tensor *inputs, int64_t *m,
                            int64_t *n, int64_t *k);

/* EtrtMatMulBias's `activation` (pass_gemm_activation.c), applied to the biased
 * product in float32 before Y is rounded to its type. */
typedef enum etrt_matmul_activation {
  ETRT_MATMUL_ACTIVATION_NONE = 0,
  ETRT_MATMUL_ACTIVATION_RELU,
  ETRT_MATMUL_ACTIVATION_GELU_TANH, /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
} etrt_matmul_activation;

typedef struct etrt_matmul_bias_state {
  etrt_matmul_activation activation;
} etrt_matmul_bias_state;

/* The activation of an EtrtMatMulBias node (NONE for any other node). */
etrt_matmul_activation etrt_matmul_bias_activation(const etrt_node *node);

/* The dtypes MatMul and Gemm take (ETRT_DTYPE_INVALID-terminated). */
extern const etrt_dtype etrt_matmul_dtypes[];

etrt_status etrt_cpu_matmul(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_matmul_bias(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs);
etrt_status etrt_cpu_gemm(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
