/* Which nodes of a plan the CUDA kernels take, decided once at context creation by
 * the definitions' cuda_supports predicates at the nodes' largest shapes. Shared by
 * the CUDA executor and the sim executor, so that a simulated GPU refuses exactly
 * what a real one would (the executor contract in executor.h, "create"). */
#include <string.h>

#include "base/status.h"
#include "engine/executor.h"

void etrt_executor_node_bounds(const etrt_graph *g, const etrt_node *node, etrt_tensor *args) {
  uint32_t count = node->num_inputs + node->num_outputs;
  for (uint32_t a = 0; a < count; ++a) {
    int32_t id = a < node->num_inputs ? node->inputs[a] : node->outputs[a - node->num_inputs];
    etrt_tensor *t = &args[a];
    memset(t, 0, sizeof *t);
    if (id < 0) {
      t->rank = -1;
      t->dtype = ETRT_DTYPE_INVALID;
      continue;
    }
    const etrt_graph_value *v = &g->values[id];
    t->dtype = v->dtype;
    t->rank = v->rank;
    memcpy(t->dims, v->max_dims, sizeof t->dims);
    if (v->kind == ETRT_VALUE_KIND_CONSTANT) t->host_value = v->data;
  }
}

etrt_status etrt_executor_cuda_node_check(const etrt_engine *engine, uint32_t n, int has_kernel,
                                          etrt_tensor *args, int *launch) {
  const etrt_node *node = &engine->graph.nodes[n];
  etrt_executor_node_bounds(&engine->graph, node, args);
  *launch = 0;
  /* Its dims come from values a finished kernel wrote; reading them back would need a
   * synchronisation inside the run. */
  if (node->dims_at_execute != ETRT_NODE_DIMS_PLANNED)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "engine '%s': node %u '%s' (%s): its output dims are known only at "
                      "execute, from values on the host: a CUDA plan does not take it (build the "
                      "plan so that the partitioner keeps it on the CPU)",
                      engine->info.name, n, node->name, node->op_type);
  if (!has_kernel && engine->host_evaluated[n]) return ETRT_OK;
  if (!has_kernel)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "engine '%s': node %u '%s': operation %s has no CUDA kernel (build the "
                      "plan so that the partitioner keeps it on the CPU)",
                      engine->info.name, n, node->name, node->op_type);
  if (!etrt_op_cuda_supports(node, args))
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "engine '%s': node %u '%s': the CUDA kernel of %s does not take these "
                      "inputs (input 0 is %s)",
                      engine->info.name, n, node->name, node->op_type,
                      node->num_inputs > 0 ? etrt_dtype_name(args[0].dtype) : "absent");
  *launch = 1;
  return ETRT_OK;
}
