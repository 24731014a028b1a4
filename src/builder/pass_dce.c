/* Dead-code elimination: a backward sweep from the graph outputs. */
#include <stdlib.h>

#include "builder/passes.h"

etrt_status etrt_pass_eliminate_dead(etrt_ir_graph *graph, uint32_t *removed) {
  *removed = 0;
  bool *live = calloc((size_t)graph->num_values + 1, sizeof *live);
  if (live == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "dead-code elimination: out of memory");
  for (uint32_t i = 0; i < graph->num_outputs; ++i) live[graph->outputs[i]] = true;
  for (uint32_t n = graph->num_nodes; n-- > 0;) {
    etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    bool needed = false;
    for (uint32_t o = 0; o < node->num_outputs; ++o)
      needed |= node->outputs[o] >= 0 && live[node->outputs[o]];
    if (!needed) {
      node->dead = true;
      for (uint32_t o = 0; o < node->num_outputs; ++o)
        if (node->outputs[o] >= 0) graph->values[node->outputs[o]].producer = -1;
      ++*removed;
      continue;
    }
    for (uint32_t i = 0; i < node->num_inputs; ++i)
      if (node->inputs[i] >= 0) live[node->inputs[i]] = true;
  }
  free(live);
  return ETRT_OK;
}
