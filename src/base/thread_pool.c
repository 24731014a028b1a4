#include "base/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A loop in progress: it lives on its caller's stack and is listed in the pool
 * while it has chunks left to hand out. Workers join it under the pool's lock (at
 * most `max_helpers` of them) and take chunks with an atomic counter. */
typedef struct etrt_pool_job {
  etrt_parallel_fn fn;
  void *ctx;
  int64_t count, chunk, chunks;
  atomic_int_fast64_t next;
  int helpers, max_helpers; /* under the pool's lock */
  struct etrt_pool_job *prev, *after;
} etrt_pool_job;

#define ETRT_POOL_MAX_WORKERS 255

static struct {
  pthread_mutex_t lock;
  pthread_cond_t work; /* a job was posted, or the pool stops */
  pthread_cond_t idle; /* a helper left a job, or a stop finished */
  pthread_t workers[ETRT_POOL_MAX_WORKERS];
  int worker_count, references, stopping;
  etrt_pool_job *jobs;
} etrt_pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
               .work = PTHREAD_COND_INITIALIZER,
               .idle = PTHREAD_COND_INITIALIZER};

/* Workers read it relaxed on every loop; written under the lock at acquire/release. */
static atomic_int etrt_pool_workers_live;
/* Threads claimed by calls in progress over the whole process (etrt_thread_pool_claim). */
static atomic_int etrt_pool_claimed;
static _Atomic(etrt_parallel_region_fn) etrt_pool_region;
static _Thread_local int etrt_pool_limit;  /* 0: the whole pool */
static _Thread_local int etrt_pool_inside; /* running a chunk: nested loops are serial */

/* The core of a CPU as (package << 32 | core id), from sysfs; -1 when unknown. */
static int64_t etrt_pool_cpu_core(int cpu) {
  static const char *const fields[2] = {"physical_package_id", "core_id"};
  long value[2];
  for (int f = 0; f < 2; ++f) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, fields[f]);
    FILE *file = fopen(path, "r");
    if (file == NULL) return -1;
    int read = fscanf(file, "%ld", &value[f]);
    fclose(file);
    if (read != 1 || value[f] < 0 || value[f] > INT32_MAX) return -1;
  }
  return (int64_t)value[0] << 32 | value[1];
}

int etrt_thread_pool_default_threads(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  int cpus = CPU_COUNT(&set);
  if (cpus <= 1) return 1;
  /* Cores, not hardware threads: two threads of one core share its vector units, so a
   * loop split over both runs no faster, and each waits for the other at the end (as
   * onnxruntime, which also takes one thread per core). */
  int64_t cores[CPU_SETSIZE];
  int count = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int64_t core = etrt_pool_cpu_core(cpu);
    if (core < 0) return cpus; /* no topology: every CPU counts */
    int seen = 0;
    for (int c = 0; c < count && !seen; ++c) seen = cores[c] == core;
    if (!seen) cores[count++] = core;
  }
  return count > 0 ? count : 1;
}

static void etrt_pool_run_chunks(etrt_pool_job *job) {
  for (;;) {
    int64_t c = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
    if (c >= job->chunks) return;
    int64_t begin = c * job->chunk;
    int64_t end = begin + job->chunk < job->count ? begin + job->chunk : job->count;
    job->fn(job->ctx, begin, end);
  }
}

/* A listed job that still has chunks and room for a helper; under the lock. */
static etrt_pool_job *etrt_pool_find_job(void) {
  for (etrt_pool_job *job = etrt_pool.jobs; job != NULL; job = job->after) {
    if (job->helpers < job->max_helpers &&
        atomic_load_explicit(&job->next, memory_order_relaxed) < job->chunks)
      return job;
  }
  return NULL;
}

static void *etrt_pool_worker(void *arg) {
  (void)arg;
  etrt_pool_inside = 1;
  pthread_mutex_lock(&etrt_pool.lock);
  for (;;) {
    etrt_pool_job *job;
    while (!etrt_pool.stopping && (job = etrt_pool_find_job()) == NULL)
      pthread_cond_wait(&etrt_pool.work, &etrt_pool.lock);
    if (etrt_pool.stopping) break;
    ++job->helpers;
    pthread_mutex_unlock(&etrt_pool.lock);
    etrt_pool_run_chunks(job);
    pthread_mutex_lock(&etrt_pool.lock);
    if (--job->helpers == 0) pthread_cond_broadcast(&etrt_pool.idle);
  }
  pthread_mutex_unlock(&etrt_pool.lock);
  return NULL;
}

/* Stops and joins every worker; under the lock, which it drops while joining. */
static void etrt_pool_stop(void) {
  etrt_pool.stopping = 1;
  pthread_cond_broadcast(&etrt_pool.work);
  int count = etrt_pool.worker_count;
  pthread_mutex_unlock(&etrt_pool.lock);
  for (int w = 0; w < count; ++w) pthread_join(etrt_pool.workers[w], NULL);
  pthread_mutex_lock(&etrt_pool.lock);
  etrt_pool.worker_count = 0;
  etrt_pool.stopping = 0;
  atomic_store(&etrt_pool_workers_live, 0);
  pthread_cond_broadcast(&etrt_pool.idle); /* an acquire waiting for the stop */
}

etrt_status etrt_thread_pool_acquire(int threads) {
  if (threads < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "threads must be 0 (the default) or a positive count, not %d", threads);
  if (threads == 0) threads = etrt_thread_pool_default_threads();
  int wanted = threads - 1 < ETRT_POOL_MAX_WORKERS ? threads - 1 : ETRT_POOL_MAX_WORKERS;
  etrt_status status = ETRT_OK;
  pthread_mutex_lock(&etrt_pool.lock);
  /* A release may be joining the workers with the lock dropped: let it finish, or
   * this reference would find workers that are about to leave. */
  while (etrt_pool.stopping) pthread_cond_wait(&etrt_pool.idle, &etrt_pool.lock);
  while (etrt_pool.worker_count < wanted) {
    int rc =
        pthread_create(&etrt_pool.workers[etrt_pool.worker_count], NULL, etrt_pool_worker, NULL);
    if (rc != 0) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                          "thread pool: cannot start worker %d of %d (error %d)",
                          etrt_pool.worker_count + 1, wanted, rc);
      break;
    }
    ++etrt_pool.worker_count;
  }
  if (status == ETRT_OK) {
    ++etrt_pool.references;
  } else if (etrt_pool.references == 0) {
    etrt_pool_stop();
  }
  atomic_store(&etrt_pool_workers_live, etrt_pool.worker_count);
  pthread_mutex_unlock(&etrt_pool.lock);
  return status;
}

void etrt_thread_pool_release(void) {
  pthread_mutex_lock(&etrt_pool.lock);
  if (etrt_pool.references > 0 && --etrt_pool.references == 0) etrt_pool_stop();
  pthread_mutex_unlock(&etrt_pool.lock);
}

int etrt_thread_pool_limit_set(int threads) {
  int previous = etrt_pool_limit;
  etrt_pool_limit = threads > 0 ? threads : 0;
  return previous;
}

int etrt_thread_pool_width(void) {
  if (etrt_pool_inside) return 1;
  int width = atomic_load_explicit(&etrt_pool_workers_live, memory_order_relaxed) + 1;
  return etrt_pool_limit > 0 && etrt_pool_limit < width ? etrt_pool_limit : width;
}

void etrt_thread_pool_region_set(etrt_parallel_region_fn region) {
  atomic_store(&etrt_pool_region, region);
}

int etrt_thread_pool_claim(int want) {
  int others = atomic_fetch_add_explicit(&etrt_pool_claimed, want, memory_order_relaxed);
  return want - others > 1 ? want - others : 1;
}

void etrt_thread_pool_unclaim(int want) {
  atomic_fetch_sub_explicit(&etrt_pool_claimed, want, memory_order_relaxed);
}

/* One thread of a region: it takes chunks as a worker would, its own loops serial. */
static void etrt_pool_region_body(void *data) {
  int inside = etrt_pool_inside;
  etrt_pool_inside = 1;
  etrt_pool_run_chunks(data);
  etrt_pool_inside = inside;
}

/* The loop on a region's threads: as many as the pool's width allows now, even when
 * the loop has fewer chunks (those without one return at once). A region smaller than
 * the one before would end libgomp's surplus threads, and the next larger one would
 * create them again. */
static void etrt_pool_run_region(etrt_parallel_region_fn region, etrt_pool_job *job, int width) {
  int threads = etrt_thread_pool_claim(width);
  if (threads > 1)
    region(etrt_pool_region_body, job, (unsigned)threads, 0);
  else
    etrt_pool_region_body(job);
  etrt_thread_pool_unclaim(width);
}

void etrt_parallel_for(int64_t count, int64_t grain, etrt_parallel_fn fn, void *ctx) {
  if (count <= 0) return;
  if (grain < 1) grain = 1;
  int width = etrt_thread_pool_width();
  int64_t units = (count + grain - 1) / grain;
  if (width <= 1 || units <= 1) {
    int inside = etrt_pool_inside;
    etrt_pool_inside = 1;
    fn(ctx, 0, count);
    etrt_pool_inside = inside;
    return;
  }
  /* A few chunks per thread, so that a thread slowed by others still finishes with
   * the rest. */
  int64_t chunks = units < (int64_t)width * 4 ? units : (int64_t)width * 4;
  int64_t chunk = (units + chunks - 1) / chunks * grain;
  etrt_pool_job job = {.fn = fn,
                       .ctx = ctx,
                       .count = count,
                       .chunk = chunk,
                       .chunks = (count + chunk - 1) / chunk,
                       .max_helpers = width - 1};
  atomic_init(&job.next, 0);
  etrt_parallel_region_fn region = atomic_load_explicit(&etrt_pool_region, memory_order_relaxed);
  if (region != NULL) {
    etrt_pool_run_region(region, &job, width);
    return;
  }
  pthread_mutex_lock(&etrt_pool.lock);
  job.after = etrt_pool.jobs;
  if (etrt_pool.jobs != NULL) etrt_pool.jobs->prev = &job;
  etrt_pool.jobs = &job;
  if (job.max_helpers >= etrt_pool.worker_count)
    pthread_cond_broadcast(&etrt_pool.work);
  else
    for (int h = 0; h < job.max_helpers; ++h) pthread_cond_signal(&etrt_pool.work);
  pthread_mutex_unlock(&etrt_pool.lock);

  etrt_pool_inside = 1;
  etrt_pool_run_chunks(&job);
  etrt_pool_inside = 0;

  /* Every chunk is taken: unlist the job so no helper joins it, then wait for the
   * helpers still running one. */
  pthread_mutex_lock(&etrt_pool.lock);
  if (job.prev != NULL)
    job.prev->after = job.after;
  else
    etrt_pool.jobs = job.after;
  if (job.after != NULL) job.after->prev = job.prev;
  while (job.helpers > 0) pthread_cond_wait(&etrt_pool.idle, &etrt_pool.lock);
  pthread_mutex_unlock(&etrt_pool.lock);
}
