/* TfIdfVectorizer over integer tokens: X [C] or [N, C] of int32/int64 -> float
 * [W] or [N, W], W = max(ngram_indexes) + 1. Each row counts, for every skip
 * distance 1 .. max_skip_count + 1, the n-grams (min_gram_length <= n <=
 * max_gram_length) of tokens that far apart which are in the pool, unigrams only at
 * distance 1; then weights the counts by the mode. The pool holds the n-grams level by
 * level (ngram_counts[l]: where the (l + 1)-grams start), numbered in pool order;
 * ngram_indexes maps that number to an output column. One row is one call of
 * etrt_tfidf_row, on both executors (cpu/text.c, cuda/text.cu). */
#ifndef ETRT_ENGINE_OPS_TEXT_H
#define ETRT_ENGINE_OPS_TEXT_H

#include <stdint.h>

#include "engine/op.h"

#ifdef __CUDACC__
#define ETRT_TEXT_FN __host__ __device__ static inline
#else
#define ETRT_TEXT_FN static inline
#endif

#define ETRT_TFIDF_MAX_LEVELS 16
/* The largest pool and number of columns the CUDA kernel takes (its tables travel as
 * kernel arguments). */
#define ETRT_TFIDF_CUDA_MAX_POOL 1024
#define ETRT_TFIDF_CUDA_MAX_COLUMNS 512

enum { ETRT_TFIDF_TF = 0, ETRT_TFIDF_IDF = 1, ETRT_TFIDF_TFIDF = 2 };

typedef struct etrt_tfidf_plan {
  int32_t mode, x_i64, min_n, max_n, levels, weighted;
  int64_t max_skip, rows, length, width, pool_size, grams;
  int64_t starts[ETRT_TFIDF_MAX_LEVELS];   /* ngram_counts */
  int64_t first_id[ETRT_TFIDF_MAX_LEVELS]; /* number of the first n-gram of each level */
} etrt_tfidf_plan;

/* The pool, the column of each n-gram and the weight of each column (NULL when the
 * node has none): the node's attributes on the CPU, a device copy on the GPU. */
typedef struct etrt_tfidf_tables {
  const int64_t *pool, *indexes;
  const float *weights;
} etrt_tfidf_tables;

etrt_status etrt_tfidf_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tfidf_plan *plan, etrt_tfidf_tables *tables);

ETRT_TEXT_FN int64_t etrt_tfidf_token(const etrt_tfidf_plan *p, const void *x, int64_t i) {
  return p->x_i64 ? ((const int64_t *)x)[i] : (int64_t)((const int32_t *)x)[i];
}

/* The number of the n-gram of tokens at, at + step, ... in the pool, or -1. */
ETRT_TEXT_FN int64_t etrt_tfidf_find(const etrt_tfidf_plan *p, const int64_t *pool, const void *x,
                                     int64_t at, int64_t step, int32_t n) {
  if (n > p->levels) return -1;
  int64_t begin = p->starts[n - 1];
  int64_t end = n < p->levels ? p->starts[n] : p->pool_size;
  for (int64_t g = 0; begin + (g + 1) * n <= end; ++g) {
    int32_t k = 0;
    while (k < n && pool[begin + g * n + k] == etrt_tfidf_token(p, x, at + k * step)) ++k;
    if (k == n) return p->first_id[n - 1] + g;
  }
  return -1;
}

/* Row r of the output (y: the whole output). */
ETRT_TEXT_FN void etrt_tfidf_row(const etrt_tfidf_plan *p, const etrt_tfidf_tables *t,
                                 const void *x, int64_t r, float *y) {
  float *out = y + r * p->width;
  for (int64_t i = 0; i < p->width; ++i) out[i] = 0.0f;
  int64_t base = r * p->length;
  int32_t first = p->min_n;
  for (int64_t step = 1; step <= p->max_skip + 1 && first <= p->max_n; ++step) {
    for (int64_t s = 0; s < p->length; ++s) {
      for (int32_t n = first; n <= p->max_n && s + (n - 1) * step < p->length; ++n) {
        int64_t id = etrt_tfidf_find(p, t->pool, x, base + s, step, n);
        if (id >= 0) out[t->indexes[id]] += 1.0f;
      }
    }
    if (first == 1) first = 2; /* unigrams have no skips: count them once */
  }
  for (int64_t i = 0; i < p->width; ++i) {
    float w = p->weighted ? t->weights[i] : 1.0f;
    if (p->mode == ETRT_TFIDF_IDF)
      out[i] = out[i] > 0.0f ? w : 0.0f;
    else if (p->mode == ETRT_TFIDF_TFIDF)
      out[i] *= w;
  }
}

#endif
