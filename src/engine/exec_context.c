/* Execution contexts: per-context shapes, memory and bindings on top of a shared
 * engine. What does not depend on where kernels run lives here, once:
 *
 *  - shape inference, node by node, whenever an input shape or a shape input's values
 *    change; nodes that shape inference needs on the host ("shape tensors") are run
 *    on the host with their CPU kernel into the host block;
 *  - the memory plan: intermediates (and device copies of shape inputs) share one
 *    arena, placed by lifetime (greedy, largest first), sized at create from the
 *    plan's max bounds and re-planned only when a shape exceeds what was planned;
 *  - binding checks and each node's argument tensors, rebuilt only when shapes
 *    change; an enqueue with unchanged shapes patches the bound addresses and hands
 *    the run to the executor: no allocation, no system call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/log.h"
#include "base/memplan.h"
#include "base/status.h"
#include "engine/bounds.h"
#include "engine/executor.h"
#include "engine/ops/shape_util.h"

/* Sizes in the arena are rounded so that every tensor starts 256-byte aligned (what
 * vectorised and CUDA kernels want) and a zero-size tensor still gets an address. */
#define ETRT_ARENA_ALIGNMENT 256u
#define ETRT_HOST_ALIGNMENT 64u

typedef struct etrt_exec_patch {
  uint32_t arg;
  uint32_t io;
} etrt_exec_patch;

struct etrt_exec_context {
  etrt_engine *engine;
  const etrt_graph *graph;
  const etrt_executor_ops *ops;
  void *exec;
  const uint8_t *weights; /* the executor's copy of the engine's weights */

  etrt_tensor *values; /* per value: current dtype, rank, dims, host_value */
  /* Per value: the bytes a run may give a value whose dims are known only at execute
   * (the memory planned for it), set by each inference. */
  int64_t *planned_bytes;
  /* Per value with no bound (etrt_graph_value_unbounded): bytes of its own buffer, which
   * values[v].data points to, grown at execute when a larger shape first arrives. */
  size_t *grown_capacity;
  uint32_t io_count;
  uint8_t *shape_set; /* per I/O: shape (or a shape input's values) given */
  void **addresses;   /* per I/O */
  int dirty;          /* inputs changed since the last inference */
  int inferred;       /* the last inference succeeded */

  /* Host block: shape inputs' values and host-evaluated values. */
  uint8_t *host_block;
  size_t host_block_size;
  size_t *host_capacity, *host_offset; /* per value; capacity 0: not in the block */

  /* Arena: intermediates and device copies of shape inputs. */
  void *arena;
  size_t arena_size;
  size_t *arena_capacity, *arena_offset; /* per value; capacity 0: not in the arena */
  etrt_memplan_interval *items;          /* one per arena value, in value order */
  uint32_t *item_values;                 /* the value of each item */
  uint32_t item_count;
  /* Then one item per node with a workspace (item_values holds the node), and where
   * each one's lies in the arena (per node; NULL: none). */
  uint32_t workspace_count;
  size_t *workspace_size; /* per workspace item */
  void **workspaces;

  etrt_tensor *args;
  uint32_t *arg_offsets;
  uint32_t arg_count;
  etrt_exec_patch *patches;
  uint32_t patch_count;
  etrt_exec_upload *uploads;
  uint32_t upload_count;
  etrt_tensor *scratch; /* host evaluation of one node */
};

static int etrt_value_in_arena(const etrt_graph_value *v) {
  return (v->kind == ETRT_VALUE_KIND_INTERMEDIATE && !etrt_graph_value_unbounded(v)) ||
         v->is_shape_input;
}

static int etrt_value_in_host_block(const etrt_engine *e, uint32_t id) {
  const etrt_graph_value *v = &e->graph.values[id];
  if (v->is_shape_input) return 1;
  return e->host_needed[id] && v->producer >= 0 && e->host_evaluated[v->producer];
}

static const char *etrt_exec_name(const etrt_exec_context *c) { return c->engine->info.name; }

/* --- host block ------------------------------------------------------------------ */

/* Lays the block out from host_capacity, keeping the bytes of values already there,
 * and points their host_value at the new place. */
static etrt_status etrt_exec_host_layout(etrt_exec_context *c, const size_t *old_capacity) {
  const etrt_graph *g = c->graph;
  size_t total = 0;
  for (uint32_t v = 0; v < g->value_count; ++v) {
    if (c->host_capacity[v] == 0) continue;
    total = etrt_align_up(total, ETRT_HOST_ALIGNMENT) + c->host_capacity[v];
  }
  uint8_t *block = calloc(1, total > 0 ? total : 1);
  if (block == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory for host values",
                      etrt_exec_name(c));
  size_t at = 0;
  for (uint32_t v = 0; v < g->value_count; ++v) {
    if (c->host_capacity[v] == 0) continue;
    at = etrt_align_up(at, ETRT_HOST_ALIGNMENT);
    if (c->host_block != NULL && old_capacity != NULL) {
      size_t keep = old_capacity[v] < c->host_capacity[v] ? old_capacity[v] : c->host_capacity[v];
      memcpy(block + at, c->host_block + c->host_offset[v], keep);
    }
    c->host_offset[v] = at;
    c->values[v].host_value = block + at;
    at += c->host_capacity[v];
  }
  free(c->host_block);
  c->host_block = block;
  c->host_block_size = total;
  return ETRT_OK;
}

static etrt_status etrt_exec_host_reserve(etrt_exec_context *c, uint32_t v, int64_t bytes) {
  if ((size_t)bytes <= c->host_capacity[v]) return ETRT_OK;
  if (bytes > (int64_t)ETRT_GRAPH_MAX_HOST_VALUE_BYTES)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "engine '%s': value '%s' is computed on the host for shape inference and "
                      "would take %lld bytes, more than %zu",
                      etrt_exec_name(c), c->graph->values[v].name, (long long)bytes,
                      ETRT_GRAPH_MAX_HOST_VALUE_BYTES);
  size_t *old = malloc((size_t)c->graph->value_count * sizeof *old);
  if (old == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  memcpy(old, c->host_capacity, (size_t)c->graph->value_count * sizeof *old);
  c->host_capacity[v] = (size_t)bytes;
  etrt_status s = etrt_exec_host_layout(c, old);
  if (s != ETRT_OK) c->host_capacity[v] = old[v];
  free(old);
  return s;
}

/* --- arena ----------------------------------------------------------------------- */

/* Places every arena value with the planner the builder also uses (base/memplan.h)
 * and grows the arena when the plan needs more. */
static etrt_status etrt_exec_arena_plan(etrt_exec_context *c) {
  for (uint32_t i = 0; i < c->item_count; ++i)
    c->items[i].size = c->arena_capacity[c->item_values[i]];
  for (uint32_t w = 0; w < c->workspace_count; ++w)
    c->items[c->item_count + w].size = c->workspace_size[w];
  uint64_t total = 0;
  etrt_status s = etrt_memplan_place(c->items, c->item_count + c->workspace_count,
                                     ETRT_ARENA_ALIGNMENT, &total, 1);
  if (s != ETRT_OK) return etrt_error_context(s, "engine '%s': ", etrt_exec_name(c));
  if ((uint64_t)(size_t)total != total)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': the intermediates need %llu bytes",
                      etrt_exec_name(c), (unsigned long long)total);
  if ((size_t)total > c->arena_size || c->arena == NULL) {
    if (c->arena != NULL) {
      ETRT_RETURN_IF_ERROR(c->ops->quiesce(c->exec));
      c->ops->free(c->exec, c->arena);
      c->arena = NULL;
      c->arena_size = 0;
    }
    ETRT_RETURN_IF_ERROR(
        c->ops->alloc(c->exec, total > 0 ? (size_t)total : ETRT_ARENA_ALIGNMENT, &c->arena));
    c->arena_size = (size_t)total;
  }
  for (uint32_t i = 0; i < c->item_count; ++i)
    c->arena_offset[c->item_values[i]] = (size_t)c->items[i].offset;
  for (uint32_t i = c->item_count; i < c->item_count + c->workspace_count; ++i)
    c->workspaces[c->item_values[i]] = (uint8_t *)c->arena + c->items[i].offset;
  return ETRT_OK;
}

static size_t etrt_arena_round(int64_t bytes) {
  size_t b = (size_t)bytes;
  return b == 0 ? ETRT_ARENA_ALIGNMENT : etrt_align_up(b, ETRT_ARENA_ALIGNMENT);
}

/* --- shape inference -------------------------------------------------------------- */

static void *etrt_exec_address(const etrt_exec_context *c, int32_t id) {
  const etrt_graph_value *v = &c->graph->values[id];
  if (v->kind == ETRT_VALUE_KIND_CONSTANT)
    return (void *)(c->weights + ((const uint8_t *)v->data - c->engine->weights));
  if (c->arena_capacity[id] > 0) return (uint8_t *)c->arena + c->arena_offset[id];
  if (etrt_graph_value_unbounded(v)) return c->values[id].data; /* grown at execute */
  return NULL; /* bound by the caller: patched at enqueue */
}

static etrt_status etrt_exec_check_inputs(const etrt_exec_context *c) {
  const etrt_graph *g = c->graph;
  for (uint32_t io = 0; io < g->input_count; ++io) {
    if (c->shape_set[io]) continue;
    const etrt_graph_value *v = &g->values[g->inputs[io]];
    if (v->is_shape_input)
      return etrt_error(
          ETRT_ERROR_STATE,
          "engine '%s': shape input '%s' has no values (etrt_exec_context_set_input_values)",
          etrt_exec_name(c), v->name);
    for (int32_t a = 0; a < v->rank; ++a) {
      if (v->min_dims[a] != v->max_dims[a])
        return etrt_error(ETRT_ERROR_STATE,
                          "engine '%s': input '%s' has no shape set, and axis %d varies in [%lld, "
                          "%lld] (etrt_exec_context_set_input_shape)",
                          etrt_exec_name(c), v->name, (int)a, (long long)v->min_dims[a],
                          (long long)v->max_dims[a]);
    }
  }
  return ETRT_OK;
}

/* Runs node n's CPU kernel on the host values of its inputs into the host block. */
static etrt_status etrt_exec_host_evaluate(etrt_exec_context *c, uint32_t n) {
  const etrt_node *node = &c->graph->nodes[n];
  etrt_tensor *args = c->args + c->arg_offsets[n];
  etrt_tensor *t = c->scratch;
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    const etrt_tensor *out = &args[node->num_inputs + o];
    int64_t bytes = etrt_graph_nbytes(out->dtype, out->rank, out->dims);
    ETRT_RETURN_IF_ERROR(etrt_exec_host_reserve(c, (uint32_t)node->outputs[o], bytes));
  }
  /* Reserving may have moved the block: take the pointers after it. */
  for (uint32_t k = 0; k < node->num_inputs + node->num_outputs; ++k) {
    int32_t id = k < node->num_inputs ? node->inputs[k] : node->outputs[k - node->num_inputs];
    int dims_only = k < node->num_inputs && k < 32 && (node->def->dims_only_inputs & (1u << k));
    t[k] = args[k];
    t[k].data = id >= 0 && !dims_only ? (void *)c->values[id].host_value : NULL;
    t[k].host_value = NULL;
  }
  etrt_status s = node->run_cpu(node, t, t + node->num_inputs);
  if (s != ETRT_OK)
    return etrt_error_context(
        s, "engine '%s': computing shape values on the host: ", etrt_exec_name(c));
  return ETRT_OK;
}

static etrt_status etrt_exec_bound(const etrt_node *node, const etrt_tensor *in, etrt_tensor *out) {
  etrt_tensor lo[ETRT_BOUNDS_MAX_OUTPUTS];
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    memset(&lo[o], 0, sizeof lo[o]);
    lo[o].dtype = ETRT_DTYPE_INVALID;
  }
  return node->def->bound(node, in, lo, out);
}

static etrt_status etrt_exec_infer(etrt_exec_context *c) {
  const etrt_engine *e = c->engine;
  const etrt_graph *g = c->graph;
  c->inferred = 0;
  ETRT_RETURN_IF_ERROR(etrt_exec_check_inputs(c));
  int replan = 0;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    etrt_tensor *in = c->args + c->arg_offsets[n], *out = in + node->num_inputs;
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      int32_t id = node->inputs[i];
      if (id < 0) {
        memset(&in[i], 0, sizeof in[i]);
        in[i].rank = -1;
        in[i].dtype = ETRT_DTYPE_INVALID;
      } else {
        in[i] = c->values[id];
        in[i].data = NULL;
      }
    }
    for (uint32_t o = 0; o < node->num_outputs; ++o) {
      memset(&out[o], 0, sizeof out[o]);
      out[o].dtype = ETRT_DTYPE_INVALID;
    }
    /* Dims known only at execute: plan for the largest the bound allows. */
    etrt_status s = node->dims_at_execute == ETRT_NODE_DIMS_BOUNDED
                        ? etrt_exec_bound(node, in, out)
                        : node->def->infer(node, in, out);
    if (s != ETRT_OK) return etrt_error_context(s, "engine '%s', node %u: ", etrt_exec_name(c), n);
    for (uint32_t o = 0; o < node->num_outputs; ++o) {
      int32_t id = node->outputs[o];
      const etrt_graph_value *v = &g->values[id];
      int unbounded = etrt_graph_value_unbounded(v);
      int64_t bytes = unbounded ? 0 : etrt_graph_nbytes(out[o].dtype, out[o].rank, out[o].dims);
      if (out[o].dtype != v->dtype || out[o].rank != v->rank || bytes < 0)
        return etrt_error(
            ETRT_ERROR_INVALID_ARGUMENT,
            "engine '%s': %s '%s' output %u is %s rank %d for these input shapes; the "
            "plan was built for %s rank %d",
            etrt_exec_name(c), node->op_type, node->name, o, etrt_dtype_name(out[o].dtype),
            (int)out[o].rank, etrt_dtype_name(v->dtype), (int)v->rank);
      c->planned_bytes[id] = bytes;
      c->values[id].dtype = out[o].dtype;
      c->values[id].rank = out[o].rank;
      memcpy(c->values[id].dims, out[o].dims, sizeof out[o].dims);
      if (c->arena_capacity[id] > 0 && etrt_arena_round(bytes) > c->arena_capacity[id]) {
        c->arena_capacity[id] = etrt_arena_round(bytes);
        replan = 1;
      }
    }
    if (e->host_evaluated[n]) ETRT_RETURN_IF_ERROR(etrt_exec_host_evaluate(c, n));
  }
  if (replan) ETRT_RETURN_IF_ERROR(etrt_exec_arena_plan(c));
  /* What a run may give a value whose dims are known only at execute: its room in the
   * arena, or for an output the bytes of the largest dims the caller binds memory for. */
  for (uint32_t v = 0; v < g->value_count; ++v) {
    if (!g->values[v].dims_at_execute) continue;
    const etrt_graph_value *gv = &g->values[v];
    int64_t largest = etrt_graph_nbytes(gv->dtype, gv->rank, gv->max_dims);
    if (etrt_graph_value_unbounded(gv))
      c->planned_bytes[v] = (int64_t)c->grown_capacity[v];
    else if (c->arena_capacity[v] > 0)
      c->planned_bytes[v] = (int64_t)c->arena_capacity[v];
    else if (largest > c->planned_bytes[v])
      c->planned_bytes[v] = largest;
  }
  /* The run's arguments: addresses, and host values where shape inference needed them. */
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    etrt_tensor *a = c->args + c->arg_offsets[n];
    for (uint32_t k = 0; k < node->num_inputs + node->num_outputs; ++k) {
      int32_t id = k < node->num_inputs ? node->inputs[k] : node->outputs[k - node->num_inputs];
      if (id < 0) continue;
      a[k] = c->values[id];
      a[k].data = etrt_exec_address(c, id);
      if (!e->host_needed[id]) a[k].host_value = NULL;
    }
  }
  uint32_t u = 0;
  for (uint32_t io = 0; io < g->input_count; ++io) {
    int32_t id = g->inputs[io];
    if (!g->values[id].is_shape_input) continue;
    c->uploads[u].dst = etrt_exec_address(c, id);
    c->uploads[u].src = c->host_block + c->host_offset[id];
    c->uploads[u].size = (size_t)etrt_graph_shape_input_count(&g->values[id]) * sizeof(int64_t);
    ++u;
  }
  c->dirty = 0;
  c->inferred = 1;
  return ETRT_OK;
}

/* --- create / destroy ------------------------------------------------------------- */

static etrt_status etrt_exec_select(etrt_engine *engine, const etrt_device_driver *driver,
                                    const etrt_executor_ops **ops) {
  *ops = &etrt_executor_cpu;
  if (driver == NULL || engine->info.device.type == ETRT_DEVICE_CPU) return ETRT_OK;
  char device[32];
  etrt_device_format(engine->info.device, device, sizeof device);
  int count = driver->device_count();
  if (engine->info.device.index >= count)
    return etrt_error(ETRT_ERROR_DEVICE,
                      "engine '%s' was built for %s, but the %s driver has %d device(s)",
                      engine->info.name, device, driver->name, count);
  int current = -1;
  ETRT_RETURN_IF_ERROR(driver->get_device(&current));
  if (current != engine->info.device.index)
    return etrt_error(
        ETRT_ERROR_STATE,
        "engine '%s' runs on %s but the current device is %d: set the engine's device "
        "before creating a context",
        engine->info.name, device, current);
  if (strcmp(driver->name, "sim") == 0) {
    *ops = &etrt_executor_sim;
    return ETRT_OK;
  }
#ifdef ETRT_HAVE_CUDA
  if (strcmp(driver->name, "cuda") == 0) {
    *ops = &etrt_executor_cuda;
    return ETRT_OK;
  }
#endif
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "engine '%s': no executor for the '%s' driver",
                    engine->info.name, driver->name);
}

static etrt_status etrt_exec_allocate(etrt_exec_context *c) {
  const etrt_graph *g = c->graph;
  uint32_t nv = g->value_count > 0 ? g->value_count : 1;
  c->io_count = etrt_graph_io_count(g);
  uint32_t nio = c->io_count > 0 ? c->io_count : 1;
  c->arg_offsets = calloc(g->node_count > 0 ? g->node_count : 1, sizeof *c->arg_offsets);
  if (c->arg_offsets == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  uint32_t args = 0, patches = 0, uploads = 0;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    c->arg_offsets[n] = args;
    args += node->num_inputs + node->num_outputs;
  }
  c->arg_count = args;
  for (uint32_t io = 0; io < g->input_count; ++io)
    uploads += g->values[g->inputs[io]].is_shape_input;
  c->values = calloc(nv, sizeof *c->values);
  c->planned_bytes = calloc(nv, sizeof *c->planned_bytes);
  c->grown_capacity = calloc(nv, sizeof *c->grown_capacity);
  c->shape_set = calloc(nio, 1);
  c->addresses = calloc(nio, sizeof *c->addresses);
  c->host_capacity = calloc(nv, sizeof(size_t));
  c->host_offset = calloc(nv, sizeof(size_t));
  c->arena_capacity = calloc(nv, sizeof(size_t));
  c->arena_offset = calloc(nv, sizeof(size_t));
  uint32_t nn = g->node_count > 0 ? g->node_count : 1;
  c->items = calloc((size_t)nv + nn, sizeof *c->items);
  c->item_values = calloc((size_t)nv + nn, sizeof *c->item_values);
  c->workspace_size = calloc(nn, sizeof *c->workspace_size);
  c->workspaces = calloc(nn, sizeof *c->workspaces);
  c->args = calloc(args > 0 ? args : 1, sizeof *c->args);
  c->patches = calloc(args > 0 ? args : 1, sizeof *c->patches);
  c->uploads = calloc(uploads > 0 ? uploads : 1, sizeof *c->uploads);
  c->scratch = calloc(c->engine->max_node_args + 1, sizeof *c->scratch);
  if (c->values == NULL || c->planned_bytes == NULL || c->grown_capacity == NULL ||
      c->shape_set == NULL || c->addresses == NULL || c->host_capacity == NULL ||
      c->host_offset == NULL || c->arena_capacity == NULL || c->arena_offset == NULL ||
      c->items == NULL || c->item_values == NULL || c->workspace_size == NULL ||
      c->workspaces == NULL || c->args == NULL || c->patches == NULL || c->uploads == NULL ||
      c->scratch == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  c->upload_count = uploads;
  /* Bound I/O addresses are patched into these argument slots at each enqueue. */
  uint32_t *io_of = calloc(nv, sizeof *io_of); /* I/O index + 1 of each value, 0: none */
  if (io_of == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  for (uint32_t io = 0; io < c->io_count; ++io) {
    int32_t id = etrt_graph_io_value(g, io);
    if (!g->values[id].is_shape_input && !etrt_graph_value_unbounded(&g->values[id]))
      io_of[id] = io + 1;
  }
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    for (uint32_t k = 0; k < node->num_inputs + node->num_outputs; ++k) {
      int32_t id = k < node->num_inputs ? node->inputs[k] : node->outputs[k - node->num_inputs];
      if (id < 0 || io_of[id] == 0) continue;
      c->patches[patches].arg = c->arg_offsets[n] + k;
      c->patches[patches].io = io_of[id] - 1;
      ++patches;
    }
  }
  free(io_of);
  c->patch_count = patches;
  return ETRT_OK;
}

static etrt_status etrt_exec_init(etrt_exec_context *c) {
  const etrt_engine *e = c->engine;
  const etrt_graph *g = c->graph;
  ETRT_RETURN_IF_ERROR(etrt_exec_allocate(c));
  for (uint32_t v = 0; v < g->value_count; ++v) {
    const etrt_graph_value *gv = &g->values[v];
    etrt_tensor *t = &c->values[v];
    t->dtype = gv->dtype;
    t->rank = gv->rank;
    memcpy(t->dims, gv->max_dims, sizeof t->dims);
    if (gv->kind == ETRT_VALUE_KIND_CONSTANT && e->host_needed[v]) t->host_value = gv->data;
    if (etrt_value_in_host_block(e, v)) {
      int64_t bytes = gv->is_shape_input
                          ? etrt_graph_shape_input_count(gv) * (int64_t)sizeof(int64_t)
                          : etrt_graph_nbytes(gv->dtype, gv->rank, gv->max_dims);
      c->host_capacity[v] = bytes > 0 ? (size_t)bytes : 1;
    }
    if (etrt_value_in_arena(gv)) {
      /* the planned bytes, or more where the executor keeps the value in a layout of its own */
      int64_t bytes = etrt_graph_nbytes(gv->dtype, gv->rank, gv->max_dims);
      size_t own = c->ops->value_bytes != NULL ? c->ops->value_bytes(c->exec, v) : 0;
      c->arena_capacity[v] = etrt_arena_round(own > (size_t)bytes ? (int64_t)own : bytes);
      c->item_values[c->item_count] = v;
      etrt_memplan_interval *item = &c->items[c->item_count++];
      item->first = gv->is_shape_input ? 0 : gv->producer;
      item->last = gv->is_shape_input ? (int64_t)g->node_count : item->first;
    }
  }
  /* Lifetimes end at the last node reading the value. */
  uint32_t *item_of = calloc(g->value_count > 0 ? g->value_count : 1, sizeof *item_of);
  if (item_of == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  for (uint32_t i = 0; i < c->item_count; ++i) item_of[c->item_values[i]] = i + 1;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      int32_t id = node->inputs[i];
      if (id >= 0 && item_of[id] != 0 && c->items[item_of[id] - 1].last < (int64_t)n)
        c->items[item_of[id] - 1].last = n;
    }
  }
  free(item_of);
  /* Executor scratch, live only while its node runs: after the values, so that their
   * items keep the indices above, and placed after them (pass 1), into the gaps their
   * lifetimes leave: placed among them by size, ocr_det's 12 MB of oneDNN blocked
   * copies had grown its arena by 6 MB; after them it did not grow at all. */
  for (uint32_t n = 0; c->ops->workspace != NULL && n < g->node_count; ++n) {
    size_t bytes = c->ops->workspace(c->exec, n);
    if (bytes == 0) continue;
    uint32_t i = c->item_count + c->workspace_count;
    c->workspace_size[c->workspace_count++] = etrt_arena_round((int64_t)bytes);
    c->item_values[i] = n;
    c->items[i] = (etrt_memplan_interval){.first = n, .last = n, .pass = 1};
  }
  /* Fixed inputs need no shape call. */
  for (uint32_t io = 0; io < g->input_count; ++io) {
    const etrt_graph_value *v = &g->values[g->inputs[io]];
    c->shape_set[io] =
        !v->is_shape_input && etrt_shape_equal(v->rank, v->min_dims, v->rank, v->max_dims);
    if (c->shape_set[io]) memcpy(c->values[g->inputs[io]].dims, v->min_dims, sizeof v->min_dims);
  }
  ETRT_RETURN_IF_ERROR(etrt_exec_host_layout(c, NULL));
  ETRT_RETURN_IF_ERROR(etrt_exec_arena_plan(c));
  c->dirty = 1;
  return ETRT_OK;
}

etrt_status etrt_exec_context_create(etrt_engine *engine, const etrt_device_driver *driver,
                                     etrt_exec_context **out) {
  if (engine == NULL || out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "engine: NULL engine or out");
  *out = NULL;
  const etrt_executor_ops *ops;
  ETRT_RETURN_IF_ERROR(etrt_exec_select(engine, driver, &ops));
  etrt_exec_context *c = calloc(1, sizeof *c);
  if (c == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  c->engine = engine;
  c->graph = &engine->graph;
  c->ops = ops;
  etrt_status s = ops->create(engine, driver, &c->exec);
  if (s != ETRT_OK) {
    free(c);
    return etrt_error_context(s, "engine '%s': creating a %s context: ", engine->info.name,
                              ops->name);
  }
  c->weights = ops->weights(c->exec);
  s = etrt_exec_init(c);
  if (s != ETRT_OK) {
    etrt_exec_context_destroy(c);
    return s;
  }
  *out = c;
  return ETRT_OK;
}

void etrt_exec_context_destroy(etrt_exec_context *c) {
  if (c == NULL) return;
  if (c->exec != NULL) {
    if (c->ops->quiesce(c->exec) != ETRT_OK) {
      /* Freeing memory that queued work still uses would corrupt it: leak instead. */
      etrt_log(ETRT_LOG_ERROR,
               "engine '%s': context destroyed with work still queued; its memory is leaked",
               etrt_exec_name(c));
      return;
    }
    if (c->arena != NULL) c->ops->free(c->exec, c->arena);
    for (uint32_t v = 0; c->values != NULL && v < c->graph->value_count; ++v)
      if (etrt_graph_value_unbounded(&c->graph->values[v]) && c->values[v].data != NULL)
        c->ops->free(c->exec, c->values[v].data);
    c->ops->destroy(c->exec);
  }
  free(c->values);
  free(c->planned_bytes);
  free(c->grown_capacity);
  free(c->shape_set);
  free(c->addresses);
  free(c->host_block);
  free(c->host_capacity);
  free(c->host_offset);
  free(c->arena_capacity);
  free(c->arena_offset);
  free(c->items);
  free(c->item_values);
  free(c->workspace_size);
  free(c->workspaces);
  free(c->args);
  free(c->arg_offsets);
  free(c->patches);
  free(c->uploads);
  free(c->scratch);
  free(c);
}

etrt_engine *etrt_exec_context_engine(const etrt_exec_context *c) { return c->engine; }

etrt_executor_kind etrt_exec_context_executor(const etrt_exec_context *c) { return c->ops->kind; }

size_t etrt_exec_context_arena_size(const etrt_exec_context *c) { return c->arena_size; }

etrt_event etrt_exec_context_completion(const etrt_exec_context *c) {
  return c->ops->completion != NULL ? c->ops->completion(c->exec) : NULL;
}

etrt_status etrt_exec_context_check(etrt_exec_context *c) {
  return c->ops->check != NULL ? c->ops->check(c->exec) : ETRT_OK;
}

/* --- inputs, outputs, run -------------------------------------------------------- */

static etrt_status etrt_exec_io(const etrt_exec_context *c, uint32_t io, const char *call) {
  if (c == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: NULL context", call);
  if (io >= c->io_count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "engine '%s': %s: I/O %u does not exist (%u I/O)", etrt_exec_name(c), call,
                      io, c->io_count);
  return ETRT_OK;
}

etrt_status etrt_exec_context_set_input_shape(etrt_exec_context *c, uint32_t io_index, int32_t rank,
                                              const int64_t *sizes) {
  ETRT_RETURN_IF_ERROR(etrt_exec_io(c, io_index, "set_input_shape"));
  const etrt_engine_io *io = &c->engine->io[io_index];
  if (!io->is_input || io->is_shape_input)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "engine '%s': '%s' is %s, not an input tensor",
                      etrt_exec_name(c), io->name, io->is_input ? "a shape input" : "an output");
  if (rank != io->rank || (rank > 0 && sizes == NULL))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "engine '%s': input '%s' has rank %d, not %d",
                      etrt_exec_name(c), io->name, (int)io->rank, (int)rank);
  for (int32_t a = 0; a < rank; ++a) {
    if (sizes[a] < io->min_sizes[a] || sizes[a] > io->max_sizes[a])
      return etrt_error(
          ETRT_ERROR_INVALID_ARGUMENT,
          "engine '%s': input '%s' axis %d: size %lld is outside its bounds [%lld, %lld]",
          etrt_exec_name(c), io->name, (int)a, (long long)sizes[a], (long long)io->min_sizes[a],
          (long long)io->max_sizes[a]);
  }
  etrt_tensor *t = &c->values[c->graph->inputs[io_index]];
  if (!c->shape_set[io_index] || memcmp(t->dims, sizes, (size_t)rank * sizeof *sizes) != 0) {
    memcpy(t->dims, sizes, (size_t)rank * sizeof *sizes);
    c->shape_set[io_index] = 1;
    c->dirty = 1;
  }
  return ETRT_OK;
}

etrt_status etrt_exec_context_set_input_values(etrt_exec_context *c, uint32_t io_index,
                                               const int64_t *values, int64_t count) {
  ETRT_RETURN_IF_ERROR(etrt_exec_io(c, io_index, "set_input_values"));
  const etrt_engine_io *io = &c->engine->io[io_index];
  if (!io->is_shape_input)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "engine '%s': '%s' is not a shape input",
                      etrt_exec_name(c), io->name);
  if (count != io->value_count || (count > 0 && values == NULL))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "engine '%s': shape input '%s' takes %lld values, not %lld",
                      etrt_exec_name(c), io->name, (long long)io->value_count, (long long)count);
  for (int64_t i = 0; i < count; ++i) {
    if (values[i] < io->min_values[i] || values[i] > io->max_values[i])
      return etrt_error(
          ETRT_ERROR_INVALID_ARGUMENT,
          "engine '%s': shape input '%s' value %lld: %lld is outside its bounds [%lld, %lld]",
          etrt_exec_name(c), io->name, (long long)i, (long long)values[i],
          (long long)io->min_values[i], (long long)io->max_values[i]);
  }
  int32_t id = c->graph->inputs[io_index];
  uint8_t *dst = c->host_block + c->host_offset[id];
  size_t bytes = (size_t)count * sizeof *values;
  if (!c->shape_set[io_index] || (bytes > 0 && memcmp(dst, values, bytes) != 0)) {
    if (bytes > 0) memcpy(dst, values, bytes);
    c->shape_set[io_index] = 1;
    c->dirty = 1;
  }
  return ETRT_OK;
}

etrt_status etrt_exec_context_output_shape(etrt_exec_context *c, uint32_t io_index, int32_t *rank,
                                           int64_t *sizes) {
  ETRT_RETURN_IF_ERROR(etrt_exec_io(c, io_index, "output_shape"));
  if (c->dirty || !c->inferred) ETRT_RETURN_IF_ERROR(etrt_exec_infer(c));
  const etrt_tensor *t = &c->values[etrt_graph_io_value(c->graph, io_index)];
  if (rank != NULL) *rank = t->rank;
  if (sizes != NULL) memcpy(sizes, t->dims, (size_t)t->rank * sizeof *sizes);
  return ETRT_OK;
}

etrt_status etrt_exec_context_set_address(etrt_exec_context *c, uint32_t io_index, void *address) {
  ETRT_RETURN_IF_ERROR(etrt_exec_io(c, io_index, "set_address"));
  if (c->engine->io[io_index].engine_memory)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "engine '%s': output '%s' has no size bound: the engine holds its memory "
                      "(etrt_exec_context_output_memory)",
                      etrt_exec_name(c), c->engine->io[io_index].name);
  if (c->engine->io[io_index].is_shape_input)
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "engine '%s': shape input '%s' is passed by value (etrt_exec_context_set_input_values)",
        etrt_exec_name(c), c->engine->io[io_index].name);
  c->addresses[io_index] = address;
  return ETRT_OK;
}

/* A value with no bound needs more than its buffer holds: a new one, once per larger
 * shape (the old bytes are not kept: the producer is about to write them). */
static etrt_status etrt_exec_grow(void *state, uint32_t value, size_t bytes) {
  etrt_exec_context *c = state;
  size_t rounded = etrt_arena_round((int64_t)bytes);
  void *data = NULL;
  etrt_status s = c->ops->alloc(c->exec, rounded, &data);
  if (s != ETRT_OK)
    return etrt_error_context(s,
                              "engine '%s': value '%s' (%zu bytes, no bound): ", etrt_exec_name(c),
                              c->graph->values[value].name, bytes);
  if (c->values[value].data != NULL) c->ops->free(c->exec, c->values[value].data);
  c->values[value].data = data;
  c->grown_capacity[value] = rounded;
  c->planned_bytes[value] = (int64_t)rounded;
  return ETRT_OK;
}

etrt_status etrt_exec_context_output_memory(etrt_exec_context *c, uint32_t io_index, void **data,
                                            size_t *capacity) {
  ETRT_RETURN_IF_ERROR(etrt_exec_io(c, io_index, "output_memory"));
  const etrt_engine_io *io = &c->engine->io[io_index];
  if (!io->engine_memory)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "engine '%s': '%s' is bound by the caller (etrt_exec_context_set_address)",
                      etrt_exec_name(c), io->name);
  int32_t id = etrt_graph_io_value(c->graph, io_index);
  *data = c->values[id].data;
  if (capacity != NULL) *capacity = c->grown_capacity[id];
  return ETRT_OK;
}

etrt_status etrt_exec_context_enqueue(etrt_exec_context *c, etrt_stream stream) {
  if (c == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "enqueue: NULL context");
  if (c->dirty || !c->inferred) ETRT_RETURN_IF_ERROR(etrt_exec_infer(c));
  for (uint32_t io = 0; io < c->io_count; ++io) {
    const etrt_engine_io *e = &c->engine->io[io];
    if (!e->is_shape_input && !e->engine_memory && c->addresses[io] == NULL)
      return etrt_error(ETRT_ERROR_STATE,
                        "engine '%s': %s '%s' has no address bound (etrt_exec_context_set_address)",
                        etrt_exec_name(c), e->is_input ? "input" : "output", e->name);
  }
  for (uint32_t p = 0; p < c->patch_count; ++p)
    c->args[c->patches[p].arg].data = c->addresses[c->patches[p].io];
  const etrt_graph *g = c->graph;
  etrt_exec_run run = {.engine = c->engine,
                       .nodes = g->nodes,
                       .node_count = g->node_count,
                       .args = c->args,
                       .arg_offsets = c->arg_offsets,
                       .arg_count = c->arg_count,
                       .uploads = c->uploads,
                       .upload_count = c->upload_count,
                       .host_block = c->host_block,
                       .host_block_size = c->host_block_size,
                       .values = c->values,
                       .planned_bytes = c->planned_bytes,
                       .grow = etrt_exec_grow,
                       .grow_state = c,
                       .workspaces = c->workspaces};
  return c->ops->enqueue(c->exec, &run, stream);
}
