/* The CPU kernel of EtrtRefusedBranch (ops/control.c): an If branch the builder could
 * not build for the plan's shapes fails when it is taken, with the builder's reason. */
#include "engine/op.h"
#include "engine/ops/op_check.h"

static etrt_status etrt_cpu_refused_branch(const etrt_node *node, const etrt_tensor *inputs,
                                           etrt_tensor *outputs) {
  (void)inputs;
  (void)outputs;
  return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                       "this branch cannot run with the shapes the plan was built for (it was "
                       "not built: %s)",
                       etrt_node_attribute_string(node, "message", "no reason recorded"));
}

const etrt_op_cpu_row etrt_cpu_rows_control[] = {
    {"EtrtRefusedBranch", etrt_cpu_refused_branch},
    {NULL, NULL},
};
