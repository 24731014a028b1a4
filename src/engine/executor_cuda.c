/* The CUDA executor (ETRT_EXECUTOR_CUDA); its contract is in executor.h. At
 * creation it resolves every node's CUDA row (refusing, by the check it shares with
 * the sim executor in executor_support.c, a plan with an operation the GPU lacks or
 * does not take, naming it), creates the context's cuBLASLt handle and allocates
 * the workspace, sized for every node at its largest shapes. A run enqueues the shape
 * inputs' uploads and then each node's kernels on the caller's stream, with no
 * allocation and no synchronisation, and records an event that quiesce waits for.
 * A node that shape inference evaluates on the host (Shape -> Gather -> Concat
 * chains, ConstantOfShape, Range) needs no kernel: its outputs' values are known on
 * the host and are uploaded. */
#ifdef ETRT_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "engine/executor.h"
#include "engine/ops/cuda/cuda_ops.h"

typedef struct etrt_cuda_exec {
  etrt_engine *engine;
  const etrt_device_driver *driver;
  const uint8_t *weights;
  const etrt_op_cuda_row **rows; /* per node; NULL: outputs uploaded from the host */
  void *cublaslt;
  void *workspace;
  size_t workspace_size;
  etrt_event done; /* recorded after each run */
  int enqueued;
  /* Index faults (executor.h): the device word the kernels set, sticky across runs
   * until reported; its pinned copy, written after each run; and whether the device
   * word must be cleared before the next run's nodes. */
  uint32_t *fault_device;
  volatile uint32_t *fault_host;
  int fault_clear;
} etrt_cuda_exec;

static void etrt_cuda_exec_destroy(void *state) {
  etrt_cuda_exec *x = state;
  if (x == NULL) return;
  if (x->done != NULL && x->driver->event_destroy(x->done) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': destroying an event: %s", x->engine->info.name,
             etrt_last_error());
  if (x->fault_device != NULL && x->driver->free_device(x->fault_device) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': freeing the fault word: %s", x->engine->info.name,
             etrt_last_error());
  if (x->fault_host != NULL && x->driver->free_pinned((void *)x->fault_host) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': freeing the fault word: %s", x->engine->info.name,
             etrt_last_error());
  if (x->workspace != NULL && x->driver->free_device(x->workspace) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': freeing the workspace: %s", x->engine->info.name,
             etrt_last_error());
  etrt_cuda_blas_destroy(x->cublaslt);
  free(x->rows);
  free(x);
}

/* Resolves the kernels and sizes the workspace. */
static etrt_status etrt_cuda_exec_resolve(etrt_cuda_exec *x) {
  const etrt_graph *g = &x->engine->graph;
  etrt_tensor *args =
      calloc(x->engine->max_node_args > 0 ? x->engine->max_node_args : 1, sizeof *args);
  if (args == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  etrt_status s = ETRT_OK;
  for (uint32_t n = 0; n < g->node_count && s == ETRT_OK; ++n) {
    const etrt_node *node = &g->nodes[n];
    const etrt_op_cuda_row *row = etrt_op_cuda_find(node->op_type);
    int launch = 0;
    s = etrt_executor_cuda_node_check(x->engine, n, row != NULL, args, &launch);
    x->rows[n] = s == ETRT_OK && launch ? row : NULL;
    if (x->rows[n] != NULL && row->workspace != NULL) {
      size_t need = row->workspace(node, args, args + node->num_inputs);
      if (need > x->workspace_size) x->workspace_size = need;
    }
  }
  free(args);
  return s;
}

static etrt_status etrt_cuda_exec_create(etrt_engine *engine, const etrt_device_driver *driver,
                                         void **state) {
  etrt_cuda_exec *x = calloc(1, sizeof *x);
  if (x == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  x->engine = engine;
  x->driver = driver;
  x->rows = calloc(engine->graph.node_count > 0 ? engine->graph.node_count : 1, sizeof *x->rows);
  etrt_status s = x->rows == NULL ? etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory")
                                  : etrt_cuda_exec_resolve(x);
  if (s == ETRT_OK) s = etrt_engine_device_weights(engine, driver, &x->weights);
  if (s == ETRT_OK) s = etrt_cuda_blas_create(&x->cublaslt);
  if (s == ETRT_OK && x->workspace_size > 0) {
    s = driver->malloc_device(x->workspace_size, &x->workspace);
    if (s != ETRT_OK)
      etrt_error_context(s, "engine '%s': %zu bytes of workspace: ", engine->info.name,
                         x->workspace_size);
  }
  if (s == ETRT_OK) s = driver->event_create(&x->done);
  if (s == ETRT_OK) s = driver->malloc_device(sizeof *x->fault_device, (void **)&x->fault_device);
  void *pinned = NULL;
  if (s == ETRT_OK) s = driver->malloc_pinned(sizeof *x->fault_host, &pinned);
  if (s == ETRT_OK) {
    x->fault_host = pinned;
    *x->fault_host = 0;
    x->fault_clear = 1;
  }
  if (s != ETRT_OK) {
    etrt_cuda_exec_destroy(x);
    return s;
  }
  *state = x;
  return ETRT_OK;
}

static const uint8_t *etrt_cuda_exec_weights(void *state) {
  return ((etrt_cuda_exec *)state)->weights;
}

static etrt_status etrt_cuda_exec_alloc(void *state, size_t size, void **out) {
  etrt_cuda_exec *x = state;
  etrt_status s = x->driver->malloc_device(size, out);
  if (s != ETRT_OK)
    return etrt_error_context(s, "engine '%s': %zu bytes of intermediates: ", x->engine->info.name,
                              size);
  return ETRT_OK;
}

static void etrt_cuda_exec_free(void *state, void *ptr) {
  etrt_cuda_exec *x = state;
  if (x->driver->free_device(ptr) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': freeing intermediates: %s", x->engine->info.name,
             etrt_last_error());
}

/* The outputs of a node evaluated on the host, copied to the device. */
static etrt_status etrt_cuda_exec_upload_outputs(etrt_cuda_exec *x, uint32_t n,
                                                 const etrt_node *node, const etrt_tensor *out,
                                                 etrt_stream stream) {
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    size_t bytes = (size_t)etrt_tensor_numel(&out[o]) * etrt_dtype_size(out[o].dtype);
    if (bytes == 0) continue;
    if (out[o].host_value == NULL)
      return etrt_error(ETRT_ERROR_INTERNAL,
                        "engine '%s', node %u '%s' (%s): output %u has no host value to upload",
                        x->engine->info.name, n, node->name, node->op_type, o);
    etrt_status s = x->driver->memcpy_async(out[o].data, out[o].host_value, bytes,
                                            ETRT_COPY_HOST_TO_DEVICE, stream);
    if (s != ETRT_OK)
      return etrt_error_context(s, "engine '%s', node %u '%s' (%s): ", x->engine->info.name, n,
                                node->name, node->op_type);
  }
  return ETRT_OK;
}

/* Reports, once, the index fault of runs that have completed (the caller knows the
 * completion event has been reached, or it is checked here without waiting). */
static etrt_status etrt_cuda_exec_check(void *state) {
  etrt_cuda_exec *x = state;
  if (!x->enqueued || x->fault_host == NULL || x->driver->event_query(x->done) != ETRT_OK)
    return ETRT_OK;
  uint32_t fault = *x->fault_host;
  if (fault == 0) return ETRT_OK;
  /* Every run is complete: no copy in flight can write the host word again. */
  *x->fault_host = 0;
  x->fault_clear = 1;
  const etrt_graph *g = &x->engine->graph;
  uint32_t n = fault - 1;
  if (n >= g->node_count)
    return etrt_error(ETRT_ERROR_INTERNAL, "engine '%s': a kernel reported fault %u",
                      x->engine->info.name, fault);
  const etrt_node *node = &g->nodes[n];
  return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                    "engine '%s', node %u '%s' (%s): an index or length input is out of range",
                    x->engine->info.name, n, node->name != NULL ? node->name : "", node->op_type);
}

static etrt_status etrt_cuda_exec_enqueue(void *state, const etrt_exec_run *run,
                                          etrt_stream stream) {
  etrt_cuda_exec *x = state;
  /* A fault of an earlier run that has finished fails this one, as the sim
   * executor does with an earlier run's error. */
  etrt_status fault = etrt_cuda_exec_check(x);
  if (fault != ETRT_OK) return etrt_error_context(fault, "an earlier run on the stream failed: ");
  if (x->fault_clear) {
    etrt_status s = x->driver->memset_async(x->fault_device, 0, sizeof *x->fault_device, stream);
    if (s != ETRT_OK) return etrt_error_context(s, "engine '%s': enqueue: ", x->engine->info.name);
    x->fault_clear = 0;
  }
  /* Pageable sources are staged by the driver before the call returns, so the
   * context may change its host block afterwards. */
  for (uint32_t u = 0; u < run->upload_count; ++u) {
    if (run->uploads[u].size == 0) continue;
    etrt_status s = x->driver->memcpy_async(run->uploads[u].dst, run->uploads[u].src,
                                            run->uploads[u].size, ETRT_COPY_HOST_TO_DEVICE, stream);
    if (s != ETRT_OK)
      return etrt_error_context(
          s, "engine '%s': uploading shape input values: ", x->engine->info.name);
  }
  etrt_cuda_launch launch = {.stream = stream,
                             .cublaslt = x->cublaslt,
                             .workspace = x->workspace,
                             .workspace_size = x->workspace_size,
                             .precision = x->engine->info.precision,
                             .fault = x->fault_device};
  for (uint32_t n = 0; n < run->node_count; ++n) {
    const etrt_node *node = &run->nodes[n];
    launch.node = n;
    const etrt_op_cuda_row *row = x->rows[n];
    etrt_tensor *in = run->args + run->arg_offsets[n];
    etrt_tensor *out = in + node->num_inputs;
    if (row == NULL) {
      ETRT_RETURN_IF_ERROR(etrt_cuda_exec_upload_outputs(x, n, node, out, stream));
      continue;
    }
    if (row->workspace != NULL) {
      /* Sized at the largest shapes at creation; more would be a bounds error. */
      size_t need = row->workspace(node, in, out);
      if (need > x->workspace_size)
        return etrt_error(ETRT_ERROR_INTERNAL,
                          "engine '%s', node %u '%s' (%s): needs %zu bytes of workspace, the "
                          "context has %zu",
                          x->engine->info.name, n, node->name, node->op_type, need,
                          x->workspace_size);
    }
    etrt_status s = row->run(node, in, out, &launch);
    if (s != ETRT_OK)
      return etrt_error_context(s, "engine '%s', node %u '%s' (%s): ", x->engine->info.name, n,
                                node->name, node->op_type);
  }
  etrt_status s =
      x->driver->memcpy_async((void *)x->fault_host, x->fault_device, sizeof *x->fault_device,
                              ETRT_COPY_DEVICE_TO_HOST, stream);
  if (s == ETRT_OK) s = x->driver->event_record(x->done, stream);
  if (s != ETRT_OK) return etrt_error_context(s, "engine '%s': enqueue: ", x->engine->info.name);
  x->enqueued = 1;
  return ETRT_OK;
}

static etrt_status etrt_cuda_exec_quiesce(void *state) {
  etrt_cuda_exec *x = state;
  if (!x->enqueued) return ETRT_OK;
  etrt_status s = x->driver->event_synchronize(x->done);
  if (s != ETRT_OK)
    return etrt_error_context(s, "engine '%s': waiting for queued runs: ", x->engine->info.name);
  return ETRT_OK;
}

static etrt_event etrt_cuda_exec_completion(void *state) { return ((etrt_cuda_exec *)state)->done; }

const etrt_executor_ops etrt_executor_cuda = {
    .kind = ETRT_EXECUTOR_CUDA,
    .name = "cuda",
    .create = etrt_cuda_exec_create,
    .destroy = etrt_cuda_exec_destroy,
    .weights = etrt_cuda_exec_weights,
    .alloc = etrt_cuda_exec_alloc,
    .free = etrt_cuda_exec_free,
    .enqueue = etrt_cuda_exec_enqueue,
    .quiesce = etrt_cuda_exec_quiesce,
    .completion = etrt_cuda_exec_completion,
    .check = etrt_cuda_exec_check,
};
#else
/* ISO C forbids an empty translation unit. */
typedef int etrt_executor_cuda_unused;
#endif
