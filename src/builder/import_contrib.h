/* The com.microsoft operators that onnxruntime's quantization and transformer
 * optimisation tools emit, imported as the engine operations they are made of. */
#ifndef ETRT_BUILDER_IMPORT_CONTRIB_H
#define ETRT_BUILDER_IMPORT_CONTRIB_H

#include <stdbool.h>
#include <stdint.h>

#include "builder/ir.h"

/* Whether `op_type` of the com.microsoft domain is imported. */
bool etrt_import_contrib_known(const char *op_type);

/* Adds the engine nodes of one com.microsoft node (inputs -1 where omitted; outputs
 * -1 where unnamed). `label` names the node in messages. Refuses the forms it does
 * not import (an Attention with a past state, say), naming the node and the input or
 * attribute. */
etrt_status etrt_import_contrib(etrt_ir_graph *graph, const char *label, const char *op_type,
                                const char *name, uint32_t num_inputs, const int32_t *inputs,
                                uint32_t num_outputs, const int32_t *outputs,
                                uint32_t num_attributes, const etrt_attribute *attributes);

#endif
