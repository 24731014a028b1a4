/* The CPU executor: the reference kernels, run to completion on host memory before
 * enqueue returns (the stream is ignored). */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "engine/executor.h"

etrt_status etrt_executor_run_nodes(const etrt_exec_run *run, etrt_tensor *args) {
  for (uint32_t n = 0; n < run->node_count; ++n) {
    const etrt_node *node = &run->nodes[n];
    etrt_tensor *in = args + run->arg_offsets[n];
    if (node->run_cpu == NULL)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "node %u '%s' (%s): no CPU kernel", n, node->name,
                        node->op_type);
    etrt_status s = node->run_cpu(node, in, in + node->num_inputs);
    if (s != ETRT_OK)
      return etrt_error_context(s, "engine '%s', node %u '%s' (%s): ", run->engine->info.name, n,
                                node->name, node->op_type);
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_create(etrt_engine *engine, const etrt_device_driver *driver,
                                   void **state) {
  (void)driver;
  *state = engine;
  return ETRT_OK;
}

static void etrt_cpu_destroy(void *state) { (void)state; }

static const uint8_t *etrt_cpu_weights(void *state) {
  return ((const etrt_engine *)state)->weights;
}

static etrt_status etrt_cpu_alloc(void *state, size_t size, void **out) {
  (void)state;
  size_t rounded = etrt_align_up(size > 0 ? size : 1, 64);
  if (rounded < size || (*out = aligned_alloc(64, rounded)) == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                      "engine: out of memory for %zu bytes of intermediates", size);
  return ETRT_OK;
}

static void etrt_cpu_free(void *state, void *ptr) {
  (void)state;
  free(ptr);
}

static etrt_status etrt_cpu_enqueue(void *state, const etrt_exec_run *run, etrt_stream stream) {
  (void)state;
  (void)stream;
  for (uint32_t u = 0; u < run->upload_count; ++u)
    if (run->uploads[u].size > 0)
      memcpy(run->uploads[u].dst, run->uploads[u].src, run->uploads[u].size);
  return etrt_executor_run_nodes(run, run->args);
}

static etrt_status etrt_cpu_quiesce(void *state) {
  (void)state;
  return ETRT_OK;
}

const etrt_executor_ops etrt_executor_cpu = {
    .kind = ETRT_EXECUTOR_CPU,
    .name = "cpu",
    .create = etrt_cpu_create,
    .destroy = etrt_cpu_destroy,
    .weights = etrt_cpu_weights,
    .alloc = etrt_cpu_alloc,
    .free = etrt_cpu_free,
    .enqueue = etrt_cpu_enqueue,
    .quiesce = etrt_cpu_quiesce,
};
