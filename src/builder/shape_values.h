/* Graph inputs passed by value whose values the plans need when they are built
 * (a Reshape's shape, Slice's starts, TopK's k given as graph inputs rather than
 * initializers), from --shape-values texts (the syntax is documented at
 * etrt_build_options.shape_values in include/etrt/build.h). Such an input becomes an
 * engine shape input bounded by the values given: the program refuses any other
 * value at run time. */
#ifndef ETRT_BUILDER_SHAPE_VALUES_H
#define ETRT_BUILDER_SHAPE_VALUES_H

#include <stdint.h>

#include "builder/ir.h"

/* Most values one input may carry (the engine's limit for a shape input). */
#define ETRT_SHAPE_VALUES_MAX 64

/* Checks the syntax of one --shape-values text (no graph needed). */
etrt_status etrt_shape_value_spec_check(const char *spec);

/* Applies the texts to the graph inputs, before --shape: a 1-D input's size becomes
 * its number of values; an input without a shape in the model is taken as 1-D.
 * Refuses a text naming no graph input, an input named twice, an input that is not
 * int32 or int64 of rank 0 or 1, a count that contradicts the model, min > max, and
 * an input no operation needs the values of. Then refuses every graph input whose
 * values some operation needs (etrt_host_values_find) and that got none, naming the
 * operation and the flag to pass (or, for an input that cannot be passed by value,
 * saying so). */
etrt_status etrt_shape_values_apply(etrt_ir_graph *graph, const char *const *specs, uint32_t count);

#endif
