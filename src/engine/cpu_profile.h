/* Time spent per node on the CPU executor, reported per operator type when the
 * context ends: where a CPU plan's time goes, without an outside profiler. On with
 * ETRT_CPU_PROFILE=1 at context creation (reported through the log at info level:
 * ETRT_LOG=info); off, the executor takes no clock readings. */
#ifndef ETRT_ENGINE_CPU_PROFILE_H
#define ETRT_ENGINE_CPU_PROFILE_H

#include <stdint.h>

#include "base/status.h"
#include "engine/engine.h"

typedef struct etrt_cpu_profile etrt_cpu_profile;

/* *out stays NULL when profiling is off. */
etrt_status etrt_cpu_profile_create(const etrt_engine *engine, etrt_cpu_profile **out);
/* Logs the report (when a run was timed) and frees; NULL is ignored. */
void etrt_cpu_profile_destroy(etrt_cpu_profile *profile);

/* A monotonic reading in nanoseconds (a vDSO call, no system call). */
uint64_t etrt_cpu_profile_now(void);
/* Adds the time since `start` to node n; `library` when oneDNN or packed weights ran it. */
void etrt_cpu_profile_add(etrt_cpu_profile *profile, uint32_t n, uint64_t start, int library);
/* Counts one whole run. */
void etrt_cpu_profile_run_done(etrt_cpu_profile *profile);

#endif
