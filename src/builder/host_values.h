/* Which values an engine plan must know on the host when it is built: those an
 * operation reads at a value input (a Reshape's shape, Slice's starts, TopK's k...),
 * and everything they are computed from (except inputs whose dims alone are read,
 * as Shape's). A graph input among them must be given at build time
 * (--shape-values), and on a GPU target the nodes computing them stay on the CPU. */
#ifndef ETRT_BUILDER_HOST_VALUES_H
#define ETRT_BUILDER_HOST_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "builder/ir.h"

/* Why a value is needed: the live node reading it (or something computed from it)
 * at a value input, and that input's position. node is -1 for a value no plan
 * needs on the host. */
typedef struct etrt_host_value_use {
  int32_t node;
  uint32_t input;
  /* Only ops with a `bound` (op.h) read it: without the values at build time the plan
   * takes them at execute, so a graph input among them needs no --shape-values. */
  bool optional;
} etrt_host_value_use;

/* Fills uses[0..graph->num_values) (walking the live nodes once, last to first:
 * the node array is a topological order). Operators the engine does not define are
 * skipped (lowering refuses them by name). */
void etrt_host_values_find(const etrt_ir_graph *graph, etrt_host_value_use *uses);

#endif
