/* Dynamic shapes through SymInts: aten::sym_size.int and executorch_prim arithmetic
 * compute sizes at run time, which view_copy and full read then (not at prepare). */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

/* s = sym_size(x, 0) * 2; y = view_copy(x, [s, 3]) for x [<=4, 6];
 * n = -floordiv(-7, 2) (Python's floor: 4); z = full([n], 1.5) into a [<=8] tensor. */
static void test_sym_sizes(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 6}, NULL, 1);
  int32_t zero = etrt_test_kp_int(&p, 0), two = etrt_test_kp_int(&p, 2);
  int32_t s = etrt_test_kp_int(&p, 4), s2 = etrt_test_kp_int(&p, 8); /* bounds until run */
  int32_t three = etrt_test_kp_int(&p, 3);
  int32_t shape = etrt_test_kp_int_list(&p, (int32_t[]){s2, three}, 2);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){8, 3}, NULL, 1);
  int32_t m7 = etrt_test_kp_int(&p, -7), q = etrt_test_kp_int(&p, 0), n = etrt_test_kp_int(&p, 0);
  int32_t size = etrt_test_kp_int_list(&p, &n, 1);
  int32_t v15 = etrt_test_kp_double(&p, 1.5);
  int32_t z = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){8}, NULL, 1);
  etrt_test_kp_call(&p, "aten::sym_size.int", (int32_t[]){x, zero, s}, 3);
  etrt_test_kp_call(&p, "executorch_prim::mul.Scalar", (int32_t[]){s, two, s2}, 3);
  etrt_test_kp_call(&p, "aten::view_copy.out", (int32_t[]){x, shape, y, y}, 4);
  etrt_test_kp_call(&p, "executorch_prim::floordiv.Scalar", (int32_t[]){m7, two, q}, 3);
  etrt_test_kp_call(&p, "executorch_prim::neg.Scalar", (int32_t[]){q, n}, 2);
  etrt_test_kp_call(&p, "aten::full.out", (int32_t[]){size, v15, z, z}, 4);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){y, z}, 2, &bytes);
  float in[12];
  for (int i = 0; i < 12; ++i) in[i] = (float)i;
  etrt_tensor_view v = {in, F32, 2, {2, 6}}, yo, zo;
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, bytes, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &yo));
  CHECK_OK(etrt_method_get_output(method, 1, &zo));
  CHECK(yo.rank == 2 && yo.sizes[0] == 4 && yo.sizes[1] == 3);
  CHECK(memcmp(yo.data, in, sizeof in) == 0);
  CHECK(zo.rank == 1 && zo.sizes[0] == 4 && ((float *)zo.data)[3] == 1.5f);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* sym_size of a dim beyond the rank is refused when it runs. */
static void test_sym_size_bad_dim(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t five = etrt_test_kp_int(&p, 5), s = etrt_test_kp_int(&p, 0);
  etrt_test_kp_call(&p, "aten::sym_size.int", (int32_t[]){x, five, s}, 3);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &x, 1, &bytes);
  float in[2] = {0}, out[2];
  etrt_tensor_view v = {in, F32, 1, {2}};
  CHECK_FAILS(etrt_test_kp_run(pte, bytes, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "dim 5 is out of range for rank 1");
  free(pte);
}

/* The Int results of sym_max, sym_min, ceil, round (half to even), sym_int, sym_not,
 * sym_ite, floordiv.int and mod.int (Python's signs) become the sizes of a full's
 * out tensor; a Double sym_min becomes its fill value. For 5 rows:
 * [max(5, 7), min(5, 7), ceil(2.5), round(2.5), int(2.5), 5 if not 5 > 7 else 7,
 *  -7 % 3, -(-7 // 2)] = [7, 5, 3, 2, 2, 5, 2, 4], filled with min(2.5, 7) = 2.5. */
static void test_prim_rounding_and_choice(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){8, 2}, NULL, 1);
  int32_t zero = etrt_test_kp_int(&p, 0), two = etrt_test_kp_int(&p, 2);
  int32_t three = etrt_test_kp_int(&p, 3), seven = etrt_test_kp_int(&p, 7);
  int32_t m7 = etrt_test_kp_int(&p, -7);
  int32_t r[13];
  for (int i = 0; i < 13; ++i) r[i] = etrt_test_kp_int(&p, 8);
  int32_t s = r[0], mx = r[1], mn = r[2], h = r[3], c = r[4], rd = r[5], t = r[6], g = r[7];
  int32_t n = r[8], ite = r[9], md = r[10], q = r[11], nq = r[12];
  int32_t fill = etrt_test_kp_double(&p, 0);
  int32_t dims = etrt_test_kp_int_list(&p, (int32_t[]){mx, mn, c, rd, t, ite, md, nq}, 8);
  int32_t y = etrt_test_kp_tensor(&p, F32, 8, (int32_t[]){8, 8, 4, 2, 2, 8, 4, 4}, NULL, 1);
  etrt_test_kp_call(&p, "aten::sym_size.int", (int32_t[]){x, zero, s}, 3);
  etrt_test_kp_call(&p, "executorch_prim::sym_max.Scalar", (int32_t[]){s, seven, mx}, 3);
  etrt_test_kp_call(&p, "executorch_prim::sym_min.Scalar", (int32_t[]){s, seven, mn}, 3);
  etrt_test_kp_call(&p, "executorch_prim::truediv.Scalar", (int32_t[]){s, two, h}, 3);
  etrt_test_kp_call(&p, "executorch_prim::ceil.Scalar", (int32_t[]){h, c}, 2);
  etrt_test_kp_call(&p, "executorch_prim::round.Scalar", (int32_t[]){h, rd}, 2);
  etrt_test_kp_call(&p, "executorch_prim::sym_int.Scalar", (int32_t[]){h, t}, 2);
  etrt_test_kp_call(&p, "executorch_prim::gt.Scalar", (int32_t[]){s, seven, g}, 3);
  etrt_test_kp_call(&p, "executorch_prim::sym_not.Scalar", (int32_t[]){g, n}, 2);
  etrt_test_kp_call(&p, "executorch_prim::sym_ite.Scalar", (int32_t[]){n, s, seven, ite}, 4);
  etrt_test_kp_call(&p, "executorch_prim::mod.int", (int32_t[]){m7, three, md}, 3);
  etrt_test_kp_call(&p, "executorch_prim::floordiv.int", (int32_t[]){m7, two, q}, 3);
  etrt_test_kp_call(&p, "executorch_prim::neg.Scalar", (int32_t[]){q, nq}, 2);
  etrt_test_kp_call(&p, "executorch_prim::sym_min.Scalar", (int32_t[]){h, seven, fill}, 3);
  etrt_test_kp_call(&p, "aten::full.out", (int32_t[]){dims, fill, y, y}, 4);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &bytes);
  float in[10] = {0};
  etrt_tensor_view v = {in, F32, 2, {5, 2}}, yo;
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, bytes, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &yo));
  const int64_t want[8] = {7, 5, 3, 2, 2, 5, 2, 4};
  CHECK(yo.rank == 8);
  for (int i = 0; i < 8 && yo.rank == 8; ++i) CHECK(yo.sizes[i] == want[i]);
  CHECK(((float *)yo.data)[0] == 2.5f);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* et_copy_index into a [<=3, 2] accumulator at indices 0 and 1: [2, 2] holding both
 * rows; an index past the bound is refused when it runs. */
static void test_copy_index(void) {
  for (int past = 0; past < 2; ++past) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
    int32_t acc = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 1);
    int32_t r = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
    int32_t zero = etrt_test_kp_int(&p, 0), one = etrt_test_kp_int(&p, past ? 3 : 1);
    etrt_test_kp_call(&p, "executorch_prim::et_copy_index.tensor", (int32_t[]){acc, x, zero}, 3);
    etrt_test_kp_call(&p, "aten::neg.out", (int32_t[]){x, r, r}, 3);
    etrt_test_kp_call(&p, "executorch_prim::et_copy_index.tensor", (int32_t[]){acc, r, one}, 3);
    size_t bytes;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &acc, 1, &bytes);
    float in[2] = {1.5f, -2}, out[4];
    etrt_tensor_view v = {in, F32, 1, {2}}, o;
    if (past) {
      CHECK_FAILS(etrt_test_kp_run(pte, bytes, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "executorch_prim::et_copy_index.tensor (instruction 2): the result's shape "
                  "[4, 2] does not fit the out tensor");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, bytes, &v, 1, out, sizeof out, &o));
      CHECK(o.rank == 2 && o.sizes[0] == 2 && o.sizes[1] == 2);
      CHECK(out[0] == 1.5f && out[1] == -2 && out[2] == -1.5f && out[3] == 2);
    }
    free(pte);
  }
}

int main(void) {
  RUN_TEST(test_copy_index);
  RUN_TEST(test_prim_rounding_and_choice);
  RUN_TEST(test_sym_sizes);
  RUN_TEST(test_sym_size_bad_dim);
  return TEST_EXIT();
}
