/* float16 and bfloat16 through the engine-backed portable kernels (convolution in
 * both dim orders, linear, add with alpha, softmax, mean, avg_pool2d, gelu, layer
 * norm): computed in float32 and rounded once, compared with torch's float32 values
 * of the same (exactly representable) inputs, committed as constants. */
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

int main(void) {
  for (int i = 0; i < 32; ++i) xs[i] = (float)((i * 7) % 17 - 8) / 8;
  for (int i = 0; i < 54; ++i) ws[i] = (float)((i * 5) % 11 - 5) / 8;
  RUN_TEST(test_half_and_bfloat16);
  return TEST_EXIT();
}
