/* The builder's graph IR: what import produces, the passes rewrite, the partitioner
 * cuts and the emitter lowers into engine networks and a .pte program.
 *
 * Values and nodes are addressed by index (int32). Nodes are kept in topological
 * order: import sorts them, and passes only rewrite nodes in place or mark them dead,
 * so the array order stays a valid schedule. Every string, array and attribute in the
 * graph belongs to the graph's arena and lives until etrt_ir_graph_destroy; constant
 * data may instead be a view into the model's bytes (which must outlive the graph). */
#ifndef ETRT_BUILDER_IR_H
#define ETRT_BUILDER_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "etrt/network.h"
#include "etrt/types.h"

typedef struct etrt_ir_value {
  const char *name;
  etrt_dtype dtype; /* ETRT_DTYPE_INVALID until known */
  int32_t rank;     /* -1 until known */
  /* Size bounds per axis; min == max for a fixed axis. */
  int64_t min[ETRT_MAX_RANK];
  int64_t max[ETRT_MAX_RANK];
  /* The ONNX dimension symbol of each axis of a graph input (NULL when the axis
   * was a number); kept for messages. */
  const char *symbol[ETRT_MAX_RANK];
  int32_t producer;    /* index of the node that writes it, or -1 */
  int32_t input_index; /* position among the graph inputs, or -1 */
  /* A constant (initializer, Constant node, folded result): its host bytes, laid
   * out densely in row-major order, nbytes == numel * dtype size. */
  bool is_constant;
  const void *data;
  size_t nbytes;
  /* A graph input passed by value (--shape-values): the bounds of each of its
   * value_count values (graph-owned), which the plans' shape inference reads; the
   * engine takes it as a shape input. NULL for every other value. */
  const int64_t *value_min;
  const int64_t *value_max;
  int64_t value_count;
  /* Those values were read when the model was imported (a sequence position, the trip
   * count of a Loop over a sequence, an If's condition over sequences): the program is
   * built for them and etrt_shape_values_apply leaves the input alone. */
  bool values_from_import;
} etrt_ir_value;

typedef struct etrt_ir_node {
  const char *op_type;
  const char *domain; /* "" for the default ONNX domain */
  const char *name;   /* never NULL; generated when the model has none */
  uint32_t num_inputs, num_outputs, num_attributes;
  int32_t *inputs;  /* value ids; -1 for an omitted optional input */
  int32_t *outputs; /* value ids; -1 for an omitted optional output */
  etrt_attribute *attributes;
  bool dead; /* removed by a pass; skipped everywhere */
  /* Control flow (If, Loop, Scan): the body graphs, owned by this node's graph (also when
   * the node is dead), and the attribute name of each. The node's last num_captures
   * inputs are the values of this graph the bodies read, which are also the last inputs
   * of every body (engine/ops/control.h). Lowering turns each body into a plan. */
  struct etrt_ir_graph **bodies;
  const char **body_names;
  uint32_t num_bodies, num_captures;
} etrt_ir_node;

typedef struct etrt_ir_index etrt_ir_index;

typedef struct etrt_ir_graph {
  etrt_ir_value *values;
  uint32_t num_values, values_capacity;
  etrt_ir_node *nodes;
  uint32_t num_nodes, nodes_capacity;
  int32_t *inputs; /* value ids of the graph inputs, in order */
  uint32_t num_inputs;
  int32_t *outputs;          /* value ids of the graph outputs, in order */
  const char **output_names; /* the model's names of the outputs */
  uint32_t num_outputs;
  int64_t opset; /* the default domain's opset version */
  /* An If branch that cannot be built for the plan's shapes (lower_control.c) is lowered
   * each time the graph around it is: the build warns about it once. */
  bool refusal_warned;
  struct etrt_arena *arena_;
  etrt_ir_index *index_; /* name -> value id */
} etrt_ir_graph;

etrt_status etrt_ir_graph_create(etrt_ir_graph **out);
void etrt_ir_graph_destroy(etrt_ir_graph *graph);

/* Zeroed memory owned by the graph (16-byte aligned); NULL when out of memory. */
void *etrt_ir_alloc(etrt_ir_graph *graph, size_t size);
/* The same without zeroing, for buffers the caller fills at once (weights). */
void *etrt_ir_alloc_uninit(etrt_ir_graph *graph, size_t size);
/* A copy owned by the graph; NULL when out of memory. */
char *etrt_ir_strdup(etrt_ir_graph *graph, const char *text);
char *etrt_ir_strndup(etrt_ir_graph *graph, const char *text, size_t size);
/* printf into graph-owned memory; NULL when out of memory. */
char *etrt_ir_printf(etrt_ir_graph *graph, const char *fmt, ...) ETRT_PRINTF(2, 3);

/* Adds a value named `name` (copied) with unknown type and shape. A name already in
 * the graph is refused. */
etrt_status etrt_ir_add_value(etrt_ir_graph *graph, const char *name, int32_t *out);
/* Adds a value whose name is `base` made unique by a suffix (for values passes
 * create). */
etrt_status etrt_ir_add_value_unique(etrt_ir_graph *graph, const char *base, int32_t *out);
/* The value named `name`, or -1. */
int32_t etrt_ir_find_value(const etrt_ir_graph *graph, const char *name);
/* The same for a name that is not NUL-terminated (`size` bytes). */
int32_t etrt_ir_find_value_n(const etrt_ir_graph *graph, const char *name, size_t size);

/* Makes `value` a constant of that type and shape whose bytes are `data` (not copied:
 * a view that must outlive the graph, or memory from etrt_ir_alloc). */
etrt_status etrt_ir_set_constant(etrt_ir_graph *graph, int32_t value, etrt_dtype dtype,
                                 int32_t rank, const int64_t *dims, const void *data,
                                 size_t nbytes);

/* Adds a constant named after `base` (made unique) whose zeroed bytes are allocated
 * in the graph and returned in *data for the caller to fill. */
etrt_status etrt_ir_add_constant(etrt_ir_graph *graph, const char *base, etrt_dtype dtype,
                                 int32_t rank, const int64_t *dims, void **data, int32_t *out);

/* Appends a node; inputs, outputs and attributes are copied into the graph (the
 * attributes deeply). Sets each output's producer. `name` may be NULL or "" (a name
 * is made from the op type and position). */
etrt_status etrt_ir_add_node(etrt_ir_graph *graph, const char *op_type, const char *domain,
                             const char *name, uint32_t num_inputs, const int32_t *inputs,
                             uint32_t num_outputs, const int32_t *outputs, uint32_t num_attributes,
                             const etrt_attribute *attributes, int32_t *out);

etrt_status etrt_ir_add_input(etrt_ir_graph *graph, int32_t value);
etrt_status etrt_ir_add_output(etrt_ir_graph *graph, int32_t value, const char *name);

/* Sets input `index` of a node (growing its input list with omitted inputs). */
etrt_status etrt_ir_node_set_input(etrt_ir_graph *graph, etrt_ir_node *node, uint32_t index,
                                   int32_t value);
/* Sets (replacing one of the same name) or adds an attribute, copied. */
etrt_status etrt_ir_node_set_attribute(etrt_ir_graph *graph, etrt_ir_node *node,
                                       const etrt_attribute *attribute);

/* Makes every reader of `from` (node inputs and graph outputs) read `to` instead. */
void etrt_ir_replace_uses(etrt_ir_graph *graph, int32_t from, int32_t to);

/* How many live nodes read `value`, plus one per graph output slot that is it. */
uint32_t etrt_ir_use_count(const etrt_ir_graph *graph, int32_t value);
bool etrt_ir_is_output(const etrt_ir_graph *graph, int32_t value);
/* The live node reading `value` when exactly one does and no graph output is it,
 * else -1. */
int32_t etrt_ir_single_consumer(const etrt_ir_graph *graph, int32_t value);

/* Sorts the nodes topologically (stable: the model's order where it is already
 * valid) and refuses a cycle or a read of a value nothing writes, naming the node
 * and the value. Run once after import. */
etrt_status etrt_ir_sort(etrt_ir_graph *graph);

/* Number of elements of a value with known, fixed shape; -1 otherwise. */
int64_t etrt_ir_value_numel(const etrt_ir_value *value);
/* True when every axis is fixed (min == max). */
bool etrt_ir_value_is_static(const etrt_ir_value *value);

/* Attribute lookup on a node (NULL when absent). */
const etrt_attribute *etrt_ir_node_attribute(const etrt_ir_node *node, const char *name);
int64_t etrt_ir_node_attribute_int(const etrt_ir_node *node, const char *name, int64_t fallback);
float etrt_ir_node_attribute_float(const etrt_ir_node *node, const char *name, float fallback);

/* Live nodes. */
uint32_t etrt_ir_live_node_count(const etrt_ir_graph *graph);

#endif
