/* The network definition: a graph grown one input, constant or operation at a time,
 * with every operation's output types and shape bounds inferred as it is added (at
 * the inputs' smallest and at their largest shapes). Values that are known on the
 * host at build time (constants, the bounds of shape inputs, and small tensors
 * computed from those) are kept, at both ends, so that operations whose output
 * shapes depend on input values (Reshape's shape...) can be inferred. */
#include "engine/network.h"

#include "engine/bounds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "engine/op.h"

struct etrt_network {
  etrt_graph graph;
  etrt_bounds_host *host; /* one per value */
  uint32_t host_capacity;
};

/* Most values a shape input may hold. */
#define ETRT_NETWORK_MAX_SHAPE_VALUES 64

const etrt_graph *etrt_network_graph(const etrt_network *network) { return &network->graph; }

void etrt_network_host_values(const etrt_network *network, int32_t value, const void **lo,
                              const void **hi) {
  *lo = *hi = NULL;
  if (value < 0 || (uint32_t)value >= network->graph.value_count) return;
  *lo = network->host[value].at[0];
  *hi = network->host[value].at[1];
}

etrt_status etrt_network_create(etrt_network **out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: NULL out");
  etrt_network *n = calloc(1, sizeof *n);
  if (n == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "network: out of memory");
  etrt_graph_init(&n->graph);
  *out = n;
  return ETRT_OK;
}

void etrt_network_destroy(etrt_network *network) {
  if (network == NULL) return;
  etrt_graph_release(&network->graph);
  free(network->host);
  free(network);
}

/* Keeps the host array as long as the value array. */
static etrt_status etrt_network_host_reserve(etrt_network *network) {
  if (network->host_capacity >= network->graph.value_capacity) return ETRT_OK;
  uint32_t capacity = network->graph.value_capacity;
  etrt_bounds_host *h = realloc(network->host, (size_t)capacity * sizeof *h);
  if (h == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "network: out of memory");
  memset(h + network->host_capacity, 0, (size_t)(capacity - network->host_capacity) * sizeof *h);
  network->host = h;
  network->host_capacity = capacity;
  return ETRT_OK;
}

static etrt_status etrt_network_append(etrt_network *network, const etrt_graph_value *value,
                                       const void *host_min, const void *host_max, int32_t *id) {
  ETRT_RETURN_IF_ERROR(etrt_graph_add_value(&network->graph, value, id));
  etrt_status s = etrt_network_host_reserve(network);
  if (s != ETRT_OK) {
    --network->graph.value_count;
    return s;
  }
  network->host[*id].at[0] = host_min;
  network->host[*id].at[1] = host_max;
  return ETRT_OK;
}

/* Refuses an I/O name that is missing or already used by another input or output. */
static etrt_status etrt_network_check_io_name(const etrt_network *network, const char *name,
                                              const char *what) {
  if (name == NULL || name[0] == '\0')
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: %s needs a name", what);
  const etrt_graph *g = &network->graph;
  for (uint32_t io = 0; io < etrt_graph_io_count(g); ++io) {
    if (strcmp(g->values[etrt_graph_io_value(g, io)].name, name) == 0)
      return etrt_error(ETRT_ERROR_ALREADY_EXISTS,
                        "network: %s '%s': an input or output has that name already", what, name);
  }
  return ETRT_OK;
}

static etrt_status etrt_network_check_shape(const char *what, const char *name, etrt_dtype dtype,
                                            int32_t rank, const int64_t *min_sizes,
                                            const int64_t *max_sizes) {
  if (etrt_dtype_size(dtype) == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: %s '%s': unknown dtype %d", what, name,
                      (int)dtype);
  if (rank < 0 || rank > ETRT_MAX_RANK)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: %s '%s': rank %d is outside [0, %d]",
                      what, name, (int)rank, ETRT_MAX_RANK);
  if (rank > 0 && (min_sizes == NULL || max_sizes == NULL))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: %s '%s': NULL sizes", what, name);
  for (int32_t i = 0; i < rank; ++i) {
    if (min_sizes[i] < 0 || min_sizes[i] > max_sizes[i] || max_sizes[i] > ETRT_GRAPH_MAX_DIM)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "network: %s '%s': axis %d has bounds [%lld, %lld] (need 0 <= min <= max "
                        "<= 2^40)",
                        what, name, (int)i, (long long)min_sizes[i], (long long)max_sizes[i]);
  }
  if (etrt_graph_nbytes(dtype, rank, max_sizes) < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: %s '%s': size overflows", what, name);
  return ETRT_OK;
}

/* Makes value `id`, just appended, a graph input; on failure the value is dropped
 * again. */
static etrt_status etrt_network_add_graph_input(etrt_network *network, int32_t id, int32_t *out) {
  etrt_status s = etrt_graph_add_io(&network->graph, 1, id);
  if (s != ETRT_OK) {
    --network->graph.value_count;
    return s;
  }
  *out = id;
  return ETRT_OK;
}

etrt_status etrt_network_add_input(etrt_network *network, const char *name, etrt_dtype dtype,
                                   int32_t rank, const int64_t *min_sizes, const int64_t *max_sizes,
                                   int32_t *out) {
  if (network == NULL || out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: NULL argument");
  ETRT_RETURN_IF_ERROR(etrt_network_check_io_name(network, name, "input"));
  ETRT_RETURN_IF_ERROR(etrt_network_check_shape("input", name, dtype, rank, min_sizes, max_sizes));
  etrt_graph_value v = {.name = name, .kind = ETRT_VALUE_KIND_INPUT, .dtype = dtype, .rank = rank};
  for (int32_t i = 0; i < rank; ++i) {
    v.min_dims[i] = min_sizes[i];
    v.max_dims[i] = max_sizes[i];
  }
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_network_append(network, &v, NULL, NULL, &id));
  return etrt_network_add_graph_input(network, id, out);
}

etrt_status etrt_network_add_shape_input(etrt_network *network, const char *name, int64_t count,
                                         const int64_t *min_values, const int64_t *max_values,
                                         int32_t *out) {
  if (network == NULL || out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: NULL argument");
  ETRT_RETURN_IF_ERROR(etrt_network_check_io_name(network, name, "shape input"));
  if (count < 0 || count > ETRT_NETWORK_MAX_SHAPE_VALUES ||
      (count > 0 && (min_values == NULL || max_values == NULL)))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "network: shape input '%s': %lld values (at most %d, with bounds)", name,
                      (long long)count, ETRT_NETWORK_MAX_SHAPE_VALUES);
  for (int64_t i = 0; i < count; ++i) {
    if (min_values[i] > max_values[i])
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "network: shape input '%s': value %lld has bounds [%lld, %lld]", name,
                        (long long)i, (long long)min_values[i], (long long)max_values[i]);
  }
  etrt_graph_value v = {.name = name,
                        .kind = ETRT_VALUE_KIND_INPUT,
                        .is_shape_input = 1,
                        .dtype = ETRT_DTYPE_INT64,
                        .rank = 1,
                        .min_dims = {count},
                        .max_dims = {count},
                        .min_values = min_values,
                        .max_values = max_values};
  int64_t none = 0;
  if (count == 0) v.min_values = v.max_values = &none;
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_network_append(network, &v, NULL, NULL, &id));
  const etrt_graph_value *stored = &network->graph.values[id];
  network->host[id].at[0] = stored->min_values;
  network->host[id].at[1] = stored->max_values;
  return etrt_network_add_graph_input(network, id, out);
}

etrt_status etrt_network_add_constant(etrt_network *network, const char *name, etrt_dtype dtype,
                                      int32_t rank, const int64_t *sizes, const void *data,
                                      int32_t *out) {
  if (network == NULL || out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: NULL argument");
  if (name == NULL) name = "";
  ETRT_RETURN_IF_ERROR(etrt_network_check_shape("constant", name, dtype, rank, sizes, sizes));
  int64_t nbytes = etrt_graph_nbytes(dtype, rank, sizes);
  if (nbytes > 0 && data == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: constant '%s': NULL data", name);
  void *copy = etrt_arena_memdup(&network->graph.arena, data, (size_t)nbytes, 64);
  if (copy == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "network: out of memory");
  etrt_graph_value v = {.name = name,
                        .kind = ETRT_VALUE_KIND_CONSTANT,
                        .dtype = dtype,
                        .rank = rank,
                        .data = copy,
                        .nbytes = (size_t)nbytes};
  for (int32_t i = 0; i < rank; ++i) v.min_dims[i] = v.max_dims[i] = sizes[i];
  return etrt_network_append(network, &v, copy, copy, out);
}

etrt_status etrt_network_add_op(etrt_network *network, const char *op_type, const char *name,
                                uint32_t num_inputs, const int32_t *inputs, uint32_t num_outputs,
                                int32_t *outputs, uint32_t num_attributes,
                                const etrt_attribute *attributes) {
  if (network == NULL || op_type == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: NULL network or op type");
  if (name == NULL) name = "";
  const etrt_op_def *def = etrt_op_find(op_type);
  if (def == NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "network: operation '%s' (node '%s') is not supported", op_type, name);
  if (num_outputs == 0 || outputs == NULL || (num_inputs > 0 && inputs == NULL) ||
      (num_attributes > 0 && attributes == NULL))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "network: %s '%s': needs at least one output and non-NULL arrays", op_type,
                      name);
  if (num_inputs > ETRT_GRAPH_MAX_NODE_ARGS || num_outputs > ETRT_GRAPH_MAX_NODE_ARGS)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: %s '%s': too many inputs or outputs",
                      op_type, name);
  etrt_graph *g = &network->graph;
  for (uint32_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] < -1 || inputs[i] >= (int32_t)g->value_count)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "network: %s '%s': input %u is value %d, which does not exist", op_type,
                        name, i, (int)inputs[i]);
  }
  const uint32_t values_before = g->value_count, nodes_before = g->node_count;
  etrt_tensor *scratch = calloc((size_t)num_inputs + 2u * num_outputs, sizeof *scratch);
  int32_t *ids = calloc(num_outputs, sizeof *ids);
  etrt_status s = scratch != NULL && ids != NULL
                      ? ETRT_OK
                      : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "network: out of memory");
  /* Output values first (named after the node), then the node that makes them. */
  for (uint32_t k = 0; k < num_outputs && s == ETRT_OK; ++k) {
    char value_name[256];
    if (name[0] == '\0')
      snprintf(value_name, sizeof value_name, "%s_%u:%u", op_type, nodes_before, k);
    else if (num_outputs > 1)
      snprintf(value_name, sizeof value_name, "%s:%u", name, k);
    else
      snprintf(value_name, sizeof value_name, "%s", name);
    etrt_graph_value v = {
        .name = value_name, .kind = ETRT_VALUE_KIND_INTERMEDIATE, .dtype = ETRT_DTYPE_INVALID};
    s = etrt_network_append(network, &v, NULL, NULL, &ids[k]);
  }
  uint32_t index = 0;
  if (s == ETRT_OK)
    s = etrt_graph_add_node(g, op_type, name, num_inputs, inputs, num_outputs, ids, num_attributes,
                            attributes, &index);
  if (s == ETRT_OK) {
    etrt_node *node = &g->nodes[index];
    node->def = def;
    node->run_cpu = etrt_op_cpu_find(op_type);
    if (def->state_size > 0) {
      node->state = etrt_arena_alloc(&g->arena, def->state_size, 64);
      if (node->state == NULL) s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "network: out of memory");
    }
    if (s == ETRT_OK) s = etrt_op_check_layout(node);
    if (s == ETRT_OK && def->prepare != NULL) s = def->prepare(node, node->state);
    if (s == ETRT_OK) s = etrt_bounds_infer_node(g, index, network->host, &g->arena, 1, scratch);
  }
  if (s == ETRT_OK) {
    memcpy(outputs, ids, num_outputs * sizeof *ids);
  } else {
    /* Nothing of a refused operation stays (its arena bytes are only unused). */
    if (g->node_count > nodes_before) {
      etrt_node *node = &g->nodes[nodes_before];
      if (node->def != NULL && node->def->release != NULL && node->state != NULL)
        node->def->release(node->state);
    }
    g->value_count = values_before;
    g->node_count = nodes_before;
  }
  free(scratch);
  free(ids);
  return s;
}

etrt_status etrt_network_mark_output(etrt_network *network, int32_t value, const char *name) {
  if (network == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: NULL network");
  etrt_graph *g = &network->graph;
  if (value < 0 || (uint32_t)value >= g->value_count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: output '%s': value %d does not exist",
                      name != NULL ? name : "", (int)value);
  ETRT_RETURN_IF_ERROR(etrt_network_check_io_name(network, name, "output"));
  etrt_graph_value *v = &g->values[value];
  if (v->kind == ETRT_VALUE_KIND_OUTPUT)
    return etrt_error(ETRT_ERROR_ALREADY_EXISTS, "network: value %d is already output '%s'",
                      (int)value, v->name);
  if (v->kind != ETRT_VALUE_KIND_INTERMEDIATE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "network: output '%s': value %d ('%s') is %s; outputs must be produced by "
                      "an operation (add an Identity)",
                      name, (int)value, v->name,
                      v->kind == ETRT_VALUE_KIND_INPUT ? "an input" : "a constant");
  char *copy = etrt_arena_strndup(&g->arena, name, strlen(name));
  if (copy == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "network: out of memory");
  ETRT_RETURN_IF_ERROR(etrt_graph_add_io(g, 0, value));
  v->kind = ETRT_VALUE_KIND_OUTPUT;
  v->name = copy;
  return ETRT_OK;
}

etrt_status etrt_network_value_info(const etrt_network *network, int32_t value, etrt_dtype *dtype,
                                    int32_t *rank, int64_t *min_sizes, int64_t *max_sizes) {
  if (network == NULL || value < 0 || (uint32_t)value >= network->graph.value_count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "network: value %d does not exist", (int)value);
  const etrt_graph_value *v = &network->graph.values[value];
  if (dtype != NULL) *dtype = v->dtype;
  if (rank != NULL) *rank = v->rank;
  for (int32_t i = 0; i < v->rank; ++i) {
    if (min_sizes != NULL) min_sizes[i] = v->min_dims[i];
    if (max_sizes != NULL) max_sizes[i] = v->max_dims[i];
  }
  return ETRT_OK;
}
