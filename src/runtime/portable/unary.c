/* Elementwise functions of one tensor: relu, sigmoid, tanh, exp, ..., the hard
 * activations, silu, gelu, clamp/hardtanh, on the engine's unary kernels. */
#include <string.h>

#include "runtime/portable/portable.h"

#define S ETRT_PORTABLE_SCALAR
#define E ETRT_PORTABLE_ENGINE
/* (self, *, out) -> out: args [self, out, ret]. */
#define U(var, name, op) \
  static const etrt_portable_spec var = E(name, 3, op, 0, -1, -1, -1, 1, -1, -1, 0)
/* The same for functions with a floating-point result: integer and bool inputs are
 * promoted to the out tensor's dtype first, as ATen does (exp of an int is a float). */
#define UF(var, name, op)               \
  static const etrt_portable_spec var = \
      E(name, 3, op, 0, -1, -1, -1, 1, -1, -1, ETRT_PORTABLE_PROMOTE)

U(relu, "aten::relu.out", "Relu");
UF(sigmoid, "aten::sigmoid.out", "Sigmoid");
UF(tanh_, "aten::tanh.out", "Tanh");
UF(exp_, "aten::exp.out", "Exp");
UF(log_, "aten::log.out", "Log");
UF(sqrt_, "aten::sqrt.out", "Sqrt");
U(neg, "aten::neg.out", "Neg");
U(abs_, "aten::abs.out", "Abs");
U(ceil_, "aten::ceil.out", "Ceil");
U(floor_, "aten::floor.out", "Floor");
U(round_, "aten::round.out", "Round");
UF(sin_, "aten::sin.out", "Sin");
UF(cos_, "aten::cos.out", "Cos");
UF(erf_, "aten::erf.out", "Erf");
UF(reciprocal, "aten::reciprocal.out", "Reciprocal");
UF(tan_, "aten::tan.out", "Tan");
UF(asin_, "aten::asin.out", "Asin");
UF(acos_, "aten::acos.out", "Acos");
UF(atan_, "aten::atan.out", "Atan");
UF(sinh_, "aten::sinh.out", "Sinh");
UF(cosh_, "aten::cosh.out", "Cosh");
UF(asinh_, "aten::asinh.out", "Asinh");
UF(acosh_, "aten::acosh.out", "Acosh");
UF(atanh_, "aten::atanh.out", "Atanh");
U(hardswish, "aten::hardswish.out", "HardSwish");

/* ATen's hardsigmoid is relu6(x + 3) / 6. */
static const etrt_attribute hardsigmoid_attributes[] = {
    {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 1.0f / 6.0f},
    {.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 0.5f},
};
static const etrt_portable_spec hardsigmoid =
    ETRT_PORTABLE_ENGINE_FULL("aten::hardsigmoid.out", 3, "HardSigmoid", 0, -1, -1, -1, 1, -1, -1,
                              0, NULL, NULL, hardsigmoid_attributes, 2);
/* silu(x) = x * sigmoid(x); rsqrt(x) = 1 / sqrt(x). */
static const etrt_portable_spec silu =
    ETRT_PORTABLE_ENGINE_FULL("aten::silu.out", 3, "Sigmoid", 0, -1, -1, -1, 1, -1, -1,
                              ETRT_PORTABLE_POST_SELF, "Mul", NULL, NULL, 0);
static const etrt_portable_spec rsqrt = ETRT_PORTABLE_ENGINE_FULL(
    "aten::rsqrt.out", 3, "Sqrt", 0, -1, -1, -1, 1, -1, -1,
    ETRT_PORTABLE_POST_UNARY | ETRT_PORTABLE_PROMOTE, "Reciprocal", NULL, NULL, 0);

/* gelu.out(self, *, str approximate='none', out). */
static etrt_status etrt_portable_gelu_attributes(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_value *v = &values[call->args[1]];
  if (v->tag != ETRT_VALUE_STRING)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument 1 (approximate) must be a string");
  if (!((v->u.string.size == 4 && memcmp(v->u.string.data, "none", 4) == 0) ||
        (v->u.string.size == 4 && memcmp(v->u.string.data, "tanh", 4) == 0)))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 1 (approximate) must be 'none' or 'tanh', not '%.*s'",
                      (int)(v->u.string.size > 32 ? 32 : v->u.string.size), v->u.string.data);
  memcpy(call->text, v->u.string.data, 4);
  call->text[4] = '\0';
  return etrt_portable_attribute(
      call,
      (etrt_attribute){.name = "approximate", .kind = ETRT_ATTRIBUTE_STRING, .s = call->text});
}
static const etrt_portable_spec gelu =
    ETRT_PORTABLE_HOOKED("aten::gelu.out", 4, "Gelu", 0, -1, -1, 2, etrt_portable_gelu_attributes);

/* leaky_relu.out(self, Scalar negative_slope=0.01, *, out). */
static etrt_status etrt_portable_leaky_attributes(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  double slope = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 1, &slope));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)slope});
}
static const etrt_portable_spec leaky_relu = ETRT_PORTABLE_HOOKED(
    "aten::leaky_relu.out", 4, "LeakyRelu", 0, -1, -1, 2, etrt_portable_leaky_attributes);

/* hardtanh.out(self, Scalar min_val, Scalar max_val, *, out);
 * clamp.out(self, Scalar? min, Scalar? max, *, out): Clip with scalar bounds. */
static const etrt_portable_spec hardtanh =
    E("aten::hardtanh.out", 5, "Clip", 0, S(1), S(2), -1, 3, -1, -1, 0);
static const etrt_portable_spec clamp =
    E("aten::clamp.out", 5, "Clip", 0, S(1), S(2), -1, 3, -1, -1, 0);

const etrt_kernel_def *const etrt_portable_unary[] = {
    &relu.def,       &sigmoid.def,     &tanh_.def, &exp_.def,  &log_.def,
    &sqrt_.def,      &neg.def,         &abs_.def,  &ceil_.def, &floor_.def,
    &round_.def,     &sin_.def,        &cos_.def,  &erf_.def,  &reciprocal.def,
    &hardswish.def,  &hardsigmoid.def, &silu.def,  &rsqrt.def, &gelu.def,
    &leaky_relu.def, &hardtanh.def,    &clamp.def, &tan_.def,  &asin_.def,
    &acos_.def,      &atan_.def,       &sinh_.def, &cosh_.def, &asinh_.def,
    &acosh_.def,     &atanh_.def,      NULL,
};
