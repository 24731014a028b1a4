/* What the CUDA executor (executor_cuda.c) shows besides its executor_ops: counters
 * of its CUDA graph work, process-wide, so that tests and benchmarks can see that
 * replays reuse an instantiated graph. */
#ifndef ETRT_ENGINE_EXECUTOR_CUDA_H
#define ETRT_ENGINE_EXECUTOR_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

typedef struct etrt_cuda_graph_counters {
  uint64_t captures;       /* runs captured into a graph */
  uint64_t instantiations; /* graphs instantiated (a new shape set, or a changed topology) */
  uint64_t updates;        /* instantiated graphs updated in place for new addresses */
  uint64_t replays;        /* runs launched as one graph */
} etrt_cuda_graph_counters;

/* All zero in a build without CUDA. */
void etrt_executor_cuda_graph_counters(etrt_cuda_graph_counters *out);

/* cuDNN convolutions set up by CUDA contexts, process-wide: those that took the plan's
 * recorded choice (plan_tune.h) without timing, and those timed at context creation.
 * All zero in a build without CUDA. */
typedef struct etrt_cuda_tuning_counters {
  uint64_t recorded;
  uint64_t timed;
} etrt_cuda_tuning_counters;
void etrt_executor_cuda_tuning_counters(etrt_cuda_tuning_counters *out);
#ifdef ETRT_HAVE_CUDA
/* The workspace a CUDA context of `engine` allocates (every node at its largest
 * shapes); refuses, as context creation would, a plan the GPU cannot run. */
etrt_status etrt_executor_cuda_workspace_bound(etrt_engine *engine, size_t *bytes);
#endif

#endif
