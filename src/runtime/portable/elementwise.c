/* Binary arithmetic: add/sub (with alpha), mul, div, pow, maximum, minimum, as
 * .Tensor (broadcasting, the engine's rules) and .Scalar out variants. */
#include "runtime/portable/portable.h"

#define S ETRT_PORTABLE_SCALAR
#define E ETRT_PORTABLE_ENGINE
#define P ETRT_PORTABLE_PROMOTE

/* add.out(self, other, *, alpha, out): args [self, other, alpha, out, ret]. Inputs of
 * another dtype than the out tensor are promoted to it (int + float -> float). */
static const etrt_portable_spec add = E("aten::add.out", 5, "Add", 0, 1, -1, -1, 3, 2, -1, P);
static const etrt_portable_spec sub = E("aten::sub.out", 5, "Sub", 0, 1, -1, -1, 3, 2, -1, P);
static const etrt_portable_spec mul = E("aten::mul.out", 4, "Mul", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec div = E("aten::div.out", 4, "Div", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec pow_tt =
    E("aten::pow.Tensor_Tensor_out", 4, "Pow", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec maximum =
    E("aten::maximum.out", 4, "Max", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec minimum =
    E("aten::minimum.out", 4, "Min", 0, 1, -1, -1, 2, -1, -1, P);
/* add.Scalar_out(self, Scalar other, Scalar alpha, *, out): alpha scales `other`, a
 * constant, so it is folded in the scalar tensor by the scale step. */
static etrt_status etrt_portable_fold_alpha(etrt_kernel_call *call, const etrt_value *values) {
  double alpha = 1;
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 2, &alpha));
  call->scalars[1] *= alpha;
  return ETRT_OK;
}
static const etrt_portable_spec add_s =
    ETRT_PORTABLE_ENGINE_FULL("aten::add.Scalar_out", 5, "Add", 0, S(1), -1, -1, 3, -1, -1, P, NULL,
                              etrt_portable_fold_alpha, NULL, 0);
static const etrt_portable_spec sub_s =
    ETRT_PORTABLE_ENGINE_FULL("aten::sub.Scalar_out", 5, "Sub", 0, S(1), -1, -1, 3, -1, -1, P, NULL,
                              etrt_portable_fold_alpha, NULL, 0);
static const etrt_portable_spec mul_s =
    E("aten::mul.Scalar_out", 4, "Mul", 0, S(1), -1, -1, 2, -1, -1, P);
static const etrt_portable_spec div_s =
    E("aten::div.Scalar_out", 4, "Div", 0, S(1), -1, -1, 2, -1, -1, P);
static const etrt_portable_spec pow_ts =
    E("aten::pow.Tensor_Scalar_out", 4, "Pow", 0, S(1), -1, -1, 2, -1, -1, P);

static const etrt_portable_spec bitwise_and =
    E("aten::bitwise_and.Tensor_out", 4, "BitwiseAnd", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec bitwise_or =
    E("aten::bitwise_or.Tensor_out", 4, "BitwiseOr", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec bitwise_xor =
    E("aten::bitwise_xor.Tensor_out", 4, "BitwiseXor", 0, 1, -1, -1, 2, -1, -1, P);
static const etrt_portable_spec bitwise_not =
    E("aten::bitwise_not.out", 3, "BitwiseNot", 0, -1, -1, -1, 1, -1, -1, 0);

const etrt_kernel_def *const etrt_portable_elementwise[] = {
    &bitwise_and.def, &bitwise_or.def, &bitwise_xor.def, &bitwise_not.def, &add.def,     &sub.def,
    &mul.def,         &div.def,        &pow_tt.def,      &maximum.def,     &minimum.def, &add_s.def,
    &sub_s.def,       &mul_s.def,      &div_s.def,       &pow_ts.def,      NULL,
};
