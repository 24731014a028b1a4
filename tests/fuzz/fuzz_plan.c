/* The plan verifier on arbitrary bytes. Half the inputs get a correct digest first
 * (chosen by the first body byte), so that mutations reach the body parser instead of
 * stopping at the digest. A plan that verifies is run: a CPU context at the inputs'
 * smallest shapes, with zeroed inputs (bodies of If and Scan included; not a Loop). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "engine/ops/control.h"
#include "engine/plan_format.h"

/* Keeps a verified plan from asking for more memory than a fuzzer run should use. */
#define FUZZ_MAX_BYTES ((int64_t)16 << 20)

static int64_t fuzz_bytes_at(const etrt_engine *engine, int use_max) {
  int64_t total = 0;
  for (uint32_t v = 0; v < engine->graph.value_count; ++v) {
    const etrt_graph_value *value = &engine->graph.values[v];
    int64_t n =
        etrt_graph_nbytes(value->dtype, value->rank, use_max ? value->max_dims : value->min_dims);
    if (n < 0 || n > FUZZ_MAX_BYTES) return -1;
    total += n;
    if (total > FUZZ_MAX_BYTES) return -1;
  }
  return total;
}

/* A Loop may run for ever by its own semantics (no trip count, a condition its body
 * keeps true): such a plan is verified, not run. */
static int fuzz_has_loop(const etrt_engine *engine) {
  for (uint32_t n = 0; n < engine->graph.node_count; ++n) {
    const etrt_node *node = &engine->graph.nodes[n];
    if (!node->def->control) continue;
    if (strcmp(node->op_type, "Loop") == 0) return 1;
    const etrt_control_state *s = node->state;
    for (uint32_t b = 0; b < s->body_count; ++b)
      if (fuzz_has_loop(s->bodies[b])) return 1;
  }
  return 0;
}

static void fuzz_run(etrt_engine *engine) {
  if (fuzz_bytes_at(engine, 1) < 0 || fuzz_has_loop(engine)) return;
  etrt_exec_context *ctx;
  if (etrt_exec_context_create(engine, NULL, &ctx) != ETRT_OK) return;
  uint32_t count = etrt_engine_io_count(engine);
  void **buffers = calloc(count, sizeof *buffers);
  int ok = buffers != NULL;
  for (uint32_t i = 0; i < count && ok; ++i) {
    const etrt_engine_io *io = etrt_engine_io_at(engine, i);
    if (!io->is_input) continue;
    if (io->is_shape_input) {
      ok = etrt_exec_context_set_input_values(ctx, i, io->min_values, io->value_count) == ETRT_OK;
      continue;
    }
    ok = etrt_exec_context_set_input_shape(ctx, i, io->rank, io->min_sizes) == ETRT_OK;
    int64_t n = etrt_graph_nbytes(io->dtype, io->rank, io->min_sizes);
    buffers[i] = ok ? calloc(1, (size_t)n + 1) : NULL;
    ok = ok && buffers[i] != NULL && etrt_exec_context_set_address(ctx, i, buffers[i]) == ETRT_OK;
  }
  for (uint32_t i = 0; i < count && ok; ++i) {
    const etrt_engine_io *io = etrt_engine_io_at(engine, i);
    if (io->is_input) continue;
    int32_t rank;
    int64_t sizes[ETRT_MAX_RANK];
    ok = etrt_exec_context_output_shape(ctx, i, &rank, sizes) == ETRT_OK;
    int64_t n = ok ? etrt_graph_nbytes(io->dtype, rank, sizes) : -1;
    ok = ok && n >= 0 && n <= FUZZ_MAX_BYTES;
    buffers[i] = ok ? calloc(1, (size_t)n + 1) : NULL;
    ok = ok && buffers[i] != NULL && etrt_exec_context_set_address(ctx, i, buffers[i]) == ETRT_OK;
  }
  if (ok) (void)etrt_exec_context_enqueue(ctx, NULL);
  etrt_exec_context_destroy(ctx);
  for (uint32_t i = 0; i < count && buffers != NULL; ++i) free(buffers[i]);
  free(buffers);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An aligned copy: weights are then used in place, the engine's usual path. */
  uint8_t *plan = aligned_alloc(64, (size + 64) / 64 * 64);
  if (plan == NULL) return 0;
  if (size > 0) memcpy(plan, data, size);
  if (size > ETRT_PLAN_HEADER_SIZE && (plan[ETRT_PLAN_HEADER_SIZE] & 1) == 0)
    etrt_sha256(plan + ETRT_PLAN_HEADER_SIZE, size - ETRT_PLAN_HEADER_SIZE, plan + 48);
  etrt_engine *engine;
  if (etrt_engine_deserialize(plan, size, &engine) == ETRT_OK) {
    fuzz_run(engine);
    etrt_engine_destroy(engine);
  }
  free(plan);
  return 0;
}
