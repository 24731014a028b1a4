/* KernelCall operators the runtime runs itself: the device copies of device-aware
 * planning (et_copy::_h2d_copy.out / _d2h_copy.out) and a few ExecuTorch portable
 * operators, written on the engine's CPU kernels. Each call is prepared once at
 * method creation, so execute allocates nothing. */
#ifndef ETRT_RUNTIME_KERNELS_H
#define ETRT_RUNTIME_KERNELS_H

#include <stdint.h>

#include "device/device.h"
#include "engine/op.h"
#include "runtime/value.h"

/* What an instruction needs of the execution around it. */
typedef struct etrt_run_context {
  const etrt_device_driver *driver; /* NULL: no GPU (or CPU fallback) */
  etrt_stream stream;               /* the selected stream (contract rule 5) */
  int stream_selected;              /* 0: nothing selected, `stream` is the per-thread default */
  int stream_has_work;              /* set when something was queued on the stream */
  const char *method_name;
  /* execute_async: the device `stream` resolves to for the method (-1: unknown), the
   * latest delegate completion event recorded on that same stream, and whether a
   * delegate left work in flight on a stream of another device. */
  int stream_device;
  void *last_completion;
  int other_streams;
} etrt_run_context;

#define ETRT_KERNEL_MAX_ENGINE_INPUTS 5
#define ETRT_KERNEL_MAX_ATTRIBUTES 8

typedef struct etrt_kernel_def etrt_kernel_def;

/* One prepared KernelCall. */
typedef struct etrt_kernel_call {
  const etrt_kernel_def *def;
  const int32_t *args;
  uint32_t num_args;
  uint32_t instruction;
  /* The engine operation the kernel runs, with its prepared state. */
  etrt_node node;
  int32_t node_inputs[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  int32_t node_outputs[3];
  etrt_attribute attributes[ETRT_KERNEL_MAX_ATTRIBUTES];
  uint32_t num_attributes;
  void *state;
  /* A second operation for add/sub with alpha != 1 (other * alpha first). */
  etrt_node scale_node;
  void *scale_state;
  double alpha;
  /* Inputs cast to the out tensor's dtype first (ATen's type promotion), into
   * scratch as large as the input can get. */
  etrt_dtype compute_dtype; /* what the inputs are cast to; ETRT_DTYPE_INVALID: none */
  etrt_node cast_node[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  void *cast_state[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  void *cast_scratch[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  /* Inputs and the result in the contiguous dim order when the program keeps them in
   * another (channels-last): converted around the engine operation. */
  void *layout_scratch[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  void *layout_out;
  /* float16 / bfloat16 computed in float32 (the engine's float kernels): the result
   * goes to `widen_out` and is cast to the out tensor's dtype by `narrow_node`. */
  void *widen_out;
  size_t widen_at[3]; /* where each engine output's float32 result starts in widen_out */
  etrt_node narrow_node;
  void *narrow_state;
  /* An operation applied to the result after the first (silu: x * sigmoid(x)). */
  etrt_node post_node;
  void *post_state;
  /* Scalar arguments passed to the engine as 0-D tensors, and integer lists passed
   * as attributes or 1-D int64 tensors: storage that lives as long as the call. */
  double scalars[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  uint8_t scalar_bytes[ETRT_KERNEL_MAX_ENGINE_INPUTS][8];
  int64_t ints[4][2 * ETRT_MAX_RANK];
  char text[16];
  void *scratch; /* host scratch (scaled operand, transposed weight), sized at prepare */
  size_t scratch_size;
  int scratch_ready; /* the scratch holds a constant operand prepared once */
} etrt_kernel_call;

struct etrt_kernel_def {
  const char *name; /* "aten::add.out" */
  uint32_t num_args;
  etrt_status (*prepare)(etrt_kernel_call *call, const etrt_value *values);
  etrt_status (*run)(etrt_kernel_call *call, etrt_value *values, etrt_run_context *context);
};

/* The kernel for "name.overload" (or "name" when overload is empty), or NULL. */
const etrt_kernel_def *etrt_kernel_find(const char *name, size_t name_size, const char *overload,
                                        size_t overload_size);

/* Prepares `call` for instruction `instruction`; on failure the message names the
 * operator and the instruction. */
etrt_status etrt_kernel_call_prepare(etrt_kernel_call *call, const etrt_kernel_def *def,
                                     const int32_t *args, uint32_t num_args, uint32_t instruction,
                                     const etrt_value *values);
void etrt_kernel_call_release(etrt_kernel_call *call);

/* The two families: the copies (kernel_copy.c) and the portable operators
 * (portable/table.c: the portable kernel named `full`, or NULL). */
extern const etrt_kernel_def etrt_kernel_h2d_copy;
extern const etrt_kernel_def etrt_kernel_d2h_copy;
const etrt_kernel_def *etrt_portable_find(const char *full);

#endif
