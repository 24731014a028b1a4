/* Bounds (etrt_op_def.bound) of the operators whose output shapes follow from the values
 * of an input that may be known only at execute (a graph input: Reshape's shape, Slice's
 * starts, TopK's k). The plan is built for these bounds and the executor infers the
 * actual shapes from the values right before the kernel (docs/architecture.md, "Shapes
 * known only at execute"). An axis no input limits is ETRT_OP_DIM_UNBOUNDED: its memory
 * is grown at execute when a larger shape first arrives. */
#ifndef ETRT_ENGINE_OPS_VALUE_BOUND_H
#define ETRT_ENGINE_OPS_VALUE_BOUND_H

#include <stdint.h>

#include "base/status.h"
#include "engine/op.h"

/* How many values input `index` holds, from its dims (a scalar holds 1); refuses an
 * input of rank above 1 or more than `capacity` values, naming the node and input. */
etrt_status etrt_value_bound_count(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                                   int64_t capacity, int64_t *count);

/* lo and hi of one output: `dtype`, `rank`, every axis from 0 to unbounded. */
void etrt_value_bound_open(etrt_tensor *lo, etrt_tensor *hi, etrt_dtype dtype, int32_t rank);

/* The node's infer with every value input not known here read as `probe` (each of its
 * values; 0 or 1) into out[]: the dtypes and ranks, which do not depend on the values,
 * and dims for those values. Refuses a value input of more than 64 values. */
etrt_status etrt_value_bound_probe(const etrt_node *node, const etrt_tensor *inputs, int64_t probe,
                                   etrt_tensor *out);

/* Bounds for ops whose output shapes do not depend on their value inputs (Trilu's k,
 * CumSum's axis): lo = hi = the shapes inferred with the values read as 0. */
etrt_status etrt_value_bound_same(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *lo,
                                  etrt_tensor *hi);

/* Bounds for ops whose outputs have the dtypes and ranks inferred with the value inputs
 * read as 1 and any dims (Tile, Expand, ConstantOfShape, Pad, the windows). */
etrt_status etrt_value_bound_open_probe(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *lo, etrt_tensor *hi);

#endif
