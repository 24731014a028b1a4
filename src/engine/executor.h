/* Executors: how an execution context runs a plan once shapes are known and memory is
 * bound. The context (exec_context.c) owns everything that does not depend on where
 * the kernels run: shape inference, host values ("shape tensors"), the memory plan of
 * intermediates, binding checks, and each node's argument tensors. An executor owns
 * only its memory and the running. Each executor has one table of rows, an operator
 * per row (op.h): the definitions say which nodes the CUDA kernels take
 * (cuda_supports, in every build), the tables say which kernel runs them.
 *
 *   executor_cpu.c   ETRT_EXECUTOR_CPU: the CPU table's kernels (etrt_node.run_cpu,
 *                    resolved with the node), synchronously, host memory
 *   executor_sim.c   ETRT_EXECUTOR_CPU_ON_SIM: a CUDA plan on a simulated device; the
 *                    CPU kernels run in one host function queued on the stream, for
 *                    exactly the plans the CUDA executor takes (same create check)
 *   executor_cuda.c  ETRT_EXECUTOR_CUDA: the CUDA table's kernels (etrt_op_cuda_find)
 *                    on the stream (see the contract below)
 *
 * The create check the CUDA and sim executors share lives in executor_support.c.
 *
 * The CUDA executor's contract, the same as the sim executor's:
 *   create   on the current device (the caller has made it the engine's): get the
 *            engine's device weights (etrt_engine_device_weights), resolve every
 *            node's CUDA row and refuse, naming the node and op, when one is missing
 *            or the definition's cuda_supports rejects the node at its max bounds
 *            (etrt_executor_cuda_node_check); create the cuBLASLt handle and the
 *            workspace (largest row `workspace` over the nodes at their max bounds).
 *   alloc    device memory (malloc_device); called at create and when a shape
 *            exceeds what was seen, after `quiesce`.
 *   enqueue  on `stream`: first the uploads (host -> device, from host memory that
 *            the caller may change after enqueue returns: copy them to pinned memory
 *            owned per in-flight run, or to a device buffer with a synchronous copy),
 *            then each node's `run` in order with an etrt_cuda_launch. No allocation,
 *            no synchronisation. args[].data are device addresses; host_value is set
 *            for the values shape inference needed (read those, never device memory).
 *   quiesce  wait for this context's enqueued work (an event recorded at enqueue).
 *
 * Enqueue calls of one context are ordered by the caller (one stream at a time, the
 * delegate's rule 8); the intermediates are reused by every run.
 *
 * Bad indices. A CPU kernel refuses an out-of-range index (Gather, GatherElements,
 * GatherND, ScatterElements/Scatter, a ReverseSequence length) at once, and so does
 * the sim executor, whose host function runs those kernels (its error fails the
 * next enqueue). A CUDA kernel cannot return an error and the execute path must not
 * synchronise, so: each context owns one device word (etrt_cuda_launch.fault, with
 * .node the node being launched); a kernel that meets a bad index never reads or
 * writes outside a tensor and records node + 1 there with an atomic compare-and-swap
 * from 0 (stream order makes it the first faulting node). The word is sticky; each
 * enqueue copies it asynchronously to a pinned host word after the last node and
 * before the completion event. `check` reads the host word only once the completion
 * event has been reached (event_query, no wait): a fault becomes an execute error
 * naming the engine, node and op, reported once, and the device word is cleared by
 * a memset queued before the next run's nodes. It is reported at the first point
 * that knows the run is complete: the delegate right after the wait it makes anyway
 * (etrt_exec_context_check, contract rule 7), else the next enqueue ("an earlier
 * run on the stream failed"). */
#ifndef ETRT_ENGINE_EXECUTOR_H
#define ETRT_ENGINE_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "device/device.h"
#include "engine/engine_internal.h"
#include "engine/op.h"

/* A host -> executor-memory copy made at the start of a run (shape inputs' values,
 * which kernels may read as ordinary tensors). */
typedef struct etrt_exec_upload {
  void *dst;       /* executor memory */
  const void *src; /* inside the run's host block */
  size_t size;
} etrt_exec_upload;

/* One run, as the context hands it to enqueue. Valid only during the enqueue call:
 * an asynchronous executor copies what it needs (args, uploads, the host block). */
typedef struct etrt_exec_run {
  const etrt_engine *engine;
  const etrt_node *nodes;
  uint32_t node_count;
  /* Node n's tensors: inputs at args[arg_offsets[n]], then its outputs. */
  etrt_tensor *args;
  const uint32_t *arg_offsets;
  uint32_t arg_count;
  const etrt_exec_upload *uploads;
  uint32_t upload_count;
  /* The context's mutable host memory: every args[].host_value that is not a constant's
   * and every upload source lies inside [host_block, host_block + host_block_size). */
  const uint8_t *host_block;
  size_t host_block_size;
  /* Nodes whose dims are known only at execute (etrt_node.dims_at_execute): the
   * context's per-value tensors, where the run writes the dims it gives, and the bytes
   * planned for each value, which those dims must not exceed. Only the CPU executor
   * runs such nodes (the CUDA and sim executors refuse them at create). */
  etrt_tensor *values;
  const int64_t *planned_bytes;
  /* A value with no bound (etrt_graph_value_unbounded) that needs more than
   * planned_bytes: the context replaces its buffer (values[value].data) with one of at
   * least `bytes`, and raises planned_bytes. */
  etrt_status (*grow)(void *state, uint32_t value, size_t bytes);
  void *grow_state;
  /* Per node: the scratch the executor asked for (etrt_executor_ops.workspace) in the
   * context's arena, NULL where it asked for none. */
  void *const *workspaces;
} etrt_exec_run;

typedef struct etrt_executor_ops {
  etrt_executor_kind kind;
  const char *name;
  etrt_status (*create)(etrt_engine *engine, const etrt_device_driver *driver, void **state);
  /* Called after quiesce. */
  void (*destroy)(void *state);
  /* Where the engine's weights are for the kernels: constant c is at
   * weights + (c.data - engine->weights). */
  const uint8_t *(*weights)(void *state);
  etrt_status (*alloc)(void *state, size_t size, void **out);
  void (*free)(void *state, void *ptr);
  etrt_status (*enqueue)(void *state, const etrt_exec_run *run, etrt_stream stream);
  /* Waits until no enqueued work of this context is in flight; refuses (ETRT_ERROR_STATE)
   * when it cannot. */
  etrt_status (*quiesce)(void *state);
  /* The event enqueue records after each run (NULL: runs finish inside enqueue). */
  etrt_event (*completion)(void *state);
  /* Reports, once, an error that completed runs recorded on the device (bad
   * indices, above) without waiting: ETRT_OK while the last run is in flight. NULL:
   * the executor reports its errors from enqueue. */
  etrt_status (*check)(void *state);
  /* Bytes of scratch node n needs while it runs (0: none), asked once after create. The
   * context places them in its arena, live only during node n, so they share memory
   * with the intermediates of other nodes (etrt_exec_run.workspaces). NULL: none. */
  size_t (*workspace)(void *state, uint32_t node);
  /* Bytes value v needs in the arena when the executor keeps it in a layout of its own
   * larger than its dims (0: its planned bytes), asked once after create. NULL: none. */
  size_t (*value_bytes)(void *state, uint32_t value);
} etrt_executor_ops;

extern const etrt_executor_ops etrt_executor_cpu;
extern const etrt_executor_ops etrt_executor_sim;
#ifdef ETRT_HAVE_CUDA
extern const etrt_executor_ops etrt_executor_cuda;
#endif

/* Node `node`'s tensors at the largest shapes the plan allows (dtype, rank, max dims;
 * constants' host bytes as host values), for predicates and workspace sizes. */
void etrt_executor_node_bounds(const etrt_graph *g, const etrt_node *node, etrt_tensor *args);

/* The create-time check of a CUDA plan's node n (args: room for its tensors, filled
 * with their bounds). has_kernel: the CUDA executor has a row for the op (the sim
 * executor: the definition has a cuda_supports). Refuses, naming the node and op, an
 * op without a kernel unless shape inference evaluates it on the host (then *launch
 * is 0: its outputs are uploaded), and a node the definition's cuda_supports
 * rejects; else *launch is 1. */
etrt_status etrt_executor_cuda_node_check(const etrt_engine *engine, uint32_t n, int has_kernel,
                                          etrt_tensor *args, int *launch);

/* Runs node after node with the CPU kernels on memory the host can address. Shared by
 * the CPU executor and the sim executor's host function. */
etrt_status etrt_executor_run_nodes(const etrt_exec_run *run, etrt_tensor *args);

#endif
