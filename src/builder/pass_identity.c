/* Identity forwards its input (import turns inference Dropout into one too). */
#include <string.h>

#include "builder/passes.h"

etrt_status etrt_pass_drop_identity(etrt_ir_graph *graph, uint32_t *removed) {
  *removed = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *node = &graph->nodes[n];
    if (node->dead || node->num_inputs < 1 || node->num_outputs < 1) continue;
    if (strcmp(node->op_type, "Identity") != 0) continue;
    int32_t x = node->inputs[0], y = node->outputs[0];
    if (x < 0 || y < 0) continue;
    if (!etrt_ir_is_output(graph, y)) {
      node->dead = true;
      graph->values[y].producer = -1;
      etrt_ir_replace_uses(graph, y, x);
      ++*removed;
      continue;
    }
    /* y is a graph output: the node that writes x writes y instead, unless x is
     * itself an output, an input or a constant (then the node stays). */
    int32_t p = graph->values[x].producer;
    if (p < 0 || etrt_ir_is_output(graph, x)) continue;
    etrt_ir_node *producer = &graph->nodes[p];
    node->dead = true;
    for (uint32_t o = 0; o < producer->num_outputs; ++o)
      if (producer->outputs[o] == x) producer->outputs[o] = y;
    etrt_ir_replace_uses(graph, x, y);
    graph->values[x].producer = -1;
    graph->values[y].producer = p;
    ++*removed;
  }
  return ETRT_OK;
}
