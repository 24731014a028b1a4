#include "engine/cpu_packed.h"

#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/log.h"
#include "engine/ops/cpu/gemm_util.h"
#include "engine/ops/matmul.h"

typedef struct etrt_packed_node {
  float *panels; /* NULL: the node has none */
  int nr;        /* the micro-kernel width they were packed for */
  int bias;      /* EtrtMatMulBias: input 2 is added to every row */
  int64_t k, n;
} etrt_packed_node;

struct etrt_cpu_packed {
  etrt_packed_node *nodes;
  uint32_t node_count, packed_count;
};

/* The constant [K, N] float32 weight of a product etrt's GEMM may take from packed
 * panels, or NULL. */
static const etrt_graph_value *etrt_packed_weight(const etrt_graph *g, const etrt_node *node) {
  int bias = strcmp(node->op_type, "EtrtMatMulBias") == 0;
  if ((strcmp(node->op_type, "MatMul") != 0 && !bias) || node->num_inputs != (bias ? 3u : 2u) ||
      node->num_outputs != 1 || node->dims_at_execute != ETRT_NODE_DIMS_PLANNED ||
      node->inputs[0] < 0 || node->inputs[1] < 0 ||
      etrt_matmul_bias_activation(node) != ETRT_MATMUL_ACTIVATION_NONE)
    return NULL;
  const etrt_graph_value *a = &g->values[node->inputs[0]], *w = &g->values[node->inputs[1]];
  const etrt_graph_value *y = &g->values[node->outputs[0]];
  if (a->dtype != ETRT_DTYPE_FLOAT32 || y->dtype != ETRT_DTYPE_FLOAT32 ||
      w->kind != ETRT_VALUE_KIND_CONSTANT || w->dtype != ETRT_DTYPE_FLOAT32 || w->rank != 2 ||
      w->data == NULL || a->rank < 1 || a->max_dims[a->rank - 1] != w->max_dims[0])
    return NULL;
  if (bias && (node->inputs[2] < 0 || g->values[node->inputs[2]].dtype != ETRT_DTYPE_FLOAT32))
    return NULL;
  return w;
}

etrt_status etrt_cpu_packed_create(const etrt_engine *engine, const etrt_cpu_onednn *onednn,
                                   etrt_cpu_packed **out) {
  *out = NULL;
  const char *env = getenv("ETRT_CPU_PACKED");
  if (env != NULL && strcmp(env, "0") == 0) return ETRT_OK;
  const etrt_graph *g = &engine->graph;
  etrt_cpu_packed *s = NULL;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_graph_value *w = etrt_packed_weight(g, &g->nodes[n]);
    if (w == NULL || w->max_dims[0] == 0 || w->max_dims[1] == 0 || etrt_cpu_onednn_takes(onednn, n))
      continue;
    if (s == NULL) {
      s = calloc(1, sizeof *s);
      if (s != NULL) s->nodes = calloc(g->node_count, sizeof *s->nodes);
      if (s == NULL || s->nodes == NULL) {
        etrt_cpu_packed_destroy(s);
        return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory",
                          engine->info.name);
      }
      s->node_count = g->node_count;
    }
    etrt_packed_node *p = &s->nodes[n];
    p->bias = g->nodes[n].num_inputs == 3;
    p->k = w->max_dims[0];
    p->n = w->max_dims[1];
    size_t bytes = etrt_cpu_gemm_packed_b_count_f32(p->k, p->n) * sizeof(float);
    p->panels = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p->panels == NULL) {
      etrt_cpu_packed_destroy(s);
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                        "engine '%s', node %u '%s': out of memory for %zu bytes of packed weights",
                        engine->info.name, n, g->nodes[n].name, bytes);
    }
    p->nr = etrt_cpu_gemm_pack_b_f32(p->k, p->n, w->data, p->n, p->panels);
    etrt_file_pages_release(w->data, w->nbytes);
    ++s->packed_count;
  }
  if (s != NULL)
    etrt_log(ETRT_LOG_DEBUG, "engine '%s': %u matrix weights packed for etrt's GEMM",
             engine->info.name, s->packed_count);
  *out = s;
  return ETRT_OK;
}

void etrt_cpu_packed_destroy(etrt_cpu_packed *s) {
  if (s == NULL) return;
  for (uint32_t n = 0; n < s->node_count && s->nodes != NULL; ++n) free(s->nodes[n].panels);
  free(s->nodes);
  free(s);
}

int etrt_cpu_packed_run(const etrt_cpu_packed *s, uint32_t n, const etrt_tensor *inputs,
                        etrt_tensor *outputs, etrt_status *status) {
  if (s == NULL || n >= s->node_count || s->nodes[n].panels == NULL) return 0;
  const etrt_packed_node *p = &s->nodes[n];
  const etrt_tensor *a = &inputs[0];
  if (a->rank < 1 || a->dims[a->rank - 1] != p->k || inputs[1].dims[0] != p->k ||
      inputs[1].dims[1] != p->n)
    return 0;
  int64_t rows = p->k > 0 ? etrt_tensor_numel(a) / p->k : 0;
  if (!etrt_cpu_gemm_packed_f32(rows, p->n, p->k, 1.0f, a->data, p->k, 1, p->panels, p->nr,
                                outputs[0].data, p->n, 0))
    return 0;
  if (p->bias) etrt_cpu_gemm_add_bias_f32(outputs[0].data, inputs[2].data, rows, p->n);
  *status = ETRT_OK;
  return 1;
}

uint32_t etrt_cpu_packed_node_count(const etrt_cpu_packed *s) {
  return s != NULL ? s->packed_count : 0;
}
