#include "builder/ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/checked.h"

/* ---- graph-owned memory: the graph's arena ------------------------------------- */

void *etrt_ir_alloc(etrt_ir_graph *graph, size_t size) {
  return etrt_arena_alloc(graph->arena_, size, 16);
}

void *etrt_ir_alloc_uninit(etrt_ir_graph *graph, size_t size) {
  return etrt_arena_alloc_uninit(graph->arena_, size, 16);
}

char *etrt_ir_strndup(etrt_ir_graph *graph, const char *text, size_t size) {
  return etrt_arena_strndup(graph->arena_, text, size);
}

char *etrt_ir_strdup(etrt_ir_graph *graph, const char *text) {
  return etrt_arena_strdup(graph->arena_, text);
}

char *etrt_ir_printf(etrt_ir_graph *graph, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char *text = etrt_arena_vprintf(graph->arena_, fmt, args);
  va_end(args);
  return text;
}

/* ---- name index: open addressing over value ids -------------------------------- */

struct etrt_ir_index {
  int32_t *slots;  /* value id + 1; 0 is empty */
  size_t capacity; /* power of two */
  size_t count;
};

static uint64_t etrt_ir_hash(const char *text, size_t size) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < size; ++i) {
    h ^= (unsigned char)text[i];
    h *= 1099511628211ull;
  }
  return h;
}

static etrt_status etrt_ir_index_grow(etrt_ir_graph *graph) {
  etrt_ir_index *index = graph->index_;
  size_t capacity = index->capacity ? index->capacity * 2 : 256;
  int32_t *slots = calloc(capacity, sizeof *slots);
  if (slots == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory (name index)");
  for (size_t i = 0; i < index->capacity; ++i) {
    int32_t id = index->slots[i];
    if (id == 0) continue;
    const char *name = graph->values[id - 1].name;
    size_t j = etrt_ir_hash(name, strlen(name)) & (capacity - 1);
    while (slots[j] != 0) j = (j + 1) & (capacity - 1);
    slots[j] = id;
  }
  free(index->slots);
  index->slots = slots;
  index->capacity = capacity;
  return ETRT_OK;
}

int32_t etrt_ir_find_value_n(const etrt_ir_graph *graph, const char *name, size_t size) {
  const etrt_ir_index *index = graph->index_;
  if (index->capacity == 0) return -1;
  size_t j = etrt_ir_hash(name, size) & (index->capacity - 1);
  while (index->slots[j] != 0) {
    int32_t id = index->slots[j] - 1;
    const char *candidate = graph->values[id].name;
    if (strncmp(candidate, name, size) == 0 && candidate[size] == '\0') return id;
    j = (j + 1) & (index->capacity - 1);
  }
  return -1;
}

int32_t etrt_ir_find_value(const etrt_ir_graph *graph, const char *name) {
  return etrt_ir_find_value_n(graph, name, strlen(name));
}

static etrt_status etrt_ir_index_insert(etrt_ir_graph *graph, int32_t id) {
  etrt_ir_index *index = graph->index_;
  if ((index->count + 1) * 2 > index->capacity) ETRT_RETURN_IF_ERROR(etrt_ir_index_grow(graph));
  const char *name = graph->values[id].name;
  size_t j = etrt_ir_hash(name, strlen(name)) & (index->capacity - 1);
  while (index->slots[j] != 0) j = (j + 1) & (index->capacity - 1);
  index->slots[j] = id + 1;
  index->count++;
  return ETRT_OK;
}

/* ---- graph ---------------------------------------------------------------------- */

etrt_status etrt_ir_graph_create(etrt_ir_graph **out) {
  *out = NULL;
  etrt_ir_graph *graph = calloc(1, sizeof *graph);
  etrt_arena *arena = etrt_arena_create();
  etrt_ir_index *index = calloc(1, sizeof *index);
  if (graph == NULL || arena == NULL || index == NULL) {
    free(graph);
    etrt_arena_destroy(arena);
    free(index);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  }
  graph->arena_ = arena;
  graph->index_ = index;
  graph->opset = 0;
  *out = graph;
  return ETRT_OK;
}

void etrt_ir_graph_destroy(etrt_ir_graph *graph) {
  if (graph == NULL) return;
  for (uint32_t n = 0; n < graph->num_nodes; ++n)
    for (uint32_t b = 0; b < graph->nodes[n].num_bodies; ++b)
      etrt_ir_graph_destroy(graph->nodes[n].bodies[b]);
  etrt_arena_destroy(graph->arena_);
  free(graph->index_->slots);
  free(graph->index_);
  free(graph->values);
  free(graph->nodes);
  free(graph->inputs);
  free(graph->outputs);
  free(graph->output_names);
  free(graph);
}

/* Grows a malloc'd array to hold one more element. */
static etrt_status etrt_ir_reserve(void **array, uint32_t count, uint32_t *capacity,
                                   size_t elem_size) {
  if (count < *capacity) return ETRT_OK;
  if (count >= INT32_MAX / 2) return etrt_error(ETRT_ERROR_UNSUPPORTED, "graph: too many elements");
  uint32_t fresh = *capacity ? *capacity * 2 : 64;
  void *grown = realloc(*array, (size_t)fresh * elem_size);
  if (grown == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  *array = grown;
  *capacity = fresh;
  return ETRT_OK;
}

static etrt_status etrt_ir_push_value(etrt_ir_graph *graph, const char *name, int32_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_ir_reserve((void **)&graph->values, graph->num_values,
                                       &graph->values_capacity, sizeof *graph->values));
  char *copy = etrt_ir_strdup(graph, name);
  if (copy == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  int32_t id = (int32_t)graph->num_values;
  etrt_ir_value *v = &graph->values[id];
  memset(v, 0, sizeof *v);
  v->name = copy;
  v->dtype = ETRT_DTYPE_INVALID;
  v->rank = -1;
  v->producer = -1;
  v->input_index = -1;
  graph->num_values++;
  ETRT_RETURN_IF_ERROR(etrt_ir_index_insert(graph, id));
  *out = id;
  return ETRT_OK;
}

etrt_status etrt_ir_add_value(etrt_ir_graph *graph, const char *name, int32_t *out) {
  if (etrt_ir_find_value(graph, name) >= 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "graph: value '%s' is defined twice", name);
  return etrt_ir_push_value(graph, name, out);
}

etrt_status etrt_ir_add_value_unique(etrt_ir_graph *graph, const char *base, int32_t *out) {
  if (etrt_ir_find_value(graph, base) < 0) return etrt_ir_push_value(graph, base, out);
  char name[512];
  for (uint32_t n = 1;; ++n) {
    snprintf(name, sizeof name, "%.480s_%u", base, n);
    if (etrt_ir_find_value(graph, name) < 0) return etrt_ir_push_value(graph, name, out);
  }
}

etrt_status etrt_ir_set_constant(etrt_ir_graph *graph, int32_t value, etrt_dtype dtype,
                                 int32_t rank, const int64_t *dims, const void *data,
                                 size_t nbytes) {
  etrt_ir_value *v = &graph->values[value];
  if (rank < 0 || rank > ETRT_MAX_RANK)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "constant '%s': rank %d is more than %d", v->name,
                      (int)rank, ETRT_MAX_RANK);
  v->dtype = dtype;
  v->rank = rank;
  for (int32_t i = 0; i < rank; ++i) {
    v->min[i] = v->max[i] = dims[i];
    v->symbol[i] = NULL;
  }
  v->is_constant = true;
  v->data = data;
  v->nbytes = nbytes;
  return ETRT_OK;
}

etrt_status etrt_ir_add_constant(etrt_ir_graph *graph, const char *base, etrt_dtype dtype,
                                 int32_t rank, const int64_t *dims, void **data, int32_t *out) {
  size_t nbytes = etrt_dtype_size(dtype);
  for (int32_t i = 0; i < rank; ++i)
    if (dims[i] < 0 || etrt_mul_overflow_size(nbytes, (size_t)dims[i], &nbytes))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "constant '%s': bad size", base);
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(graph, base, out));
  *data = etrt_ir_alloc(graph, nbytes);
  if (*data == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  return etrt_ir_set_constant(graph, *out, dtype, rank, dims, *data, nbytes);
}

static etrt_status etrt_ir_copy_attribute(etrt_ir_graph *graph, const etrt_attribute *from,
                                          etrt_attribute *to) {
  *to = *from;
  to->name = etrt_ir_strdup(graph, from->name ? from->name : "");
  if (to->name == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  if (from->kind == ETRT_ATTRIBUTE_STRING && from->s != NULL) {
    to->s = etrt_ir_strdup(graph, from->s);
    if (to->s == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  }
  if (from->kind == ETRT_ATTRIBUTE_INTS && from->count > 0) {
    int64_t *ints = etrt_ir_alloc(graph, (size_t)from->count * sizeof *ints);
    if (ints == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
    memcpy(ints, from->ints, (size_t)from->count * sizeof *ints);
    to->ints = ints;
  }
  if (from->kind == ETRT_ATTRIBUTE_FLOATS && from->count > 0) {
    float *floats = etrt_ir_alloc(graph, (size_t)from->count * sizeof *floats);
    if (floats == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
    memcpy(floats, from->floats, (size_t)from->count * sizeof *floats);
    to->floats = floats;
  }
  /* Tensor attributes keep their data pointer: import points it at graph-owned or
   * model-owned bytes, both of which outlive the node. */
  return ETRT_OK;
}

etrt_status etrt_ir_add_node(etrt_ir_graph *graph, const char *op_type, const char *domain,
                             const char *name, uint32_t num_inputs, const int32_t *inputs,
                             uint32_t num_outputs, const int32_t *outputs, uint32_t num_attributes,
                             const etrt_attribute *attributes, int32_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_ir_reserve((void **)&graph->nodes, graph->num_nodes,
                                       &graph->nodes_capacity, sizeof *graph->nodes));
  int32_t id = (int32_t)graph->num_nodes;
  etrt_ir_node node;
  memset(&node, 0, sizeof node);
  node.op_type = etrt_ir_strdup(graph, op_type);
  node.domain = etrt_ir_strdup(graph, domain ? domain : "");
  node.name = (name && name[0]) ? etrt_ir_strdup(graph, name)
                                : etrt_ir_printf(graph, "%s_%d", op_type, (int)id);
  node.inputs = etrt_ir_alloc(graph, (size_t)num_inputs * sizeof *node.inputs);
  node.outputs = etrt_ir_alloc(graph, (size_t)num_outputs * sizeof *node.outputs);
  node.attributes = etrt_ir_alloc(graph, (size_t)num_attributes * sizeof *node.attributes);
  if (!node.op_type || !node.domain || !node.name || !node.inputs || !node.outputs ||
      !node.attributes)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  node.num_inputs = num_inputs;
  node.num_outputs = num_outputs;
  node.num_attributes = num_attributes;
  if (num_inputs) memcpy(node.inputs, inputs, num_inputs * sizeof *inputs);
  if (num_outputs) memcpy(node.outputs, outputs, num_outputs * sizeof *outputs);
  for (uint32_t i = 0; i < num_attributes; ++i)
    ETRT_RETURN_IF_ERROR(etrt_ir_copy_attribute(graph, &attributes[i], &node.attributes[i]));
  for (uint32_t i = 0; i < num_outputs; ++i) {
    if (outputs[i] < 0) continue;
    etrt_ir_value *v = &graph->values[outputs[i]];
    if (v->producer >= 0 || v->is_constant || v->input_index >= 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "graph: node '%s' (%s) writes '%s', which is already defined", node.name,
                        op_type, v->name);
    v->producer = id;
  }
  graph->nodes[id] = node;
  graph->num_nodes++;
  if (out) *out = id;
  return ETRT_OK;
}

etrt_status etrt_ir_add_input(etrt_ir_graph *graph, int32_t value) {
  int32_t *grown = realloc(graph->inputs, (graph->num_inputs + 1) * sizeof *grown);
  if (grown == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  graph->inputs = grown;
  graph->values[value].input_index = (int32_t)graph->num_inputs;
  graph->inputs[graph->num_inputs++] = value;
  return ETRT_OK;
}

etrt_status etrt_ir_add_output(etrt_ir_graph *graph, int32_t value, const char *name) {
  int32_t *grown = realloc(graph->outputs, (graph->num_outputs + 1) * sizeof *grown);
  if (grown == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  graph->outputs = grown;
  const char **names = realloc(graph->output_names, (graph->num_outputs + 1) * sizeof *names);
  if (names == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  graph->output_names = names;
  names[graph->num_outputs] = etrt_ir_strdup(graph, name ? name : graph->values[value].name);
  if (names[graph->num_outputs] == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  graph->outputs[graph->num_outputs++] = value;
  return ETRT_OK;
}

etrt_status etrt_ir_node_set_input(etrt_ir_graph *graph, etrt_ir_node *node, uint32_t index,
                                   int32_t value) {
  if (index >= node->num_inputs) {
    int32_t *inputs = etrt_ir_alloc(graph, ((size_t)index + 1) * sizeof *inputs);
    if (inputs == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
    if (node->num_inputs) memcpy(inputs, node->inputs, node->num_inputs * sizeof *inputs);
    for (uint32_t i = node->num_inputs; i < index; ++i) inputs[i] = -1;
    node->inputs = inputs;
    node->num_inputs = index + 1;
  }
  node->inputs[index] = value;
  return ETRT_OK;
}

etrt_status etrt_ir_node_set_attribute(etrt_ir_graph *graph, etrt_ir_node *node,
                                       const etrt_attribute *attribute) {
  for (uint32_t i = 0; i < node->num_attributes; ++i)
    if (strcmp(node->attributes[i].name, attribute->name) == 0)
      return etrt_ir_copy_attribute(graph, attribute, &node->attributes[i]);
  etrt_attribute *grown = etrt_ir_alloc(graph, ((size_t)node->num_attributes + 1) * sizeof *grown);
  if (grown == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory");
  if (node->num_attributes) memcpy(grown, node->attributes, node->num_attributes * sizeof *grown);
  ETRT_RETURN_IF_ERROR(etrt_ir_copy_attribute(graph, attribute, &grown[node->num_attributes]));
  node->attributes = grown;
  node->num_attributes++;
  return ETRT_OK;
}

void etrt_ir_replace_uses(etrt_ir_graph *graph, int32_t from, int32_t to) {
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i)
      if (node->inputs[i] == from) node->inputs[i] = to;
  }
  for (uint32_t i = 0; i < graph->num_outputs; ++i)
    if (graph->outputs[i] == from) graph->outputs[i] = to;
}

bool etrt_ir_is_output(const etrt_ir_graph *graph, int32_t value) {
  for (uint32_t i = 0; i < graph->num_outputs; ++i)
    if (graph->outputs[i] == value) return true;
  return false;
}

uint32_t etrt_ir_use_count(const etrt_ir_graph *graph, int32_t value) {
  uint32_t uses = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i) uses += node->inputs[i] == value;
  }
  for (uint32_t i = 0; i < graph->num_outputs; ++i) uses += graph->outputs[i] == value;
  return uses;
}

int32_t etrt_ir_single_consumer(const etrt_ir_graph *graph, int32_t value) {
  if (etrt_ir_is_output(graph, value)) return -1;
  int32_t found = -1;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      if (node->inputs[i] != value) continue;
      if (found >= 0) return -1; /* a second reader, or the same node reading twice */
      found = (int32_t)n;
    }
  }
  return found;
}

/* A binary min-heap of node indices: the sort always takes the lowest ready node. */
typedef struct etrt_ir_heap {
  uint32_t *items;
  uint32_t size;
} etrt_ir_heap;

static void etrt_ir_heap_push(etrt_ir_heap *h, uint32_t x) {
  uint32_t c = h->size++;
  h->items[c] = x;
  while (c > 0 && h->items[(c - 1) / 2] > h->items[c]) {
    uint32_t p = (c - 1) / 2, t = h->items[p];
    h->items[p] = h->items[c];
    h->items[c] = t;
    c = p;
  }
}

static uint32_t etrt_ir_heap_pop(etrt_ir_heap *h) {
  uint32_t *heap = h->items, top = heap[0];
  heap[0] = heap[--h->size];
  for (uint32_t c = 0;;) {
    uint32_t l = 2 * c + 1, r = l + 1, m = c;
    if (l < h->size && heap[l] < heap[m]) m = l;
    if (r < h->size && heap[r] < heap[m]) m = r;
    if (m == c) break;
    uint32_t t = heap[m];
    heap[m] = heap[c];
    heap[c] = t;
    c = m;
  }
  return top;
}

/* Counts each node's inputs that other nodes produce (pending) and, as CSR lists,
 * the readers of each produced value (reader_start, readers); refuses an input
 * that nothing defines. */
static etrt_status etrt_ir_sort_readers(const etrt_ir_graph *graph, uint32_t *pending,
                                        uint32_t *reader_start, uint32_t *readers) {
  uint32_t n = graph->num_nodes;
  for (uint32_t i = 0; i < n; ++i) {
    const etrt_ir_node *node = &graph->nodes[i];
    for (uint32_t k = 0; k < node->num_inputs; ++k) {
      int32_t v = node->inputs[k];
      if (v < 0) continue;
      const etrt_ir_value *value = &graph->values[v];
      if (value->producer < 0) {
        /* A dead node may read what a pass rewired away (an Identity dropped into its
         * producer, then that producer folded): it never runs. */
        if (!node->dead && !value->is_constant && value->input_index < 0)
          return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                            "graph: node '%s' (%s) reads '%s', which no node, input or "
                            "initializer defines",
                            node->name, node->op_type, value->name);
        continue;
      }
      pending[i]++;
      reader_start[v + 1]++;
    }
  }
  for (uint32_t v = 0; v < graph->num_values; ++v) reader_start[v + 1] += reader_start[v];
  uint32_t *fill = calloc((size_t)graph->num_values + 1, sizeof *fill);
  if (fill == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory (sort)");
  for (uint32_t i = 0; i < n; ++i) {
    const etrt_ir_node *node = &graph->nodes[i];
    for (uint32_t k = 0; k < node->num_inputs; ++k) {
      int32_t v = node->inputs[k];
      if (v < 0 || graph->values[v].producer < 0) continue;
      readers[reader_start[v] + fill[v]++] = i;
    }
  }
  free(fill);
  return ETRT_OK;
}

etrt_status etrt_ir_sort(etrt_ir_graph *graph) {
  uint32_t n = graph->num_nodes;
  if (n == 0) return ETRT_OK;
  /* Kahn's algorithm, always taking the lowest-numbered ready node, so that a model
   * that is already sorted keeps its order. */
  uint32_t *pending = calloc(n, sizeof *pending); /* unmet inputs per node */
  uint32_t *order = malloc(n * sizeof *order);
  etrt_ir_heap heap = {malloc(n * sizeof *heap.items), 0};
  uint32_t *reader_start = calloc((size_t)graph->num_values + 1, sizeof *reader_start);
  etrt_ir_node *sorted = malloc(n * sizeof *sorted);
  int32_t *renumber = malloc(n * sizeof *renumber);
  uint32_t total_reads = 0;
  for (uint32_t i = 0; i < n; ++i) total_reads += graph->nodes[i].num_inputs;
  uint32_t *readers = malloc(((size_t)total_reads + 1) * sizeof *readers);
  etrt_status status = ETRT_OK;
  if (!pending || !order || !heap.items || !reader_start || !sorted || !renumber || !readers) {
    status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "graph: out of memory (sort)");
    goto done;
  }
  status = etrt_ir_sort_readers(graph, pending, reader_start, readers);
  if (status != ETRT_OK) goto done;
  uint32_t done_count = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (pending[i] == 0) etrt_ir_heap_push(&heap, i);
  while (heap.size > 0) {
    uint32_t top = etrt_ir_heap_pop(&heap);
    order[done_count++] = top;
    const etrt_ir_node *node = &graph->nodes[top];
    for (uint32_t o = 0; o < node->num_outputs; ++o) {
      int32_t v = node->outputs[o];
      if (v < 0) continue;
      for (uint32_t r = reader_start[v]; r < reader_start[v + 1]; ++r)
        if (--pending[readers[r]] == 0) etrt_ir_heap_push(&heap, readers[r]);
    }
  }
  if (done_count != n) {
    const etrt_ir_node *stuck = NULL;
    for (uint32_t i = 0; i < n && stuck == NULL; ++i)
      if (pending[i] != 0) stuck = &graph->nodes[i];
    status = etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "graph: the nodes form a cycle (node '%s' (%s) is on or after it)",
                        stuck ? stuck->name : "?", stuck ? stuck->op_type : "?");
    goto done;
  }
  for (uint32_t i = 0; i < n; ++i) {
    sorted[i] = graph->nodes[order[i]];
    renumber[order[i]] = (int32_t)i;
  }
  memcpy(graph->nodes, sorted, n * sizeof *sorted);
  for (uint32_t v = 0; v < graph->num_values; ++v)
    if (graph->values[v].producer >= 0)
      graph->values[v].producer = renumber[graph->values[v].producer];
done:
  free(pending);
  free(order);
  free(heap.items);
  free(reader_start);
  free(readers);
  free(sorted);
  free(renumber);
  return status;
}

int64_t etrt_ir_value_numel(const etrt_ir_value *value) {
  if (value->rank < 0) return -1;
  int64_t numel = 1;
  for (int32_t i = 0; i < value->rank; ++i) {
    if (value->min[i] != value->max[i] || value->max[i] < 0) return -1;
    if (etrt_mul_overflow_i64(numel, value->max[i], &numel)) return -1;
  }
  return numel;
}

bool etrt_ir_value_is_static(const etrt_ir_value *value) {
  if (value->rank < 0) return false;
  for (int32_t i = 0; i < value->rank; ++i)
    if (value->min[i] != value->max[i]) return false;
  return true;
}

const etrt_attribute *etrt_ir_node_attribute(const etrt_ir_node *node, const char *name) {
  for (uint32_t i = 0; i < node->num_attributes; ++i)
    if (strcmp(node->attributes[i].name, name) == 0) return &node->attributes[i];
  return NULL;
}

int64_t etrt_ir_node_attribute_int(const etrt_ir_node *node, const char *name, int64_t fallback) {
  const etrt_attribute *a = etrt_ir_node_attribute(node, name);
  return a && a->kind == ETRT_ATTRIBUTE_INT ? a->i : fallback;
}

float etrt_ir_node_attribute_float(const etrt_ir_node *node, const char *name, float fallback) {
  const etrt_attribute *a = etrt_ir_node_attribute(node, name);
  return a && a->kind == ETRT_ATTRIBUTE_FLOAT ? a->f : fallback;
}

uint32_t etrt_ir_live_node_count(const etrt_ir_graph *graph) {
  uint32_t live = 0;
  for (uint32_t i = 0; i < graph->num_nodes; ++i) live += !graph->nodes[i].dead;
  return live;
}
