/* The CPU kernel of EtrtAttention (ops/attention.h): per query row, the largest score,
 * then the exponentials summed and the values accumulated in double, with no scratch
 * (the scores are computed twice); rows in parallel. It is the reference the CUDA
 * kernel is tested against, and what a simulated GPU runs. */
#include <math.h>

#include "base/thread_pool.h"
#include "engine/ops/attention.h"
#include "engine/ops/cpu/scalar.h"

typedef struct etrt_attention_run {
  const etrt_attention_geometry *g;
  const etrt_tensor *inputs;
  etrt_tensor *output;
} etrt_attention_run;

static double etrt_attention_score(const etrt_attention_run *r, int64_t b, int64_t h, int64_t i,
                                   int64_t j) {
  const etrt_attention_geometry *g = r->g;
  etrt_dtype t = r->inputs[0].dtype;
  int64_t q = b * g->q_batch + i * g->q_row + g->offsets[0] + h * g->head_size;
  int64_t k = b * g->k_batch + j * g->k_row + g->offsets[1] + h * g->head_size;
  double dot = 0.0;
  for (int64_t d = 0; d < g->head_size; ++d)
    dot += etrt_scalar_load(r->inputs[0].data, t, q + d) *
           etrt_scalar_load(r->inputs[1].data, t, k + d);
  double s = dot * (double)g->scale;
  if (g->has_mask)
    s += etrt_scalar_load(r->inputs[3].data, r->inputs[3].dtype,
                          b * g->mask_stride[0] + h * g->mask_stride[1] + i * g->mask_stride[2] +
                              j * g->mask_stride[3]);
  return s;
}

/* Rows [begin, end) of the B * H * Sq query rows. */
static void etrt_attention_rows(void *ctx, int64_t begin, int64_t end) {
  const etrt_attention_run *r = ctx;
  const etrt_attention_geometry *g = r->g;
  etrt_dtype t = r->inputs[0].dtype;
  double acc[ETRT_ATTENTION_MAX_HEAD];
  for (int64_t row = begin; row < end; ++row) {
    int64_t i = row % g->q_len, h = row / g->q_len % g->heads, b = row / (g->q_len * g->heads);
    double top = -INFINITY;
    for (int64_t j = 0; j < g->kv_len; ++j) top = fmax(top, etrt_attention_score(r, b, h, i, j));
    double sum = 0.0;
    for (int64_t d = 0; d < g->head_size; ++d) acc[d] = 0.0;
    for (int64_t j = 0; j < g->kv_len; ++j) {
      double p = exp(etrt_attention_score(r, b, h, i, j) - top);
      sum += p;
      int64_t v = b * g->v_batch + j * g->v_row + g->offsets[2] + h * g->head_size;
      for (int64_t d = 0; d < g->head_size; ++d)
        acc[d] += p * etrt_scalar_load(r->inputs[2].data, t, v + d);
    }
    int64_t o = (b * g->q_len + i) * g->heads * g->head_size + h * g->head_size;
    for (int64_t d = 0; d < g->head_size; ++d)
      etrt_scalar_store(r->output->data, t, o + d, acc[d] / sum);
  }
}

static etrt_status etrt_cpu_attention(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  etrt_attention_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_attention_geometry_of(node, inputs, &g));
  etrt_attention_run r = {&g, inputs, &outputs[0]};
  int64_t rows = g.batch * g.heads * g.q_len;
  if (rows > 0) etrt_parallel_for(rows, 16, etrt_attention_rows, &r);
  return ETRT_OK;
}

const etrt_op_cpu_row etrt_cpu_rows_attention[] = {
    {"EtrtAttention", etrt_cpu_attention},
    {NULL, NULL},
};
