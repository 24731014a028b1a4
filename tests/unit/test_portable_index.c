/* The portable indexing kernels (index.c) and statistics (statistics.c) against values
 * computed with torch 2.14 (committed constants): index.Tensor with adjacent and
 * separated index tensors, index_put with accumulation, scatter and scatter_add,
 * topk with NaN, var/var_mean, prod, max.dim/min.dim, group norm, and the refusals
 * of out-of-range indices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float index_apart[12] = {15.0f, 19.0f, 23.0f, 3.0f,  7.0f,  11.0f,
                                      3.0f,  7.0f,  11.0f, 15.0f, 19.0f, 23.0f};
static const float index_put_acc[24] = {0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  5.0f,  6.0f,   7.0f,
                                        8.0f,  9.0f,  10.0f, 11.0f, 12.0f, 13.0f, 314.0f, 15.0f,
                                        16.0f, 17.0f, 18.0f, 19.0f, 20.0f, 21.0f, 22.0f,  23.0f};
static const float scatter_ref[9] = {10.0f, 14.0f, 15.0f, 0.0f, 0.0f, 12.0f, 13.0f, 11.0f, 0.0f};
static const float scatter_add_ref[9] = {11.0f, 15.0f, 16.0f, 1.0f, 1.0f,
                                         13.0f, 14.0f, 12.0f, 1.0f};
static const float topk_v[6] = {5.0f, 5.0f, 3.0f, NAN, 7.0f, 7.0f};
static const float topk_v_small[4] = {-2.0f, 1.0f, 0.0f, 2.0f};
static const float ref_var_d2[4] = {6.33333349f, 6.58333349f, 8.33333302f, 4.33333349f};
static const float ref_var_d02k[2] = {7.13888884f, 4.47916651f};
static const float ref_vm_var[6] = {0.125f, 18.0f, 8.0f, 12.5f, 2.0f, 18.0f};
static const float ref_vm_mean[6] = {0.75f, 1.0f, 1.0f, -0.5f, 1.0f, 4.0f};
static const float ref_prod_d1[6] = {0.5f, -8.0f, -3.0f, -6.0f, 0.0f, 7.0f};
static const float ref_max_v[4] = {3.0f, 4.0f, 7.0f, 1.0f};
static const float ref_min_v[6] = {1.0f, -2.0f, 3.0f, -3.0f, 0.0f, -1.0f};
static const float ref_gn[24] = {
    0.0514885858f,  1.24276626f,   1.33878863f,  0.251273364f,  -1.01992309f,  -1.30606878f,
    -0.0220411513f, 0.640795052f,  0.876065791f, 0.467464149f,  -0.209343389f, -0.532103062f,
    1.14841485f,    -0.241606176f, -1.07038319f, -0.575942338f, 0.787129641f,  1.76563072f,
    -2.71986294f,   -0.102180846f, 2.11510015f,  1.89342189f,   -0.563405395f, -2.99658608f};
static const float ref_gn_mean[2] = {0.10279958f, 0.142151967f};
static const float ref_gn_rstd[2] = {0.471902847f, 0.484290779f};

static void check_floats(const char *what, const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    int same =
        isnan(want[i]) ? isnan(got[i]) : fabs(got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]));
    if (!same)
      etrt_test_fail(__FILE__, __LINE__, "%s: element %zu is %.9g, want %.9g", what, i, got[i],
                     want[i]);
  }
}

static float s24[24]; /* arange(24) as [2, 3, 4] */

/* s[:, [[2], [0]], [1, 3]] (adjacent: [2, 2, 2]) and s[[[1, 0], [0, 1]], :, [3, -1]]
 * (separated: the index shape first, [2, 2, 3]). */
static void test_index_tensor(void) {
  for (int apart = 0; apart < 2; ++apart) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t s = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
    int32_t list, y;
    if (!apart) {
      int32_t i1 =
          etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 1}, (int64_t[]){2, 0}, 0);
      int32_t i2 =
          etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){2}, (int32_t[]){1, 3}, 0);
      list = etrt_test_kp_optional_tensor_list(&p, (int32_t[]){-1, i1, i2}, 3);
      y = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 2}, NULL, 0);
    } else {
      int32_t i0 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 2},
                                       (int64_t[]){1, 0, 0, 1}, 0);
      int32_t i2 =
          etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, (int64_t[]){3, -1}, 0);
      list = etrt_test_kp_optional_tensor_list(&p, (int32_t[]){i0, -1, i2}, 3);
      y = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 3}, NULL, 0);
    }
    etrt_test_kp_call(&p, "aten::index.Tensor_out", (int32_t[]){s, list, y, y}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &s, 1, &y, 1, &size);
    float out[12];
    etrt_tensor_view v = {s24, F32, 3, {2, 3, 4}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, apart ? 48 : 32, NULL));
    if (apart)
      check_floats("index apart", out, index_apart, 12);
    else
      check_floats("index adjacent", out, (const float[]){9, 11, 1, 3, 21, 23, 13, 15}, 8);
    free(pte);
  }
}

/* index_put with accumulate: the same position twice adds both values; an index out
 * of range is an execute error naming the operator. */
static void test_index_put(void) {
  for (int bad = 0; bad < 2; ++bad) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t s = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
    int32_t i0 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2},
                                     (int64_t[]){1, bad ? 2 : 1}, 0);
    int32_t i1 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, (int64_t[]){0, 0}, 0);
    int32_t i2 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, (int64_t[]){2, 2}, 0);
    int32_t list = etrt_test_kp_optional_tensor_list(&p, (int32_t[]){i0, i1, i2}, 3);
    int32_t vals = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, (float[]){100.0f, 200.0f}, 0);
    int32_t acc = etrt_test_kp_bool(&p, 1);
    int32_t y = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
    etrt_test_kp_call(&p, "aten::index_put.out", (int32_t[]){s, list, vals, acc, y, y}, 6);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &s, 1, &y, 1, &size);
    etrt_tensor_view v = {s24, F32, 3, {2, 3, 4}};
    if (bad) {
      etrt_program *program = NULL;
      etrt_method *method = NULL;
      CHECK_FAILS(etrt_test_kp_execute(pte, size, &v, 1, &program, &method),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "aten::index_put.out (instruction 0): index 2 is out of range for dim 0");
      if (method) etrt_method_destroy(method);
      if (program) etrt_program_destroy(program);
    } else {
      float out[24];
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
      check_floats("index_put", out, index_put_acc, 24);
    }
    free(pte);
  }
}

static void test_scatter(void) {
  for (int add = 0; add < 2; ++add) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t t = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
    int32_t dim = etrt_test_kp_int(&p, 0);
    int32_t idx = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, 3},
                                      (int64_t[]){0, 2, 1, 2, 0, 0}, 0);
    int32_t src =
        etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, (float[]){10, 11, 12, 13, 14, 15}, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
    etrt_test_kp_call(&p, add ? "aten::scatter_add.out" : "aten::scatter.src_out",
                      (int32_t[]){t, dim, idx, src, y, y}, 6);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &t, 1, &y, 1, &size);
    float in[9], out[9];
    for (int i = 0; i < 9; ++i) in[i] = add ? 1.0f : 0.0f;
    etrt_tensor_view v = {in, F32, 2, {3, 3}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    check_floats(add ? "scatter_add" : "scatter", out, add ? scatter_add_ref : scatter_ref, 9);
    free(pte);
  }
}

/* topk along dim 1 of [2, 5] with a NaN (the largest) and ties (torch orders tied
 * indices as it likes: the values are compared, and each index must name its value). */
static void test_topk(void) {
  const float in[10] = {1, 5, 3, 5, -2, 0, NAN, 2, 7, 7};
  for (int smallest = 0; smallest < 2; ++smallest) {
    const int k = smallest ? 2 : 3;
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 5}, NULL, 0);
    int32_t kv = etrt_test_kp_int(&p, k), dim = etrt_test_kp_int(&p, -1);
    int32_t largest = etrt_test_kp_bool(&p, !smallest), sorted = etrt_test_kp_bool(&p, 1);
    int32_t vals = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, k}, NULL, 0);
    int32_t idx = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){2, k}, NULL, 0);
    int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){vals, idx}, 2);
    etrt_test_kp_call(&p, "aten::topk.values",
                      (int32_t[]){x, kv, dim, largest, sorted, vals, idx, ret}, 8);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){vals, idx}, 2, &size);
    etrt_tensor_view v = {(void *)in, F32, 2, {2, 5}}, o[2];
    etrt_program *program;
    etrt_method *method;
    CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
    CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
    CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
    check_floats("topk", o[0].data, smallest ? topk_v_small : topk_v, (size_t)(2 * k));
    const int64_t *got = o[1].data;
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < k; ++j) {
        float named = in[r * 5 + got[r * k + j]], value = ((const float *)o[0].data)[r * k + j];
        CHECK(isnan(value) ? isnan(named) : named == value);
      }
    etrt_method_destroy(method);
    etrt_program_destroy(program);
    free(pte);
  }
}

static const float st[12] = {1, -2, 3, 0.5f, 4, -1, 2, 2, 7, -3, 0, 1}; /* [2, 2, 3] */

/* Runs one statistics call on `st`; outputs 0 (and 1) compared with `want0` (`want1`). */
static void check_stat(const char *op, const int32_t *between, int nb, etrt_test_kp *p, int32_t x,
                       const int32_t *out_dims, int32_t out_rank, int two, etrt_dtype second,
                       const float *want0, const float *want1, const int64_t *want_index,
                       size_t n) {
  int32_t y0 = etrt_test_kp_tensor(p, F32, out_rank, out_dims, NULL, 0);
  int32_t y1 = two ? etrt_test_kp_tensor(p, second, out_rank, out_dims, NULL, 0) : -1;
  int32_t args[10], count = 0;
  args[count++] = x;
  for (int i = 0; i < nb; ++i) args[count++] = between[i];
  args[count++] = y0;
  if (two) args[count++] = y1;
  args[count++] = two ? etrt_test_kp_tensor_list(p, (int32_t[]){y0, y1}, 2) : y0;
  etrt_test_kp_call(p, op, args, (uint32_t)count);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(p, &x, 1, (int32_t[]){y0, y1}, two ? 2 : 1, &size);
  etrt_tensor_view v = {(void *)st, F32, 3, {2, 2, 3}}, o[2];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  check_floats(op, o[0].data, want0, n);
  if (two) {
    CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
    if (want1) check_floats(op, o[1].data, want1, n);
    if (want_index) CHECK(memcmp(o[1].data, want_index, n * sizeof(int64_t)) == 0);
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

static void test_statistics(void) {
  etrt_test_kp p;
#define START()          \
  etrt_test_kp_init(&p); \
  int32_t x = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 2, 3}, NULL, 0)
  {
    START();
    int32_t b[3] = {etrt_test_kp_ints(&p, (int64_t[]){2}, 1), etrt_test_kp_int(&p, 1),
                    etrt_test_kp_bool(&p, 0)};
    check_stat("aten::var.correction_out", b, 3, &p, x, (int32_t[]){2, 2}, 2, 0, F32, ref_var_d2,
               NULL, NULL, 4);
  }
  {
    START();
    int32_t b[3] = {etrt_test_kp_ints(&p, (int64_t[]){0, 2}, 2), etrt_test_kp_bool(&p, 0),
                    etrt_test_kp_bool(&p, 1)};
    check_stat("aten::var.out", b, 3, &p, x, (int32_t[]){1, 2, 1}, 3, 0, F32, ref_var_d02k, NULL,
               NULL, 2);
  }
  {
    START();
    int32_t b[3] = {etrt_test_kp_ints(&p, (int64_t[]){1}, 1), etrt_test_kp_none(&p),
                    etrt_test_kp_bool(&p, 0)};
    check_stat("aten::var_mean.correction_out", b, 3, &p, x, (int32_t[]){2, 3}, 2, 1, F32,
               ref_vm_var, ref_vm_mean, NULL, 6);
  }
  {
    START();
    int32_t b[3] = {etrt_test_kp_int(&p, 1), etrt_test_kp_bool(&p, 0), etrt_test_kp_none(&p)};
    check_stat("aten::prod.int_out", b, 3, &p, x, (int32_t[]){2, 3}, 2, 0, F32, ref_prod_d1, NULL,
               NULL, 6);
  }
  {
    START();
    int32_t b[2] = {etrt_test_kp_int(&p, 2), etrt_test_kp_bool(&p, 0)};
    check_stat("aten::max.dim_max", b, 2, &p, x, (int32_t[]){2, 2}, 2, 1, ETRT_DTYPE_INT64,
               ref_max_v, NULL, (const int64_t[]){2, 1, 2, 2}, 4);
  }
  {
    START();
    int32_t b[2] = {etrt_test_kp_int(&p, 0), etrt_test_kp_bool(&p, 0)};
    check_stat("aten::min.dim_min", b, 2, &p, x, (int32_t[]){2, 3}, 2, 1, ETRT_DTYPE_INT64,
               ref_min_v, NULL, (const int64_t[]){0, 0, 0, 1, 1, 0}, 6);
  }
#undef START
}

/* native_group_norm on [1, 4, 2, 3] in two groups, with weight and bias: the result,
 * the mean and the reciprocal standard deviation per group. */
static void test_group_norm(void) {
  float in[24];
  for (int i = 0; i < 24; ++i) in[i] = (float)(sin((double)i) * 3);
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 4, 2, 3}, NULL, 0);
  int32_t w = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, (float[]){1, 0.5f, -1, 2}, 0);
  int32_t b =
      etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, (float[]){0.1f, 0.2f, 0.3f, -0.4f}, 0);
  int32_t n = etrt_test_kp_int(&p, 1), c = etrt_test_kp_int(&p, 4), hw = etrt_test_kp_int(&p, 6);
  int32_t g = etrt_test_kp_int(&p, 2), eps = etrt_test_kp_double(&p, 1e-5);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 4, 2, 3}, NULL, 0);
  int32_t mean = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){1, 2}, NULL, 0);
  int32_t rstd = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){1, 2}, NULL, 0);
  int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, mean, rstd}, 3);
  etrt_test_kp_call(&p, "aten::native_group_norm.out",
                    (int32_t[]){x, w, b, n, c, hw, g, eps, y, mean, rstd, ret}, 12);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){y, mean, rstd}, 3, &size);
  etrt_tensor_view v = {in, F32, 4, {1, 4, 2, 3}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  check_floats("group_norm", o[0].data, ref_gn, 24);
  check_floats("group_norm mean", o[1].data, ref_gn_mean, 2);
  check_floats("group_norm rstd", o[2].data, ref_gn_rstd, 2);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* select_scatter (row -1 of [3, 4]), slice_scatter (columns 1 and 3) and split_copy
 * (split_size 3 along dim 1: [3, 3] and [3, 1]), against torch's values. */
static void test_scatter_copies(void) {
  float x[12];
  for (int i = 0; i < 12; ++i) x[i] = (float)i;
  const float want_select[12] = {0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4};
  const float want_slice[12] = {0, -1, 2, -2, 4, -3, 6, -4, 8, -5, 10, -6};
  for (int k = 0; k < 2; ++k) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 4}, NULL, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 4}, NULL, 0);
    if (k == 0) {
      int32_t src = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){4}, (float[]){-1, -2, -3, -4}, 0);
      etrt_test_kp_call(
          &p, "aten::select_scatter.out",
          (int32_t[]){a, src, etrt_test_kp_int(&p, 0), etrt_test_kp_int(&p, -1), y, y}, 6);
    } else {
      int32_t src =
          etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 2}, (float[]){-1, -2, -3, -4, -5, -6}, 0);
      etrt_test_kp_call(&p, "aten::slice_scatter.out",
                        (int32_t[]){a, src, etrt_test_kp_int(&p, 1), etrt_test_kp_int(&p, 1),
                                    etrt_test_kp_none(&p), etrt_test_kp_int(&p, 2), y, y},
                        8);
    }
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &a, 1, &y, 1, &size);
    float out[12];
    etrt_tensor_view v = {x, F32, 2, {3, 4}};
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
    check_floats(k ? "slice_scatter" : "select_scatter", out, k ? want_slice : want_select, 12);
    free(pte);
  }
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t a = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 4}, NULL, 0);
  int32_t y0 = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 3}, NULL, 0);
  int32_t y1 = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){3, 1}, NULL, 0);
  int32_t parts = etrt_test_kp_tensor_list(&p, (int32_t[]){y0, y1}, 2);
  int32_t three = etrt_test_kp_int(&p, 3), one = etrt_test_kp_int(&p, 1);
  etrt_test_kp_call(&p, "aten::split_copy.Tensor_out", (int32_t[]){a, three, one, parts, parts}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &a, 1, (int32_t[]){y0, y1}, 2, &size);
  etrt_tensor_view v = {x, F32, 2, {3, 4}}, o[2];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK_OK(etrt_method_get_output(method, 1, &o[1]));
  check_floats("split_copy 0", o[0].data, (const float[]){0, 1, 2, 4, 5, 6, 8, 9, 10}, 9);
  check_floats("split_copy 1", o[1].data, (const float[]){3, 7, 11}, 3);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

/* Expects the one-call program to be refused (at load or execute) with `text`, naming
 * the operator. */
static void check_refused(etrt_test_kp *p, int32_t input, int32_t output, etrt_dtype dtype,
                          etrt_status status, const char *op, const char *text) {
  size_t size;
  uint8_t *pte = etrt_test_kp_write(p, &input, 1, &output, 1, &size);
  float in[6] = {1, 2, 3, 4, 5, 6};
  int64_t in64[6] = {1, 2, 3, 4, 5, 6};
  etrt_tensor_view v = {dtype == F32 ? (void *)in : (void *)in64, dtype, 1, {6}};
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  CHECK_FAILS(etrt_test_kp_execute(pte, size, &v, 1, &program, &method), status, text);
  CHECK(strstr(etrt_last_error(), op) != NULL);
  if (method) etrt_method_destroy(method);
  if (program) etrt_program_destroy(program);
  free(pte);
}

static void test_refusals(void) {
  etrt_test_kp p;
  { /* a bool mask index: data-dependent shape */
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    int32_t mask = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){6},
                                       (uint8_t[]){1, 0, 1, 0, 1, 0}, 0);
    int32_t list = etrt_test_kp_optional_tensor_list(&p, &mask, 1);
    int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::index.Tensor_out", (int32_t[]){x, list, y, y}, 4);
    check_refused(&p, x, y, F32, ETRT_ERROR_UNSUPPORTED, "aten::index.Tensor_out",
                  "integer index tensors are supported");
  }
  { /* dropout in training mode */
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    int32_t prob = etrt_test_kp_double(&p, 0.5), train = etrt_test_kp_bool(&p, 1);
    int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    int32_t mask = etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){6}, NULL, 0);
    int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){y, mask}, 2);
    etrt_test_kp_call(&p, "aten::native_dropout.out", (int32_t[]){x, prob, train, y, mask, ret}, 6);
    check_refused(&p, x, y, F32, ETRT_ERROR_UNSUPPORTED, "aten::native_dropout.out",
                  "random dropout masks are not supported");
  }
  { /* bitwise on floating point */
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    int32_t one = etrt_test_kp_int(&p, 1);
    int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    etrt_test_kp_call(&p, "aten::bitwise_and.Scalar_out", (int32_t[]){x, one, y, y}, 4);
    check_refused(&p, x, y, F32, ETRT_ERROR_INVALID_ARGUMENT, "aten::bitwise_and.Scalar_out",
                  "bitwise operators take integers and bools");
  }
  { /* scatter with an index out of range: an execute error */
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    int32_t dim = etrt_test_kp_int(&p, 0);
    int32_t idx = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){1}, (int64_t[]){6}, 0);
    int32_t value = etrt_test_kp_double(&p, 2.0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    etrt_test_kp_call(&p, "aten::scatter.value_out", (int32_t[]){x, dim, idx, value, y, y}, 6);
    check_refused(&p, x, y, F32, ETRT_ERROR_INVALID_ARGUMENT, "aten::scatter.value_out",
                  "index 6 is out of range for dim 0 of size 6");
  }
  { /* topk with k larger than the dim */
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
    int32_t k = etrt_test_kp_int(&p, 7), dim = etrt_test_kp_int(&p, 0);
    int32_t yes = etrt_test_kp_bool(&p, 1);
    int32_t vals = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){7}, NULL, 0);
    int32_t idx = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){7}, NULL, 0);
    int32_t ret = etrt_test_kp_tensor_list(&p, (int32_t[]){vals, idx}, 2);
    etrt_test_kp_call(&p, "aten::topk.values", (int32_t[]){x, k, dim, yes, yes, vals, idx, ret}, 8);
    check_refused(&p, x, vals, F32, ETRT_ERROR_INVALID_ARGUMENT, "aten::topk.values",
                  "k = 7 is out of range for a dim of size 6");
  }
  { /* var into an integer out tensor */
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){6}, NULL, 0);
    int32_t none = etrt_test_kp_none(&p), no = etrt_test_kp_bool(&p, 0);
    int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 0, NULL, NULL, 0);
    etrt_test_kp_call(&p, "aten::var.correction_out", (int32_t[]){x, none, none, no, y, y}, 6);
    check_refused(&p, x, y, ETRT_DTYPE_INT64, ETRT_ERROR_INVALID_ARGUMENT,
                  "aten::var.correction_out", "the result is floating point");
  }
}

/* nonzero and masked_select (mask [3] broadcast over [2, 3]) into dynamic out tensors
 * bounded by the input's size; six non-zero elements do not fit a static [5, 1]. */
static void test_data_dependent_lengths(void) {
  const float in[6] = {0, 1, 0, 2, 0, 3};
  for (int masked = 0; masked < 2; ++masked) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t y;
    if (masked) {
      int32_t mask =
          etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, (uint8_t[]){1, 0, 1}, 0);
      y = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 1);
      etrt_test_kp_call(&p, "aten::masked_select.out", (int32_t[]){x, mask, y, y}, 4);
    } else {
      y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){6, 2}, NULL, 1);
      etrt_test_kp_call(&p, "aten::nonzero.out", (int32_t[]){x, y, y}, 3);
    }
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    etrt_tensor_view v = {(void *)in, F32, 2, {2, 3}}, o;
    etrt_program *program;
    etrt_method *method;
    CHECK_OK(etrt_test_kp_execute(pte, size, &v, 1, &program, &method));
    CHECK_OK(etrt_method_get_output(method, 0, &o));
    if (masked) {
      CHECK(o.rank == 1 && o.sizes[0] == 4);
      check_floats("masked_select", o.data, (const float[]){0, 0, 2, 3}, 4);
    } else {
      const int64_t want[6] = {0, 1, 1, 0, 1, 2};
      CHECK(o.rank == 2 && o.sizes[0] == 3 && o.sizes[1] == 2);
      CHECK(memcmp(o.data, want, sizeof want) == 0);
    }
    etrt_method_destroy(method);
    etrt_program_destroy(program);
    free(pte);
  }
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){6}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 2, (int32_t[]){5, 1}, NULL, 0);
  etrt_test_kp_call(&p, "aten::nonzero.out", (int32_t[]){x, y, y}, 3);
  check_refused(&p, x, y, F32, ETRT_ERROR_INVALID_ARGUMENT, "aten::nonzero.out",
                "does not fit the out tensor");
}

/* index_put_ writes self in place: s[1, 0, 2] += 100 + 200 (as index_put.out above). */
static void test_index_put_inplace(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t s = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
  int32_t r = etrt_test_kp_tensor(&p, F32, 3, (int32_t[]){2, 3, 4}, NULL, 0);
  int32_t i0 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, (int64_t[]){1, 1}, 0);
  int32_t i1 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, (int64_t[]){0, 0}, 0);
  int32_t i2 = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){2}, (int64_t[]){2, 2}, 0);
  int32_t list = etrt_test_kp_optional_tensor_list(&p, (int32_t[]){i0, i1, i2}, 3);
  int32_t vals = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, (float[]){100.0f, 200.0f}, 0);
  int32_t acc = etrt_test_kp_bool(&p, 1), none = etrt_test_kp_none(&p);
  etrt_test_kp_call(&p, "aten::clone.out", (int32_t[]){s, none, r, r}, 4);
  etrt_test_kp_call(&p, "aten::index_put_", (int32_t[]){r, list, vals, acc, r}, 5);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &s, 1, &r, 1, &size);
  etrt_tensor_view v = {s24, F32, 3, {2, 3, 4}};
  float out[24];
  CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
  check_floats("index_put_", out, index_put_acc, 24);
  free(pte);
}

/* repeat_interleave([2, 0, 3, 1]) = [0, 0, 2, 2, 2, 3] (torch) into a dynamic [<=8];
 * an output_size other than the sum, and a negative count, are refused when it runs. */
static void test_repeat_interleave(void) {
  for (int bad = 0; bad < 3; ++bad) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t r = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){4}, NULL, 0);
    int32_t given = bad == 1 ? etrt_test_kp_int(&p, 5) : etrt_test_kp_none(&p);
    int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT64, 1, (int32_t[]){8}, NULL, 1);
    etrt_test_kp_call(&p, "aten::repeat_interleave.Tensor_out", (int32_t[]){r, given, y, y}, 4);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &r, 1, &y, 1, &size);
    int64_t counts[4] = {2, 0, bad == 2 ? -3 : 3, 1};
    etrt_tensor_view v = {counts, ETRT_DTYPE_INT64, 1, {4}}, o;
    int64_t out[8];
    if (bad) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  bad == 1 ? "aten::repeat_interleave.Tensor_out (instruction 0): output_size is "
                             "5, the repeats add up to 6"
                           : "repeats[2] is -3");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, 6 * sizeof *out, &o));
      const int64_t want[6] = {0, 0, 2, 2, 2, 3};
      CHECK(o.rank == 1 && o.sizes[0] == 6);
      CHECK(memcmp(out, want, sizeof want) == 0);
    }
    free(pte);
  }
}

/* masked_scatter(arange(6) as [2, 3], [T, F, T], [[10, 20], [30, 40]]) =
 * [10, 1, 20, 30, 4, 40] (torch); a source shorter than the mask selects is refused
 * when it runs. */
static void test_masked_scatter(void) {
  for (int short_source = 0; short_source < 2; ++short_source) {
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t s = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    int32_t m =
        etrt_test_kp_tensor(&p, ETRT_DTYPE_BOOL, 1, (int32_t[]){3}, (uint8_t[]){1, 0, 1}, 0);
    int32_t src = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){short_source ? 1 : 2, 2},
                                      (float[]){10, 20, 30, 40}, 0);
    int32_t y = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){2, 3}, NULL, 0);
    etrt_test_kp_call(&p, "aten::masked_scatter.out", (int32_t[]){s, m, src, y, y}, 5);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &s, 1, &y, 1, &size);
    etrt_tensor_view v = {s24, F32, 2, {2, 3}};
    float out[6];
    if (short_source) {
      CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
                  ETRT_ERROR_INVALID_ARGUMENT,
                  "aten::masked_scatter.out (instruction 0): the mask selects 4 elements, source "
                  "has 2");
    } else {
      CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL));
      check_floats("masked_scatter", out, (const float[]){10, 1, 20, 30, 4, 40}, 6);
    }
    free(pte);
  }
}

int main(void) {
  for (int i = 0; i < 24; ++i) s24[i] = (float)i;
  RUN_TEST(test_masked_scatter);
  RUN_TEST(test_index_put_inplace);
  RUN_TEST(test_repeat_interleave);
  RUN_TEST(test_data_dependent_lengths);
  RUN_TEST(test_refusals);
  RUN_TEST(test_scatter_copies);
  RUN_TEST(test_index_tensor);
  RUN_TEST(test_index_put);
  RUN_TEST(test_scatter);
  RUN_TEST(test_topk);
  RUN_TEST(test_statistics);
  RUN_TEST(test_group_norm);
  return TEST_EXIT();
}
