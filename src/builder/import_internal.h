/* The importer's state, shared by import.c and import_unroll.c (bodies inlined in
 * place: SequenceMap, Loops over sequences). */
#ifndef ETRT_BUILDER_IMPORT_INTERNAL_H
#define ETRT_BUILDER_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "builder/import_sequence.h"
#include "builder/ir.h"
#include "builder/onnx_model.h"

/* Most bodies inlined one inside another. */
#define ETRT_IMPORT_MAX_INLINE 8
/* Most values of enclosing graphs that the bodies of one control node read. */
#define ETRT_IMPORT_MAX_CAPTURES 256

/* The values of the enclosing graph that the bodies of one control node read, shared
 * by its bodies: they become the node's last inputs and every body's last inputs. */
typedef struct etrt_import_captures {
  int32_t values[ETRT_IMPORT_MAX_CAPTURES];
  uint32_t count;
} etrt_import_captures;

typedef struct etrt_import {
  const etrt_onnx_model *model;
  etrt_ir_graph *graph;
  /* A body: the import of the enclosing graph, the captures of the node being imported
   * there, and this body's value for each capture (-1: not read). */
  struct etrt_import *parent;
  etrt_import_captures *captures;
  int32_t body_capture[ETRT_IMPORT_MAX_CAPTURES];
  int depth;         /* 0 for the main graph */
  const char *label; /* the node a body belongs to, for messages */
  /* The sequence and optional values of this graph, unrolled (import_sequence.h), and
   * the lengths of the main graph's sequence inputs ("NAME:N", "NAME:none"). */
  etrt_import_lists lists;
  const char *const *sequences;
  uint32_t num_sequences;
  /* The --shape-values specs: a graph input given one exact value is known when a
   * sequence position, a trip count or a condition reads it (etrt_import_known). */
  const char *const *shape_values;
  uint32_t num_shape_values;
  /* While bodies are inlined (import_unroll.c): the prefix of the names each defines,
   * innermost last; `prefix` is the innermost (NULL outside). */
  const char *prefixes[ETRT_IMPORT_MAX_INLINE];
  int inline_depth;
  const char *prefix;
} etrt_import;

/* The value `name` resolves to in this graph (-1: none): an inlined body's own names
 * first, then this graph's, then enclosing graphs' (which become captures). Refuses a
 * list (a sequence or optional) where a tensor is read. */
etrt_status etrt_import_resolve(etrt_import *im, etrt_onnx_str name, int32_t *out);
/* Imports one node of the graph being imported (index: its position, for messages). */
etrt_status etrt_import_node_add(etrt_import *im, const etrt_onnx_node *node, size_t index);
/* The value a name defined by the graph being imported has (the inlined body's prefix
 * applied), or -1. */
int32_t etrt_import_find_local(const etrt_import *im, etrt_onnx_str name);

/* Whether scalar `value` is known at import (*known), and its value: a constant (bool
 * or integer), an Identity or Not of one, or a graph input given one exact value with
 * --shape-values (which is then marked values_from_import). */
etrt_status etrt_import_known(etrt_import *im, int32_t value, bool *known, int64_t *out);
/* The same for a 1-D graph input given exact values with --shape-values (at most `max`). */
etrt_status etrt_import_known_values(etrt_import *im, int32_t value, int64_t *values, size_t max,
                                     size_t *count, bool *known);

/* SequenceMap: its body inlined once per element (import_unroll.c). */
etrt_status etrt_import_sequence_map(etrt_import *im, const etrt_onnx_node *node, const char *label,
                                     const int32_t *outputs);
/* Whether a Loop carries a sequence or optional value (then it is unrolled). */
bool etrt_import_loop_carries_list(const etrt_import *im, const etrt_onnx_node *node);
/* Such a Loop unrolled: its trip count and condition known at import. */
etrt_status etrt_import_loop_unroll(etrt_import *im, const etrt_onnx_node *node, const char *label,
                                    const int32_t *outputs);
/* Whether a branch of an If gives a sequence or optional (then the branch taken is
 * inlined: its condition must be known at import). */
bool etrt_import_if_gives_list(const etrt_onnx_node *node);
etrt_status etrt_import_if_inline(etrt_import *im, const etrt_onnx_node *node, const char *label,
                                  const int32_t *outputs);

#endif
