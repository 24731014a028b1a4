/* Definitions of Add, Sub, Mul, Div (ONNX multidirectional broadcasting, both inputs
 * of one dtype), Relu, and the other operations of two broadcast inputs (Pow, Mod,
 * PRelu, BitShift, Bitwise*, And/Or/Xor, the comparisons) from one table. */
#include "engine/ops/elementwise.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

const etrt_dtype etrt_arithmetic_dtypes[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
    ETRT_DTYPE_INT8,    ETRT_DTYPE_INT16,   ETRT_DTYPE_INT32,   ETRT_DTYPE_INT64,
    ETRT_DTYPE_UINT8,   ETRT_DTYPE_UINT16,  ETRT_DTYPE_UINT32,  ETRT_DTYPE_UINT64,
    ETRT_DTYPE_INVALID};

const etrt_dtype etrt_relu_dtypes[] = {ETRT_DTYPE_FLOAT32,  ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16,
                                       ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INT8,    ETRT_DTYPE_INT16,
                                       ETRT_DTYPE_INT32,    ETRT_DTYPE_INT64,   ETRT_DTYPE_INVALID};

static etrt_status etrt_check_arity(const etrt_node *node, const etrt_tensor *inputs,
                                    uint32_t count) {
  if (node->num_inputs != count || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes %u input(s) and 1 output, got %u and %u", count, node->num_inputs,
                         node->num_outputs);
  for (uint32_t i = 0; i < count; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  }
  return ETRT_OK;
}

static etrt_status etrt_binary_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_check_arity(node, inputs, 2));
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "input 0", inputs[0].dtype, etrt_arithmetic_dtypes));
  if (inputs[1].dtype != inputs[0].dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "inputs must have one dtype, got %s and %s",
                         etrt_dtype_name(inputs[0].dtype), etrt_dtype_name(inputs[1].dtype));
  outputs[0].dtype = inputs[0].dtype;
  return etrt_shape_broadcast(node, 2, inputs, &outputs[0].rank, outputs[0].dims);
}

static etrt_status etrt_relu_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_check_arity(node, inputs, 1));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype, etrt_relu_dtypes));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  for (int32_t i = 0; i < inputs[0].rank; ++i) outputs[0].dims[i] = inputs[0].dims[i];
  return ETRT_OK;
}

/* ---- which nodes the CUDA kernels take ------------------------------------------ */

/* Every input of one numeric dtype the kernels have. */
int etrt_binary_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  for (uint32_t k = 0; k < node->num_inputs; ++k) {
    if (inputs[k].rank < 0 || inputs[k].dtype != inputs[0].dtype) return 0;
  }
  return etrt_op_dtype_cuda_numeric(inputs[0].dtype);
}

int etrt_binary_float_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  return etrt_binary_cuda_supports(node, inputs) && etrt_op_dtype_is_float(inputs[0].dtype);
}

static int etrt_binary_integer_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  return etrt_binary_cuda_supports(node, inputs) && !etrt_op_dtype_is_float(inputs[0].dtype);
}

static int etrt_logical_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return inputs[0].dtype == ETRT_DTYPE_BOOL && inputs[1].dtype == ETRT_DTYPE_BOOL;
}

static int etrt_relu_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return etrt_op_dtype_cuda_numeric(inputs[0].dtype);
}

/* The integer and float dtypes the mixed Pow kernel's element loads take. */
static int etrt_binary_any_numeric(etrt_dtype t) {
  switch (t) {
    case ETRT_DTYPE_FLOAT32:
    case ETRT_DTYPE_FLOAT64:
    case ETRT_DTYPE_FLOAT16:
    case ETRT_DTYPE_BFLOAT16:
    case ETRT_DTYPE_INT8:
    case ETRT_DTYPE_INT16:
    case ETRT_DTYPE_INT32:
    case ETRT_DTYPE_INT64:
    case ETRT_DTYPE_UINT8:
    case ETRT_DTYPE_UINT16:
    case ETRT_DTYPE_UINT32:
    case ETRT_DTYPE_UINT64:
      return 1;
    default:
      return 0;
  }
}

/* One numeric dtype (the templated kernel), or a base and an exponent of any two
 * numeric dtypes (the mixed kernel). */
static int etrt_pow_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  if (node->num_inputs != 2 || inputs[0].rank < 0 || inputs[1].rank < 0) return 0;
  if (inputs[0].dtype == inputs[1].dtype) return etrt_binary_cuda_supports(node, inputs);
  return etrt_binary_any_numeric(inputs[0].dtype) && etrt_binary_any_numeric(inputs[1].dtype);
}

/* The unsigned dtypes ONNX gives BitShift (the kernel shifts logically). */
static int etrt_bit_shift_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  etrt_dtype t = inputs[0].dtype;
  return inputs[1].dtype == t && (t == ETRT_DTYPE_UINT8 || t == ETRT_DTYPE_UINT16 ||
                                  t == ETRT_DTYPE_UINT32 || t == ETRT_DTYPE_UINT64);
}

static const etrt_op_def etrt_op_add = {
    .op_type = "Add", .infer = etrt_binary_infer, .cuda_supports = etrt_binary_cuda_supports};
static const etrt_op_def etrt_op_sub = {
    .op_type = "Sub", .infer = etrt_binary_infer, .cuda_supports = etrt_binary_cuda_supports};
static const etrt_op_def etrt_op_mul = {
    .op_type = "Mul", .infer = etrt_binary_infer, .cuda_supports = etrt_binary_cuda_supports};
static const etrt_op_def etrt_op_div = {
    .op_type = "Div", .infer = etrt_binary_infer, .cuda_supports = etrt_binary_cuda_supports};
static const etrt_op_def etrt_op_relu = {
    .op_type = "Relu", .infer = etrt_relu_infer, .cuda_supports = etrt_relu_cuda_supports};

/* ---- the other operations of two broadcast inputs, defined by one table ---------- */

#define ETRT_INTEGER_DTYPES                                                                \
  ETRT_DTYPE_INT8, ETRT_DTYPE_INT16, ETRT_DTYPE_INT32, ETRT_DTYPE_INT64, ETRT_DTYPE_UINT8, \
      ETRT_DTYPE_UINT16, ETRT_DTYPE_UINT32, ETRT_DTYPE_UINT64
static const etrt_dtype etrt_pow_dtypes[] = {
    ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
    ETRT_DTYPE_INT32,   ETRT_DTYPE_INT64,   ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_integer_dtypes[] = {ETRT_INTEGER_DTYPES, ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_unsigned_dtypes[] = {
    ETRT_DTYPE_UINT8, ETRT_DTYPE_UINT16, ETRT_DTYPE_UINT32, ETRT_DTYPE_UINT64, ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_bool_dtypes[] = {ETRT_DTYPE_BOOL, ETRT_DTYPE_INVALID};
static const etrt_dtype etrt_equal_dtypes[] = {
    ETRT_DTYPE_FLOAT32,  ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16,
    ETRT_INTEGER_DTYPES, ETRT_DTYPE_BOOL,    ETRT_DTYPE_INVALID};

/* Mod and BitShift pick their kind from an attribute in etrt_binary_read. */
static const struct {
  const char *op_type;
  etrt_binary_kind kind;
  const etrt_dtype *dtypes; /* of input 0; input 1 has the same (Pow: any arithmetic) */
} etrt_binary_table[] = {
    {"Pow", ETRT_BINARY_POW, etrt_pow_dtypes},
    {"Mod", ETRT_BINARY_MOD, etrt_arithmetic_dtypes},
    {"PRelu", ETRT_BINARY_PRELU, etrt_arithmetic_dtypes},
    {"BitShift", ETRT_BINARY_SHIFT_LEFT, etrt_unsigned_dtypes},
    {"BitwiseAnd", ETRT_BINARY_BITWISE_AND, etrt_integer_dtypes},
    {"BitwiseOr", ETRT_BINARY_BITWISE_OR, etrt_integer_dtypes},
    {"BitwiseXor", ETRT_BINARY_BITWISE_XOR, etrt_integer_dtypes},
    {"And", ETRT_BINARY_AND, etrt_bool_dtypes},
    {"Or", ETRT_BINARY_OR, etrt_bool_dtypes},
    {"Xor", ETRT_BINARY_XOR, etrt_bool_dtypes},
    {"Equal", ETRT_BINARY_EQUAL, etrt_equal_dtypes},
    {"Less", ETRT_BINARY_LESS, etrt_arithmetic_dtypes},
    {"LessOrEqual", ETRT_BINARY_LESS_EQUAL, etrt_arithmetic_dtypes},
    {"Greater", ETRT_BINARY_GREATER, etrt_arithmetic_dtypes},
    {"GreaterOrEqual", ETRT_BINARY_GREATER_EQUAL, etrt_arithmetic_dtypes},
};
#define ETRT_BINARY_TABLE_SIZE (sizeof etrt_binary_table / sizeof etrt_binary_table[0])

static etrt_status etrt_binary_read(const etrt_node *node, size_t *row, etrt_binary_state *s) {
  for (*row = 0; *row < ETRT_BINARY_TABLE_SIZE; ++*row) {
    if (strcmp(etrt_binary_table[*row].op_type, node->op_type) == 0) break;
  }
  if (*row == ETRT_BINARY_TABLE_SIZE)
    return etrt_op_error(node, ETRT_ERROR_INTERNAL, "not a binary operation");
  s->kind = etrt_binary_table[*row].kind;
  if (s->kind == ETRT_BINARY_MOD && etrt_node_attribute_int(node, "fmod", 0) != 0)
    s->kind = ETRT_BINARY_FMOD;
  if (s->kind == ETRT_BINARY_SHIFT_LEFT) {
    const char *direction = etrt_node_attribute_string(node, "direction", "");
    if (strcmp(direction, "RIGHT") == 0) {
      s->kind = ETRT_BINARY_SHIFT_RIGHT;
    } else if (strcmp(direction, "LEFT") != 0) {
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "attribute 'direction' is '%s', must be 'LEFT' or 'RIGHT'", direction);
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_binary_prepare(const etrt_node *node, void *state) {
  size_t row;
  return etrt_binary_read(node, &row, state);
}

int etrt_prelu_slope_view(const etrt_tensor *x, const etrt_tensor *slope, etrt_tensor *view) {
  *view = *slope;
  if (etrt_shape_broadcastable_to(slope->rank, slope->dims, x->rank, x->dims)) return 1;
  if (slope->rank != 1 || x->rank < 2 || slope->dims[0] != x->dims[1]) return 0;
  view->rank = x->rank - 1;
  for (int32_t a = 1; a < view->rank; ++a) view->dims[a] = 1;
  return 1;
}

static etrt_status etrt_binary_table_infer(const etrt_node *node, const etrt_tensor *inputs,
                                           etrt_tensor *outputs) {
  size_t row;
  etrt_binary_state s;
  ETRT_RETURN_IF_ERROR(etrt_binary_read(node, &row, &s));
  ETRT_RETURN_IF_ERROR(etrt_check_arity(node, inputs, 2));
  ETRT_RETURN_IF_ERROR(
      etrt_op_check_dtype(node, "input 0", inputs[0].dtype, etrt_binary_table[row].dtypes));
  if (s.kind == ETRT_BINARY_POW) {
    ETRT_RETURN_IF_ERROR(
        etrt_op_check_dtype(node, "input 1", inputs[1].dtype, etrt_arithmetic_dtypes));
  } else if (inputs[1].dtype != inputs[0].dtype) {
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "inputs must have one dtype, got %s and %s",
                         etrt_dtype_name(inputs[0].dtype), etrt_dtype_name(inputs[1].dtype));
  }
  outputs[0].dtype = s.kind >= ETRT_BINARY_AND ? ETRT_DTYPE_BOOL : inputs[0].dtype;
  if (s.kind == ETRT_BINARY_PRELU) {
    /* the slope broadcasts to X, never the other way */
    etrt_tensor slope;
    if (!etrt_prelu_slope_view(&inputs[0], &inputs[1], &slope))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input 1 (slope) does not broadcast to input 0's shape");
    outputs[0].rank = inputs[0].rank;
    for (int32_t i = 0; i < inputs[0].rank; ++i) outputs[0].dims[i] = inputs[0].dims[i];
    return ETRT_OK;
  }
  return etrt_shape_broadcast(node, 2, inputs, &outputs[0].rank, outputs[0].dims);
}

#define ETRT_BINARY_DEF(var, name, cuda)                                   \
  static const etrt_op_def var = {.op_type = name,                         \
                                  .state_size = sizeof(etrt_binary_state), \
                                  .prepare = etrt_binary_prepare,          \
                                  .infer = etrt_binary_table_infer,        \
                                  .cuda_supports = cuda};
ETRT_BINARY_DEF(etrt_op_pow, "Pow", etrt_pow_cuda_supports)
ETRT_BINARY_DEF(etrt_op_mod, "Mod", etrt_binary_cuda_supports)
ETRT_BINARY_DEF(etrt_op_prelu, "PRelu", etrt_binary_float_cuda_supports)
ETRT_BINARY_DEF(etrt_op_bitshift, "BitShift", etrt_bit_shift_cuda_supports)
ETRT_BINARY_DEF(etrt_op_bitwise_and, "BitwiseAnd", etrt_binary_integer_cuda_supports)
ETRT_BINARY_DEF(etrt_op_bitwise_or, "BitwiseOr", etrt_binary_integer_cuda_supports)
ETRT_BINARY_DEF(etrt_op_bitwise_xor, "BitwiseXor", etrt_binary_integer_cuda_supports)
ETRT_BINARY_DEF(etrt_op_and, "And", etrt_logical_cuda_supports)
ETRT_BINARY_DEF(etrt_op_or, "Or", etrt_logical_cuda_supports)
ETRT_BINARY_DEF(etrt_op_xor, "Xor", etrt_logical_cuda_supports)
ETRT_BINARY_DEF(etrt_op_equal, "Equal", etrt_binary_cuda_supports)
ETRT_BINARY_DEF(etrt_op_less, "Less", etrt_binary_cuda_supports)
ETRT_BINARY_DEF(etrt_op_less_equal, "LessOrEqual", etrt_binary_cuda_supports)
ETRT_BINARY_DEF(etrt_op_greater, "Greater", etrt_binary_cuda_supports)
ETRT_BINARY_DEF(etrt_op_greater_equal, "GreaterOrEqual", etrt_binary_cuda_supports)
#undef ETRT_BINARY_DEF

const etrt_op_def *const etrt_ops_elementwise[] = {&etrt_op_add,
                                                   &etrt_op_sub,
                                                   &etrt_op_mul,
                                                   &etrt_op_div,
                                                   &etrt_op_relu,
                                                   &etrt_op_pow,
                                                   &etrt_op_mod,
                                                   &etrt_op_prelu,
                                                   &etrt_op_bitshift,
                                                   &etrt_op_bitwise_and,
                                                   &etrt_op_bitwise_or,
                                                   &etrt_op_bitwise_xor,
                                                   &etrt_op_and,
                                                   &etrt_op_or,
                                                   &etrt_op_xor,
                                                   &etrt_op_equal,
                                                   &etrt_op_less,
                                                   &etrt_op_less_equal,
                                                   &etrt_op_greater,
                                                   &etrt_op_greater_equal,
                                                   NULL};
