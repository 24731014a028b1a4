/* MatMul (NumPy rules: 1-D operands, batch broadcasting), Gemm (transA, transB,
 * alpha, beta, C broadcast) and EtrtMatMulBias against a naive reference, in float32 and float64,
 * at sizes that cross the kernel's blocks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/thread_pool.h"
#include "engine/ops/shape_util.h"
#include "engine_test_models.h"
#include "op_test_util.h"
#include "test_util.h"

static etrt_tensor shaped(etrt_dtype dtype, void *data, int32_t rank, const int64_t *dims) {
  etrt_tensor t = op_tensor(dtype, data, 0);
  t.rank = rank;
  memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
  return t;
}

/* Reference NumPy matmul in double over float inputs. */
static void ref_matmul(const float *a, int32_t ra, const int64_t *da, const float *b, int32_t rb,
                       const int64_t *db, double *y, int64_t *count) {
  int64_t m = ra == 1 ? 1 : da[ra - 2], k = da[ra - 1], n = rb == 1 ? 1 : db[rb - 1];
  int32_t ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0, br = ba > bb ? ba : bb;
  int64_t bd[ETRT_MAX_RANK], batches = 1;
  for (int32_t i = 0; i < br; ++i) {
    int64_t x = i - (br - ba) >= 0 ? da[i - (br - ba)] : 1;
    int64_t z = i - (br - bb) >= 0 ? db[i - (br - bb)] : 1;
    bd[i] = x > z ? x : z;
    batches *= bd[i];
  }
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, oa = 0, ob = 0, sa = 1, sb = 1;
    for (int32_t i = br - 1; i >= 0; --i) {
      int64_t idx = rest % bd[i];
      rest /= bd[i];
      int32_t ia = i - (br - ba), ib = i - (br - bb);
      if (ia >= 0) {
        oa += (da[ia] == 1 ? 0 : idx) * sa;
        sa *= da[ia];
      }
      if (ib >= 0) {
        ob += (db[ib] == 1 ? 0 : idx) * sb;
        sb *= db[ib];
      }
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < k; ++q)
          acc += (double)a[oa * m * k + i * k + q] * b[ob * k * n + q * n + j];
        y[(bi * m + i) * n + j] = acc;
      }
  }
  *count = batches * m * n;
}

static void check_matmul(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db,
                         int32_t rank_want, const int64_t *want) {
  int64_t na = etrt_shape_numel(ra, da), nb = etrt_shape_numel(rb, db);
  float *a = malloc((size_t)na * 4 + 4), *b = malloc((size_t)nb * 4 + 4);
  test_fill(a, (size_t)na, 11, 1.0f);
  test_fill(b, (size_t)nb, 12, 1.0f);
  int64_t ny = etrt_shape_numel(rank_want, want);
  float *y = malloc((size_t)ny * 4 + 4);
  double *ref = malloc((size_t)ny * 8 + 8);
  etrt_tensor in[2] = {shaped(ETRT_DTYPE_FLOAT32, a, ra, da),
                       shaped(ETRT_DTYPE_FLOAT32, b, rb, db)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
  CHECK_OK(op_run("MatMul", 2, in, &out, 0, NULL));
  CHECK(etrt_shape_equal(out.rank, out.dims, rank_want, want));
  int64_t count = 0;
  ref_matmul(a, ra, da, b, rb, db, ref, &count);
  CHECK_EQ_INT(count, ny);
  for (int64_t i = 0; i < ny; ++i) {
    if (fabs(y[i] - ref[i]) > 1e-3 * (1 + fabs(ref[i]))) {
      etrt_test_fail(__FILE__, __LINE__, "element %lld: %g vs %g", (long long)i, y[i], ref[i]);
      break;
    }
  }
  free(a);
  free(b);
  free(y);
  free(ref);
}

static void test_matmul_shapes(void) {
  check_matmul(2, (int64_t[]){3, 4}, 2, (int64_t[]){4, 5}, 2, (int64_t[]){3, 5});
  check_matmul(1, (int64_t[]){4}, 2, (int64_t[]){4, 5}, 1, (int64_t[]){5});
  check_matmul(2, (int64_t[]){3, 4}, 1, (int64_t[]){4}, 1, (int64_t[]){3});
  check_matmul(1, (int64_t[]){4}, 1, (int64_t[]){4}, 0, (int64_t[]){0});
  check_matmul(3, (int64_t[]){2, 3, 4}, 2, (int64_t[]){4, 5}, 3, (int64_t[]){2, 3, 5});
  check_matmul(2, (int64_t[]){3, 4}, 3, (int64_t[]){2, 4, 5}, 3, (int64_t[]){2, 3, 5});
  check_matmul(4, (int64_t[]){2, 1, 3, 4}, 3, (int64_t[]){5, 4, 6}, 4, (int64_t[]){2, 5, 3, 6});
  check_matmul(3, (int64_t[]){2, 3, 4}, 1, (int64_t[]){4}, 2, (int64_t[]){2, 3});
  check_matmul(2, (int64_t[]){0, 4}, 2, (int64_t[]){4, 5}, 2, (int64_t[]){0, 5});
  check_matmul(2, (int64_t[]){3, 0}, 2, (int64_t[]){0, 5}, 2, (int64_t[]){3, 5}); /* K = 0: zeros */
  /* Across the kernel's k and j blocks. */
  check_matmul(2, (int64_t[]){37, 300}, 2, (int64_t[]){300, 600}, 2, (int64_t[]){37, 600});
}

/* A batch of small products (attention's heads) goes over the pool a product per task:
 * the reference's values, B broadcast over the leading axis, and the same bits with one
 * thread and with four. */
static void test_matmul_batches_over_threads(void) {
  const int64_t da[4] = {2, 12, 40, 16}, db[3] = {12, 16, 40}, dy[4] = {2, 12, 40, 40};
  check_matmul(4, da, 3, db, 4, dy);
  static float a[2 * 12 * 40 * 16], b[12 * 16 * 40], one[2 * 12 * 40 * 40], four[2 * 12 * 40 * 40];
  test_fill(a, sizeof a / sizeof *a, 21, 1.0f);
  test_fill(b, sizeof b / sizeof *b, 22, 1.0f);
  CHECK_OK(etrt_thread_pool_acquire(4));
  float *outputs[2] = {one, four};
  for (int t = 0; t < 2; ++t) {
    etrt_thread_pool_limit_set(t == 0 ? 1 : 4);
    etrt_tensor in[2] = {shaped(ETRT_DTYPE_FLOAT32, a, 4, da),
                         shaped(ETRT_DTYPE_FLOAT32, b, 3, db)};
    etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, outputs[t], 0);
    CHECK_OK(op_run("MatMul", 2, in, &out, 0, NULL));
  }
  CHECK(memcmp(one, four, sizeof one) == 0);
  etrt_thread_pool_limit_set(0);
  etrt_thread_pool_release();
}

static void test_matmul_refusals(void) {
  float a[16], b[16], y[16];
  etrt_tensor in[2] = {op_tensor(ETRT_DTYPE_FLOAT32, a, 2, (int64_t)2, (int64_t)3),
                       op_tensor(ETRT_DTYPE_FLOAT32, b, 2, (int64_t)4, (int64_t)2)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
  CHECK_FAILS(op_run("MatMul", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "MatMul 't': inner sizes differ: A has 3 columns, B has 4 rows");
  in[0] = op_tensor(ETRT_DTYPE_FLOAT32, a, 0);
  CHECK_FAILS(op_run("MatMul", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "rank 1 or more");
  in[0] = op_tensor(ETRT_DTYPE_FLOAT32, a, 3, (int64_t)2, (int64_t)1, (int64_t)4);
  in[1] = op_tensor(ETRT_DTYPE_FLOAT32, b, 3, (int64_t)3, (int64_t)4, (int64_t)1);
  CHECK_FAILS(op_run("MatMul", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "do not broadcast");
  in[0] = op_tensor(ETRT_DTYPE_INT32, a, 2, (int64_t)1, (int64_t)4);
  in[1] = op_tensor(ETRT_DTYPE_INT32, b, 2, (int64_t)4, (int64_t)1);
  CHECK_FAILS(op_run("MatMul", 2, in, &out, 0, NULL), ETRT_ERROR_UNSUPPORTED, "int32");
  in[1] = op_tensor(ETRT_DTYPE_FLOAT32, b, 2, (int64_t)4, (int64_t)1);
  in[0] = op_tensor(ETRT_DTYPE_FLOAT64, a, 2, (int64_t)1, (int64_t)4);
  CHECK_FAILS(op_run("MatMul", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "input 1 has dtype float32");
}

/* Gemm with every flag, C shape and both float types. */
static void check_gemm(int ta, int tb, float alpha, float beta, int32_t rc, const int64_t *dc,
                       int use_f64) {
  const int64_t m = 7, n = 300, k = 150; /* n crosses the j block, k the k block */
  size_t na = (size_t)(m * k), nb = (size_t)(k * n),
         nc = rc >= 0 ? (size_t)etrt_shape_numel(rc, dc) : 0;
  float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4 + 4);
  test_fill(a, na, 1, 1.0f);
  test_fill(b, nb, 2, 1.0f);
  test_fill(c, nc, 3, 1.0f);
  double *ad = malloc(na * 8), *bd = malloc(nb * 8), *cd = malloc(nc * 8 + 8),
         *yd = malloc((size_t)(m * n) * 8);
  for (size_t i = 0; i < na; ++i) ad[i] = a[i];
  for (size_t i = 0; i < nb; ++i) bd[i] = b[i];
  for (size_t i = 0; i < nc; ++i) cd[i] = c[i];
  float *y = malloc((size_t)(m * n) * 4);
  etrt_dtype dt = use_f64 ? ETRT_DTYPE_FLOAT64 : ETRT_DTYPE_FLOAT32;
  etrt_tensor in[3] = {op_tensor(dt, use_f64 ? (void *)ad : a, 2, ta ? k : m, ta ? m : k),
                       op_tensor(dt, use_f64 ? (void *)bd : b, 2, tb ? n : k, tb ? k : n),
                       rc >= 0 ? shaped(dt, use_f64 ? (void *)cd : c, rc, dc) : op_absent()};
  etrt_attribute attrs[4] = {{.name = "transA", .kind = ETRT_ATTRIBUTE_INT, .i = ta},
                             {.name = "transB", .kind = ETRT_ATTRIBUTE_INT, .i = tb},
                             {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = alpha},
                             {.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = beta}};
  etrt_tensor out = op_tensor(dt, use_f64 ? (void *)yd : y, 0);
  CHECK_OK(op_run("Gemm", rc >= 0 ? 3 : 2, in, &out, 4, attrs));
  CHECK(out.rank == 2 && out.dims[0] == m && out.dims[1] == n && out.dtype == dt);
  int64_t cs[2] = {0, 0};
  if (rc >= 0) etrt_shape_broadcast_strides(rc, dc, 2, out.dims, cs);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q)
        acc += (double)a[ta ? q * m + i : i * k + q] * b[tb ? j * k + q : q * n + j];
      double want = alpha * acc + (rc >= 0 ? beta * c[i * cs[0] + j * cs[1]] : 0.0);
      double got = use_f64 ? yd[i * n + j] : y[i * n + j];
      if (fabs(got - want) > 1e-3 * (1 + fabs(want))) {
        etrt_test_fail(__FILE__, __LINE__,
                       "Gemm ta %d tb %d C rank %d f64 %d (%lld, %lld): %g vs %g", ta, tb, (int)rc,
                       use_f64, (long long)i, (long long)j, got, want);
        i = m;
        break;
      }
    }
  }
  free(a);
  free(b);
  free(c);
  free(ad);
  free(bd);
  free(cd);
  free(yd);
  free(y);
}

static void test_gemm_flags(void) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      check_gemm(ta, tb, 1.0f, 1.0f, 1, (int64_t[]){300}, 0);
      check_gemm(ta, tb, 0.5f, -2.0f, 2, (int64_t[]){7, 300}, 1);
    }
  check_gemm(0, 1, 2.0f, 0.25f, 2, (int64_t[]){7, 1}, 0);
  check_gemm(1, 0, 1.0f, 3.0f, 2, (int64_t[]){1, 300}, 0);
  check_gemm(0, 0, 1.0f, 3.0f, 0, (int64_t[]){0}, 1);
  check_gemm(1, 1, 1.5f, 1.0f, -1, NULL, 0);
}

static void test_gemm_refusals(void) {
  float a[16], b[16], c[16], y[16];
  etrt_tensor in[3] = {op_tensor(ETRT_DTYPE_FLOAT32, a, 2, (int64_t)2, (int64_t)3),
                       op_tensor(ETRT_DTYPE_FLOAT32, b, 2, (int64_t)3, (int64_t)4),
                       op_tensor(ETRT_DTYPE_FLOAT32, c, 1, (int64_t)3)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
  CHECK_FAILS(op_run("Gemm", 3, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "C (rank 1) does not broadcast to the output [2, 4]");
  etrt_attribute tb = {.name = "transB", .kind = ETRT_ATTRIBUTE_INT, .i = 1};
  CHECK_FAILS(op_run("Gemm", 2, in, &out, 1, &tb), ETRT_ERROR_INVALID_ARGUMENT,
              "inner sizes differ");
  etrt_attribute two = {.name = "transA", .kind = ETRT_ATTRIBUTE_INT, .i = 2};
  CHECK_FAILS(op_run("Gemm", 2, in, &out, 1, &two), ETRT_ERROR_INVALID_ARGUMENT,
              "'transA' must be 0 or 1");
  etrt_attribute alpha = {.name = "alpha", .kind = ETRT_ATTRIBUTE_INT, .i = 2};
  CHECK_FAILS(op_run("Gemm", 2, in, &out, 1, &alpha), ETRT_ERROR_INVALID_ARGUMENT,
              "'alpha' must be a float");
  etrt_attribute odd = {.name = "gamma", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 2};
  CHECK_FAILS(op_run("Gemm", 2, in, &out, 1, &odd), ETRT_ERROR_UNSUPPORTED,
              "unknown attribute 'gamma'");
  in[0] = op_tensor(ETRT_DTYPE_FLOAT32, a, 1, (int64_t)3);
  CHECK_FAILS(op_run("Gemm", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT, "must be 2-D");
}

/* EtrtMatMulBias: rows of A times B plus the bias, and its refusals. */
static void test_matmul_bias(void) {
  float a[2 * 3 * 4], b[4 * 5], bias[5], y[30], wrong[6];
  for (int i = 0; i < 24; ++i) a[i] = 0.25f * (float)(i % 7) - 0.5f;
  for (int i = 0; i < 20; ++i) b[i] = 0.125f * (float)(i % 5) - 0.25f;
  for (int i = 0; i < 5; ++i) bias[i] = (float)i - 2.0f;
  etrt_tensor in[3] = {op_tensor(ETRT_DTYPE_FLOAT32, a, 3, (int64_t)2, (int64_t)3, (int64_t)4),
                       op_tensor(ETRT_DTYPE_FLOAT32, b, 2, (int64_t)4, (int64_t)5),
                       op_tensor(ETRT_DTYPE_FLOAT32, bias, 1, (int64_t)5)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
  CHECK_OK(op_run("EtrtMatMulBias", 3, in, &out, 0, NULL));
  CHECK_EQ_INT(out.rank, 3);
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 5; ++j) {
      double want = bias[j];
      for (int k = 0; k < 4; ++k) want += (double)a[r * 4 + k] * b[k * 5 + j];
      CHECK_NEAR(y[r * 5 + j], want, 1e-5);
    }
  in[2] = op_tensor(ETRT_DTYPE_FLOAT32, wrong, 1, (int64_t)6);
  CHECK_FAILS(op_run("EtrtMatMulBias", 3, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "a bias of B's 5 columns");
  CHECK_FAILS(op_run("EtrtMatMulBias", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "takes inputs A, B and bias");
  double da[24] = {0}, db[20] = {0}, dbias[5] = {0};
  etrt_tensor d[3] = {op_tensor(ETRT_DTYPE_FLOAT64, da, 3, (int64_t)2, (int64_t)3, (int64_t)4),
                      op_tensor(ETRT_DTYPE_FLOAT64, db, 2, (int64_t)4, (int64_t)5),
                      op_tensor(ETRT_DTYPE_FLOAT64, dbias, 1, (int64_t)5)};
  CHECK_FAILS(op_run("EtrtMatMulBias", 3, d, &out, 0, NULL), ETRT_ERROR_UNSUPPORTED,
              "takes float32, float16 or bfloat16, got float64");

  /* The activations, applied to the biased product. */
  in[2] = op_tensor(ETRT_DTYPE_FLOAT32, bias, 1, (int64_t)5);
  out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
  static const char *const names[] = {"none", "relu", "gelu_tanh"};
  for (int act = 0; act < 3; ++act) {
    etrt_attribute attr = {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = names[act]};
    CHECK_OK(op_run("EtrtMatMulBias", 3, in, &out, 1, &attr));
    for (int r = 0; r < 6; ++r)
      for (int j = 0; j < 5; ++j) {
        double v = bias[j];
        for (int k = 0; k < 4; ++k) v += (double)a[r * 4 + k] * b[k * 5 + j];
        double want = act == 0   ? v
                      : act == 1 ? (v > 0 ? v : 0)
                                 : 0.5 * v * (1 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
        CHECK_NEAR(y[r * 5 + j], want, 1e-5);
      }
  }
  etrt_attribute bad = {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = "gelu"};
  CHECK_FAILS(op_run("EtrtMatMulBias", 3, in, &out, 1, &bad), ETRT_ERROR_INVALID_ARGUMENT,
              "'activation' must be the string none, relu or gelu_tanh");
  etrt_attribute number = {.name = "activation", .kind = ETRT_ATTRIBUTE_INT, .i = 1};
  CHECK_FAILS(op_run("EtrtMatMulBias", 3, in, &out, 1, &number), ETRT_ERROR_INVALID_ARGUMENT,
              "'activation' must be the string");
  etrt_attribute other = {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 1};
  CHECK_FAILS(op_run("EtrtMatMulBias", 3, in, &out, 1, &other), ETRT_ERROR_UNSUPPORTED,
              "unknown attribute 'alpha'");
}

int main(void) {
  RUN_TEST(test_matmul_shapes);
  RUN_TEST(test_matmul_batches_over_threads);
  RUN_TEST(test_matmul_refusals);
  RUN_TEST(test_gemm_flags);
  RUN_TEST(test_gemm_refusals);
  RUN_TEST(test_matmul_bias);
  return TEST_EXIT();
}
