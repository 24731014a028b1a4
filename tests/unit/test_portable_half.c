/* float16 and bfloat16 through the engine-backed portable kernels (convolution in
 * both dim orders, linear, add with alpha, softmax, mean, avg_pool2d, gelu, layer
 * norm): computed in float32 and rounded once, compared with torch's float32 values
 * of the same (exactly representable) inputs, committed as constants; and about
 * fifty more operators against their own float32 results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "test_programs.h"
#include "test_util.h"

static const float want_conv[48] = {
    -0.03125f,  -0.6875f,  0.890625f,  -0.390625f, 0.78125f,   1.234375f,  -0.71875f, 0.484375f,
    -0.40625f,  1.390625f, 1.296875f,  0.5625f,    1.421875f,  -0.53125f,  1.0f,      0.375f,
    -0.375f,    0.109375f, -1.421875f, -0.0625f,   -0.09375f,  -1.65625f,  0.5625f,   -2.15625f,
    -0.171875f, 0.578125f, -1.71875f,  0.890625f,  -0.9375f,   -0.625f,    -0.34375f, -0.5f,
    0.3125f,    0.734375f, -0.984375f, 0.78125f,   -0.109375f, -0.765625f, 0.984375f, -0.5f,
    -0.109375f, -0.40625f, -0.78125f,  0.53125f,   0.3125f,    0.65625f,   0.375f,    0.0f};
static const float want_linear[6] = {1.40625f, -0.5f, 0.34375f, -0.09375f, -0.421875f, 0.109375f};
static const float want_add[8] = {-1.75f, 0.875f, -0.75f, -0.25f, 2.375f, -1.375f, 1.25f, -0.375f};
static const float want_softmax[8] = {0.0925737396f, 0.222072855f,  0.532725096f, 0.152628303f,
                                      0.276051283f,  0.0790900141f, 0.189727083f, 0.45513162f};
static const float want_mean[2] = {-0.21875f, 0.09375f};
static const float want_avg_pool[8] = {-0.40625f, 0.28125f, 0.21875f, -0.15625f,
                                       -0.21875f, -0.0625f, 0.40625f, 0.03125f};
static const float want_gelu[8] = {-0.158655256f, -0.0562827215f, 0.580029488f, -0.154268771f,
                                   0.242313668f,  -0.166938588f,  0.0f,         0.708061397f};
static const float want_layer_norm[8] = {-1.22131503f, 0.146557808f, 1.51443064f,   -0.439673394f,
                                         0.439673394f, -1.51443064f, -0.146557808f, 1.22131503f};

static float xs[32], ws[54];
static const float bias[3] = {0.25f, -0.5f, 0.125f};

static uint16_t to_narrow(etrt_dtype dtype, float v) {
  return dtype == ETRT_DTYPE_FLOAT16 ? etrt_float_to_half(v) : etrt_float_to_bfloat16(v);
}
static float from_narrow(etrt_dtype dtype, uint16_t v) {
  return dtype == ETRT_DTYPE_FLOAT16 ? etrt_half_to_float(v) : etrt_bfloat16_to_float(v);
}

/* A constant of `dtype` from floats (storage that outlives the program writer). */
static uint16_t constants[4][64];
static int32_t narrow_constant(etrt_test_kp *p, etrt_dtype dtype, int slot, int32_t rank,
                               const int32_t *dims, const float *values, int n) {
  for (int i = 0; i < n; ++i) constants[slot][i] = to_narrow(dtype, values[i]);
  return etrt_test_kp_tensor(p, dtype, rank, dims, constants[slot], 0);
}

typedef enum {
  OP_CONV,
  OP_CONV_NHWC,
  OP_LINEAR,
  OP_ADD,
  OP_SOFTMAX,
  OP_MEAN,
  OP_POOL,
  OP_GELU,
  OP_LAYER_NORM,
  OP_COUNT
} op_kind;

static void check_op(op_kind op, etrt_dtype dtype) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  const int spatial = op == OP_CONV || op == OP_CONV_NHWC || op == OP_POOL;
  int32_t x = spatial ? etrt_test_kp_tensor(&p, dtype, 4, (int32_t[]){1, 2, 4, 4}, NULL, 0)
                      : etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 4}, NULL, 0);
  int32_t y = -1;
  const float *want = NULL;
  int n = 0;
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  switch (op) {
    case OP_CONV:
    case OP_CONV_NHWC: {
      int32_t w = narrow_constant(&p, dtype, 0, 4, (int32_t[]){3, 2, 3, 3}, ws, 54);
      int32_t b = narrow_constant(&p, dtype, 1, 1, (int32_t[]){3}, bias, 3);
      int32_t one = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
      int32_t zero = etrt_test_kp_ints(&p, (int64_t[]){0, 0}, 2);
      int32_t no = etrt_test_kp_bool(&p, 0), groups = etrt_test_kp_int(&p, 1);
      y = etrt_test_kp_tensor(&p, dtype, 4, (int32_t[]){1, 3, 4, 4}, NULL, 0);
      if (op == OP_CONV_NHWC) {
        etrt_test_kp_dim_order(&p, x, nhwc);
        etrt_test_kp_dim_order(&p, y, nhwc);
      }
      etrt_test_kp_call(&p, "aten::convolution.out",
                        (int32_t[]){x, w, b, one, one, one, no, zero, groups, y, y}, 11);
      want = want_conv;
      n = 48;
      break;
    }
    case OP_LINEAR: {
      int32_t w = narrow_constant(&p, dtype, 0, 2, (int32_t[]){3, 4}, ws, 12);
      int32_t b = narrow_constant(&p, dtype, 1, 1, (int32_t[]){3}, bias, 3);
      y = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 3}, NULL, 0);
      etrt_test_kp_call(&p, "aten::linear.out", (int32_t[]){x, w, b, y, y}, 5);
      want = want_linear;
      n = 6;
      break;
    }
    case OP_ADD: {
      int32_t o = narrow_constant(&p, dtype, 0, 2, (int32_t[]){2, 4}, xs + 8, 8);
      int32_t alpha = etrt_test_kp_int(&p, 2);
      y = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 4}, NULL, 0);
      etrt_test_kp_call(&p, "aten::add.out", (int32_t[]){x, o, alpha, y, y}, 5);
      want = want_add;
      n = 8;
      break;
    }
    case OP_SOFTMAX: {
      int32_t dim = etrt_test_kp_int(&p, -1), no = etrt_test_kp_bool(&p, 0);
      y = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 4}, NULL, 0);
      etrt_test_kp_call(&p, "aten::_softmax.out", (int32_t[]){x, dim, no, y, y}, 5);
      want = want_softmax;
      n = 8;
      break;
    }
    case OP_MEAN: {
      int32_t dims = etrt_test_kp_ints(&p, (int64_t[]){-1}, 1), yes = etrt_test_kp_bool(&p, 1);
      int32_t none = etrt_test_kp_none(&p);
      y = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 1}, NULL, 0);
      etrt_test_kp_call(&p, "aten::mean.out", (int32_t[]){x, dims, yes, none, y, y}, 6);
      want = want_mean;
      n = 2;
      break;
    }
    case OP_POOL: {
      int32_t k = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
      int32_t zero = etrt_test_kp_ints(&p, (int64_t[]){0, 0}, 2);
      int32_t no = etrt_test_kp_bool(&p, 0), yes = etrt_test_kp_bool(&p, 1);
      int32_t none = etrt_test_kp_none(&p);
      y = etrt_test_kp_tensor(&p, dtype, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
      etrt_test_kp_call(&p, "aten::avg_pool2d.out", (int32_t[]){x, k, k, zero, no, yes, none, y, y},
                        9);
      want = want_avg_pool;
      n = 8;
      break;
    }
    case OP_GELU: {
      int32_t approximate = etrt_test_kp_string(&p, "none");
      y = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 4}, NULL, 0);
      etrt_test_kp_call(&p, "aten::gelu.out", (int32_t[]){x, approximate, y, y}, 4);
      want = want_gelu;
      n = 8;
      break;
    }
    default: {
      int32_t shape = etrt_test_kp_ints(&p, (int64_t[]){4}, 1);
      const float ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
      int32_t w = narrow_constant(&p, dtype, 0, 1, (int32_t[]){4}, ones, 4);
      int32_t b = narrow_constant(&p, dtype, 1, 1, (int32_t[]){4}, zeros, 4);
      int32_t eps = etrt_test_kp_double(&p, 1e-5);
      y = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 4}, NULL, 0);
      int32_t m = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 1}, NULL, 0);
      int32_t r = etrt_test_kp_tensor(&p, dtype, 2, (int32_t[]){2, 1}, NULL, 0);
      int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, m, r}, 3);
      etrt_test_kp_call(&p, "aten::native_layer_norm.out",
                        (int32_t[]){x, shape, w, b, eps, y, m, r, ret}, 9);
      want = want_layer_norm;
      n = 8;
      break;
    }
  }
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  uint16_t in[32], out[48];
  const int numel = spatial ? 32 : 8;
  for (int i = 0; i < numel; ++i) {
    /* logical i = c * 16 + hw; channels-last stores it at hw * 2 + c */
    int at = op == OP_CONV_NHWC ? (i % 16) * 2 + i / 16 : i;
    in[at] = to_narrow(dtype, xs[i]);
  }
  etrt_tensor_view v = {in, dtype, spatial ? 4 : 2, {1, 2, 4, 4}};
  if (!spatial) {
    v.sizes[0] = 2;
    v.sizes[1] = 4;
  }
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, (size_t)n * 2, NULL));
  const double tolerance = dtype == ETRT_DTYPE_FLOAT16 ? 2e-3 : 1.6e-2;
  for (int i = 0; i < n; ++i) {
    int at = op == OP_CONV_NHWC ? (i % 16) * 3 + i / 16 : i;
    float got = from_narrow(dtype, out[at]);
    if (!(fabs(got - want[i]) <= tolerance * (1 + fabs(want[i]))))
      etrt_test_fail(__FILE__, __LINE__, "op %d, %s: element %d is %g, want %g", (int)op,
                     etrt_dtype_name(dtype), i, got, want[i]);
  }
  free(pte);
}

static void test_half_and_bfloat16(void) {
  for (int op = 0; op < OP_COUNT; ++op) {
    check_op((op_kind)op, ETRT_DTYPE_FLOAT16);
    check_op((op_kind)op, ETRT_DTYPE_BFLOAT16);
  }
}

/* Breadth: each operator below on a [3, 4] input (inputs exactly representable in
 * both narrow types) runs in float16 and bfloat16 and must give its float32 result
 * rounded to the narrow type, within one unit in the last place: engine-backed
 * kernels compute in float32 and round once, the kernels of their own loop compute in
 * double and round once, byte movers move. The float32 results are tested against
 * torch's values in the families' tests. */
typedef enum {
  A_UNARY,     /* (self, *, out) */
  A_BINARY,    /* (self, other, *, out) */
  A_SCALAR,    /* (self, Scalar 0.375, *, out) */
  A_SCALAR2,   /* (self, Scalar -0.5, Scalar 0.75, *, out) */
  A_SUB,       /* (self, other, Scalar alpha 0.5, *, out) */
  A_DIM,       /* (self, int dim 1, <extra>, *, out): _log_softmax, cumsum */
  A_DIMS_KEEP, /* (self, int[] [1], bool keepdim, [dtype None,] *, out) -> [3, 1] */
  A_PERMUTE,   /* (self, int[] [1, 0], *, out) -> [4, 3] */
  A_WHERE,     /* where(cond, self, other, *, out) */
  A_CAT,       /* cat([self, other], 0, *, out) -> [6, 4] */
  A_SLICE,     /* slice_copy(self, 1, 1, 4, 2, *, out) -> [3, 2] */
  A_UNFOLD,    /* unfold_copy(self, 1, 2, 1, *, out) -> [3, 3, 2] */
  A_VAR,       /* var.correction_out(self, [1], None, True, *, out) -> [3, 1] */
  A_INSTANCE,  /* _native_batch_norm_legit.no_stats_out over [3, 4] as N 3, C 4 */
  A_ELU        /* elu(self, 0.5, 1, 1, *, out) */
} arg_kind;

typedef struct {
  const char *op;
  arg_kind args;
  int positive; /* inputs in (0, 1.625] rather than [-1, 1] */
} breadth_case;

static const breadth_case breadth[] = {
    {"aten::relu.out", A_UNARY, 0},
    {"aten::sigmoid.out", A_UNARY, 0},
    {"aten::tanh.out", A_UNARY, 0},
    {"aten::exp.out", A_UNARY, 0},
    {"aten::neg.out", A_UNARY, 0},
    {"aten::abs.out", A_UNARY, 0},
    {"aten::sqrt.out", A_UNARY, 1},
    {"aten::rsqrt.out", A_UNARY, 1},
    {"aten::log.out", A_UNARY, 1},
    {"aten::reciprocal.out", A_UNARY, 1},
    {"aten::sin.out", A_UNARY, 0},
    {"aten::cos.out", A_UNARY, 0},
    {"aten::asin.out", A_UNARY, 0},
    {"aten::atan.out", A_UNARY, 0},
    {"aten::erf.out", A_UNARY, 0},
    {"aten::hardswish.out", A_UNARY, 0},
    {"aten::hardsigmoid.out", A_UNARY, 0},
    {"aten::silu.out", A_UNARY, 0},
    {"aten::floor.out", A_UNARY, 0},
    {"aten::round.out", A_UNARY, 0},
    {"aten::expm1.out", A_UNARY, 0},
    {"aten::log1p.out", A_UNARY, 1},
    {"aten::log2.out", A_UNARY, 1},
    {"aten::sign.out", A_UNARY, 0},
    {"aten::mul.out", A_BINARY, 0},
    {"aten::div.out", A_BINARY, 0},
    {"aten::maximum.out", A_BINARY, 0},
    {"aten::minimum.out", A_BINARY, 0},
    {"aten::atan2.out", A_BINARY, 0},
    {"aten::fmod.Tensor_out", A_BINARY, 0},
    {"aten::remainder.Tensor_out", A_BINARY, 0},
    {"aten::pow.Tensor_Tensor_out", A_BINARY, 1},
    {"aten::sub.out", A_SUB, 0},
    {"aten::mul.Scalar_out", A_SCALAR, 0},
    {"aten::pow.Tensor_Scalar_out", A_SCALAR, 1},
    {"aten::leaky_relu.out", A_SCALAR, 0},
    {"aten::hardtanh.out", A_SCALAR2, 0},
    {"aten::clamp.out", A_SCALAR2, 0},
    {"aten::elu.out", A_ELU, 0},
    {"aten::_log_softmax.out", A_DIM, 0},
    {"aten::cumsum.out", A_DIM, 0},
    {"aten::sum.IntList_out", A_DIMS_KEEP, 0},
    {"aten::amax.out", A_DIMS_KEEP, 0},
    {"aten::var.correction_out", A_VAR, 0},
    {"aten::permute_copy.out", A_PERMUTE, 0},
    {"aten::where.self_out", A_WHERE, 0},
    {"aten::cat.out", A_CAT, 0},
    {"aten::slice_copy.Tensor_out", A_SLICE, 0},
    {"aten::unfold_copy.out", A_UNFOLD, 0},
    {"aten::_native_batch_norm_legit.no_stats_out", A_INSTANCE, 0},
};

/* Runs case `c` with inputs of `dtype` (x and other as floats); result gets the output
 * as floats, n its element count. */
static void run_breadth(const breadth_case *c, etrt_dtype dtype, const float *x, const float *o,
                        float *result, int *n) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  static uint16_t other_narrow[12];
  static float other_f32[12];
  const int32_t dims[2] = {3, 4};
  int32_t a = etrt_test_kp_tensor(&p, dtype, 2, dims, NULL, 0), b = -1;
  if (c->args == A_BINARY || c->args == A_SUB || c->args == A_WHERE || c->args == A_CAT) {
    for (int i = 0; i < 12; ++i) {
      other_narrow[i] = to_narrow(dtype == ETRT_DTYPE_FLOAT32 ? ETRT_DTYPE_FLOAT16 : dtype, o[i]);
      other_f32[i] = o[i];
    }
    b = etrt_test_kp_tensor(&p, dtype, 2, dims,
                            dtype == ETRT_DTYPE_FLOAT32 ? (void *)other_f32 : (void *)other_narrow,
                            0);
  }
  int32_t out_dims[3] = {3, 4, 0}, out_rank = 2;
  if (c->args == A_DIMS_KEEP || c->args == A_VAR) out_dims[1] = 1;
  if (c->args == A_PERMUTE) out_dims[0] = 4, out_dims[1] = 3;
  if (c->args == A_CAT) out_dims[0] = 6;
  if (c->args == A_SLICE) out_dims[1] = 2;
  if (c->args == A_UNFOLD) out_rank = 3, out_dims[1] = 3, out_dims[2] = 2;
  int32_t y = etrt_test_kp_tensor(&p, dtype, out_rank, out_dims, NULL, 0);
  int32_t one = etrt_test_kp_int(&p, 1), none = etrt_test_kp_none(&p);
  int32_t no = etrt_test_kp_bool(&p, 0), yes = etrt_test_kp_bool(&p, 1);
  int32_t dim1 = etrt_test_kp_ints(&p, (int64_t[]){1}, 1);
  switch (c->args) {
    case A_UNARY:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, y, y}, 3);
      break;
    case A_BINARY:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, b, y, y}, 4);
      break;
    case A_SUB:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, b, etrt_test_kp_double(&p, 0.5), y, y}, 5);
      break;
    case A_SCALAR:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, etrt_test_kp_double(&p, 0.375), y, y}, 4);
      break;
    case A_SCALAR2:
      etrt_test_kp_call(
          &p, c->op,
          (int32_t[]){a, etrt_test_kp_double(&p, -0.5), etrt_test_kp_double(&p, 0.75), y, y}, 5);
      break;
    case A_ELU:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, etrt_test_kp_double(&p, 0.5), one, one, y, y}, 6);
      break;
    case A_DIM:
      etrt_test_kp_call(
          &p, c->op, (int32_t[]){a, one, strcmp(c->op, "aten::cumsum.out") == 0 ? none : no, y, y},
          5);
      break;
    case A_DIMS_KEEP:
      if (strcmp(c->op, "aten::sum.IntList_out") == 0)
        etrt_test_kp_call(&p, c->op, (int32_t[]){a, dim1, yes, none, y, y}, 6);
      else
        etrt_test_kp_call(&p, c->op, (int32_t[]){a, dim1, yes, y, y}, 5);
      break;
    case A_VAR:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, dim1, none, yes, y, y}, 6);
      break;
    case A_PERMUTE:
      etrt_test_kp_call(&p, c->op,
                        (int32_t[]){a, etrt_test_kp_ints(&p, (int64_t[]){1, 0}, 2), y, y}, 4);
      break;
    case A_WHERE: {
      static const uint8_t cond[12] = {1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0};
      int32_t cv = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 2, dims, cond, 0);
      etrt_test_kp_call(&p, c->op, (int32_t[]){cv, a, b, y, y}, 5);
      break;
    }
    case A_CAT:
      etrt_test_kp_call(&p, c->op,
                        (int32_t[]){etrt_test_kp_tensor_list(&p, (int32_t[]){a, b}, 2),
                                    etrt_test_kp_int(&p, 0), y, y},
                        4);
      break;
    case A_SLICE:
      etrt_test_kp_call(
          &p, c->op,
          (int32_t[]){a, one, one, etrt_test_kp_int(&p, 4), etrt_test_kp_int(&p, 2), y, y}, 7);
      break;
    case A_UNFOLD:
      etrt_test_kp_call(&p, c->op, (int32_t[]){a, one, etrt_test_kp_int(&p, 2), one, y, y}, 6);
      break;
    case A_INSTANCE: {
      int32_t m = etrt_test_kp_tensor(&p, dtype, 1, (int32_t[]){4}, NULL, 0);
      int32_t r = etrt_test_kp_tensor(&p, dtype, 1, (int32_t[]){4}, NULL, 0);
      etrt_test_kp_call(&p, c->op,
                        (int32_t[]){a, none, none, yes, etrt_test_kp_double(&p, 0.1),
                                    etrt_test_kp_double(&p, 1e-5), y, m, r,
                                    etrt_test_kp_tensor_list(&p, (int32_t[]){y, m, r}, 3)},
                        10);
      break;
    }
  }
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
  *n = out_dims[0] * out_dims[1] * (out_rank == 3 ? out_dims[2] : 1);
  uint16_t in16[12], out16[24];
  for (int i = 0; i < 12; ++i)
    in16[i] = to_narrow(dtype == ETRT_DTYPE_FLOAT32 ? ETRT_DTYPE_FLOAT16 : dtype, x[i]);
  etrt_tensor_view v = {dtype == ETRT_DTYPE_FLOAT32 ? (void *)x : (void *)in16, dtype, 2, {3, 4}};
  if (dtype == ETRT_DTYPE_FLOAT32) {
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, result, (size_t)*n * 4, NULL));
  } else {
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out16, (size_t)*n * 2, NULL));
    for (int i = 0; i < *n; ++i) result[i] = from_narrow(dtype, out16[i]);
  }
  free(pte);
}

static void test_half_breadth(void) {
  float general[12], positive[12], other[12];
  for (int i = 0; i < 12; ++i) {
    general[i] = (float)((i * 7) % 17 - 8) / 8;
    positive[i] = (float)((i * 5) % 13 + 1) / 8;
    other[i] = (float)((i * 3) % 11 + 1) / 4 * (i % 3 == 1 ? -1 : 1);
  }
  for (size_t k = 0; k < sizeof breadth / sizeof *breadth; ++k) {
    const breadth_case *c = &breadth[k];
    const float *x = c->positive ? positive : general;
    const float *o = c->positive ? positive : other;
    float f32[24], narrow[24];
    int n = 0;
    run_breadth(c, ETRT_DTYPE_FLOAT32, x, o, f32, &n);
    for (int t = 0; t < 2; ++t) {
      const etrt_dtype dtype = t ? ETRT_DTYPE_BFLOAT16 : ETRT_DTYPE_FLOAT16;
      run_breadth(c, dtype, x, o, narrow, &n);
      const double ulp = dtype == ETRT_DTYPE_FLOAT16 ? 1.0 / 1024 : 1.0 / 128;
      for (int i = 0; i < n; ++i) {
        float want = from_narrow(dtype, to_narrow(dtype, f32[i]));
        if (!(fabs(narrow[i] - want) <= ulp * fabs(want) + 1e-6))
          etrt_test_fail(__FILE__, __LINE__, "%s, %s: element %d is %.8g, float32 gives %.8g",
                         c->op, etrt_dtype_name(dtype), i, narrow[i], f32[i]);
      }
    }
  }
}

int main(void) {
  RUN_TEST(test_half_breadth);
  for (int i = 0; i < 32; ++i) xs[i] = (float)((i * 7) % 17 - 8) / 8;
  for (int i = 0; i < 54; ++i) ws[i] = (float)((i * 5) % 11 - 5) / 8;
  RUN_TEST(test_half_and_bfloat16);
  return TEST_EXIT();
}
