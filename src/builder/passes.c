/* The pass pipeline. Identities go first, before shape inference, so that
 * everything after sees producers and consumers directly; folding runs before the weight rewrites
 * so that weights built by constant subgraphs (a Transpose of an initializer) are constants by
 * then; dead code goes last, taking the nodes the others left unread. */
#include "builder/passes.h"

#include <string.h>

#include "builder/lower.h"

#define ETRT_PASSES_DEFAULT_FOLD_LIMIT ((size_t)64 << 20)

etrt_status etrt_passes_run(etrt_ir_graph *graph, size_t fold_limit_bytes, etrt_pass_stats *stats) {
  memset(stats, 0, sizeof *stats);
  if (fold_limit_bytes == 0) fold_limit_bytes = ETRT_PASSES_DEFAULT_FOLD_LIMIT;
  ETRT_RETURN_IF_ERROR(etrt_pass_drop_identity(graph, &stats->identities));
  ETRT_RETURN_IF_ERROR(etrt_lower_infer_shapes(graph));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_qdq(graph, &stats->qdq));
  ETRT_RETURN_IF_ERROR(etrt_pass_fold_constants(graph, fold_limit_bytes, &stats->folded));
  ETRT_RETURN_IF_ERROR(etrt_pass_fold_batchnorm(graph, &stats->batchnorms));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_gemm(graph, &stats->gemms));
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_gelu(graph, &stats->gelus));
  return etrt_pass_eliminate_dead(graph, &stats->dead);
}
