/* Scaled dot-product attention as exporters spell it,
 *
 *   Q = Transpose(Reshape(Xq, [B, S, H, D]), perm 0,2,1,3)          (K and V alike; K's
 *   scores = MatMul(Q, K^T) [* c | / c] [+ mask]                      transpose is perm
 *   out = Reshape(Transpose(MatMul(Softmax(scores), V), 0,2,1,3), [B, S, H*D])   0,2,3,1, or
 *                                                                     0,2,1,3 then 0,1,3,2)
 *
 * becomes one EtrtAttention (engine/ops/attention.h) reading Xq, Xk and Xv where the
 * projections wrote them; where the three are the thirds of one Split, it reads the
 * Split's input at three column offsets and the Split goes too; where they are three
 * projections of one input, those are packed into one (pass_pack_qkv.c) and read the
 * same way. The EtrtAttention takes the place of the last Reshape, after every node it
 * replaces, so the order stays topological. Every intermediate must have no other reader, and the
 * heads must suit the tensor-core kernel (a multiple of 16, at most 128). */
#include <string.h>

#include "builder/pass_match.h"
#include "builder/passes.h"
#include "engine/op.h"
#include "engine/ops/attention.h"

/* The nodes of one match, to remove. */
typedef struct etrt_attention_match {
  int32_t nodes[16];
  uint32_t count;
  int64_t heads, head_size;
  /* The Reshapes splitting the heads of Xq, Xk and Xv, in that order. */
  int32_t split[3];
  uint32_t splits;
} etrt_attention_match;

static bool etrt_attention_perm_is(const etrt_ir_node *node, int64_t a, int64_t b, int64_t c,
                                   int64_t d) {
  const etrt_attribute *perm = etrt_ir_node_attribute(node, "perm");
  return perm != NULL && perm->kind == ETRT_ATTRIBUTE_INTS && perm->count == 4 &&
         perm->ints[0] == a && perm->ints[1] == b && perm->ints[2] == c && perm->ints[3] == d;
}

/* A float32 value of this rank whose axes from `fixed` on have one size (the heads'
 * axes; batch and sequence may vary). */
static bool etrt_attention_shaped(const etrt_ir_value *v, int32_t rank, int32_t fixed) {
  if (v->rank != rank || v->dtype != ETRT_DTYPE_FLOAT32) return false;
  for (int32_t a = fixed; a < rank; ++a)
    if (v->min[a] != v->max[a]) return false;
  return true;
}

/* Whether axis a of two values has the same bounds. */
static bool etrt_attention_same_axis(const etrt_ir_value *x, int32_t a, const etrt_ir_value *y,
                                     int32_t b) {
  return x->min[a] == y->min[b] && x->max[a] == y->max[b];
}

/* The Transpose writing `value` for `reader` with permutation p, or -1. */
static int32_t etrt_attention_transpose(const etrt_ir_graph *g, int32_t value, int32_t reader,
                                        int64_t a, int64_t b, int64_t c, int64_t d) {
  int32_t t = etrt_match_producer(g, value, "Transpose", 1, reader);
  return t >= 0 && etrt_attention_perm_is(&g->nodes[t], a, b, c, d) ? t : -1;
}

/* X of Reshape(X [B, S, H*D], [B, S, H, D]) read by node `reader` alone, or -1; the
 * heads and head size must agree with those found so far (0: none yet). */
static int32_t etrt_attention_split_heads(const etrt_ir_graph *g, int32_t value, int32_t reader,
                                          etrt_attention_match *m) {
  int32_t r = etrt_match_producer(g, value, "Reshape", 2, reader);
  if (r < 0) return -1;
  int32_t x = g->nodes[r].inputs[0];
  if (x < 0) return -1;
  const etrt_ir_value *in = &g->values[x], *out = &g->values[value];
  if (!etrt_attention_shaped(in, 3, 2) || !etrt_attention_shaped(out, 4, 2) ||
      !etrt_attention_same_axis(out, 0, in, 0) || !etrt_attention_same_axis(out, 1, in, 1) ||
      out->max[2] * out->max[3] != in->max[2])
    return -1;
  if (m->heads != 0 && (m->heads != out->max[2] || m->head_size != out->max[3])) return -1;
  if (m->splits == 3) return -1;
  m->heads = out->max[2];
  m->head_size = out->max[3];
  m->nodes[m->count++] = r;
  m->split[m->splits++] = r;
  return x;
}

/* Q or V: the X under Transpose(Reshape(X), 0,2,1,3) read by `reader`, or -1. */
static int32_t etrt_attention_operand(const etrt_ir_graph *g, int32_t value, int32_t reader,
                                      etrt_attention_match *m) {
  int32_t t = etrt_attention_transpose(g, value, reader, 0, 2, 1, 3);
  if (t < 0) return -1;
  m->nodes[m->count++] = t;
  return etrt_attention_split_heads(g, g->nodes[t].inputs[0], t, m);
}

/* K^T: Transpose(Reshape(X), 0,2,3,1), or the same as two Transposes. */
static int32_t etrt_attention_key(const etrt_ir_graph *g, int32_t value, int32_t reader,
                                  etrt_attention_match *m) {
  int32_t t = etrt_attention_transpose(g, value, reader, 0, 2, 3, 1);
  if (t >= 0) {
    m->nodes[m->count++] = t;
    return etrt_attention_split_heads(g, g->nodes[t].inputs[0], t, m);
  }
  t = etrt_attention_transpose(g, value, reader, 0, 1, 3, 2);
  if (t < 0) return -1;
  m->nodes[m->count++] = t;
  return etrt_attention_operand(g, g->nodes[t].inputs[0], t, m);
}

/* The float32 scalar constant `value`, or false. */
static bool etrt_attention_scalar(const etrt_ir_graph *g, int32_t value, float *out) {
  if (value < 0) return false;
  const etrt_ir_value *v = &g->values[value];
  if (!v->is_constant || v->dtype != ETRT_DTYPE_FLOAT32 || v->nbytes != sizeof(float) ||
      v->data == NULL)
    return false;
  memcpy(out, v->data, sizeof *out);
  return *out != 0.0f;
}

/* The scores under the Softmax: [scale] MatMul(Q, K^T), read by `reader`. Sets q and k. */
static bool etrt_attention_scores(const etrt_ir_graph *g, int32_t value, int32_t reader,
                                  etrt_attention_match *m, float *scale, int32_t *q, int32_t *k) {
  *scale = 1.0f;
  int32_t product = value, product_reader = reader;
  int32_t p = g->values[value].producer;
  if (p >= 0 && !g->nodes[p].dead && g->nodes[p].num_inputs == 2 &&
      etrt_ir_single_consumer(g, value) == reader) {
    const etrt_ir_node *n = &g->nodes[p];
    float c = 0.0f;
    if (strcmp(n->op_type, "Div") == 0 && etrt_attention_scalar(g, n->inputs[1], &c)) {
      *scale = 1.0f / c;
      product = n->inputs[0];
    } else if (strcmp(n->op_type, "Mul") == 0) {
      for (int side = 0; side < 2 && product == value; ++side)
        if (etrt_attention_scalar(g, n->inputs[1 - side], &c)) {
          *scale = c;
          product = n->inputs[side];
        }
    }
    if (product != value) {
      m->nodes[m->count++] = p;
      product_reader = p;
    }
  }
  int32_t mm = etrt_match_producer(g, product, "MatMul", 2, product_reader);
  if (mm < 0) return false;
  m->nodes[m->count++] = mm;
  *q = etrt_attention_operand(g, g->nodes[mm].inputs[0], mm, m);
  *k = *q >= 0 ? etrt_attention_key(g, g->nodes[mm].inputs[1], mm, m) : -1;
  return *k >= 0;
}

/* Whether `mask` broadcasts to the scores' [B, H, Sq, Sk] without widening them. */
static bool etrt_attention_mask_fits(const etrt_ir_graph *g, int32_t mask, int32_t scores) {
  const etrt_ir_value *v = &g->values[mask], *s = &g->values[scores];
  if (v->rank < 0 || v->rank > 4 || v->dtype != ETRT_DTYPE_FLOAT32) return false;
  for (int32_t a = 0; a < v->rank; ++a) {
    int32_t at = 4 - v->rank + a;
    bool one = v->min[a] == 1 && v->max[a] == 1;
    if (!one && !etrt_attention_same_axis(v, a, s, at)) return false;
  }
  return true;
}

/* Where Xq, Xk and Xv are the three outputs of one Split along the last axis, read by
 * nothing else: its input and the column offset of each; else the Split stays. */
static int32_t etrt_attention_packed(const etrt_ir_graph *g, const int32_t x[3], int64_t offsets[3],
                                     int32_t *split) {
  int32_t s = g->values[x[0]].producer;
  if (s < 0 || g->nodes[s].dead || strcmp(g->nodes[s].op_type, "Split") != 0 ||
      g->nodes[s].num_outputs != 3 || g->nodes[s].inputs[0] < 0)
    return -1;
  const etrt_ir_node *n = &g->nodes[s];
  const etrt_ir_value *in = &g->values[n->inputs[0]];
  int64_t axis = etrt_ir_node_attribute_int(n, "axis", 0);
  if (!etrt_attention_shaped(in, 3, 2) || (axis != -1 && axis != 2)) return -1;
  int64_t width = g->values[x[0]].max[2];
  if (in->max[2] != 3 * width) return -1;
  bool seen[3] = {false, false, false};
  for (int k = 0; k < 3; ++k) {
    int32_t at = -1;
    for (int o = 0; o < 3; ++o)
      if (n->outputs[o] == x[k] && !seen[o]) at = o;
    if (at < 0 || g->values[x[k]].max[2] != width) return -1;
    seen[at] = true;
    offsets[k] = at * width;
  }
  *split = s;
  return n->inputs[0];
}

/* Tries the attention whose Softmax is node n. */
static etrt_status etrt_attention_try(etrt_ir_graph *g, uint32_t n, bool pack_qkv, bool *fused,
                                      uint32_t *packs) {
  *fused = false;
  const etrt_ir_node *softmax = &g->nodes[n];
  if (softmax->num_inputs != 1 || softmax->num_outputs != 1 || softmax->inputs[0] < 0 ||
      softmax->outputs[0] < 0)
    return ETRT_OK;
  const etrt_ir_value *scores_value = &g->values[softmax->inputs[0]];
  /* Before opset 13 the axis defaults to 1 (and coerces to 2-D there: axis 3 of a
   * rank-4 input is the last axis either way). */
  int64_t legacy = etrt_ir_node_attribute_int(softmax, "_opset", 13) < 13;
  int64_t axis = etrt_ir_node_attribute_int(softmax, "axis", legacy ? 1 : -1);
  if (scores_value->rank != 4 || scores_value->dtype != ETRT_DTYPE_FLOAT32 ||
      (axis != -1 && axis != 3))
    return ETRT_OK;
  etrt_attention_match m = {.count = 0};
  m.nodes[m.count++] = (int32_t)n;
  /* An additive mask, on either side of the Add. */
  int32_t scores = softmax->inputs[0], mask = -1, q = -1, k = -1;
  float scale = 1.0f;
  bool found = false;
  int32_t add = etrt_match_producer(g, scores, "Add", 2, (int32_t)n);
  for (int side = 0; add >= 0 && side < 2 && !found; ++side) {
    etrt_attention_match tried = m;
    tried.nodes[tried.count++] = add;
    int32_t other = g->nodes[add].inputs[1 - side];
    if (other >= 0 && etrt_attention_mask_fits(g, other, scores) &&
        etrt_attention_scores(g, g->nodes[add].inputs[side], add, &tried, &scale, &q, &k)) {
      m = tried;
      mask = other;
      found = true;
    }
  }
  if (!found) found = etrt_attention_scores(g, scores, (int32_t)n, &m, &scale, &q, &k);
  /* Heads the tensor-core kernel takes (engine/ops/attention.h). */
  if (!found || m.head_size % 16 != 0 || m.head_size > ETRT_ATTENTION_TC_MAX_HEAD) return ETRT_OK;
  /* Softmax(...) . V, then the heads joined again. */
  int32_t pv = etrt_ir_single_consumer(g, softmax->outputs[0]);
  if (pv < 0 || g->nodes[pv].dead || strcmp(g->nodes[pv].op_type, "MatMul") != 0 ||
      g->nodes[pv].num_inputs != 2 || g->nodes[pv].inputs[0] != softmax->outputs[0])
    return ETRT_OK;
  m.nodes[m.count++] = pv;
  int32_t v = etrt_attention_operand(g, g->nodes[pv].inputs[1], pv, &m);
  if (v < 0 || g->nodes[pv].outputs[0] < 0) return ETRT_OK;
  int32_t back = etrt_ir_single_consumer(g, g->nodes[pv].outputs[0]);
  if (back < 0 || strcmp(g->nodes[back].op_type, "Transpose") != 0 ||
      !etrt_attention_perm_is(&g->nodes[back], 0, 2, 1, 3) || g->nodes[back].outputs[0] < 0)
    return ETRT_OK;
  m.nodes[m.count++] = back;
  int32_t join = etrt_ir_single_consumer(g, g->nodes[back].outputs[0]);
  if (join < 0 || strcmp(g->nodes[join].op_type, "Reshape") != 0 ||
      g->nodes[join].num_outputs != 1 || g->nodes[join].outputs[0] < 0)
    return ETRT_OK;
  const etrt_ir_value *out = &g->values[g->nodes[join].outputs[0]];
  const etrt_ir_value *xq = &g->values[q], *xk = &g->values[k], *xv = &g->values[v];
  if (!etrt_attention_shaped(out, 3, 2) || !etrt_attention_same_axis(out, 0, xq, 0) ||
      !etrt_attention_same_axis(out, 1, xq, 1) || out->max[2] != m.heads * m.head_size ||
      !etrt_attention_same_axis(xk, 0, xq, 0) || !etrt_attention_same_axis(xv, 0, xq, 0) ||
      !etrt_attention_same_axis(xk, 1, xv, 1))
    return ETRT_OK;
  int64_t offsets[3] = {0, 0, 0};
  int32_t x[3] = {q, k, v}, split = -1;
  int32_t packed = etrt_attention_packed(g, x, offsets, &split);
  if (packed >= 0) {
    x[0] = x[1] = x[2] = packed;
    m.nodes[m.count++] = split;
  } else if (pack_qkv && m.splits == 3) {
    ETRT_RETURN_IF_ERROR(etrt_pass_pack_qkv(g, x, m.split, &packed, offsets));
    if (packed >= 0) {
      x[0] = x[1] = x[2] = packed;
      ++*packs;
    }
  }
  /* The join becomes the attention. */
  etrt_ir_node *node = &g->nodes[join];
  node->op_type = "EtrtAttention";
  node->domain = "";
  node->num_attributes = 0;
  for (uint32_t i = 0; i < 3; ++i) ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(g, node, i, x[i]));
  node->num_inputs = 3;
  if (mask >= 0) ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(g, node, 3, mask));
  const etrt_attribute attributes[] = {
      {.name = "num_heads", .kind = ETRT_ATTRIBUTE_INT, .i = m.heads},
      {.name = "head_size", .kind = ETRT_ATTRIBUTE_INT, .i = m.head_size},
      {.name = "scale", .kind = ETRT_ATTRIBUTE_FLOAT, .f = scale},
      {.name = "offsets", .kind = ETRT_ATTRIBUTE_INTS, .count = 3, .ints = offsets},
  };
  for (size_t a = 0; a < sizeof attributes / sizeof attributes[0]; ++a)
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(g, node, &attributes[a]));
  etrt_match_remove(g, m.nodes, m.count);
  *fused = true;
  return ETRT_OK;
}

etrt_status etrt_pass_fuse_attention(etrt_ir_graph *graph, bool pack_qkv, uint32_t *fused,
                                     uint32_t *packed) {
  *fused = 0;
  *packed = 0;
  if (etrt_op_find("EtrtAttention") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    if (graph->nodes[n].dead || strcmp(graph->nodes[n].op_type, "Softmax") != 0) continue;
    bool done = false;
    ETRT_RETURN_IF_ERROR(etrt_attention_try(graph, n, pack_qkv, &done, packed));
    *fused += done;
  }
  return ETRT_OK;
}
