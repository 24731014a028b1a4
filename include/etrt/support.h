/* What the engine runs where: the support table of its operator definitions, for
 * partitioners outside etrt (the ExecuTorch partitioner of the Python package) that
 * must decide exactly as etrt's own builder does.
 *
 *   etrt_device cuda0 = {ETRT_DEVICE_CUDA, 0};
 *   if (etrt_support_op("Conv", cuda0)) ...
 *   // a node with its real dtypes and shapes: add it to a network, then ask
 *   etrt_support_network_node(net, conv_output, cuda0, &yes);
 */
#ifndef ETRT_SUPPORT_H
#define ETRT_SUPPORT_H

#include <stdint.h>

#include "etrt/network.h"
#include "etrt/status.h"
#include "etrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operator types the engine defines (ONNX names), in a fixed order. */
uint32_t etrt_support_op_count(void);
/* NULL past the end. */
const char *etrt_support_op_type(uint32_t index);

/* 1 when `device` has a kernel for `op_type`: the CPU table for "cpu", the
 * definition's CUDA predicate for "cuda:N" (decided in every build, with or without
 * CUDA compiled in, as the builder's partitioner decides); 0 otherwise. */
int etrt_support_op(const char *op_type, etrt_device device);

/* Whether `device` takes the operation that produced `value` in `network`, with the
 * dtypes, largest shapes and attributes it has there (the operation's shape inference
 * already accepted them when it was added). *supported is 1 or 0. Refuses a value
 * that no operation produced. */
etrt_status etrt_support_network_node(const etrt_network *network, int32_t value,
                                      etrt_device device, int *supported);

/* Whether memory etrt plans on `device` is GPU memory in this process: 1 for cuda:N
 * where the CUDA driver is active and has GPU N; 0 for the CPU, for plans run on the
 * CPU fallback (no GPU present), and for simulated GPUs (ETRT_DEVICE=sim:N), whose
 * device memory is host memory. What a DLPack export of an output must say. */
int etrt_support_device_memory_is_gpu(etrt_device device);

#ifdef __cplusplus
}
#endif

#endif
