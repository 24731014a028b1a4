/* Shape bounds: an operation's output dtypes and min/max dims inferred from its
 * inputs' bounds, by running its shape inference at the inputs' smallest and at their
 * largest shapes. Shared by the network (which records the result as it grows) and
 * the plan verifier (which checks that a plan's recorded values are what inference
 * gives).
 *
 * Values known on the host at build time are tracked at both ends (`at[0]` at the
 * smallest shapes, `at[1]` at the largest): constants, the value bounds of shape
 * inputs, and the outputs of operations evaluated on the host because every input they
 * read is known and their outputs are small (shape arithmetic such as Shape -> Gather
 * -> Concat). An operation whose value_inputs are not known is refused unless its
 * definition has a `bound` (op.h): then its outputs are planned at those bounds and
 * their dims are known at execute only (etrt_node.dims_at_execute), and so are those of
 * every node reading them. */
#ifndef ETRT_ENGINE_BOUNDS_H
#define ETRT_ENGINE_BOUNDS_H

#include "base/arena.h"
#include "engine/graph.h"

/* Most outputs of an op with a `bound`. */
#define ETRT_BOUNDS_MAX_OUTPUTS 64

typedef struct etrt_bounds_host {
  const void *at[2];
} etrt_bounds_host;

/* Infers node `index` (def resolved, state prepared). With `record`, writes each
 * output value's dtype, rank and bounds; without, refuses a value whose recorded
 * dtype, rank or bounds differ. Host values computed go into host[output] (bytes in
 * `arena`). `scratch` holds num_inputs + 2 * num_outputs tensors. */
etrt_status etrt_bounds_infer_node(etrt_graph *graph, uint32_t index, etrt_bounds_host *host,
                                   etrt_arena *arena, int record, etrt_tensor *scratch);

/* host[v] for the values known before any node runs: constants and shape inputs. */
void etrt_bounds_host_init(const etrt_graph *graph, uint32_t value, etrt_bounds_host *host);

#endif
