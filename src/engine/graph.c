#include "engine/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"

void etrt_graph_init(etrt_graph *graph) {
  memset(graph, 0, sizeof *graph);
  etrt_arena_init(&graph->arena);
}

void etrt_graph_release(etrt_graph *graph) {
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const etrt_node *node = &graph->nodes[n];
    if (node->def != NULL && node->def->release != NULL && node->state != NULL)
      node->def->release(node->state);
  }
  free(graph->values);
  free(graph->nodes);
  free(graph->inputs);
  free(graph->outputs);
  etrt_arena_release(&graph->arena);
  memset(graph, 0, sizeof *graph);
}

/* Grows an array of `item` bytes to hold one more element. */
static etrt_status etrt_graph_reserve(void **items, uint32_t *capacity, uint32_t count, size_t item,
                                      uint32_t limit, const char *what) {
  if (count < *capacity) return ETRT_OK;
  if (count >= limit)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "graph: more than %u %s", limit, what);
  uint32_t grown = *capacity < 16 ? 16 : *capacity * 2;
  if (grown > limit) grown = limit;
  void *p = realloc(*items, (size_t)grown * item);
  if (p == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory for %s", what);
  *items = p;
  *capacity = grown;
  return ETRT_OK;
}

int64_t etrt_graph_nbytes(etrt_dtype dtype, int32_t rank, const int64_t *dims) {
  int64_t size = (int64_t)etrt_dtype_size(dtype);
  if (size == 0 || rank < 0 || rank > ETRT_MAX_RANK) return -1;
  int64_t n = size;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0 || etrt_mul_overflow_i64(n, dims[i], &n)) return -1;
  }
  return n;
}

etrt_status etrt_graph_add_value(etrt_graph *graph, const etrt_graph_value *value, int32_t *id) {
  ETRT_RETURN_IF_ERROR(etrt_graph_reserve((void **)&graph->values, &graph->value_capacity,
                                          graph->value_count, sizeof *graph->values,
                                          ETRT_GRAPH_MAX_VALUES, "values"));
  etrt_graph_value v = *value;
  const char *name = value->name != NULL ? value->name : "";
  v.name = etrt_arena_strndup(&graph->arena, name, strlen(name));
  if (v.name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  if (value->min_values != NULL) {
    int64_t n = etrt_graph_nbytes(ETRT_DTYPE_INT64, value->rank, value->min_dims);
    if (n < 0) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "value '%s': bad shape", name);
    v.min_values = etrt_arena_memdup(&graph->arena, value->min_values, (size_t)n, 8);
    v.max_values = etrt_arena_memdup(&graph->arena, value->max_values, (size_t)n, 8);
    if (v.min_values == NULL || v.max_values == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  }
  if (v.kind == ETRT_VALUE_KIND_INPUT || v.kind == ETRT_VALUE_KIND_CONSTANT) v.producer = -1;
  graph->values[graph->value_count] = v;
  *id = (int32_t)graph->value_count++;
  return ETRT_OK;
}

etrt_status etrt_graph_copy_attribute(etrt_arena *arena, const etrt_attribute *from,
                                      etrt_attribute *to) {
  memset(to, 0, sizeof *to);
  if (from->name == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "attribute without a name");
  to->name = etrt_arena_strndup(arena, from->name, strlen(from->name));
  to->kind = from->kind;
  if (to->name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  switch (from->kind) {
    case ETRT_ATTRIBUTE_INT:
      to->i = from->i;
      return ETRT_OK;
    case ETRT_ATTRIBUTE_FLOAT:
      to->f = from->f;
      return ETRT_OK;
    case ETRT_ATTRIBUTE_STRING:
      if (from->s == NULL)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s': NULL string", from->name);
      to->s = etrt_arena_strndup(arena, from->s, strlen(from->s));
      return to->s != NULL ? ETRT_OK : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
    case ETRT_ATTRIBUTE_INTS:
    case ETRT_ATTRIBUTE_FLOATS: {
      int ints = from->kind == ETRT_ATTRIBUTE_INTS;
      const void *src = ints ? (const void *)from->ints : (const void *)from->floats;
      size_t item = ints ? sizeof(int64_t) : sizeof(float);
      if (from->count < 0 || (uint64_t)from->count > SIZE_MAX / item ||
          (from->count > 0 && src == NULL))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s': bad count %lld", from->name,
                          (long long)from->count);
      void *copy = etrt_arena_memdup(arena, src, (size_t)from->count * item, 8);
      if (copy == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
      to->count = from->count;
      if (ints)
        to->ints = copy;
      else
        to->floats = copy;
      return ETRT_OK;
    }
    case ETRT_ATTRIBUTE_TENSOR:
    case ETRT_ATTRIBUTE_GRAPH: {
      const etrt_tensor_view *t = &from->tensor;
      if (from->kind == ETRT_ATTRIBUTE_GRAPH && (t->dtype != ETRT_DTYPE_UINT8 || t->rank != 1))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "attribute '%s': a graph is a plan held as 1-D uint8 bytes", from->name);
      int64_t n = etrt_graph_nbytes(t->dtype, t->rank, t->sizes);
      if (n < 0 || (n > 0 && t->data == NULL))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "attribute '%s': bad tensor (dtype %s, rank %d)", from->name,
                          etrt_dtype_name(t->dtype), (int)t->rank);
      to->tensor = *t;
      to->tensor.data = etrt_arena_memdup(arena, t->data, (size_t)n, 64);
      if (to->tensor.data == NULL)
        return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
      return ETRT_OK;
    }
  }
  return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s': unknown kind %d", from->name,
                    (int)from->kind);
}

etrt_status etrt_graph_add_node(etrt_graph *graph, const char *op_type, const char *name,
                                uint32_t num_inputs, const int32_t *inputs, uint32_t num_outputs,
                                const int32_t *outputs, uint32_t num_attributes,
                                const etrt_attribute *attributes, uint32_t *index) {
  if (num_inputs > ETRT_GRAPH_MAX_NODE_ARGS || num_outputs > ETRT_GRAPH_MAX_NODE_ARGS ||
      num_attributes > ETRT_GRAPH_MAX_ATTRIBUTES)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s: too many inputs, outputs or attributes (at most %u and %u)", op_type,
                      ETRT_GRAPH_MAX_NODE_ARGS, ETRT_GRAPH_MAX_ATTRIBUTES);
  ETRT_RETURN_IF_ERROR(etrt_graph_reserve((void **)&graph->nodes, &graph->node_capacity,
                                          graph->node_count, sizeof *graph->nodes,
                                          ETRT_GRAPH_MAX_NODES, "nodes"));
  etrt_arena *arena = &graph->arena;
  etrt_node node;
  memset(&node, 0, sizeof node);
  if (name == NULL) name = "";
  char *type_copy = etrt_arena_strndup(arena, op_type, strlen(op_type));
  char *name_copy = etrt_arena_strndup(arena, name, strlen(name));
  int32_t *ids = etrt_arena_alloc(arena, ((size_t)num_inputs + num_outputs) * sizeof *ids, 4);
  etrt_attribute *attrs =
      etrt_arena_alloc(arena, (size_t)num_attributes * sizeof(etrt_attribute), 8);
  if (type_copy == NULL || name_copy == NULL || ids == NULL || attrs == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  if (num_inputs > 0) memcpy(ids, inputs, num_inputs * sizeof *ids);
  if (num_outputs > 0) memcpy(ids + num_inputs, outputs, num_outputs * sizeof *ids);
  for (uint32_t a = 0; a < num_attributes; ++a) {
    etrt_status s = etrt_graph_copy_attribute(arena, &attributes[a], &attrs[a]);
    if (s != ETRT_OK) return etrt_error_context(s, "%s '%s': ", op_type, name);
  }
  node.op_type = type_copy;
  node.name = name_copy;
  node.num_inputs = num_inputs;
  node.num_outputs = num_outputs;
  node.num_attributes = num_attributes;
  node.inputs = ids;
  node.outputs = ids + num_inputs;
  node.attributes = attrs;
  graph->nodes[graph->node_count] = node;
  *index = graph->node_count++;
  return ETRT_OK;
}

etrt_status etrt_graph_append_node(etrt_graph *graph, const etrt_node *node) {
  ETRT_RETURN_IF_ERROR(etrt_graph_reserve((void **)&graph->nodes, &graph->node_capacity,
                                          graph->node_count, sizeof *graph->nodes,
                                          ETRT_GRAPH_MAX_NODES, "nodes"));
  graph->nodes[graph->node_count++] = *node;
  return ETRT_OK;
}

etrt_status etrt_graph_add_io(etrt_graph *graph, int is_input, int32_t value) {
  if (is_input) {
    ETRT_RETURN_IF_ERROR(etrt_graph_reserve((void **)&graph->inputs, &graph->input_capacity,
                                            graph->input_count, sizeof *graph->inputs,
                                            ETRT_GRAPH_MAX_VALUES, "inputs"));
    graph->inputs[graph->input_count++] = value;
  } else {
    ETRT_RETURN_IF_ERROR(etrt_graph_reserve((void **)&graph->outputs, &graph->output_capacity,
                                            graph->output_count, sizeof *graph->outputs,
                                            ETRT_GRAPH_MAX_VALUES, "outputs"));
    graph->outputs[graph->output_count++] = value;
  }
  return ETRT_OK;
}

uint32_t etrt_graph_io_count(const etrt_graph *graph) {
  return graph->input_count + graph->output_count;
}

int32_t etrt_graph_io_value(const etrt_graph *graph, uint32_t io_index) {
  if (io_index < graph->input_count) return graph->inputs[io_index];
  io_index -= graph->input_count;
  return io_index < graph->output_count ? graph->outputs[io_index] : -1;
}

const char *etrt_graph_node_label(const etrt_graph *graph, uint32_t index, char *buf, size_t size) {
  const etrt_node *n = &graph->nodes[index];
  if (n->name != NULL && n->name[0] != '\0')
    snprintf(buf, size, "node %u '%s' (%s)", index, n->name, n->op_type);
  else
    snprintf(buf, size, "node %u (%s)", index, n->op_type);
  return buf;
}

static const char *etrt_graph_check_label(const etrt_graph *graph, const size_t *node_offsets,
                                          uint32_t n, char *buf, size_t size) {
  etrt_graph_node_label(graph, n, buf, size);
  if (node_offsets != NULL) {
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, " at byte offset %zu", node_offsets[n]);
  }
  return buf;
}

etrt_status etrt_graph_check(etrt_graph *graph, const size_t *node_offsets) {
  char label[192];
  uint32_t nv = graph->value_count;
  for (uint32_t v = 0; v < nv; ++v) {
    etrt_graph_value *value = &graph->values[v];
    if (value->kind == ETRT_VALUE_KIND_OUTPUT || value->kind == ETRT_VALUE_KIND_INTERMEDIATE)
      value->producer = -1;
  }
  /* Node order is execution order: an input must exist before the node runs. The
   * producer field doubles as "already produced" while walking. */
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const etrt_node *node = &graph->nodes[n];
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      int32_t id = node->inputs[i];
      if (id == -1) continue;
      if (id < 0 || (uint32_t)id >= nv)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: input %u is value %d, not in [0, %u)",
                          etrt_graph_check_label(graph, node_offsets, n, label, sizeof label), i,
                          (int)id, nv);
      const etrt_graph_value *value = &graph->values[id];
      if ((value->kind == ETRT_VALUE_KIND_OUTPUT || value->kind == ETRT_VALUE_KIND_INTERMEDIATE) &&
          value->producer < 0)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                          "%s: input %u (value %d '%s') is not produced by an earlier node",
                          etrt_graph_check_label(graph, node_offsets, n, label, sizeof label), i,
                          (int)id, value->name);
    }
    for (uint32_t o = 0; o < node->num_outputs; ++o) {
      int32_t id = node->outputs[o];
      if (id < 0 || (uint32_t)id >= nv)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: output %u is value %d, not in [0, %u)",
                          etrt_graph_check_label(graph, node_offsets, n, label, sizeof label), o,
                          (int)id, nv);
      etrt_graph_value *value = &graph->values[id];
      if (value->kind != ETRT_VALUE_KIND_OUTPUT && value->kind != ETRT_VALUE_KIND_INTERMEDIATE)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                          "%s: output %u (value %d '%s') is an input or a constant",
                          etrt_graph_check_label(graph, node_offsets, n, label, sizeof label), o,
                          (int)id, value->name);
      if (value->producer >= 0)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                          "%s: output %u (value %d '%s') is already produced by node %d",
                          etrt_graph_check_label(graph, node_offsets, n, label, sizeof label), o,
                          (int)id, value->name, (int)value->producer);
      value->producer = (int32_t)n;
    }
  }
  for (uint32_t v = 0; v < nv; ++v) {
    const etrt_graph_value *value = &graph->values[v];
    if ((value->kind == ETRT_VALUE_KIND_OUTPUT || value->kind == ETRT_VALUE_KIND_INTERMEDIATE) &&
        value->producer < 0)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "value %u '%s' is produced by no node", v,
                        value->name);
  }
  /* Each I/O once, with the kind its list says; every INPUT and OUTPUT value listed. */
  uint8_t *seen = calloc(nv > 0 ? nv : 1, 1);
  if (seen == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  etrt_status status = ETRT_OK;
  for (uint32_t io = 0; io < etrt_graph_io_count(graph) && status == ETRT_OK; ++io) {
    int is_input = io < graph->input_count;
    int32_t id = etrt_graph_io_value(graph, io);
    if (id < 0 || (uint32_t)id >= nv) {
      status = etrt_error(ETRT_ERROR_INVALID_FORMAT, "I/O %u is value %d, not in [0, %u)", io,
                          (int)id, nv);
    } else if (seen[id]) {
      status = etrt_error(ETRT_ERROR_INVALID_FORMAT, "I/O %u: value %d '%s' is listed twice", io,
                          (int)id, graph->values[id].name);
    } else if (graph->values[id].kind !=
               (is_input ? ETRT_VALUE_KIND_INPUT : ETRT_VALUE_KIND_OUTPUT)) {
      status = etrt_error(ETRT_ERROR_INVALID_FORMAT, "I/O %u: value %d '%s' is not an %s", io,
                          (int)id, graph->values[id].name, is_input ? "input" : "output");
    }
    if (status == ETRT_OK) seen[id] = 1;
  }
  for (uint32_t v = 0; v < nv && status == ETRT_OK; ++v) {
    etrt_value_kind k = graph->values[v].kind;
    if ((k == ETRT_VALUE_KIND_INPUT || k == ETRT_VALUE_KIND_OUTPUT) && !seen[v])
      status =
          etrt_error(ETRT_ERROR_INVALID_FORMAT, "value %u '%s' is an %s missing from the I/O table",
                     v, graph->values[v].name, k == ETRT_VALUE_KIND_INPUT ? "input" : "output");
  }
  free(seen);
  return status;
}
