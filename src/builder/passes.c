/* The pass pipeline. Identities go first, before shape inference, so that
 * everything after sees producers and consumers directly; folding runs before the weight rewrites
 * so that weights built by constant subgraphs (a Transpose of an initializer) are constants by
 * then; dead code goes last, taking the nodes the others left unread. */
#include "builder/passes.h"

#include <string.h>

#include "builder/lower.h"

#define ETRT_PASSES_DEFAULT_FOLD_LIMIT ((size_t)64 << 20)

/* Constant work inside bodies (what they compute from constants, their own and those
 * copied in from enclosing graphs) is done once here, not at every iteration. */
static etrt_status etrt_passes_fold_bodies(etrt_ir_graph *graph, size_t limit, uint32_t *folded) {
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    for (uint32_t b = 0; b < node->num_bodies; ++b) {
      uint32_t count = 0, dead = 0;
      ETRT_RETURN_IF_ERROR(etrt_pass_fold_constants(node->bodies[b], limit, &count));
      ETRT_RETURN_IF_ERROR(etrt_pass_eliminate_dead(node->bodies[b], &dead));
      *folded += count;
      ETRT_RETURN_IF_ERROR(etrt_passes_fold_bodies(node->bodies[b], limit, folded));
    }
  }
  return ETRT_OK;
}

etrt_status etrt_passes_run(etrt_ir_graph *graph, size_t fold_limit_bytes, etrt_pass_stats *stats) {
  memset(stats, 0, sizeof *stats);
  if (fold_limit_bytes == 0) fold_limit_bytes = ETRT_PASSES_DEFAULT_FOLD_LIMIT;
  ETRT_RETURN_IF_ERROR(etrt_pass_drop_identity(graph, &stats->identities));
  ETRT_RETURN_IF_ERROR(etrt_lower_check_ops(graph));
  ETRT_RETURN_IF_ERROR(etrt_pass_fold_if(graph, &stats->ifs));
  if (stats->ifs > 0) {
    /* The branches inlined bring their own copies. */
    uint32_t more = 0;
    ETRT_RETURN_IF_ERROR(etrt_pass_drop_identity(graph, &more));
    stats->identities += more;
  }
  ETRT_RETURN_IF_ERROR(etrt_lower_infer_shapes(graph));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_qdq(graph, &stats->qdq));
  ETRT_RETURN_IF_ERROR(etrt_pass_fold_constants(graph, fold_limit_bytes, &stats->folded));
  ETRT_RETURN_IF_ERROR(etrt_passes_fold_bodies(graph, fold_limit_bytes, &stats->folded));
  ETRT_RETURN_IF_ERROR(etrt_pass_fold_batchnorm(graph, &stats->batchnorms, &stats->scales));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_gemm(graph, &stats->gemms));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_gelu(graph, &stats->gelus));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_hardswish(graph, &stats->hardswishes));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_add_layer_norm(graph, &stats->add_norms));
  return etrt_pass_eliminate_dead(graph, &stats->dead);
}
