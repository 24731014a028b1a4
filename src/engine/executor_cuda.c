/* The CUDA executor (ETRT_EXECUTOR_CUDA); its contract is in executor.h. At
 * creation it resolves every node's CUDA row (refusing, by the check it shares with
 * the sim executor in executor_support.c, a plan with an operation the GPU lacks or
 * does not take, naming it), runs the setup rows of the nodes that keep state per
 * context (cuDNN convolutions: descriptors and the algorithm the plan's tuning record
 * gives where it was made on this GPU, else one chosen by timing the candidates here),
 * creates the context's cuBLASLt handle and allocates the
 * workspace, sized for every node at its largest shapes. A run enqueues the shape
 * inputs' uploads and then each node's kernels on the caller's stream, with no
 * allocation and no synchronisation, and records an event that quiesce waits for.
 * A node that shape inference evaluates on the host (Shape -> Gather -> Concat
 * chains, ConstantOfShape, Range) needs no kernel: its outputs' values are known on
 * the host and are uploaded.
 *
 * CUDA graphs: the node launches of a run are captured once (on the caller's stream,
 * thread-local mode, so a green-context stream's graph keeps its SM partition),
 * instantiated, and replayed with one cudaGraphLaunch while the run's tensors (every
 * address and shape) and host values are those it was captured with. When only
 * addresses changed, the launches are captured again and the instantiated graph is
 * updated in place (cudaGraphExecUpdate) instead of re-instantiated. A few shape sets
 * are kept, least recently used replaced. Live launches remain for what a graph
 * cannot hold: a stream that cannot be captured (the legacy default stream, or one
 * already being captured by the caller, whose graph then takes the launches), runs
 * that upload host-evaluated values between kernels, a capture the runtime refuses
 * (logged once at debug level), and ETRT_CUDA_GRAPHS=0. */
#ifdef ETRT_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "engine/executor.h"
#include "engine/engine_internal.h"
#include "engine/executor_cuda.h"
#include "engine/ops/cuda/cuda_libraries.h"
#include "engine/ops/cuda/cuda_ops.h"
#include "engine/plan_tune.h"

#define ETRT_CUDA_GRAPH_SLOTS 4

/* One instantiated graph and the run it was captured from. */
typedef struct etrt_cuda_graph {
  cudaGraphExec_t exec; /* NULL: a free slot */
  etrt_tensor *args;    /* the run's tensors at capture */
  uint32_t arg_count;
  uint8_t *host; /* the host block's bytes at capture */
  size_t host_size;
  uint64_t used; /* enqueue count at last use, for replacement */
  /* The stream captured on (cudaStreamGetId: never reused, unlike a destroyed stream's
   * handle): kernel nodes keep the capturing stream's context (a green context's SM
   * partition), so another stream is a capture again. */
  unsigned long long stream_id;
} etrt_cuda_graph;

static atomic_ullong etrt_cuda_graph_counts[4];
/* Convolutions that took the plan's recorded choice, and those timed at creation. */
static atomic_ullong etrt_cuda_tuning_counts[2];
static atomic_int etrt_cuda_tuning_mismatch_logged;

typedef struct etrt_cuda_exec {
  etrt_engine *engine;
  const etrt_device_driver *driver;
  const uint8_t *weights;
  const etrt_op_cuda_row **rows; /* per node; NULL: outputs uploaded from the host */
  void *cublaslt;
  void *cudnn;       /* made by the first setup that needs it */
  void **node_state; /* per node: its setup's state, or NULL */
  /* per node: its setup sized its scratch below the row's bound (a recorded cuDNN
   * choice), so the launch does not hold it to that bound */
  uint8_t *setup_sized;
  int run_setups; /* resolve runs the setup rows (not for the workspace bound) */
  void *workspace;
  size_t workspace_size;
  etrt_event done; /* recorded after each run */
  int enqueued;
  int graphs;      /* graphs allowed: ETRT_CUDA_GRAPHS is not 0, no capture refused */
  int host_upload; /* a node's outputs are uploaded from the host between kernels */
  uint64_t runs;
  etrt_cuda_graph graph[ETRT_CUDA_GRAPH_SLOTS];
  /* Index faults (executor.h): the device word the kernels set, sticky across runs
   * until reported; its pinned copy, written after each run; and whether the device
   * word must be cleared before the next run's nodes. */
  uint32_t *fault_device;
  volatile uint32_t *fault_host;
  int fault_clear;
} etrt_cuda_exec;

void etrt_executor_cuda_tuning_counters(etrt_cuda_tuning_counters *out) {
  out->recorded = atomic_load(&etrt_cuda_tuning_counts[0]);
  out->timed = atomic_load(&etrt_cuda_tuning_counts[1]);
}

void etrt_executor_cuda_graph_counters(etrt_cuda_graph_counters *out) {
  out->captures = atomic_load(&etrt_cuda_graph_counts[0]);
  out->instantiations = atomic_load(&etrt_cuda_graph_counts[1]);
  out->updates = atomic_load(&etrt_cuda_graph_counts[2]);
  out->replays = atomic_load(&etrt_cuda_graph_counts[3]);
}

static void etrt_cuda_graph_clear(etrt_cuda_exec *x, etrt_cuda_graph *g) {
  if (g->exec != NULL) {
    cudaError_t e = cudaGraphExecDestroy(g->exec);
    if (e != cudaSuccess)
      etrt_log(ETRT_LOG_ERROR, "engine '%s': destroying a CUDA graph: %s", x->engine->info.name,
               cudaGetErrorString(e));
  }
  free(g->args);
  free(g->host);
  memset(g, 0, sizeof *g);
}

static void etrt_cuda_exec_destroy(void *state) {
  etrt_cuda_exec *x = state;
  if (x == NULL) return;
  for (int i = 0; i < ETRT_CUDA_GRAPH_SLOTS; ++i) etrt_cuda_graph_clear(x, &x->graph[i]);
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
  if (x->node_state != NULL) {
    for (uint32_t n = 0; n < x->engine->graph.node_count; ++n) {
      if (x->node_state[n] == NULL) continue;
      const etrt_op_cuda_setup_row *setup =
          etrt_op_cuda_setup_find(x->engine->graph.nodes[n].op_type);
      if (setup != NULL) setup->release(x->node_state[n]);
    }
  }
  etrt_cuda_dnn_destroy(x->cudnn);
  etrt_cuda_blas_destroy(x->cublaslt);
  free(x->node_state);
  free(x->setup_sized);
  free(x->rows);
  free(x);
}

/* The plan's tuning record where it was timed on this GPU under this cuDNN major
 * version, else NULL (a mismatch logged once per process at info level: the
 * convolutions are then timed as for a plan without a record). */
static const etrt_plan_tuning *etrt_cuda_exec_record(etrt_cuda_exec *x) {
  const etrt_plan_tuning *t = &x->engine->info.tuning;
  if (!t->present) return NULL;
  etrt_device_attributes a;
  if (x->driver->attributes(x->engine->info.device.index, &a) != ETRT_OK) {
    etrt_clear_error();
    return NULL;
  }
  uint32_t version = etrt_cuda_cudnn_version();
  if (etrt_plan_tuning_matches(t, a.name, a.compute_major, a.compute_minor, version)) return t;
  if (atomic_exchange(&etrt_cuda_tuning_mismatch_logged, 1) == 0)
    etrt_log(ETRT_LOG_INFO,
             "engine '%s': convolutions tuned for %s (sm_%d%d, cuDNN %u) run on %s (sm_%d%d, "
             "cuDNN %u): timing them here instead",
             x->engine->info.name, t->gpu, t->compute_major, t->compute_minor, t->cudnn_version,
             a.name, a.compute_major, a.compute_minor, version);
  return NULL;
}

/* Resolves the kernels, runs the setup rows (using the plan's recorded convolution
 * choices, or in tuning mode leaving the timed ones in the engine's sink) and sizes
 * the workspace. */
static etrt_status etrt_cuda_exec_resolve(etrt_cuda_exec *x) {
  const etrt_graph *g = &x->engine->graph;
  etrt_tensor *args =
      calloc(x->engine->max_node_args > 0 ? x->engine->max_node_args : 1, sizeof *args);
  if (args == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  etrt_status s = ETRT_OK;
  etrt_plan_tuning_sink *sink = x->run_setups ? x->engine->tuning_sink : NULL;
  const etrt_plan_tuning *record = x->run_setups && sink == NULL ? etrt_cuda_exec_record(x) : NULL;
  etrt_plan_conv_choice tuned;
  etrt_cuda_launch setup_launch = {
      .precision = x->engine->info.precision, .tune = sink != NULL, .tuned = &tuned};
  if (sink != NULL) sink->cudnn_version = etrt_cuda_cudnn_version();
  for (uint32_t n = 0; n < g->node_count && s == ETRT_OK; ++n) {
    const etrt_node *node = &g->nodes[n];
    const etrt_op_cuda_row *row = etrt_op_cuda_find(node->op_type);
    int launch = 0;
    s = etrt_executor_cuda_node_check(x->engine, n, row != NULL, args, &launch);
    x->rows[n] = s == ETRT_OK && launch ? row : NULL;
    if (s == ETRT_OK && !launch) {
      /* Values known on the host only at run time would have to be copied inside the
       * graph from pageable memory, which capture refuses. */
      for (uint32_t o = 0; o < node->num_outputs; ++o)
        if (etrt_tensor_numel(&args[node->num_inputs + o]) > 0) x->host_upload = 1;
    }
    size_t need = 0;
    if (x->rows[n] != NULL && row->workspace != NULL)
      need = row->workspace(node, args, args + node->num_inputs);
    const etrt_op_cuda_setup_row *setup =
        x->run_setups && x->rows[n] != NULL ? etrt_op_cuda_setup_find(node->op_type) : NULL;
    if (setup != NULL) {
      setup_launch.node = n;
      setup_launch.recorded = etrt_plan_tuning_find(record, n);
      setup_launch.workspace_size = need;
      setup_launch.tuned_set = 0;
      s = setup->setup(node, args, args + node->num_inputs, &setup_launch, &x->node_state[n]);
      if (s != ETRT_OK)
        etrt_error_context(s, "engine '%s', node %u '%s' (%s): ", x->engine->info.name, n,
                           node->name, node->op_type);
      if (s == ETRT_OK && setup_launch.workspace_size < need) {
        need = setup_launch.workspace_size;
        x->setup_sized[n] = 1;
      }
      if (s == ETRT_OK && sink != NULL && setup_launch.tuned_set) {
        tuned.node = n;
        sink->choices[sink->count++] = tuned;
      }
    }
    if (need > x->workspace_size) x->workspace_size = need;
  }
  x->cudnn = setup_launch.cudnn;
  atomic_fetch_add(&etrt_cuda_tuning_counts[0], setup_launch.recorded_used);
  atomic_fetch_add(&etrt_cuda_tuning_counts[1], setup_launch.timed);
  free(args);
  return s;
}

etrt_status etrt_executor_cuda_workspace_bound(etrt_engine *engine, size_t *bytes) {
  etrt_cuda_exec x = {.engine = engine};
  x.rows = calloc(engine->graph.node_count > 0 ? engine->graph.node_count : 1, sizeof *x.rows);
  if (x.rows == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  etrt_status s = etrt_cuda_exec_resolve(&x);
  free(x.rows);
  *bytes = x.workspace_size;
  return s;
}

static etrt_status etrt_cuda_exec_create(etrt_engine *engine, const etrt_device_driver *driver,
                                         void **state) {
  etrt_cuda_exec *x = calloc(1, sizeof *x);
  if (x == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  x->engine = engine;
  x->driver = driver;
  const char *env = getenv("ETRT_CUDA_GRAPHS");
  x->graphs = env == NULL || strcmp(env, "0") != 0;
  x->rows = calloc(engine->graph.node_count > 0 ? engine->graph.node_count : 1, sizeof *x->rows);
  x->node_state =
      calloc(engine->graph.node_count > 0 ? engine->graph.node_count : 1, sizeof *x->node_state);
  x->setup_sized = calloc(engine->graph.node_count > 0 ? engine->graph.node_count : 1, 1);
  x->run_setups = 1;
  etrt_status s = x->rows == NULL || x->node_state == NULL || x->setup_sized == NULL
                      ? etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory")
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

/* Every node's kernels (or uploads) on `stream`, in order. */
static etrt_status etrt_cuda_exec_launch(etrt_cuda_exec *x, const etrt_exec_run *run,
                                         etrt_stream stream) {
  etrt_cuda_launch launch = {.stream = stream,
                             .cublaslt = x->cublaslt,
                             .workspace = x->workspace,
                             .workspace_size = x->workspace_size,
                             .precision = x->engine->info.precision,
                             .fault = x->fault_device,
                             .cudnn = x->cudnn,
                             .node_state = x->node_state};
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
    if (row->workspace != NULL && !x->setup_sized[n]) {
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
  return ETRT_OK;
}

/* The tensors' dtypes and shapes are the same (addresses may differ). */
static int etrt_cuda_graph_same_shapes(const etrt_cuda_graph *g, const etrt_exec_run *run) {
  if (g->arg_count != run->arg_count || g->host_size != run->host_block_size) return 0;
  for (uint32_t a = 0; a < run->arg_count; ++a) {
    const etrt_tensor *p = &g->args[a], *q = &run->args[a];
    if (p->dtype != q->dtype || p->rank != q->rank ||
        memcmp(p->dims, q->dims, (size_t)p->rank * sizeof p->dims[0]) != 0)
      return 0;
  }
  /* Host values (shape tensors) decide kernel parameters that shapes may not show. */
  return g->host_size == 0 || memcmp(g->host, run->host_block, g->host_size) == 0;
}

/* Everything a kernel's parameters are made of is what the graph was captured with. */
static int etrt_cuda_graph_same_run(const etrt_cuda_graph *g, const etrt_exec_run *run,
                                    unsigned long long stream_id) {
  return g->exec != NULL && g->stream_id == stream_id && g->arg_count == run->arg_count &&
         memcmp(g->args, run->args, (size_t)run->arg_count * sizeof *run->args) == 0 &&
         g->host_size == run->host_block_size &&
         (g->host_size == 0 || memcmp(g->host, run->host_block, g->host_size) == 0);
}

/* Graphs are abandoned for this context (the runs go on with live launches). */
static void etrt_cuda_graph_refuse(etrt_cuda_exec *x, const char *what, cudaError_t e) {
  etrt_log(ETRT_LOG_DEBUG, "engine '%s': CUDA graphs off for this context: %s: %s",
           x->engine->info.name, what, cudaGetErrorString(e));
  (void)cudaGetLastError();
  x->graphs = 0;
}

/* Captures the run's launches into *graph. ETRT_OK with *graph NULL: the runtime
 * refused the capture (graphs are then off); an error: a launcher failed. */
static etrt_status etrt_cuda_graph_capture(etrt_cuda_exec *x, const etrt_exec_run *run,
                                           etrt_stream stream, cudaGraph_t *graph) {
  *graph = NULL;
  cudaError_t e = cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    etrt_cuda_graph_refuse(x, "beginning a capture", e);
    return ETRT_OK;
  }
  etrt_status s = etrt_cuda_exec_launch(x, run, stream);
  e = cudaStreamEndCapture((cudaStream_t)stream, graph);
  if (s == ETRT_OK && e != cudaSuccess) etrt_cuda_graph_refuse(x, "capturing the launches", e);
  if (s != ETRT_OK || e != cudaSuccess) {
    if (*graph != NULL) cudaGraphDestroy(*graph);
    *graph = NULL;
    (void)cudaGetLastError();
    if (s != ETRT_OK && x->graphs) {
      /* A launcher may fail only because it was captured: try it live once. */
      etrt_cuda_graph_refuse(x, "a launch under capture failed", cudaErrorStreamCaptureUnsupported);
      return ETRT_OK;
    }
    return s;
  }
  atomic_fetch_add(&etrt_cuda_graph_counts[0], 1);
  return ETRT_OK;
}

/* Remembers the run `g` now holds. */
static etrt_status etrt_cuda_graph_keep(etrt_cuda_graph *g, const etrt_exec_run *run) {
  if (g->args == NULL || g->arg_count != run->arg_count) {
    free(g->args);
    g->args = malloc((run->arg_count > 0 ? run->arg_count : 1) * sizeof *g->args);
    g->arg_count = g->args != NULL ? run->arg_count : 0;
  }
  if (g->host == NULL || g->host_size != run->host_block_size) {
    free(g->host);
    g->host = malloc(run->host_block_size > 0 ? run->host_block_size : 1);
    g->host_size = g->host != NULL ? run->host_block_size : 0;
  }
  if (g->args == NULL || g->host == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  memcpy(g->args, run->args, (size_t)run->arg_count * sizeof *run->args);
  if (run->host_block_size > 0) memcpy(g->host, run->host_block, run->host_block_size);
  return ETRT_OK;
}

/* The instantiated graph for this run, capturing (and instantiating or updating) when
 * none matches; NULL when graphs went off. */
static etrt_status etrt_cuda_graph_find(etrt_cuda_exec *x, const etrt_exec_run *run,
                                        etrt_stream stream, unsigned long long stream_id,
                                        etrt_cuda_graph **out) {
  *out = NULL;
  etrt_cuda_graph *same_shapes = NULL, *victim = &x->graph[0];
  for (int i = 0; i < ETRT_CUDA_GRAPH_SLOTS; ++i) {
    etrt_cuda_graph *g = &x->graph[i];
    if (etrt_cuda_graph_same_run(g, run, stream_id)) {
      *out = g;
      return ETRT_OK;
    }
    /* Only a graph captured on this stream is updated: kernel nodes keep the context
     * of their capture, and an update may not move them to another (green) one. */
    if (g->exec != NULL && same_shapes == NULL && g->stream_id == stream_id &&
        etrt_cuda_graph_same_shapes(g, run))
      same_shapes = g;
    if (victim->exec != NULL && (g->exec == NULL || g->used < victim->used)) victim = g;
  }
  cudaGraph_t graph = NULL;
  ETRT_RETURN_IF_ERROR(etrt_cuda_graph_capture(x, run, stream, &graph));
  if (graph == NULL) return ETRT_OK;
  etrt_cuda_graph *g = same_shapes;
  if (g != NULL) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(g->exec, graph, &info) == cudaSuccess) {
      atomic_fetch_add(&etrt_cuda_graph_counts[2], 1);
    } else {
      (void)cudaGetLastError();
      g = NULL; /* the topology changed (another algorithm, say): instantiate anew */
    }
  }
  if (g == NULL) {
    g = same_shapes != NULL ? same_shapes : victim;
    if (g->exec != NULL) {
      /* Its last launch may still be in flight. */
      etrt_status s = x->enqueued ? x->driver->event_synchronize(x->done) : ETRT_OK;
      if (s != ETRT_OK) {
        cudaGraphDestroy(graph);
        return etrt_error_context(s, "engine '%s': replacing a CUDA graph: ", x->engine->info.name);
      }
      etrt_cuda_graph_clear(x, g);
    }
    cudaError_t e = cudaGraphInstantiate(&g->exec, graph, 0);
    if (e != cudaSuccess) {
      g->exec = NULL;
      cudaGraphDestroy(graph);
      etrt_cuda_graph_refuse(x, "instantiating", e);
      return ETRT_OK;
    }
    atomic_fetch_add(&etrt_cuda_graph_counts[1], 1);
  }
  cudaGraphDestroy(graph);
  etrt_status s = etrt_cuda_graph_keep(g, run);
  g->stream_id = stream_id;
  if (s != ETRT_OK) {
    etrt_cuda_graph_clear(x, g);
    return s;
  }
  *out = g;
  return ETRT_OK;
}

/* Whether this run may go through a graph on `stream`, and the stream's id. */
static int etrt_cuda_graph_usable(etrt_cuda_exec *x, etrt_stream stream,
                                  unsigned long long *stream_id) {
  if (!x->graphs || x->host_upload || stream == NULL) return 0;
  enum cudaStreamCaptureStatus status;
  if (cudaStreamIsCapturing((cudaStream_t)stream, &status) != cudaSuccess ||
      cudaStreamGetId((cudaStream_t)stream, stream_id) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  /* The caller's own capture takes the launches as they are. */
  return status == cudaStreamCaptureStatusNone;
}

static etrt_status etrt_cuda_exec_enqueue(void *state, const etrt_exec_run *run,
                                          etrt_stream stream) {
  etrt_cuda_exec *x = state;
  /* A fault of an earlier run that has finished fails this one, as the sim
   * executor does with an earlier run's error. The fault word is cleared and read
   * back outside the launches, so a replayed graph never holds either. */
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
  ++x->runs;
  etrt_cuda_graph *g = NULL;
  unsigned long long stream_id = 0;
  if (etrt_cuda_graph_usable(x, stream, &stream_id))
    ETRT_RETURN_IF_ERROR(etrt_cuda_graph_find(x, run, stream, stream_id, &g));
  if (g != NULL) {
    g->used = x->runs;
    cudaError_t e = cudaGraphLaunch(g->exec, (cudaStream_t)stream);
    if (e != cudaSuccess)
      return etrt_error(ETRT_ERROR_DEVICE, "engine '%s': launching its CUDA graph: %s",
                        x->engine->info.name, cudaGetErrorString(e));
    atomic_fetch_add(&etrt_cuda_graph_counts[3], 1);
  } else {
    ETRT_RETURN_IF_ERROR(etrt_cuda_exec_launch(x, run, stream));
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
#include <string.h>

#include "engine/executor_cuda.h"

void etrt_executor_cuda_graph_counters(etrt_cuda_graph_counters *out) {
  memset(out, 0, sizeof *out);
}

void etrt_executor_cuda_tuning_counters(etrt_cuda_tuning_counters *out) {
  memset(out, 0, sizeof *out);
}
#endif
