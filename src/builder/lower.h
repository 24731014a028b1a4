/* IR nodes -> an engine network (etrt/network.h): shared by shape inference (the
 * whole graph in a throw-away network) and plan building (one partition). */
#ifndef ETRT_BUILDER_LOWER_H
#define ETRT_BUILDER_LOWER_H

#include <stdint.h>

#include "builder/ir.h"
#include "builder/lower_half.h"
#include "builder/partition.h"
#include "etrt/network.h"

/* Adds IR value `value` as a network input with its bounds; net_ids[value] = id. */
etrt_status etrt_lower_input(const etrt_ir_graph *graph, etrt_network *network, int32_t value,
                             int32_t *net_ids);

/* Adds nodes[0..count) to the network in that order. net_ids maps IR value ids to
 * network value ids (-1: not in the network yet); constants a node reads are added
 * on first use, any other input must already be mapped. Outputs are mapped as the
 * nodes are added. Failures name the node. */
etrt_status etrt_lower_nodes(const etrt_ir_graph *graph, etrt_network *network,
                             const uint32_t *nodes, uint32_t count, int32_t *net_ids);

/* Refuses, in one message, every operator type of a live node the engine has no
 * definition of. */
etrt_status etrt_lower_check_ops(const etrt_ir_graph *graph);

/* Infers every value's dtype and bounds by lowering the whole graph into a
 * throw-away network (so the engine's own op definitions decide them), and writes
 * them into the IR. */
etrt_status etrt_lower_infer_shapes(etrt_ir_graph *graph);

/* One partition as an engine plan (malloc'd): its inputs are network inputs with
 * their bounds, its outputs are marked in order, and each is named as its IR value,
 * so the plan's I/O table is the partition's inputs then outputs. A CUDA plan built
 * with fp16 or bf16 holds its float32 values in that type (lower_half.h; what was
 * converted in *half_stats, which may be NULL); the I/O keeps the partition's types. */
etrt_status etrt_lower_partition_plan(const etrt_ir_graph *graph, const etrt_partition *part,
                                      const etrt_plan_options *options,
                                      etrt_lower_half_stats *half_stats, uint8_t **plan,
                                      size_t *plan_size);

#endif
