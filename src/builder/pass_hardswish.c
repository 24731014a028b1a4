/* HardSwish as exporters spell it,
 *   x * Clip(x + 3, 0, 6) / 6   (Add, Clip, Mul, then Div by 6 or Mul by 1/6; PaddlePaddle's
 *                                and older PyTorch exports: the OCR models of rapidocr)
 *   x * HardSigmoid(x)          (alpha 1/6, beta 1/2)
 * becomes one HardSwish in the place of the last node: one pass over the tensor instead of
 * four, and an activation the convolution fusion (pass_conv.c) then takes into the
 * convolution that writes x. */
#include <math.h>
#include <string.h>

#include "builder/pass_match.h"
#include "builder/passes.h"
#include "engine/op.h"

/* Clip(value, 0, 6) read only by `reader`, bounds as inputs (opset 11 on) or attributes. */
static int32_t etrt_hardswish_clip(const etrt_ir_graph *graph, int32_t value, int32_t reader) {
  int32_t clip = etrt_match_producer(graph, value, "Clip", 3, reader);
  if (clip >= 0)
    return etrt_match_scalar(graph, graph->nodes[clip].inputs[1], 0.0) &&
                   etrt_match_scalar(graph, graph->nodes[clip].inputs[2], 6.0)
               ? clip
               : -1;
  clip = etrt_match_producer(graph, value, "Clip", 1, reader);
  if (clip < 0) return -1;
  const etrt_ir_node *c = &graph->nodes[clip];
  return etrt_ir_node_attribute_float(c, "min", -INFINITY) == 0.0f &&
                 etrt_ir_node_attribute_float(c, "max", INFINITY) == 6.0f
             ? clip
             : -1;
}

/* Whether `value` is Clip(Add(x, 3), 0, 6) read only by `reader`: the two nodes in chain. */
static bool etrt_hardswish_clip_term(const etrt_ir_graph *graph, int32_t value, int32_t x,
                                     int32_t reader, int32_t chain[2]) {
  int32_t clip = etrt_hardswish_clip(graph, value, reader);
  if (clip < 0) return false;
  int32_t add = etrt_match_producer(graph, graph->nodes[clip].inputs[0], "Add", 2, clip);
  if (add < 0) return false;
  const etrt_ir_node *a = &graph->nodes[add];
  for (int side = 0; side < 2; ++side)
    if (a->inputs[side] == x && etrt_match_scalar(graph, a->inputs[1 - side], 3.0)) {
      chain[0] = clip;
      chain[1] = add;
      return true;
    }
  return false;
}

/* x * HardSigmoid(x) with alpha 1/6 and beta 1/2, `last` being the Mul: x, or -1. */
static int32_t etrt_hardswish_of_hard_sigmoid(const etrt_ir_graph *graph, int32_t last,
                                              int32_t *gone) {
  const etrt_ir_node *mul = &graph->nodes[last];
  for (int side = 0; side < 2; ++side) {
    int32_t h = etrt_match_producer(graph, mul->inputs[side], "HardSigmoid", 1, last);
    if (h < 0 || graph->nodes[h].inputs[0] != mul->inputs[1 - side]) continue;
    float alpha = etrt_ir_node_attribute_float(&graph->nodes[h], "alpha", 0.2f);
    float beta = etrt_ir_node_attribute_float(&graph->nodes[h], "beta", 0.5f);
    if (fabsf(alpha - 1.0f / 6.0f) > 1e-6f || beta != 0.5f) continue;
    *gone = h;
    return mul->inputs[1 - side];
  }
  return -1;
}

/* (x * Clip(x + 3, 0, 6)) / 6 or * (1/6), `last` being the Div or outer Mul: x, or -1. */
static int32_t etrt_hardswish_of_clip(const etrt_ir_graph *graph, int32_t last, int32_t gone[3]) {
  const etrt_ir_node *l = &graph->nodes[last];
  bool div = strcmp(l->op_type, "Div") == 0;
  for (int scale_side = div ? 1 : 0; scale_side < 2; ++scale_side) {
    if (!etrt_match_scalar(graph, l->inputs[scale_side], div ? 6.0 : 1.0 / 6.0)) continue;
    int32_t inner = etrt_match_producer(graph, l->inputs[1 - scale_side], "Mul", 2, last);
    if (inner < 0) continue;
    const etrt_ir_node *m = &graph->nodes[inner];
    for (int side = 0; side < 2; ++side)
      if (etrt_hardswish_clip_term(graph, m->inputs[side], m->inputs[1 - side], inner, gone + 1)) {
        gone[0] = inner;
        return m->inputs[1 - side];
      }
  }
  return -1;
}

etrt_status etrt_pass_fuse_hardswish(etrt_ir_graph *graph, uint32_t *fused) {
  *fused = 0;
  if (etrt_op_find("HardSwish") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *last = &graph->nodes[n];
    if (last->dead || last->num_inputs != 2 || last->num_outputs != 1 || last->outputs[0] < 0 ||
        (strcmp(last->op_type, "Mul") != 0 && strcmp(last->op_type, "Div") != 0))
      continue;
    int32_t gone[3] = {-1, -1, -1};
    uint32_t gone_count = 3;
    int32_t x = etrt_hardswish_of_clip(graph, (int32_t)n, gone);
    if (x < 0 && strcmp(last->op_type, "Mul") == 0) {
      x = etrt_hardswish_of_hard_sigmoid(graph, (int32_t)n, gone);
      gone_count = 1;
    }
    if (x < 0 || !etrt_match_same_shape(graph, x, last->outputs[0])) continue;
    last->op_type = "HardSwish";
    last->domain = "";
    last->num_inputs = 1;
    last->inputs[0] = x;
    last->num_attributes = 0;
    etrt_match_remove(graph, gone, gone_count);
    ++*fused;
  }
  return ETRT_OK;
}
