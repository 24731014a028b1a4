/* The process-wide thread pool of the CPU kernels. Programs acquire it at load
 * (creating or growing its workers there, never on the execute path) and release it
 * when destroyed; kernels split their work with etrt_parallel_for. One pool serves
 * every method of the process, so methods executing at once share its workers
 * instead of each bringing its own: at most (workers + calling threads) run. */
#ifndef ETRT_BASE_THREAD_POOL_H
#define ETRT_BASE_THREAD_POOL_H

#include <stdint.h>

#include "base/status.h"

/* Runs items [begin, end) of a parallel loop. */
typedef void (*etrt_parallel_fn)(void *ctx, int64_t begin, int64_t end);

/* The cores this process may run on (sched_getaffinity), counting the hardware threads
 * of one core once (sysfs topology; each CPU where that is unknown), at least 1. */
int etrt_thread_pool_default_threads(void);

/* Takes a reference to the pool, making sure it can run `threads` at once (the
 * caller plus threads - 1 workers); 0 means the default. Refused when a worker
 * cannot be started. */
etrt_status etrt_thread_pool_acquire(int threads);
/* Drops a reference; the last one stops and joins the workers. */
void etrt_thread_pool_release(void);

/* The most threads parallel loops started by the calling thread may use (itself
 * included): 0 means all the pool has. Returns the previous value, so that a caller
 * can restore it. A thread-local setting: no synchronisation. */
int etrt_thread_pool_limit_set(int threads);
/* How many threads a loop started now by this thread would use (1 inside a loop). */
int etrt_thread_pool_width(void);

/* Calls fn over [0, count) in chunks of at least `grain` items (a multiple of it,
 * except the last), on the calling thread and up to width - 1 workers, and returns
 * when every chunk has run. Nested calls (from inside a chunk) run serially on their
 * thread, so they cannot deadlock. Which thread runs a chunk is not fixed: fn must
 * compute each item the same way whatever the split. No allocation. */
void etrt_parallel_for(int64_t count, int64_t grain, etrt_parallel_fn fn, void *ctx);

/* Runs body(data) once on each of `threads` threads, the caller among them, and returns
 * when all have returned: a parallel region of a runtime another library brings
 * (OpenMP's GOMP_parallel, whose ABI this is). */
typedef void (*etrt_parallel_region_fn)(void (*body)(void *), void *data, unsigned threads,
                                        unsigned flags);

/* From now on, loops run on `region`'s threads instead of the pool's workers. A
 * library that keeps its own threads (oneDNN's OpenMP team) and etrt's loops then
 * share one set of threads: two sets on the same cores, each spinning while the other
 * works, take the cores from each other (a 16-core machine ran small models up to 10x
 * slower than on one thread). The pool's width still decides how many run. Set once,
 * before any loop may run on another thread. */
void etrt_thread_pool_region_set(etrt_parallel_region_fn region);

/* Threads for a parallel call that holds them for its whole length (a loop on a
 * region, a oneDNN primitive): up to `want`, fewer while other calls hold theirs, so
 * that executions at once never run more threads than the pool allows; at least 1.
 * Give the count back with etrt_thread_pool_unclaim. */
int etrt_thread_pool_claim(int want);
void etrt_thread_pool_unclaim(int want);

#endif
