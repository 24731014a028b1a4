/* The portable operators: ExecuTorch's out variants of Core ATen operators, run on
 * the engine's CPU kernels where the math is the same (engine_call.c) and on small
 * kernels of their own where it is not. Arguments follow ExecuTorch's encoding of
 * out variants: the schema's arguments in order, the out tensor among them, then the
 * return value (the out tensor again). Engine-backed kernels take tensors in any dim
 * order (channels-last included): they convert to and from the contiguous order
 * around the engine operation. Each family file lists its kernels in a
 * NULL-terminated table that table.c searches. */
#ifndef ETRT_RUNTIME_PORTABLE_PORTABLE_H
#define ETRT_RUNTIME_PORTABLE_PORTABLE_H

#include "runtime/kernels.h"

/* Where an engine input comes from (etrt_portable_spec.inputs). */
#define ETRT_PORTABLE_NONE (-1)
/* A Scalar argument as a 0-D tensor of the first input's dtype (None: omitted). */
#define ETRT_PORTABLE_SCALAR(arg) (-2 - (arg))
/* An int argument as a 0-D int64 tensor. */
#define ETRT_PORTABLE_INT(arg) (-20 - (arg))
/* An int[] argument as a 1-D int64 tensor; -1 entries become 1 (keep the size). */
#define ETRT_PORTABLE_INTS(arg) (-40 - (arg))

/* etrt_portable_spec.flags */
enum {
  ETRT_PORTABLE_LINEAR = 1,     /* weight [out, in]: used transposed; leading axes flattened */
  ETRT_PORTABLE_POST_SELF = 2,  /* post_op(self, result) -> out */
  ETRT_PORTABLE_POST_UNARY = 4, /* post_op(result) -> out */
  /* Tensor inputs of another dtype than the out tensor are cast to it first (ATen's
   * promotion: the out tensor has the promoted dtype); scalars take it too. */
  ETRT_PORTABLE_PROMOTE = 8,
  ETRT_PORTABLE_PROMOTE_SKIP_FIRST = 16, /* where: the condition stays bool */
  /* Comparisons: inputs and scalars are cast to their common dtype (ATen's
   * result_type), the out tensor stays bool. */
  ETRT_PORTABLE_PROMOTE_COMMON = 64,
  /* int / int[] inputs are read once at prepare (the hook rewrote them); otherwise
   * they are read again at every run, as SymInts may change between runs. */
  ETRT_PORTABLE_INTS_AT_PREPARE = 32,
  /* The engine operation's three outputs go to the out tensors at `out`, out + 1 and
   * out + 2 (native_layer_norm: the result, mean and rstd). */
  ETRT_PORTABLE_THREE_OUTS = 128
};

typedef struct etrt_portable_spec {
  etrt_kernel_def def;                          /* first: the table hands out &spec->def */
  const char *op_type;                          /* the engine operation */
  int8_t inputs[ETRT_KERNEL_MAX_ENGINE_INPUTS]; /* argument per engine input (see above) */
  int8_t optional_input; /* a tensor argument that may be None (linear's bias), else -1 */
  int8_t out;
  int8_t alpha; /* Scalar alpha argument, else -1 */
  int8_t beta;
  int flags;
  const char *post_op;
  /* Attributes taken from the arguments, after the fixed ones. */
  etrt_status (*attributes)(etrt_kernel_call *call, const etrt_value *values);
  const etrt_attribute *fixed;
  uint32_t num_fixed;
} etrt_portable_spec;

etrt_status etrt_portable_engine_prepare(etrt_kernel_call *call, const etrt_value *values);
etrt_status etrt_portable_engine_run(etrt_kernel_call *call, etrt_value *values,
                                     etrt_run_context *context);

/* An engine-backed kernel: name, argument count, engine op, five inputs, optional
 * input, out, alpha, beta, flags, post op, attribute hook, fixed attributes. */
#define ETRT_PORTABLE_ENGINE5(name_, nargs, op, i0, i1, i2, i3, i4, opt, out_, alpha_, beta_,  \
                              flags_, post, hook, fixed_, num_fixed_)                          \
  {                                                                                            \
    {name_, nargs, etrt_portable_engine_prepare, etrt_portable_engine_run}, op,                \
        {i0, i1, i2, i3, i4}, opt, out_, alpha_, beta_, flags_, post, hook, fixed_, num_fixed_ \
  }
#define ETRT_PORTABLE_ENGINE_FULL(name_, nargs, op, i0, i1, i2, opt, out_, alpha_, beta_, flags_, \
                                  post, hook, fixed_, num_fixed_)                                 \
  ETRT_PORTABLE_ENGINE5(name_, nargs, op, i0, i1, i2, -1, -1, opt, out_, alpha_, beta_, flags_,   \
                        post, hook, fixed_, num_fixed_)
#define ETRT_PORTABLE_ENGINE(name_, nargs, op, i0, i1, i2, opt, out_, alpha_, beta_, flags_)      \
  ETRT_PORTABLE_ENGINE_FULL(name_, nargs, op, i0, i1, i2, opt, out_, alpha_, beta_, flags_, NULL, \
                            NULL, NULL, 0)
/* A one-input engine op: (self, *, out) -> out with a hook. */
#define ETRT_PORTABLE_HOOKED(name_, nargs, op, i0, i1, i2, out_, hook) \
  ETRT_PORTABLE_ENGINE_FULL(name_, nargs, op, i0, i1, i2, -1, out_, -1, -1, 0, NULL, hook, NULL, 0)

/* Shared by the families. */
/* The tensor at argument `arg`, or NULL (with the error set) when it is not one. */
etrt_status etrt_portable_tensor_arg(const etrt_kernel_call *call, const etrt_value *values,
                                     uint32_t arg, const etrt_runtime_tensor **out);
/* The same, for kernels that read the bytes in the contiguous dim order themselves:
 * another dim order (channels-last) is refused. */
etrt_status etrt_portable_contiguous_arg(const etrt_kernel_call *call, const etrt_value *values,
                                         uint32_t arg, const etrt_runtime_tensor **out);
etrt_status etrt_portable_scalar_arg(const etrt_kernel_call *call, const etrt_value *values,
                                     uint32_t arg, double *out);
etrt_status etrt_portable_int_arg(const etrt_kernel_call *call, const etrt_value *values,
                                  uint32_t arg, int64_t *out);
/* An int[] argument (or an int, as a one-element list); count 0 for None. */
etrt_status etrt_portable_ints_arg(const etrt_kernel_call *call, const etrt_value *values,
                                   uint32_t arg, int64_t *items, uint32_t capacity,
                                   uint32_t *count);
/* Appends an attribute to the call (names are static strings). */
etrt_status etrt_portable_attribute(etrt_kernel_call *call, etrt_attribute attribute);
/* Gives `out` the result's dtype and shape, within its planned capacity: a static
 * out tensor must already have that shape, a dynamic one may take any shape of the
 * same rank whose bytes fit. Refuses (writing nothing) otherwise. */
etrt_status etrt_portable_out_fit(const etrt_kernel_call *call, etrt_runtime_tensor *out,
                                  etrt_dtype dtype, int32_t rank, const int64_t *dims);
/* The distance in memory, in elements, between neighbours along each logical dim of
 * `t`, whatever its dim order: kernels that compute positions from these read
 * channels-last tensors as they are. */
void etrt_portable_strides(const etrt_runtime_tensor *t, int64_t *strides);
int64_t etrt_portable_numel(const etrt_runtime_tensor *t);
/* float16, bfloat16, float32, float64. */
int etrt_portable_dtype_is_float(etrt_dtype dtype);
/* Reads one element of `dtype` as a double (0 for a dtype it does not know). */
double etrt_portable_scalar_load(etrt_dtype dtype, const void *at);
/* Writes `value` as one element of `dtype`. */
etrt_status etrt_portable_scalar_store(double value, etrt_dtype dtype, void *out);

/* The family tables. */
extern const etrt_kernel_def *const etrt_portable_elementwise[];
extern const etrt_kernel_def *const etrt_portable_unary[];
extern const etrt_kernel_def *const etrt_portable_compare[];
extern const etrt_kernel_def *const etrt_portable_linear[];
extern const etrt_kernel_def *const etrt_portable_reduce[];
extern const etrt_kernel_def *const etrt_portable_softmax[];
extern const etrt_kernel_def *const etrt_portable_shape[];
extern const etrt_kernel_def *const etrt_portable_conv[];
extern const etrt_kernel_def *const etrt_portable_norm[];
extern const etrt_kernel_def *const etrt_portable_concat[];
extern const etrt_kernel_def *const etrt_portable_fill[];
extern const etrt_kernel_def *const etrt_portable_prim[];
extern const etrt_kernel_def *const etrt_portable_pointwise[];
extern const etrt_kernel_def *const etrt_portable_statistics[];
extern const etrt_kernel_def *const etrt_portable_resample[];
extern const etrt_kernel_def *const etrt_portable_index[];
extern const etrt_kernel_def *const etrt_portable_grid_sample[];
extern const etrt_kernel_def *const etrt_portable_distance[];
extern const etrt_kernel_def *const etrt_portable_resize_aa[];
extern const etrt_kernel_def *const etrt_portable_random[];

#endif
