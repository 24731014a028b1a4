/* BatchNormalization folded into the weights and bias of the Conv, ConvTranspose or Gemm
 * before it:
 *   y = (x - mean) * s + shift,  s = scale / sqrt(var + epsilon)
 * so W'[c] = W[c] * s[c] and b'[c] = (b[c] - mean[c]) * s[c] + shift[c]; and a Mul or Add
 * of a scalar or per-channel constant after a Conv or ConvTranspose, the same affine map
 * with s = m, t = 0 or s = 1, t = a. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Where a producer's weights hold output channel c. */
typedef enum etrt_bn_layout {
  ETRT_BN_AXIS0,     /* Conv [M, C/group, k...], Gemm's B with transB: c is axis 0 */
  ETRT_BN_LAST_AXIS, /* Gemm's B [K, N]: c is the last axis */
  ETRT_BN_TRANSPOSED /* ConvTranspose [C, M/group, k...]: c is group * M/group + axis 1 */
} etrt_bn_layout;

/* The producer's output channels, read from its weights (and group); 0 when unknown. */
static int64_t etrt_bn_producer_channels(const etrt_ir_node *p, const etrt_ir_value *w,
                                         etrt_bn_layout layout) {
  if (layout != ETRT_BN_TRANSPOSED) return w->max[layout == ETRT_BN_AXIS0 ? 0 : w->rank - 1];
  int64_t group = etrt_ir_node_attribute_int(p, "group", 1);
  return group > 0 && w->max[0] % group == 0 ? w->max[1] * group : 0;
}

/* Per-channel y = x * s[c] + t[c], the affine map folded into the producer. */
typedef struct etrt_bn_affine {
  int64_t channels;
  double *s, *t;
} etrt_bn_affine;

static etrt_status etrt_bn_affine_alloc(etrt_bn_affine *a, int64_t channels) {
  a->channels = channels;
  a->s = calloc((size_t)channels + 1, sizeof *a->s);
  a->t = calloc((size_t)channels + 1, sizeof *a->t);
  if (a->s == NULL || a->t == NULL) {
    free(a->s);
    free(a->t);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory folding %lld channels",
                      (long long)channels);
  }
  return ETRT_OK;
}

static void etrt_bn_affine_free(etrt_bn_affine *a) {
  free(a->s);
  free(a->t);
}

/* The batch norm's map: s = scale / sqrt(var + epsilon), t = shift - mean * s. */
static bool etrt_bn_read(const etrt_ir_graph *graph, const etrt_ir_node *bn, int64_t channels,
                         const float *f[4], float *epsilon) {
  if (bn->num_inputs < 5) return false;
  for (int i = 0; i < 4; ++i)
    if ((f[i] = etrt_bn_vector(graph, bn->inputs[1 + i], channels, false)) == NULL) return false;
  *epsilon = etrt_ir_node_attribute_float(bn, "epsilon", 1e-5f);
  return true;
}

static void etrt_bn_affine_of_batchnorm(etrt_bn_affine *a, const float *f[4], float epsilon) {
  for (int64_t c = 0; c < a->channels; ++c) {
    a->s[c] = (double)f[0][c] / sqrt((double)f[3][c] + (double)epsilon);
    a->t[c] = (double)f[1][c] - (double)f[2][c] * a->s[c];
  }
}

/* New weight and bias constants for a producer `p` with weight input 1 holding output
 * channel c where `layout` says: W'[c] = W[c] * s[c], b'[c] = b[c] * bias_scale * s[c] +
 * t[c]. */
static etrt_status etrt_bn_fold_weights(etrt_ir_graph *graph, etrt_ir_node *p,
                                        const etrt_bn_affine *f, etrt_bn_layout layout,
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
  if (layout == ETRT_BN_AXIS0) {
    int64_t inner = numel / f->channels;
    for (int64_t c = 0; c < f->channels; ++c) {
      float s = (float)f->s[c];
      for (int64_t k = 0; k < inner; ++k) w_new[c * inner + k] = w_old[c * inner + k] * s;
    }
  } else if (layout == ETRT_BN_TRANSPOSED) {
    int64_t inputs = w.max[0], per_group = w.max[1], inner = numel / (inputs * per_group);
    int64_t inputs_per_group = inputs / (f->channels / per_group);
    for (int64_t i = 0; i < inputs; ++i)
      for (int64_t j = 0; j < per_group; ++j) {
        float s = (float)f->s[i / inputs_per_group * per_group + j];
        const float *from = w_old + (i * per_group + j) * inner;
        float *to = w_new + (i * per_group + j) * inner;
        for (int64_t k = 0; k < inner; ++k) to[k] = from[k] * s;
      }
  } else {
    int64_t rows = numel / f->channels;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < f->channels; ++c)
        w_new[r * f->channels + c] = w_old[r * f->channels + c] * (float)f->s[c];
  }
  snprintf(base, sizeof base, "%s_bn_bias", p->name);
  int64_t dims[1] = {f->channels};
  ETRT_RETURN_IF_ERROR(
      etrt_ir_add_constant(graph, base, ETRT_DTYPE_FLOAT32, 1, dims, &data, &b_id));
  b_new = data;
  for (int64_t c = 0; c < f->channels; ++c) {
    double b = bias ? (double)bias[c] * bias_scale : 0.0;
    b_new[c] = (float)(b * f->s[c] + f->t[c]);
  }
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, p, 1, w_id));
  return etrt_ir_node_set_input(graph, p, 2, b_id);
}

/* The per-channel factor of a Mul or Add constant after a Conv writing `out` (channel
 * axis 1): a scalar, or `channels` values along the output's axis 1 when broadcast
 * (shape [C, 1, ...] or [1, C, 1, ...] right-aligned with the output). Writes the
 * factor of channel c to factor[c]; false when the constant is neither. */
static bool etrt_bn_channel_factor(const etrt_ir_graph *graph, int32_t value, int32_t out,
                                   int64_t channels, double *factor) {
  const etrt_ir_value *v = &graph->values[value];
  const etrt_ir_value *y = &graph->values[out];
  if (!v->is_constant || v->dtype != ETRT_DTYPE_FLOAT32 || v->data == NULL || v->rank > y->rank)
    return false;
  int64_t numel = etrt_ir_value_numel(v);
  const float *data = v->data;
  if (numel == 1) {
    for (int64_t c = 0; c < channels; ++c) factor[c] = data[0];
    return true;
  }
  if (numel != channels || y->rank < 2) return false;
  for (int32_t a = 0; a < v->rank; ++a) {
    int32_t out_axis = y->rank - v->rank + a;
    if (v->max[a] != (out_axis == 1 ? channels : 1)) return false;
  }
  for (int64_t c = 0; c < channels; ++c) factor[c] = data[c];
  return true;
}

/* The producer p writes what node n wrote, and n is gone. */
static void etrt_bn_take_output(etrt_ir_graph *graph, uint32_t n, int32_t p_index) {
  etrt_ir_node *node = &graph->nodes[n];
  etrt_ir_node *p = &graph->nodes[p_index];
  int32_t y = node->outputs[0], x = p->outputs[0];
  node->dead = true;
  for (uint32_t o = 1; o < node->num_outputs; ++o)
    if (node->outputs[o] >= 0) graph->values[node->outputs[o]].producer = -1;
  p->outputs[0] = y;
  graph->values[y].producer = p_index;
  graph->values[x].producer = -1;
}

/* The same dtype, rank and bounds: the Mul or Add does not broadcast the output wider. */
static bool etrt_bn_same_bounds(const etrt_ir_value *a, const etrt_ir_value *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->min[i] != b->min[i] || a->max[i] != b->max[i]) return false;
  return true;
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
  const float *factors[4];
  float epsilon;
  etrt_bn_affine f;
  etrt_status status = ETRT_OK;
  bool transposed = strcmp(p->op_type, "ConvTranspose") == 0;
  if (strcmp(p->op_type, "Conv") == 0 || transposed) {
    etrt_bn_layout layout = transposed ? ETRT_BN_TRANSPOSED : ETRT_BN_AXIS0;
    int64_t channels = w->rank < 3 ? 0 : etrt_bn_producer_channels(p, w, layout);
    if (channels <= 0 || !etrt_bn_read(graph, bn, channels, factors, &epsilon)) return ETRT_OK;
    const float *bias = NULL;
    if (p->num_inputs > 2 && p->inputs[2] >= 0) {
      bias = etrt_bn_vector(graph, p->inputs[2], channels, false);
      if (bias == NULL) return ETRT_OK;
    }
    ETRT_RETURN_IF_ERROR(etrt_bn_affine_alloc(&f, channels));
    etrt_bn_affine_of_batchnorm(&f, factors, epsilon);
    status = etrt_bn_fold_weights(graph, p, &f, layout, bias, 1.0);
  } else if (strcmp(p->op_type, "Gemm") == 0) {
    if (w->rank != 2) return ETRT_OK;
    bool trans_b = etrt_ir_node_attribute_int(p, "transB", 0) != 0;
    int64_t channels = trans_b ? w->max[0] : w->max[1];
    if (!etrt_bn_read(graph, bn, channels, factors, &epsilon)) return ETRT_OK;
    /* y = alpha*A*B + beta*C: scaling B scales alpha*A*B; beta*C moves into the new
     * bias with beta = 1. */
    double beta = etrt_ir_node_attribute_float(p, "beta", 1.0f);
    const float *bias = NULL;
    if (p->num_inputs > 2 && p->inputs[2] >= 0) {
      bias = etrt_bn_vector(graph, p->inputs[2], channels, true);
      if (bias == NULL) return ETRT_OK;
    }
    ETRT_RETURN_IF_ERROR(etrt_bn_affine_alloc(&f, channels));
    etrt_bn_affine_of_batchnorm(&f, factors, epsilon);
    status =
        etrt_bn_fold_weights(graph, p, &f, trans_b ? ETRT_BN_AXIS0 : ETRT_BN_LAST_AXIS, bias, beta);
    etrt_attribute one = {.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 1.0f};
    if (status == ETRT_OK) status = etrt_ir_node_set_attribute(graph, p, &one);
  } else {
    return ETRT_OK;
  }
  etrt_bn_affine_free(&f);
  ETRT_RETURN_IF_ERROR(status);
  etrt_bn_take_output(graph, n, p_index);
  *folded = true;
  return ETRT_OK;
}

/* A Mul or Add of a scalar or per-channel constant after a Conv or ConvTranspose with
 * constant weights (and bias), which nothing else reads: W'[c] = W[c] * m[c] and b' = b *
 * m, or b' = b + a (PaddlePaddle's learnable affine blocks, a scale after a convolution,
 * and the bias its exporter adds after a ConvTranspose). */
static etrt_status etrt_bn_try_scale_shift(etrt_ir_graph *graph, uint32_t n, bool *folded) {
  *folded = false;
  etrt_ir_node *node = &graph->nodes[n];
  bool mul = strcmp(node->op_type, "Mul") == 0;
  if (node->num_inputs != 2 || node->num_outputs != 1 || node->outputs[0] < 0) return ETRT_OK;
  for (int side = 0; side < 2; ++side) {
    int32_t x = node->inputs[side], k = node->inputs[1 - side];
    if (x < 0 || k < 0 || graph->values[x].is_constant) continue;
    int32_t p_index = graph->values[x].producer;
    if (p_index < 0 || etrt_ir_single_consumer(graph, x) != (int32_t)n) continue;
    etrt_ir_node *p = &graph->nodes[p_index];
    bool transposed = strcmp(p->op_type, "ConvTranspose") == 0;
    if (p->dead || (strcmp(p->op_type, "Conv") != 0 && !transposed) || p->num_inputs < 2 ||
        p->inputs[1] < 0 || p->num_outputs != 1)
      continue;
    const etrt_ir_value *w = &graph->values[p->inputs[1]];
    if (!w->is_constant || w->dtype != ETRT_DTYPE_FLOAT32 || w->rank < 3 ||
        etrt_ir_value_numel(w) <= 0 ||
        !etrt_bn_same_bounds(&graph->values[x], &graph->values[node->outputs[0]]))
      continue;
    etrt_bn_layout layout = transposed ? ETRT_BN_TRANSPOSED : ETRT_BN_AXIS0;
    int64_t channels = etrt_bn_producer_channels(p, w, layout);
    const float *bias = NULL;
    if (channels <= 0 || (p->num_inputs > 2 && p->inputs[2] >= 0 &&
                          (bias = etrt_bn_vector(graph, p->inputs[2], channels, false)) == NULL))
      continue;
    etrt_bn_affine f;
    ETRT_RETURN_IF_ERROR(etrt_bn_affine_alloc(&f, channels));
    double *factor = mul ? f.s : f.t;
    if (!etrt_bn_channel_factor(graph, k, x, channels, factor)) {
      etrt_bn_affine_free(&f);
      continue;
    }
    if (!mul)
      for (int64_t c = 0; c < channels; ++c) f.s[c] = 1.0;
    etrt_status status = etrt_bn_fold_weights(graph, &graph->nodes[p_index], &f, layout, bias, 1.0);
    etrt_bn_affine_free(&f);
    ETRT_RETURN_IF_ERROR(status);
    etrt_bn_take_output(graph, n, p_index);
    *folded = true;
    return ETRT_OK;
  }
  return ETRT_OK;
}

etrt_status etrt_pass_fold_batchnorm(etrt_ir_graph *graph, uint32_t *folded,
                                     uint32_t *scales_folded) {
  *folded = *scales_folded = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    bool done;
    if (strcmp(node->op_type, "BatchNormalization") == 0) {
      ETRT_RETURN_IF_ERROR(etrt_bn_try(graph, n, &done));
      *folded += done;
    } else if (strcmp(node->op_type, "Mul") == 0 || strcmp(node->op_type, "Add") == 0) {
      ETRT_RETURN_IF_ERROR(etrt_bn_try_scale_shift(graph, n, &done));
      *scales_folded += done;
    }
  }
  return ETRT_OK;
}
