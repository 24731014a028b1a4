#include "builder/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/lower_control.h"
#include "builder/lower_half.h"
#include "builder/onnx_tensor.h"
#include "engine/engine.h"
#include "engine/op.h"

/* A graph input passed by value: the engine's shape input is 1-D int64, so a scalar
 * is reshaped to rank 0 and an int32 input cast back to int32 right behind it (both
 * evaluated on the host with the values, so the readers see the model's type). */
static etrt_status etrt_lower_shape_input(const etrt_ir_value *v, etrt_network *network,
                                          int32_t *out) {
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_network_add_shape_input(network, v->name, v->value_count, v->value_min,
                                                    v->value_max, &id));
  char name[512];
  if (v->rank == 0) {
    static const int64_t no_dims[1] = {0};
    int32_t shape, scalar;
    snprintf(name, sizeof name, "%.480s/to_scalar", v->name);
    ETRT_RETURN_IF_ERROR(
        etrt_network_add_constant(network, name, ETRT_DTYPE_INT64, 1, no_dims, no_dims, &shape));
    ETRT_RETURN_IF_ERROR(etrt_network_add_op(network, "Reshape", name, 2, (int32_t[]){id, shape}, 1,
                                             &scalar, 0, NULL));
    id = scalar;
  }
  if (v->dtype == ETRT_DTYPE_INT32) {
    etrt_attribute to = {.name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = ETRT_ONNX_INT32};
    int32_t cast;
    snprintf(name, sizeof name, "%.480s/to_int32", v->name);
    ETRT_RETURN_IF_ERROR(etrt_network_add_op(network, "Cast", name, 1, &id, 1, &cast, 1, &to));
    id = cast;
  }
  *out = id;
  return ETRT_OK;
}

etrt_status etrt_lower_input(const etrt_ir_graph *graph, etrt_network *network, int32_t value,
                             int32_t *net_ids) {
  const etrt_ir_value *v = &graph->values[value];
  for (int32_t a = 0; a < v->rank; ++a)
    if (v->max[a] >= ETRT_ENGINE_DIM_UNBOUNDED)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "value '%s' has no size bound (its dims are known only at execute, in "
                        "memory the plan computing it holds) and cannot be an input of another "
                        "plan: keep what reads it in the same plan (on the CPU), or give the "
                        "values it depends on at build time (--shape-values)",
                        v->name);
  etrt_status status = v->value_min != NULL
                           ? etrt_lower_shape_input(v, network, &net_ids[value])
                           : etrt_network_add_input(network, v->name, v->dtype, v->rank, v->min,
                                                    v->max, &net_ids[value]);
  if (status != ETRT_OK) return etrt_error_context(status, "value '%s': ", v->name);
  return ETRT_OK;
}

static etrt_status etrt_lower_value(const etrt_ir_graph *graph, etrt_network *network,
                                    const etrt_ir_node *node, int32_t value, int32_t *net_ids) {
  if (net_ids[value] >= 0) return ETRT_OK;
  const etrt_ir_value *v = &graph->values[value];
  if (!v->is_constant)
    return etrt_error(ETRT_ERROR_INTERNAL, "node '%s' (%s) reads '%s' before it is computed",
                      node->name, node->op_type, v->name);
  etrt_status status = etrt_network_add_constant(network, v->name, v->dtype, v->rank, v->max,
                                                 v->data, &net_ids[value]);
  if (status != ETRT_OK) return etrt_error_context(status, "constant '%s': ", v->name);
  return ETRT_OK;
}

etrt_status etrt_lower_nodes(const etrt_ir_graph *graph, etrt_network *network,
                             const uint32_t *nodes, uint32_t count, int32_t *net_ids) {
  int32_t *args = NULL;
  uint32_t args_capacity = 0;
  etrt_status status = ETRT_OK;
  for (uint32_t k = 0; k < count && status == ETRT_OK; ++k) {
    const etrt_ir_node *node = &graph->nodes[nodes[k]];
    /* Trailing omitted outputs are left out; omitted ones in the middle get a value
     * in the network that nothing reads. */
    uint32_t num_outputs = node->num_outputs;
    while (num_outputs > 0 && node->outputs[num_outputs - 1] < 0) --num_outputs;
    uint32_t need = node->num_inputs + num_outputs;
    if (args == NULL || need > args_capacity) {
      int32_t *grown = realloc(args, (need + 8) * sizeof *grown);
      if (grown == NULL) {
        status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
        break;
      }
      args = grown;
      args_capacity = need + 8;
    }
    int32_t *inputs = args, *outputs = args + node->num_inputs;
    for (uint32_t i = 0; i < node->num_inputs && status == ETRT_OK; ++i) {
      int32_t v = node->inputs[i];
      inputs[i] = -1;
      if (v < 0) continue;
      status = etrt_lower_value(graph, network, node, v, net_ids);
      inputs[i] = net_ids[v];
    }
    if (status != ETRT_OK) break;
    if (node->num_bodies > 0) {
      /* Control flow: the bodies become plans for the bounds its inputs have here. */
      etrt_lower_bodies bodies;
      status = etrt_lower_bodies_make(node, network, inputs, &bodies);
      if (status == ETRT_OK)
        status = etrt_network_add_op(network, node->op_type, node->name, node->num_inputs, inputs,
                                     num_outputs, outputs, bodies.count, bodies.attributes);
      etrt_lower_bodies_release(&bodies);
    } else {
      status = etrt_network_add_op(network, node->op_type, node->name, node->num_inputs, inputs,
                                   num_outputs, outputs, node->num_attributes, node->attributes);
    }
    if (status != ETRT_OK) break;
    for (uint32_t o = 0; o < num_outputs; ++o)
      if (node->outputs[o] >= 0) net_ids[node->outputs[o]] = outputs[o];
  }
  free(args);
  return status;
}

/* Refuses, in one message, every operator type the engine has no definition of. */
etrt_status etrt_lower_check_ops(const etrt_ir_graph *graph) {
  char message[1024];
  size_t used = 0;
  uint32_t missing = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead || etrt_op_find(node->op_type) != NULL) continue;
    bool seen = false;
    for (uint32_t p = 0; p < n && !seen; ++p)
      seen = !graph->nodes[p].dead && strcmp(graph->nodes[p].op_type, node->op_type) == 0;
    if (seen) continue;
    if (used < sizeof message - 1) {
      int w = snprintf(message + used, sizeof message - used, "%s%s (node '%s')",
                       missing ? ", " : "", node->op_type, node->name);
      if (w > 0) used += (size_t)w;
    }
    ++missing;
  }
  if (missing == 0) return ETRT_OK;
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "the engine has no operator %s%s", message,
                    used >= sizeof message - 1 ? "..." : "");
}

etrt_status etrt_lower_infer_shapes(etrt_ir_graph *graph) {
  ETRT_RETURN_IF_ERROR(etrt_lower_check_ops(graph));
  etrt_network *network = NULL;
  ETRT_RETURN_IF_ERROR(etrt_network_create(&network));
  int32_t *net_ids = malloc(((size_t)graph->num_values + 1) * sizeof *net_ids);
  uint32_t *order = malloc(((size_t)graph->num_nodes + 1) * sizeof *order);
  etrt_status status = ETRT_OK;
  if (net_ids == NULL || order == NULL) {
    status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "shape inference: out of memory");
    goto done;
  }
  for (uint32_t v = 0; v < graph->num_values; ++v) net_ids[v] = -1;
  for (uint32_t i = 0; i < graph->num_inputs && status == ETRT_OK; ++i)
    status = etrt_lower_input(graph, network, graph->inputs[i], net_ids);
  uint32_t count = 0;
  for (uint32_t n = 0; n < graph->num_nodes; ++n)
    if (!graph->nodes[n].dead) order[count++] = n;
  if (status == ETRT_OK) status = etrt_lower_nodes(graph, network, order, count, net_ids);
  for (uint32_t v = 0; v < graph->num_values && status == ETRT_OK; ++v) {
    etrt_ir_value *value = &graph->values[v];
    if (net_ids[v] < 0 || value->is_constant || value->input_index >= 0) continue;
    status = etrt_network_value_info(network, net_ids[v], &value->dtype, &value->rank, value->min,
                                     value->max);
  }
done:
  free(net_ids);
  free(order);
  etrt_network_destroy(network);
  return status;
}

etrt_status etrt_lower_partition_plan(const etrt_ir_graph *graph, const etrt_partition *part,
                                      const etrt_plan_options *options,
                                      etrt_lower_half_stats *half_stats, uint8_t **plan,
                                      size_t *plan_size) {
  *plan = NULL;
  etrt_lower_half_stats unused;
  if (half_stats == NULL) half_stats = &unused;
  memset(half_stats, 0, sizeof *half_stats);
  *plan_size = 0;
  etrt_network *network = NULL;
  ETRT_RETURN_IF_ERROR(etrt_network_create(&network));
  int32_t *net_ids = malloc(((size_t)graph->num_values + 1) * sizeof *net_ids);
  etrt_status status = ETRT_OK;
  if (net_ids == NULL) {
    status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
    goto done;
  }
  for (uint32_t v = 0; v < graph->num_values; ++v) net_ids[v] = -1;
  for (uint32_t i = 0; i < part->num_inputs && status == ETRT_OK; ++i)
    status = etrt_lower_input(graph, network, part->inputs[i], net_ids);
  etrt_dtype half = etrt_lower_half_type(options);
  if (status == ETRT_OK && half != ETRT_DTYPE_INVALID) {
    status = etrt_lower_half_partition(graph, part, half, network, net_ids, half_stats);
  } else if (status == ETRT_OK) {
    status = etrt_lower_nodes(graph, network, part->nodes, part->num_nodes, net_ids);
    for (uint32_t o = 0; o < part->num_outputs && status == ETRT_OK; ++o) {
      int32_t v = part->outputs[o];
      status = etrt_network_mark_output(network, net_ids[v], graph->values[v].name);
    }
  }
  if (status == ETRT_OK) status = etrt_plan_build(network, options, plan, plan_size);
done:
  free(net_ids);
  etrt_network_destroy(network);
  return status;
}
