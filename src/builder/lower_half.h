/* Half precision for a GPU partition (--precision fp16|bf16): the partition's nodes
 * lowered into an engine network with their float32 values in float16 or bfloat16.
 *
 * A node runs in the half type when, with every float32 input converted (but the
 * value inputs of its definition, which decide shapes and stay as they are), its
 * definition infers the half type for each float32 output and the CUDA kernels take
 * it (cuda_supports, as the partitioner asks), and every float32 constant it reads
 * fits the half type (a float16 weight beyond +-65504 would become infinite).
 * Such a node reads float32 constants converted once, in the plan (rounded to
 * nearest even), and activations in the half type. Any other node keeps float32, and
 * a Cast is placed where a value crosses between the two. A Cast node of the model
 * reads its input in whichever type it is there, and one to float32 writes the half
 * type instead. Integer, bool and float64 values are untouched. The plan's inputs and outputs keep
 * the partition's types, so the casts of a graph made of half-capable nodes stand only right after
 * the plan's float32 inputs and right before its float32 outputs (none where the model's own inputs
 * and outputs are already half). */
#ifndef ETRT_BUILDER_LOWER_HALF_H
#define ETRT_BUILDER_LOWER_HALF_H

#include <stdint.h>

#include "builder/ir.h"
#include "builder/partition.h"
#include "etrt/network.h"

typedef struct etrt_lower_half_stats {
  uint32_t half_nodes;  /* nodes that run in the half type */
  uint32_t float_nodes; /* nodes with float32 values that keep float32 */
  uint32_t constants;   /* float32 constants stored in the half type */
  uint32_t casts;       /* Cast nodes added */
} etrt_lower_half_stats;

/* Lowers part's nodes into `network` (its inputs already there, net_ids as
 * etrt_lower_nodes takes it) and marks its outputs, each in its IR type. `half` must
 * be ETRT_DTYPE_FLOAT16 or ETRT_DTYPE_BFLOAT16. */
etrt_status etrt_lower_half_partition(const etrt_ir_graph *graph, const etrt_partition *part,
                                      etrt_dtype half, etrt_network *network, int32_t *net_ids,
                                      etrt_lower_half_stats *stats);

/* The half type a plan with these options computes in: FLOAT16 or BFLOAT16 for a
 * CUDA plan built with fp16 or bf16, else ETRT_DTYPE_INVALID (float32 stays). */
etrt_dtype etrt_lower_half_type(const etrt_plan_options *options);

#endif
