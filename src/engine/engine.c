/* An engine: a verified plan with its operations resolved, their states prepared once,
 * and what shape inference needs on the host worked out once. Immutable afterwards,
 * so contexts on any threads share it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "device/device_scope.h"
#include "engine/bounds.h"
#include "engine/plan_format.h"
#include "engine/engine_internal.h"
#include "engine/executor_cuda.h"

static etrt_status etrt_engine_node_error(etrt_status s, const etrt_engine *engine,
                                          const size_t *offsets, uint32_t n) {
  char label[192];
  etrt_graph_node_label(&engine->graph, n, label, sizeof label);
  return etrt_error_context(s, "plan: %s at byte offset %zu: ", label, offsets[n]);
}

/* Prepares every node's state, and checks that inference at the I/O bounds gives the
 * dtypes, ranks and bounds the plan records. */
static etrt_status etrt_engine_prepare(etrt_engine *engine, const size_t *offsets) {
  etrt_graph *g = &engine->graph;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    etrt_node *node = &g->nodes[n];
    uint32_t args = node->num_inputs + node->num_outputs;
    if (args > engine->max_node_args) engine->max_node_args = args;
    if (node->def->state_size > 0) {
      node->state = etrt_arena_alloc(&g->arena, node->def->state_size, 64);
      if (node->state == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
    }
    etrt_status checked = etrt_op_check_layout(node);
    if (checked != ETRT_OK) return etrt_engine_node_error(checked, engine, offsets, n);
    if (node->def->prepare != NULL) {
      etrt_status s = node->def->prepare(node, node->state);
      if (s != ETRT_OK) return etrt_engine_node_error(s, engine, offsets, n);
    }
  }
  etrt_bounds_host *host = calloc(g->value_count > 0 ? g->value_count : 1, sizeof *host);
  etrt_tensor *scratch = calloc((size_t)engine->max_node_args * 2 + 1, sizeof *scratch);
  etrt_arena arena;
  etrt_arena_init(&arena);
  etrt_status s = host != NULL && scratch != NULL
                      ? ETRT_OK
                      : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  for (uint32_t v = 0; v < g->value_count && s == ETRT_OK; ++v)
    etrt_bounds_host_init(g, v, &host[v]);
  for (uint32_t n = 0; n < g->node_count && s == ETRT_OK; ++n) {
    s = etrt_bounds_infer_node(g, n, host, &arena, 0, scratch);
    if (s != ETRT_OK) s = etrt_engine_node_error(s, engine, offsets, n);
  }
  etrt_arena_release(&arena);
  free(host);
  free(scratch);
  /* Only values with no bound (their memory grown at execute) may have no planned size. */
  for (uint32_t v = 0; v < g->value_count && s == ETRT_OK; ++v) {
    const etrt_graph_value *gv = &g->values[v];
    if (!etrt_graph_value_unbounded(gv) && etrt_graph_nbytes(gv->dtype, gv->rank, gv->max_dims) < 0)
      s = etrt_error(ETRT_ERROR_INVALID_FORMAT,
                     "plan: value %u '%s': the size of its max dims overflows", v, gv->name);
  }
  return s;
}

/* Which values shape inference needs on the host, walking back from the value inputs
 * of nodes: a needed value made by a node makes that node evaluated on the host, and
 * every input it reads needed in turn. The bounds check has already proven that each
 * chain ends in constants and shape inputs within the size limit. */
static etrt_status etrt_engine_host_analysis(etrt_engine *engine) {
  etrt_graph *g = &engine->graph;
  engine->host_needed = calloc(g->value_count > 0 ? g->value_count : 1, 1);
  engine->host_evaluated = calloc(g->node_count > 0 ? g->node_count : 1, 1);
  if (engine->host_needed == NULL || engine->host_evaluated == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  for (uint32_t n = g->node_count; n-- > 0;) {
    const etrt_node *node = &g->nodes[n];
    int evaluated = 0;
    for (uint32_t o = 0; o < node->num_outputs; ++o)
      evaluated |= engine->host_needed[node->outputs[o]];
    if (evaluated) {
      engine->host_evaluated[n] = 1;
      for (uint32_t o = 0; o < node->num_outputs; ++o) engine->host_needed[node->outputs[o]] = 1;
    }
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      int32_t id = node->inputs[i];
      if (id < 0) continue;
      int value_input = i < 32 && (node->def->value_inputs & (1u << i));
      int dims_only = i < 32 && (node->def->dims_only_inputs & (1u << i));
      /* A bounded node's unknown value inputs are read by its kernel at execute. */
      const etrt_graph_value *v = &g->values[id];
      if (node->dims_at_execute == ETRT_NODE_DIMS_BOUNDED && v->kind != ETRT_VALUE_KIND_CONSTANT &&
          !v->is_shape_input && !v->host_computable)
        value_input = 0;
      if (value_input || (evaluated && !dims_only)) engine->host_needed[id] = 1;
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_engine_io_table(etrt_engine *engine) {
  const etrt_graph *g = &engine->graph;
  uint32_t count = etrt_graph_io_count(g);
  engine->io = calloc(count > 0 ? count : 1, sizeof *engine->io);
  if (engine->io == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  for (uint32_t i = 0; i < count; ++i) {
    const etrt_graph_value *v = &g->values[etrt_graph_io_value(g, i)];
    etrt_engine_io *io = &engine->io[i];
    io->name = v->name;
    io->is_input = i < g->input_count;
    io->is_shape_input = v->is_shape_input;
    io->dims_at_execute = !io->is_input && v->dims_at_execute;
    io->engine_memory = !io->is_input && etrt_graph_value_unbounded(v);
    io->dtype = v->dtype;
    io->rank = v->rank;
    memcpy(io->min_sizes, v->min_dims, sizeof io->min_sizes);
    memcpy(io->max_sizes, v->max_dims, sizeof io->max_sizes);
    if (v->is_shape_input) {
      io->value_count = etrt_graph_shape_input_count(v);
      io->min_values = v->min_values;
      io->max_values = v->max_values;
    }
  }
  return ETRT_OK;
}

etrt_status etrt_engine_deserialize(const void *plan, size_t size, etrt_engine **out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "engine: NULL out");
  *out = NULL;
  etrt_engine *engine = calloc(1, sizeof *engine);
  if (engine == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  etrt_graph_init(&engine->graph);
  pthread_mutex_init(&engine->device_lock, NULL);
  size_t *offsets = NULL;
  etrt_status s = etrt_plan_parse(plan, size, &engine->info, &engine->graph, &offsets);
  if (s == ETRT_OK) s = etrt_engine_prepare(engine, offsets);
  if (s == ETRT_OK) s = etrt_engine_host_analysis(engine);
  if (s == ETRT_OK) s = etrt_engine_io_table(engine);
  free(offsets);
  if (s != ETRT_OK) {
    etrt_engine_destroy(engine);
    return s;
  }
  engine->weights = engine->info.weights;
  engine->weights_size = (size_t)engine->info.weights_size;
  *out = engine;
  return ETRT_OK;
}

void etrt_engine_destroy(etrt_engine *engine) {
  if (engine == NULL) return;
  if (engine->device_weights != NULL) {
    /* Contract rule 2: freed on the engine's device, the caller's put back. A failed
     * switch still frees (device pointers are freed whichever device is current). */
    const etrt_device_driver *d = engine->device_driver;
    etrt_device_scope scope;
    (void)etrt_device_scope_enter(d, engine->info.device.index, &scope);
    (void)etrt_device_scope_exit(&scope, d->free_device(engine->device_weights));
  }
  pthread_mutex_destroy(&engine->device_lock);
  free(engine->io);
  free(engine->host_needed);
  free(engine->host_evaluated);
  etrt_graph_release(&engine->graph);
  free(engine);
}

etrt_status etrt_engine_device_weights(etrt_engine *engine, const etrt_device_driver *driver,
                                       const uint8_t **out) {
  pthread_mutex_lock(&engine->device_lock);
  etrt_status s = ETRT_OK;
  if (engine->device_weights != NULL) {
    if (driver != engine->device_driver)
      s = etrt_error(ETRT_ERROR_STATE, "engine '%s': its weights are on the '%s' driver, not '%s'",
                     engine->info.name, engine->device_driver->name, driver->name);
  } else {
    /* One allocation, one copy on a private stream, waited for: the weights are
     * ready before any context can enqueue. */
    void *device = NULL;
    etrt_stream stream = NULL;
    size_t size = engine->weights_size > 0 ? engine->weights_size : 1;
    s = driver->malloc_device(size, &device);
    if (s == ETRT_OK) s = driver->stream_create(&stream);
    if (s == ETRT_OK && engine->weights_size > 0)
      s = driver->memcpy_async(device, engine->weights, engine->weights_size,
                               ETRT_COPY_HOST_TO_DEVICE, stream);
    if (s == ETRT_OK) s = driver->stream_synchronize(stream);
    etrt_error_keep keep = etrt_error_keep_first(s); /* cleanup keeps the first message */
    if (stream != NULL) (void)driver->stream_destroy(stream);
    if (s != ETRT_OK && device != NULL) (void)driver->free_device(device);
    etrt_error_keep_end(keep);
    if (s == ETRT_OK) {
      engine->device_weights = device;
      engine->device_driver = driver;
    } else {
      etrt_error_context(s, "engine '%s': uploading %zu bytes of weights: ", engine->info.name,
                         engine->weights_size);
    }
  }
  if (s == ETRT_OK) *out = engine->device_weights;
  pthread_mutex_unlock(&engine->device_lock);
  return s;
}

etrt_device etrt_engine_device(const etrt_engine *engine) { return engine->info.device; }

void etrt_engine_compute_capability(const etrt_engine *engine, int *major, int *minor) {
  if (major != NULL) *major = engine->info.compute_major;
  if (minor != NULL) *minor = engine->info.compute_minor;
}

const char *etrt_engine_name(const etrt_engine *engine) { return engine->info.name; }

etrt_precision etrt_engine_precision(const etrt_engine *engine) { return engine->info.precision; }

etrt_status etrt_engine_memory_peak(etrt_engine *engine, etrt_engine_memory *out) {
  memset(out, 0, sizeof *out);
  out->weights = engine->weights_size;
  /* A host context plans the same arena with the same planner; its memory is
   * reserved, never touched. */
  etrt_exec_context *context = NULL;
  ETRT_RETURN_IF_ERROR(etrt_exec_context_create(engine, NULL, &context));
  out->intermediates = etrt_exec_context_arena_size(context);
  etrt_exec_context_destroy(context);
  /* Only CUDA plans have a workspace, and only a CUDA build can size it. */
  out->workspace_known = engine->info.device.type != ETRT_DEVICE_CUDA;
#ifdef ETRT_HAVE_CUDA
  if (engine->info.device.type == ETRT_DEVICE_CUDA) {
    size_t workspace = 0;
    ETRT_RETURN_IF_ERROR(etrt_executor_cuda_workspace_bound(engine, &workspace));
    out->workspace = workspace;
    out->workspace_known = 1;
  }
#endif
  out->total = out->weights + out->intermediates + out->workspace;
  return ETRT_OK;
}

/* The engine of a delegate payload that is an etrt plan; NULL for anything else. */
static etrt_engine *etrt_engine_plan_open(const void *plan, size_t size) {
  etrt_engine *engine = NULL;
  if (size < sizeof ETRT_PLAN_MAGIC - 1 ||
      memcmp(plan, ETRT_PLAN_MAGIC, sizeof ETRT_PLAN_MAGIC - 1))
    return NULL;
  if (etrt_engine_deserialize(plan, size, &engine) != ETRT_OK) return NULL;
  return engine;
}

int etrt_engine_plan_memory(const void *plan, size_t size, etrt_engine_memory *out) {
  etrt_engine *engine = etrt_engine_plan_open(plan, size);
  if (engine == NULL) return 0;
  int known = etrt_engine_memory_peak(engine, out) == ETRT_OK;
  etrt_engine_destroy(engine);
  return known;
}

/* 0, 1, 2 for float32, float16, bfloat16; -1 for the other types. */
static int etrt_engine_float_slot(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_FLOAT32    ? 0
         : dtype == ETRT_DTYPE_FLOAT16  ? 1
         : dtype == ETRT_DTYPE_BFLOAT16 ? 2
                                        : -1;
}

int etrt_engine_plan_types(const void *plan, size_t size, etrt_engine_types *out) {
  memset(out, 0, sizeof *out);
  etrt_engine *engine = etrt_engine_plan_open(plan, size);
  if (engine == NULL) return 0;
  const etrt_graph *g = &engine->graph;
  out->precision = engine->info.precision;
  const etrt_plan_tuning *tuning = &engine->info.tuning;
  if (tuning->present) {
    out->tuned = 1;
    snprintf(out->tuned_gpu, sizeof out->tuned_gpu, "%s", tuning->gpu);
    out->tuned_major = tuning->compute_major;
    out->tuned_minor = tuning->compute_minor;
    out->tuned_cudnn = tuning->cudnn_version;
    out->tuned_convolutions = tuning->count;
  }
  for (uint32_t v = 0; v < g->value_count; ++v) {
    const etrt_graph_value *value = &g->values[v];
    int slot = etrt_engine_float_slot(value->dtype);
    if (slot < 0) continue;
    if (value->kind == ETRT_VALUE_KIND_CONSTANT)
      out->weight_bytes[slot] += value->nbytes;
    else
      ++out->values[slot];
  }
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    if (strcmp(node->op_type, "Cast") != 0 || node->num_inputs < 1 || node->inputs[0] < 0) continue;
    const etrt_graph_value *from = &g->values[node->inputs[0]], *to = &g->values[node->outputs[0]];
    if (etrt_engine_float_slot(from->dtype) < 0 || etrt_engine_float_slot(to->dtype) < 0 ||
        from->dtype == to->dtype)
      continue;
    ++out->float_casts;
    out->edge_casts += from->kind == ETRT_VALUE_KIND_INPUT || to->kind == ETRT_VALUE_KIND_OUTPUT;
  }
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const etrt_node *node = &g->nodes[n];
    out->channels_last_nodes += etrt_node_attribute_int(node, "channels_last", 0) == 1;
    const etrt_attribute *perm = etrt_node_attribute(node, "perm");
    if (strcmp(node->op_type, "Transpose") != 0 || perm == NULL || perm->count != 4) continue;
    static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    out->layout_conversions += memcmp(perm->ints, to_nhwc, sizeof to_nhwc) == 0 ||
                               memcmp(perm->ints, to_nchw, sizeof to_nchw) == 0;
  }
  etrt_engine_destroy(engine);
  return 1;
}

int etrt_engine_plan_channels_last(const void *plan, size_t size, char *text, size_t text_size) {
  if (text_size > 0) text[0] = '\0';
  etrt_engine *engine = etrt_engine_plan_open(plan, size);
  if (engine == NULL) return 0;
  const etrt_graph *g = &engine->graph;
  size_t used = 0;
  for (uint32_t n = 0; n < g->node_count && text_size > 0; ++n) {
    const etrt_node *node = &g->nodes[n];
    if (etrt_node_attribute_int(node, "channels_last", 0) != 1) continue;
    int w = snprintf(text + used, text_size - used, "%s%s", used ? ", " : "", node->name);
    if (w < 0 || (size_t)w >= text_size - used) {
      if (text_size >= 4) memcpy(text + text_size - 4, "...", 4);
      break;
    }
    used += (size_t)w;
  }
  etrt_engine_destroy(engine);
  return 1;
}

uint32_t etrt_engine_io_count(const etrt_engine *engine) {
  return etrt_graph_io_count(&engine->graph);
}

const etrt_engine_io *etrt_engine_io_at(const etrt_engine *engine, uint32_t index) {
  return index < etrt_engine_io_count(engine) ? &engine->io[index] : NULL;
}

int32_t etrt_engine_io_find(const etrt_engine *engine, const char *name) {
  if (name == NULL) return -1;
  for (uint32_t i = 0; i < etrt_engine_io_count(engine); ++i) {
    if (strcmp(engine->io[i].name, name) == 0) return (int32_t)i;
  }
  return -1;
}
