#include "engine/bounds.h"

#include <stdio.h>
#include <string.h>

#include "base/status.h"
#include "engine/ops/shape_util.h"

void etrt_bounds_host_init(const etrt_graph *graph, uint32_t value, etrt_bounds_host *host) {
  const etrt_graph_value *v = &graph->values[value];
  host->at[0] = host->at[1] = NULL;
  if (v->kind == ETRT_VALUE_KIND_CONSTANT) {
    host->at[0] = host->at[1] = v->data;
  } else if (v->is_shape_input) {
    host->at[0] = v->min_values;
    host->at[1] = v->max_values;
  }
}

static void etrt_bounds_format(int32_t rank, const int64_t *lo, const int64_t *hi, char *buf,
                               size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld..%lld", i ? ", " : "",
                             (long long)lo[i], (long long)hi[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

/* Fills in[] for one end: dims from the values' bounds; host values as host_value
 * (for inference) or as data (for evaluation). */
static void etrt_bounds_inputs(const etrt_graph *g, const etrt_node *node,
                               const etrt_bounds_host *host, int end, int as_data,
                               etrt_tensor *in) {
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    int32_t id = node->inputs[i];
    memset(&in[i], 0, sizeof in[i]);
    if (id < 0) {
      in[i].rank = -1;
      in[i].dtype = ETRT_DTYPE_INVALID;
      continue;
    }
    const etrt_graph_value *v = &g->values[id];
    in[i].dtype = v->dtype;
    in[i].rank = v->rank;
    memcpy(in[i].dims, end ? v->max_dims : v->min_dims, sizeof in[i].dims);
    if (as_data)
      in[i].data = (void *)host[id].at[end];
    else
      in[i].host_value = host[id].at[end];
  }
}

etrt_status etrt_bounds_infer_node(etrt_graph *graph, uint32_t index, etrt_bounds_host *host,
                                   etrt_arena *arena, int record, etrt_tensor *scratch) {
  etrt_graph *g = graph;
  const etrt_node *node = &g->nodes[index];
  const etrt_op_def *def = node->def;
  etrt_tensor *in = scratch, *out = scratch + node->num_inputs;
  const uint32_t no = node->num_outputs;
  /* A value input must be known now, else the op's bound gives the shapes to plan for
   * and the run gives the actual ones (dims at execute). */
  int bounded = 0, follow = 0;
  for (uint32_t i = 0; i < node->num_inputs && i < 32; ++i) {
    int32_t id = node->inputs[i];
    if (!(def->value_inputs & (1u << i)) || id < 0 || host[id].at[0] != NULL) continue;
    if (def->bound == NULL)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s '%s': input %u ('%s') decides the output shape, so its values must be "
                        "known when the plan is built (a constant, a shape input, or computed "
                        "from those)",
                        node->op_type, node->name, i, g->values[id].name);
    bounded = 1;
  }
  if (def->dims_from_kernel) bounded = 1;
  for (uint32_t i = 0; i < node->num_inputs; ++i)
    if (node->inputs[i] >= 0 && g->values[node->inputs[i]].dims_at_execute) follow = 1;
  etrt_tensor other[ETRT_BOUNDS_MAX_OUTPUTS];
  if (bounded && no > ETRT_BOUNDS_MAX_OUTPUTS)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s '%s': %u outputs, more than %d", node->op_type,
                      node->name, no, ETRT_BOUNDS_MAX_OUTPUTS);
  g->nodes[index].dims_at_execute = bounded  ? ETRT_NODE_DIMS_BOUNDED
                                    : follow ? ETRT_NODE_DIMS_FOLLOW
                                             : ETRT_NODE_DIMS_PLANNED;
  for (uint32_t k = 0; k < no; ++k) g->values[node->outputs[k]].dims_at_execute = bounded || follow;
  /* Evaluated on the host too when every input it reads is known here and the
   * outputs are small (shape arithmetic). */
  int evaluate = node->run_cpu != NULL && !def->dims_from_kernel;
  for (uint32_t i = 0; i < node->num_inputs && evaluate; ++i) {
    int32_t id = node->inputs[i];
    int dims_only = i < 32 && (def->dims_only_inputs & (1u << i));
    if (id >= 0 && !dims_only && host[id].at[0] == NULL) evaluate = 0;
  }
  for (int end = 0; end < 2; ++end) {
    etrt_bounds_inputs(g, node, host, end, 0, in);
    etrt_tensor *o = out + (size_t)end * no;
    for (uint32_t k = 0; k < no; ++k) {
      memset(&o[k], 0, sizeof o[k]);
      o[k].dtype = ETRT_DTYPE_INVALID;
    }
    for (uint32_t k = 0; k < no && bounded; ++k) {
      memset(&other[k], 0, sizeof other[k]);
      other[k].dtype = ETRT_DTYPE_INVALID;
    }
    if (!bounded)
      ETRT_RETURN_IF_ERROR(def->infer(node, in, o));
    else if (end == 0)
      ETRT_RETURN_IF_ERROR(def->bound(node, in, o, other));
    else
      ETRT_RETURN_IF_ERROR(def->bound(node, in, other, o));
    for (uint32_t k = 0; k < no; ++k) {
      int64_t bytes = etrt_graph_nbytes(o[k].dtype, o[k].rank, o[k].dims);
      int unbounded = 0;
      for (int32_t a = 0; a < o[k].rank && (bounded || follow); ++a)
        unbounded |= o[k].dims[a] >= ETRT_OP_DIM_UNBOUNDED;
      if (unbounded) {
        /* No memory is planned for it: its bytes are not a size. */
        evaluate = 0;
        bytes = 0;
      }
      if (bytes < 0)
        return etrt_error(ETRT_ERROR_INTERNAL,
                          "%s '%s': shape inference gave output %u dtype %d rank %d", node->op_type,
                          node->name, k, (int)o[k].dtype, (int)o[k].rank);
      if (end == 1 && (o[k].rank != out[k].rank || o[k].dtype != out[k].dtype))
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s '%s': output %u is %s rank %d at the inputs' smallest shapes and %s "
                          "rank %d at their largest; the rank must not depend on the shapes",
                          node->op_type, node->name, k, etrt_dtype_name(out[k].dtype),
                          (int)out[k].rank, etrt_dtype_name(o[k].dtype), (int)o[k].rank);
      if (bytes > (int64_t)ETRT_GRAPH_MAX_HOST_VALUE_BYTES) evaluate = 0;
    }
  }
  for (uint32_t k = 0; k < no; ++k) {
    etrt_graph_value *v = &g->values[node->outputs[k]];
    const etrt_tensor *lo = &out[k], *hi = &out[no + k];
    int64_t min_dims[ETRT_MAX_RANK], max_dims[ETRT_MAX_RANK];
    for (int32_t a = 0; a < lo->rank; ++a) {
      min_dims[a] = lo->dims[a] < hi->dims[a] ? lo->dims[a] : hi->dims[a];
      max_dims[a] = lo->dims[a] < hi->dims[a] ? hi->dims[a] : lo->dims[a];
      /* Past the largest axis, dims known at execute have no bound (grown memory). */
      if ((bounded || follow) && max_dims[a] > ETRT_GRAPH_MAX_DIM) {
        max_dims[a] = ETRT_GRAPH_MAX_DIM;
        if (min_dims[a] > max_dims[a]) min_dims[a] = max_dims[a];
      }
      if (max_dims[a] > ETRT_GRAPH_MAX_DIM)
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s '%s': output %u axis %d may reach %lld (over 2^40)", node->op_type,
                          node->name, k, (int)a, (long long)max_dims[a]);
    }
    if (record) {
      v->dtype = lo->dtype;
      v->rank = lo->rank;
      memcpy(v->min_dims, min_dims, (size_t)lo->rank * sizeof *min_dims);
      memcpy(v->max_dims, max_dims, (size_t)lo->rank * sizeof *max_dims);
    } else if (v->dtype != lo->dtype ||
               !etrt_shape_equal(v->rank, v->min_dims, lo->rank, min_dims) ||
               !etrt_shape_equal(v->rank, v->max_dims, lo->rank, max_dims)) {
      char said[256], inferred[256];
      etrt_bounds_format(v->rank, v->min_dims, v->max_dims, said, sizeof said);
      etrt_bounds_format(lo->rank, min_dims, max_dims, inferred, sizeof inferred);
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "output %u (value %d '%s') is recorded as %s %s, inference gives %s %s", k,
                        (int)node->outputs[k], v->name, etrt_dtype_name(v->dtype), said,
                        etrt_dtype_name(lo->dtype), inferred);
    }
  }
  for (uint32_t k = 0; k < no; ++k) g->values[node->outputs[k]].host_computable = evaluate != 0;
  if (!evaluate) return ETRT_OK;
  for (int end = 0; end < 2; ++end) {
    etrt_bounds_inputs(g, node, host, end, 1, in);
    etrt_tensor *o = out + (size_t)end * no;
    for (uint32_t k = 0; k < no; ++k) {
      int64_t bytes = etrt_graph_nbytes(o[k].dtype, o[k].rank, o[k].dims);
      o[k].data = etrt_arena_alloc(arena, (size_t)bytes, 64);
      if (o[k].data == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    etrt_status s = node->run_cpu(node, in, o);
    if (s != ETRT_OK)
      return etrt_error_context(s, "%s '%s': evaluating on the host at build time: ", node->op_type,
                                node->name);
    for (uint32_t k = 0; k < no; ++k) host[node->outputs[k]].at[end] = o[k].data;
  }
  return ETRT_OK;
}
