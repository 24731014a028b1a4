/* The partitioner: which device runs each node, and the contiguous runs (in the
 * graph's topological order) that become one engine plan each. */
#ifndef ETRT_BUILDER_PARTITION_H
#define ETRT_BUILDER_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "builder/ir.h"
#include "etrt/types.h"

/* True when the engine can run this node on a CUDA device. */
typedef bool (*etrt_partition_cuda_fn)(const etrt_ir_graph *graph, const etrt_ir_node *node,
                                       void *user);

typedef struct etrt_partition_placement {
  const char *node; /* node name */
  etrt_device device;
} etrt_partition_placement;

typedef struct etrt_partition_options {
  etrt_device target; /* cpu or cuda:N */
  const etrt_partition_placement *placements;
  uint32_t num_placements;
  /* NULL: etrt_partition_cuda_default. Tests pass their own. */
  etrt_partition_cuda_fn cuda_supports;
  void *cuda_user;
} etrt_partition_options;

typedef struct etrt_partition {
  etrt_device device;
  /* Node indices, in the graph's order. A node computing a value that this
   * partition's plan needs when it is built (a value input, and what it is
   * computed from) is listed here even when another partition computes it too:
   * each plan evaluates such values itself. */
  uint32_t *nodes;
  uint32_t num_nodes;
  uint32_t num_recomputed; /* of nodes, those whose outputs another partition provides */
  /* Values computed outside (graph inputs, other partitions' outputs) that the
   * nodes read, in order of first read. Constants are not inputs: they go into the
   * partition's plan. */
  int32_t *inputs;
  uint32_t num_inputs;
  /* Values computed here that later partitions or the graph outputs read, in the
   * order the nodes write them (never those of the recomputed nodes). */
  int32_t *outputs;
  uint32_t num_outputs;
} etrt_partition;

typedef struct etrt_partitioning {
  etrt_partition *parts;
  uint32_t count;
} etrt_partitioning;

/* Whether the engine has a CUDA kernel for the node that takes its input types and
 * shapes, and every input that decides output shapes is a constant (known on the
 * host when the plan is built). Decided by the definition's cuda_supports (op.h),
 * compiled in every build: a CPU-only build partitions as a CUDA build does, and
 * its sim devices run exactly the nodes a GPU would. */
bool etrt_partition_cuda_default(const etrt_ir_graph *graph, const etrt_ir_node *node, void *user);

/* Assigns every live node a device (a placement by name wins; a CUDA target keeps a
 * node on the GPU when cuda_supports says so and no plan needs its outputs on the
 * host when it is built (etrt_host_values_find), else the CPU) and cuts the node
 * order where the device changes. A partition that needs on the host a value another
 * partition computes recomputes its chain (see etrt_partition.nodes); a partition
 * left with nothing to do then is dropped and its neighbours joined when they share
 * a device. Refuses a placement naming no node, or putting on a GPU a node the GPU
 * cannot run. */
etrt_status etrt_partition_graph(const etrt_ir_graph *graph, const etrt_partition_options *options,
                                 etrt_partitioning **out);
void etrt_partitioning_destroy(etrt_partitioning *partitioning);

/* "partition 0 cuda:0: 12 ops (Conv x5, Relu x4, Add x2, Gemm)" into buf. */
void etrt_partition_describe(const etrt_ir_graph *graph, const etrt_partition *part, uint32_t index,
                             char *buf, size_t size);

#endif
