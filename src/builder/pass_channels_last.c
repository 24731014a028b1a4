/* Channels-last regions for GPU plans. cuDNN's tensor-core convolutions work on NHWC
 * activations: given NCHW, they convert every input and output around each call. This pass
 * finds the largest connected sets of 4-D activations that can live in NHWC and stores them
 * so, converting once where a region is entered or left.
 *
 * Members of a region: Conv and EtrtFusedConv (2-D, ungrouped, constant weights, pads
 * cuDNN can express), MaxPool (without Indices), AveragePool, GlobalAveragePool,
 * GlobalMaxPool, which take the node attribute channels_last = 1; and, unchanged but for
 * where their tensors' channels lie, elementwise unary operators, binary ones whose
 * operands are 4-D, scalars or constants (a per-channel scale is stored permuted), and
 * Concat / Split on the channel axis (which becomes axis 3). A BatchNormalization the folding
 * left (not right after a convolution) joins as a per-channel Mul and Add.
 *
 * Why an attribute, not NHWC variants of the op types: the layout-aware operators keep their
 * one definition, shape inference and row per executor (the attribute only changes where the
 * kernels find the channels), the layout-blind ones need nothing at all, and a plan reader
 * that meets the attribute on an op without channels-last kernels refuses it by name
 * (etrt_op_check_layout) instead of silently running NCHW code on NHWC data.
 *
 * Values inside a region carry their physical NHWC dims; a Conv's weights are permuted at
 * build time into [M, kH, kW, C] (cuDNN's NHWC filter order). A Transpose enters a region
 * and one leaves it, except where the value leaving has 1x1 spatial dims (a global pool's
 * output): its bytes are the same in both layouts and a Reshape leaves instead. A region is
 * converted only when it saves conversions: fewer Transposes than twice its convolutions
 * (cuDNN would otherwise convert the input and the output of each). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder/passes.h"

typedef enum etrt_cl_role {
  ETRT_CL_NONE = 0,
  ETRT_CL_CONV,   /* takes the attribute; counts toward a region's worth */
  ETRT_CL_POOL,   /* takes the attribute */
  ETRT_CL_BLIND,  /* elementwise: nothing changes */
  ETRT_CL_CONCAT, /* Concat / Split on the channel axis: the axis becomes 3 */
  ETRT_CL_NORM,   /* BatchNormalization (inference): becomes a Mul and an Add per channel */
} etrt_cl_role;

typedef struct etrt_cl {
  etrt_ir_graph *graph;
  uint8_t *role;       /* per node */
  uint32_t *slot_at;   /* per node: where its inputs' entries of `slot` begin */
  uint8_t *slot;       /* per node input: an activation of a candidate (etrt_cl_layout_input) */
  uint8_t *keep;       /* per root: the component is converted */
  int32_t *parent;     /* per value: union-find over the values a member ties together */
  uint8_t *member;     /* per value: a layout operand of some candidate node */
  uint32_t *convs;     /* per root: convolutions of the component */
  uint32_t *transpose; /* per root: Transposes the component would need */
  int32_t *nhwc;       /* per value: its channels-last copy, or -1 */
  int32_t *anchor;     /* per added node: the node it follows (-1: the start) */
  uint32_t first_added, added_capacity;
} etrt_cl;

static bool etrt_cl_is_float(etrt_dtype t) {
  return t == ETRT_DTYPE_FLOAT32 || t == ETRT_DTYPE_FLOAT16 || t == ETRT_DTYPE_BFLOAT16;
}

static bool etrt_cl_same_shape(const etrt_ir_value *a, const etrt_ir_value *b) {
  if (a->rank != b->rank || a->dtype != b->dtype) return false;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->min[i] != b->min[i] || a->max[i] != b->max[i]) return false;
  return true;
}

static bool etrt_cl_is_4d(const etrt_ir_graph *g, int32_t v) {
  return v >= 0 && g->values[v].rank == 4 && etrt_cl_is_float(g->values[v].dtype);
}

/* A value of one element whatever its rank: it broadcasts the same way in both layouts. */
static bool etrt_cl_is_scalar(const etrt_ir_graph *g, int32_t v) {
  if (v < 0 || g->values[v].rank < 0 || g->values[v].rank > 4) return false;
  for (int32_t i = 0; i < g->values[v].rank; ++i)
    if (g->values[v].max[i] != 1) return false;
  return true;
}

static const char *const etrt_cl_unary[] = {
    "Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "Clip", "LeakyRelu", "Elu",  "Selu",
    "Gelu", "Abs",     "Neg",  "Exp",       "Sqrt",        "Erf",  "Softplus",  "Silu", NULL};
static const char *const etrt_cl_binary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", NULL};

static bool etrt_cl_listed(const char *const *list, const char *op) {
  for (; *list != NULL; ++list)
    if (strcmp(*list, op) == 0) return true;
  return false;
}

/* Conv / EtrtFusedConv that cuDNN runs in NHWC as it stands. */
static bool etrt_cl_conv_fits(const etrt_ir_graph *g, const etrt_ir_node *n) {
  if (n->num_inputs < 2 || n->num_outputs != 1 || !etrt_cl_is_4d(g, n->inputs[0]) ||
      !etrt_cl_is_4d(g, n->outputs[0]))
    return false;
  const etrt_ir_value *w = &g->values[n->inputs[1]];
  if (!w->is_constant || w->rank != 4 || w->dtype != g->values[n->inputs[0]].dtype) return false;
  if (etrt_ir_node_attribute_int(n, "group", 1) != 1) return false;
  const etrt_attribute *pad = etrt_ir_node_attribute(n, "auto_pad");
  if (pad != NULL && pad->s != NULL && strcmp(pad->s, "NOTSET") != 0 &&
      strcmp(pad->s, "VALID") != 0)
    return false;
  const etrt_attribute *pads = etrt_ir_node_attribute(n, "pads");
  if (pads != NULL &&
      (pads->count != 4 || pads->ints[0] != pads->ints[2] || pads->ints[1] != pads->ints[3]))
    return false;
  if (strcmp(n->op_type, "EtrtFusedConv") == 0) {
    const etrt_attribute *act = etrt_ir_node_attribute(n, "activation");
    if (act != NULL &&
        (act->s == NULL || (strcmp(act->s, "NONE") != 0 && strcmp(act->s, "Relu") != 0)))
      return false;
    if (n->num_inputs > 3 && n->inputs[3] >= 0 &&
        !etrt_cl_same_shape(&g->values[n->inputs[3]], &g->values[n->outputs[0]]))
      return false;
  }
  return true;
}

static etrt_cl_role etrt_cl_classify(const etrt_ir_graph *g, const etrt_ir_node *n) {
  if (n->dead || n->domain[0] != '\0' || n->num_bodies > 0 || n->num_outputs < 1)
    return ETRT_CL_NONE;
  const char *op = n->op_type;
  if (strcmp(op, "Conv") == 0 || strcmp(op, "EtrtFusedConv") == 0)
    return etrt_cl_conv_fits(g, n) ? ETRT_CL_CONV : ETRT_CL_NONE;
  if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0 ||
      strcmp(op, "GlobalAveragePool") == 0 || strcmp(op, "GlobalMaxPool") == 0) {
    bool one = n->num_outputs == 1 || (n->num_outputs == 2 && n->outputs[1] < 0);
    return one && n->num_inputs == 1 && etrt_cl_is_4d(g, n->inputs[0]) &&
                   etrt_cl_is_4d(g, n->outputs[0])
               ? ETRT_CL_POOL
               : ETRT_CL_NONE;
  }
  if (strcmp(op, "BatchNormalization") == 0) {
    if (n->num_inputs != 5 || !etrt_cl_is_4d(g, n->inputs[0]) ||
        g->values[n->inputs[0]].dtype != ETRT_DTYPE_FLOAT32 ||
        etrt_ir_node_attribute_int(n, "training_mode", 0) != 0)
      return ETRT_CL_NONE;
    for (uint32_t o = 1; o < n->num_outputs; ++o)
      if (n->outputs[o] >= 0) return ETRT_CL_NONE;
    int64_t channels = g->values[n->inputs[0]].max[1];
    for (uint32_t i = 1; i < 5; ++i) {
      const etrt_ir_value *p = n->inputs[i] >= 0 ? &g->values[n->inputs[i]] : NULL;
      if (p == NULL || !p->is_constant || p->dtype != ETRT_DTYPE_FLOAT32 || p->rank != 1 ||
          p->max[0] != channels)
        return ETRT_CL_NONE;
    }
    return ETRT_CL_NORM;
  }
  if (strcmp(op, "Split") == 0) {
    int64_t axis = etrt_ir_node_attribute_int(n, "axis", 0);
    if ((axis != 1 && axis != -3) || n->num_inputs < 1 || !etrt_cl_is_4d(g, n->inputs[0]))
      return ETRT_CL_NONE;
    for (uint32_t o = 0; o < n->num_outputs; ++o)
      if (!etrt_cl_is_4d(g, n->outputs[o])) return ETRT_CL_NONE;
    return ETRT_CL_CONCAT;
  }
  if (n->num_outputs != 1 || !etrt_cl_is_4d(g, n->outputs[0])) return ETRT_CL_NONE;
  const etrt_ir_value *y = &g->values[n->outputs[0]];
  if (etrt_cl_listed(etrt_cl_unary, op))
    return n->num_inputs >= 1 && n->inputs[0] >= 0 &&
                   etrt_cl_same_shape(&g->values[n->inputs[0]], y)
               ? ETRT_CL_BLIND
               : ETRT_CL_NONE;
  if (etrt_cl_listed(etrt_cl_binary, op) && n->num_inputs == 2) {
    /* A 4-D operand broadcasts the same way once both are permuted ([N, C, 1, 1] against
     * [N, C, H, W] becomes [N, 1, 1, C] against [N, H, W, C], a squeeze-excitation scale);
     * a constant of lower rank is stored as its 4-D form permuted. */
    uint32_t full = 0;
    for (uint32_t i = 0; i < 2; ++i) {
      int32_t v = n->inputs[i];
      if (etrt_cl_is_4d(g, v))
        ++full;
      else if (!etrt_cl_is_scalar(g, v) &&
               !(v >= 0 && g->values[v].is_constant && g->values[v].rank >= 1 &&
                 etrt_cl_is_float(g->values[v].dtype)))
        return ETRT_CL_NONE;
    }
    return full > 0 ? ETRT_CL_BLIND : ETRT_CL_NONE;
  }
  if (strcmp(op, "Concat") == 0) {
    int64_t axis = etrt_ir_node_attribute_int(n, "axis", 0);
    if (axis != 1 && axis != -3) return ETRT_CL_NONE;
    for (uint32_t i = 0; i < n->num_inputs; ++i)
      if (!etrt_cl_is_4d(g, n->inputs[i])) return ETRT_CL_NONE;
    return ETRT_CL_CONCAT;
  }
  return ETRT_CL_NONE;
}

/* Whether input `i` of a node of `role` is one of its activations (whose layout follows
 * the region's) rather than a weight, bias or scalar. */
static bool etrt_cl_layout_input(const etrt_ir_graph *g, const etrt_ir_node *n, etrt_cl_role role,
                                 uint32_t i) {
  int32_t v = n->inputs[i];
  if (v < 0) return false;
  switch (role) {
    case ETRT_CL_CONV:
      return i == 0 || i == 3;
    case ETRT_CL_POOL:
    case ETRT_CL_NORM:
      return i == 0;
    case ETRT_CL_BLIND:
      return etrt_cl_is_4d(g, v) && (i == 0 || !etrt_cl_listed(etrt_cl_unary, n->op_type));
    case ETRT_CL_CONCAT: /* Split's second input is its sizes */
      return strcmp(n->op_type, "Split") != 0 || i == 0;
    default:
      return false;
  }
}

static int32_t etrt_cl_find(etrt_cl *c, int32_t v) {
  while (c->parent[v] != v) {
    c->parent[v] = c->parent[c->parent[v]];
    v = c->parent[v];
  }
  return v;
}

static void etrt_cl_union(etrt_cl *c, int32_t a, int32_t b) {
  a = etrt_cl_find(c, a);
  b = etrt_cl_find(c, b);
  if (a != b) c->parent[b] = a;
}

/* Whether a value produced inside a region must be converted back: something outside
 * reads it, or it is a graph output. */
static bool etrt_cl_read_outside(const etrt_cl *c, int32_t v) {
  const etrt_ir_graph *g = c->graph;
  if (etrt_ir_is_output(g, v)) return true;
  for (uint32_t n = 0; n < c->first_added; ++n) {
    const etrt_ir_node *node = &g->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i)
      if (node->inputs[i] == v && !c->slot[c->slot_at[n] + i]) return true;
  }
  return false;
}

/* A value whose spatial axes are 1: the same bytes in both layouts. */
static bool etrt_cl_free_exit(const etrt_ir_value *v) {
  return v->max[2] == 1 && v->max[3] == 1 && v->min[1] == v->max[1];
}

static bool etrt_cl_produced_inside(const etrt_cl *c, int32_t v) {
  int32_t p = c->graph->values[v].producer;
  return p >= 0 && (uint32_t)p < c->first_added && c->role[p] != ETRT_CL_NONE;
}

/* src (dims d, NCHW / KCRS order, `elem` bytes each) into dst in NHWC / KRSC order. */
static void etrt_cl_permute(const void *src, const int64_t *d, size_t elem, void *dst) {
  const char *s = src;
  char *o = dst;
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          memcpy(o + (size_t)(((n * d[2] + h) * d[3] + w) * d[1] + c) * elem,
                 s + (size_t)(((n * d[1] + c) * d[2] + h) * d[3] + w) * elem, elem);
}

/* The dims of NCHW `v` in NHWC order into a new value named after it. */
static etrt_status etrt_cl_new_value(etrt_ir_graph *g, int32_t v, const char *suffix,
                                     int32_t *out) {
  const char *name = etrt_ir_printf(g, "%s/%s", g->values[v].name, suffix);
  if (name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(g, name, out));
  etrt_ir_value *from = &g->values[v], *to = &g->values[*out];
  static const int perm[4] = {0, 2, 3, 1};
  to->dtype = from->dtype;
  to->rank = 4;
  for (int a = 0; a < 4; ++a) {
    to->min[a] = from->min[perm[a]];
    to->max[a] = from->max[perm[a]];
  }
  return ETRT_OK;
}

/* A constant's channels-last copy (made once per constant): of its 4-D form (leading axes
 * of 1 added, as broadcasting reads it), permuted. */
static etrt_status etrt_cl_constant(etrt_cl *c, int32_t v, int32_t *out) {
  etrt_ir_graph *g = c->graph;
  if (c->nhwc[v] >= 0) {
    *out = c->nhwc[v];
    return ETRT_OK;
  }
  const etrt_ir_value *from = &g->values[v];
  int64_t nchw[4] = {1, 1, 1, 1};
  for (int32_t a = 0; a < from->rank && from->rank <= 4; ++a)
    nchw[4 - from->rank + a] = from->max[a];
  int64_t dims[4] = {nchw[0], nchw[2], nchw[3], nchw[1]};
  const char *name = etrt_ir_printf(g, "%s/nhwc", from->name);
  if (name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  void *data;
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_constant(g, name, from->dtype, 4, dims, &data, &id));
  from = &g->values[v];
  etrt_cl_permute(from->data, nchw, etrt_dtype_size(from->dtype), data);
  c->nhwc[v] = *out = id;
  return ETRT_OK;
}

/* Adds a node after `after` (-1: first), which is where etrt_cl_reorder places it. */
static etrt_status etrt_cl_add_node(etrt_cl *c, const char *op, const char *name, uint32_t count,
                                    const int32_t *inputs, int32_t output,
                                    const etrt_attribute *attribute, int32_t after) {
  etrt_ir_graph *g = c->graph;
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_node(g, op, "", name, count, inputs, 1, &output,
                                        attribute != NULL, attribute, &id));
  uint32_t k = (uint32_t)id - c->first_added;
  if (k >= c->added_capacity) {
    uint32_t capacity = 2 * k + 16;
    int32_t *grown = realloc(c->anchor, capacity * sizeof *grown);
    if (grown == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
    c->anchor = grown;
    c->added_capacity = capacity;
  }
  c->anchor[k] = after;
  return ETRT_OK;
}

static const int64_t etrt_cl_to_nhwc[4] = {0, 2, 3, 1};
static const int64_t etrt_cl_to_nchw[4] = {0, 3, 1, 2};

/* Moves value v of a converted region into NHWC: its channels-last copy, the conversion
 * in or out, and the region's readers switched to the copy. */
static etrt_status etrt_cl_convert_value(etrt_cl *c, int32_t v, etrt_pass_channels_last_stats *st) {
  etrt_ir_graph *g = c->graph;
  int32_t copy;
  if (g->values[v].is_constant) {
    ETRT_RETURN_IF_ERROR(etrt_cl_constant(c, v, &copy));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_cl_new_value(g, v, "nhwc", &copy));
    int32_t p = g->values[v].producer;
    if (etrt_cl_produced_inside(c, v)) {
      etrt_ir_node *producer = &g->nodes[p];
      for (uint32_t o = 0; o < producer->num_outputs; ++o)
        if (producer->outputs[o] == v) producer->outputs[o] = copy;
      g->values[copy].producer = p;
      g->values[v].producer = -1;
      if (etrt_cl_read_outside(c, v)) {
        const etrt_ir_value *value = &g->values[v];
        const char *name = etrt_ir_printf(g, "%s/to_nchw", value->name);
        if (name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
        if (etrt_cl_free_exit(value)) {
          int64_t shape[4] = {0, value->max[1], 1, 1};
          int64_t dims[1] = {4};
          void *data;
          int32_t shape_id;
          ETRT_RETURN_IF_ERROR(
              etrt_ir_add_constant(g, name, ETRT_DTYPE_INT64, 1, dims, &data, &shape_id));
          memcpy(data, shape, sizeof shape);
          ETRT_RETURN_IF_ERROR(
              etrt_cl_add_node(c, "Reshape", name, 2, (int32_t[]){copy, shape_id}, v, NULL, p));
          ++st->reshapes;
        } else {
          etrt_attribute perm = {
              .name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = etrt_cl_to_nchw};
          ETRT_RETURN_IF_ERROR(etrt_cl_add_node(c, "Transpose", name, 1, &copy, v, &perm, p));
          ++st->transposes;
        }
      }
    } else {
      const char *name = etrt_ir_printf(g, "%s/to_nhwc", g->values[v].name);
      if (name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
      etrt_attribute perm = {
          .name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = etrt_cl_to_nhwc};
      ETRT_RETURN_IF_ERROR(etrt_cl_add_node(c, "Transpose", name, 1, &v, copy, &perm, p));
      ++st->transposes;
    }
  }
  for (uint32_t n = 0; n < c->first_added; ++n) {
    etrt_ir_node *node = &g->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i)
      if (node->inputs[i] == v && c->slot[c->slot_at[n] + i]) node->inputs[i] = copy;
  }
  return ETRT_OK;
}

/* A BatchNormalization left after the folding (one not right after a convolution) as
 * y = x * s + t with s = scale / sqrt(var + epsilon), t = B - mean * s as [1, 1, 1, C]
 * constants: two elementwise nodes that need no channels-last kernel of their own. */
static etrt_status etrt_cl_split_norm(etrt_cl *c, uint32_t n) {
  etrt_ir_graph *g = c->graph;
  const etrt_ir_node *bn = &g->nodes[n];
  int32_t x = bn->inputs[0], y = bn->outputs[0];
  int64_t channels = g->values[x].max[3];
  int64_t dims[4] = {1, 1, 1, channels};
  const char *name = bn->name;
  double epsilon = etrt_ir_node_attribute_float(bn, "epsilon", 1e-5f);
  const float *f[4];
  for (int i = 0; i < 4; ++i) f[i] = g->values[bn->inputs[1 + i]].data;
  const char *names[5] = {etrt_ir_printf(g, "%s/scale", name), etrt_ir_printf(g, "%s/shift", name),
                          etrt_ir_printf(g, "%s/scaled", name), etrt_ir_printf(g, "%s/mul", name),
                          etrt_ir_printf(g, "%s/add", name)};
  for (int i = 0; i < 5; ++i)
    if (names[i] == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  void *sd, *td;
  int32_t s_id, t_id, scaled;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_constant(g, names[0], ETRT_DTYPE_FLOAT32, 4, dims, &sd, &s_id));
  ETRT_RETURN_IF_ERROR(etrt_ir_add_constant(g, names[1], ETRT_DTYPE_FLOAT32, 4, dims, &td, &t_id));
  for (int64_t k = 0; k < channels; ++k) {
    double scale = (double)f[0][k] / sqrt((double)f[3][k] + epsilon);
    ((float *)sd)[k] = (float)scale;
    ((float *)td)[k] = (float)((double)f[1][k] - (double)f[2][k] * scale);
  }
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(g, names[2], &scaled));
  g->values[scaled].dtype = g->values[y].dtype;
  g->values[scaled].rank = 4;
  memcpy(g->values[scaled].min, g->values[y].min, sizeof g->values[y].min);
  memcpy(g->values[scaled].max, g->values[y].max, sizeof g->values[y].max);
  g->nodes[n].dead = true;
  g->values[y].producer = -1;
  ETRT_RETURN_IF_ERROR(
      etrt_cl_add_node(c, "Mul", names[3], 2, (int32_t[]){x, s_id}, scaled, NULL, (int32_t)n));
  return etrt_cl_add_node(c, "Add", names[4], 2, (int32_t[]){scaled, t_id}, y, NULL, (int32_t)n);
}

/* A member node's own change: the attribute, the permuted weights, the channel axis. */
static etrt_status etrt_cl_convert_node(etrt_cl *c, uint32_t n) {
  etrt_ir_graph *g = c->graph;
  if (c->role[n] == ETRT_CL_NORM) return etrt_cl_split_norm(c, n);
  etrt_ir_node *node = &g->nodes[n];
  if (c->role[n] == ETRT_CL_CONV || c->role[n] == ETRT_CL_POOL) {
    etrt_attribute a = {.name = "channels_last", .kind = ETRT_ATTRIBUTE_INT, .i = 1};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(g, node, &a));
  }
  if (c->role[n] == ETRT_CL_CONV) {
    int32_t w;
    ETRT_RETURN_IF_ERROR(etrt_cl_constant(c, node->inputs[1], &w));
    g->nodes[n].inputs[1] = w;
  }
  if (c->role[n] == ETRT_CL_BLIND && etrt_cl_listed(etrt_cl_binary, node->op_type)) {
    for (uint32_t i = 0; i < g->nodes[n].num_inputs; ++i) {
      int32_t v = g->nodes[n].inputs[i], w;
      if (c->slot[c->slot_at[n] + i] || etrt_cl_is_scalar(g, v)) continue;
      ETRT_RETURN_IF_ERROR(etrt_cl_constant(c, v, &w)); /* a per-channel constant, say */
      g->nodes[n].inputs[i] = w;
    }
  }
  if (c->role[n] == ETRT_CL_CONCAT) {
    etrt_attribute a = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = 3};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(g, &g->nodes[n], &a));
  }
  return ETRT_OK;
}

/* Puts each added node right after its anchor, keeping the array a topological order. */
static etrt_status etrt_cl_reorder(etrt_cl *c) {
  etrt_ir_graph *g = c->graph;
  uint32_t total = g->num_nodes, added = total - c->first_added;
  if (added == 0) return ETRT_OK;
  etrt_ir_node *sorted = malloc(total * sizeof *sorted);
  int32_t *renumber = malloc(total * sizeof *renumber);
  if (sorted == NULL || renumber == NULL) {
    free(sorted);
    free(renumber);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  }
  uint32_t at = 0;
  for (int32_t n = -1; n < (int32_t)c->first_added; ++n) {
    if (n >= 0) {
      renumber[n] = (int32_t)at;
      sorted[at++] = g->nodes[n];
    }
    for (uint32_t k = 0; k < added; ++k) {
      if (c->anchor[k] != n) continue;
      renumber[c->first_added + k] = (int32_t)at;
      sorted[at++] = g->nodes[c->first_added + k];
    }
  }
  memcpy(g->nodes, sorted, total * sizeof *sorted);
  for (uint32_t v = 0; v < g->num_values; ++v)
    if (g->values[v].producer >= 0) g->values[v].producer = renumber[g->values[v].producer];
  free(sorted);
  free(renumber);
  return ETRT_OK;
}

static etrt_status etrt_cl_run(etrt_cl *c, etrt_pass_channels_last_stats *st) {
  etrt_ir_graph *g = c->graph;
  uint32_t nodes = g->num_nodes, values = g->num_values;
  for (uint32_t v = 0; v < values; ++v) {
    c->parent[v] = (int32_t)v;
    c->nhwc[v] = -1;
  }
  /* Components: the activations each candidate ties to one layout. */
  for (uint32_t n = 0; n < nodes; ++n) {
    const etrt_ir_node *node = &g->nodes[n];
    c->role[n] = (uint8_t)etrt_cl_classify(g, node);
    if (c->role[n] == ETRT_CL_NONE) continue;
    int32_t y = node->outputs[0];
    for (uint32_t o = 0; o < node->num_outputs; ++o) {
      c->member[node->outputs[o]] = 1;
      etrt_cl_union(c, y, node->outputs[o]);
    }
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      c->slot[c->slot_at[n] + i] = etrt_cl_layout_input(g, node, c->role[n], i);
      if (!c->slot[c->slot_at[n] + i]) continue;
      c->member[node->inputs[i]] = 1;
      etrt_cl_union(c, y, node->inputs[i]);
    }
    if (c->role[n] == ETRT_CL_CONV) c->convs[y]++; /* moved to the root below */
  }
  for (uint32_t v = 0; v < values; ++v) {
    int32_t r = etrt_cl_find(c, (int32_t)v);
    if ((int32_t)v != r && c->convs[v] > 0) {
      c->convs[r] += c->convs[v];
      c->convs[v] = 0;
    }
  }
  /* What each component would cost: a Transpose per value coming in (constants are
   * permuted here, for nothing) and per value going out that is not 1x1. */
  for (uint32_t v = 0; v < values; ++v) {
    if (!c->member[v]) continue;
    const etrt_ir_value *value = &g->values[v];
    int32_t r = etrt_cl_find(c, (int32_t)v);
    if (value->is_constant) continue;
    if (!etrt_cl_produced_inside(c, (int32_t)v))
      c->transpose[r]++;
    else if (!etrt_cl_free_exit(value) && etrt_cl_read_outside(c, (int32_t)v))
      c->transpose[r]++;
  }
  for (uint32_t v = 0; v < values; ++v) {
    if (!c->member[v] || c->parent[v] != (int32_t)v) continue;
    c->keep[v] = c->convs[v] > 0 && c->transpose[v] < 2 * c->convs[v];
    st->regions += c->keep[v];
  }
  /* The nodes of the components left as they are are no longer candidates: what they
   * read is outside any region. */
  for (uint32_t n = 0; n < nodes; ++n) {
    if (c->role[n] == ETRT_CL_NONE || c->keep[etrt_cl_find(c, g->nodes[n].outputs[0])]) continue;
    c->role[n] = ETRT_CL_NONE;
    memset(&c->slot[c->slot_at[n]], 0, g->nodes[n].num_inputs);
  }
  /* The values of the converted components, then their nodes. */
  for (uint32_t v = 0; v < values; ++v)
    if (c->member[v] && c->keep[etrt_cl_find(c, (int32_t)v)])
      ETRT_RETURN_IF_ERROR(etrt_cl_convert_value(c, (int32_t)v, st));
  for (uint32_t n = 0; n < nodes; ++n) {
    if (c->role[n] == ETRT_CL_NONE) continue;
    ETRT_RETURN_IF_ERROR(etrt_cl_convert_node(c, n));
    if (c->role[n] == ETRT_CL_CONV || c->role[n] == ETRT_CL_POOL) ++st->nodes;
    ++st->members;
  }
  return etrt_cl_reorder(c);
}

etrt_status etrt_pass_channels_last(etrt_ir_graph *graph, etrt_pass_channels_last_stats *stats) {
  memset(stats, 0, sizeof *stats);
  uint32_t nodes = graph->num_nodes, values = graph->num_values;
  if (nodes == 0 || values == 0) return ETRT_OK;
  etrt_cl c = {.graph = graph, .first_added = nodes};
  c.role = calloc(nodes, sizeof *c.role);
  c.parent = malloc(values * sizeof *c.parent);
  c.member = calloc(values, sizeof *c.member);
  c.convs = calloc(values, sizeof *c.convs);
  c.transpose = calloc(values, sizeof *c.transpose);
  c.nhwc = malloc(values * sizeof *c.nhwc);
  c.keep = calloc(values, sizeof *c.keep);
  c.slot_at = malloc(nodes * sizeof *c.slot_at);
  uint32_t inputs = 0;
  for (uint32_t n = 0; c.slot_at != NULL && n < nodes; ++n) {
    c.slot_at[n] = inputs;
    inputs += graph->nodes[n].num_inputs;
  }
  c.slot = calloc((size_t)inputs + 1, sizeof *c.slot);
  etrt_status s = ETRT_OK;
  if (c.role == NULL || c.parent == NULL || c.member == NULL || c.convs == NULL ||
      c.transpose == NULL || c.nhwc == NULL || c.keep == NULL || c.slot_at == NULL ||
      c.slot == NULL)
    s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory (channels-last)");
  if (s == ETRT_OK) s = etrt_cl_run(&c, stats);
  free(c.role);
  free(c.parent);
  free(c.member);
  free(c.convs);
  free(c.transpose);
  free(c.nhwc);
  free(c.keep);
  free(c.slot_at);
  free(c.slot);
  free(c.anchor);
  return s;
}
