/* What the pattern passes (pass_gelu.c, pass_hardswish.c) ask of the graph when they
 * recognise an operator spelt as several nodes: a chain link written by a live node of
 * a given type and read by one node alone, a constant scalar of a given value, two
 * float32 values of the same bounds; and the removal of the replaced nodes. */
#ifndef ETRT_BUILDER_PASS_MATCH_H
#define ETRT_BUILDER_PASS_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "builder/ir.h"

/* The node writing `value` when it is a live `op` of `inputs` inputs whose only reader is
 * `reader`; else -1. */
int32_t etrt_match_producer(const etrt_ir_graph *graph, int32_t value, const char *op,
                            uint32_t inputs, int32_t reader);

/* Whether `value` is a float32 constant of one element equal to `want` (within float
 * rounding). */
bool etrt_match_scalar(const etrt_ir_graph *graph, int32_t value, double want);

/* Whether two values are float32 with the same rank and bounds. */
bool etrt_match_same_shape(const etrt_ir_graph *graph, int32_t a, int32_t b);

/* Marks nodes dead and their outputs without a producer. */
void etrt_match_remove(etrt_ir_graph *graph, const int32_t *nodes, uint32_t count);

#endif
