/* The portable elementwise functions of their own loop (pointwise.c) against values
 * computed with torch 2.14 (committed constants): the float functions, the binary
 * ones with broadcasting, integer remainder and floor division, clamp with tensor
 * bounds, a channels-last operand, float16 and the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float x23[6] = {-2.5f, -1, -0.25f, 0, 0.5f, 3};
static const float xp23[6] = {0.1f, 0.5f, 0.9f, 0.25f, 0.75f, 0.6f};
static const float o23[6] = {1.5f, -2, 0.75f, 2, -0.5f, 1};

static const float ref_expm1[6] = {-0.917914987f, -0.63212055f, -0.221199214f,
                                   0.0f,          0.648721278f, 19.085537f};
static const float ref_log1p[6] = {0.0953101814f, 0.405465096f, 0.641853869f,
                                   0.223143548f,  0.559615791f, 0.470003635f};
static const float ref_log2[6] = {-3.32192802f, -1.0f,         -0.152003124f,
                                  -2.0f,        -0.415037513f, -0.736965537f};
static const float ref_log10[6] = {-1.0f,        -0.30103001f,  -0.0457575023f,
                                   -0.60206002f, -0.124938734f, -0.221848726f};
static const float ref_logit[6] = {-1.38629436f, 0.0f,        1.38629448f,
                                   -1.09861231f, 1.09861231f, 0.405465186f};
static const float ref_elu[6] = {-0.642540455f, -0.442484379f, -0.154839441f, 0.0f, 0.5f, 3.0f};
static const float ref_atan2[6] = {-1.03037679f, -2.67794514f, -0.321750551f,
                                   0.0f,         2.3561945f,   1.24904573f};
static const float ref_fmod[6] = {-1.0f, -1.0f, -0.25f, 0.0f, 0.0f, 0.0f};
static const float ref_remainder[6] = {0.5f, -1.0f, 0.5f, 0.0f, 0.0f, 0.0f};
static const float ref_floordiv[6] = {-2.0f, 0.0f, -1.0f, 0.0f, -1.0f, 3.0f};
static const float ref_rsub[6] = {9.5f, 5.0f, 2.75f, 2.0f, 0.5f, -7.0f};
static const float ref_trunc[6] = {-2.0f, -1.0f, -0.0f, 0.0f, 0.0f, 3.0f};
static const float ref_sign[6] = {-1.0f, -1.0f, -1.0f, 0.0f, 1.0f, 1.0f};
static const float ref_asinh[6] = {-1.64723122f, -0.881373584f, -0.247466475f,
                                   0.0f,         0.481211841f,  1.81844652f};
static const float ref_clampt[6] = {-1.0f, 0.0f, 0.100000001f, 0.0f, 0.5f, 1.0f};

/* One call "aten::<op>" on [2, 3] float32 tensors: `x` (input 0), `other` a second
 * tensor input (NULL: none), `extra` scalar arguments between the operands and out. */
typedef enum { EXTRA_NONE, EXTRA_SCALAR2, EXTRA_ELU, EXTRA_EPS, EXTRA_RSUB } extra_kind;

static void check_map(const char *op, const float *x, const float *other, extra_kind extra,
                      const float *want) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t dims[2] = {2, 3};
  int32_t a = etrt_test_kp_tensor(&p, F32, 2, dims, NULL, 0);
  int32_t b = other ? etrt_test_kp_tensor(&p, F32, 2, dims, NULL, 0) : -1;
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, dims, NULL, 0);
  int32_t args[8], n = 0;
  args[n++] = a;
  if (other) args[n++] = b;
  if (extra == EXTRA_ELU) {
    args[n++] = etrt_test_kp_double(&p, 0.7);
    args[n++] = etrt_test_kp_int(&p, 1);
    args[n++] = etrt_test_kp_int(&p, 1);
  } else if (extra == EXTRA_EPS) {
    args[n++] = etrt_test_kp_double(&p, 0.2);
  } else if (extra == EXTRA_RSUB) {
    args[n++] = etrt_test_kp_double(&p, 2.0);
    args[n++] = etrt_test_kp_int(&p, 3);
  }
  args[n++] = y;
  args[n++] = y;
  etrt_test_kp_call(&p, op, args, (uint32_t)n);
  size_t size;
  int32_t ins[2] = {a, b};
  uint8_t *pte = etrt_test_kp_write(&p, ins, other ? 2 : 1, &y, 1, &size);
  float out[6];
  etrt_tensor_view v[2] = {{(void *)x, F32, 2, {2, 3}}, {(void *)other, F32, 2, {2, 3}}};
  CHECK_OK(etrt_test_kp_run(pte, size, v, other ? 2 : 1, out, sizeof out, NULL));
  for (int i = 0; i < 6; ++i)
    if (!(fabs(out[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]))))
      etrt_test_fail(__FILE__, __LINE__, "%s: element %d is %.9g, want %.9g", op, i, out[i],
                     want[i]);
  free(pte);
}

static void test_float_functions(void) {
  check_map("aten::expm1.out", x23, NULL, EXTRA_NONE, ref_expm1);
  check_map("aten::log1p.out", xp23, NULL, EXTRA_NONE, ref_log1p);
  check_map("aten::log2.out", xp23, NULL, EXTRA_NONE, ref_log2);
  check_map("aten::log10.out", xp23, NULL, EXTRA_NONE, ref_log10);
  check_map("aten::logit.out", xp23, NULL, EXTRA_EPS, ref_logit);
  check_map("aten::elu.out", x23, NULL, EXTRA_ELU, ref_elu);
  check_map("aten::trunc.out", x23, NULL, EXTRA_NONE, ref_trunc);
  check_map("aten::sign.out", x23, NULL, EXTRA_NONE, ref_sign);
  check_map("aten::asinh.out", x23, NULL, EXTRA_NONE, ref_asinh);
  check_map("aten::atan2.out", x23, o23, EXTRA_NONE, ref_atan2);
  check_map("aten::fmod.Tensor_out", x23, o23, EXTRA_NONE, ref_fmod);
  check_map("aten::remainder.Tensor_out", x23, o23, EXTRA_NONE, ref_remainder);
  check_map("aten::floor_divide.out", x23, o23, EXTRA_NONE, ref_floordiv);
  check_map("aten::rsub.Scalar_out", x23, NULL, EXTRA_RSUB, ref_rsub);
}

/* int64 remainder, floor division and div(rounding_mode='trunc'); a zero divisor is
 * an execute error naming the operator. */
static void test_integer_division(void) {
  const int64_t x[6] = {-7, -3, 5, 7, 0, 9}, o[6] = {2, -2, 3, -4, 5, 2};
  const int64_t want[3][6] = {{1, -1, 2, -1, 0, 1}, {-4, 1, 1, -2, 0, 4}, {-3, 1, 1, -1, 0, 4}};
  const char *ops[3] = {"aten::remainder.Tensor_out", "aten::floor_divide.out",
                        "aten::div.out_mode"};
  for (int k = 0; k < 3; ++k) {
    for (int zero = 0; zero < 2; ++zero) {
      etrt_test_kp p;
      etrt_test_kp_init(&p);
      int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){6}, NULL, 0);
      int32_t b = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){6}, NULL, 0);
      int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){6}, NULL, 0);
      if (k == 2) {
        int32_t mode = etrt_test_kp_string(&p, "trunc");
        etrt_test_kp_call(&p, ops[k], (int32_t[]){a, b, mode, y, y}, 5);
      } else {
        etrt_test_kp_call(&p, ops[k], (int32_t[]){a, b, y, y}, 4);
      }
      size_t size;
      uint8_t *pte = etrt_test_kp_write(&p, (int32_t[]){a, b}, 2, &y, 1, &size);
      int64_t out[6], divisor[6];
      memcpy(divisor, o, sizeof divisor);
      if (zero) divisor[3] = 0;
      etrt_tensor_view v[2] = {{(void *)x, ETRT_DTYPE_INT64, 1, {6}},
                               {divisor, ETRT_DTYPE_INT64, 1, {6}}};
      if (zero) {
        etrt_program *program = NULL;
        etrt_method *method = NULL;
        CHECK_FAILS(etrt_test_kp_execute(pte, size, v, 2, &program, &method),
                    ETRT_ERROR_INVALID_ARGUMENT, "integer division by zero");
        CHECK(strstr(etrt_last_error(), ops[k]) != NULL);
        if (method) etrt_method_destroy(method);
        if (program) etrt_program_destroy(program);
      } else {
        etrt_status status = etrt_test_kp_run(pte, size, v, 2, out, sizeof out, NULL);
        CHECK_OK(status);
        CHECK(memcmp(out, want[k], sizeof out) == 0);
      }
      free(pte);
    }
  }
}

/* clamp.Tensor_out: min [3] broadcast over [2, 3], max a 0-D tensor; with min None
 * only the upper bound applies. */
static void test_clamp_tensor(void) {
  for (int absent = 0; absent < 2; ++absent) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t lo =
        absent ? etrt_test_kp_none(&p)
               : etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, (float[]){-1.0f, 0.0f, 0.1f}, 0);
    int32_t hi = etrt_test_kp_tensor(&p, F32, 0, NULL, (float[]){1.0f}, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::clamp.Tensor_out", (int32_t[]){a, lo, hi, y, y}, 5);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
    float out[6];
    etrt_tensor_view v = {(void *)x23, F32, 2, {2, 3}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    for (int i = 0; i < 6; ++i)
      CHECK_NEAR(out[i], absent ? fmin(x23[i], 1.0) : ref_clampt[i], 1e-6);
    free(pte);
  }
}

/* A channels-last [1, 2, 2, 2] operand plus a contiguous one: positions follow each
 * tensor's dim order. float16 in and out. */
static void test_dim_order_and_half(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t dims[4] = {1, 2, 2, 2};
  int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT16, 4, dims, NULL, 0);
  int32_t b = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT16, 4, dims, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT16, 4, dims, NULL, 0);
  etrt_test_kp_dim_order(&p, a, (const uint8_t[]){0, 2, 3, 1});
  etrt_test_kp_call(&p, "aten::atan2.out", (int32_t[]){a, b, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, (int32_t[]){a, b}, 2, &y, 1, &size);
  /* Logical a[0, c, h, w] = c * 4 + h * 2 + w + 1, stored channels-last. */
  uint16_t ah[8], bh[8], out[8];
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 4; ++s) {
      ah[s * 2 + c] = etrt_float_to_half((float)(c * 4 + s + 1));
      bh[c * 4 + s] = etrt_float_to_half(2.0f);
    }
  etrt_tensor_view v[2] = {{ah, ETRT_DTYPE_FLOAT16, 4, {1, 2, 2, 2}},
                           {bh, ETRT_DTYPE_FLOAT16, 4, {1, 2, 2, 2}}};
  CHECK_OK(etrt_test_kp_run(pte, size, v, 2, out, sizeof out, NULL));
  for (int e = 0; e < 8; ++e)
    CHECK_NEAR(etrt_half_to_float(out[e]), atan2((double)(e + 1), 2.0), 1e-3);
  free(pte);
}

/* A float operand cannot be written to an integer out tensor; a bad rounding mode is
 * refused at load, naming the operator and the instruction. */
static void test_refusals(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t a = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::trunc.out", (int32_t[]){a, y, y}, 3);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
  float in[2] = {1, 2};
  int32_t out[2];
  etrt_tensor_view v = {in, F32, 1, {2}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "cannot be written to the int32 out tensor");
  CHECK(strstr(etrt_last_error(), "aten::trunc.out") != NULL);
  free(pte);

  etrt_test_kp_init(&p);
  a = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t mode = etrt_test_kp_string(&p, "round");
  y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::div.out_mode", (int32_t[]){a, a, mode, y, y}, 5);
  pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
  float fout[2];
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, fout, sizeof fout, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "must be 'trunc' or 'floor', not 'round'");
  CHECK(strstr(etrt_last_error(), "instruction 0") != NULL);
  free(pte);
}

/* glu along the last dim of [3, 2] (torch: -1.25, -0.62245935, -0.23814353). */
static void test_glu(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 0);
  int32_t dim = etrt_test_kp_int(&p, -1);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 1}, NULL, 0);
  etrt_test_kp_call(&p, "aten::glu.out", (int32_t[]){a, dim, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
  const float in[6] = {-2.5f, 0, -1, 0.5f, -0.25f, 3};
  const float want[3] = {-1.25f, -0.622459352f, -0.238143533f};
  float out[3];
  etrt_tensor_view v = {(void *)in, F32, 2, {3, 2}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], want[i], 1e-6);
  free(pte);
}

/* Shifts against torch: int8 by a tensor of counts (past the width, negative) and
 * int32 by a scalar. */
static void test_shifts(void) {
  const int8_t a8[6] = {1, -8, 100, -128, 5, 64}, s8[6] = {1, 2, 3, 1, 9, -1};
  const int8_t shl8[6] = {2, -32, 32, 0, 0, 0}, shr8[6] = {0, -2, 12, -64, 0, 0};
  const int32_t a32[4] = {1, -8, 100, -1000};
  const int32_t shl32[4] = {8, -64, 800, -8000}, shr32[4] = {0, -2, 25, -250};
  for (int right = 0; right < 2; ++right) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT8, 1, (int32_t[]){6}, NULL, 0);
    int32_t s = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT8, 1, (int32_t[]){6}, s8, 0);
    int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT8, 1, (int32_t[]){6}, NULL, 0);
    int32_t b = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){4}, a32, 0);
    int32_t by = etrt_test_kp_int(&p, right ? 2 : 3);
    int32_t z = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){4}, NULL, 0);
    etrt_test_kp_call(
        &p, right ? "aten::bitwise_right_shift.Tensor_out" : "aten::bitwise_left_shift.Tensor_out",
        (int32_t[]){a, s, y, y}, 4);
    etrt_test_kp_call(&p,
                      right ? "aten::bitwise_right_shift.Tensor_Scalar_out"
                            : "aten::bitwise_left_shift.Tensor_Scalar_out",
                      (int32_t[]){b, by, z, z}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, (int32_t[]){y, z}, 2, &size);
    etrt_tensor_view v = {(void *)a8, ETRT_DTYPE_INT8, 1, {6}}, o[2];
    etrt_program *program;
    etrt_method *method;
    CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
    CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
    CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
    CHECK(memcmp(o[0].data, right ? shr8 : shl8, sizeof shl8) == 0);
    CHECK(memcmp(o[1].data, right ? shr32 : shl32, sizeof shl32) == 0);
    etrt_method_destroy(method);
    etrt_program_destroy(program);
    free(pte);
  }
}

/* copy_(self, src) in place: src [3] broadcast over self [2, 3] and cast to int32,
 * then _conj_physical (a copy for real tensors); src that does not broadcast to self
 * is refused when it runs, self left as it was. */
static void test_copy_inplace(void) {
  for (int bad = 0; bad < 2; ++bad) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t self = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t src =
        etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){bad ? 2 : 3}, (float[]){1.5f, -2.5f, 7}, 0);
    int32_t no = etrt_test_kp_bool(&p, 0);
    int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 2, (int32_t[]){2, 3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::copy_", (int32_t[]){self, src, no, self}, 4);
    etrt_test_kp_call(&p, "aten::_conj_physical.out", (int32_t[]){self, y, y}, 3);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &self, 1, &y, 1, &size);
    int32_t in[6] = {9, 9, 9, 9, 9, 9}, out[6];
    etrt_tensor_view v = {in, ETRT_DTYPE_INT32, 2, {2, 3}};
    if (bad) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "aten::copy_ (instruction 0): src (rank 1) does not broadcast to self's shape");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
      const int32_t want[6] = {1, -2, 7, 1, -2, 7};
      CHECK(memcmp(out, want, sizeof want) == 0);
    }
    free(pte);
  }
}

/* A planned tensor the program never wrote and gives no initial data (a mutable buffer
 * the exporter leaves zero) reads zeros on the first execute, then keeps what copy_
 * wrote back: acc += x through add.out and copy_ gives x, then 2x. */
static void test_planned_buffer_starts_zeroed(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t acc = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t one = etrt_test_kp_int(&p, 1), no = etrt_test_kp_bool(&p, 0);
  etrt_test_kp_call(&p, "aten::add.out", (int32_t[]){acc, x, one, y, y}, 5);
  etrt_test_kp_call(&p, "aten::copy_", (int32_t[]){acc, y, no, acc}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[3] = {1.5f, -2, 4};
  etrt_tensor_view v = {in, F32, 1, {3}}, o;
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o));
  CHECK(memcmp(o.data, in, sizeof in) == 0);
  CHECK_OK(etrt_method_execute(method));
  CHECK_OK(etrt_method_get_output(method, 0, &o));
  for (int i = 0; i < 3; ++i) CHECK(((const float *)o.data)[i] == 2 * in[i]);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

int main(void) {
  RUN_TEST(test_planned_buffer_starts_zeroed);
  RUN_TEST(test_shifts);
  RUN_TEST(test_copy_inplace);
  RUN_TEST(test_glu);
  RUN_TEST(test_float_functions);
  RUN_TEST(test_integer_division);
  RUN_TEST(test_clamp_tensor);
  RUN_TEST(test_dim_order_and_half);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
