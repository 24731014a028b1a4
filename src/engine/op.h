/* The engine's operations. A backend is a table, an operator is a row:
 *
 *   src/engine/ops/<family>.c       one definition per ONNX operator type (attributes,
 *                                   shape inference, value inputs) and, compiled in every
 *                                   build, its `cuda_supports` predicate: which nodes the
 *                                   CUDA kernels take. Listed once per family in
 *                                   src/engine/ops/registry.c.
 *   src/engine/ops/cpu/<family>.c   the CPU kernels, ending with the family's CPU rows
 *                                   {op type, kernel}; src/engine/ops/cpu/table.c lists
 *                                   the families.
 *   src/engine/ops/cuda/<family>.cu the CUDA kernels, ending with the family's CUDA rows
 *                                   {op type, launcher, workspace} (a .cu family may
 *                                   hold several definition families: binary.cu has the
 *                                   elementwise, variadic and Where kernels);
 *                                   src/engine/ops/cuda/table.c lists the families.
 *
 * Because the predicate lives with the definition, a CPU-only build partitions a
 * graph exactly as a CUDA build does, and the sim executor refuses what the CUDA
 * executor would refuse. A node's CPU kernel is resolved once, when its definition is
 * (etrt_node.run_cpu). tests/unit/test_op_tables.c checks that the definitions and
 * the rows agree; tests/util/op_cases.c holds every row's cases, which
 * tests/unit/test_op_cases.c (CPU against sim) and tests/gpu/test_cuda_ops.c (CPU
 * against CUDA) run. docs/adding-an-operator.md walks through a new operator. */
#ifndef ETRT_ENGINE_OP_H
#define ETRT_ENGINE_OP_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "engine/plan_choice.h"
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
  /* The CPU row's kernel (etrt_op_cpu_find), resolved with `def`; NULL: none. */
  etrt_status (*run_cpu)(const struct etrt_node *node, const struct etrt_tensor *inputs,
                         struct etrt_tensor *outputs);
  /* Set by the bounds inference (bounds.h) when the plan is built or verified: whether
   * the output dims are known only at execute. ETRT_NODE_DIMS_BOUNDED: a value input is
   * not known on the host before the run, so memory is planned for def->bound's largest
   * shapes; ETRT_NODE_DIMS_FOLLOW: an input's dims or values are known only at execute.
   * Either way the executor re-runs def->infer on the node's actual inputs just before
   * its kernel (executor.h). */
  uint8_t dims_at_execute;
} etrt_node;

/* In a bound's largest shape: an axis no bound limits (a Resize by scales, a Range, a
 * OneHot depth known only at execute). Its value's memory is grown at execute when a
 * larger shape first arrives (docs/architecture.md). Equal to ETRT_GRAPH_MAX_DIM. */
#define ETRT_OP_DIM_UNBOUNDED ((int64_t)1 << 40)

#define ETRT_NODE_DIMS_PLANNED 0
#define ETRT_NODE_DIMS_BOUNDED 1
#define ETRT_NODE_DIMS_FOLLOW 2

/* What a CUDA kernel launcher gets besides its tensors. */
typedef struct etrt_cuda_launch {
  void *stream;    /* cudaStream_t */
  void *cublaslt;  /* cublasLtHandle_t, created once per context */
  void *workspace; /* device scratch owned by the context */
  size_t workspace_size;
  etrt_precision precision;
  /* The context's device fault word and the index of the node being launched: a
   * kernel that meets an out-of-range index records node + 1 there with
   * etrt_cuda_fault (cuda_kernel.h) instead of reading or writing outside a tensor;
   * the executor reports it when the run is known to be complete (executor.h). */
  uint32_t *fault;
  uint32_t node;
  /* cudnnHandle_t of the context, created by the first node setup that needs it
   * (NULL: none, or cuDNN did not load). */
  void *cudnn;
  /* Per node of the run: what its setup row made for this context, or NULL. */
  void *const *node_state;
  /* Setup rows only (context creation), for cuDNN convolutions: `recorded`, the plan's
   * choice for this node where its tuning record matches this GPU and cuDNN (else NULL),
   * used without timing when it still fits; `tune` 1 when the context is made to time
   * the choices that `etrt build` records, the setup then filling *tuned and setting
   * `tuned_set`. A setup may lower workspace_size (the node's need, set by the
   * executor before the call) to what its chosen algorithm takes, and counts in
   * recorded_used / timed the nodes that took a recorded choice or were timed. */
  const etrt_plan_conv_choice *recorded;
  int tune;
  etrt_plan_conv_choice *tuned;
  int tuned_set;
  uint32_t recorded_used, timed;
} etrt_cuda_launch;

typedef etrt_status (*etrt_op_prepare_fn)(const etrt_node *node, void *state);
typedef etrt_status (*etrt_op_infer_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs);
/* The smallest (lo) and largest (hi) output shapes an op can give for these input
 * shapes whatever the values of its value inputs (host_value NULL where not known). */
typedef etrt_status (*etrt_op_bound_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *lo, etrt_tensor *hi);
typedef etrt_status (*etrt_op_cpu_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs);
typedef etrt_status (*etrt_op_cuda_fn)(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs, const etrt_cuda_launch *launch);
/* True when the kernels of an executor handle this node with these input types and
 * shapes (after the shape inference accepted them). Looks only at dtypes, ranks,
 * dims, attributes and the prepared state, so it runs in every build. */
typedef int (*etrt_op_supports_fn)(const etrt_node *node, const etrt_tensor *inputs);
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
  /* Where an output's dims depend on values only known at execute (a graph input's, or
   * a kernel's result: NonZero's, Compress's condition), the bounds that memory is
   * planned for; the executor calls infer on the actual values before the kernel. NULL:
   * the value inputs must be known when the plan is built. */
  etrt_op_bound_fn bound;
  /* The output dims are what the CPU kernel writes to outputs[k].dims (within the bound
   * it is given, the planned one), because finding them is the operation itself
   * (NonMaxSuppression): such a node always has dims at execute, never runs on the host
   * at build time, and its infer gives the bound's largest shapes. */
  uint8_t dims_from_kernel;
  /* Which nodes the CUDA kernels take: NULL when the op has no CUDA kernel,
   * etrt_op_supports_all when its kernel takes every node the shape inference
   * accepts. A CUDA build has a CUDA row exactly for the ops where this is set. */
  etrt_op_supports_fn cuda_supports;
  uint32_t value_inputs; /* bit i: output shapes depend on the values of input i */
  /* bit i: the CPU kernel reads only the dims of input i, never its bytes (Shape, Size), so
   * the node can be evaluated on the host during shape inference even when input i's
   * values are not known there. */
  uint32_t dims_only_inputs;
  /* 1: the node may carry the builder's "channels_last" attribute (docs/architecture.md,
   * "Layouts"): its 4-D activations are then [N, H, W, C] and its infer and every kernel
   * row take them so. A node of any other op with the attribute is refused when it is
   * added to a network or loaded from a plan (etrt_op_check_layout). */
  uint8_t channels_last;
  /* Control flow (If, Loop, Scan): the node holds body graphs (GRAPH attributes, each an
   * engine plan) that prepare deserializes into its state. It has no row in any table:
   * the CPU executor runs it with control.h, the loop control on the host; such a node
   * always has dims at execute (dims_from_kernel). */
  uint8_t control;
  /* Frees what prepare made beside the state's bytes (the bodies' engines); called
   * when the graph holding the node is released, also for a node whose prepare
   * failed or never ran (its state is then zeroed). NULL: nothing to free. */
  void (*release)(void *state);
};

/* A row of the CPU table: the kernel of an operator type. */
typedef struct etrt_op_cpu_row {
  const char *op_type;
  etrt_op_cpu_fn run;
} etrt_op_cpu_row;

/* A row of the CUDA table (the .cu files; none without CUDA compiled in). */
typedef struct etrt_op_cuda_row {
  const char *op_type;
  etrt_op_cuda_fn run;
  etrt_op_cuda_workspace_fn workspace; /* NULL: no workspace */
} etrt_op_cuda_row;

/* Per-context preparation of a node on the CUDA executor, for operators that keep
 * library state between launches (descriptors, an algorithm chosen by timing the
 * candidates on the context's GPU): `setup` runs once when a context is created, with
 * the inputs' largest shapes (no data) and a launch whose handles it may fill in,
 * and sets *state (NULL: launch without state). Launches with the state use no more
 * of launch->workspace than the row's workspace function asks for the same shapes,
 * so etrt_executor_cuda_workspace_bound holds without running setups.
 * `release` frees a state. The launcher finds its state in
 * launch->node_state[launch->node] and must work without it. */
typedef struct etrt_op_cuda_setup_row {
  const char *op_type;
  etrt_status (*setup)(const etrt_node *node, const etrt_tensor *inputs, const etrt_tensor *outputs,
                       etrt_cuda_launch *launch, void **state);
  void (*release)(void *state);
} etrt_op_cuda_setup_row;

/* The setup row of an operator type, or NULL (none, or CUDA not compiled in). */
const etrt_op_cuda_setup_row *etrt_op_cuda_setup_find(const char *op_type);

/* Every CPU row (sets *count), and the CPU kernel of an operator type or NULL. */
const etrt_op_cpu_row *const *etrt_op_cpu_all(size_t *count);
etrt_op_cpu_fn etrt_op_cpu_find(const char *op_type);

/* Every CUDA row (sets *count; 0 without CUDA), and the row of an operator type or
 * NULL (none, or CUDA not compiled in). */
const etrt_op_cuda_row *const *etrt_op_cuda_all(size_t *count);
const etrt_op_cuda_row *etrt_op_cuda_find(const char *op_type);

/* The cuda_supports of an op whose CUDA kernel takes every node. */
int etrt_op_supports_all(const etrt_node *node, const etrt_tensor *inputs);

/* Whether the CUDA kernels take this node with these inputs, by its definition's
 * predicate, in every build (contract: the partitioner and the sim executor decide
 * by this, so they agree with the CUDA executor). */
int etrt_op_cuda_supports(const etrt_node *node, const etrt_tensor *inputs);

/* Points node->def and node->run_cpu at the definition and CPU kernel of
 * node->op_type (NULL when unknown). */
void etrt_op_resolve(etrt_node *node);

/* Refuses a "channels_last" attribute that is not an int 0 or 1, or that is 1 on a node whose
 * definition has no channels-last kernels, naming the node. */
etrt_status etrt_op_check_layout(const etrt_node *node);

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
