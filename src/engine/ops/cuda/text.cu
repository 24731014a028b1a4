/* TfIdfVectorizer on the GPU: a thread per row (text.h). The pool, the columns and the
 * weights are copied from the node's attributes into the kernel's arguments, which
 * the launch captures when it is enqueued: no allocation and no upload. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/text.h"
}

typedef struct etrt_tfidf_args {
  etrt_tfidf_plan plan;
  int64_t pool[ETRT_TFIDF_CUDA_MAX_POOL];
  int64_t indexes[ETRT_TFIDF_CUDA_MAX_COLUMNS];
  float weights[ETRT_TFIDF_CUDA_MAX_COLUMNS];
} etrt_tfidf_args;

__global__ void etrt_tfidf_kernel(const etrt_tfidf_args args, const void *x, float *y) {
  etrt_tfidf_tables tables = {args.pool, args.indexes, args.weights};
  ETRT_CUDA_LOOP(r, args.plan.rows) { etrt_tfidf_row(&args.plan, &tables, x, r, y); }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_tfidf) {
  etrt_tfidf_args args; /* 14 KB on the stack, as the launch will copy it */
  etrt_tfidf_tables tables;
  ETRT_RETURN_IF_ERROR(etrt_tfidf_plan_make(node, inputs, &args.plan, &tables));
  if (args.plan.rows == 0 || args.plan.width == 0) return ETRT_OK;
  memcpy(args.pool, tables.pool, (size_t)args.plan.pool_size * sizeof(int64_t));
  memcpy(args.indexes, tables.indexes, (size_t)args.plan.grams * sizeof(int64_t));
  if (tables.weights != NULL)
    memcpy(args.weights, tables.weights, (size_t)args.plan.width * sizeof(float));
  etrt_tfidf_kernel<<<etrt_cuda_blocks(args.plan.rows, 64), 64, 0, etrt_cuda_stream(launch)>>>(
      args, inputs[0].data, (float *)outputs[0].data);
  return etrt_cuda_check(node, "tfidf_vectorizer");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_text[] = {
    {"TfIdfVectorizer", etrt_cuda_tfidf, NULL},
    {NULL, NULL, NULL},
};
