/* The inference engine (TensorRT's role): a plan deserialized into an engine, and
 * execution contexts that run it. The engine knows nothing of ExecuTorch: it takes
 * bound addresses and a stream. Where memory lives is the delegate's decision. */
#ifndef ETRT_ENGINE_ENGINE_H
#define ETRT_ENGINE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "device/device.h"
#include "etrt/network.h"
#include "etrt/status.h"
#include "etrt/types.h"

typedef struct etrt_engine etrt_engine;

/* An axis of etrt_engine_io.max_sizes that has no bound (2^40). */
#define ETRT_ENGINE_DIM_UNBOUNDED ((int64_t)1 << 40)
typedef struct etrt_exec_context etrt_exec_context;

/* One input or output of an engine. */
typedef struct etrt_engine_io {
  const char *name;
  int is_input;
  /* A shape input: its values (int64, on the host) decide other shapes; it is
   * passed with etrt_exec_context_set_input_values, not bound by address. */
  int is_shape_input;
  /* An output whose dims depend on values computed by the run (NonZero's, say): the
   * caller binds memory for max_sizes, and etrt_exec_context_output_shape gives the
   * actual dims once the run is complete. */
  int dims_at_execute;
  /* Such an output with no bound on some axis (max_sizes holds ETRT_ENGINE_DIM_UNBOUNDED
   * there): the engine holds its memory, grown when a larger shape first arrives; after
   * a complete run etrt_exec_context_output_memory gives it. Not bound by the caller. */
  int engine_memory;
  etrt_dtype dtype;
  int32_t rank;
  int64_t min_sizes[ETRT_MAX_RANK];
  int64_t max_sizes[ETRT_MAX_RANK];
  /* Shape inputs: the number of values and the bounds of each; 0 and NULL otherwise. */
  int64_t value_count;
  const int64_t *min_values;
  const int64_t *max_values;
} etrt_engine_io;

/* Verifies a plan (header, version, digest, every field) and builds an engine.
 * `plan` must stay valid while the engine lives: weights are used in place (zero
 * copy) when their alignment allows. Refuses a corrupted plan with a message naming
 * the field and its byte offset. */
etrt_status etrt_engine_deserialize(const void *plan, size_t size, etrt_engine **out);
void etrt_engine_destroy(etrt_engine *engine);

etrt_device etrt_engine_device(const etrt_engine *engine);
void etrt_engine_compute_capability(const etrt_engine *engine, int *major, int *minor);
const char *etrt_engine_name(const etrt_engine *engine);
/* The compute precision the plan allows for matrix work (for the CUDA executor). */
etrt_precision etrt_engine_precision(const etrt_engine *engine);
/* The device memory one execution context of the plan takes at its largest shapes:
 * the weights (shared by the engine's contexts), the intermediates as the memory
 * planner places them by lifetime, and the CUDA executor's workspace (0, with
 * workspace_known 0, in a build without CUDA). Needs no GPU. Values with no size bound
 * (etrt_engine_io.engine_memory and what feeds it) have no largest shape: their memory,
 * grown at execute, is not counted. */
typedef struct etrt_engine_memory {
  uint64_t weights, intermediates, workspace, total;
  int workspace_known;
} etrt_engine_memory;
etrt_status etrt_engine_memory_peak(etrt_engine *engine, etrt_engine_memory *out);
/* The same for a serialized plan (a delegate's payload, say): 1 and *out filled when
 * `plan` is one and its figures are known, else 0 (the reason in etrt_last_error). */
int etrt_engine_plan_memory(const void *plan, size_t size, etrt_engine_memory *out);
/* What a plan computes in, for `etrt inspect`: its precision; per float type (float32,
 * float16, bfloat16, in that order) the bytes of its weights and the number of the
 * other values (inputs, outputs, intermediates); its Cast nodes from one float type to
 * another, and of those the ones that read a plan input or write a plan output. */
typedef struct etrt_engine_types {
  etrt_precision precision;
  uint64_t weight_bytes[3];
  uint32_t values[3];
  uint32_t float_casts, edge_casts;
  /* Layouts: nodes carrying channels_last = 1 (NHWC activations), and the layout conversions
   * (4-D Transposes into or out of NHWC). */
  uint32_t channels_last_nodes, layout_conversions;
  /* The tuning record (plan_format.h), when tuned is 1: what the convolution choices
   * were timed on and how many there are. */
  int tuned;
  char tuned_gpu[256];
  int tuned_major, tuned_minor;
  uint32_t tuned_cudnn, tuned_convolutions;
} etrt_engine_types;
/* 1 and *out filled when `plan` is a plan, else 0 (the reason in etrt_last_error). */
int etrt_engine_plan_types(const void *plan, size_t size, etrt_engine_types *out);
/* The names of a plan's channels-last nodes, ", "-separated, into text (cut with "..." where
 * `size` bytes do not hold them all); 1 when `plan` is a plan, else 0. */
int etrt_engine_plan_channels_last(const void *plan, size_t size, char *text, size_t text_size);
uint32_t etrt_engine_io_count(const etrt_engine *engine);
const etrt_engine_io *etrt_engine_io_at(const etrt_engine *engine, uint32_t index);
/* Index of the I/O named `name`, or -1. */
int32_t etrt_engine_io_find(const etrt_engine *engine, const char *name);

/* How a context runs the plan. */
typedef enum etrt_executor_kind {
  ETRT_EXECUTOR_CPU = 0,        /* reference kernels on the host, synchronously */
  ETRT_EXECUTOR_CPU_ON_SIM = 1, /* CPU kernels queued as work on a simulated stream */
  ETRT_EXECUTOR_CUDA = 2        /* CUDA kernels on the given stream */
} etrt_executor_kind;

/* Creates a context: its own intermediate buffers and workspace (weights are shared
 * with the engine and the other contexts). For a CUDA plan with a device driver
 * present, the context is created on the engine's device (the current device must
 * already be it: the delegate sets it, contract rule 2). `driver` NULL selects the
 * CPU executor whatever the plan's device (used for --allow-cpu and --check-cpu); a
 * CPU plan always gets the CPU executor. A context is used by one thread at a time;
 * the engine is shared by any number of contexts on any threads. The caller waits
 * for a context's enqueued work before destroying it (destroy waits on the last
 * stream it was enqueued on, and leaks rather than free memory still in use). */
etrt_status etrt_exec_context_create(etrt_engine *engine, const etrt_device_driver *driver,
                                     etrt_exec_context **out);
void etrt_exec_context_destroy(etrt_exec_context *context);
/* The engine a context runs. */
etrt_engine *etrt_exec_context_engine(const etrt_exec_context *context);
etrt_executor_kind etrt_exec_context_executor(const etrt_exec_context *context);
/* Bytes of the context's intermediates arena (planned at create for the largest shapes). */
size_t etrt_exec_context_arena_size(const etrt_exec_context *context);

/* Sets the shape of input `io_index` (within its bounds, else refused naming the
 * input, the axis and the bounds). */
etrt_status etrt_exec_context_set_input_shape(etrt_exec_context *context, uint32_t io_index,
                                              int32_t rank, const int64_t *sizes);
/* Values of a shape input (host int64 array, copied). */
etrt_status etrt_exec_context_set_input_values(etrt_exec_context *context, uint32_t io_index,
                                               const int64_t *values, int64_t count);
/* The shape of output `io_index` for the current input shapes (runs shape inference
 * when inputs changed). For an output whose dims are known only at execute
 * (etrt_engine_io.dims_at_execute): the dims of the last complete run with these
 * inputs, and before one the largest the plan allows. */
etrt_status etrt_exec_context_output_shape(etrt_exec_context *context, uint32_t io_index,
                                           int32_t *rank, int64_t *sizes);
/* The memory of an output the engine holds (etrt_engine_io.engine_memory) as the last
 * run left it: valid until the next enqueue or the context's destruction. */
etrt_status etrt_exec_context_output_memory(etrt_exec_context *context, uint32_t io_index,
                                            void **data, size_t *capacity);
/* Binds the memory of an input or output (device memory for CUDA/sim executors,
 * host memory for the CPU executor). Zero-size tensors may bind any non-NULL address. */
etrt_status etrt_exec_context_set_address(etrt_exec_context *context, uint32_t io_index,
                                          void *address);
/* Enqueues the whole plan on `stream` (ignored by the CPU executor, which runs to
 * completion before returning). No allocation unless a shape exceeds what the
 * context has seen before (buffers grow, then are reused). */
etrt_status etrt_exec_context_enqueue(etrt_exec_context *context, etrt_stream stream);
/* The completion event each enqueue records on its stream after the plan's work, or
 * NULL (the CPU executor finishes inside enqueue). This is the one event of an
 * execute (contract rule 7): the delegate and the method wait on it rather than
 * recording events of their own. Each enqueue re-records it. */
etrt_event etrt_exec_context_completion(const etrt_exec_context *context);

/* After waiting on the completion event: the error a finished run recorded on the
 * device (an out-of-range index, naming the node and op), reported once; ETRT_OK
 * when there is none or the run is still in flight (executor.h). */
etrt_status etrt_exec_context_check(etrt_exec_context *context);

#endif
