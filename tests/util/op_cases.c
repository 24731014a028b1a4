/* The shared operator cases (op_cases.h; the runner is op_case_run.c). Every row of
 * an executor's table needs at least one case here; add an operator's cases under
 * its family. */
#include "op_cases.h"

#include <math.h>

/* Initializers of a co_value (the list is static data). */
#define CO_UNPAREN(...) __VA_ARGS__
#define CO_F32(rank_, dims_)                                                 \
  {                                                                          \
    .dtype = ETRT_DTYPE_FLOAT32, .rank = rank_, .dims = { CO_UNPAREN dims_ } \
  }
#define CO_POS(rank_, dims_) \
  { .dtype = ETRT_DTYPE_FLOAT32, .rank = rank_, .dims = {CO_UNPAREN dims_}, .fill = CO_POSITIVE }
#define CO_UNIT_F32(rank_, dims_) \
  { .dtype = ETRT_DTYPE_FLOAT32, .rank = rank_, .dims = {CO_UNPAREN dims_}, .fill = CO_UNIT }
#define CO_TYPED(dtype_, rank_, dims_)                           \
  {                                                              \
    .dtype = dtype_, .rank = rank_, .dims = { CO_UNPAREN dims_ } \
  }
#define CO_CONST_F32(rank_, dims_) \
  { .dtype = ETRT_DTYPE_FLOAT32, .rank = rank_, .dims = {CO_UNPAREN dims_}, .constant = 1 }
#define CO_CONST_POS(rank_, dims_)                                                         \
  {                                                                                        \
    .dtype = ETRT_DTYPE_FLOAT32, .rank = rank_, .dims = {CO_UNPAREN dims_}, .constant = 1, \
    .fill = CO_POSITIVE                                                                    \
  }
#define CO_CONST_I64(rank_, dims_, ...)                                                  \
  {                                                                                      \
    .dtype = ETRT_DTYPE_INT64, .rank = rank_, .dims = {CO_UNPAREN dims_}, .constant = 1, \
    .fill = CO_GIVEN, .data = (const int64_t[]) {                                        \
      __VA_ARGS__                                                                        \
    }                                                                                    \
  }
/* Values given in full: an input, or a constant of the network. */
#define CO_VALUES(dtype_, ctype, rank_, dims_, ...)                               \
  {                                                                               \
    .dtype = dtype_, .rank = rank_, .dims = {CO_UNPAREN dims_}, .fill = CO_GIVEN, \
    .data = (const ctype[]) {                                                     \
      __VA_ARGS__                                                                 \
    }                                                                             \
  }
#define CO_CONST_VALUES(dtype_, ctype, rank_, dims_, ...)                                        \
  {                                                                                              \
    .dtype = dtype_, .rank = rank_, .dims = {CO_UNPAREN dims_}, .constant = 1, .fill = CO_GIVEN, \
    .data = (const ctype[]) {                                                                    \
      __VA_ARGS__                                                                                \
    }                                                                                            \
  }
/* An empty constant: an optional input left out but with one after it (Resize's roi). */
#define CO_EMPTY(dtype_) \
  { .dtype = dtype_, .rank = 1, .dims = {0}, .constant = 1 }

#define CO_INT(n, v) \
  { .name = n, .kind = ETRT_ATTRIBUTE_INT, .i = v }
#define CO_FLOAT(n, v) \
  { .name = n, .kind = ETRT_ATTRIBUTE_FLOAT, .f = v }
#define CO_STRING(n, v) \
  { .name = n, .kind = ETRT_ATTRIBUTE_STRING, .s = v }
#define CO_INTS(n, count_, ...)                                                          \
  {                                                                                      \
    .name = n, .kind = ETRT_ATTRIBUTE_INTS, .count = count_, .ints = (const int64_t[]) { \
      __VA_ARGS__                                                                        \
    }                                                                                    \
  }

#define CO_IN(...) \
  (const co_value[]) { __VA_ARGS__ }
#define CO_ATTR(...) \
  (const etrt_attribute[]) { __VA_ARGS__ }
#define FP32 ETRT_PRECISION_FP32

static const int64_t co_seven = 7;
#define CO_SEVEN                                                \
  {                                                             \
    .name = "value", .kind = ETRT_ATTRIBUTE_TENSOR, .tensor = { \
      .data = (void *)&co_seven,                                \
      .dtype = ETRT_DTYPE_INT64,                                \
      .rank = 1,                                                \
      .sizes = {1}                                              \
    }                                                           \
  }

static const co_case co_list[] = {
    /* matmul */
    {"matmul linear fold", "MatMul", 2, CO_IN(CO_F32(4, (2, 3, 16, 32)), CO_F32(2, (32, 24))), 0,
     NULL, 1, 1e-4, FP32},
    {"matmul batched", "MatMul", 2, CO_IN(CO_F32(3, (4, 8, 16)), CO_F32(3, (4, 16, 8))), 0, NULL, 1,
     1e-4, FP32},
    {"matmul mixed broadcast", "MatMul", 2, CO_IN(CO_F32(4, (2, 1, 5, 7)), CO_F32(3, (3, 7, 6))), 0,
     NULL, 1, 1e-4, FP32},
    {"matmul broadcast left", "MatMul", 2, CO_IN(CO_F32(2, (5, 7)), CO_F32(3, (3, 7, 6))), 0, NULL,
     1, 1e-4, FP32},
    {"matmul vector", "MatMul", 2, CO_IN(CO_F32(1, (33)), CO_F32(2, (33, 9))), 0, NULL, 1, 1e-4,
     FP32},
    {"matmul matrix-vector", "MatMul", 2, CO_IN(CO_F32(3, (2, 9, 33)), CO_F32(1, (33))), 0, NULL, 1,
     1e-4, FP32},
    {"matmul constant weights", "MatMul", 2,
     CO_IN(CO_F32(2, (64, 128)), CO_CONST_F32(2, (128, 96))), 0, NULL, 1, 1e-4, FP32},
    /* TF32 keeps 10 mantissa bits: the relative norm difference stays near 5e-4. */
    {"matmul tf32", "MatMul", 2, CO_IN(CO_F32(2, (64, 256)), CO_F32(2, (256, 64))), 0, NULL, 1,
     5e-3, ETRT_PRECISION_TF32},
    /* gemm */
    {"gemm plain", "Gemm", 2, CO_IN(CO_F32(2, (17, 33)), CO_F32(2, (33, 9))), 0, NULL, 1, 1e-4,
     FP32},
    {"gemm transposed, bias row", "Gemm", 3,
     CO_IN(CO_F32(2, (33, 17)), CO_CONST_F32(2, (9, 33)), CO_CONST_F32(1, (9))), 4,
     CO_ATTR(CO_INT("transA", 1), CO_INT("transB", 1), CO_FLOAT("alpha", 0.5f),
             CO_FLOAT("beta", 2.0f)),
     1, 1e-4, FP32},
    {"gemm full bias", "Gemm", 3,
     CO_IN(CO_F32(2, (8, 16)), CO_F32(2, (16, 12)), CO_F32(2, (8, 12))), 0, NULL, 1, 1e-4, FP32},
    /* conv */
    {"conv 3x3 stride 2 pad 1 bias", "Conv", 3,
     CO_IN(CO_F32(4, (2, 3, 9, 9)), CO_CONST_F32(4, (4, 3, 3, 3)), CO_CONST_F32(1, (4))), 3,
     CO_ATTR(CO_INTS("kernel_shape", 2, 3, 3), CO_INTS("strides", 2, 2, 2),
             CO_INTS("pads", 4, 1, 1, 1, 1)),
     1, 1e-4, FP32},
    {"conv pointwise", "Conv", 3,
     CO_IN(CO_F32(4, (2, 8, 5, 5)), CO_CONST_F32(4, (6, 8, 1, 1)), CO_CONST_F32(1, (6))), 0, NULL,
     1, 1e-4, FP32},
    {"conv depthwise", "Conv", 2, CO_IN(CO_F32(4, (1, 4, 6, 6)), CO_CONST_F32(4, (4, 1, 3, 3))), 2,
     CO_ATTR(CO_INT("group", 4), CO_STRING("auto_pad", "SAME_UPPER")), 1, 1e-4, FP32},
    {"conv 1-d dilated", "Conv", 2, CO_IN(CO_F32(3, (2, 3, 20)), CO_CONST_F32(3, (5, 3, 3))), 1,
     CO_ATTR(CO_INTS("dilations", 1, 2)), 1, 1e-4, FP32},
    /* binary */
    {"Add", "Add", 2, CO_IN(CO_F32(3, (2, 3, 40)), CO_F32(2, (3, 1))), 0, NULL, 1, 1e-5, FP32},
    {"Sub", "Sub", 2, CO_IN(CO_F32(3, (2, 3, 40)), CO_F32(2, (3, 1))), 0, NULL, 1, 1e-5, FP32},
    {"Mul", "Mul", 2, CO_IN(CO_F32(3, (2, 3, 40)), CO_F32(2, (3, 1))), 0, NULL, 1, 1e-5, FP32},
    {"Div", "Div", 2, CO_IN(CO_F32(3, (2, 3, 40)), CO_F32(2, (3, 1))), 0, NULL, 1, 1e-5, FP32},
    {"Add int64", "Add", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (4, 5)), CO_TYPED(ETRT_DTYPE_INT64, 1, (5))), 0, NULL, 1,
     0, FP32},
    {"Pow", "Pow", 2, CO_IN(CO_POS(2, (4, 9)), CO_F32(1, (9))), 0, NULL, 1, 1e-5, FP32},
    {"Equal int32", "Equal", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 2, (6, 7)), CO_TYPED(ETRT_DTYPE_INT32, 2, (6, 7))), 0, NULL,
     1, 0, FP32},
    {"Less", "Less", 2, CO_IN(CO_F32(2, (6, 7)), CO_F32(1, (7))), 0, NULL, 1, 0, FP32},
    {"Where", "Where", 3,
     CO_IN(CO_TYPED(ETRT_DTYPE_BOOL, 2, (5, 1)), CO_F32(2, (5, 6)), CO_F32(1, (6))), 0, NULL, 1, 0,
     FP32},
    {"Max of three", "Max", 3, CO_IN(CO_F32(1, (6)), CO_F32(2, (4, 6)), CO_F32(2, (4, 1))), 0, NULL,
     1, 0, FP32},
    {"Mean of two", "Mean", 2, CO_IN(CO_F32(2, (4, 6)), CO_F32(2, (4, 6))), 0, NULL, 1, 1e-5, FP32},
    {"PRelu", "PRelu", 2, CO_IN(CO_F32(4, (2, 3, 4, 4)), CO_F32(3, (3, 1, 1))), 0, NULL, 1, 1e-5,
     FP32},
    /* unary */
    {"Exp", "Exp", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Tanh", "Tanh", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Sigmoid", "Sigmoid", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Erf", "Erf", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Relu", "Relu", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Abs", "Abs", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Neg", "Neg", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Softsign", "Softsign", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"HardSwish", "HardSwish", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Gelu", "Gelu", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Mish", "Mish", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Softplus", "Softplus", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Sin", "Sin", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Floor", "Floor", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Log", "Log", 1, CO_IN(CO_POS(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Sqrt", "Sqrt", 1, CO_IN(CO_POS(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"LeakyRelu", "LeakyRelu", 1, CO_IN(CO_F32(1, (100))), 1, CO_ATTR(CO_FLOAT("alpha", 0.1f)), 1,
     1e-5, FP32},
    {"Gelu tanh", "Gelu", 1, CO_IN(CO_F32(1, (100))), 1, CO_ATTR(CO_STRING("approximate", "tanh")),
     1, 1e-5, FP32},
    {"Abs int32", "Abs", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 1, (50))), 0, NULL, 1, 0, FP32},
    {"Not", "Not", 1, CO_IN(CO_TYPED(ETRT_DTYPE_BOOL, 1, (50))), 0, NULL, 1, 0, FP32},
    {"Clip", "Clip", 3, CO_IN(CO_F32(2, (5, 20)), CO_CONST_F32(0, (0)), CO_CONST_F32(0, (0))), 0,
     NULL, 1, 0, FP32},
    {"Cast to int32", "Cast", 1, CO_IN(CO_F32(2, (5, 20))), 1, CO_ATTR(CO_INT("to", 6)), 1, 0,
     FP32},
    {"Cast to float16", "Cast", 1, CO_IN(CO_F32(2, (5, 20))), 1, CO_ATTR(CO_INT("to", 10)), 1, 0,
     FP32},
    {"Cast int64 to float", "Cast", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 1, (30))), 1,
     CO_ATTR(CO_INT("to", 1)), 1, 0, FP32},
    /* softmax */
    {"Softmax rows", "Softmax", 1, CO_IN(CO_F32(2, (4, 300))), 0, NULL, 1, 1e-5, FP32},
    {"Softmax axis 1", "Softmax", 1, CO_IN(CO_F32(3, (2, 5, 7))), 1, CO_ATTR(CO_INT("axis", 1)), 1,
     1e-5, FP32},
    {"LogSoftmax", "LogSoftmax", 1, CO_IN(CO_F32(2, (6, 37))), 0, NULL, 1, 1e-5, FP32},
    {"Hardmax", "Hardmax", 1, CO_IN(CO_F32(2, (6, 37))), 0, NULL, 1, 0, FP32},
    /* reduce */
    {"ReduceMean middle axis", "ReduceMean", 1, CO_IN(CO_F32(3, (3, 50, 7))), 1,
     CO_ATTR(CO_INTS("axes", 1, 1)), 1, 1e-5, FP32},
    {"ReduceSum last axis", "ReduceSum", 1, CO_IN(CO_F32(2, (6, 300))), 2,
     CO_ATTR(CO_INTS("axes", 1, -1), CO_INT("keepdims", 0)), 1, 1e-5, FP32},
    {"ReduceMax all", "ReduceMax", 1, CO_IN(CO_F32(3, (4, 5, 6))), 0, NULL, 1, 0, FP32},
    {"ReduceLogSumExp", "ReduceLogSumExp", 1, CO_IN(CO_F32(3, (4, 5, 6))), 1,
     CO_ATTR(CO_INTS("axes", 2, 0, 2)), 1, 1e-5, FP32},
    {"ReduceL2", "ReduceL2", 1, CO_IN(CO_F32(2, (9, 40))), 1, CO_ATTR(CO_INTS("axes", 1, 1)), 1,
     1e-5, FP32},
    /* normalization */
    {"LayerNormalization", "LayerNormalization", 3,
     CO_IN(CO_F32(3, (2, 4, 64)), CO_CONST_F32(1, (64)), CO_CONST_F32(1, (64))), 0, NULL, 1, 1e-5,
     FP32},
    {"BatchNormalization", "BatchNormalization", 5,
     CO_IN(
         CO_F32(4, (2, 3, 4, 4)), CO_CONST_F32(1, (3)), CO_CONST_F32(1, (3)), CO_CONST_F32(1, (3)),
         {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {3}, .constant = 1, .fill = CO_POSITIVE}),
     0, NULL, 1, 1e-5, FP32},
    {"InstanceNormalization", "InstanceNormalization", 3,
     CO_IN(CO_F32(4, (2, 3, 5, 5)), CO_CONST_F32(1, (3)), CO_CONST_F32(1, (3))), 0, NULL, 1, 1e-5,
     FP32},
    {"GroupNormalization", "GroupNormalization", 3,
     CO_IN(CO_F32(4, (2, 6, 4, 4)), CO_CONST_F32(1, (6)), CO_CONST_F32(1, (6))), 1,
     CO_ATTR(CO_INT("num_groups", 3)), 1, 1e-5, FP32},
    /* pool */
    {"MaxPool", "MaxPool", 1, CO_IN(CO_F32(4, (2, 3, 9, 9))), 3,
     CO_ATTR(CO_INTS("kernel_shape", 2, 3, 3), CO_INTS("strides", 2, 2, 2),
             CO_INTS("pads", 4, 1, 1, 1, 1)),
     1, 0, FP32},
    {"AveragePool count_include_pad", "AveragePool", 1, CO_IN(CO_F32(4, (2, 3, 7, 7))), 3,
     CO_ATTR(CO_INTS("kernel_shape", 2, 2, 2), CO_INTS("pads", 4, 1, 1, 0, 0),
             CO_INT("count_include_pad", 1)),
     1, 1e-5, FP32},
    {"GlobalAveragePool", "GlobalAveragePool", 1, CO_IN(CO_F32(4, (2, 5, 7, 7))), 0, NULL, 1, 1e-5,
     FP32},
    /* layout */
    {"Transpose", "Transpose", 1, CO_IN(CO_F32(3, (2, 3, 4))), 1,
     CO_ATTR(CO_INTS("perm", 3, 0, 2, 1)), 1, 0, FP32},
    {"Concat", "Concat", 3, CO_IN(CO_F32(3, (2, 3, 4)), CO_F32(3, (2, 1, 4)), CO_F32(3, (2, 5, 4))),
     1, CO_ATTR(CO_INT("axis", 1)), 1, 0, FP32},
    {"Slice", "Slice", 5,
     CO_IN(CO_F32(3, (4, 10, 6)), CO_CONST_I64(1, (2), 1, 8), CO_CONST_I64(1, (2), 4, 1),
           CO_CONST_I64(1, (2), 0, 1), CO_CONST_I64(1, (2), 2, -3)),
     0, NULL, 1, 0, FP32},
    {"Gather", "Gather", 2, CO_IN(CO_F32(3, (5, 4, 3)), CO_CONST_I64(2, (2, 2), 4, -1, 0, 2)), 1,
     CO_ATTR(CO_INT("axis", 0)), 1, 0, FP32},
    {"Expand", "Expand", 2, CO_IN(CO_F32(2, (3, 1)), CO_CONST_I64(1, (3), 2, 3, 4)), 0, NULL, 1, 0,
     FP32},
    {"Reshape", "Reshape", 2, CO_IN(CO_F32(3, (2, 3, 4)), CO_CONST_I64(1, (2), 6, -1)), 0, NULL, 1,
     0, FP32},
    {"Split", "Split", 1, CO_IN(CO_F32(2, (4, 9))), 1, CO_ATTR(CO_INT("axis", 1)), 3, 0, FP32},
    {"Tile", "Tile", 2, CO_IN(CO_F32(2, (2, 3)), CO_CONST_I64(1, (2), 3, 2)), 0, NULL, 1, 0, FP32},
    /* conv transpose */
    {"ConvTranspose stride 2 pads output_padding bias", "ConvTranspose", 3,
     CO_IN(CO_F32(4, (2, 4, 5, 5)), CO_CONST_F32(4, (4, 3, 3, 3)), CO_CONST_F32(1, (3))), 3,
     CO_ATTR(CO_INTS("strides", 2, 2, 2), CO_INTS("pads", 4, 1, 1, 1, 1),
             CO_INTS("output_padding", 2, 1, 1)),
     1, 1e-4, FP32},
    {"ConvTranspose 1-d grouped dilated", "ConvTranspose", 2,
     CO_IN(CO_F32(3, (2, 4, 7)), CO_CONST_F32(3, (4, 3, 3))), 3,
     CO_ATTR(CO_INT("group", 2), CO_INTS("dilations", 1, 2), CO_INTS("strides", 1, 3)), 1, 1e-4,
     FP32},
    {"ConvTranspose SAME_UPPER", "ConvTranspose", 2,
     CO_IN(CO_F32(4, (1, 2, 4, 4)), CO_CONST_F32(4, (2, 2, 3, 3))), 2,
     CO_ATTR(CO_STRING("auto_pad", "SAME_UPPER"), CO_INTS("strides", 2, 2, 2)), 1, 1e-4, FP32},
    {"ConvTranspose output_shape", "ConvTranspose", 2,
     CO_IN(CO_F32(4, (1, 3, 3, 3)), CO_CONST_F32(4, (3, 2, 3, 3))), 2,
     CO_ATTR(CO_INTS("strides", 2, 3, 2), CO_INTS("output_shape", 2, 10, 8)), 1, 1e-4, FP32},
    /* pad */
    {"Pad constant input", "Pad", 3,
     CO_IN(CO_F32(3, (2, 3, 4)), CO_CONST_I64(1, (6), 0, 1, 2, 1, 0, 3), CO_CONST_F32(0, (0))), 0,
     NULL, 1, 0, FP32},
    {"Pad reflect", "Pad", 2, CO_IN(CO_F32(3, (2, 5, 6)), CO_CONST_I64(1, (6), 0, 2, 3, 0, 4, 5)),
     1, CO_ATTR(CO_STRING("mode", "reflect")), 1, 0, FP32},
    {"Pad edge with crops", "Pad", 2,
     CO_IN(CO_F32(3, (2, 5, 6)), CO_CONST_I64(1, (6), 0, -1, 2, 0, 3, -2)), 1,
     CO_ATTR(CO_STRING("mode", "edge")), 1, 0, FP32},
    {"Pad int64 zero", "Pad", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 4)), CO_CONST_I64(1, (4), 1, 0, 2, 3)), 0, NULL, 1, 0,
     FP32},
    /* resize */
    {"Resize nearest round_prefer_ceil scales", "Resize", 3,
     CO_IN(CO_F32(4, (1, 2, 3, 4)), CO_EMPTY(ETRT_DTYPE_FLOAT32),
           CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (4), 1.0f, 1.0f, 2.0f, 1.5f)),
     1, CO_ATTR(CO_STRING("nearest_mode", "round_prefer_ceil")), 1, 0, FP32},
    {"Upsample nearest int64", "Upsample", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 4, (1, 2, 3, 3)),
           CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (4), 1.0f, 1.0f, 2.0f, 3.0f)),
     0, NULL, 1, 0, FP32},
    {"Resize linear half_pixel sizes", "Resize", 4,
     CO_IN(CO_F32(4, (1, 2, 5, 6)), CO_EMPTY(ETRT_DTYPE_FLOAT32), CO_EMPTY(ETRT_DTYPE_FLOAT32),
           CO_CONST_I64(1, (4), 1, 2, 8, 9)),
     1, CO_ATTR(CO_STRING("mode", "linear")), 1, 1e-5, FP32},
    /* 710 taps of 72 bytes: the table goes up in several launches */
    {"Resize linear large", "Resize", 4,
     CO_IN(CO_F32(4, (1, 2, 37, 41)), CO_EMPTY(ETRT_DTYPE_FLOAT32), CO_EMPTY(ETRT_DTYPE_FLOAT32),
           CO_CONST_I64(1, (4), 1, 2, 300, 410)),
     1, CO_ATTR(CO_STRING("mode", "linear")), 1, 1e-5, FP32},
    {"Resize cubic align_corners scales", "Resize", 3,
     CO_IN(CO_F32(4, (1, 1, 6, 7)), CO_EMPTY(ETRT_DTYPE_FLOAT32),
           CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (4), 1.0f, 1.0f, 1.5f, 0.6f)),
     2,
     CO_ATTR(CO_STRING("mode", "cubic"),
             CO_STRING("coordinate_transformation_mode", "align_corners")),
     1, 1e-5, FP32},
    {"Resize cubic pytorch_half_pixel exclude_outside", "Resize", 3,
     CO_IN(CO_F32(3, (2, 9, 5)), CO_EMPTY(ETRT_DTYPE_FLOAT32),
           CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (3), 1.0f, 0.5f, 2.0f)),
     3,
     CO_ATTR(CO_STRING("mode", "cubic"), CO_INT("exclude_outside", 1),
             CO_STRING("coordinate_transformation_mode", "pytorch_half_pixel")),
     1, 1e-5, FP32},
    /* selection */
    {"ArgMax axis 1", "ArgMax", 1, CO_IN(CO_F32(3, (3, 5, 7))), 2,
     CO_ATTR(CO_INT("axis", 1), CO_INT("keepdims", 0)), 1, 0, FP32},
    {"ArgMin int32 last index", "ArgMin", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 2, (6, 20))), 2,
     CO_ATTR(CO_INT("axis", -1), CO_INT("select_last_index", 1)), 1, 0, FP32},
    {"TopK largest axis 1", "TopK", 2, CO_IN(CO_F32(3, (4, 9, 6)), CO_CONST_I64(1, (1), 3)), 1,
     CO_ATTR(CO_INT("axis", 1)), 2, 0, FP32},
    {"TopK smallest int64 ties", "TopK", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (5, 20)), CO_CONST_I64(1, (1), 6)), 1,
     CO_ATTR(CO_INT("largest", 0)), 2, 0, FP32},
    /* cumsum */
    {"CumSum axis 1", "CumSum", 2, CO_IN(CO_F32(3, (3, 40, 5)), CO_CONST_I64(0, (0), 1)), 0, NULL,
     1, 1e-5, FP32},
    {"CumSum exclusive reverse int32", "CumSum", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 2, (4, 30)),
           CO_CONST_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (1), -1)),
     2, CO_ATTR(CO_INT("exclusive", 1), CO_INT("reverse", 1)), 1, 0, FP32},
    /* trilu */
    {"Trilu upper k 1", "Trilu", 2, CO_IN(CO_F32(3, (2, 5, 6)), CO_CONST_I64(0, (0), 1)), 0, NULL,
     1, 0, FP32},
    {"Trilu lower k -1 int64", "Trilu", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (6, 4)), CO_CONST_I64(0, (0), -1)), 1,
     CO_ATTR(CO_INT("upper", 0)), 1, 0, FP32},
    /* indexing */
    {"GatherElements axis 1", "GatherElements", 2,
     CO_IN(CO_F32(2, (3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (3, 5), 0, 3, -1, 2, 1, -4, 1,
                                        1, 0, 3, 2, 2, -2, 0, 1)),
     1, CO_ATTR(CO_INT("axis", 1)), 1, 0, FP32},
    {"GatherElements int32 axis 0", "GatherElements", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 4)),
           CO_VALUES(ETRT_DTYPE_INT32, int32_t, 2, (2, 3), 2, 0, 1, -1, 1, 0)),
     0, NULL, 1, 0, FP32},
    {"GatherND", "GatherND", 2,
     CO_IN(CO_F32(3, (2, 3, 4)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (3, 2), 0, 1, 1, -1, 1, 0)),
     0, NULL, 1, 0, FP32},
    {"GatherND batch_dims 1", "GatherND", 2,
     CO_IN(CO_F32(3, (2, 3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 3, (2, 2, 1), 2, 0, 1, -1)),
     1, CO_ATTR(CO_INT("batch_dims", 1)), 1, 0, FP32},
    {"ScatterElements duplicates", "ScatterElements", 3,
     CO_IN(CO_F32(2, (3, 4)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 4), 0, 2, 1, 1, 0, -1, 1, 2),
           CO_F32(2, (2, 4))),
     0, NULL, 1, 0, FP32},
    {"ScatterElements add int64 axis 1", "ScatterElements", 3,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 4)),
           CO_VALUES(ETRT_DTYPE_INT32, int32_t, 2, (3, 3), 0, 0, 3, 1, 1, 1, 2, -1, 2),
           CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 3))),
     2, CO_ATTR(CO_INT("axis", 1), CO_STRING("reduction", "add")), 1, 0, FP32},
    {"ScatterElements max", "ScatterElements", 3,
     CO_IN(CO_F32(2, (3, 4)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 4), 2, 2, 0, 1, 2, 0, 0, 1),
           CO_F32(2, (2, 4))),
     1, CO_ATTR(CO_STRING("reduction", "max")), 1, 0, FP32},
    {"Scatter", "Scatter", 3,
     CO_IN(CO_F32(2, (4, 3)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 3), 3, 0, 1, 1, 2, 3),
           CO_F32(2, (2, 3))),
     0, NULL, 1, 0, FP32},
    {"ScatterND slices", "ScatterND", 3,
     CO_IN(CO_F32(3, (4, 3, 2)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 1), 2, -4),
           CO_F32(3, (2, 3, 2))),
     0, NULL, 1, 0, FP32},
    {"ScatterND add duplicates int32 indices", "ScatterND", 3,
     CO_IN(CO_F32(2, (3, 4)), CO_VALUES(ETRT_DTYPE_INT32, int32_t, 2, (3, 2), 0, 1, 2, 3, 0, 1),
           CO_F32(1, (3))),
     1, CO_ATTR(CO_STRING("reduction", "add")), 1, 1e-6, FP32},
    {"ScatterND max int64", "ScatterND", 3,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 4)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 1), 1, 1),
           CO_TYPED(ETRT_DTYPE_INT64, 2, (2, 4))),
     1, CO_ATTR(CO_STRING("reduction", "max")), 1, 0, FP32},
    {"ScatterND min", "ScatterND", 3,
     CO_IN(CO_F32(2, (3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 1), 2, 2),
           CO_F32(2, (2, 4))),
     1, CO_ATTR(CO_STRING("reduction", "min")), 1, 0, FP32},
    {"ScatterND mul", "ScatterND", 3,
     CO_IN(CO_F32(2, (3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 2), 0, 0, 0, 0),
           CO_F32(1, (2))),
     1, CO_ATTR(CO_STRING("reduction", "mul")), 1, 1e-6, FP32},
    {"OneHot last axis, out-of-range off", "OneHot", 3,
     CO_IN(CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 3), 0, 3, -1, 5, 2, -6),
           CO_CONST_I64(1, (1), 5), CO_CONST_F32(1, (2))),
     0, NULL, 1, 0, FP32},
    {"OneHot float indices axis 0", "OneHot", 3,
     CO_IN(CO_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (4), 1.7f, -1.2f, 3.0f, 0.0f),
           CO_CONST_I64(0, (0), 4), CO_CONST_I64(1, (2), 0, 9)),
     1, CO_ATTR(CO_INT("axis", 0)), 1, 0, FP32},
    /* generators */
    {"Range float", "Range", 3,
     CO_IN(CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 0, (0), 0.5f),
           CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 0, (0), 7.3f),
           CO_CONST_VALUES(ETRT_DTYPE_FLOAT32, float, 0, (0), 0.25f)),
     0, NULL, 1, 0, FP32},
    {"Range int32 down", "Range", 3,
     CO_IN(CO_CONST_VALUES(ETRT_DTYPE_INT32, int32_t, 0, (0), 10),
           CO_CONST_VALUES(ETRT_DTYPE_INT32, int32_t, 0, (0), -7),
           CO_CONST_VALUES(ETRT_DTYPE_INT32, int32_t, 0, (0), -3)),
     0, NULL, 1, 0, FP32},
    {"ConstantOfShape int64 7", "ConstantOfShape", 1, CO_IN(CO_CONST_I64(1, (3), 2, 3, 4)), 1,
     CO_ATTR(CO_SEVEN), 1, 0, FP32},
    {"ConstantOfShape default zeros", "ConstantOfShape", 1, CO_IN(CO_CONST_I64(1, (2), 5, 6)), 0,
     NULL, 1, 0, FP32},
    /* binary more */
    {"BitShift left uint32", "BitShift", 2,
     CO_IN(CO_VALUES(ETRT_DTYPE_UINT32, uint32_t, 1, (6), 1, 7, 0xffffffffu, 12, 5, 9),
           CO_VALUES(ETRT_DTYPE_UINT32, uint32_t, 1, (6), 0, 3, 4, 31, 32, 70)),
     1, CO_ATTR(CO_STRING("direction", "LEFT")), 1, 0, FP32},
    {"BitShift right uint8 broadcast", "BitShift", 2,
     CO_IN(CO_VALUES(ETRT_DTYPE_UINT8, uint8_t, 2, (2, 3), 255, 128, 7, 16, 3, 200),
           CO_VALUES(ETRT_DTYPE_UINT8, uint8_t, 1, (3), 1, 7, 9)),
     1, CO_ATTR(CO_STRING("direction", "RIGHT")), 1, 0, FP32},
    {"Pow float ** int64", "Pow", 2, CO_IN(CO_POS(2, (4, 9)), CO_TYPED(ETRT_DTYPE_INT64, 1, (9))),
     0, NULL, 1, 1e-5, FP32},
    {"Pow int64 ** float", "Pow", 2,
     CO_IN(CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (4), 1, 2, 3, -2),
           CO_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (4), 4.0f, 5.0f, 6.0f, 3.0f)),
     0, NULL, 1, 0, FP32},
    {"Pow int64", "Pow", 2,
     CO_IN(CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (6), 2, -3, 1, -1, 5, 0),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (6), 3, 3, -2, -3, -1, 0)),
     0, NULL, 1, 0, FP32},
    {"CastLike", "CastLike", 2, CO_IN(CO_F32(2, (5, 20)), CO_TYPED(ETRT_DTYPE_INT32, 1, (1))), 0,
     NULL, 1, 0, FP32},
    /* loss */
    {"NegativeLogLikelihoodLoss mean weight ignore", "NegativeLogLikelihoodLoss", 3,
     CO_IN(
         CO_F32(3, (3, 5, 4)),
         CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (3, 4), 0, 4, 2, 1, 3, 3, 0, 2, 4, 1, 1, 0),
         {.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {5}, .constant = 1, .fill = CO_POSITIVE}),
     1, CO_ATTR(CO_INT("ignore_index", 3)), 1, 1e-5, FP32},
    {"NegativeLogLikelihoodLoss none int32", "NegativeLogLikelihoodLoss", 2,
     CO_IN(CO_F32(2, (6, 4)), CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (6), 0, 3, 2, 1, 3, 0)), 1,
     CO_ATTR(CO_STRING("reduction", "none")), 1, 1e-5, FP32},
    {"SoftmaxCrossEntropyLoss sum with log_prob", "SoftmaxCrossEntropyLoss", 2,
     CO_IN(CO_F32(3, (3, 5, 4)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (3, 4), 0, 4, 2, 1, 3, 3, 0, 2, 4, 1, 1, 0)),
     1, CO_ATTR(CO_STRING("reduction", "sum")), 2, 1e-5, FP32},
    {"SoftmaxCrossEntropyLoss mean", "SoftmaxCrossEntropyLoss", 2,
     CO_IN(CO_F32(2, (8, 10)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (8), 9, 0, 3, 3, 7, 1, 2, 5)),
     0, NULL, 1, 1e-5, FP32},
    /* one-input elementwise, the rest of the family */
    {"Ceil", "Ceil", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 0, FP32},
    {"Round", "Round", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 0, FP32},
    {"Reciprocal", "Reciprocal", 1, CO_IN(CO_POS(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Cos", "Cos", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Tan", "Tan", 1, CO_IN(CO_UNIT_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Asin", "Asin", 1, CO_IN(CO_UNIT_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Acos", "Acos", 1, CO_IN(CO_UNIT_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Atan", "Atan", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Sinh", "Sinh", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Cosh", "Cosh", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Asinh", "Asinh", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    /* values below 1 give NaN on both sides */
    {"Acosh", "Acosh", 1, CO_IN(CO_POS(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Atanh", "Atanh", 1, CO_IN(CO_UNIT_F32(2, (7, 33))), 0, NULL, 1, 1e-5, FP32},
    {"Sign", "Sign", 1, CO_IN(CO_F32(2, (7, 33))), 0, NULL, 1, 0, FP32},
    {"Sign int64", "Sign", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 1, (40))), 0, NULL, 1, 0, FP32},
    {"IsNaN", "IsNaN", 1,
     CO_IN(CO_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (4), 1.0f, NAN, -INFINITY, 0.0f)), 0, NULL, 1, 0,
     FP32},
    {"IsInf negative only", "IsInf", 1,
     CO_IN(CO_VALUES(ETRT_DTYPE_FLOAT32, float, 1, (5), 1.0f, NAN, -INFINITY, INFINITY, 0.0f)), 1,
     CO_ATTR(CO_INT("detect_positive", 0)), 1, 0, FP32},
    {"Identity int64", "Identity", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 5))), 0, NULL, 1, 0,
     FP32},
    {"BitwiseNot int32", "BitwiseNot", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 1, (40))), 0, NULL, 1, 0,
     FP32},
    {"HardSigmoid", "HardSigmoid", 1, CO_IN(CO_F32(1, (100))), 2,
     CO_ATTR(CO_FLOAT("alpha", 0.3f), CO_FLOAT("beta", 0.4f)), 1, 1e-5, FP32},
    {"Elu", "Elu", 1, CO_IN(CO_F32(1, (100))), 1, CO_ATTR(CO_FLOAT("alpha", 0.7f)), 1, 1e-5, FP32},
    {"Selu", "Selu", 1, CO_IN(CO_F32(1, (100))), 0, NULL, 1, 1e-5, FP32},
    {"Celu", "Celu", 1, CO_IN(CO_F32(1, (100))), 1, CO_ATTR(CO_FLOAT("alpha", 1.5f)), 1, 1e-5,
     FP32},
    {"ThresholdedRelu", "ThresholdedRelu", 1, CO_IN(CO_F32(1, (100))), 1,
     CO_ATTR(CO_FLOAT("alpha", 0.5f)), 1, 0, FP32},
    {"Shrink", "Shrink", 1, CO_IN(CO_F32(1, (100))), 2,
     CO_ATTR(CO_FLOAT("lambd", 0.8f), CO_FLOAT("bias", 0.25f)), 1, 1e-5, FP32},
    /* reductions, the rest of the family */
    {"ReduceMin int32", "ReduceMin", 1, CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 3, (4, 5, 6))), 1,
     CO_ATTR(CO_INTS("axes", 1, 1)), 1, 0, FP32},
    {"ReduceProd", "ReduceProd", 1, CO_IN(CO_UNIT_F32(2, (6, 9))), 1,
     CO_ATTR(CO_INTS("axes", 1, 1)), 1, 1e-5, FP32},
    {"ReduceL1", "ReduceL1", 1, CO_IN(CO_F32(3, (3, 8, 5))), 1, CO_ATTR(CO_INTS("axes", 2, 0, 2)),
     1, 1e-5, FP32},
    {"ReduceLogSum", "ReduceLogSum", 1, CO_IN(CO_POS(2, (6, 40))), 1,
     CO_ATTR(CO_INTS("axes", 1, -1)), 1, 1e-5, FP32},
    {"ReduceSumSquare keepdims 0", "ReduceSumSquare", 1, CO_IN(CO_F32(3, (2, 7, 9))), 2,
     CO_ATTR(CO_INTS("axes", 1, 1), CO_INT("keepdims", 0)), 1, 1e-5, FP32},
    /* two broadcast inputs, the rest of the family */
    {"Mod fmod", "Mod", 2, CO_IN(CO_F32(2, (4, 9)), CO_POS(1, (9))), 1, CO_ATTR(CO_INT("fmod", 1)),
     1, 1e-5, FP32},
    {"Mod int32", "Mod", 2,
     CO_IN(CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (6), 7, -7, 5, -5, 9, 0),
           CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (6), 3, 3, -2, -2, 4, 5)),
     0, NULL, 1, 0, FP32},
    {"BitwiseAnd int32", "BitwiseAnd", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT32, 2, (4, 6)), CO_TYPED(ETRT_DTYPE_INT32, 1, (6))), 0, NULL, 1,
     0, FP32},
    {"BitwiseOr uint8", "BitwiseOr", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_UINT8, 2, (4, 6)), CO_TYPED(ETRT_DTYPE_UINT8, 2, (4, 6))), 0, NULL,
     1, 0, FP32},
    {"BitwiseXor int64", "BitwiseXor", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (4, 6)), CO_TYPED(ETRT_DTYPE_INT64, 2, (4, 1))), 0, NULL,
     1, 0, FP32},
    {"And", "And", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_BOOL, 2, (5, 6)), CO_TYPED(ETRT_DTYPE_BOOL, 1, (6))), 0, NULL, 1, 0,
     FP32},
    {"Or", "Or", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_BOOL, 2, (5, 6)), CO_TYPED(ETRT_DTYPE_BOOL, 2, (5, 6))), 0, NULL, 1,
     0, FP32},
    {"Xor", "Xor", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_BOOL, 2, (5, 6)), CO_TYPED(ETRT_DTYPE_BOOL, 2, (5, 1))), 0, NULL, 1,
     0, FP32},
    {"Greater", "Greater", 2, CO_IN(CO_F32(2, (6, 7)), CO_F32(1, (7))), 0, NULL, 1, 0, FP32},
    {"LessOrEqual int64", "LessOrEqual", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (6, 7)), CO_TYPED(ETRT_DTYPE_INT64, 1, (7))), 0, NULL, 1,
     0, FP32},
    {"GreaterOrEqual", "GreaterOrEqual", 2, CO_IN(CO_F32(2, (6, 7)), CO_F32(2, (6, 7))), 0, NULL, 1,
     0, FP32},
    {"Min of two", "Min", 2, CO_IN(CO_F32(2, (4, 6)), CO_F32(1, (6))), 0, NULL, 1, 0, FP32},
    {"Sum of three", "Sum", 3, CO_IN(CO_F32(2, (4, 6)), CO_F32(1, (6)), CO_F32(2, (4, 1))), 0, NULL,
     1, 1e-5, FP32},
    /* normalization, windows */
    {"LpNormalization p 1", "LpNormalization", 1, CO_IN(CO_F32(3, (2, 5, 7))), 2,
     CO_ATTR(CO_INT("axis", 1), CO_INT("p", 1)), 1, 1e-5, FP32},
    {"LpPool p 2", "LpPool", 1, CO_IN(CO_F32(4, (2, 3, 7, 7))), 2,
     CO_ATTR(CO_INTS("kernel_shape", 2, 3, 3), CO_INT("p", 2)), 1, 1e-5, FP32},
    {"GlobalMaxPool", "GlobalMaxPool", 1, CO_IN(CO_F32(4, (2, 5, 6, 7))), 0, NULL, 1, 0, FP32},
    {"GlobalLpPool", "GlobalLpPool", 1, CO_IN(CO_F32(3, (2, 5, 9))), 1, CO_ATTR(CO_INT("p", 3)), 1,
     1e-5, FP32},
    /* data movement, the rest of the family */
    {"Flatten axis 2", "Flatten", 1, CO_IN(CO_F32(4, (2, 3, 4, 5))), 1, CO_ATTR(CO_INT("axis", 2)),
     1, 0, FP32},
    {"Squeeze", "Squeeze", 2, CO_IN(CO_F32(4, (2, 1, 4, 1)), CO_CONST_I64(1, (2), 1, -1)), 0, NULL,
     1, 0, FP32},
    {"Unsqueeze", "Unsqueeze", 2, CO_IN(CO_F32(2, (3, 4)), CO_CONST_I64(1, (2), 0, 3)), 0, NULL, 1,
     0, FP32},
    {"DepthToSpace CRD", "DepthToSpace", 1, CO_IN(CO_F32(4, (2, 8, 3, 2))), 2,
     CO_ATTR(CO_INT("blocksize", 2), CO_STRING("mode", "CRD")), 1, 0, FP32},
    {"DepthToSpace DCR", "DepthToSpace", 1, CO_IN(CO_F32(4, (1, 12, 2, 3))), 1,
     CO_ATTR(CO_INT("blocksize", 2)), 1, 0, FP32},
    {"SpaceToDepth", "SpaceToDepth", 1, CO_IN(CO_F32(4, (2, 3, 4, 6))), 1,
     CO_ATTR(CO_INT("blocksize", 2)), 1, 0, FP32},
    {"Shape sliced", "Shape", 1, CO_IN(CO_F32(4, (2, 3, 4, 5))), 2,
     CO_ATTR(CO_INT("start", 1), CO_INT("end", -1)), 1, 0, FP32},
    {"Size", "Size", 1, CO_IN(CO_F32(3, (2, 3, 4))), 0, NULL, 1, 0, FP32},
    {"ReverseSequence time-major", "ReverseSequence", 2,
     CO_IN(CO_F32(3, (4, 3, 5)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (3), 4, 1, 2)), 0, NULL, 1,
     0, FP32},
    {"ReverseSequence batch-major int64", "ReverseSequence", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (3, 6)), CO_CONST_I64(1, (3), 6, 0, 3)), 2,
     CO_ATTR(CO_INT("time_axis", 1), CO_INT("batch_axis", 0)), 1, 0, FP32},
    /* recurrent: X [seq, batch, input], W, R, B, sequence_lens, initial_h (, initial_c, P) */
    {"RNN forward defaults", "RNN", 3,
     CO_IN(CO_UNIT_F32(3, (4, 2, 3)), CO_UNIT_F32(3, (1, 5, 3)), CO_UNIT_F32(3, (1, 5, 5))), 1,
     CO_ATTR(CO_INT("hidden_size", 5)), 2, 1e-4, FP32},
    {"RNN bidirectional Relu clip lens", "RNN", 6,
     CO_IN(CO_UNIT_F32(3, (3, 2, 3)), CO_UNIT_F32(3, (2, 4, 3)), CO_UNIT_F32(3, (2, 4, 4)),
           CO_UNIT_F32(2, (2, 8)), CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (2), 3, 2),
           CO_UNIT_F32(3, (2, 2, 4))),
     4,
     CO_ATTR(CO_INT("hidden_size", 4), CO_STRING("direction", "bidirectional"),
             CO_STRING("activations", "Relu,Tanh"), CO_FLOAT("clip", 1.5f)),
     2, 1e-4, FP32},
    {"GRU bidirectional lens", "GRU", 6,
     CO_IN(CO_UNIT_F32(3, (4, 3, 2)), CO_UNIT_F32(3, (2, 9, 2)), CO_UNIT_F32(3, (2, 9, 3)),
           CO_UNIT_F32(2, (2, 18)), CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (3), 4, 1, 3),
           CO_UNIT_F32(3, (2, 3, 3))),
     2, CO_ATTR(CO_INT("hidden_size", 3), CO_STRING("direction", "bidirectional")), 2, 1e-4, FP32},
    {"GRU reverse linear_before_reset layout 1", "GRU", 4,
     CO_IN(CO_UNIT_F32(3, (2, 3, 4)), CO_UNIT_F32(3, (1, 12, 4)), CO_UNIT_F32(3, (1, 12, 4)),
           CO_UNIT_F32(2, (1, 24))),
     4,
     CO_ATTR(CO_INT("hidden_size", 4), CO_STRING("direction", "reverse"),
             CO_INT("linear_before_reset", 1), CO_INT("layout", 1)),
     2, 1e-4, FP32},
    {"LSTM peepholes lens states", "LSTM", 8,
     CO_IN(CO_UNIT_F32(3, (3, 2, 3)), CO_UNIT_F32(3, (1, 16, 3)), CO_UNIT_F32(3, (1, 16, 4)),
           CO_UNIT_F32(2, (1, 32)), CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (2), 2, 3),
           CO_UNIT_F32(3, (1, 2, 4)), CO_UNIT_F32(3, (1, 2, 4)), CO_UNIT_F32(2, (1, 12))),
     1, CO_ATTR(CO_INT("hidden_size", 4)), 3, 1e-4, FP32},
    {"LSTM bidirectional layout 1", "LSTM", 3,
     CO_IN(CO_UNIT_F32(3, (2, 5, 3)), CO_UNIT_F32(3, (2, 8, 3)), CO_UNIT_F32(3, (2, 8, 2))), 3,
     CO_ATTR(CO_INT("hidden_size", 2), CO_STRING("direction", "bidirectional"),
             CO_INT("layout", 1)),
     3, 1e-4, FP32},
    {"Einsum batch matmul", "Einsum", 2, CO_IN(CO_F32(3, (2, 3, 4)), CO_F32(3, (2, 4, 5))), 1,
     CO_ATTR(CO_STRING("equation", "bij,bjk->bik")), 1, 1e-5, FP32},
    {"Einsum ellipsis broadcast implicit", "Einsum", 2,
     CO_IN(CO_F32(3, (2, 1, 3)), CO_F32(3, (4, 3, 2))), 1,
     CO_ATTR(CO_STRING("equation", "...j,...jk")), 1, 1e-5, FP32},
    {"Einsum trace float64", "Einsum", 1, CO_IN(CO_TYPED(ETRT_DTYPE_FLOAT64, 3, (2, 4, 4))), 1,
     CO_ATTR(CO_STRING("equation", "bii->b")), 1, 1e-12, FP32},
    {"Einsum three inputs", "Einsum", 3,
     CO_IN(CO_F32(2, (3, 4)), CO_F32(1, (4)), CO_F32(2, (4, 2))), 1,
     CO_ATTR(CO_STRING("equation", "ij, j, jk -> ki")), 1, 1e-5, FP32},
    {"Det batch 4x4", "Det", 1, CO_IN(CO_F32(3, (3, 4, 4))), 0, NULL, 1, 1e-4, FP32},
    {"Det float64 2x2", "Det", 1, CO_IN(CO_TYPED(ETRT_DTYPE_FLOAT64, 2, (2, 2))), 0, NULL, 1, 1e-12,
     FP32},
    {"Compress axis 1", "Compress", 2,
     CO_IN(CO_F32(3, (2, 4, 3)), CO_CONST_VALUES(ETRT_DTYPE_BOOL, uint8_t, 1, (3), 1, 0, 1)), 1,
     CO_ATTR(CO_INT("axis", 1)), 1, 0, FP32},
    {"Compress flattened int64", "Compress", 2,
     CO_IN(CO_TYPED(ETRT_DTYPE_INT64, 2, (2, 3)),
           CO_CONST_VALUES(ETRT_DTYPE_BOOL, uint8_t, 1, (8), 0, 1, 1, 0, 0, 1, 1, 1)),
     0, NULL, 1, 0, FP32},
    {"MaxUnpool 2x2", "MaxUnpool", 2,
     CO_IN(CO_F32(4, (1, 2, 2, 2)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 4, (1, 2, 2, 2), 0, 3, 9, 14, 16, 22, 25, 31)),
     2, CO_ATTR(CO_INTS("kernel_shape", 2, 2, 2), CO_INTS("strides", 2, 2, 2)), 1, 0, FP32},
    {"MaxUnpool output_shape", "MaxUnpool", 3,
     CO_IN(CO_F32(4, (1, 1, 2, 2)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 4, (1, 1, 2, 2), 5, 7, 13, 15),
           CO_CONST_I64(1, (4), 1, 1, 5, 5)),
     2, CO_ATTR(CO_INTS("kernel_shape", 2, 2, 2), CO_INTS("strides", 2, 2, 2)), 1, 0, FP32},
    /* tests: the SM ids differ by executor, so only that it runs */
    {"EtrtSmId", "EtrtSmId", 1, CO_IN(CO_F32(1, (4))), 1, CO_ATTR(CO_INT("blocks", 64)), 1, -1,
     FP32},
};

const co_case *co_cases(size_t *count) {
  *count = sizeof co_list / sizeof co_list[0];
  return co_list;
}

/* Every index-taking kernel with an index (or length) out of range, given as an
 * input so that the builder cannot see it. */
static const co_case co_bad_list[] = {
    {"Gather index 5 of 5", "Gather", 2,
     CO_IN(CO_F32(2, (5, 3)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (3), 0, 5, 1)), 0, NULL, 1, 0,
     FP32},
    {"Gather int32 index -6 of 5", "Gather", 2,
     CO_IN(CO_F32(2, (5, 3)), CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (2), 1, -6)), 0, NULL, 1, 0,
     FP32},
    {"GatherElements index 4 of 4", "GatherElements", 2,
     CO_IN(CO_F32(2, (3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (3, 1), 0, 4, 1)), 1,
     CO_ATTR(CO_INT("axis", 1)), 1, 0, FP32},
    {"GatherND index 3 of 3", "GatherND", 2,
     CO_IN(CO_F32(3, (2, 3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 2), 0, 1, 1, 3)), 0,
     NULL, 1, 0, FP32},
    {"ScatterElements index -4 of 3", "ScatterElements", 3,
     CO_IN(CO_F32(2, (3, 4)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (1, 4), 0, 1, -4, 2),
           CO_F32(2, (1, 4))),
     0, NULL, 1, 0, FP32},
    {"Scatter index 4 of 4", "Scatter", 3,
     CO_IN(CO_F32(2, (4, 3)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (1, 3), 3, 4, 0),
           CO_F32(2, (1, 3))),
     0, NULL, 1, 0, FP32},
    {"LSTM sequence_lens 4 of 3", "LSTM", 5,
     CO_IN(CO_F32(3, (3, 2, 2)), CO_F32(3, (1, 8, 2)), CO_F32(3, (1, 8, 2)), CO_F32(2, (1, 16)),
           CO_VALUES(ETRT_DTYPE_INT32, int32_t, 1, (2), 1, 4)),
     1, CO_ATTR(CO_INT("hidden_size", 2)), 2, 0, FP32},
    {"ScatterND index 3 of 3", "ScatterND", 3,
     CO_IN(CO_F32(2, (3, 2)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 2, (2, 1), 0, 3),
           CO_F32(2, (2, 2))),
     0, NULL, 1, 0, FP32},
    {"MaxUnpool index 16 of 16", "MaxUnpool", 2,
     CO_IN(CO_F32(4, (1, 1, 2, 2)),
           CO_VALUES(ETRT_DTYPE_INT64, int64_t, 4, (1, 1, 2, 2), 0, 2, 8, 16)),
     2, CO_ATTR(CO_INTS("kernel_shape", 2, 2, 2), CO_INTS("strides", 2, 2, 2)), 1, 0, FP32},
    {"ReverseSequence length 5 of 4", "ReverseSequence", 2,
     CO_IN(CO_F32(3, (4, 3, 2)), CO_VALUES(ETRT_DTYPE_INT64, int64_t, 1, (3), 4, 5, 2)), 0, NULL, 1,
     0, FP32},
};

const co_case *co_bad_cases(size_t *count) {
  *count = sizeof co_bad_list / sizeof co_bad_list[0];
  return co_bad_list;
}
