/* The inside of an engine, for the execution context and the executors. An engine is
 * immutable once deserialized (the device copy of the weights is made once, under a
 * lock), so any number of contexts on any threads read it without locking. */
#ifndef ETRT_ENGINE_ENGINE_INTERNAL_H
#define ETRT_ENGINE_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/graph.h"
#include "engine/plan_format.h"

struct etrt_engine {
  etrt_graph graph; /* values, nodes (def resolved, state prepared), I/O lists */
  etrt_plan_info info;
  const uint8_t *weights; /* host bytes of every constant (in the plan, or a copy) */
  size_t weights_size;
  etrt_engine_io *io; /* etrt_graph_io_count(&graph) entries */
  /* Shape inference needs these values on the host: value inputs of nodes, and the
   * inputs of nodes evaluated on the host to produce those ("shape tensors"). */
  uint8_t *host_needed;    /* per value */
  uint8_t *host_evaluated; /* per node: run on the host during shape inference */
  uint32_t max_node_args;  /* largest num_inputs + num_outputs */

  /* The weights on a device (for the sim and CUDA executors), uploaded once by the
   * first context that needs them and shared by all. */
  pthread_mutex_t device_lock;
  const etrt_device_driver *device_driver;
  void *device_weights;
  /* Set only while etrt_plan_tune makes its context (plan_tune.h): that context times
   * the convolutions and leaves its choices here instead of using a record. */
  struct etrt_plan_tuning_sink *tuning_sink;
};

/* Device memory holding the engine's weights (same layout as engine->weights), made
 * on first use with `driver` on the current device. Every context of an engine must
 * use one driver. */
etrt_status etrt_engine_device_weights(etrt_engine *engine, const etrt_device_driver *driver,
                                       const uint8_t **out);

#endif
