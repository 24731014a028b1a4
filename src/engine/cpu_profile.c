#include "engine/cpu_profile.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "engine/engine_internal.h"

struct etrt_cpu_profile {
  const etrt_engine *engine;
  uint64_t *node_ns;
  uint8_t *library; /* per node: run by oneDNN or packed weights */
  uint64_t runs;
};

etrt_status etrt_cpu_profile_create(const etrt_engine *engine, etrt_cpu_profile **out) {
  *out = NULL;
  const char *env = getenv("ETRT_CPU_PROFILE");
  if (env == NULL || strcmp(env, "1") != 0) return ETRT_OK;
  uint32_t count = engine->graph.node_count;
  etrt_cpu_profile *p = calloc(1, sizeof *p);
  if (p != NULL) {
    p->node_ns = calloc(count + 1, sizeof *p->node_ns);
    p->library = calloc(count + 1, 1);
  }
  if (p == NULL || p->node_ns == NULL || p->library == NULL) {
    etrt_cpu_profile_destroy(p);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory for the profile",
                      engine->info.name);
  }
  p->engine = engine;
  *out = p;
  return ETRT_OK;
}

uint64_t etrt_cpu_profile_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void etrt_cpu_profile_add(etrt_cpu_profile *profile, uint32_t n, uint64_t start, int library) {
  profile->node_ns[n] += etrt_cpu_profile_now() - start;
  profile->library[n] |= library != 0;
}

void etrt_cpu_profile_run_done(etrt_cpu_profile *profile) { ++profile->runs; }

typedef struct etrt_cpu_profile_row {
  const char *op_type;
  int library;
  uint64_t ns;
  uint32_t nodes;
} etrt_cpu_profile_row;

static int etrt_cpu_profile_row_slower(const void *a, const void *b) {
  uint64_t x = ((const etrt_cpu_profile_row *)a)->ns, y = ((const etrt_cpu_profile_row *)b)->ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* One row per (operator type, who ran it), slowest first. */
static void etrt_cpu_profile_report(const etrt_cpu_profile *p) {
  const etrt_graph *g = &p->engine->graph;
  etrt_cpu_profile_row *rows = calloc(g->node_count + 1, sizeof *rows);
  if (rows == NULL) return;
  uint32_t count = 0;
  uint64_t total = 0;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    total += p->node_ns[n];
    uint32_t r = 0;
    while (r < count &&
           (strcmp(rows[r].op_type, g->nodes[n].op_type) != 0 || rows[r].library != p->library[n]))
      ++r;
    if (r == count)
      rows[count++] = (etrt_cpu_profile_row){g->nodes[n].op_type, p->library[n], 0, 0};
    rows[r].ns += p->node_ns[n];
    ++rows[r].nodes;
  }
  qsort(rows, count, sizeof *rows, etrt_cpu_profile_row_slower);
  double runs = (double)p->runs;
  etrt_log(ETRT_LOG_INFO, "engine '%s': CPU profile of %llu runs, %.3f ms per run in nodes",
           p->engine->info.name, (unsigned long long)p->runs, (double)total / runs / 1e6);
  for (uint32_t r = 0; r < count; ++r)
    etrt_log(ETRT_LOG_INFO, "  %-28s %-7s %5u nodes %9.3f ms %5.1f%%", rows[r].op_type,
             rows[r].library ? "library" : "etrt", rows[r].nodes, (double)rows[r].ns / runs / 1e6,
             total > 0 ? 100.0 * (double)rows[r].ns / (double)total : 0.0);
  free(rows);
}

void etrt_cpu_profile_destroy(etrt_cpu_profile *profile) {
  if (profile == NULL) return;
  if (profile->runs > 0 && profile->node_ns != NULL) etrt_cpu_profile_report(profile);
  free(profile->node_ns);
  free(profile->library);
  free(profile);
}
