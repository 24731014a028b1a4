/* Bounds of the graph inputs' dynamic dimensions, from --shape texts (the syntax is
 * documented at etrt_build_options.shapes in include/etrt/build.h). */
#ifndef ETRT_BUILDER_SHAPE_SPEC_H
#define ETRT_BUILDER_SHAPE_SPEC_H

#include <stdint.h>

#include "builder/ir.h"

/* Checks the syntax of one --shape text (no graph needed), so that the command
 * line can refuse a bad flag before reading the model. */
etrt_status etrt_shape_spec_check(const char *spec);

/* Applies the texts to the graph inputs (symbol bounds first, then whole-input
 * shapes, which win), then checks that every input axis has bounds: an unbounded
 * axis is refused naming the input, the axis and its symbol, and the flag to pass.
 * A text naming neither an input nor a symbol is refused, as is one that
 * contradicts a size fixed in the model or has min > max. */
etrt_status etrt_shape_specs_apply(etrt_ir_graph *graph, const char *const *specs, uint32_t count);

#endif
