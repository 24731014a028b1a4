/* The CPU executor: the CPU table's kernels, run to completion on host memory before
 * enqueue returns (the stream is ignored), with convolutions and matrix products
 * through oneDNN where the build and the context have it (cpu_onednn.h). */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "engine/bounds.h"
#include "engine/control.h"
#include "engine/cpu_onednn.h"
#include "engine/cpu_packed.h"
#include "engine/cpu_profile.h"
#include "engine/executor.h"

/* A node whose dims are known only at execute (op.h): its inputs take the dims (and
 * values) this run produced, its outputs the dims its shape inference gives on them,
 * within the memory planned for the bounds. */
static etrt_status etrt_executor_infer_now(const etrt_exec_run *run, uint32_t n, etrt_tensor *in) {
  const etrt_node *node = &run->nodes[n];
  const etrt_graph_value *gv = run->engine->graph.values;
  etrt_tensor *out = in + node->num_inputs;
  if (run->values == NULL)
    return etrt_error(ETRT_ERROR_INTERNAL, "engine '%s', node %u '%s' (%s): dims at execute",
                      run->engine->info.name, n, node->name, node->op_type);
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    int32_t id = node->inputs[i];
    if (id < 0 || !gv[id].dims_at_execute) continue;
    in[i].rank = run->values[id].rank;
    memcpy(in[i].dims, run->values[id].dims, sizeof in[i].dims);
    if (etrt_graph_value_unbounded(&gv[id])) in[i].data = run->values[id].data;
    /* Values computed on the host before the run are those of the bounds: the run's
     * are in memory. */
    in[i].host_value = NULL;
  }
  /* infer may write whole tensors (Trilu copies its input's): the addresses stay. */
  void *data[ETRT_BOUNDS_MAX_OUTPUTS];
  uint32_t kept =
      node->num_outputs < ETRT_BOUNDS_MAX_OUTPUTS ? node->num_outputs : ETRT_BOUNDS_MAX_OUTPUTS;
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    void *address = out[o].data;
    if (o < kept) data[o] = address;
    memset(&out[o], 0, sizeof out[o]);
    out[o].dtype = ETRT_DTYPE_INVALID;
    out[o].data = address;
  }
  if (!node->def->dims_from_kernel) {
    etrt_status s = node->def->infer(node, in, out);
    for (uint32_t o = 0; o < kept; ++o) {
      out[o].data = data[o];
      out[o].host_value = NULL;
    }
    return s;
  }
  /* The kernel gets the planned shapes and writes the actual dims. */
  etrt_tensor lo[ETRT_BOUNDS_MAX_OUTPUTS];
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    memset(&lo[o], 0, sizeof lo[o]);
    lo[o].dtype = ETRT_DTYPE_INVALID;
  }
  return node->def->bound(node, in, lo, out);
}

/* An output axis the run's values make negative or larger than any axis may be, named
 * with the values that decided it (the node's value inputs). */
static etrt_status etrt_executor_dim_refused(const etrt_node *node, const etrt_graph_value *gv,
                                             uint32_t o, int32_t axis, int64_t dim) {
  int32_t from = -1;
  uint32_t index = 0;
  for (uint32_t i = 0; i < node->num_inputs && i < 32 && from < 0; ++i)
    if ((node->def->value_inputs >> i & 1u) && node->inputs[i] >= 0) {
      from = node->inputs[i];
      index = i;
    }
  if (from < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "output %u ('%s') axis %d would be %lld for these inputs (0 to 2^40 - 1 "
                      "allowed)",
                      o, gv[node->outputs[o]].name, (int)axis, (long long)dim);
  return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                    "output %u ('%s') axis %d would be %lld for the values of input %u ('%s') "
                    "(0 to 2^40 - 1 allowed)",
                    o, gv[node->outputs[o]].name, (int)axis, (long long)dim, index, gv[from].name);
}

/* The dims a node at execute gave: recorded for the nodes after it, within the bytes
 * planned. */
static etrt_status etrt_executor_record_dims(const etrt_exec_run *run, uint32_t n,
                                             etrt_tensor *out) {
  const etrt_node *node = &run->nodes[n];
  const etrt_graph_value *gv = run->engine->graph.values;
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    int32_t id = node->outputs[o];
    for (int32_t a = 0; a < out[o].rank && out[o].rank <= ETRT_MAX_RANK; ++a)
      if (out[o].dims[a] < 0 || out[o].dims[a] >= ETRT_GRAPH_MAX_DIM)
        return etrt_executor_dim_refused(node, gv, o, a, out[o].dims[a]);
    int64_t bytes = etrt_graph_nbytes(out[o].dtype, out[o].rank, out[o].dims);
    if (etrt_graph_value_unbounded(&gv[id])) {
      /* Memory with no bound grows here, before the kernel writes it. */
      if ((bytes > run->planned_bytes[id] || run->values[id].data == NULL) &&
          !node->def->dims_from_kernel)
        ETRT_RETURN_IF_ERROR(run->grow(run->grow_state, (uint32_t)id, (size_t)bytes));
      out[o].data = run->values[id].data;
    }
    if (out[o].dtype != gv[id].dtype || out[o].rank != gv[id].rank || bytes < 0 ||
        bytes > run->planned_bytes[id])
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "output %u ('%s') is %s rank %d of %lld bytes for these values; %s rank "
                        "%d of at most %lld bytes was planned",
                        o, gv[id].name, etrt_dtype_name(out[o].dtype), (int)out[o].rank,
                        (long long)bytes, etrt_dtype_name(gv[id].dtype), (int)gv[id].rank,
                        (long long)run->planned_bytes[id]);
    run->values[id].rank = out[o].rank;
    memcpy(run->values[id].dims, out[o].dims, sizeof out[o].dims);
  }
  return ETRT_OK;
}

/* The libraries a CPU run may hand nodes to, and its profile: each NULL when absent. */
typedef struct etrt_cpu_helpers {
  const etrt_cpu_packed *packed;
  etrt_cpu_onednn *onednn;
  etrt_control *const *control; /* per node: a control node's state; NULL: none may run */
  etrt_cpu_profile *profile;
} etrt_cpu_helpers;

/* The nodes of a run; those packed weights or oneDNN have a kernel for run there. */
static etrt_status etrt_executor_run_nodes_with(const etrt_exec_run *run, etrt_tensor *args,
                                                const etrt_cpu_helpers *with) {
  etrt_control *const *control = with->control;
  for (uint32_t n = 0; n < run->node_count; ++n) {
    const etrt_node *node = &run->nodes[n];
    etrt_tensor *in = args + run->arg_offsets[n];
    etrt_status s;
    int at_execute = node->dims_at_execute != ETRT_NODE_DIMS_PLANNED;
    uint64_t start = with->profile != NULL ? etrt_cpu_profile_now() : 0;
    /* Packed weights and oneDNN's primitives were made for the planned dims. */
    if (!at_execute &&
        (etrt_cpu_packed_run(with->packed, n, in, in + node->num_inputs, &s) ||
         etrt_cpu_onednn_run(with->onednn, n, in, in + node->num_inputs,
                             run->workspaces != NULL ? run->workspaces[n] : NULL, &s))) {
      if (with->profile != NULL) etrt_cpu_profile_add(with->profile, n, start, 1);
      if (s != ETRT_OK)
        return etrt_error_context(s, "engine '%s', node %u '%s' (%s): ", run->engine->info.name, n,
                                  node->name, node->op_type);
      continue;
    }
    int is_control = node->def->control && control != NULL && control[n] != NULL;
    if (node->run_cpu == NULL && !is_control)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "node %u '%s' (%s): no CPU kernel", n, node->name,
                        node->op_type);
    int from_kernel = node->def->dims_from_kernel;
    s = at_execute ? etrt_executor_infer_now(run, n, in) : ETRT_OK;
    /* Inferred dims are checked against the memory before the kernel writes it. */
    if (s == ETRT_OK && at_execute && !from_kernel)
      s = etrt_executor_record_dims(run, n, in + node->num_inputs);
    if (s == ETRT_OK && is_control)
      s = etrt_control_run(control[n], run, n, in, in + node->num_inputs);
    else if (s == ETRT_OK)
      s = node->run_cpu(node, in, in + node->num_inputs);
    if (s == ETRT_OK && from_kernel) s = etrt_executor_record_dims(run, n, in + node->num_inputs);
    if (with->profile != NULL) etrt_cpu_profile_add(with->profile, n, start, 0);
    if (s != ETRT_OK)
      return etrt_error_context(s, "engine '%s', node %u '%s' (%s): ", run->engine->info.name, n,
                                node->name, node->op_type);
  }
  return ETRT_OK;
}

etrt_status etrt_executor_run_nodes(const etrt_exec_run *run, etrt_tensor *args) {
  const etrt_cpu_helpers none = {0};
  return etrt_executor_run_nodes_with(run, args, &none);
}

typedef struct etrt_cpu_state {
  const etrt_engine *engine;
  etrt_cpu_onednn *onednn;   /* NULL: etrt's kernels only */
  etrt_cpu_packed *packed;   /* NULL: no weight packed ahead */
  etrt_control **control;    /* per node: the state of a control node, else NULL */
  etrt_cpu_profile *profile; /* NULL: not profiled */
} etrt_cpu_state;

static void etrt_cpu_destroy(void *state);

static etrt_status etrt_cpu_create(etrt_engine *engine, const etrt_device_driver *driver,
                                   void **state) {
  (void)driver;
  etrt_cpu_state *s = calloc(1, sizeof *s);
  if (s == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory", engine->info.name);
  s->engine = engine;
  etrt_status status = etrt_cpu_onednn_create(engine, &s->onednn);
  if (status != ETRT_OK) {
    free(s);
    return status;
  }
  status = etrt_cpu_packed_create(engine, s->onednn, &s->packed);
  if (status == ETRT_OK) status = etrt_cpu_profile_create(engine, &s->profile);
  const etrt_graph *g = &engine->graph;
  for (uint32_t n = 0; status == ETRT_OK && n < g->node_count; ++n) {
    if (!g->nodes[n].def->control) continue;
    if (s->control == NULL) s->control = calloc(g->node_count, sizeof *s->control);
    status = s->control != NULL ? etrt_control_create(&g->nodes[n], &s->control[n])
                                : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory",
                                             engine->info.name);
    if (status != ETRT_OK)
      status = etrt_error_context(status, "engine '%s', node %u '%s' (%s): ", engine->info.name, n,
                                  g->nodes[n].name, g->nodes[n].op_type);
  }
  if (status != ETRT_OK) {
    etrt_cpu_destroy(s);
    return status;
  }
  *state = s;
  return ETRT_OK;
}

static void etrt_cpu_destroy(void *state) {
  etrt_cpu_state *s = state;
  if (s->control != NULL)
    for (uint32_t n = 0; n < s->engine->graph.node_count; ++n) etrt_control_destroy(s->control[n]);
  free(s->control);
  etrt_cpu_onednn_destroy(s->onednn);
  etrt_cpu_packed_destroy(s->packed);
  etrt_cpu_profile_destroy(s->profile);
  free(s);
}

static const uint8_t *etrt_cpu_weights(void *state) {
  return ((const etrt_cpu_state *)state)->engine->weights;
}

static etrt_status etrt_cpu_alloc(void *state, size_t size, void **out) {
  (void)state;
  size_t rounded = etrt_align_up(size > 0 ? size : 1, 64);
  if (rounded < size || (*out = aligned_alloc(64, rounded)) == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                      "engine: out of memory for %zu bytes of intermediates", size);
  return ETRT_OK;
}

static void etrt_cpu_free(void *state, void *ptr) {
  (void)state;
  free(ptr);
}

static etrt_status etrt_cpu_enqueue(void *state, const etrt_exec_run *run, etrt_stream stream) {
  (void)stream;
  for (uint32_t u = 0; u < run->upload_count; ++u)
    if (run->uploads[u].size > 0)
      memcpy(run->uploads[u].dst, run->uploads[u].src, run->uploads[u].size);
  const etrt_cpu_state *s = state;
  const etrt_cpu_helpers with = {s->packed, s->onednn, s->control, s->profile};
  etrt_status status = etrt_executor_run_nodes_with(run, run->args, &with);
  if (s->profile != NULL && status == ETRT_OK) etrt_cpu_profile_run_done(s->profile);
  return status;
}

static size_t etrt_cpu_workspace(void *state, uint32_t node) {
  return etrt_cpu_onednn_workspace(((const etrt_cpu_state *)state)->onednn, node);
}

static size_t etrt_cpu_value_bytes(void *state, uint32_t value) {
  return etrt_cpu_onednn_value_bytes(((const etrt_cpu_state *)state)->onednn, value);
}

static etrt_status etrt_cpu_quiesce(void *state) {
  (void)state;
  return ETRT_OK;
}

const etrt_executor_ops etrt_executor_cpu = {
    .kind = ETRT_EXECUTOR_CPU,
    .name = "cpu",
    .create = etrt_cpu_create,
    .destroy = etrt_cpu_destroy,
    .weights = etrt_cpu_weights,
    .alloc = etrt_cpu_alloc,
    .free = etrt_cpu_free,
    .enqueue = etrt_cpu_enqueue,
    .quiesce = etrt_cpu_quiesce,
    .workspace = etrt_cpu_workspace,
    .value_bytes = etrt_cpu_value_bytes,
};
