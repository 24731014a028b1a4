/* The engine's operations: one definition per ONNX operator type, with its shape
 * logic written once and shared by the CPU kernels (ops/cpu) and the CUDA kernels
 * (ops/cuda). Definitions (attributes, shape inference, the CPU kernel) live in
 * src/engine/ops/<family>.c and are listed in src/engine/ops/registry.c; CPU kernels
 * in src/engine/ops/cpu/<family>.c; CUDA kernels in src/engine/ops/cuda/<family>.cu
 * with their table in src/engine/ops/cuda/cuda_registry.c. */
#ifndef ETRT_ENGINE_OP_H
#define ETRT_ENGINE_OP_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "etrt/network.h"
#include "etrt/types.h"

/* A tensor inside the engine. During execution `data` is where the bytes are (host
 * memory for the CPU executor, device memory for CUDA). During shape inference
 * `data` is NULL and `host_value` holds the values where they are known on the host
 * (constants, shape inputs, and small integer tensors computed from those). During
 * execution every executor also sets `host_value` for the values that shape
 * inference needed on the host (the value inputs of nodes), so kernels read those
 * there, never from device memory. An omitted optional input has rank -1 and no
 * data. */
typedef struct etrt_tensor {
  void *data;
  const void *host_value;
  etrt_dtype dtype;
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
} etrt_tensor;

typedef struct etrt_op_def etrt_op_def;

/* One operation of an engine graph. */
typedef struct etrt_node {
  const char *op_type;
  const char *name;
  uint32_t num_inputs, num_outputs, num_attributes;
  const int32_t *inputs;  /* value ids; -1 for an omitted optional input */
  const int32_t *outputs; /* value ids */
  const etrt_attribute *attributes;
  const etrt_op_def *def; /* resolved when the graph is built or deserialized */
  void *state;            /* def->state_size bytes, filled by def->prepare */
} etrt_node;

/* What a CUDA kernel launcher gets besides its tensors. */
typedef struct etrt_cuda_launch {
  void *stream;            /* cudaStream_t */
  void *cublaslt;          /* cublasLtHandle_t, created once per context */
  void *workspace;         /* device scratch owned by the context */
  size_t workspace_size;
  etrt_precision precision;
} etrt_cuda_launch;

typedef etrt_status (*etrt_op_prepare_fn)(const etrt_node *node, void *state);
typedef etrt_status (*etrt_op_infer_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs);
typedef etrt_status (*etrt_op_cpu_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs);
typedef etrt_status (*etrt_op_cuda_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs, const etrt_cuda_launch *launch);
/* True when the CUDA kernel handles this node with these input types and shapes. */
typedef int (*etrt_op_cuda_supports_fn)(const etrt_node *node, const etrt_tensor *inputs);
/* Bytes of launch->workspace the kernel needs for these shapes. The executor sizes a
 * context's workspace as the largest over its nodes at the inputs' largest shapes,
 * and grows it before a launch that needs more. */
typedef size_t (*etrt_op_cuda_workspace_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                            const etrt_tensor *outputs);

struct etrt_op_def {
  const char *op_type;
  size_t state_size;
  etrt_op_prepare_fn prepare; /* reads and checks attributes once; may be NULL */
  /* Output dtypes and dims from input dtypes and dims (and host values of the
   * inputs in value_inputs). Refuses bad inputs with a message naming the op. */
  etrt_op_infer_fn infer;
  etrt_op_cpu_fn run_cpu;
  uint32_t value_inputs; /* bit i: output shapes depend on the values of input i */
  /* bit i: run_cpu reads only the dims of input i, never its bytes (Shape, Size), so
   * the node can be evaluated on the host during shape inference even when input i's
   * values are not known there. */
  uint32_t dims_only_inputs;
};

/* The CUDA side of an operation, kept in its own table (src/engine/ops/cuda/
 * cuda_registry.c) so that the CPU build never references a CUDA symbol. */
typedef struct etrt_op_cuda_def {
  const char *op_type;
  etrt_op_cuda_fn run;
  etrt_op_cuda_supports_fn supports; /* NULL: `run` handles every case */
  etrt_op_cuda_workspace_fn workspace; /* NULL: no workspace */
} etrt_op_cuda_def;

/* The CUDA kernel of an operator type, or NULL (none, or CUDA not compiled in). */
const etrt_op_cuda_def *etrt_op_cuda_find(const char *op_type);

/* The definition of an operator type, or NULL. */
const etrt_op_def *etrt_op_find(const char *op_type);
/* Every definition, for listings: sets *count. */
const etrt_op_def *const *etrt_op_all(size_t *count);

/* Attribute lookup helpers; the default is returned when the attribute is absent. */
const etrt_attribute *etrt_node_attribute(const etrt_node *node, const char *name);
int64_t etrt_node_attribute_int(const etrt_node *node, const char *name, int64_t fallback);
float etrt_node_attribute_float(const etrt_node *node, const char *name, float fallback);
const char *etrt_node_attribute_string(const etrt_node *node, const char *name,
                                       const char *fallback);

/* Elements of a tensor (1 for rank 0). */
int64_t etrt_tensor_numel(const etrt_tensor *tensor);

#endif
