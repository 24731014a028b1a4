/* Scalar instructions of dynamic-shape programs: aten::sym_size.int reads a size of
 * a tensor, executorch_prim::<op>.Scalar computes on Int and Double values. Their
 * results are values that later instructions read as SymInts. Also et_copy_index, the
 * accumulator of map loops. */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

typedef enum etrt_prim_op {
  ETRT_PRIM_SYM_SIZE, /* (self, int dim) -> SymInt */
  ETRT_PRIM_SYM_NUMEL,
  ETRT_PRIM_ADD,
  ETRT_PRIM_SUB,
  ETRT_PRIM_MUL,
  ETRT_PRIM_FLOORDIV,
  ETRT_PRIM_TRUEDIV,
  ETRT_PRIM_MOD,
  ETRT_PRIM_EQ,
  ETRT_PRIM_GT,
  ETRT_PRIM_LT,
  ETRT_PRIM_GE,
  ETRT_PRIM_LE,
  ETRT_PRIM_NEG,
  ETRT_PRIM_SYM_FLOAT,
  ETRT_PRIM_SYM_INT, /* to an Int, rounding towards zero (trunc.Scalar too) */
  ETRT_PRIM_CEIL,
  ETRT_PRIM_ROUND, /* half to even, as Python's round */
  ETRT_PRIM_MAX,
  ETRT_PRIM_MIN,
  ETRT_PRIM_NOT,
  ETRT_PRIM_ITE /* (bool cond, a, b): a if cond else b */
} etrt_prim_op;

typedef struct etrt_prim_spec {
  etrt_kernel_def def;
  etrt_prim_op op;
} etrt_prim_spec;

static etrt_status etrt_prim_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_prim_spec *spec = (const etrt_prim_spec *)call->def;
  if (spec->op == ETRT_PRIM_SYM_SIZE || spec->op == ETRT_PRIM_SYM_NUMEL) {
    const etrt_runtime_tensor *t = NULL;
    return etrt_portable_tensor_arg(call, values, 0, &t);
  }
  for (uint32_t i = 0; i + 1 < call->num_args; ++i) {
    etrt_value_tag tag = values[call->args[i]].tag;
    if (tag != ETRT_VALUE_INT && tag != ETRT_VALUE_DOUBLE && tag != ETRT_VALUE_BOOL)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u must be an int or a float", i);
  }
  return ETRT_OK;
}

static void etrt_prim_set_int(etrt_value *v, int64_t i) {
  v->tag = ETRT_VALUE_INT;
  v->u.i = i;
}

static etrt_status etrt_prim_run(etrt_kernel_call *call, etrt_value *values,
                                 etrt_run_context *context) {
  (void)context;
  const etrt_prim_spec *spec = (const etrt_prim_spec *)call->def;
  etrt_value *ret = &values[call->args[call->num_args - 1]];
  if (spec->op == ETRT_PRIM_SYM_SIZE || spec->op == ETRT_PRIM_SYM_NUMEL) {
    const etrt_runtime_tensor *t = &values[call->args[0]].u.tensor;
    if (spec->op == ETRT_PRIM_SYM_NUMEL) {
      int64_t n = 1;
      for (int32_t i = 0; i < t->rank; ++i) n *= t->sizes[i];
      etrt_prim_set_int(ret, n);
      return ETRT_OK;
    }
    int64_t dim = 0;
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
    if (dim < 0) dim += t->rank;
    if (dim < 0 || dim >= t->rank)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): dim %lld is out of range for rank %d",
                        call->def->name, call->instruction, (long long)dim, t->rank);
    etrt_prim_set_int(ret, t->sizes[dim]);
    return ETRT_OK;
  }
  if (spec->op == ETRT_PRIM_ITE) {
    const etrt_value *cond = &values[call->args[0]];
    const int truth = cond->tag == ETRT_VALUE_BOOL  ? cond->u.b
                      : cond->tag == ETRT_VALUE_INT ? cond->u.i != 0
                                                    : cond->u.d != 0;
    *ret = values[call->args[truth ? 1 : 2]];
    return ETRT_OK;
  }
  const etrt_value *a = &values[call->args[0]];
  const etrt_value *b = call->num_args > 2 ? &values[call->args[1]] : a;
  const int ints = a->tag != ETRT_VALUE_DOUBLE && b->tag != ETRT_VALUE_DOUBLE;
  double x = 0, y = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 0, &x));
  if (call->num_args > 2) ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 1, &y));
  int64_t i = a->tag == ETRT_VALUE_INT ? a->u.i : (int64_t)x;
  int64_t j = b->tag == ETRT_VALUE_INT ? b->u.i : (int64_t)y;
  /* Int arithmetic stays exact in int64. */
  if (ints &&
      (spec->op == ETRT_PRIM_ADD || spec->op == ETRT_PRIM_SUB || spec->op == ETRT_PRIM_MUL ||
       spec->op == ETRT_PRIM_NEG || spec->op == ETRT_PRIM_MAX || spec->op == ETRT_PRIM_MIN)) {
    etrt_prim_set_int(ret, spec->op == ETRT_PRIM_ADD   ? i + j
                           : spec->op == ETRT_PRIM_SUB ? i - j
                           : spec->op == ETRT_PRIM_MUL ? i * j
                           : spec->op == ETRT_PRIM_MAX ? (i > j ? i : j)
                           : spec->op == ETRT_PRIM_MIN ? (i < j ? i : j)
                                                       : -i);
    return ETRT_OK;
  }
  if (spec->op == ETRT_PRIM_SYM_INT || spec->op == ETRT_PRIM_CEIL || spec->op == ETRT_PRIM_ROUND) {
    /* An Int stays itself; a Double becomes the Int its rounding gives. */
    double rounded = spec->op == ETRT_PRIM_SYM_INT ? trunc(x)
                     : spec->op == ETRT_PRIM_CEIL  ? ceil(x)
                                                   : nearbyint(x);
    if (a->tag == ETRT_VALUE_DOUBLE && !(fabs(rounded) < 9.2e18))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): %g is not an int",
                        call->def->name, call->instruction, x);
    etrt_prim_set_int(ret, a->tag == ETRT_VALUE_DOUBLE ? (int64_t)rounded : i);
    return ETRT_OK;
  }
  if (spec->op == ETRT_PRIM_NOT) {
    ret->tag = ETRT_VALUE_BOOL;
    ret->u.b = x == 0;
    return ETRT_OK;
  }
  double r = 0;
  int truth = -1;
  switch (spec->op) {
    case ETRT_PRIM_ADD:
      r = x + y;
      break;
    case ETRT_PRIM_SUB:
      r = x - y;
      break;
    case ETRT_PRIM_MUL:
      r = x * y;
      break;
    case ETRT_PRIM_FLOORDIV:
    case ETRT_PRIM_MOD:
      if ((ints && j == 0) || (!ints && y == 0))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): division by zero",
                          call->def->name, call->instruction);
      if (ints) {
        /* Python's: the quotient rounds down, the remainder takes the divisor's sign. */
        int64_t q = i / j, m = i % j;
        if (m != 0 && ((m < 0) != (j < 0))) {
          q -= 1;
          m += j;
        }
        etrt_prim_set_int(ret, spec->op == ETRT_PRIM_FLOORDIV ? q : m);
        return ETRT_OK;
      }
      r = spec->op == ETRT_PRIM_FLOORDIV ? floor(x / y) : x - floor(x / y) * y;
      break;
    case ETRT_PRIM_TRUEDIV:
      r = x / y;
      break;
    case ETRT_PRIM_EQ:
      truth = x == y;
      break;
    case ETRT_PRIM_GT:
      truth = x > y;
      break;
    case ETRT_PRIM_LT:
      truth = x < y;
      break;
    case ETRT_PRIM_GE:
      truth = x >= y;
      break;
    case ETRT_PRIM_LE:
      truth = x <= y;
      break;
    case ETRT_PRIM_NEG:
      r = -x;
      break;
    case ETRT_PRIM_MAX: /* NaN wins, as Python's max(a, b) does not promise otherwise */
      r = (x > y || isnan(x)) ? x : y;
      break;
    case ETRT_PRIM_MIN:
      r = (x < y || isnan(x)) ? x : y;
      break;
    default: /* sym_float */
      r = x;
      break;
  }
  if (truth >= 0) {
    ret->tag = ETRT_VALUE_BOOL;
    ret->u.b = truth;
  } else {
    ret->tag = ETRT_VALUE_DOUBLE;
    ret->u.d = r;
  }
  return ETRT_OK;
}

/* et_copy_index.tensor(copy_to, copy_from, int index): what a map loop emits to
 * gather its results: copy_to grows to index + 1 rows (within its bound) and row
 * `index` takes copy_from, whose shape is that of one row. */
static etrt_status etrt_prim_copy_index_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *to = NULL, *from = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_contiguous_arg(call, values, 0, &to));
  ETRT_RETURN_IF_ERROR(etrt_portable_contiguous_arg(call, values, 1, &from));
  if (to->dtype != from->dtype || to->rank != from->rank + 1)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "copy_to (%s, rank %d) must have copy_from's dtype (%s) and one more dim "
                      "(rank %d)",
                      etrt_dtype_name(to->dtype), to->rank, etrt_dtype_name(from->dtype),
                      from->rank + 1);
  return ETRT_OK;
}

static etrt_status etrt_prim_copy_index_run(etrt_kernel_call *call, etrt_value *values,
                                            etrt_run_context *context) {
  (void)context;
  etrt_runtime_tensor *to = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *from = &values[call->args[1]].u.tensor;
  int64_t index = 0, dims[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &index));
  if (index < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): index %lld",
                      call->def->name, call->instruction, (long long)index);
  dims[0] = index + 1;
  for (int32_t d = 0; d < from->rank; ++d) dims[d + 1] = from->sizes[d];
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, to, to->dtype, to->rank, dims));
  const size_t row = etrt_runtime_tensor_nbytes(from);
  if (row > 0) memmove((uint8_t *)to->data + (size_t)index * row, from->data, row);
  return ETRT_OK;
}

static const etrt_kernel_def copy_index = {"executorch_prim::et_copy_index.tensor", 3,
                                           etrt_prim_copy_index_prepare, etrt_prim_copy_index_run};

#define PRIM(var, name, nargs, op) \
  static const etrt_prim_spec var = {{name, nargs, etrt_prim_prepare, etrt_prim_run}, op}

PRIM(sym_size, "aten::sym_size.int", 3, ETRT_PRIM_SYM_SIZE);
PRIM(sym_numel, "aten::sym_numel", 2, ETRT_PRIM_SYM_NUMEL);
PRIM(add, "executorch_prim::add.Scalar", 3, ETRT_PRIM_ADD);
PRIM(sub, "executorch_prim::sub.Scalar", 3, ETRT_PRIM_SUB);
PRIM(mul, "executorch_prim::mul.Scalar", 3, ETRT_PRIM_MUL);
PRIM(floordiv, "executorch_prim::floordiv.Scalar", 3, ETRT_PRIM_FLOORDIV);
PRIM(truediv, "executorch_prim::truediv.Scalar", 3, ETRT_PRIM_TRUEDIV);
PRIM(mod, "executorch_prim::mod.Scalar", 3, ETRT_PRIM_MOD);
PRIM(eq, "executorch_prim::eq.Scalar", 3, ETRT_PRIM_EQ);
PRIM(gt, "executorch_prim::gt.Scalar", 3, ETRT_PRIM_GT);
PRIM(lt, "executorch_prim::lt.Scalar", 3, ETRT_PRIM_LT);
PRIM(ge, "executorch_prim::ge.Scalar", 3, ETRT_PRIM_GE);
PRIM(le, "executorch_prim::le.Scalar", 3, ETRT_PRIM_LE);
PRIM(neg, "executorch_prim::neg.Scalar", 2, ETRT_PRIM_NEG);
PRIM(sym_float, "executorch_prim::sym_float.Scalar", 2, ETRT_PRIM_SYM_FLOAT);
PRIM(sym_int, "executorch_prim::sym_int.Scalar", 2, ETRT_PRIM_SYM_INT);
PRIM(trunc_, "executorch_prim::trunc.Scalar", 2, ETRT_PRIM_SYM_INT);
PRIM(ceil_, "executorch_prim::ceil.Scalar", 2, ETRT_PRIM_CEIL);
PRIM(round_, "executorch_prim::round.Scalar", 2, ETRT_PRIM_ROUND);
PRIM(sym_max, "executorch_prim::sym_max.Scalar", 3, ETRT_PRIM_MAX);
PRIM(sym_min, "executorch_prim::sym_min.Scalar", 3, ETRT_PRIM_MIN);
PRIM(sym_not, "executorch_prim::sym_not.Scalar", 2, ETRT_PRIM_NOT);
PRIM(sym_ite, "executorch_prim::sym_ite.Scalar", 4, ETRT_PRIM_ITE);
PRIM(floordiv_int, "executorch_prim::floordiv.int", 3, ETRT_PRIM_FLOORDIV);
PRIM(mod_int, "executorch_prim::mod.int", 3, ETRT_PRIM_MOD);

const etrt_kernel_def *const etrt_portable_prim[] = {
    &sym_size.def, &sym_numel.def, &add.def,       &sub.def,     &mul.def,     &floordiv.def,
    &truediv.def,  &mod.def,       &eq.def,        &gt.def,      &lt.def,      &ge.def,
    &le.def,       &neg.def,       &sym_float.def, &sym_int.def, &trunc_.def,  &ceil_.def,
    &round_.def,   &sym_max.def,   &sym_min.def,   &sym_not.def, &sym_ite.def, &floordiv_int.def,
    &mod_int.def,  &copy_index,    NULL,
};
