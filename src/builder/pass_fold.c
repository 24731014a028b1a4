/* Constant folding with the engine's CPU kernels. */
#include <string.h>

#include "builder/node_eval.h"
#include "builder/passes.h"

/* Generators whose every run differs (training Dropout among them): never folded. */
static bool etrt_pass_is_random(const char *op) {
  return strncmp(op, "Random", 6) == 0 || strcmp(op, "Multinomial") == 0 ||
         strcmp(op, "Bernoulli") == 0 || strcmp(op, "Dropout") == 0;
}

etrt_status etrt_pass_fold_constants(etrt_ir_graph *graph, size_t limit_bytes, uint32_t *folded) {
  *folded = 0;
  /* Nodes are in topological order, so one sweep folds whole constant chains. */
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead || etrt_pass_is_random(node->op_type)) continue;
    bool writes_output = false;
    for (uint32_t o = 0; o < node->num_outputs; ++o)
      writes_output |= node->outputs[o] >= 0 && etrt_ir_is_output(graph, node->outputs[o]);
    if (writes_output) continue;
    bool done;
    etrt_status status = etrt_node_eval_fold(graph, n, limit_bytes, &done);
    if (status != ETRT_OK)
      return etrt_error_context(status, "node '%s' (%s): ", node->name, node->op_type);
    *folded += done;
  }
  return ETRT_OK;
}
