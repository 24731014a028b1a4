/* Einsum: the equation parsed once (einsum.c's prepare), the plan of a node at its
 * input shapes (every distinct label is an output axis or a summed one, with each
 * input's stride along it), and the evaluation of one output element, shared by the
 * CPU kernel (cpu/einsum.c) and the CUDA kernel (cuda/einsum.cu). An element is the
 * sum over the summed labels of the product of the inputs; a label repeated in one
 * input (a diagonal) adds its strides; an ellipsis broadcasts (size-1 dims get
 * stride 0). Float32 and float64, accumulated in double. */
#ifndef ETRT_ENGINE_OPS_EINSUM_H
#define ETRT_ENGINE_OPS_EINSUM_H

#include <stdint.h>

#include "engine/op.h"

#ifdef __CUDACC__
#define ETRT_EINSUM_FN __host__ __device__ static inline
#else
#define ETRT_EINSUM_FN static inline
#endif

#define ETRT_EINSUM_MAX_INPUTS 4
#define ETRT_EINSUM_MAX_TERM 16   /* letters and one ellipsis per term */
#define ETRT_EINSUM_MAX_LABELS 24 /* distinct labels of a node, ellipsis dims included */
#define ETRT_EINSUM_ELLIPSIS 127

typedef struct etrt_einsum_state {
  int32_t num_terms, explicit_output;
  int32_t term_length[ETRT_EINSUM_MAX_INPUTS + 1]; /* the output's last */
  /* letters as 0..51, ETRT_EINSUM_ELLIPSIS for "..." */
  int8_t terms[ETRT_EINSUM_MAX_INPUTS + 1][ETRT_EINSUM_MAX_TERM];
} etrt_einsum_state;

typedef struct etrt_einsum_plan {
  int32_t inputs, out_rank, sum_rank;
  int64_t out_dims[ETRT_EINSUM_MAX_LABELS], sum_dims[ETRT_EINSUM_MAX_LABELS];
  int64_t out_strides[ETRT_EINSUM_MAX_INPUTS][ETRT_EINSUM_MAX_LABELS];
  int64_t sum_strides[ETRT_EINSUM_MAX_INPUTS][ETRT_EINSUM_MAX_LABELS];
  int64_t sum_count;
} etrt_einsum_plan;

/* The plan at these inputs' shapes; refuses mismatched label sizes naming the op. */
etrt_status etrt_einsum_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_einsum_plan *plan);

/* Output element o of type T from the inputs' data in[i] (one definition for both
 * types and both executors). */
#define ETRT_EINSUM_ELEMENT(name, T)                                                \
  ETRT_EINSUM_FN T name(const etrt_einsum_plan *p, const T *const *in, int64_t o) { \
    int64_t base[ETRT_EINSUM_MAX_INPUTS] = {0};                                     \
    for (int32_t a = p->out_rank - 1; a >= 0; --a) {                                \
      int64_t c = o % p->out_dims[a];                                               \
      o /= p->out_dims[a];                                                          \
      for (int32_t i = 0; i < p->inputs; ++i) base[i] += c * p->out_strides[i][a];  \
    }                                                                               \
    double sum = 0.0;                                                               \
    for (int64_t s = 0; s < p->sum_count; ++s) {                                    \
      int64_t at[ETRT_EINSUM_MAX_INPUTS];                                           \
      for (int32_t i = 0; i < p->inputs; ++i) at[i] = base[i];                      \
      int64_t rest = s;                                                             \
      for (int32_t a = p->sum_rank - 1; a >= 0; --a) {                              \
        int64_t c = rest % p->sum_dims[a];                                          \
        rest /= p->sum_dims[a];                                                     \
        for (int32_t i = 0; i < p->inputs; ++i) at[i] += c * p->sum_strides[i][a];  \
      }                                                                             \
      double prod = 1.0;                                                            \
      for (int32_t i = 0; i < p->inputs; ++i) prod *= (double)in[i][at[i]];         \
      sum += prod;                                                                  \
    }                                                                               \
    return (T)sum;                                                                  \
  }

ETRT_EINSUM_ELEMENT(etrt_einsum_element_f32, float)
ETRT_EINSUM_ELEMENT(etrt_einsum_element_f64, double)

#endif
