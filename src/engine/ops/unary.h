/* Elementwise functions of one tensor (math and activations): the operator list and
 * the attribute state that the definitions (unary.c) and kernels (cpu/unary.c) share. */
#ifndef ETRT_ENGINE_OPS_UNARY_H
#define ETRT_ENGINE_OPS_UNARY_H

#include "engine/op.h"

/* Which dtypes an operation takes. */
typedef enum etrt_unary_types {
  ETRT_UNARY_FLOAT,   /* float16, bfloat16, float32, float64 */
  ETRT_UNARY_SIGNED,  /* the floats and the signed integers */
  ETRT_UNARY_NUMERIC, /* the floats and every integer */
  ETRT_UNARY_INTEGER, /* every integer */
  ETRT_UNARY_BOOL,
  ETRT_UNARY_ANY
} etrt_unary_types;

/* X(KIND, "OpType", types, output is bool) */
#define ETRT_UNARY_OPS(X)                                     \
  X(ABS, "Abs", ETRT_UNARY_NUMERIC, 0)                        \
  X(NEG, "Neg", ETRT_UNARY_SIGNED, 0)                         \
  X(CEIL, "Ceil", ETRT_UNARY_FLOAT, 0)                        \
  X(FLOOR, "Floor", ETRT_UNARY_FLOAT, 0)                      \
  X(ROUND, "Round", ETRT_UNARY_FLOAT, 0)                      \
  X(SQRT, "Sqrt", ETRT_UNARY_FLOAT, 0)                        \
  X(RECIPROCAL, "Reciprocal", ETRT_UNARY_FLOAT, 0)            \
  X(EXP, "Exp", ETRT_UNARY_FLOAT, 0)                          \
  X(LOG, "Log", ETRT_UNARY_FLOAT, 0)                          \
  X(SIN, "Sin", ETRT_UNARY_FLOAT, 0)                          \
  X(COS, "Cos", ETRT_UNARY_FLOAT, 0)                          \
  X(TAN, "Tan", ETRT_UNARY_FLOAT, 0)                          \
  X(ASIN, "Asin", ETRT_UNARY_FLOAT, 0)                        \
  X(ACOS, "Acos", ETRT_UNARY_FLOAT, 0)                        \
  X(ATAN, "Atan", ETRT_UNARY_FLOAT, 0)                        \
  X(SINH, "Sinh", ETRT_UNARY_FLOAT, 0)                        \
  X(COSH, "Cosh", ETRT_UNARY_FLOAT, 0)                        \
  X(TANH, "Tanh", ETRT_UNARY_FLOAT, 0)                        \
  X(ASINH, "Asinh", ETRT_UNARY_FLOAT, 0)                      \
  X(ACOSH, "Acosh", ETRT_UNARY_FLOAT, 0)                      \
  X(ATANH, "Atanh", ETRT_UNARY_FLOAT, 0)                      \
  X(ERF, "Erf", ETRT_UNARY_FLOAT, 0)                          \
  X(SIGN, "Sign", ETRT_UNARY_NUMERIC, 0)                      \
  X(ISNAN, "IsNaN", ETRT_UNARY_FLOAT, 1)                      \
  X(ISINF, "IsInf", ETRT_UNARY_FLOAT, 1)                      \
  X(IDENTITY, "Identity", ETRT_UNARY_ANY, 0)                  \
  X(NOT, "Not", ETRT_UNARY_BOOL, 0)                           \
  X(BITWISE_NOT, "BitwiseNot", ETRT_UNARY_INTEGER, 0)         \
  X(SIGMOID, "Sigmoid", ETRT_UNARY_FLOAT, 0)                  \
  X(HARD_SIGMOID, "HardSigmoid", ETRT_UNARY_FLOAT, 0)         \
  X(HARD_SWISH, "HardSwish", ETRT_UNARY_FLOAT, 0)             \
  X(LEAKY_RELU, "LeakyRelu", ETRT_UNARY_FLOAT, 0)             \
  X(ELU, "Elu", ETRT_UNARY_FLOAT, 0)                          \
  X(SELU, "Selu", ETRT_UNARY_FLOAT, 0)                        \
  X(CELU, "Celu", ETRT_UNARY_FLOAT, 0)                        \
  X(SOFTPLUS, "Softplus", ETRT_UNARY_FLOAT, 0)                \
  X(SOFTSIGN, "Softsign", ETRT_UNARY_FLOAT, 0)                \
  X(THRESHOLDED_RELU, "ThresholdedRelu", ETRT_UNARY_FLOAT, 0) \
  X(GELU, "Gelu", ETRT_UNARY_FLOAT, 0)                        \
  X(MISH, "Mish", ETRT_UNARY_FLOAT, 0)                        \
  X(SHRINK, "Shrink", ETRT_UNARY_FLOAT, 0)

typedef enum etrt_unary_kind {
#define ETRT_UNARY_ENUM(kind, name, types, to_bool) ETRT_UNARY_##kind,
  ETRT_UNARY_OPS(ETRT_UNARY_ENUM)
#undef ETRT_UNARY_ENUM
      ETRT_UNARY_KIND_COUNT
} etrt_unary_kind;

/* Attributes, read once. alpha/beta/gamma hold each operation's ONNX attributes
 * of those names (Shrink: alpha = lambd, beta = bias); flags hold IsInf's
 * detect_negative (1) and detect_positive (2), and Gelu's approximate="tanh" (4). */
typedef struct etrt_unary_state {
  etrt_unary_kind kind;
  float alpha, beta, gamma;
  int32_t flags;
} etrt_unary_state;

#define ETRT_UNARY_DETECT_NEGATIVE 1
#define ETRT_UNARY_DETECT_POSITIVE 2
#define ETRT_UNARY_GELU_TANH 4

/* Clip's bounds: read at run time from its optional min/max inputs, or (opset < 11)
 * from its min/max attributes. */
typedef struct etrt_clip_state {
  int has_min_attribute, has_max_attribute;
  float min_attribute, max_attribute;
} etrt_clip_state;

etrt_status etrt_cpu_unary(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_clip(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
