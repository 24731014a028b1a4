/* The sim executor (ETRT_EXECUTOR_CPU_ON_SIM): a CUDA plan on a simulated device. The
 * intermediates and weights are simulated device memory; a run is ONE host function
 * queued on the caller's stream, which runs the CPU kernels on that memory when the
 * stream is synchronised. A caller that forgets to synchronise reads stale outputs,
 * exactly as on a GPU. It runs only the plans the CUDA executor would run: at
 * creation every node passes the CUDA executor's check (executor_support.c), by the
 * definitions' cuda_supports, compiled in every build.
 *
 * Everything the run reads from the context (argument tensors, shape inputs' values,
 * host values) is copied into a snapshot at enqueue, because the caller may change
 * shapes and bindings before the stream gets there. Snapshots are pooled: a context
 * allocates only when more runs are in flight than ever before. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/log.h"
#include "base/status.h"
#include "engine/executor.h"

typedef struct etrt_sim_exec etrt_sim_exec;

typedef struct etrt_sim_snapshot {
  struct etrt_sim_snapshot *next; /* in the free list */
  etrt_sim_exec *exec;
  size_t capacity; /* bytes of storage after the struct */
  etrt_exec_run run;
} etrt_sim_snapshot;

struct etrt_sim_exec {
  etrt_engine *engine;
  const etrt_device_driver *driver;
  const uint8_t *weights;
  pthread_mutex_t lock;
  etrt_sim_snapshot *free_list;
  long in_flight;
  etrt_stream last_stream;
  etrt_event done;    /* recorded after each run, as the CUDA executor does */
  etrt_status failed; /* the first failure of a run, reported by the next enqueue */
  char message[512];
};

#define ETRT_SIM_SNAPSHOT_HEADER etrt_align_up(sizeof(etrt_sim_snapshot), 64)

/* Refuses what the CUDA executor would refuse: a node whose definition has no CUDA
 * kernel or whose cuda_supports rejects it at the plan's largest shapes. */
static etrt_status etrt_sim_check(const etrt_engine *engine) {
  const etrt_graph *g = &engine->graph;
  etrt_tensor *args = calloc(engine->max_node_args > 0 ? engine->max_node_args : 1, sizeof *args);
  if (args == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  etrt_status s = ETRT_OK;
  for (uint32_t n = 0; n < g->node_count && s == ETRT_OK; ++n) {
    int launch;
    s = etrt_executor_cuda_node_check(engine, n, g->nodes[n].def->cuda_supports != NULL, args,
                                      &launch);
  }
  free(args);
  return s;
}

static etrt_status etrt_sim_create(etrt_engine *engine, const etrt_device_driver *driver,
                                   void **state) {
  etrt_sim_exec *x = calloc(1, sizeof *x);
  if (x == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  x->engine = engine;
  x->driver = driver;
  etrt_status s = etrt_sim_check(engine);
  if (s == ETRT_OK) s = etrt_engine_device_weights(engine, driver, &x->weights);
  if (s == ETRT_OK) s = driver->event_create(&x->done);
  if (s != ETRT_OK) {
    free(x);
    return s;
  }
  pthread_mutex_init(&x->lock, NULL);
  *state = x;
  return ETRT_OK;
}

static void etrt_sim_destroy(void *state) {
  etrt_sim_exec *x = state;
  if (x->driver->event_destroy(x->done) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': destroying an event: %s", x->engine->info.name,
             etrt_last_error());
  while (x->free_list != NULL) {
    etrt_sim_snapshot *next = x->free_list->next;
    free(x->free_list);
    x->free_list = next;
  }
  pthread_mutex_destroy(&x->lock);
  free(x);
}

static const uint8_t *etrt_sim_weights(void *state) { return ((etrt_sim_exec *)state)->weights; }

static etrt_status etrt_sim_alloc(void *state, size_t size, void **out) {
  etrt_sim_exec *x = state;
  etrt_status s = x->driver->malloc_device(size, out);
  if (s != ETRT_OK)
    return etrt_error_context(s, "engine '%s': %zu bytes of intermediates: ", x->engine->info.name,
                              size);
  return ETRT_OK;
}

static void etrt_sim_free(void *state, void *ptr) {
  etrt_sim_exec *x = state;
  if (x->driver->free_device(ptr) != ETRT_OK)
    etrt_log(ETRT_LOG_ERROR, "engine '%s': freeing intermediates: %s", x->engine->info.name,
             etrt_last_error());
}

static void etrt_sim_release(etrt_sim_exec *x, etrt_sim_snapshot *snap) {
  pthread_mutex_lock(&x->lock);
  snap->next = x->free_list;
  x->free_list = snap;
  --x->in_flight;
  pthread_mutex_unlock(&x->lock);
}

static void etrt_sim_run(void *user) {
  etrt_sim_snapshot *snap = user;
  etrt_sim_exec *x = snap->exec;
  const etrt_exec_run *run = &snap->run;
  for (uint32_t u = 0; u < run->upload_count; ++u)
    if (run->uploads[u].size > 0)
      memcpy(run->uploads[u].dst, run->uploads[u].src, run->uploads[u].size);
  etrt_status s = etrt_executor_run_nodes(run, run->args);
  if (s != ETRT_OK) {
    etrt_log(ETRT_LOG_ERROR, "%s", etrt_last_error());
    pthread_mutex_lock(&x->lock);
    if (x->failed == ETRT_OK) {
      x->failed = s;
      snprintf(x->message, sizeof x->message, "%s", etrt_last_error());
    }
    pthread_mutex_unlock(&x->lock);
  }
  etrt_sim_release(x, snap);
}

/* A pooled snapshot of at least `need` bytes of storage. */
static etrt_sim_snapshot *etrt_sim_take(etrt_sim_exec *x, size_t need) {
  pthread_mutex_lock(&x->lock);
  etrt_sim_snapshot *snap = x->free_list;
  if (snap != NULL) x->free_list = snap->next;
  ++x->in_flight;
  pthread_mutex_unlock(&x->lock);
  if (snap != NULL && snap->capacity >= need) return snap;
  free(snap);
  snap = malloc(ETRT_SIM_SNAPSHOT_HEADER + need);
  if (snap == NULL) {
    pthread_mutex_lock(&x->lock);
    --x->in_flight;
    pthread_mutex_unlock(&x->lock);
    return NULL;
  }
  snap->capacity = need;
  snap->exec = x;
  return snap;
}

static etrt_status etrt_sim_enqueue(void *state, const etrt_exec_run *run, etrt_stream stream) {
  etrt_sim_exec *x = state;
  pthread_mutex_lock(&x->lock);
  etrt_status failed = x->failed;
  char message[sizeof x->message];
  memcpy(message, x->message, sizeof message);
  x->failed = ETRT_OK;
  pthread_mutex_unlock(&x->lock);
  if (failed != ETRT_OK)
    return etrt_error(failed, "engine '%s': an earlier run on the stream failed: %s",
                      x->engine->info.name, message);

  size_t args_bytes = (size_t)run->arg_count * sizeof(etrt_tensor);
  size_t uploads_bytes = (size_t)run->upload_count * sizeof(etrt_exec_upload);
  size_t host_at = etrt_align_up(args_bytes + uploads_bytes, 64);
  size_t need = host_at + run->host_block_size;
  etrt_sim_snapshot *snap = etrt_sim_take(x, need);
  if (snap == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory for a run",
                      x->engine->info.name);
  uint8_t *storage = (uint8_t *)snap + ETRT_SIM_SNAPSHOT_HEADER;
  etrt_tensor *args = (etrt_tensor *)storage;
  etrt_exec_upload *uploads = (etrt_exec_upload *)(storage + args_bytes);
  uint8_t *host = storage + host_at;
  if (args_bytes > 0) memcpy(args, run->args, args_bytes);
  if (run->host_block_size > 0) memcpy(host, run->host_block, run->host_block_size);
  /* Pointers into the context's host block now point into the copy. */
  const uint8_t *lo = run->host_block, *hi = run->host_block + run->host_block_size;
  for (uint32_t a = 0; a < run->arg_count; ++a) {
    const uint8_t *p = args[a].host_value;
    if (p != NULL && p >= lo && p < hi) args[a].host_value = host + (p - lo);
  }
  for (uint32_t u = 0; u < run->upload_count; ++u) {
    uploads[u] = run->uploads[u];
    const uint8_t *p = uploads[u].src;
    if (p >= lo && p < hi) uploads[u].src = host + (p - lo);
  }
  snap->run = *run;
  snap->run.args = args;
  snap->run.uploads = uploads;
  snap->run.host_block = host;
  pthread_mutex_lock(&x->lock);
  x->last_stream = stream;
  pthread_mutex_unlock(&x->lock);
  etrt_status s = x->driver->launch_host_func(stream, etrt_sim_run, snap);
  if (s != ETRT_OK) {
    etrt_sim_release(x, snap);
    return etrt_error_context(s, "engine '%s': enqueue: ", x->engine->info.name);
  }
  s = x->driver->event_record(x->done, stream);
  if (s != ETRT_OK) return etrt_error_context(s, "engine '%s': enqueue: ", x->engine->info.name);
  return ETRT_OK;
}

static etrt_status etrt_sim_quiesce(void *state) {
  etrt_sim_exec *x = state;
  pthread_mutex_lock(&x->lock);
  long in_flight = x->in_flight;
  etrt_stream stream = x->last_stream;
  pthread_mutex_unlock(&x->lock);
  if (in_flight == 0) return ETRT_OK;
  etrt_status s = x->driver->stream_synchronize(stream);
  pthread_mutex_lock(&x->lock);
  in_flight = x->in_flight;
  pthread_mutex_unlock(&x->lock);
  if (s == ETRT_OK && in_flight == 0) return ETRT_OK;
  return etrt_error(ETRT_ERROR_STATE,
                    "engine '%s': %ld run(s) of this context are still queued on another stream; "
                    "synchronise it before resizing or destroying the context",
                    x->engine->info.name, in_flight);
}

static etrt_event etrt_sim_completion(void *state) { return ((etrt_sim_exec *)state)->done; }

const etrt_executor_ops etrt_executor_sim = {
    .kind = ETRT_EXECUTOR_CPU_ON_SIM,
    .name = "cpu-on-sim",
    .create = etrt_sim_create,
    .destroy = etrt_sim_destroy,
    .weights = etrt_sim_weights,
    .alloc = etrt_sim_alloc,
    .free = etrt_sim_free,
    .enqueue = etrt_sim_enqueue,
    .quiesce = etrt_sim_quiesce,
    .completion = etrt_sim_completion,
};
