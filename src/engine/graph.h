/* The engine graph: values and nodes, held by a network while it is built and by an
 * engine once a plan is deserialized. Node order is execution order; it is checked to
 * be topological (every input of a node is an input, a constant or an output of an
 * earlier node), so that executors and shape inference walk the nodes once.
 *
 * Everything a graph points to (names, attribute copies, node states, constant bytes
 * of networks) lives in its arena and is freed with it. The I/O table is the inputs
 * in the order they were added, then the outputs in the order they were marked: I/O
 * index i < input_count is inputs[i], else outputs[i - input_count]. */
#ifndef ETRT_ENGINE_GRAPH_H
#define ETRT_ENGINE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "engine/op.h"
#include "etrt/network.h"
#include "etrt/types.h"

typedef enum etrt_value_kind {
  ETRT_VALUE_KIND_INPUT = 0,
  ETRT_VALUE_KIND_OUTPUT = 1, /* produced by a node and bound by the caller */
  ETRT_VALUE_KIND_CONSTANT = 2,
  ETRT_VALUE_KIND_INTERMEDIATE = 3 /* produced by a node, lives in a context buffer */
} etrt_value_kind;

/* Largest graph a plan may hold; bounds the work of verifying a hostile plan. */
#define ETRT_GRAPH_MAX_VALUES (1u << 20)
#define ETRT_GRAPH_MAX_NODES (1u << 20)
#define ETRT_GRAPH_MAX_NODE_ARGS 1024u
#define ETRT_GRAPH_MAX_ATTRIBUTES 1024u
/* Largest axis size anywhere (2^40): keeps products of a few dims far from overflow. */
#define ETRT_GRAPH_MAX_DIM ((int64_t)1 << 40)
/* Bytes of a value computed on the host during shape inference ("shape tensor"). */
#define ETRT_GRAPH_MAX_HOST_VALUE_BYTES ((size_t)64 * 1024)

typedef struct etrt_graph_value {
  const char *name; /* never NULL */
  etrt_value_kind kind;
  int is_shape_input; /* INPUT only: values passed on the host, int64 */
  etrt_dtype dtype;
  int32_t rank;
  int64_t min_dims[ETRT_MAX_RANK];
  int64_t max_dims[ETRT_MAX_RANK]; /* equal to min_dims for a fixed axis */
  /* CONSTANT: the host bytes (numel * dtype size of them). */
  const void *data;
  size_t nbytes;
  /* Shape inputs: bounds of each value (numel of them), NULL otherwise. */
  const int64_t *min_values;
  const int64_t *max_values;
  int32_t producer; /* node index; -1 for inputs and constants */
  /* Produced by a node whose dims_at_execute is set (op.h): the dims (and, for values
   * computed on the host, the values) that shape inference gives before a run are the
   * planned bounds; the run gives the actual ones. Derived, never serialized. */
  uint8_t dims_at_execute;
  /* Produced by a node that shape inference evaluates on the host when every value it
   * reads is known there (bounds.h). Derived, never serialized. */
  uint8_t host_computable;
} etrt_graph_value;

typedef struct etrt_graph {
  etrt_arena arena;
  etrt_graph_value *values;
  uint32_t value_count, value_capacity;
  etrt_node *nodes;
  uint32_t node_count, node_capacity;
  int32_t *inputs; /* value ids of the I/O inputs */
  uint32_t input_count, input_capacity;
  int32_t *outputs; /* value ids of the I/O outputs */
  uint32_t output_count, output_capacity;
} etrt_graph;

void etrt_graph_init(etrt_graph *graph);
void etrt_graph_release(etrt_graph *graph);

/* Appends a copy of `value` (its name, and the value bounds of a shape input, are
 * copied into the arena; constant bytes are not copied). */
etrt_status etrt_graph_add_value(etrt_graph *graph, const etrt_graph_value *value, int32_t *id);
/* Appends a node with copies of its strings, id arrays and attributes. def and
 * state are left NULL. */
etrt_status etrt_graph_add_node(etrt_graph *graph, const char *op_type, const char *name,
                                uint32_t num_inputs, const int32_t *inputs, uint32_t num_outputs,
                                const int32_t *outputs, uint32_t num_attributes,
                                const etrt_attribute *attributes, uint32_t *index);
/* Deep copy of one attribute into the arena (strings, arrays, tensor bytes). */
etrt_status etrt_graph_copy_attribute(etrt_arena *arena, const etrt_attribute *from,
                                      etrt_attribute *to);
/* Appends a node whose strings, arrays, attributes and state already live in the
 * graph's arena (the plan reader builds them there). */
etrt_status etrt_graph_append_node(etrt_graph *graph, const etrt_node *node);
etrt_status etrt_graph_add_io(etrt_graph *graph, int is_input, int32_t value);

uint32_t etrt_graph_io_count(const etrt_graph *graph);
int32_t etrt_graph_io_value(const etrt_graph *graph, uint32_t io_index);

/* Checks the structure: ids in range, every node output an OUTPUT or INTERMEDIATE
 * value produced by exactly that node, node order topological, each I/O listed once
 * with the right kind, every INPUT and OUTPUT value in the I/O table. Sets each
 * value's producer. Messages name the node or value, and the node's byte offset
 * where `node_offsets` (one per node) is given. */
etrt_status etrt_graph_check(etrt_graph *graph, const size_t *node_offsets);

/* A display name for messages: "node 3 'fc1' (Gemm)". */
const char *etrt_graph_node_label(const etrt_graph *graph, uint32_t index, char *buf, size_t size);

#ifdef __cplusplus /* CUDA sources include this header too */
static_assert(ETRT_GRAPH_MAX_DIM == ETRT_OP_DIM_UNBOUNDED, "an unbounded axis is the largest");
#else
_Static_assert(ETRT_GRAPH_MAX_DIM == ETRT_OP_DIM_UNBOUNDED, "an unbounded axis is the largest");
#endif

/* A value whose dims are known only at execute and have no bound on some axis: no memory
 * is planned for it; the context grows its own buffer when a larger shape arrives. */
static inline int etrt_graph_value_unbounded(const etrt_graph_value *v) {
  if (!v->dims_at_execute) return 0;
  for (int32_t a = 0; a < v->rank; ++a)
    if (v->max_dims[a] >= ETRT_GRAPH_MAX_DIM) return 1;
  return 0;
}

/* Values a shape input holds (its fixed numel). */
static inline int64_t etrt_graph_shape_input_count(const etrt_graph_value *value) {
  int64_t n = 1;
  for (int32_t i = 0; i < value->rank; ++i) n *= value->min_dims[i];
  return n;
}

/* Bytes of a shape, checked: numel * dtype size; -1 when unknown dtype or overflow. */
int64_t etrt_graph_nbytes(etrt_dtype dtype, int32_t rank, const int64_t *dims);

#endif
