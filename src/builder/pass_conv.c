/* Conv + Add of a residual + Relu -> EtrtFusedConv: on the GPU the bias, the residual
 * and the activation ride in the convolution's epilogue instead of two more passes
 * over its output. The fused node takes the place of the last node of the pattern
 * (the Add or the Relu), so every input it reads, the residual included, is written
 * before it: the node order stays topological. */
#include <string.h>

#include "builder/passes.h"
#include "engine/op.h"

/* The node writing `value` when it is a float32 Conv or an EtrtFusedConv still without
 * an activation (and, for `need_no_residual`, without a residual), and `reader` is
 * its only reader; else -1. */
static int32_t etrt_conv_fusable_producer(const etrt_ir_graph *graph, int32_t value,
                                          uint32_t reader, bool need_no_residual) {
  if (value < 0 || graph->values[value].dtype != ETRT_DTYPE_FLOAT32) return -1;
  int32_t p = graph->values[value].producer;
  if (p < 0 || etrt_ir_single_consumer(graph, value) != (int32_t)reader) return -1;
  const etrt_ir_node *node = &graph->nodes[p];
  if (node->dead || node->num_outputs != 1) return -1;
  if (strcmp(node->op_type, "Conv") == 0) return node->num_inputs >= 2 ? p : -1;
  if (strcmp(node->op_type, "EtrtFusedConv") != 0) return -1;
  const etrt_attribute *act = etrt_ir_node_attribute(node, "activation");
  if (act != NULL && act->kind == ETRT_ATTRIBUTE_STRING && act->s != NULL && act->s[0] != '\0')
    return -1;
  if (need_no_residual && node->num_inputs > 3 && node->inputs[3] >= 0) return -1;
  return p;
}

/* Same dtype and the same fixed shape: the residual adds element for element. */
static bool etrt_conv_same_shape(const etrt_ir_graph *graph, int32_t a, int32_t b) {
  const etrt_ir_value *x = &graph->values[a], *y = &graph->values[b];
  if (x->dtype != y->dtype || x->rank != y->rank || x->rank < 0) return false;
  if (!etrt_ir_value_is_static(x) || !etrt_ir_value_is_static(y)) return false;
  for (int32_t i = 0; i < x->rank; ++i)
    if (x->max[i] != y->max[i]) return false;
  return true;
}

/* Node `into` becomes the fusion of Conv-like node `conv` (which dies) with Z
 * `residual` (-1: none, or the conv's own) and `relu`; it keeps its output. */
static etrt_status etrt_conv_fuse_into(etrt_ir_graph *graph, uint32_t into, int32_t conv,
                                       int32_t residual, bool relu) {
  etrt_ir_node *c = &graph->nodes[conv];
  etrt_ir_node *n = &graph->nodes[into];
  int32_t inputs[4] = {c->inputs[0], c->inputs[1], c->num_inputs > 2 ? c->inputs[2] : -1,
                       c->num_inputs > 3 ? c->inputs[3] : -1};
  if (residual >= 0) inputs[3] = residual;
  uint32_t count = inputs[3] >= 0 ? 4 : inputs[2] >= 0 ? 3 : 2;
  n->op_type = "EtrtFusedConv";
  n->domain = "";
  n->num_inputs = 0;
  for (uint32_t i = 0; i < count; ++i)
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, n, i, inputs[i]));
  n->num_attributes = 0;
  for (uint32_t a = 0; a < c->num_attributes; ++a)
    if (strcmp(c->attributes[a].name, "activation") != 0)
      ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, n, &c->attributes[a]));
  if (relu) {
    etrt_attribute act = {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = "Relu"};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, n, &act));
  }
  graph->values[c->outputs[0]].producer = -1;
  c->dead = true;
  return ETRT_OK;
}

etrt_status etrt_pass_fuse_conv(etrt_ir_graph *graph, uint32_t *fused) {
  *fused = 0;
  if (etrt_op_find("EtrtFusedConv") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *node = &graph->nodes[n];
    if (node->dead || node->num_outputs != 1 || node->outputs[0] < 0) continue;
    if (strcmp(node->op_type, "Relu") == 0 && node->num_inputs == 1) {
      int32_t p = etrt_conv_fusable_producer(graph, node->inputs[0], n, false);
      if (p < 0) continue;
      ETRT_RETURN_IF_ERROR(etrt_conv_fuse_into(graph, n, p, -1, true));
      ++*fused;
    } else if (strcmp(node->op_type, "Add") == 0 && node->num_inputs == 2) {
      for (int side = 0; side < 2; ++side) {
        int32_t product = node->inputs[side], residual = node->inputs[1 - side];
        if (residual < 0 || residual == product) continue;
        int32_t p = etrt_conv_fusable_producer(graph, product, n, true);
        if (p < 0 || !etrt_conv_same_shape(graph, product, residual) ||
            !etrt_conv_same_shape(graph, product, node->outputs[0]))
          continue;
        ETRT_RETURN_IF_ERROR(etrt_conv_fuse_into(graph, n, p, residual, false));
        ++*fused;
        break;
      }
    }
  }
  return ETRT_OK;
}
