/* EtrtAttention: one definition (attention.h). */
#include "engine/ops/attention.h"

#include <string.h>

#include "engine/ops/op_check.h"

static etrt_status etrt_attention_prepare(const etrt_node *node, void *state) {
  etrt_attention_params *p = state;
  p->heads = etrt_node_attribute_int(node, "num_heads", 0);
  p->head_size = etrt_node_attribute_int(node, "head_size", 0);
  p->scale = etrt_node_attribute_float(node, "scale", 1.0f);
  if (p->heads < 1 || p->head_size < 1 || p->head_size > ETRT_ATTENTION_MAX_HEAD)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "num_heads %lld and head_size %lld (head_size 1 to %d)",
                         (long long)p->heads, (long long)p->head_size, ETRT_ATTENTION_MAX_HEAD);
  int64_t count = 0;
  memset(p->offsets, 0, sizeof p->offsets);
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "offsets", p->offsets, 3, &count));
  if (count != 0 && count != 3)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "'offsets' has %lld values, not 3 (Q, K, V)", (long long)count);
  for (int k = 0; k < 3; ++k)
    if (p->offsets[k] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "offset %d is %lld", k,
                           (long long)p->offsets[k]);
  return ETRT_OK;
}

etrt_status etrt_attention_geometry_of(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_attention_geometry *g) {
  const etrt_attention_params *p = node->state;
  static const char *const names[3] = {"Q", "K", "V"};
  memset(g, 0, sizeof *g);
  g->heads = p->heads;
  g->head_size = p->head_size;
  g->scale = p->scale;
  int64_t width = p->heads * p->head_size;
  for (int k = 0; k < 3; ++k) {
    const etrt_tensor *t = &inputs[k];
    if (t->rank != 3)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s must have rank 3 (got %d)",
                           names[k], (int)t->rank);
    if (t->dtype != inputs[0].dtype)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s is %s, Q %s", names[k],
                           etrt_dtype_name(t->dtype), etrt_dtype_name(inputs[0].dtype));
    if (p->offsets[k] + width > t->dims[2])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "%s has %lld columns, fewer than offset %lld + %lld heads of %lld",
                           names[k], (long long)t->dims[2], (long long)p->offsets[k],
                           (long long)p->heads, (long long)p->head_size);
    if (t->dims[0] != inputs[0].dims[0])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s has batch %lld, Q %lld", names[k],
                           (long long)t->dims[0], (long long)inputs[0].dims[0]);
    g->offsets[k] = p->offsets[k];
  }
  if (inputs[1].dims[1] != inputs[2].dims[1])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "K has %lld rows, V %lld",
                         (long long)inputs[1].dims[1], (long long)inputs[2].dims[1]);
  g->batch = inputs[0].dims[0];
  g->q_len = inputs[0].dims[1];
  g->kv_len = inputs[1].dims[1];
  g->q_row = inputs[0].dims[2];
  g->q_batch = g->q_len * g->q_row;
  g->k_row = inputs[1].dims[2];
  g->k_batch = g->kv_len * g->k_row;
  g->v_row = inputs[2].dims[2];
  g->v_batch = g->kv_len * g->v_row;
  if (node->num_inputs > 3 && inputs[3].rank >= 0) {
    const etrt_tensor *m = &inputs[3];
    const int64_t full[4] = {g->batch, g->heads, g->q_len, g->kv_len};
    if (m->rank > 4 || !etrt_op_dtype_is_float(m->dtype))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "the mask must be float of rank 4 or less (got %s rank %d)",
                           etrt_dtype_name(m->dtype), (int)m->rank);
    int64_t stride = 1;
    for (int a = 3; a >= 0; --a) {
      int32_t ma = m->rank - 4 + a; /* the mask's axis, right-aligned */
      int64_t size = ma >= 0 ? m->dims[ma] : 1;
      if (size != 1 && size != full[a])
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "the mask's axis %d has %lld elements, not 1 or %lld", (int)ma,
                             (long long)size, (long long)full[a]);
      g->mask_stride[a] = size == 1 ? 0 : stride;
      stride *= size;
    }
    g->has_mask = 1;
  }
  return ETRT_OK;
}

static etrt_status etrt_attention_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  if (node->num_inputs < 3 || node->num_inputs > 4 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 3 or 4 inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  for (uint32_t k = 0; k < 3; ++k)
    if (!etrt_op_has_input(node, inputs, k))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", k);
  if (!etrt_op_dtype_is_float(inputs[0].dtype))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "Q must be float (got %s)",
                         etrt_dtype_name(inputs[0].dtype));
  etrt_attention_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_attention_geometry_of(node, inputs, &g));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 3;
  outputs[0].dims[0] = g.batch;
  outputs[0].dims[1] = g.q_len;
  outputs[0].dims[2] = g.heads * g.head_size;
  return ETRT_OK;
}

/* float32, float16 and bfloat16 (the mask of Q's type). */
static int etrt_attention_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  etrt_dtype t = inputs[0].dtype;
  if (t != ETRT_DTYPE_FLOAT32 && t != ETRT_DTYPE_FLOAT16 && t != ETRT_DTYPE_BFLOAT16) return 0;
  return node->num_inputs < 4 || inputs[3].rank < 0 || inputs[3].dtype == t;
}

static const etrt_op_def etrt_op_def_attention = {.op_type = "EtrtAttention",
                                                  .state_size = sizeof(etrt_attention_params),
                                                  .prepare = etrt_attention_prepare,
                                                  .infer = etrt_attention_infer,
                                                  .cuda_supports = etrt_attention_cuda_supports};

const etrt_op_def *const etrt_ops_attention[] = {&etrt_op_def_attention, NULL};
