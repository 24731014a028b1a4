/* Splits an operation that maps element i of its input to element i of its output
 * over the thread pool: each chunk sees views of the input and output starting at
 * its first element. Element order and arithmetic do not change, so the result does
 * not depend on the number of threads. */
#ifndef ETRT_ENGINE_OPS_CPU_PARALLEL_MAP_H
#define ETRT_ENGINE_OPS_CPU_PARALLEL_MAP_H

#include <stdint.h>

#include "engine/op.h"

/* Elements per chunk (tens of microseconds of work): below this a loop stays on its
 * thread. A thread that joins costs a wake-up and a wait at the end, paid again when a
 * core is taken from it: with 16384, small models ran slower on 16 cores than on one. */
#define ETRT_CPU_MAP_GRAIN 65536

/* Maps n elements of `in` to `out` (views: data moved to the chunk, rank 1, size n). */
typedef etrt_status (*etrt_cpu_map_fn)(const void *ctx, const etrt_tensor *in, etrt_tensor *out,
                                       int64_t n);

/* Runs fn over [0, n) in chunks; the first error wins. fn must accept n = 0 (it is
 * asked first, on the calling thread, so that refusals happen there). */
etrt_status etrt_cpu_map_parallel(const etrt_tensor *in, etrt_tensor *out, int64_t n,
                                  etrt_cpu_map_fn fn, const void *ctx);

#endif
