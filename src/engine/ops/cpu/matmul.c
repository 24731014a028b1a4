/* CPU kernels of MatMul and Gemm. One strided matrix product, expanded per dtype:
 * Y = alpha * A B (+ beta * C). Where the dtype computes in its own type, the
 * blocked GEMM of gemm_util.c (packed panels, vectorised, split over threads);
 * otherwise (16-bit floats) a dot product per element, accumulated in float. */
#include <math.h>

#include "base/half.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/ops/cpu/gemm_util.h"
#include "engine/ops/cpu/vector_math.h"
#include "engine/ops/matmul.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/cpu/widen.h"

typedef struct etrt_gemm_args {
  int64_t m, n, k;
  const void *a;
  int64_t a_row, a_col; /* element strides of A(i, k) */
  const void *b;
  int64_t b_row, b_col; /* element strides of B(k, j) */
  void *y;
  int64_t y_row;        /* Y is row-major with unit column stride */
  const void *c;        /* NULL: no C */
  int64_t c_row, c_col; /* 0 along broadcast axes */
  double alpha, beta;
} etrt_gemm_args;

#define ETRT_MM_SAME(x) (x)

/* X(name, dtype, S storage, C compute, load, store) */
#define ETRT_MM_TYPES(X)                                                              \
  X(f32, ETRT_DTYPE_FLOAT32, float, float, ETRT_MM_SAME, ETRT_MM_SAME)                \
  X(f64, ETRT_DTYPE_FLOAT64, double, double, ETRT_MM_SAME, ETRT_MM_SAME)              \
  X(f16, ETRT_DTYPE_FLOAT16, uint16_t, float, etrt_half_to_float, etrt_float_to_half) \
  X(bf16, ETRT_DTYPE_BFLOAT16, uint16_t, float, etrt_bfloat16_to_float, etrt_float_to_bfloat16)
/* The types that compute in their storage type take the blocked GEMM. */
#define ETRT_MM_BLOCKED_TYPES(X) \
  X(f32, ETRT_DTYPE_FLOAT32, float) X(f64, ETRT_DTYPE_FLOAT64, double)

#define ETRT_MM_DEFINE_DOT(NAME, DT, S, C, LOAD, STORE)                  \
  static void etrt_gemm_dot_##NAME(const etrt_gemm_args *g) {            \
    const S *a = g->a, *b = g->b, *c = g->c;                             \
    S *y = g->y;                                                         \
    const C alpha = (C)g->alpha, beta = (C)g->beta;                      \
    for (int64_t i = 0; i < g->m; ++i) {                                 \
      const S *arow = a + i * g->a_row;                                  \
      for (int64_t j = 0; j < g->n; ++j) {                               \
        const S *bcol = b + j * g->b_col;                                \
        C acc = 0;                                                       \
        for (int64_t k = 0; k < g->k; ++k)                               \
          acc += LOAD(arow[k * g->a_col]) * LOAD(bcol[k * g->b_row]);    \
        C v = alpha * acc;                                               \
        if (c != NULL) v += beta * LOAD(c[i * g->c_row + j * g->c_col]); \
        y[i * g->y_row + j] = STORE(v);                                  \
      }                                                                  \
    }                                                                    \
  }
ETRT_MM_TYPES(ETRT_MM_DEFINE_DOT)

/* Y starts as beta * C (or 0), then the GEMM adds alpha * A B into it. */
#define ETRT_MM_DEFINE_BLOCKED(NAME, DT, T)                                                     \
  static void etrt_gemm_blocked_##NAME(const etrt_gemm_args *g) {                               \
    const T *c = g->c;                                                                          \
    T *y = g->y;                                                                                \
    if (c != NULL) {                                                                            \
      const T beta = (T)g->beta;                                                                \
      for (int64_t i = 0; i < g->m; ++i)                                                        \
        for (int64_t j = 0; j < g->n; ++j)                                                      \
          y[i * g->y_row + j] = beta * c[i * g->c_row + j * g->c_col];                          \
    }                                                                                           \
    etrt_cpu_gemm_strided_##NAME(g->m, g->n, g->k, (T)g->alpha, g->a, g->a_row, g->a_col, g->b, \
                                 g->b_row, g->b_col, y, g->y_row, c != NULL);                   \
  }
ETRT_MM_BLOCKED_TYPES(ETRT_MM_DEFINE_BLOCKED)

/* Refuses a product of m x n outputs in a dtype without a kernel; one with no output
 * computes nothing and is not refused. */
static etrt_status etrt_gemm_supported(etrt_dtype dtype, int64_t m, int64_t n) {
#define ETRT_MM_KNOWN(NAME, DT, S, C, LOAD, STORE) || dtype == DT
  if (m == 0 || n == 0 || (0 ETRT_MM_TYPES(ETRT_MM_KNOWN))) return ETRT_OK;
#undef ETRT_MM_KNOWN
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "matrix product: no CPU kernel for %s",
                    etrt_dtype_name(dtype));
}

/* One product, in a dtype etrt_gemm_supported accepted. */
static void etrt_gemm_run(etrt_dtype dtype, const etrt_gemm_args *g) {
  if (g->m == 0 || g->n == 0) return;
#define ETRT_MM_BLOCKED_CASE(NAME, DT, T) \
  case DT:                                \
    etrt_gemm_blocked_##NAME(g);          \
    return;
  switch (dtype) {
    ETRT_MM_BLOCKED_TYPES(ETRT_MM_BLOCKED_CASE)
    default:
      break;
  }
#undef ETRT_MM_BLOCKED_CASE
#define ETRT_MM_DOT_CASE(NAME, DT, S, C, LOAD, STORE) \
  case DT:                                            \
    etrt_gemm_dot_##NAME(g);                          \
    return;
  switch (dtype) {
    ETRT_MM_TYPES(ETRT_MM_DOT_CASE)
    default:
      break;
  }
#undef ETRT_MM_DOT_CASE
}

/* A batched MatMul's products, run by etrt_matmul_products over a range of batches. */
typedef struct etrt_matmul_job {
  const etrt_matmul_shape *shape;
  const etrt_tensor *a, *b, *y;
} etrt_matmul_job;

static void etrt_matmul_products(void *ctx, int64_t begin, int64_t end) {
  const etrt_matmul_job *j = ctx;
  const etrt_matmul_shape *shape = j->shape;
  const size_t item = etrt_dtype_size(j->y->dtype);
  etrt_gemm_args g = {.m = shape->m,
                      .n = shape->n,
                      .k = shape->k,
                      .a_row = shape->k,
                      .a_col = 1,
                      .b_row = shape->n,
                      .b_col = 1,
                      .y_row = shape->n,
                      .alpha = 1.0};
  for (int64_t batch = begin; batch < end; ++batch) {
    int64_t a_offset = 0, b_offset = 0, rest = batch;
    for (int32_t d = shape->batch_rank - 1; d >= 0; --d) {
      int64_t index = rest % shape->batch_dims[d];
      rest /= shape->batch_dims[d];
      a_offset += index * shape->a_batch_strides[d];
      b_offset += index * shape->b_batch_strides[d];
    }
    g.a = (const uint8_t *)j->a->data + (size_t)a_offset * item;
    g.b = (const uint8_t *)j->b->data + (size_t)b_offset * item;
    g.y = (uint8_t *)j->y->data + (size_t)(batch * shape->m * shape->n) * item;
    etrt_gemm_run(j->y->dtype, &g);
  }
}

/* Multiply-adds under which one product of a batch splits poorly inside the GEMM: a
 * BERT head's scores (128 x 128 x 64, 1M) make 3 row blocks, so 16 threads woke 12
 * times per node for 3 tasks each. Such batches go over the pool a product per task. */
#define ETRT_MATMUL_SMALL_PRODUCT (1 << 22)

etrt_status etrt_cpu_matmul(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  etrt_matmul_shape shape;
  ETRT_RETURN_IF_ERROR(etrt_matmul_shape_init(node, &inputs[0], &inputs[1], &shape));
  ETRT_RETURN_IF_ERROR(
      etrt_gemm_supported(outputs[0].dtype, shape.batch_count > 0 ? shape.m : 0, shape.n));
  etrt_matmul_job job = {.shape = &shape, .a = &inputs[0], .b = &inputs[1], .y = &outputs[0]};
  int64_t product = shape.m * shape.n * shape.k;
  if (shape.batch_count > 1 &&
      (shape.batch_count >= etrt_thread_pool_width() || product < ETRT_MATMUL_SMALL_PRODUCT))
    etrt_parallel_for(shape.batch_count, 1, etrt_matmul_products, &job);
  else
    etrt_matmul_products(&job, 0, shape.batch_count);
  return ETRT_OK;
}

/* The product, then the bias added to each row; half types through float32 copies, so
 * that Y is rounded once, as by the CUDA kernel's epilogue. */
etrt_status etrt_cpu_matmul_bias(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  if (etrt_cpu_widen_needed(node, inputs, outputs))
    return etrt_cpu_widen_run(node, inputs, outputs, etrt_cpu_matmul_bias);
  etrt_node product = *node;
  product.num_inputs = 2;
  ETRT_RETURN_IF_ERROR(etrt_cpu_matmul(&product, inputs, outputs));
  int64_t n = inputs[2].dims[0], rows = n > 0 ? etrt_tensor_numel(&outputs[0]) / n : 0;
  etrt_cpu_gemm_add_bias_f32(outputs[0].data, inputs[2].data, rows, n);
  float *y = outputs[0].data;
  int64_t count = rows * n;
  switch (etrt_matmul_bias_activation(node)) {
    case ETRT_MATMUL_ACTIVATION_NONE:
      break;
    case ETRT_MATMUL_ACTIVATION_RELU:
      etrt_cpu_relu_f32(y, y, count);
      break;
    case ETRT_MATMUL_ACTIVATION_GELU_TANH:
      for (int64_t i = 0; i < count; ++i) {
        float x = y[i];
        y[i] = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
      }
      break;
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_gemm(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_gemm_state *state = node->state;
  int64_t m, n, k;
  ETRT_RETURN_IF_ERROR(etrt_gemm_shape(node, inputs, &m, &n, &k));
  etrt_gemm_args g = {.m = m,
                      .n = n,
                      .k = k,
                      .a = inputs[0].data,
                      .a_row = state->trans_a ? 1 : k,
                      .a_col = state->trans_a ? m : 1,
                      .b = inputs[1].data,
                      .b_row = state->trans_b ? 1 : n,
                      .b_col = state->trans_b ? k : 1,
                      .y = outputs[0].data,
                      .y_row = n,
                      .alpha = state->alpha,
                      .beta = state->beta};
  if (node->num_inputs > 2 && inputs[2].rank >= 0) {
    int64_t strides[2];
    etrt_shape_broadcast_strides(inputs[2].rank, inputs[2].dims, 2, outputs[0].dims, strides);
    g.c = inputs[2].data;
    g.c_row = strides[0];
    g.c_col = strides[1];
  }
  ETRT_RETURN_IF_ERROR(etrt_gemm_supported(outputs[0].dtype, g.m, g.n));
  etrt_gemm_run(outputs[0].dtype, &g);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_matmul[] = {
    {"MatMul", etrt_cpu_matmul},
    {"Gemm", etrt_cpu_gemm},
    {"EtrtMatMulBias", etrt_cpu_matmul_bias},
    {NULL, NULL},
};
