#include "builder/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/host_values.h"
#include "builder/node_eval.h"
#include "engine/op.h"

bool etrt_partition_cuda_default(const etrt_ir_graph *graph, const etrt_ir_node *node, void *user) {
  (void)user;
  const etrt_op_def *def = etrt_op_find(node->op_type);
  if (def == NULL) return false;
  /* Inputs whose values decide shapes must be known when the plan is built: a GPU
   * partition cannot read them back from device memory to size its outputs. */
  for (uint32_t i = 0; i < node->num_inputs && i < 32; ++i)
    if ((def->value_inputs >> i & 1u) && node->inputs[i] >= 0 &&
        !graph->values[node->inputs[i]].is_constant)
      return false;
#ifdef ETRT_HAVE_CUDA
  const etrt_op_cuda_def *cuda = etrt_op_cuda_find(node->op_type);
  if (cuda == NULL) return false;
  if (cuda->supports == NULL) return true;
  etrt_node engine_node;
  if (etrt_node_eval_prepare(graph, node, &engine_node) != ETRT_OK) return false;
  etrt_tensor *inputs = calloc((size_t)node->num_inputs + 1, sizeof *inputs);
  bool ok = false;
  if (inputs != NULL) {
    etrt_node_eval_inputs(graph, node, inputs);
    ok = cuda->supports(&engine_node, inputs) != 0;
  }
  free(inputs);
  etrt_node_eval_release(&engine_node);
  return ok;
#else
  return true;
#endif
}

void etrt_partitioning_destroy(etrt_partitioning *partitioning) {
  if (partitioning == NULL) return;
  for (uint32_t i = 0; i < partitioning->count; ++i) {
    free(partitioning->parts[i].nodes);
    free(partitioning->parts[i].inputs);
    free(partitioning->parts[i].outputs);
  }
  free(partitioning->parts);
  free(partitioning);
}

static bool etrt_partition_same_device(etrt_device a, etrt_device b) {
  return a.type == b.type && (a.type == ETRT_DEVICE_CPU || a.index == b.index);
}

/* Whether a node computes values that some plan needs on the host when it is
 * built (from graph inputs given by value): a GPU plan computes them on the device,
 * where the plan that needs them cannot read them, so such nodes run on the CPU. */
static bool etrt_partition_feeds_host(const etrt_ir_node *node, const etrt_host_value_use *uses) {
  for (uint32_t o = 0; o < node->num_outputs; ++o)
    if (node->outputs[o] >= 0 && uses[node->outputs[o]].node >= 0) return true;
  return false;
}

/* The device of each live node. */
static etrt_status etrt_partition_assign(const etrt_ir_graph *graph,
                                         const etrt_partition_options *options,
                                         etrt_device *devices) {
  etrt_partition_cuda_fn supports =
      options->cuda_supports ? options->cuda_supports : etrt_partition_cuda_default;
  etrt_host_value_use *uses = malloc(((size_t)graph->num_values + 1) * sizeof *uses);
  if (uses == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
  etrt_host_values_find(graph, uses);
  etrt_status status = ETRT_OK;
  for (uint32_t p = 0; p < options->num_placements; ++p) {
    bool found = false;
    for (uint32_t n = 0; n < graph->num_nodes && !found; ++n)
      found = strcmp(graph->nodes[n].name, options->placements[p].node) == 0;
    if (!found) {
      status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "placement: the model has no node named '%s'",
                          options->placements[p].node);
      goto done;
    }
  }
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    const etrt_partition_placement *placed = NULL;
    for (uint32_t p = 0; p < options->num_placements; ++p)
      if (strcmp(options->placements[p].node, node->name) == 0) placed = &options->placements[p];
    etrt_device device = placed ? placed->device : options->target;
    if (device.type == ETRT_DEVICE_CUDA &&
        (etrt_partition_feeds_host(node, uses) || !supports(graph, node, options->cuda_user))) {
      if (placed != NULL) {
        char name[32];
        status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                            "placement: node '%s' (%s) is placed on %s, but the engine cannot run "
                            "it there (no CUDA kernel for these inputs, or its output shape "
                            "depends on values computed on the device)",
                            node->name, node->op_type, etrt_device_format(device, name, sizeof name));
        goto done;
      }
      device = (etrt_device){ETRT_DEVICE_CPU, 0};
    }
    if (device.type == ETRT_DEVICE_CPU) device.index = 0;
    devices[n] = device;
  }
done:
  free(uses);
  return status;
}

/* Appends to a malloc'd int32 array (capacity doubles). */
static bool etrt_partition_push(int32_t **array, uint32_t *count, uint32_t *capacity, int32_t v) {
  if (*count == *capacity) {
    uint32_t fresh = *capacity ? *capacity * 2 : 8;
    int32_t *grown = realloc(*array, fresh * sizeof *grown);
    if (grown == NULL) return false;
    *array = grown;
    *capacity = fresh;
  }
  (*array)[(*count)++] = v;
  return true;
}

etrt_status etrt_partition_graph(const etrt_ir_graph *graph, const etrt_partition_options *options,
                                 etrt_partitioning **out) {
  *out = NULL;
  etrt_status status = ETRT_OK;
  uint32_t nn = graph->num_nodes, nv = graph->num_values;
  etrt_device *devices = calloc((size_t)nn + 1, sizeof *devices);
  int32_t *part_of_node = malloc(((size_t)nn + 1) * sizeof *part_of_node);
  int32_t *part_of_value = malloc(((size_t)nv + 1) * sizeof *part_of_value);
  int32_t *stamp = malloc(((size_t)nv + 1) * sizeof *stamp);
  bool *exported = calloc((size_t)nv + 1, sizeof *exported);
  etrt_partitioning *result = calloc(1, sizeof *result);
  if (!devices || !part_of_node || !part_of_value || !stamp || !exported || !result) {
    status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
    goto done;
  }
  status = etrt_partition_assign(graph, options, devices);
  if (status != ETRT_OK) goto done;

  /* Cut where the device changes. */
  uint32_t capacity = 0;
  for (uint32_t n = 0; n < nn; ++n) {
    part_of_node[n] = -1;
    if (graph->nodes[n].dead) continue;
    etrt_partition *last = result->count ? &result->parts[result->count - 1] : NULL;
    if (last == NULL || !etrt_partition_same_device(last->device, devices[n])) {
      if (result->count == capacity) {
        capacity = capacity ? capacity * 2 : 4;
        etrt_partition *grown = realloc(result->parts, capacity * sizeof *grown);
        if (grown == NULL) {
          status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
          goto done;
        }
        result->parts = grown;
      }
      last = &result->parts[result->count++];
      memset(last, 0, sizeof *last);
      last->device = devices[n];
      last->nodes = malloc(((size_t)nn + 1) * sizeof *last->nodes);
      if (last->nodes == NULL) {
        status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
        goto done;
      }
    }
    last->nodes[last->num_nodes++] = n;
    part_of_node[n] = (int32_t)(result->count - 1);
  }

  /* Inputs: values read here and computed elsewhere; outputs: values computed here
   * and read elsewhere (or graph outputs). */
  for (uint32_t v = 0; v < nv; ++v) {
    int32_t producer = graph->values[v].producer;
    part_of_value[v] = producer >= 0 ? part_of_node[producer] : -1;
    stamp[v] = -1;
  }
  for (uint32_t i = 0; i < graph->num_outputs; ++i) exported[graph->outputs[i]] = true;
  for (uint32_t k = 0; k < result->count; ++k) {
    etrt_partition *part = &result->parts[k];
    uint32_t input_capacity = 0;
    for (uint32_t j = 0; j < part->num_nodes; ++j) {
      const etrt_ir_node *node = &graph->nodes[part->nodes[j]];
      for (uint32_t i = 0; i < node->num_inputs; ++i) {
        int32_t v = node->inputs[i];
        if (v < 0 || graph->values[v].is_constant || part_of_value[v] == (int32_t)k) continue;
        if (part_of_value[v] >= 0) exported[v] = true;
        if (stamp[v] == (int32_t)k) continue;
        stamp[v] = (int32_t)k;
        if (!etrt_partition_push(&part->inputs, &part->num_inputs, &input_capacity, v)) {
          status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
          goto done;
        }
      }
    }
  }
  for (uint32_t k = 0; k < result->count; ++k) {
    etrt_partition *part = &result->parts[k];
    uint32_t output_capacity = 0;
    for (uint32_t j = 0; j < part->num_nodes; ++j) {
      const etrt_ir_node *node = &graph->nodes[part->nodes[j]];
      for (uint32_t o = 0; o < node->num_outputs; ++o) {
        int32_t v = node->outputs[o];
        if (v < 0 || !exported[v]) continue;
        if (!etrt_partition_push(&part->outputs, &part->num_outputs, &output_capacity, v)) {
          status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
          goto done;
        }
      }
    }
  }
done:
  free(devices);
  free(part_of_node);
  free(part_of_value);
  free(stamp);
  free(exported);
  if (status != ETRT_OK) {
    etrt_partitioning_destroy(result);
    return status;
  }
  *out = result;
  return ETRT_OK;
}

void etrt_partition_describe(const etrt_ir_graph *graph, const etrt_partition *part,
                             uint32_t index, char *buf, size_t size) {
  char device[32];
  etrt_device_format(part->device, device, sizeof device);
  int used = snprintf(buf, size, "partition %u %s: %u op%s (", index, device, part->num_nodes,
                      part->num_nodes == 1 ? "" : "s");
  /* Op types in order of first appearance, with counts. */
  bool first = true;
  for (uint32_t j = 0; j < part->num_nodes && used > 0 && (size_t)used < size; ++j) {
    const char *op = graph->nodes[part->nodes[j]].op_type;
    bool seen = false;
    for (uint32_t p = 0; p < j && !seen; ++p)
      seen = strcmp(graph->nodes[part->nodes[p]].op_type, op) == 0;
    if (seen) continue;
    uint32_t count = 0;
    for (uint32_t p = j; p < part->num_nodes; ++p)
      count += strcmp(graph->nodes[part->nodes[p]].op_type, op) == 0;
    int w = count > 1 ? snprintf(buf + used, size - (size_t)used, "%s%s x%u", first ? "" : ", ", op, count)
                      : snprintf(buf + used, size - (size_t)used, "%s%s", first ? "" : ", ", op);
    if (w < 0) break;
    used += w;
    first = false;
  }
  if (used > 0 && (size_t)used + 2 <= size) {
    snprintf(buf + used, size - (size_t)used, ")");
  } else if (size > 5) {
    memcpy(buf + size - 5, "...)", 5);
  }
}
