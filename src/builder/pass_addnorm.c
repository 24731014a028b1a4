/* Add + LayerNormalization -> EtrtAddLayerNorm: the residual connection of a
 * transformer block read once instead of written by the Add and read back by the
 * normalization. The Add node is rewritten in place (it precedes every reader of the
 * sum, so the node order stays topological) and the LayerNormalization dies. */
#include <string.h>

#include "builder/pass_match.h"
#include "builder/passes.h"
#include "engine/op.h"

/* A parameter the Add node may read: a constant, or written before it. */
static bool etrt_addnorm_ready(const etrt_ir_graph *graph, int32_t value, uint32_t add) {
  if (value < 0) return true;
  const etrt_ir_value *v = &graph->values[value];
  return v->is_constant || v->producer < (int32_t)add;
}

etrt_status etrt_pass_fuse_add_layer_norm(etrt_ir_graph *graph, uint32_t *fused) {
  *fused = 0;
  if (etrt_op_find("EtrtAddLayerNorm") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *norm = &graph->nodes[n];
    /* Mean and InvStdDev outputs stay with LayerNormalization. */
    if (norm->dead || strcmp(norm->op_type, "LayerNormalization") != 0 || norm->num_inputs < 2 ||
        norm->num_inputs > 3 || norm->num_outputs != 1 || norm->outputs[0] < 0)
      continue;
    int32_t sum = norm->inputs[0];
    if (sum < 0) continue;
    int32_t a_index = graph->values[sum].producer;
    if (a_index < 0) continue;
    etrt_ir_node *add = &graph->nodes[a_index];
    if (add->dead || strcmp(add->op_type, "Add") != 0 || add->num_inputs != 2 ||
        add->num_outputs != 1 || add->inputs[0] < 0 || add->inputs[1] < 0)
      continue;
    /* No broadcast: both addends have the sum's shape (float32, as before lowering). */
    if (!etrt_match_same_shape(graph, add->inputs[0], sum) ||
        !etrt_match_same_shape(graph, add->inputs[1], sum))
      continue;
    int32_t scale = norm->inputs[1], bias = norm->num_inputs > 2 ? norm->inputs[2] : -1;
    if (scale < 0 || !etrt_addnorm_ready(graph, scale, (uint32_t)a_index) ||
        !etrt_addnorm_ready(graph, bias, (uint32_t)a_index))
      continue;
    bool keep_sum = etrt_ir_use_count(graph, sum) > 1 || etrt_ir_is_output(graph, sum);
    int32_t *outputs = etrt_ir_alloc(graph, 2 * sizeof *outputs);
    if (outputs == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "EtrtAddLayerNorm fusion of node '%s'",
                        norm->name);
    int32_t y = norm->outputs[0];
    outputs[0] = y;
    outputs[1] = sum;
    add->op_type = "EtrtAddLayerNorm";
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, add, 2, scale));
    if (bias >= 0) ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, add, 3, bias));
    for (uint32_t k = 0; k < norm->num_attributes; ++k)
      ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, add, &norm->attributes[k]));
    add->outputs = outputs;
    add->num_outputs = keep_sum ? 2 : 1;
    graph->values[y].producer = a_index;
    if (!keep_sum) graph->values[sum].producer = -1;
    norm->dead = true;
    ++*fused;
  }
  return ETRT_OK;
}
