#include "engine/ops/cpu/parallel_map.h"

#include <stdatomic.h>

#include "base/thread_pool.h"

typedef struct etrt_cpu_map_job {
  const etrt_tensor *in;
  etrt_tensor *out;
  etrt_cpu_map_fn fn;
  const void *ctx;
  size_t in_item, out_item;
  atomic_int status; /* the first error */
} etrt_cpu_map_job;

static void etrt_cpu_map_chunk(void *arg, int64_t begin, int64_t end) {
  etrt_cpu_map_job *job = arg;
  etrt_tensor in = *job->in, out = *job->out;
  in.data = (uint8_t *)in.data + (size_t)begin * job->in_item;
  out.data = (uint8_t *)out.data + (size_t)begin * job->out_item;
  in.rank = out.rank = 1;
  in.dims[0] = out.dims[0] = end - begin;
  etrt_status s = job->fn(job->ctx, &in, &out, end - begin);
  int ok = ETRT_OK;
  if (s != ETRT_OK) atomic_compare_exchange_strong(&job->status, &ok, (int)s);
}

etrt_status etrt_cpu_map_parallel(const etrt_tensor *in, etrt_tensor *out, int64_t n,
                                  etrt_cpu_map_fn fn, const void *ctx) {
  if (n < 2 * ETRT_CPU_MAP_GRAIN) return fn(ctx, in, out, n);
  /* An empty call first, on this thread: a refusal (an unsupported dtype) is made here,
   * where its message is kept, rather than in a worker. */
  ETRT_RETURN_IF_ERROR(fn(ctx, in, out, 0));
  etrt_cpu_map_job job = {.in = in,
                          .out = out,
                          .fn = fn,
                          .ctx = ctx,
                          .in_item = etrt_dtype_size(in->dtype),
                          .out_item = etrt_dtype_size(out->dtype)};
  atomic_init(&job.status, ETRT_OK);
  etrt_parallel_for(n, ETRT_CPU_MAP_GRAIN, etrt_cpu_map_chunk, &job);
  return (etrt_status)atomic_load(&job.status);
}
