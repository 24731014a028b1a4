/* BatchNormalization folded into the weights and bias of the Conv or Gemm before it:
 *   y = (x - mean) * s + shift,  s = scale / sqrt(var + epsilon)
 * so W'[c] = W[c] * s[c] and b'[c] = (b[c] - mean[c]) * s[c] + shift[c]. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builder/passes.h"

/* A constant float32 vector of `count` elements (shape [count], or [1, count] when
 * allow_row), or NULL. */
static const float *etrt_bn_vector(const etrt_ir_graph *graph, int32_t value, int64_t count,
                                   bool allow_row) {
  if (value < 0) return NULL;
  const etrt_ir_value *v = &graph->values[value];
  if (!v->is_constant || v->dtype != ETRT_DTYPE_FLOAT32) return NULL;
  bool shape_ok = (v->rank == 1 && v->max[0] == count) ||
                  (allow_row && v->rank == 2 && v->max[0] == 1 && v->max[1] == count);
  return shape_ok ? (const float *)v->data : NULL;
}

typedef struct etrt_bn_factors {
  int64_t channels;
  const float *scale, *shift, *mean, *var;
  float epsilon;
} etrt_bn_factors;

static bool etrt_bn_read(const etrt_ir_graph *graph, const etrt_ir_node *bn, int64_t channels,
                         etrt_bn_factors *f) {
  if (bn->num_inputs < 5) return false;
  f->channels = channels;
  f->scale = etrt_bn_vector(graph, bn->inputs[1], channels, false);
  f->shift = etrt_bn_vector(graph, bn->inputs[2], channels, false);
  f->mean = etrt_bn_vector(graph, bn->inputs[3], channels, false);
  f->var = etrt_bn_vector(graph, bn->inputs[4], channels, false);
  f->epsilon = etrt_ir_node_attribute_float(bn, "epsilon", 1e-5f);
  return f->scale && f->shift && f->mean && f->var;
}

static double etrt_bn_s(const etrt_bn_factors *f, int64_t c) {
  return (double)f->scale[c] / sqrt((double)f->var[c] + (double)f->epsilon);
}

/* New weight and bias constants for a producer `p` with weight input 1 laid out with
 * the output channel `c` of element (row, col) given by `channel_axis`. */
static etrt_status etrt_bn_fold_weights(etrt_ir_graph *graph, etrt_ir_node *p,
                                        const etrt_bn_factors *f, int channel_axis,
                                        const float *bias, double bias_scale) {
  /* Copies: adding values may move the value array. */
  const etrt_ir_value w = graph->values[p->inputs[1]];
  int64_t numel = etrt_ir_value_numel(&w);
  char base[300];
  snprintf(base, sizeof base, "%s_bn", w.name);
  float *w_new, *b_new;
  int32_t w_id, b_id;
  void *data;
  ETRT_RETURN_IF_ERROR(
      etrt_ir_add_constant(graph, base, ETRT_DTYPE_FLOAT32, w.rank, w.max, &data, &w_id));
  w_new = data;
  const float *w_old = w.data;
  if (channel_axis == 0) {
    int64_t inner = numel / f->channels;
    for (int64_t c = 0; c < f->channels; ++c) {
      float s = (float)etrt_bn_s(f, c);
      for (int64_t k = 0; k < inner; ++k) w_new[c * inner + k] = w_old[c * inner + k] * s;
    }
  } else { /* the last axis of a 2-D weight */
    int64_t rows = numel / f->channels;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < f->channels; ++c)
        w_new[r * f->channels + c] = w_old[r * f->channels + c] * (float)etrt_bn_s(f, c);
  }
  snprintf(base, sizeof base, "%s_bn_bias", p->name);
  int64_t dims[1] = {f->channels};
  ETRT_RETURN_IF_ERROR(
      etrt_ir_add_constant(graph, base, ETRT_DTYPE_FLOAT32, 1, dims, &data, &b_id));
  b_new = data;
  for (int64_t c = 0; c < f->channels; ++c) {
    double b = bias ? (double)bias[c] * bias_scale : 0.0;
    b_new[c] = (float)((b - (double)f->mean[c]) * etrt_bn_s(f, c) + (double)f->shift[c]);
  }
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, p, 1, w_id));
  return etrt_ir_node_set_input(graph, p, 2, b_id);
}

static etrt_status etrt_bn_try(etrt_ir_graph *graph, uint32_t n, bool *folded) {
  *folded = false;
  etrt_ir_node *bn = &graph->nodes[n];
  if (bn->num_inputs < 5 || bn->num_outputs < 1 || bn->inputs[0] < 0 || bn->outputs[0] < 0)
    return ETRT_OK;
  if (etrt_ir_node_attribute_int(bn, "training_mode", 0) != 0) return ETRT_OK;
  for (uint32_t o = 1; o < bn->num_outputs; ++o)
    if (bn->outputs[o] >= 0 && etrt_ir_use_count(graph, bn->outputs[o]) > 0) return ETRT_OK;
  int32_t x = bn->inputs[0];
  int32_t p_index = graph->values[x].producer;
  if (p_index < 0 || etrt_ir_single_consumer(graph, x) != (int32_t)n) return ETRT_OK;
  etrt_ir_node *p = &graph->nodes[p_index];
  if (p->dead || p->num_inputs < 2 || p->inputs[1] < 0) return ETRT_OK;
  const etrt_ir_value *w = &graph->values[p->inputs[1]];
  if (!w->is_constant || w->dtype != ETRT_DTYPE_FLOAT32 || etrt_ir_value_numel(w) <= 0)
    return ETRT_OK;
  etrt_bn_factors f;
  if (strcmp(p->op_type, "Conv") == 0) {
    if (w->rank < 3) return ETRT_OK;
    int64_t channels = w->max[0];
    if (!etrt_bn_read(graph, bn, channels, &f)) return ETRT_OK;
    const float *bias = NULL;
    if (p->num_inputs > 2 && p->inputs[2] >= 0) {
      bias = etrt_bn_vector(graph, p->inputs[2], channels, false);
      if (bias == NULL) return ETRT_OK;
    }
    ETRT_RETURN_IF_ERROR(etrt_bn_fold_weights(graph, p, &f, 0, bias, 1.0));
  } else if (strcmp(p->op_type, "Gemm") == 0) {
    if (w->rank != 2) return ETRT_OK;
    bool trans_b = etrt_ir_node_attribute_int(p, "transB", 0) != 0;
    int64_t channels = trans_b ? w->max[0] : w->max[1];
    if (!etrt_bn_read(graph, bn, channels, &f)) return ETRT_OK;
    /* y = alpha*A*B + beta*C: scaling B scales alpha*A*B; beta*C moves into the new
     * bias with beta = 1. */
    double beta = etrt_ir_node_attribute_float(p, "beta", 1.0f);
    const float *bias = NULL;
    if (p->num_inputs > 2 && p->inputs[2] >= 0) {
      bias = etrt_bn_vector(graph, p->inputs[2], channels, true);
      if (bias == NULL) return ETRT_OK;
    }
    ETRT_RETURN_IF_ERROR(etrt_bn_fold_weights(graph, p, &f, trans_b ? 0 : 1, bias, beta));
    etrt_attribute one = {.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 1.0f};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, p, &one));
  } else {
    return ETRT_OK;
  }
  /* p now writes the batch norm's output. */
  bn = &graph->nodes[n];
  int32_t y = bn->outputs[0];
  bn->dead = true;
  for (uint32_t o = 1; o < bn->num_outputs; ++o)
    if (bn->outputs[o] >= 0) graph->values[bn->outputs[o]].producer = -1;
  p->outputs[0] = y;
  graph->values[y].producer = p_index;
  graph->values[x].producer = -1;
  *folded = true;
  return ETRT_OK;
}

etrt_status etrt_pass_fold_batchnorm(etrt_ir_graph *graph, uint32_t *folded) {
  *folded = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    if (graph->nodes[n].dead || strcmp(graph->nodes[n].op_type, "BatchNormalization") != 0)
      continue;
    bool done;
    ETRT_RETURN_IF_ERROR(etrt_bn_try(graph, n, &done));
    *folded += done;
  }
  return ETRT_OK;
}
