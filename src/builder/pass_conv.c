/* Conv (+ Add of a residual) (+ an activation) -> EtrtFusedConv: the epilogue is
 * applied while the output is still in cache (by oneDNN's post-ops on the CPU, by
 * cuDNN's fused convolution on the GPU) instead of in one or two more passes over it. The last node
 * of the chain becomes the EtrtFusedConv, so that the residual, which may be computed after the
 * Conv (a ResNet shortcut's own convolution), is written before it is read. */
#include <math.h>
#include <string.h>

#include "builder/passes.h"
#include "engine/op.h"

/* A float32 value whose every axis matches `like`'s bounds. */
static bool etrt_conv_same_shape(const etrt_ir_graph *graph, int32_t a, int32_t like) {
  if (a < 0 || like < 0) return false;
  const etrt_ir_value *x = &graph->values[a], *y = &graph->values[like];
  if (x->dtype != ETRT_DTYPE_FLOAT32 || x->rank != y->rank) return false;
  for (int32_t i = 0; i < x->rank; ++i)
    if (x->min[i] != y->min[i] || x->max[i] != y->max[i]) return false;
  return true;
}

/* The live readers of `value` (up to `most`); returns how many, or most + 1 when
 * there are more or when a graph output is the value. */
static uint32_t etrt_conv_readers(const etrt_ir_graph *graph, int32_t value, int32_t *readers,
                                  uint32_t most) {
  if (etrt_ir_is_output(graph, value)) return most + 1;
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      if (node->inputs[i] != value) continue;
      if (count == most) return most + 1;
      readers[count++] = (int32_t)n;
    }
  }
  return count;
}

/* A constant float32 scalar (rank 0 or one element), or NAN when it is not one; an
 * omitted input gives `absent`. */
static float etrt_conv_scalar(const etrt_ir_graph *graph, const etrt_ir_node *node, uint32_t i,
                              float absent) {
  if (i >= node->num_inputs || node->inputs[i] < 0) return absent;
  const etrt_ir_value *v = &graph->values[node->inputs[i]];
  if (!v->is_constant || v->dtype != ETRT_DTYPE_FLOAT32 || v->nbytes != sizeof(float)) return NAN;
  float f;
  memcpy(&f, v->data, sizeof f);
  return f;
}

typedef struct etrt_conv_chain {
  int32_t last;    /* node that becomes the EtrtFusedConv */
  int32_t dead[5]; /* nodes the fusion removes besides the Conv */
  uint32_t dead_count;
  int32_t residual; /* -1: none */
  const char *activation;
  float min, max;
  float scale, shift; /* the affine block after the activation */
} etrt_conv_chain;

/* The activation reading `value` alone (or, for Silu, with the Mul), if any. */
static void etrt_conv_match_activation(const etrt_ir_graph *graph, int32_t value,
                                       bool any_activation, etrt_conv_chain *c) {
  int32_t readers[2];
  uint32_t count = etrt_conv_readers(graph, value, readers, 2);
  if (count == 1) {
    const etrt_ir_node *a = &graph->nodes[readers[0]];
    if (a->num_outputs != 1 || a->outputs[0] < 0 || a->inputs[0] != value) return;
    if (strcmp(a->op_type, "Relu") == 0) {
      c->activation = "Relu";
    } else if (!any_activation) {
      return;
    } else if (strcmp(a->op_type, "HardSwish") == 0) {
      c->activation = "HardSwish";
    } else if (strcmp(a->op_type, "Sigmoid") == 0) {
      c->activation = "Sigmoid";
    } else if (strcmp(a->op_type, "Clip") == 0) {
      const etrt_attribute *lo = etrt_ir_node_attribute(a, "min");
      const etrt_attribute *hi = etrt_ir_node_attribute(a, "max");
      float min = etrt_conv_scalar(graph, a, 1, lo ? lo->f : -INFINITY);
      float max = etrt_conv_scalar(graph, a, 2, hi ? hi->f : INFINITY);
      if (isnan(min) || isnan(max) || !(min <= max)) return;
      c->activation = "Clip";
      c->min = min;
      c->max = max;
    } else {
      return;
    }
    if (c->last >= 0) c->dead[c->dead_count++] = c->last;
    c->last = readers[0];
    return;
  }
  if (count != 2 || !any_activation) return;
  /* Silu: Sigmoid(t) read only by Mul(t, Sigmoid(t)) (either order). */
  for (int k = 0; k < 2; ++k) {
    const etrt_ir_node *s = &graph->nodes[readers[k]], *m = &graph->nodes[readers[1 - k]];
    if (strcmp(s->op_type, "Sigmoid") != 0 || strcmp(m->op_type, "Mul") != 0 ||
        s->num_outputs != 1 || s->outputs[0] < 0 || m->num_inputs != 2 || m->num_outputs != 1 ||
        m->outputs[0] < 0 || readers[k] > readers[1 - k])
      continue;
    int32_t sv = s->outputs[0];
    bool operands = (m->inputs[0] == value && m->inputs[1] == sv) ||
                    (m->inputs[1] == value && m->inputs[0] == sv);
    if (!operands || etrt_ir_single_consumer(graph, sv) != readers[1 - k]) continue;
    c->activation = "Silu";
    if (c->last >= 0) c->dead[c->dead_count++] = c->last;
    c->dead[c->dead_count++] = readers[k];
    c->last = readers[1 - k];
    return;
  }
}

/* Mul by a constant scalar, then Add of one (either may be missing), reading the
 * activation's output alone: PaddlePaddle's learnable affine block after every
 * activation of its OCR recognisers, which also kept the convolutions around it from
 * chaining their blocked layouts. */
static void etrt_conv_match_affine(const etrt_ir_graph *graph, etrt_conv_chain *c) {
  static const char *const ops[2] = {"Mul", "Add"};
  for (int step = 0; step < 2; ++step) {
    int32_t value = graph->nodes[c->last].outputs[0];
    int32_t reader = etrt_ir_single_consumer(graph, value);
    if (reader < 0) return;
    const etrt_ir_node *a = &graph->nodes[reader];
    if (strcmp(a->op_type, ops[step]) != 0 || a->domain[0] != '\0' || a->num_inputs != 2 ||
        a->num_outputs != 1 || a->outputs[0] < 0 ||
        !etrt_conv_same_shape(graph, a->outputs[0], value))
      continue;
    uint32_t other = a->inputs[0] == value ? 1 : 0;
    if (a->inputs[1 - other] != value || a->inputs[other] == value) continue;
    float f = etrt_conv_scalar(graph, a, other, NAN);
    if (!isfinite(f)) continue;
    if (step == 0)
      c->scale = f;
    else
      c->shift = f;
    c->dead[c->dead_count++] = c->last;
    c->last = reader;
  }
}

static etrt_status etrt_conv_fuse(etrt_ir_graph *graph, uint32_t n, const etrt_conv_chain *c) {
  etrt_ir_node *conv = &graph->nodes[n], *last = &graph->nodes[c->last];
  int32_t x = conv->inputs[0], w = conv->inputs[1];
  int32_t b = conv->num_inputs > 2 ? conv->inputs[2] : -1;
  int32_t y = last->outputs[0];
  last->op_type = "EtrtFusedConv";
  last->domain = "";
  last->name = conv->name;
  last->num_inputs = 0;
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, last, 0, x));
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, last, 1, w));
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, last, 2, b));
  if (c->residual >= 0) ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, last, 3, c->residual));
  last->num_attributes = 0;
  for (uint32_t a = 0; a < conv->num_attributes; ++a)
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, last, &conv->attributes[a]));
  etrt_attribute act = {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = c->activation};
  ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, last, &act));
  if (strcmp(c->activation, "Clip") == 0) {
    etrt_attribute lo = {.name = "activation_min", .kind = ETRT_ATTRIBUTE_FLOAT, .f = c->min};
    etrt_attribute hi = {.name = "activation_max", .kind = ETRT_ATTRIBUTE_FLOAT, .f = c->max};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, last, &lo));
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, last, &hi));
  }
  if (c->scale != 1.0f) {
    etrt_attribute a = {.name = "activation_scale", .kind = ETRT_ATTRIBUTE_FLOAT, .f = c->scale};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, last, &a));
  }
  if (c->shift != 0.0f) {
    etrt_attribute a = {.name = "activation_shift", .kind = ETRT_ATTRIBUTE_FLOAT, .f = c->shift};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, last, &a));
  }
  graph->values[conv->outputs[0]].producer = -1;
  graph->values[y].producer = c->last;
  conv->dead = true;
  for (uint32_t i = 0; i < c->dead_count; ++i) {
    etrt_ir_node *d = &graph->nodes[c->dead[i]];
    for (uint32_t o = 0; o < d->num_outputs; ++o)
      if (d->outputs[o] >= 0) graph->values[d->outputs[o]].producer = -1;
    d->dead = true;
  }
  return ETRT_OK;
}

etrt_status etrt_pass_fuse_conv(etrt_ir_graph *graph, bool any_activation, uint32_t *fused) {
  *fused = 0;
  if (etrt_op_find("EtrtFusedConv") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *conv = &graph->nodes[n];
    if (conv->dead || strcmp(conv->op_type, "Conv") != 0 || conv->domain[0] != '\0' ||
        conv->num_inputs < 2 || conv->num_inputs > 3 || conv->num_outputs != 1 ||
        conv->outputs[0] < 0 || graph->values[conv->outputs[0]].dtype != ETRT_DTYPE_FLOAT32)
      continue;
    int32_t y = conv->outputs[0];
    etrt_conv_chain c = {
        .last = -1, .residual = -1, .activation = "NONE", .scale = 1.0f, .shift = 0.0f};
    int32_t reader = etrt_ir_single_consumer(graph, y);
    if (reader >= 0) {
      const etrt_ir_node *add = &graph->nodes[reader];
      if (strcmp(add->op_type, "Add") == 0 && add->num_inputs == 2 && add->num_outputs == 1 &&
          add->outputs[0] >= 0) {
        int32_t other = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
        if (other != y && !graph->values[other].is_constant &&
            etrt_conv_same_shape(graph, other, y) &&
            etrt_conv_same_shape(graph, add->outputs[0], y)) {
          c.residual = other;
          c.last = reader;
          y = add->outputs[0];
        }
      }
    }
    etrt_conv_match_activation(graph, y, any_activation, &c);
    if (c.last < 0) continue;
    if (any_activation && strcmp(c.activation, "NONE") != 0) etrt_conv_match_affine(graph, &c);
    ETRT_RETURN_IF_ERROR(etrt_conv_fuse(graph, n, &c));
    ++*fused;
  }
  return ETRT_OK;
}
