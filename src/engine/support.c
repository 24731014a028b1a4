/* The public support queries over the operator definitions and the executor tables
 * (etrt/support.h): the same predicates the builder's partitioner and the executors
 * use, so an outside partitioner cannot disagree with them. */
#include "etrt/support.h"

#include <stdlib.h>

#include "base/status.h"
#include "device/device.h"
#include "engine/executor.h"
#include "engine/network.h"
#include "engine/op.h"

uint32_t etrt_support_op_count(void) {
  size_t count;
  (void)etrt_op_all(&count);
  return (uint32_t)count;
}

const char *etrt_support_op_type(uint32_t index) {
  size_t count;
  const etrt_op_def *const *all = etrt_op_all(&count);
  return index < count ? all[index]->op_type : NULL;
}

int etrt_support_op(const char *op_type, etrt_device device) {
  if (op_type == NULL) return 0;
  const etrt_op_def *def = etrt_op_find(op_type);
  if (def == NULL) return 0;
  if (device.type == ETRT_DEVICE_CPU) return etrt_op_cpu_find(op_type) != NULL;
  if (device.type == ETRT_DEVICE_CUDA) return def->cuda_supports != NULL;
  return 0;
}

etrt_status etrt_support_network_node(const etrt_network *network, int32_t value,
                                      etrt_device device, int *supported) {
  if (network == NULL || supported == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "support: NULL network or result");
  *supported = 0;
  const etrt_graph *g = etrt_network_graph(network);
  if (value < 0 || (uint32_t)value >= g->value_count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "support: value %d does not exist", (int)value);
  /* The producer field is filled when a graph is checked (at build), not while a
   * network grows, so look the producing node up. */
  const etrt_node *node = NULL;
  for (uint32_t n = 0; n < g->node_count && node == NULL; ++n) {
    for (uint32_t k = 0; k < g->nodes[n].num_outputs; ++k) {
      if (g->nodes[n].outputs[k] == value) node = &g->nodes[n];
    }
  }
  if (node == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "support: value %d ('%s') is an input or a constant, not an operation's "
                      "output",
                      (int)value, g->values[value].name);
  if (!etrt_support_op(node->op_type, device)) return ETRT_OK;
  if (device.type == ETRT_DEVICE_CPU) {
    *supported = 1;
    return ETRT_OK;
  }
  etrt_tensor *args = calloc((size_t)node->num_inputs + node->num_outputs + 1, sizeof *args);
  if (args == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "support: out of memory");
  etrt_executor_node_bounds(g, node, args);
  *supported = etrt_op_cuda_supports(node, args);
  free(args);
  return ETRT_OK;
}

int etrt_support_device_memory_is_gpu(etrt_device device) {
  if (device.type != ETRT_DEVICE_CUDA) return 0;
  const etrt_device_driver *driver = etrt_device_driver_get();
  if (driver == NULL || driver != etrt_device_cuda_driver()) return 0;
  return device.index >= 0 && device.index < driver->device_count();
}
