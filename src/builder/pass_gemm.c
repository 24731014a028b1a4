/* MatMul + Add of a constant bias -> Gemm (2-D) or EtrtMatMulBias (a batch of rows by
 * one 2-D B, as transformers' linear layers): the bias rides in the GEMM's epilogue
 * instead of a second pass over the output. */
#include <string.h>

#include "builder/passes.h"
#include "engine/op.h"

static bool etrt_gemm_is_matrix(const etrt_ir_graph *graph, int32_t value) {
  if (value < 0) return false;
  const etrt_ir_value *v = &graph->values[value];
  return v->rank == 2 && v->dtype == ETRT_DTYPE_FLOAT32;
}

/* A constant float32 bias of n elements shaped [n] or [1, n]: Gemm's C broadcasts
 * it over the rows exactly as Add would. */
static bool etrt_gemm_is_bias(const etrt_ir_graph *graph, int32_t value, int64_t n) {
  if (value < 0) return false;
  const etrt_ir_value *v = &graph->values[value];
  if (!v->is_constant || v->dtype != ETRT_DTYPE_FLOAT32) return false;
  return (v->rank == 1 && v->max[0] == n) || (v->rank == 2 && v->max[0] == 1 && v->max[1] == n);
}

etrt_status etrt_pass_fuse_gemm(etrt_ir_graph *graph, uint32_t *fused) {
  *fused = 0;
  if (etrt_op_find("Gemm") == NULL) return ETRT_OK;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *add = &graph->nodes[n];
    if (add->dead || strcmp(add->op_type, "Add") != 0 || add->num_inputs != 2 ||
        add->num_outputs != 1 || add->outputs[0] < 0)
      continue;
    for (int side = 0; side < 2; ++side) {
      int32_t product = add->inputs[side], bias = add->inputs[1 - side];
      if (product < 0 || bias < 0) continue;
      int32_t m_index = graph->values[product].producer;
      if (m_index < 0 || etrt_ir_single_consumer(graph, product) != (int32_t)n) continue;
      etrt_ir_node *matmul = &graph->nodes[m_index];
      if (matmul->dead || strcmp(matmul->op_type, "MatMul") != 0 || matmul->num_inputs != 2)
        continue;
      int32_t a = matmul->inputs[0], b = matmul->inputs[1];
      if (a < 0 || !etrt_gemm_is_matrix(graph, b)) continue;
      const etrt_ir_value *av = &graph->values[a];
      bool rows =
          av->rank > 2 && av->dtype == ETRT_DTYPE_FLOAT32 && etrt_op_find("EtrtMatMulBias") != NULL;
      if (!etrt_gemm_is_matrix(graph, a) && !rows) continue;
      int64_t n = graph->values[b].max[1];
      if (!etrt_gemm_is_bias(graph, bias, n)) continue;
      /* EtrtMatMulBias takes the bias as a vector only. */
      if (rows && graph->values[bias].rank != 1) continue;
      /* The Add must not broadcast the product to a larger shape. */
      if (graph->values[add->outputs[0]].rank != graph->values[product].rank) continue;
      /* The MatMul node becomes the Gemm and writes the Add's output. */
      int32_t y = add->outputs[0];
      matmul->op_type = rows ? "EtrtMatMulBias" : "Gemm";
      ETRT_RETURN_IF_ERROR(etrt_ir_node_set_input(graph, matmul, 2, bias));
      matmul->outputs[0] = y;
      graph->values[y].producer = m_index;
      graph->values[product].producer = -1;
      add->dead = true;
      ++*fused;
      break;
    }
  }
  return ETRT_OK;
}
