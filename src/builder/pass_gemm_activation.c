/* EtrtMatMulBias -> Relu or Gelu becomes one EtrtMatMulBias with `activation`, applied
 * in the GEMM's epilogue (cuBLASLt's RELU_BIAS and GELU_BIAS) instead of a second pass
 * over the product: for the feed-forward layers of transformers, one write and one read
 * of the widest activation of the block saved. */
#include <string.h>

#include "builder/passes.h"
#include "engine/op.h"

/* The epilogue that computes this activation node, or NULL. cuBLASLt's GELU is the
 * tanh form: an exact (erf) Gelu is taken only with `approximate_gelu`. */
static const char *etrt_gemm_activation_of(const etrt_ir_node *node, bool approximate_gelu) {
  if (node->num_inputs != 1 || node->num_outputs != 1 || node->outputs[0] < 0) return NULL;
  if (strcmp(node->op_type, "Relu") == 0) return "relu";
  if (strcmp(node->op_type, "Gelu") != 0) return NULL;
  const etrt_attribute *form = etrt_ir_node_attribute(node, "approximate");
  bool tanh_form = form != NULL && form->kind == ETRT_ATTRIBUTE_STRING && form->s != NULL &&
                   strcmp(form->s, "tanh") == 0;
  bool exact = form == NULL || (form->kind == ETRT_ATTRIBUTE_STRING && form->s != NULL &&
                                strcmp(form->s, "none") == 0);
  return tanh_form || (exact && approximate_gelu) ? "gelu_tanh" : NULL;
}

etrt_status etrt_pass_fuse_gemm_activation(etrt_ir_graph *graph, bool approximate_gelu,
                                           uint32_t *fused) {
  *fused = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *act = &graph->nodes[n];
    if (act->dead) continue;
    const char *activation = etrt_gemm_activation_of(act, approximate_gelu);
    int32_t product = activation != NULL ? act->inputs[0] : -1;
    if (product < 0 || etrt_ir_single_consumer(graph, product) != (int32_t)n ||
        etrt_ir_is_output(graph, product))
      continue;
    int32_t m_index = graph->values[product].producer;
    if (m_index < 0) continue;
    etrt_ir_node *matmul = &graph->nodes[m_index];
    if (matmul->dead || strcmp(matmul->op_type, "EtrtMatMulBias") != 0 ||
        matmul->num_outputs != 1 || etrt_ir_node_attribute(matmul, "activation") != NULL)
      continue;
    const etrt_attribute attribute = {
        .name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = activation};
    ETRT_RETURN_IF_ERROR(etrt_ir_node_set_attribute(graph, matmul, &attribute));
    /* The product node writes the activation's output. */
    int32_t y = act->outputs[0];
    matmul->outputs[0] = y;
    graph->values[y].producer = m_index;
    graph->values[product].producer = -1;
    act->dead = true;
    ++*fused;
  }
  return ETRT_OK;
}
