/* Tensors from scalars and the truth reductions: full, full_like (int64),
 * scalar_tensor, arange (float and int64, a dynamic out tensor), any/all over dims
 * and over everything, gather, and _to_dim_order_copy converting dtypes. */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32
#define I64 ETRT_DTYPE_INT64

static void test_fills(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, I64, 1, (int32_t[]){3}, NULL, 0);
  int32_t size = etrt_test_kp_ints(&p, (int64_t[]){2, 2}, 2);
  int32_t v15 = etrt_test_kp_double(&p, 1.5), seven = etrt_test_kp_int(&p, 7);
  int32_t none = etrt_test_kp_none(&p);
  int32_t full = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 2}, NULL, 0);
  int32_t like = etrt_test_kp_tensor(&p, I64, 1, (int32_t[]){3}, NULL, 0);
  int32_t scalar = etrt_test_kp_tensor(&p, F32, 0, NULL, NULL, 0);
  int32_t start = etrt_test_kp_int(&p, 2), end = etrt_test_kp_double(&p, 3.2);
  int32_t step = etrt_test_kp_double(&p, 0.5), end_i = etrt_test_kp_int(&p, -3);
  int32_t step_i = etrt_test_kp_int(&p, -2);
  int32_t range = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){8}, NULL, 1);
  int32_t range_i = etrt_test_kp_tensor(&p, I64, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::full.out", (int32_t[]){size, v15, full, full}, 4);
  etrt_test_kp_call(&p, "aten::full_like.out", (int32_t[]){x, seven, none, like, like}, 5);
  etrt_test_kp_call(&p, "aten::scalar_tensor.out", (int32_t[]){v15, scalar, scalar}, 3);
  etrt_test_kp_call(&p, "aten::arange.start_out", (int32_t[]){start, end, step, range, range}, 5);
  etrt_test_kp_call(&p, "aten::arange.start_out",
                    (int32_t[]){start, end_i, step_i, range_i, range_i}, 5);
  size_t bytes;
  uint8_t *pte =
      etrt_test_kp_write(&p, &x, 1, (int32_t[]){full, like, scalar, range, range_i}, 5, &bytes);
  int64_t in[3] = {0};
  etrt_tensor_view v = {in, I64, 1, {3}}, o[5];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, bytes, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 5; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  for (int i = 0; i < 4; ++i) CHECK(((float *)o[0].data)[i] == 1.5f);
  for (int i = 0; i < 3; ++i) CHECK(((int64_t *)o[1].data)[i] == 7);
  CHECK(o[2].rank == 0 && *(float *)o[2].data == 1.5f);
  CHECK(o[3].rank == 1 && o[3].sizes[0] == 3); /* 2, 2.5, 3 */
  CHECK(((float *)o[3].data)[0] == 2.0f && ((float *)o[3].data)[2] == 3.0f);
  const int64_t *r = o[4].data; /* 2, 0, -2 */
  CHECK(o[4].sizes[0] == 3 && r[0] == 2 && r[1] == 0 && r[2] == -2);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* any over dim 1, all over everything, gather along dim 1. */
static void test_truth_gather(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int64_t index[4] = {2, 0, 1, 1};
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t one = etrt_test_kp_int(&p, 1), no = etrt_test_kp_bool(&p, 0);
  int32_t idx = etrt_test_kp_tensor(&p, I64, 2, (int32_t[]){2, 2}, index, 0);
  int32_t any = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){2}, NULL, 0);
  int32_t all = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 0, NULL, NULL, 0);
  int32_t g = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::any.out", (int32_t[]){x, one, no, any, any}, 5);
  etrt_test_kp_call(&p, "aten::all.all_out", (int32_t[]){x, all, all}, 3);
  etrt_test_kp_call(&p, "aten::gather.out", (int32_t[]){x, one, idx, no, g, g}, 6);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){any, all, g}, 3, &size);
  float in[6] = {0, 0, 0, 0, -2, 3};
  etrt_tensor_view v = {in, F32, 2, {2, 3}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  const uint8_t *a = o[0].data;
  CHECK(a[0] == 0 && a[1] == 1);
  CHECK(*(uint8_t *)o[1].data == 0);
  const float *gv = o[2].data;
  CHECK(gv[0] == 0 && gv[1] == 0 && gv[2] == -2 && gv[3] == -2);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* _to_dim_order_copy float32 -> int64 truncates; an any with a float out tensor is
 * refused when the method is created. */
static void test_to_copy_and_refusal(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  int32_t no = etrt_test_kp_bool(&p, 0), none = etrt_test_kp_none(&p);
  int32_t y = etrt_test_kp_tensor(&p, I64, 1, (int32_t[]){3}, NULL, 0);
  etrt_test_kp_call(&p, "dim_order_ops::_to_dim_order_copy.out", (int32_t[]){x, no, none, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[3] = {1.7f, -2.5f, 40};
  int64_t out[3];
  etrt_tensor_view v = {in, F32, 1, {3}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  CHECK(out[0] == 1 && out[1] == -2 && out[2] == 40);
  free(pte);

  etrt_test_kp_init(&p);
  x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
  y = etrt_test_kp_tensor(&p, F32, 0, NULL, NULL, 0);
  etrt_test_kp_call(&p, "aten::any.all_out", (int32_t[]){x, y, y}, 3);
  pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float f;
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, &f, sizeof f, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "the out tensor must be bool or uint8, not float32");
  free(pte);
}

/* _empty_dim_order.out gives its out tensor the size asked for (contents unspecified). */
static void test_empty_dim_order(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT32, 1, (int32_t[]){1}, NULL, 0);
  int32_t two = etrt_test_kp_int(&p, 2), n = etrt_test_kp_int(&p, 0);
  int32_t size = etrt_test_kp_int_list(&p, (int32_t[]){n, two}, 2);
  int32_t order = etrt_test_kp_ints(&p, (int64_t[]){0, 1}, 2);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT32, 2, (int32_t[]){4, 2}, NULL, 1);
  int32_t zero = etrt_test_kp_int(&p, 0);
  etrt_test_kp_call(&p, "aten::sym_size.int", (int32_t[]){x, zero, n}, 3);
  etrt_test_kp_call(&p, "dim_order_ops::_empty_dim_order.out", (int32_t[]){size, order, y, y}, 4);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &bytes);
  float in[1] = {0}, out[2];
  etrt_tensor_view v = {in, ETRT_DTYPE_FLOAT32, 1, {1}}, o;
  CHECK_OK(etrt_test_kp_run(pte, bytes, &v, 1, out, sizeof out, &o));
  CHECK(o.rank == 2 && o.sizes[0] == 1 && o.sizes[1] == 2);
  free(pte);
}

int main(void) {
  RUN_TEST(test_empty_dim_order);
  RUN_TEST(test_fills);
  RUN_TEST(test_truth_gather);
  RUN_TEST(test_to_copy_and_refusal);
  return TEST_EXIT();
}
