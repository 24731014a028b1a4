/* Elementwise functions of one tensor: math (Abs ... Erf, Sign, IsNaN, IsInf,
 * Identity, Not, BitwiseNot), activations (Sigmoid ... Mish, Shrink) and Clip. The
 * output has the input's shape; its dtype is the input's (bool for IsNaN, IsInf). */
#include "engine/ops/unary.h"

#include <math.h>
#include <string.h>

#include "engine/ops/op_check.h"

static const struct {
  const char *op_type;
  etrt_unary_types types;
  int to_bool;
} etrt_unary_table[ETRT_UNARY_KIND_COUNT] = {
#define ETRT_UNARY_ROW(kind, name, types, to_bool) {name, types, to_bool},
    ETRT_UNARY_OPS(ETRT_UNARY_ROW)
#undef ETRT_UNARY_ROW
};

#define ETRT_FLOAT_DTYPES \
  ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_FLOAT16, ETRT_DTYPE_BFLOAT16
#define ETRT_SIGNED_INT_DTYPES ETRT_DTYPE_INT8, ETRT_DTYPE_INT16, ETRT_DTYPE_INT32, ETRT_DTYPE_INT64
#define ETRT_UNSIGNED_INT_DTYPES \
  ETRT_DTYPE_UINT8, ETRT_DTYPE_UINT16, ETRT_DTYPE_UINT32, ETRT_DTYPE_UINT64

static const etrt_dtype *etrt_unary_allowed(etrt_unary_types types) {
  static const etrt_dtype floats[] = {ETRT_FLOAT_DTYPES, ETRT_DTYPE_INVALID};
  static const etrt_dtype signed_types[] = {ETRT_FLOAT_DTYPES, ETRT_SIGNED_INT_DTYPES,
                                            ETRT_DTYPE_INVALID};
  static const etrt_dtype numeric[] = {ETRT_FLOAT_DTYPES, ETRT_SIGNED_INT_DTYPES,
                                       ETRT_UNSIGNED_INT_DTYPES, ETRT_DTYPE_INVALID};
  static const etrt_dtype integers[] = {ETRT_SIGNED_INT_DTYPES, ETRT_UNSIGNED_INT_DTYPES,
                                        ETRT_DTYPE_INVALID};
  static const etrt_dtype bools[] = {ETRT_DTYPE_BOOL, ETRT_DTYPE_INVALID};
  static const etrt_dtype any[] = {ETRT_FLOAT_DTYPES, ETRT_SIGNED_INT_DTYPES,
                                   ETRT_UNSIGNED_INT_DTYPES, ETRT_DTYPE_BOOL, ETRT_DTYPE_INVALID};
  switch (types) {
    case ETRT_UNARY_FLOAT:
      return floats;
    case ETRT_UNARY_SIGNED:
      return signed_types;
    case ETRT_UNARY_NUMERIC:
      return numeric;
    case ETRT_UNARY_INTEGER:
      return integers;
    case ETRT_UNARY_BOOL:
      return bools;
    case ETRT_UNARY_ANY:
      return any;
  }
  return any;
}

static etrt_unary_kind etrt_unary_kind_of(const etrt_node *node) {
  for (int k = 0; k < ETRT_UNARY_KIND_COUNT; ++k) {
    if (strcmp(etrt_unary_table[k].op_type, node->op_type) == 0) return (etrt_unary_kind)k;
  }
  return ETRT_UNARY_KIND_COUNT;
}

static etrt_status etrt_unary_read(const etrt_node *node, etrt_unary_state *s) {
  memset(s, 0, sizeof *s);
  s->kind = etrt_unary_kind_of(node);
  switch (s->kind) {
    case ETRT_UNARY_KIND_COUNT:
      return etrt_op_error(node, ETRT_ERROR_INTERNAL, "not a unary operation");
    case ETRT_UNARY_HARD_SIGMOID:
      s->alpha = etrt_node_attribute_float(node, "alpha", 0.2f);
      s->beta = etrt_node_attribute_float(node, "beta", 0.5f);
      break;
    case ETRT_UNARY_LEAKY_RELU:
      s->alpha = etrt_node_attribute_float(node, "alpha", 0.01f);
      break;
    case ETRT_UNARY_ELU:
    case ETRT_UNARY_CELU:
    case ETRT_UNARY_THRESHOLDED_RELU:
      s->alpha = etrt_node_attribute_float(node, "alpha", 1.0f);
      if (s->kind == ETRT_UNARY_CELU && s->alpha == 0.0f)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute 'alpha' must not be 0");
      break;
    case ETRT_UNARY_SELU:
      s->alpha = etrt_node_attribute_float(node, "alpha", 1.67326319217681884765625f);
      s->gamma = etrt_node_attribute_float(node, "gamma", 1.05070102214813232421875f);
      break;
    case ETRT_UNARY_SHRINK:
      s->alpha = etrt_node_attribute_float(node, "lambd", 0.5f);
      s->beta = etrt_node_attribute_float(node, "bias", 0.0f);
      break;
    case ETRT_UNARY_ISINF:
      if (etrt_node_attribute_int(node, "detect_negative", 1) != 0)
        s->flags |= ETRT_UNARY_DETECT_NEGATIVE;
      if (etrt_node_attribute_int(node, "detect_positive", 1) != 0)
        s->flags |= ETRT_UNARY_DETECT_POSITIVE;
      break;
    case ETRT_UNARY_GELU: {
      const char *approximate = etrt_node_attribute_string(node, "approximate", "none");
      if (strcmp(approximate, "tanh") == 0) {
        s->flags |= ETRT_UNARY_GELU_TANH;
      } else if (strcmp(approximate, "none") != 0) {
        return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                             "attribute 'approximate' is '%s'; 'none' and 'tanh' are supported",
                             approximate);
      }
      break;
    }
    default:
      break;
  }
  return ETRT_OK;
}

static etrt_status etrt_unary_prepare(const etrt_node *node, void *state) {
  return etrt_unary_read(node, state);
}

static etrt_status etrt_unary_infer(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  etrt_unary_state s;
  ETRT_RETURN_IF_ERROR(etrt_unary_read(node, &s));
  ETRT_RETURN_IF_ERROR(etrt_op_check_single_io(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype,
                                           etrt_unary_allowed(etrt_unary_table[s.kind].types)));
  outputs[0].dtype = etrt_unary_table[s.kind].to_bool ? ETRT_DTYPE_BOOL : inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof outputs[0].dims);
  return ETRT_OK;
}

/* ---- Clip ---------------------------------------------------------------------- */

static etrt_status etrt_clip_prepare(const etrt_node *node, void *state) {
  etrt_clip_state *s = state;
  const etrt_attribute *lo = etrt_node_attribute(node, "min");
  const etrt_attribute *hi = etrt_node_attribute(node, "max");
  s->has_min_attribute = lo != NULL;
  s->has_max_attribute = hi != NULL;
  s->min_attribute = etrt_node_attribute_float(node, "min", -INFINITY);
  s->max_attribute = etrt_node_attribute_float(node, "max", INFINITY);
  return ETRT_OK;
}

static etrt_status etrt_clip_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  static const etrt_dtype allowed[] = {ETRT_FLOAT_DTYPES, ETRT_SIGNED_INT_DTYPES,
                                       ETRT_UNSIGNED_INT_DTYPES, ETRT_DTYPE_INVALID};
  if (node->num_inputs < 1 || node->num_inputs > 3 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 to 3 inputs and 1 output, got %u and %u", node->num_inputs,
                         node->num_outputs);
  if (inputs[0].rank < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 is missing");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input 0", inputs[0].dtype, allowed));
  int has_attributes =
      etrt_node_attribute(node, "min") != NULL || etrt_node_attribute(node, "max") != NULL;
  if (has_attributes && inputs[0].dtype != ETRT_DTYPE_FLOAT32 &&
      inputs[0].dtype != ETRT_DTYPE_FLOAT64 && inputs[0].dtype != ETRT_DTYPE_FLOAT16 &&
      inputs[0].dtype != ETRT_DTYPE_BFLOAT16)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "min/max attributes (opset 6) apply to float inputs, input 0 is %s",
                         etrt_dtype_name(inputs[0].dtype));
  for (uint32_t i = 1; i < node->num_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i)) continue;
    const char *what = i == 1 ? "min" : "max";
    if (has_attributes)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "bounds are given both as attributes and as input %u (%s)", i, what);
    if (inputs[i].dtype != inputs[0].dtype)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input %u (%s) has type %s, input 0 has %s", i, what,
                           etrt_dtype_name(inputs[i].dtype), etrt_dtype_name(inputs[0].dtype));
    int64_t n = 1;
    for (int32_t a = 0; a < inputs[i].rank; ++a) n *= inputs[i].dims[a];
    if (n != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "input %u (%s) must hold one value, has %lld", i, what, (long long)n);
  }
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof outputs[0].dims);
  return ETRT_OK;
}

/* ---- the list --------------------------------------------------------------------- */

/* Which kinds the CUDA integer and bool kernels implement; the float kernel does
 * all but the bitwise and logical ones. */
static int etrt_unary_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  const etrt_unary_state *s = (const etrt_unary_state *)node->state;
  etrt_dtype t = inputs[0].dtype;
  if (s == NULL) return 0;
  if (s->kind == ETRT_UNARY_IDENTITY) return 1;
  if (etrt_op_dtype_is_float(t))
    return s->kind != ETRT_UNARY_NOT && s->kind != ETRT_UNARY_BITWISE_NOT;
  if (t == ETRT_DTYPE_BOOL) return s->kind == ETRT_UNARY_NOT;
  if (!etrt_op_dtype_cuda_numeric(t)) return 0;
  return s->kind == ETRT_UNARY_ABS || s->kind == ETRT_UNARY_NEG || s->kind == ETRT_UNARY_SIGN ||
         s->kind == ETRT_UNARY_BITWISE_NOT;
}

static int etrt_clip_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)node;
  return etrt_op_dtype_cuda_numeric(inputs[0].dtype);
}

#define ETRT_UNARY_DEF(kind, name, types, to_bool)                                       \
  static const etrt_op_def etrt_op_def_##kind = {.op_type = name,                        \
                                                 .state_size = sizeof(etrt_unary_state), \
                                                 .prepare = etrt_unary_prepare,          \
                                                 .infer = etrt_unary_infer,              \
                                                 .cuda_supports = etrt_unary_cuda_supports};
ETRT_UNARY_OPS(ETRT_UNARY_DEF)
#undef ETRT_UNARY_DEF

static const etrt_op_def etrt_op_def_clip = {.op_type = "Clip",
                                             .state_size = sizeof(etrt_clip_state),
                                             .prepare = etrt_clip_prepare,
                                             .infer = etrt_clip_infer,
                                             .cuda_supports = etrt_clip_cuda_supports};

const etrt_op_def *const etrt_ops_unary[] = {
#define ETRT_UNARY_REF(kind, name, types, to_bool) &etrt_op_def_##kind,
    ETRT_UNARY_OPS(ETRT_UNARY_REF)
#undef ETRT_UNARY_REF
        & etrt_op_def_clip,
    NULL,
};
