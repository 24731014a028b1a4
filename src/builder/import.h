/* ONNX model -> builder IR. */
#ifndef ETRT_BUILDER_IMPORT_H
#define ETRT_BUILDER_IMPORT_H

#include "builder/ir.h"
#include "builder/onnx_model.h"

/* Imports the model's main graph: initializers and Constant nodes become constants
 * (views into the model where its bytes can be used in place: the model must outlive
 * the graph), graph inputs keep their dimension symbols (unbounded until
 * etrt_shape_specs_apply), nodes are sorted topologically. Operators whose meaning
 * changed between opsets are rewritten to the newest form the engine implements
 * (attributes that became inputs turn into constant inputs), and Softmax, LogSoftmax
 * and Hardmax before opset 13 carry the int attribute "_opset" that their engine
 * definitions read to keep the older 2-D semantics.
 * If, Loop and Scan keep their bodies as IR graphs of their own (etrt_ir_node.bodies):
 * names a body reads from an enclosing graph become the node's and the body's last
 * inputs (captures), constants are copied in; bodies nest at most 8 deep.
 * Nodes of the com.microsoft domain that import_contrib.h lists become engine operations.
 * Sequence and optional values are unrolled into lists of tensor values
 * (import_sequence.h).
 * Refuses what etrt cannot represent (other operator domains, model-local functions,
 * string tensors, sequences whose length is not known) naming the node. */
etrt_status etrt_import_onnx(const etrt_onnx_model *model, etrt_ir_graph **out);
typedef struct etrt_import_options {
  /* The lengths of sequence inputs ("NAME:N") and the absent optional inputs
   * ("NAME:none"), as --sequence takes them. */
  const char *const *sequences;
  uint32_t num_sequences;
  /* --shape-values: a scalar graph input given one exact value ("NAME:V") is known
   * where the import needs a value (a sequence position, the trip count or condition of
   * a Loop over a sequence, the condition of an If over sequences). */
  const char *const *shape_values;
  uint32_t num_shape_values;
} etrt_import_options;

/* The same with options. */
etrt_status etrt_import_onnx_options(const etrt_onnx_model *model,
                                     const etrt_import_options *options, etrt_ir_graph **out);

#endif
