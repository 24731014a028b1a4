/* Comparisons (bool results), logical operators and where. */
#include "runtime/portable/portable.h"

#define S ETRT_PORTABLE_SCALAR
#define E ETRT_PORTABLE_ENGINE
#define CMP(var_t, var_s, name, op, flags, post)                                                \
  static const etrt_portable_spec var_t = ETRT_PORTABLE_ENGINE_FULL(                            \
      "aten::" name ".Tensor_out", 4, op, 0, 1, -1, -1, 2, -1, -1, flags, post, NULL, NULL, 0); \
  static const etrt_portable_spec var_s = ETRT_PORTABLE_ENGINE_FULL(                            \
      "aten::" name ".Scalar_out", 4, op, 0, S(1), -1, -1, 2, -1, -1, flags, post, NULL, NULL, 0)

#define C ETRT_PORTABLE_PROMOTE_COMMON
CMP(eq_t, eq_s, "eq", "Equal", C, NULL);
CMP(ne_t, ne_s, "ne", "Equal", C | ETRT_PORTABLE_POST_UNARY, "Not");
CMP(lt_t, lt_s, "lt", "Less", C, NULL);
CMP(le_t, le_s, "le", "LessOrEqual", C, NULL);
CMP(gt_t, gt_s, "gt", "Greater", C, NULL);
CMP(ge_t, ge_s, "ge", "GreaterOrEqual", C, NULL);

static const etrt_portable_spec logical_not =
    E("aten::logical_not.out", 3, "Not", 0, -1, -1, -1, 1, -1, -1, 0);
static const etrt_portable_spec logical_and =
    E("aten::logical_and.out", 4, "And", 0, 1, -1, -1, 2, -1, -1, 0);
static const etrt_portable_spec logical_xor =
    E("aten::logical_xor.out", 4, "Xor", 0, 1, -1, -1, 2, -1, -1, 0);
static const etrt_portable_spec logical_or =
    E("aten::logical_or.out", 4, "Or", 0, 1, -1, -1, 2, -1, -1, 0);
/* where.self_out(condition, self, other, *, out). */
static const etrt_portable_spec where =
    E("aten::where.self_out", 5, "Where", 0, 1, 2, -1, 3, -1, -1,
      ETRT_PORTABLE_PROMOTE | ETRT_PORTABLE_PROMOTE_SKIP_FIRST);

/* masked_fill.Scalar_out(self, mask, Scalar value, *, out): where(mask, value, self). */
static const etrt_portable_spec masked_fill =
    E("aten::masked_fill.Scalar_out", 5, "Where", 1, S(2), 0, -1, 3, -1, -1,
      ETRT_PORTABLE_PROMOTE | ETRT_PORTABLE_PROMOTE_SKIP_FIRST);

const etrt_kernel_def *const etrt_portable_compare[] = {
    &masked_fill.def,
    &eq_t.def,
    &eq_s.def,
    &ne_t.def,
    &ne_s.def,
    &lt_t.def,
    &lt_s.def,
    &le_t.def,
    &le_s.def,
    &gt_t.def,
    &gt_s.def,
    &ge_t.def,
    &ge_s.def,
    &logical_not.def,
    &logical_and.def,
    &logical_or.def,
    &logical_xor.def,
    &where.def,
    NULL,
};
