/* The exact GELU as exporters spell it for opsets before 20,
 *   Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)   (or with the 0.5 in the inner Mul),
 * becomes one Gelu: one pass over the tensor instead of five. The Gelu takes the place of
 * the last Mul, after every node it replaces, so the order stays topological. */
#include <math.h>
#include <string.h>

#include "builder/pass_match.h"
#include "builder/passes.h"
#include "engine/op.h"

/* Whether `q` is Add(Erf(Div(x, sqrt 2)), 1) read only by `reader`, for this x. */
static bool etrt_gelu_is_erf_term(const etrt_ir_graph *graph, int32_t q, int32_t x, int32_t reader,
                                  int32_t chain[3]) {
  int32_t add = etrt_match_producer(graph, q, "Add", 2, reader);
  if (add < 0) return false;
  const etrt_ir_node *a = &graph->nodes[add];
  for (int side = 0; side < 2; ++side) {
    if (!etrt_match_scalar(graph, a->inputs[1 - side], 1.0)) continue;
    int32_t erf = etrt_match_producer(graph, a->inputs[side], "Erf", 1, add);
    if (erf < 0) continue;
    int32_t div = etrt_match_producer(graph, graph->nodes[erf].inputs[0], "Div", 2, erf);
    if (div < 0) continue;
    const etrt_ir_node *d = &graph->nodes[div];
    if (d->inputs[0] != x || !etrt_match_scalar(graph, d->inputs[1], sqrt(2.0))) continue;
    chain[0] = add;
    chain[1] = erf;
    chain[2] = div;
    return true;
  }
  return false;
}

etrt_status etrt_pass_fuse_gelu(etrt_ir_graph *graph, uint32_t *fused) {
  *fused = 0;
  if (etrt_op_find("Gelu") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *outer = &graph->nodes[n];
    if (outer->dead || strcmp(outer->op_type, "Mul") != 0 || outer->num_inputs != 2 ||
        outer->num_outputs != 1 || outer->outputs[0] < 0)
      continue;
    for (int side = 0; side < 2; ++side) {
      int32_t inner = etrt_match_producer(graph, outer->inputs[side], "Mul", 2, (int32_t)n);
      if (inner < 0) continue;
      /* The three factors: x, the constant 0.5 and the Erf term, in any places. */
      int32_t f[3] = {graph->nodes[inner].inputs[0], graph->nodes[inner].inputs[1],
                      outer->inputs[1 - side]};
      int32_t chain[3] = {-1, -1, -1}, x = -1;
      for (int h = 0; h < 3 && x < 0; ++h) {
        if (!etrt_match_scalar(graph, f[h], 0.5)) continue;
        for (int t = 0; t < 3 && x < 0; ++t) {
          if (t == h) continue;
          int32_t candidate = f[3 - h - t];
          /* The Erf term is read by the Mul that holds it. */
          int32_t reader = t < 2 ? inner : (int32_t)n;
          if (etrt_gelu_is_erf_term(graph, f[t], candidate, reader, chain)) x = candidate;
        }
      }
      if (x < 0 || !etrt_match_same_shape(graph, x, outer->outputs[0])) continue;
      outer->op_type = "Gelu";
      outer->domain = "";
      outer->num_inputs = 1;
      outer->inputs[0] = x;
      outer->num_attributes = 0;
      int32_t gone[4] = {inner, chain[0], chain[1], chain[2]};
      etrt_match_remove(graph, gone, 4);
      ++*fused;
      break;
    }
  }
  return ETRT_OK;
}
