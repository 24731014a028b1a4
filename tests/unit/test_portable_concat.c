/* Joining and splitting along a dim: cat (with ATen's skipped empty 1-D tensors),
 * stack, split_with_sizes_copy, unbind_copy and slice_copy, and the refusals. */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

/* x [2, 3]: cat([x, c [2, 1], empty [0]], -1) -> [2, 4]; stack([x, x], 1) -> [2, 2, 3];
 * slice_copy(cat, 1, -3, None, 2) -> [2, 2]. */
static void test_cat_stack_slice(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float c[2] = {100, 200};
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t cv = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 1}, c, 0);
  int32_t empty = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){0}, NULL, 0);
  int32_t list = etrt_test_kp_tensor_list(&p, (int32_t[]){x, cv, empty}, 3);
  int32_t pair = etrt_test_kp_tensor_list(&p, (int32_t[]){x, x}, 2);
  int32_t last = etrt_test_kp_int(&p, -1), one = etrt_test_kp_int(&p, 1);
  int32_t m3 = etrt_test_kp_int(&p, -3), none = etrt_test_kp_none(&p),
          two = etrt_test_kp_int(&p, 2);
  int32_t cat = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 4}, NULL, 0);
  int32_t st = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 3}, NULL, 0);
  int32_t sl = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::cat.out", (int32_t[]){list, last, cat, cat}, 4);
  etrt_test_kp_call(&p, "aten::stack.out", (int32_t[]){pair, one, st, st}, 4);
  etrt_test_kp_call(&p, "aten::slice_copy.Tensor_out", (int32_t[]){cat, one, m3, none, two, sl, sl},
                    7);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){cat, st, sl}, 3, &size);
  float in[6] = {1, 2, 3, 4, 5, 6};
  etrt_tensor_view v = {in, F32, 2, {2, 3}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  const float want_cat[8] = {1, 2, 3, 100, 4, 5, 6, 200};
  CHECK(memcmp(o[0].data, want_cat, sizeof want_cat) == 0);
  const float want_stack[12] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
  CHECK(memcmp(o[1].data, want_stack, sizeof want_stack) == 0);
  const float want_slice[4] = {2, 100, 5, 200}; /* columns 1 and 3 */
  CHECK(memcmp(o[2].data, want_slice, sizeof want_slice) == 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* split_with_sizes_copy(x [5, 2], [2, 3], 0) and unbind_copy(x [5, 2], 1); split sizes
 * that do not add up to the dim are refused and nothing is written. */
static void test_split_unbind(void) {
  for (int bad = 0; bad < 2; ++bad) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){5, 2}, NULL, 0);
    int32_t sizes = etrt_test_kp_ints(&p, bad ? (int64_t[]){2, 2} : (int64_t[]){2, 3}, 2);
    int32_t zero = etrt_test_kp_int(&p, 0), one = etrt_test_kp_int(&p, 1);
    int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 2}, NULL, 0);
    int32_t b = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){bad ? 2 : 3, 2}, NULL, 0);
    int32_t parts = etrt_test_kp_tensor_list(&p, (int32_t[]){a, b}, 2);
    int32_t c0 = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){5}, NULL, 0);
    int32_t c1 = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){5}, NULL, 0);
    int32_t cols = etrt_test_kp_tensor_list(&p, (int32_t[]){c0, c1}, 2);
    etrt_test_kp_call(&p, "aten::split_with_sizes_copy.out",
                      (int32_t[]){x, sizes, zero, parts, parts}, 5);
    etrt_test_kp_call(&p, "aten::unbind_copy.int_out", (int32_t[]){x, one, cols, cols}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){a, b, c0, c1}, 4, &size);
    float in[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    etrt_tensor_view v = {in, F32, 2, {5, 2}}, o[4];
    etrt_program *program;
    etrt_method *method;
    if (bad) {
      CHECK_FAILS(etrt_test_kp_execute(pte, size, &v, 1, &program, &method),
                  ETRT_ERROR_INVALID_ARGUMENT, "the parts add up to 4, dim 0 has 5");
    } else {
      CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
      for (uint32_t i = 0; i < 4; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
      CHECK(memcmp(o[0].data, in, 4 * sizeof(float)) == 0);
      CHECK(memcmp(o[1].data, in + 4, 6 * sizeof(float)) == 0);
      const float *c0v = o[2].data, *c1v = o[3].data;
      for (int r = 0; r < 5; ++r) CHECK(c0v[r] == in[r * 2] && c1v[r] == in[r * 2 + 1]);
    }
    etrt_method_destroy(method);
    etrt_program_destroy(program);
    free(pte);
  }
}

/* cat of tensors whose other sizes differ is refused, naming the tensor. */
static void test_cat_mismatch(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float c[3] = {0};
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 2}, NULL, 0);
  int32_t cv = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){1, 3}, c, 0);
  int32_t list = etrt_test_kp_tensor_list(&p, (int32_t[]){x, cv}, 2);
  int32_t zero = etrt_test_kp_int(&p, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::cat.out", (int32_t[]){list, zero, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[4] = {0}, out[6];
  etrt_tensor_view v = {in, F32, 2, {2, 2}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "tensor 1 does not match");
  free(pte);
}

/* Channels-last [1, 2, 2, 2] and [1, 1, 2, 2] joined along the channels into a
 * channels-last [1, 3, 2, 2], then sliced back to channel 2; the same with the second
 * input contiguous (moved element by element). */
static void test_cat_slice_channels_last(void) {
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  for (int mixed = 0; mixed < 2; ++mixed) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
    int32_t b = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
    int32_t c = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 3, 2, 2}, NULL, 0);
    int32_t s = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
    etrt_test_kp_dim_order(&p, a, nhwc);
    if (!mixed) etrt_test_kp_dim_order(&p, b, nhwc);
    etrt_test_kp_dim_order(&p, c, nhwc);
    etrt_test_kp_dim_order(&p, s, nhwc);
    int32_t list = etrt_test_kp_tensor_list(&p, (int32_t[]){a, b}, 2);
    int32_t one = etrt_test_kp_int(&p, 1), two = etrt_test_kp_int(&p, 2);
    int32_t three = etrt_test_kp_int(&p, 3);
    etrt_test_kp_call(&p, "aten::cat.out", (int32_t[]){list, one, c, c}, 4);
    etrt_test_kp_call(&p, "aten::slice_copy.Tensor_out", (int32_t[]){c, one, two, three, one, s, s},
                      7);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, (int32_t[]){a, b}, 2, (int32_t[]){c, s}, 2, &size);
    /* logical a[0, ch, hw] = 10 * ch + hw, b[0, 0, hw] = 20 + hw, both stored by position */
    float av[8], bv[4];
    for (int hw = 0; hw < 4; ++hw) {
      for (int ch = 0; ch < 2; ++ch) av[hw * 2 + ch] = (float)(10 * ch + hw);
      bv[hw] = (float)(20 + hw);
    }
    etrt_tensor_view v[2] = {{av, F32, 4, {1, 2, 2, 2}}, {bv, F32, 4, {1, 1, 2, 2}}}, o[2];
    etrt_program *program = NULL;
    etrt_method *method = NULL;
    {
      CHECK_OK(etrt_test_kp_execute(pte, size, v, 2, &program, &method));
      CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
      CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
      const float *cv = o[0].data, *sv = o[1].data;
      for (int hw = 0; hw < 4; ++hw) {
        for (int ch = 0; ch < 3; ++ch)
          CHECK(cv[hw * 3 + ch] == (float)(10 * ch + hw)); /* channel 2 is b: 20 + hw */
        CHECK(sv[hw] == (float)(20 + hw));
      }
    }
    if (method) etrt_method_destroy(method);
    if (program) etrt_program_destroy(program);
    free(pte);
  }
}

/* stack of a channels-last and a contiguous [1, 2, 2, 2] along dim 1 into a contiguous
 * [1, 2, 2, 2, 2], unbind of it along dim 1 into a channels-last out and a contiguous one,
 * and slice_copy from channels-last into contiguous (step 2). */
static void test_stack_unbind_mixed_orders(void) {
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t dims4[4] = {1, 2, 2, 2};
  int32_t a = etrt_test_kp_tensor(&p, F32, 4, dims4, NULL, 0);
  int32_t b = etrt_test_kp_tensor(&p, F32, 4, dims4, NULL, 0);
  etrt_test_kp_dim_order(&p, a, nhwc);
  int32_t st = etrt_test_kp_tensor(&p, F32, 5, (int32_t[]){1, 2, 2, 2, 2}, NULL, 0);
  int32_t u0 = etrt_test_kp_tensor(&p, F32, 4, dims4, NULL, 0);
  int32_t u1 = etrt_test_kp_tensor(&p, F32, 4, dims4, NULL, 0);
  etrt_test_kp_dim_order(&p, u0, nhwc);
  int32_t sl = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 1, 2}, NULL, 0);
  int32_t one = etrt_test_kp_int(&p, 1), two = etrt_test_kp_int(&p, 2),
          zero = etrt_test_kp_int(&p, 0);
  int32_t none = etrt_test_kp_none(&p);
  int32_t outs = etrt_test_kp_tensor_list(&p, (int32_t[]){u0, u1}, 2);
  etrt_test_kp_call(&p, "aten::stack.out",
                    (int32_t[]){etrt_test_kp_tensor_list(&p, (int32_t[]){a, b}, 2), one, st, st},
                    4);
  etrt_test_kp_call(&p, "aten::unbind_copy.int_out", (int32_t[]){st, one, outs, outs}, 4);
  etrt_test_kp_call(&p, "aten::slice_copy.Tensor_out", (int32_t[]){a, two, zero, none, two, sl, sl},
                    7);
  size_t size;
  uint8_t *pte =
      etrt_test_kp_write(&p, (int32_t[]){a, b}, 2, (int32_t[]){st, u0, u1, sl}, 4, &size);
  /* logical a[0, c, h, w] = 10 * c + 2 * h + w (stored NHWC), b = 100 + the same */
  float av[8], bv[8];
  for (int c = 0; c < 2; ++c)
    for (int hw = 0; hw < 4; ++hw) {
      av[hw * 2 + c] = (float)(10 * c + hw);
      bv[c * 4 + hw] = (float)(100 + 10 * c + hw);
    }
  etrt_tensor_view v[2] = {{av, F32, 4, {1, 2, 2, 2}}, {bv, F32, 4, {1, 2, 2, 2}}}, o[4];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, v, 2, &program, &method));
  for (uint32_t i = 0; i < 4; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  const float *sv = o[0].data, *u0v = o[1].data, *u1v = o[2].data, *slv = o[3].data;
  for (int c = 0; c < 2; ++c)
    for (int hw = 0; hw < 4; ++hw) {
      const float av_ = (float)(10 * c + hw), bv_ = (float)(100 + 10 * c + hw);
      CHECK(sv[0 * 8 + c * 4 + hw] == av_ && sv[1 * 8 + c * 4 + hw] == bv_);
      CHECK(u0v[hw * 2 + c] == av_); /* channels-last */
      CHECK(u1v[c * 4 + hw] == bv_);
    }
  /* a[:, :, 0::2, :] = rows h = 0: [[0, 1], [10, 11]] */
  const float want_slice[4] = {0, 1, 10, 11};
  CHECK(memcmp(slv, want_slice, sizeof want_slice) == 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

int main(void) {
  RUN_TEST(test_stack_unbind_mixed_orders);
  RUN_TEST(test_cat_slice_channels_last);
  RUN_TEST(test_cat_stack_slice);
  RUN_TEST(test_split_unbind);
  RUN_TEST(test_cat_mismatch);
  return TEST_EXIT();
}
