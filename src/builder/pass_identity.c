/* Identity and inference-time Dropout forward their input. */
#include <string.h>

#include "builder/passes.h"

/* Dropout is the identity at inference unless training_mode is on (or unknown). */
static bool etrt_pass_dropout_is_identity(const etrt_ir_graph *graph, const etrt_ir_node *node) {
  if (node->num_outputs > 1 && node->outputs[1] >= 0 && etrt_ir_use_count(graph, node->outputs[1]) > 0)
    return false; /* someone reads the mask */
  if (node->num_inputs > 2 && node->inputs[2] >= 0) {
    const etrt_ir_value *mode = &graph->values[node->inputs[2]];
    if (!mode->is_constant || mode->nbytes < 1) return false;
    if (((const uint8_t *)mode->data)[0] != 0) return false;
  }
  return true;
}

etrt_status etrt_pass_drop_identity(etrt_ir_graph *graph, uint32_t *removed) {
  *removed = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *node = &graph->nodes[n];
    if (node->dead || node->num_inputs < 1 || node->num_outputs < 1) continue;
    bool identity = strcmp(node->op_type, "Identity") == 0;
    if (!identity && !(strcmp(node->op_type, "Dropout") == 0 && etrt_pass_dropout_is_identity(graph, node)))
      continue;
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
