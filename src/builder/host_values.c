#include "builder/host_values.h"

#include "engine/op.h"

void etrt_host_values_find(const etrt_ir_graph *graph, etrt_host_value_use *uses) {
  for (uint32_t v = 0; v < graph->num_values; ++v) uses[v] = (etrt_host_value_use){-1, 0, false};
  for (uint32_t k = graph->num_nodes; k-- > 0;) {
    const etrt_ir_node *node = &graph->nodes[k];
    if (node->dead) continue;
    const etrt_op_def *def = etrt_op_find(node->op_type);
    if (def == NULL) continue;
    /* Readers come after writers, so every reader of this node's outputs has been
     * seen: an output needed on the host makes the node's inputs needed too. */
    etrt_host_value_use inherited = {-1, 0, false};
    for (uint32_t o = 0; o < node->num_outputs && inherited.node < 0; ++o)
      if (node->outputs[o] >= 0) inherited = uses[node->outputs[o]];
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      int32_t v = node->inputs[i];
      if (v < 0 || (uses[v].node >= 0 && !uses[v].optional)) continue;
      bool value_input = i < 32 && (def->value_inputs >> i & 1u);
      bool dims_only = i < 32 && (def->dims_only_inputs >> i & 1u);
      etrt_host_value_use use = uses[v];
      if (value_input)
        use = (etrt_host_value_use){(int32_t)k, i, def->bound != NULL};
      else if (inherited.node >= 0 && !dims_only)
        use = inherited;
      else
        continue;
      /* A value some reader needs outweighs one only bounded readers want. */
      if (uses[v].node < 0 || !use.optional) uses[v] = use;
    }
  }
}
