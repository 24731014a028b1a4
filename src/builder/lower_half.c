#include "builder/lower_half.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "builder/node_eval.h"
#include "builder/onnx_tensor.h"
#include "engine/op.h"

/* Largest finite float16. */
#define ETRT_HALF_MAX 65504.0f

typedef struct etrt_lower_half {
  const etrt_ir_graph *graph;
  etrt_network *network;
  etrt_dtype half;
  int32_t *net_ids;  /* IR value -> network value in the IR's type, or -1 */
  int32_t *half_ids; /* IR value -> network value in the half type, or -1 */
  int32_t *args;
  uint32_t args_capacity;
  etrt_lower_half_stats *stats;
} etrt_lower_half;

etrt_dtype etrt_lower_half_type(const etrt_plan_options *options) {
  if (options->device.type != ETRT_DEVICE_CUDA) return ETRT_DTYPE_INVALID;
  if (options->precision == ETRT_PRECISION_FP16) return ETRT_DTYPE_FLOAT16;
  if (options->precision == ETRT_PRECISION_BF16) return ETRT_DTYPE_BFLOAT16;
  return ETRT_DTYPE_INVALID;
}

/* Whether input i of the node would be converted when the node runs in half: a
 * float32 value that does not decide output shapes. */
static bool etrt_lower_half_slot(const etrt_lower_half *h, const etrt_op_def *def,
                                 const etrt_ir_node *node, uint32_t i) {
  int32_t v = node->inputs[i];
  if (v < 0 || h->graph->values[v].dtype != ETRT_DTYPE_FLOAT32) return false;
  return def == NULL || i >= 32 || !(def->value_inputs >> i & 1u);
}

/* A float16 constant keeps every finite value finite (bfloat16 has float32's range). */
static bool etrt_lower_half_fits(const etrt_lower_half *h, const etrt_ir_value *v) {
  if (h->half != ETRT_DTYPE_FLOAT16) return true;
  const float *data = v->data;
  size_t n = v->nbytes / sizeof *data;
  for (size_t k = 0; k < n; ++k)
    if (isfinite(data[k]) && fabsf(data[k]) > ETRT_HALF_MAX) return false;
  return true;
}

static bool etrt_lower_half_is_cast(const etrt_ir_node *node) {
  return strcmp(node->op_type, "Cast") == 0 && node->domain[0] == '\0';
}

/* Whether the node runs in the half type (see lower_half.h). */
static etrt_status etrt_lower_half_decide(const etrt_lower_half *h, const etrt_ir_node *node,
                                          bool *run_half) {
  *run_half = false;
  const etrt_ir_graph *g = h->graph;
  const etrt_op_def *def = etrt_op_find(node->op_type);
  if (def == NULL || def->cuda_supports == NULL) return ETRT_OK;
  bool has_float = false;
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    if (!etrt_lower_half_slot(h, def, node, i)) continue;
    const etrt_ir_value *v = &g->values[node->inputs[i]];
    if (v->is_constant && !etrt_lower_half_fits(h, v)) return ETRT_OK;
    has_float = true;
  }
  for (uint32_t o = 0; o < node->num_outputs; ++o)
    has_float |= node->outputs[o] >= 0 && g->values[node->outputs[o]].dtype == ETRT_DTYPE_FLOAT32;
  if (!has_float) return ETRT_OK;
  etrt_node engine_node;
  if (etrt_node_eval_prepare(g, node, &engine_node) != ETRT_OK) return ETRT_OK;
  etrt_tensor *tensors = calloc((size_t)node->num_inputs + node->num_outputs + 1, sizeof *tensors);
  if (tensors == NULL) {
    etrt_node_eval_release(&engine_node);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "half precision: out of memory");
  }
  etrt_tensor *inputs = tensors, *outputs = tensors + node->num_inputs;
  etrt_node_eval_inputs(g, node, inputs);
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    if (!etrt_lower_half_slot(h, def, node, i)) continue;
    inputs[i].dtype = h->half;
    inputs[i].data = NULL; /* the float32 bytes do not match the type any more */
    inputs[i].host_value = NULL;
  }
  bool ok = def->infer(&engine_node, inputs, outputs) == ETRT_OK;
  for (uint32_t o = 0; o < node->num_outputs && ok; ++o) {
    if (node->outputs[o] < 0) continue;
    etrt_dtype was = g->values[node->outputs[o]].dtype;
    ok = outputs[o].dtype == (was == ETRT_DTYPE_FLOAT32 ? h->half : was);
  }
  ok = ok && etrt_op_cuda_supports(&engine_node, inputs);
  etrt_clear_error(); /* a refusal here only means float32 */
  free(tensors);
  etrt_node_eval_release(&engine_node);
  *run_half = ok;
  return ETRT_OK;
}

static etrt_status etrt_lower_half_cast(etrt_lower_half *h, int32_t from, etrt_dtype to,
                                        const char *value_name, int32_t *out) {
  int64_t onnx_to = to == ETRT_DTYPE_FLOAT16    ? ETRT_ONNX_FLOAT16
                    : to == ETRT_DTYPE_BFLOAT16 ? ETRT_ONNX_BFLOAT16
                                                : ETRT_ONNX_FLOAT;
  etrt_attribute attribute = {.name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = onnx_to};
  char name[512];
  snprintf(name, sizeof name, "%.480s/to_%s", value_name, etrt_dtype_name(to));
  ETRT_RETURN_IF_ERROR(
      etrt_network_add_op(h->network, "Cast", name, 1, &from, 1, out, 1, &attribute));
  ++h->stats->casts;
  return ETRT_OK;
}

/* The network value of IR value v in its own type (float32 for the values this pass
 * converts), casting its half form back where only that exists. */
static etrt_status etrt_lower_half_as_is(etrt_lower_half *h, const etrt_ir_node *node, int32_t v) {
  if (h->net_ids[v] >= 0) return ETRT_OK;
  const etrt_ir_value *value = &h->graph->values[v];
  if (h->half_ids[v] >= 0)
    return etrt_lower_half_cast(h, h->half_ids[v], value->dtype, value->name, &h->net_ids[v]);
  if (!value->is_constant)
    return etrt_error(ETRT_ERROR_INTERNAL, "node '%s' (%s) reads '%s' before it is computed",
                      node->name, node->op_type, value->name);
  etrt_status status = etrt_network_add_constant(h->network, value->name, value->dtype, value->rank,
                                                 value->max, value->data, &h->net_ids[v]);
  if (status != ETRT_OK) return etrt_error_context(status, "constant '%s': ", value->name);
  return ETRT_OK;
}

/* The network value of float32 IR value v in the half type: a constant converted into
 * the plan, or a Cast of its float32 form. */
static etrt_status etrt_lower_half_as_half(etrt_lower_half *h, const etrt_ir_node *node,
                                           int32_t v) {
  if (h->half_ids[v] >= 0) return ETRT_OK;
  const etrt_ir_value *value = &h->graph->values[v];
  if (!value->is_constant || h->net_ids[v] >= 0) {
    ETRT_RETURN_IF_ERROR(etrt_lower_half_as_is(h, node, v));
    return etrt_lower_half_cast(h, h->net_ids[v], h->half, value->name, &h->half_ids[v]);
  }
  size_t n = value->nbytes / sizeof(float);
  uint16_t *converted = malloc((n ? n : 1) * sizeof *converted);
  if (converted == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "half precision: out of memory");
  const float *data = value->data;
  for (size_t k = 0; k < n; ++k)
    converted[k] = h->half == ETRT_DTYPE_FLOAT16 ? etrt_float_to_half(data[k])
                                                 : etrt_float_to_bfloat16(data[k]);
  etrt_status status = etrt_network_add_constant(h->network, value->name, h->half, value->rank,
                                                 value->max, converted, &h->half_ids[v]);
  free(converted);
  if (status != ETRT_OK) return etrt_error_context(status, "constant '%s': ", value->name);
  ++h->stats->constants;
  return ETRT_OK;
}

static etrt_status etrt_lower_half_node(etrt_lower_half *h, const etrt_ir_node *node) {
  const etrt_ir_graph *g = h->graph;
  const etrt_op_def *def = etrt_op_find(node->op_type);
  uint32_t num_outputs = node->num_outputs;
  while (num_outputs > 0 && node->outputs[num_outputs - 1] < 0) --num_outputs;
  uint32_t need = node->num_inputs + num_outputs;
  if (h->args == NULL || need > h->args_capacity) {
    int32_t *grown = realloc(h->args, (need + 8) * sizeof *grown);
    if (grown == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
    h->args = grown;
    h->args_capacity = need + 8;
  }
  int32_t *inputs = h->args, *outputs = h->args + node->num_inputs;
  /* A Cast takes any type: it reads whichever form there is (never a cast of its
   * input), and one to float32 writes the half type. */
  bool cast = etrt_lower_half_is_cast(node);
  bool float_cast = cast && etrt_ir_node_attribute_int(node, "to", 0) == ETRT_ONNX_FLOAT;
  bool run_half = false;
  if (!cast) ETRT_RETURN_IF_ERROR(etrt_lower_half_decide(h, node, &run_half));
  bool reads_float = false;
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    int32_t v = node->inputs[i];
    inputs[i] = -1;
    if (v < 0) continue;
    if (cast && h->half_ids[v] >= 0) {
      inputs[i] = h->half_ids[v];
    } else if (run_half && etrt_lower_half_slot(h, def, node, i)) {
      ETRT_RETURN_IF_ERROR(etrt_lower_half_as_half(h, node, v));
      inputs[i] = h->half_ids[v];
    } else {
      ETRT_RETURN_IF_ERROR(etrt_lower_half_as_is(h, node, v));
      inputs[i] = h->net_ids[v];
      reads_float |= g->values[v].dtype == ETRT_DTYPE_FLOAT32;
    }
  }
  const etrt_attribute *attributes = node->attributes;
  etrt_attribute *retargeted = NULL;
  if (float_cast) { /* Cast(x, to=float) writes the half type */
    retargeted = malloc(((size_t)node->num_attributes + 1) * sizeof *retargeted);
    if (retargeted == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "half precision: out of memory");
    memcpy(retargeted, node->attributes, node->num_attributes * sizeof *retargeted);
    for (uint32_t a = 0; a < node->num_attributes; ++a)
      if (strcmp(retargeted[a].name, "to") == 0)
        retargeted[a].i = h->half == ETRT_DTYPE_FLOAT16 ? ETRT_ONNX_FLOAT16 : ETRT_ONNX_BFLOAT16;
    attributes = retargeted;
  }
  etrt_status status =
      etrt_network_add_op(h->network, node->op_type, node->name, node->num_inputs, inputs,
                          num_outputs, outputs, node->num_attributes, attributes);
  free(retargeted);
  if (status != ETRT_OK) return status;
  bool writes_half = run_half || float_cast;
  bool writes_float = false;
  for (uint32_t o = 0; o < num_outputs; ++o) {
    int32_t v = node->outputs[o];
    if (v < 0) continue;
    bool converted = writes_half && g->values[v].dtype == ETRT_DTYPE_FLOAT32;
    (converted ? h->half_ids : h->net_ids)[v] = outputs[o];
    writes_float |= !converted && g->values[v].dtype == ETRT_DTYPE_FLOAT32;
  }
  if (run_half || float_cast)
    ++h->stats->half_nodes;
  else if (reads_float || writes_float)
    ++h->stats->float_nodes;
  return ETRT_OK;
}

etrt_status etrt_lower_half_partition(const etrt_ir_graph *graph, const etrt_partition *part,
                                      etrt_dtype half, etrt_network *network, int32_t *net_ids,
                                      etrt_lower_half_stats *stats) {
  memset(stats, 0, sizeof *stats);
  if (half != ETRT_DTYPE_FLOAT16 && half != ETRT_DTYPE_BFLOAT16)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "half precision: the type must be float16 or bfloat16, not %s",
                      etrt_dtype_name(half));
  etrt_lower_half h = {
      .graph = graph, .network = network, .half = half, .net_ids = net_ids, .stats = stats};
  h.half_ids = malloc(((size_t)graph->num_values + 1) * sizeof *h.half_ids);
  if (h.half_ids == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "half precision: out of memory");
  for (uint32_t v = 0; v < graph->num_values; ++v) h.half_ids[v] = -1;
  etrt_status status = ETRT_OK;
  for (uint32_t k = 0; k < part->num_nodes && status == ETRT_OK; ++k)
    status = etrt_lower_half_node(&h, &graph->nodes[part->nodes[k]]);
  for (uint32_t o = 0; o < part->num_outputs && status == ETRT_OK; ++o) {
    int32_t v = part->outputs[o];
    status = etrt_lower_half_as_is(&h, &graph->nodes[graph->values[v].producer], v);
    if (status == ETRT_OK)
      status = etrt_network_mark_output(network, net_ids[v], graph->values[v].name);
  }
  free(h.args);
  free(h.half_ids);
  return status;
}
