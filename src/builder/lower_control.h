/* The bodies of a control node (If, Loop, Scan) lowered into engine plans, for the
 * bounds its inputs have in the network being built: each body is a network of its own
 * whose inputs take those bounds (a Scan's slices without the scan axis, a Loop's
 * iteration number and condition as scalars), built into a CPU plan that the node holds
 * as a GRAPH attribute (engine/ops/control.h). A loop-carried value whose body output
 * leaves its input's bounds widens them, and the body is built again, until they hold.
 * Body inputs that the body needs on the host (a Slice's starts from the iteration
 * number, a Reshape's shape from a value of the enclosing graph known when it is built)
 * become shape inputs, with the bounds of their values. */
#ifndef ETRT_BUILDER_LOWER_CONTROL_H
#define ETRT_BUILDER_LOWER_CONTROL_H

#include <stdint.h>

#include "builder/ir.h"
#include "etrt/network.h"

typedef struct etrt_lower_bodies {
  etrt_attribute *attributes; /* the node's, then one GRAPH per body */
  uint32_t count;
  uint8_t *plans[2];
} etrt_lower_bodies;

/* net_inputs: the network value of each node input (-1: omitted). */
etrt_status etrt_lower_bodies_make(const etrt_ir_node *node, etrt_network *network,
                                   const int32_t *net_inputs, etrt_lower_bodies *out);
void etrt_lower_bodies_release(etrt_lower_bodies *bodies);

#endif
