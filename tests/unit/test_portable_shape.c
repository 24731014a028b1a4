/* The portable views and copies: permute, view with -1, unsqueeze, squeeze,
 * expand, select, transpose, embedding, full_like, clone with its dim order, and
 * the refusal of an unknown operator when the method is created. */
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

/* x [2, 3, 4] -> permute_copy(2, 0, 1) [4, 2, 3] -> view_copy(-1, 6) [4, 6]
 * -> unsqueeze_copy(0) [1, 4, 6] -> squeeze_copy.dims(0, 2) [4, 6]
 * -> select_copy(1, -1) [4] -> expand_copy(3, -1) [3, 4]. */
static void test_copy_chain(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
  int32_t perm = etrt_test_kp_ints(&p, (int64_t[]){2, 0, 1}, 3);
  int32_t a = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){4, 2, 3}, NULL, 0);
  int32_t shape = etrt_test_kp_ints(&p, (int64_t[]){-1, 6}, 2);
  int32_t b = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 6}, NULL, 0);
  int32_t zero = etrt_test_kp_int(&p, 0);
  int32_t c = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){1, 4, 6}, NULL, 0);
  int32_t dims = etrt_test_kp_ints(&p, (int64_t[]){0, 2}, 2);
  int32_t d = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 6}, NULL, 0);
  int32_t one = etrt_test_kp_int(&p, 1), last = etrt_test_kp_int(&p, -1);
  int32_t e = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, NULL, 0);
  int32_t size = etrt_test_kp_ints(&p, (int64_t[]){3, -1}, 2);
  int32_t no = etrt_test_kp_bool(&p, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 4}, NULL, 0);
  etrt_test_kp_call(&p, "aten::permute_copy.out", (int32_t[]){x, perm, a, a}, 4);
  etrt_test_kp_call(&p, "aten::view_copy.out", (int32_t[]){a, shape, b, b}, 4);
  etrt_test_kp_call(&p, "aten::unsqueeze_copy.out", (int32_t[]){b, zero, c, c}, 4);
  etrt_test_kp_call(&p, "aten::squeeze_copy.dims_out", (int32_t[]){c, dims, d, d}, 4);
  etrt_test_kp_call(&p, "aten::select_copy.int_out", (int32_t[]){d, one, last, e, e}, 5);
  etrt_test_kp_call(&p, "aten::expand_copy.out", (int32_t[]){e, size, no, y, y}, 5);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &bytes);
  float in[24], out[12];
  for (int i = 0; i < 24; ++i) in[i] = (float)i;
  etrt_tensor_view v = {in, F32, 3, {2, 3, 4}}, got;
  CHECK_OK(etrt_test_kp_run(pte, bytes, &v, 1, out, sizeof out, &got));
  CHECK(got.rank == 2 && got.sizes[0] == 3 && got.sizes[1] == 4);
  /* a[k, i, j] = x[i, j, k]; b = a as [4, 6]: b[k, 5] = a[k, 1, 2] = x[1, 2, k]. */
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 4; ++k) CHECK_NEAR(out[r * 4 + k], in[1 * 12 + 2 * 4 + k], 0);
  free(pte);
}

/* transpose_copy, embedding with int64 indices, full_like and clone. */
static void test_transpose_embedding_fill(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float table[8] = {0, 1, 10, 11, 20, 21, 30, 31}; /* [4, 2] */
  int32_t idx = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){3}, NULL, 0);
  int32_t w = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, table, 0);
  int32_t pad = etrt_test_kp_int(&p, -1), no = etrt_test_kp_bool(&p, 0);
  int32_t e = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 0);
  int32_t zero = etrt_test_kp_int(&p, 0), one = etrt_test_kp_int(&p, 1);
  int32_t t = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t fill = etrt_test_kp_double(&p, 2.5), none = etrt_test_kp_none(&p);
  int32_t f = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t c = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::embedding.out", (int32_t[]){w, idx, pad, no, no, e, e}, 7);
  etrt_test_kp_call(&p, "aten::transpose_copy.int_out", (int32_t[]){e, zero, one, t, t}, 5);
  etrt_test_kp_call(&p, "aten::full_like.out", (int32_t[]){t, fill, none, f, f}, 5);
  etrt_test_kp_call(&p, "aten::clone.out", (int32_t[]){t, none, c, c}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &idx, 1, (int32_t[]){c, f}, 2, &size);
  int64_t in[3] = {3, 0, 2};
  etrt_tensor_view v = {in, ETRT_DTYPE_INT64, 1, {3}};
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  etrt_tensor_view out, filled;
  CHECK_OK(etrt_method_get_output(method, 0, &out));
  CHECK_OK(etrt_method_get_output(method, 1, &filled));
  const float *o = out.data, *fv = filled.data;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) CHECK_NEAR(o[j * 3 + i], table[in[i] * 2 + j], 0);
  for (int i = 0; i < 6; ++i) CHECK_NEAR(fv[i], 2.5, 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* _clone_dim_order to the contiguous order copies; to channels-last it is refused
 * when the method is created. view_copy to a wrong element count is refused. */
static void test_dim_order_and_view_refusals(void) {
  for (int channels_last = 0; channels_last < 2; ++channels_last) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
    int32_t no = etrt_test_kp_bool(&p, 0);
    int32_t order =
        etrt_test_kp_ints(&p, channels_last ? (int64_t[]){0, 2, 3, 1} : (int64_t[]){0, 1, 2, 3}, 4);
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 2, 2}, NULL, 0);
    etrt_test_kp_call(&p, "dim_order_ops::_clone_dim_order.out", (int32_t[]){x, no, order, y, y},
                      5);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    etrt_tensor_view v = {in, F32, 4, {1, 2, 2, 2}};
    if (channels_last) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "argument 2 (dim_order) differs from the out tensor's dim order");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
      CHECK(memcmp(in, out, sizeof out) == 0);
    }
    free(pte);
  }
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
  int32_t shape = etrt_test_kp_ints(&p, (int64_t[]){4, 2}, 2);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::view_copy.out", (int32_t[]){x, shape, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[6] = {0}, out[8];
  etrt_tensor_view v = {in, F32, 1, {6}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "6 elements cannot be viewed as 8");
  free(pte);
}

/* constant_pad_nd(x [2, 3], [1, -1, 1, 0], 9): the last dim gains one in front and
 * loses one at the end, the first gains a row in front. */
static void test_constant_pad(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t pad = etrt_test_kp_ints(&p, (int64_t[]){1, -1, 1, 0}, 4);
  int32_t nine = etrt_test_kp_int(&p, 9);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
  etrt_test_kp_call(&p, "aten::constant_pad_nd.out", (int32_t[]){x, pad, nine, y, y}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[6] = {1, 2, 3, 4, 5, 6}, out[9];
  etrt_tensor_view v = {in, F32, 2, {2, 3}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  const float want[9] = {9, 9, 9, 9, 1, 2, 9, 4, 5};
  CHECK(memcmp(out, want, sizeof want) == 0);
  free(pte);
}

/* triu(x [3, 3], 1), tril(x, 0) and repeat(x, [1, 2]). */
static void test_trilu_repeat(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
  int32_t zero = etrt_test_kp_int(&p, 0), one = etrt_test_kp_int(&p, 1);
  int32_t up = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
  int32_t lo = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
  int32_t reps = etrt_test_kp_ints(&p, (int64_t[]){1, 2}, 2);
  int32_t rep = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 6}, NULL, 0);
  etrt_test_kp_call(&p, "aten::triu.out", (int32_t[]){x, one, up, up}, 4);
  etrt_test_kp_call(&p, "aten::tril.out", (int32_t[]){x, zero, lo, lo}, 4);
  etrt_test_kp_call(&p, "aten::repeat.out", (int32_t[]){x, reps, rep, rep}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){up, lo, rep}, 3, &size);
  float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  etrt_tensor_view v = {in, F32, 2, {3, 3}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  const float want_up[9] = {0, 2, 3, 0, 0, 6, 0, 0, 0}, want_lo[9] = {1, 0, 0, 4, 5, 0, 7, 8, 9};
  CHECK(memcmp(o[0].data, want_up, sizeof want_up) == 0);
  CHECK(memcmp(o[1].data, want_lo, sizeof want_lo) == 0);
  const float *r = o[2].data;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 6; ++j) CHECK(r[i * 6 + j] == in[i * 3 + j % 3]);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* pixel_shuffle(x [1, 4, 1, 1], 2) -> [1, 1, 2, 2] in channel order. */
static void test_pixel_shuffle(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 4, 1, 1}, NULL, 0);
  int32_t two = etrt_test_kp_int(&p, 2);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 1, 2, 2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::pixel_shuffle.out", (int32_t[]){x, two, y, y}, 4);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[4] = {1, 2, 3, 4}, out[4];
  etrt_tensor_view v = {in, F32, 4, {1, 4, 1, 1}};
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  CHECK(memcmp(in, out, sizeof out) == 0);
  free(pte);
}

/* Channels-last (dim order 0, 2, 3, 1) programs: x [1, 2, 2, 2] arrives in NHWC
 * memory; relu keeps it channels-last, _to_dim_order_copy makes it contiguous,
 * convolution (a 1x1 that swaps the channels) reads channels-last and writes
 * contiguous. */
static void test_channels_last(void) {
  const uint8_t nhwc[4] = {0, 2, 3, 1};
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  float w[4] = {0, 1, 1, 0}; /* [2, 2, 1, 1] */
  int32_t dims[4] = {1, 2, 2, 2};
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  etrt_test_kp_dim_order(&p, x, nhwc);
  int32_t r = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  etrt_test_kp_dim_order(&p, r, nhwc);
  int32_t no = etrt_test_kp_bool(&p, 0), none = etrt_test_kp_none(&p);
  int32_t c = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  int32_t wv = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){2, 2, 1, 1}, w, 0);
  int32_t ones = etrt_test_kp_ints(&p, (int64_t[]){1, 1}, 2);
  int32_t zeros = etrt_test_kp_ints(&p, (int64_t[]){0, 0}, 2);
  int32_t one = etrt_test_kp_int(&p, 1);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  etrt_test_kp_call(&p, "aten::relu.out", (int32_t[]){x, r, r}, 3);
  etrt_test_kp_call(&p, "dim_order_ops::_to_dim_order_copy.out", (int32_t[]){r, no, none, c, c}, 5);
  etrt_test_kp_call(&p, "aten::convolution.out",
                    (int32_t[]){x, wv, none, ones, zeros, ones, no, zeros, one, y, y}, 11);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){r, c, y}, 3, &size);
  /* logical x[0, ch, h, w] = ch * 10 + h * 2 + w - 3, stored NHWC. */
  float in[8];
  for (int h = 0; h < 2; ++h)
    for (int w_ = 0; w_ < 2; ++w_)
      for (int ch = 0; ch < 2; ++ch) in[(h * 2 + w_) * 2 + ch] = (float)(ch * 10 + h * 2 + w_ - 3);
  etrt_tensor_view v = {in, F32, 4, {1, 2, 2, 2}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  const float *rv = o[0].data, *cv = o[1].data, *yv = o[2].data;
  for (int ch = 0; ch < 2; ++ch)
    for (int h = 0; h < 2; ++h)
      for (int w_ = 0; w_ < 2; ++w_) {
        float logical = (float)(ch * 10 + h * 2 + w_ - 3), relu = logical > 0 ? logical : 0;
        float swapped = (float)((1 - ch) * 10 + h * 2 + w_ - 3);
        CHECK(rv[(h * 2 + w_) * 2 + ch] == relu);  /* NHWC */
        CHECK(cv[ch * 4 + h * 2 + w_] == relu);    /* NCHW */
        CHECK(yv[ch * 4 + h * 2 + w_] == swapped); /* NCHW */
      }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);

  /* view_copy reads the elements in logical (NCHW) order; unsqueeze_copy writes a
   * channels-last [1, 1, 2, 2, 2] (dim order 0, 1, 3, 4, 2) from a contiguous one. */
  etrt_test_kp_init(&p);
  x = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  etrt_test_kp_dim_order(&p, x, nhwc);
  int32_t shape = etrt_test_kp_ints(&p, (int64_t[]){8}, 1);
  y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){8}, NULL, 0);
  int32_t contiguous = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  int32_t u = etrt_test_kp_tensor(&p, F32, 5, (int32_t[]){1, 1, 2, 2, 2}, NULL, 0);
  etrt_test_kp_dim_order(&p, u, (const uint8_t[]){0, 1, 3, 4, 2});
  int32_t one_dim = etrt_test_kp_int(&p, 1);
  etrt_test_kp_call(&p, "aten::view_copy.out", (int32_t[]){x, shape, y, y}, 4);
  etrt_test_kp_call(
      &p, "dim_order_ops::_to_dim_order_copy.out",
      (int32_t[]){x, etrt_test_kp_bool(&p, 0), etrt_test_kp_none(&p), contiguous, contiguous}, 5);
  etrt_test_kp_call(&p, "aten::unsqueeze_copy.out", (int32_t[]){contiguous, one_dim, u, u}, 4);
  pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){y, u}, 2, &size);
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
  CHECK(o[0].rank == 1 && o[1].rank == 5);
  for (int ch = 0; ch < 2; ++ch)
    for (int h = 0; h < 2; ++h)
      for (int w_ = 0; w_ < 2; ++w_) {
        float logical = (float)(ch * 10 + h * 2 + w_ - 3);
        CHECK(((const float *)o[0].data)[ch * 4 + h * 2 + w_] == logical);
        CHECK(((const float *)o[1].data)[(h * 2 + w_) * 2 + ch] == logical); /* channels last */
      }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);

  /* The one true view keeps to contiguous tensors: its out tensor takes self's bytes. */
  etrt_test_kp_init(&p);
  x = etrt_test_kp_tensor(&p, F32, 4, dims, NULL, 0);
  etrt_test_kp_dim_order(&p, x, nhwc);
  shape = etrt_test_kp_ints(&p, (int64_t[]){8}, 1);
  y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){8}, NULL, 0);
  etrt_test_kp_call(&p, "executorch_prim::et_view.default", (int32_t[]){x, shape, y}, 3);
  pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float out[8];
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL), ETRT_ERROR_UNSUPPORTED,
              "instruction 0 (executorch_prim::et_view.default): argument 0 has a dim order other "
              "than the contiguous one");
  free(pte);
}

/* et_view(x [2, 3], [3, -1]): a [3, 2] tensor on x's bytes; a size that does not
 * divide is refused when it runs. */
static void test_et_view(void) {
  for (int bad = 0; bad < 2; ++bad) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t r = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t shape = etrt_test_kp_ints(&p, (int64_t[]){bad ? 4 : 3, -1}, 2);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 0);
    int32_t z = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 0);
    etrt_test_kp_call(&p, "aten::relu.out", (int32_t[]){x, r, r}, 3);
    etrt_test_kp_call(&p, "executorch_prim::et_view.default", (int32_t[]){r, shape, y}, 3);
    etrt_test_kp_call(&p, "aten::neg.out", (int32_t[]){y, z, z}, 3);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &z, 1, &size);
    float in[6] = {1, -2, 3, 4, -5, 6}, out[6];
    etrt_tensor_view v = {in, F32, 2, {2, 3}}, view;
    if (bad) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT, "6 elements cannot be viewed with the given size");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, &view));
      CHECK(view.rank == 2 && view.sizes[0] == 3 && view.sizes[1] == 2);
      for (int i = 0; i < 6; ++i) CHECK(out[i] == (in[i] > 0 ? -in[i] : 0));
    }
    free(pte);
  }
}

/* An operator the runtime lacks, or a known one with the wrong argument count, is
 * refused when the method is created, naming the operator and the instruction. */
static void test_unknown_operator_refused_at_load(void) {
  for (int wrong_count = 0; wrong_count < 2; ++wrong_count) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
    int32_t a = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
    etrt_test_kp_call(&p, "aten::relu.out", (int32_t[]){x, a, a}, 3);
    if (wrong_count)
      etrt_test_kp_call(&p, "aten::sigmoid.out", (int32_t[]){a, y}, 2);
    else
      etrt_test_kp_call(&p, "aten::no_such_op.out", (int32_t[]){a, y, y}, 3);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    etrt_program *program = NULL;
    etrt_method *method = NULL;
    if (wrong_count) {
      CHECK_OK(etrt_program_load_memory(pte, size, NULL, &program));
      CHECK_FAILS(etrt_method_create(program, "forward", &method), ETRT_ERROR_INVALID_FORMAT,
                  "instruction 1: aten::sigmoid.out takes 3 arguments, the program gives 2");
    } else {
      /* Loading the program already sees the operator table. */
      CHECK_FAILS(etrt_program_load_memory(pte, size, NULL, &program), ETRT_ERROR_UNSUPPORTED,
                  "instruction 1: operator aten::no_such_op.out is not available");
    }
    CHECK(method == NULL);
    etrt_program_destroy(program);
    free(pte);
  }
}

/* unfold_copy(arange(14) as [2, 7], 1, 3, 2) -> [2, 3, 3] and as_strided_copy(arange(10),
 * [3, 2], [2, 3], 1) -> [[1, 4], [3, 6], [5, 8]] (torch); windows that do not fit and
 * strides past self's elements are refused when it runs. */
static void test_unfold_as_strided(void) {
  for (int bad = 0; bad < 3; ++bad) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 7}, NULL, 0);
    int32_t one = etrt_test_kp_int(&p, 1), size3 = etrt_test_kp_int(&p, bad == 1 ? 8 : 3);
    int32_t two = etrt_test_kp_int(&p, 2);
    int32_t u = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 3}, NULL, 0);
    int32_t sizes = etrt_test_kp_ints(&p, (int64_t[]){3, 2}, 2);
    int32_t strides = etrt_test_kp_ints(&p, (int64_t[]){2, bad == 2 ? 9 : 3}, 2);
    int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, NULL, 0);
    etrt_test_kp_call(&p, "aten::unfold_copy.out", (int32_t[]){x, one, size3, two, u, u}, 6);
    etrt_test_kp_call(&p, "aten::as_strided_copy.out", (int32_t[]){x, sizes, strides, one, a, a},
                      6);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){u, a}, 2, &size);
    float in[14];
    for (int i = 0; i < 14; ++i) in[i] = (float)i;
    etrt_tensor_view v = {in, F32, 2, {2, 7}}, o[2];
    etrt_program *program = NULL;
    etrt_method *method = NULL;
    if (bad) {
      CHECK_FAILS(etrt_test_kp_execute(pte, size, &v, 1, &program, &method),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  bad == 1 ? "aten::unfold_copy.out (instruction 0): size 8 and step 2 do not fit "
                             "dim 1 (7)"
                           : "aten::as_strided_copy.out (instruction 1): element 14 is past "
                             "self's 14 elements");
    } else {
      CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
      CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
      CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
      const float unfold[18] = {0, 1, 2, 2, 3, 4, 4, 5, 6, 7, 8, 9, 9, 10, 11, 11, 12, 13};
      const float strided[6] = {1, 4, 3, 6, 5, 8};
      CHECK(memcmp(o[0].data, unfold, sizeof unfold) == 0);
      CHECK(memcmp(o[1].data, strided, sizeof strided) == 0);
    }
    if (method) etrt_method_destroy(method);
    if (program) etrt_program_destroy(program);
    free(pte);
  }
}

/* Inputs the method cannot take (a shape beyond the bound, another dtype, another rank,
 * an index past the inputs) are refused by set_input naming the input and the reason,
 * and leave the method as it was: the output of the last execute stays, and the next
 * execute runs on the last accepted input. */
static void test_input_refusals_write_nothing(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, NULL, 1);
  int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){4, 2}, NULL, 1);
  etrt_test_kp_call(&p, "aten::neg.out", (int32_t[]){x, y, y}, 3);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[4] = {1, -2, 3, -4}, big[10] = {0};
  int32_t ints[4] = {0};
  etrt_tensor_view v = {in, F32, 2, {2, 2}}, o;
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o));
  const float want[4] = {-1, 2, -3, 4};
  CHECK(o.sizes[0] == 2 && memcmp(o.data, want, sizeof want) == 0);
  etrt_tensor_view beyond = {big, F32, 2, {5, 2}},
                   wrong_dtype = {ints, ETRT_DTYPE_INT32, 2, {2, 2}};
  etrt_tensor_view wrong_rank = {in, F32, 1, {4}};
  CHECK_FAILS(etrt_method_set_input(method, 0, &beyond), ETRT_ERROR_INVALID_ARGUMENT,
              "input 0, axis 0: size 5, the method takes at most 4");
  CHECK_FAILS(etrt_method_set_input(method, 0, &wrong_dtype), ETRT_ERROR_INVALID_ARGUMENT,
              "input 0: dtype int32, the method takes float32");
  CHECK_FAILS(etrt_method_set_input(method, 0, &wrong_rank), ETRT_ERROR_INVALID_ARGUMENT,
              "input 0: rank 1, the method takes rank 2");
  CHECK_FAILS(etrt_method_set_input(method, 1, &v), ETRT_ERROR_INVALID_ARGUMENT,
              "has 1 inputs, not 2");
  CHECK_OK(etrt_method_get_output(method, 0, &o));
  CHECK(o.sizes[0] == 2 && memcmp(o.data, want, sizeof want) == 0);
  CHECK_OK(etrt_method_execute(method));
  CHECK_OK(etrt_method_get_output(method, 0, &o));
  CHECK(o.sizes[0] == 2 && memcmp(o.data, want, sizeof want) == 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

int main(void) {
  RUN_TEST(test_input_refusals_write_nothing);
  RUN_TEST(test_unfold_as_strided);
  RUN_TEST(test_copy_chain);
  RUN_TEST(test_transpose_embedding_fill);
  RUN_TEST(test_dim_order_and_view_refusals);
  RUN_TEST(test_et_view);
  RUN_TEST(test_constant_pad);
  RUN_TEST(test_trilu_repeat);
  RUN_TEST(test_pixel_shuffle);
  RUN_TEST(test_channels_last);
  RUN_TEST(test_unknown_operator_refused_at_load);
  return TEST_EXIT();
}
