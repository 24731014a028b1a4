/* Sequence and optional values, unrolled at import.
 *
 * The engine has tensors only. A sequence whose length is known when the program is
 * built is a list of tensor values of the IR graph; an optional is such a list of at
 * most one value (or a present sequence). The sequence operators (SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
 * SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement,
 * OptionalGetElement, Identity of a sequence) only rearrange those lists, or become the
 * tensor operators they stand for (Split, Concat, Unsqueeze, Identity, constants).
 * Positions must be constants at import; the lengths of sequence graph inputs come
 * from the build's --sequence specs. A sequence at the program's boundary is one
 * method input or output per element, named "NAME[i]" (docs/architecture.md). */
#ifndef ETRT_BUILDER_IMPORT_SEQUENCE_H
#define ETRT_BUILDER_IMPORT_SEQUENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "builder/ir.h"
#include "builder/onnx_model.h"

typedef enum etrt_import_list_kind {
  ETRT_IMPORT_LIST_SEQUENCE = 0,
  ETRT_IMPORT_LIST_OPTIONAL_TENSOR = 1,  /* elements[0] when present */
  ETRT_IMPORT_LIST_OPTIONAL_SEQUENCE = 2 /* the elements when present */
} etrt_import_list_kind;

typedef struct etrt_import_list {
  const char *name; /* the ONNX value's name (graph-owned) */
  etrt_import_list_kind kind;
  bool present;      /* optionals: holds a value (sequences: always) */
  etrt_dtype dtype;  /* the elements' type where known (ETRT_DTYPE_INVALID otherwise) */
  int32_t *elements; /* IR values, graph-owned */
  uint32_t count;
} etrt_import_list;

typedef struct etrt_import_lists {
  etrt_import_list *items; /* malloc'd */
  uint32_t count, capacity;
} etrt_import_lists;

void etrt_import_lists_free(etrt_import_lists *lists);
/* The list named `name`, or NULL (a tensor, or undefined). */
const etrt_import_list *etrt_import_lists_find(const etrt_import_lists *lists, etrt_onnx_str name);
/* Adds (or replaces) a list; the elements are copied into the graph. */
etrt_status etrt_import_lists_add(etrt_ir_graph *g, etrt_import_lists *lists, const char *name,
                                  etrt_import_list_kind kind, bool present, etrt_dtype dtype,
                                  const int32_t *elements, uint32_t count);

/* Whether the node is one of the operators above (Identity and OptionalGetElement only
 * where their input is a list; Optional, OptionalHasElement always). */
bool etrt_import_sequence_handles(const etrt_import_lists *lists, const etrt_onnx_node *node);

/* Resolves a tensor name of the graph being imported (the importer's resolution:
 * outer scopes included). */
typedef etrt_status (*etrt_import_resolve_fn)(void *user, etrt_onnx_str name, int32_t *out);
/* Whether a scalar value is known at import, and its value (etrt_import_known). */
typedef etrt_status (*etrt_import_known_fn)(void *user, int32_t value, bool *known, int64_t *out);
/* The values of a 1-D value known at import (etrt_import_known_values). */
typedef etrt_status (*etrt_import_known_values_fn)(void *user, int32_t value, int64_t *values,
                                                   size_t max, size_t *count, bool *known);

/* Imports one such node: lists are read from and written to `lists`; tensors are
 * resolved with `resolve`, positions and split sizes read with `known` and
 * `known_values`; a tensor output is the value `outputs[k]` (made beforehand
 * by the importer, -1 where the node leaves it out). `label` names the node. */
etrt_status etrt_import_sequence_node(etrt_ir_graph *g, etrt_import_lists *lists,
                                      const etrt_onnx_node *node, const char *label,
                                      const int32_t *outputs, etrt_import_resolve_fn resolve,
                                      etrt_import_known_fn known,
                                      etrt_import_known_values_fn known_values, void *user);

/* A graph input of sequence or optional type: `spec` is what the build's --sequence
 * gave for it ("N", "none"; NULL when nothing was given: an optional tensor is then
 * present, a sequence is refused naming the flag). Adds one graph input per element
 * ("NAME[i]", or "NAME" for an optional tensor) typed from the declared element type. */
etrt_status etrt_import_sequence_input(etrt_ir_graph *g, etrt_import_lists *lists,
                                       const etrt_onnx_value_info *info, const char *spec);

/* A graph output that is a list: one graph output per element, each written by a copy
 * ("NAME[i]", or "NAME" for an optional tensor). */
etrt_status etrt_import_sequence_output(etrt_ir_graph *g, const etrt_import_list *list);

/* Checks a --sequence spec "NAME:N" or "NAME:none" (N a length, 0..4096), naming it. */
etrt_status etrt_import_sequence_spec_check(const char *spec);

#endif
