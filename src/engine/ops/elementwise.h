/* The elementwise operations of two broadcast tensors (Add, Sub, Mul, Div, Pow, Mod,
 * Max/Min of two, PRelu, BitShift, the bitwise and logical operations, the
 * comparisons) and Relu: what the definitions (elementwise.c) and the CPU kernels
 * (cpu/elementwise.c) share. A CUDA kernel takes the same etrt_binary_kind and the broadcast
 * iteration plan of shape_util.h. */
#ifndef ETRT_ENGINE_OPS_ELEMENTWISE_H
#define ETRT_ENGINE_OPS_ELEMENTWISE_H

#include "engine/op.h"

typedef enum etrt_binary_kind {
  ETRT_BINARY_ADD = 0,
  ETRT_BINARY_SUB = 1,
  ETRT_BINARY_MUL = 2,
  ETRT_BINARY_DIV = 3,
  ETRT_BINARY_POW,
  ETRT_BINARY_MOD,  /* Mod with fmod = 0: the result takes the divisor's sign */
  ETRT_BINARY_FMOD, /* Mod with fmod = 1: the dividend's sign (C's fmod and %) */
  ETRT_BINARY_MAX,  /* Max, Min: NaN wins, as in NumPy */
  ETRT_BINARY_MIN,
  ETRT_BINARY_PRELU,      /* x < 0 ? slope * x : x, with (x, slope) */
  ETRT_BINARY_SHIFT_LEFT, /* BitShift; shifts of the type's width or more give 0 */
  ETRT_BINARY_SHIFT_RIGHT,
  ETRT_BINARY_BITWISE_AND,
  ETRT_BINARY_BITWISE_OR,
  ETRT_BINARY_BITWISE_XOR,
  /* bool results from here on; And, Or, Xor take bool inputs */
  ETRT_BINARY_AND,
  ETRT_BINARY_OR,
  ETRT_BINARY_XOR,
  ETRT_BINARY_EQUAL,
  ETRT_BINARY_LESS,
  ETRT_BINARY_LESS_EQUAL,
  ETRT_BINARY_GREATER,
  ETRT_BINARY_GREATER_EQUAL,
  ETRT_BINARY_KIND_COUNT
} etrt_binary_kind;

/* The node state of the operations defined by the table in elementwise.c (all but
 * Add, Sub, Mul, Div): which kind it runs, from op_type and attributes (Mod's fmod,
 * BitShift's direction). */
typedef struct etrt_binary_state {
  etrt_binary_kind kind;
} etrt_binary_state;

/* The dtypes the arithmetic kernels take (ETRT_DTYPE_INVALID-terminated): every
 * integer and float type but bool. Integer arithmetic wraps (two's complement);
 * integer division truncates, and a division by zero gives 0 rather than trapping. */
extern const etrt_dtype etrt_arithmetic_dtypes[];
/* Relu's dtypes: the floats and the signed integers. */
extern const etrt_dtype etrt_relu_dtypes[];

/* PRelu's slope as it broadcasts to x: itself, or, for a 1-D slope of x's channel
 * count (axis 1) that does not broadcast by the rule of opset 7 and later, a view of
 * shape [C, 1, ..., 1], per channel as PRelu before opset 7 read it (and as older
 * PyTorch exports still write it). 0 when neither applies. */
int etrt_prelu_slope_view(const etrt_tensor *x, const etrt_tensor *slope, etrt_tensor *view);

/* inputs[0] (op) inputs[1] broadcast into outputs[0]; both inputs of one dtype, the
 * output of that dtype or bool (the comparisons and And, Or, Xor). outputs[0] may be
 * inputs[0] when they have one shape (the running result of variadic operations). */
etrt_status etrt_cpu_binary(etrt_binary_kind kind, const etrt_tensor *inputs, etrt_tensor *outputs);
/* The kernel of the table-defined operations: runs the state's kind. Pow also takes
 * an exponent of another dtype than the base. */
etrt_status etrt_cpu_binary_node(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs);
etrt_status etrt_cpu_add(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_sub(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_mul(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_div(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_relu(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

/* cuda_supports shared with the variadic ops: every input present and of one dtype
 * the CUDA arithmetic kernels have (and a float one). */
int etrt_binary_cuda_supports(const etrt_node *node, const etrt_tensor *inputs);
int etrt_binary_float_cuda_supports(const etrt_node *node, const etrt_tensor *inputs);

#endif
