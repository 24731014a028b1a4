#include "builder/node_eval.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"

etrt_status etrt_node_eval_prepare(const etrt_ir_graph *graph, const etrt_ir_node *ir_node,
                                   etrt_node *out) {
  (void)graph;
  memset(out, 0, sizeof *out);
  const etrt_op_def *def = etrt_op_find(ir_node->op_type);
  if (def == NULL)
    return etrt_error(ETRT_ERROR_NOT_FOUND, "the engine has no operator %s (node '%s')",
                      ir_node->op_type, ir_node->name);
  out->op_type = ir_node->op_type;
  out->name = ir_node->name;
  out->num_inputs = ir_node->num_inputs;
  out->num_outputs = ir_node->num_outputs;
  out->num_attributes = ir_node->num_attributes;
  out->inputs = ir_node->inputs;
  out->outputs = ir_node->outputs;
  out->attributes = ir_node->attributes;
  out->def = def;
  out->run_cpu = etrt_op_cpu_find(ir_node->op_type);
  if (def->state_size) {
    out->state = calloc(1, def->state_size);
    if (out->state == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  if (def->prepare != NULL) {
    etrt_status status = def->prepare(out, out->state);
    if (status != ETRT_OK) {
      etrt_node_eval_release(out);
      return status;
    }
  }
  return ETRT_OK;
}

void etrt_node_eval_release(etrt_node *node) {
  free(node->state);
  node->state = NULL;
}

void etrt_node_eval_inputs(const etrt_ir_graph *graph, const etrt_ir_node *ir_node,
                           etrt_tensor *tensors) {
  for (uint32_t i = 0; i < ir_node->num_inputs; ++i) {
    etrt_tensor *t = &tensors[i];
    memset(t, 0, sizeof *t);
    t->rank = -1;
    t->dtype = ETRT_DTYPE_INVALID;
    if (ir_node->inputs[i] < 0) continue;
    const etrt_ir_value *v = &graph->values[ir_node->inputs[i]];
    t->dtype = v->dtype;
    t->rank = v->rank;
    for (int32_t a = 0; a < v->rank && a < ETRT_MAX_RANK; ++a) t->dims[a] = v->max[a];
    if (v->is_constant) {
      t->host_value = v->data;
      t->data = (void *)v->data;
    }
  }
}

/* Shape and Size of a value whose shape is fixed are constants even when its
 * values are not. */
static etrt_status etrt_node_eval_shape(etrt_ir_graph *graph, etrt_ir_node *node, bool *folded) {
  const etrt_ir_value *x = &graph->values[node->inputs[0]];
  int32_t out = node->outputs[0];
  bool is_size = strcmp(node->op_type, "Size") == 0;
  int64_t *data = etrt_ir_alloc(graph, (size_t)(x->rank > 0 ? x->rank : 1) * sizeof *data);
  if (data == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "constant folding: out of memory");
  if (is_size) {
    data[0] = etrt_ir_value_numel(x);
    ETRT_RETURN_IF_ERROR(
        etrt_ir_set_constant(graph, out, ETRT_DTYPE_INT64, 0, NULL, data, sizeof *data));
  } else {
    /* Opset 15's start and end: negative counts from the back, then clamped. */
    int64_t rank = x->rank;
    int64_t start = etrt_ir_node_attribute_int(node, "start", 0);
    int64_t end = etrt_ir_node_attribute_int(node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = start < 0 ? 0 : start > rank ? rank : start;
    end = end < 0 ? 0 : end > rank ? rank : end;
    int64_t count = end > start ? end - start : 0;
    for (int64_t i = 0; i < count; ++i) data[i] = x->max[start + i];
    int64_t dims[1] = {count};
    ETRT_RETURN_IF_ERROR(etrt_ir_set_constant(graph, out, ETRT_DTYPE_INT64, 1, dims, data,
                                              (size_t)count * sizeof *data));
  }
  graph->values[out].producer = -1;
  node->dead = true;
  *folded = true;
  return ETRT_OK;
}

etrt_status etrt_node_eval_fold(etrt_ir_graph *graph, uint32_t node_index, size_t limit_bytes,
                                bool *folded) {
  *folded = false;
  etrt_ir_node *node = &graph->nodes[node_index];
  if ((strcmp(node->op_type, "Shape") == 0 || strcmp(node->op_type, "Size") == 0) &&
      node->num_inputs == 1 && node->num_outputs == 1 && node->inputs[0] >= 0 &&
      node->outputs[0] >= 0 && etrt_ir_value_is_static(&graph->values[node->inputs[0]]))
    return etrt_node_eval_shape(graph, node, folded);

  const etrt_op_def *def = etrt_op_find(node->op_type);
  if (def == NULL || def->infer == NULL || def->dims_from_kernel ||
      etrt_op_cpu_find(node->op_type) == NULL)
    return ETRT_OK;
  for (uint32_t i = 0; i < node->num_inputs; ++i)
    if (node->inputs[i] >= 0 && !graph->values[node->inputs[i]].is_constant) return ETRT_OK;

  etrt_node engine_node;
  ETRT_RETURN_IF_ERROR(etrt_node_eval_prepare(graph, node, &engine_node));
  uint32_t n_in = node->num_inputs, n_out = node->num_outputs;
  etrt_tensor *tensors = calloc((size_t)n_in + n_out + 1, sizeof *tensors);
  etrt_status status = ETRT_OK;
  if (tensors == NULL) {
    status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "constant folding: out of memory");
    goto done;
  }
  etrt_tensor *inputs = tensors, *outputs = tensors + n_in;
  etrt_node_eval_inputs(graph, node, inputs);
  for (uint32_t o = 0; o < n_out; ++o) outputs[o].rank = -1;
  status = def->infer(&engine_node, inputs, outputs);
  if (status != ETRT_OK) goto done;
  size_t total = 0;
  for (uint32_t o = 0; o < n_out; ++o) {
    int64_t numel = etrt_tensor_numel(&outputs[o]);
    size_t elem = etrt_dtype_size(outputs[o].dtype);
    size_t bytes;
    if (numel < 0 || elem == 0 || etrt_mul_overflow_size((size_t)numel, elem, &bytes) ||
        etrt_add_overflow_size(total, bytes, &total))
      goto done; /* not something to fold */
  }
  if (total > limit_bytes) goto done;
  for (uint32_t o = 0; o < n_out; ++o) {
    size_t bytes = (size_t)etrt_tensor_numel(&outputs[o]) * etrt_dtype_size(outputs[o].dtype);
    outputs[o].data = etrt_ir_alloc(graph, bytes);
    if (outputs[o].data == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "constant folding: out of memory");
      goto done;
    }
  }
  status = engine_node.run_cpu(&engine_node, inputs, outputs);
  if (status != ETRT_OK) {
    status = etrt_error_context(status, "constant folding: ");
    goto done;
  }
  for (uint32_t o = 0; o < n_out; ++o) {
    int32_t v = node->outputs[o];
    if (v < 0) continue;
    size_t bytes = (size_t)etrt_tensor_numel(&outputs[o]) * etrt_dtype_size(outputs[o].dtype);
    status = etrt_ir_set_constant(graph, v, outputs[o].dtype, outputs[o].rank, outputs[o].dims,
                                  outputs[o].data, bytes);
    if (status != ETRT_OK) goto done;
    graph->values[v].producer = -1;
  }
  node->dead = true;
  *folded = true;
done:
  free(tensors);
  etrt_node_eval_release(&engine_node);
  return status;
}
