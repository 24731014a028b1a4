/* Add, Sub, Mul, Div, Relu: broadcasting (checked against a plain index-by-index
 * reference), dtypes, integer edge cases, refusals; and the shape helpers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/ops/shape_util.h"
#include "op_test_util.h"
#include "test_util.h"

/* Reference: output element at multi-index -> input offsets with size-1 axes pinned. */
static int64_t ref_offset(const etrt_tensor *in, const etrt_tensor *out, int64_t flat) {
  int64_t idx[ETRT_MAX_RANK];
  for (int32_t a = out->rank - 1; a >= 0; --a) {
    idx[a] = out->dims[a] ? flat % out->dims[a] : 0;
    flat = out->dims[a] ? flat / out->dims[a] : 0;
  }
  int64_t off = 0;
  for (int32_t i = 0; i < in->rank; ++i) {
    int32_t a = out->rank - in->rank + i;
    off = off * in->dims[i] + (in->dims[i] == 1 ? 0 : idx[a]);
  }
  return off;
}

static double ref_binary(const char *op, double a, double b) {
  if (strcmp(op, "Add") == 0) return a + b;
  if (strcmp(op, "Sub") == 0) return a - b;
  if (strcmp(op, "Mul") == 0) return a * b;
  return a / b;
}

/* One broadcast case in float32, all four ops. */
static void check_broadcast(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db,
                            int32_t rank_want, const int64_t *want) {
  static float a[4096], b[4096], y[4096];
  etrt_tensor ta = op_tensor(ETRT_DTYPE_FLOAT32, a, 0), tb = op_tensor(ETRT_DTYPE_FLOAT32, b, 0);
  ta.rank = ra;
  tb.rank = rb;
  memcpy(ta.dims, da, (size_t)ra * 8);
  memcpy(tb.dims, db, (size_t)rb * 8);
  for (int i = 0; i < 4096; ++i) {
    a[i] = (float)(i % 97) - 40.0f;
    b[i] = (float)(i % 13) + 0.5f;
  }
  const char *ops[] = {"Add", "Sub", "Mul", "Div"};
  for (int k = 0; k < 4; ++k) {
    etrt_tensor in[2] = {ta, tb}, out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
    CHECK_OK(op_run(ops[k], 2, in, &out, 0, NULL));
    CHECK(etrt_shape_equal(out.rank, out.dims, rank_want, want));
    int64_t n = etrt_tensor_numel(&out);
    for (int64_t i = 0; i < n; ++i) {
      double r = ref_binary(ops[k], a[ref_offset(&ta, &out, i)], b[ref_offset(&tb, &out, i)]);
      if (fabs(y[i] - r) > 1e-4 * (1 + fabs(r))) {
        etrt_test_fail(__FILE__, __LINE__, "%s element %lld: %g vs %g", ops[k], (long long)i, y[i],
                       r);
        break;
      }
    }
  }
}

static void test_broadcasting(void) {
  check_broadcast(2, (int64_t[]){3, 5}, 2, (int64_t[]){3, 5}, 2, (int64_t[]){3, 5});
  check_broadcast(2, (int64_t[]){3, 5}, 0, (int64_t[]){0}, 2, (int64_t[]){3, 5});
  check_broadcast(0, (int64_t[]){0}, 2, (int64_t[]){3, 5}, 2, (int64_t[]){3, 5});
  check_broadcast(2, (int64_t[]){3, 5}, 1, (int64_t[]){5}, 2, (int64_t[]){3, 5});
  check_broadcast(2, (int64_t[]){3, 1}, 2, (int64_t[]){1, 5}, 2, (int64_t[]){3, 5});
  check_broadcast(3, (int64_t[]){4, 1, 3}, 2, (int64_t[]){2, 1}, 3, (int64_t[]){4, 2, 3});
  check_broadcast(4, (int64_t[]){2, 3, 1, 5}, 3, (int64_t[]){3, 4, 1}, 4, (int64_t[]){2, 3, 4, 5});
  check_broadcast(1, (int64_t[]){1}, 1, (int64_t[]){7}, 1, (int64_t[]){7});
  check_broadcast(3, (int64_t[]){2, 0, 3}, 1, (int64_t[]){3}, 3, (int64_t[]){2, 0, 3});
  check_broadcast(2, (int64_t[]){1, 0}, 2, (int64_t[]){4, 1}, 2, (int64_t[]){4, 0});
  check_broadcast(0, (int64_t[]){0}, 0, (int64_t[]){0}, 0, (int64_t[]){0});
}

static void test_refusals(void) {
  float a[8], b[8], y[8];
  etrt_tensor in[2] = {op_tensor(ETRT_DTYPE_FLOAT32, a, 2, (int64_t)2, (int64_t)3),
                       op_tensor(ETRT_DTYPE_FLOAT32, b, 1, (int64_t)4)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, y, 0);
  CHECK_FAILS(op_run("Add", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "Add 't': inputs 0 [2, 3] and 1 [4] do not broadcast: axis 1 has sizes 3 and 4");
  in[1] = op_tensor(ETRT_DTYPE_INT32, b, 1, (int64_t)3);
  CHECK_FAILS(op_run("Mul", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "float32 and int32");
  in[0] = op_tensor(ETRT_DTYPE_BOOL, a, 1, (int64_t)3);
  in[1] = op_tensor(ETRT_DTYPE_BOOL, b, 1, (int64_t)3);
  CHECK_FAILS(op_run("Add", 2, in, &out, 0, NULL), ETRT_ERROR_UNSUPPORTED, "bool");
  CHECK_FAILS(op_run("Relu", 1, in, &out, 0, NULL), ETRT_ERROR_UNSUPPORTED, "bool");
  in[0] = op_tensor(ETRT_DTYPE_UINT8, a, 1, (int64_t)3);
  CHECK_FAILS(op_run("Relu", 1, in, &out, 0, NULL), ETRT_ERROR_UNSUPPORTED, "uint8");
  in[1] = op_absent();
  CHECK_FAILS(op_run("Sub", 2, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "input 1 is required");
  CHECK_FAILS(op_run("Div", 1, in, &out, 0, NULL), ETRT_ERROR_INVALID_ARGUMENT, "takes 2 input(s)");
}

static void test_integers(void) {
  int32_t a[4] = {INT32_MAX, INT32_MIN, 7, -7}, b[4] = {1, -1, 0, 2}, y[4];
  etrt_tensor in[2] = {op_tensor(ETRT_DTYPE_INT32, a, 1, (int64_t)4),
                       op_tensor(ETRT_DTYPE_INT32, b, 1, (int64_t)4)};
  etrt_tensor out = op_tensor(ETRT_DTYPE_INT32, y, 0);
  CHECK_OK(op_run("Add", 2, in, &out, 0, NULL));
  CHECK(out.dtype == ETRT_DTYPE_INT32 && y[0] == INT32_MIN && y[1] == INT32_MAX && y[2] == 7 &&
        y[3] == -5);
  CHECK_OK(op_run("Div", 2, in, &out, 0, NULL));
  CHECK(y[0] == INT32_MAX && y[1] == INT32_MIN && y[2] == 0 &&
        y[3] == -3); /* MIN / -1 wraps; x / 0 is 0 */
  CHECK_OK(op_run("Mul", 2, in, &out, 0, NULL));
  CHECK(y[0] == INT32_MAX && y[1] == INT32_MIN && y[2] == 0 && y[3] == -14);
  int64_t la[2] = {INT64_MIN, 10}, lb[1] = {-1}, ly[2];
  etrt_tensor lin[2] = {op_tensor(ETRT_DTYPE_INT64, la, 1, (int64_t)2),
                        op_tensor(ETRT_DTYPE_INT64, lb, 0)};
  etrt_tensor lout = op_tensor(ETRT_DTYPE_INT64, ly, 0);
  CHECK_OK(op_run("Div", 2, lin, &lout, 0, NULL));
  CHECK(ly[0] == INT64_MIN && ly[1] == -10);
  CHECK_OK(op_run("Sub", 2, lin, &lout, 0, NULL));
  CHECK(ly[0] == INT64_MIN + 1 && ly[1] == 11);
  uint16_t ua[2] = {65535, 3}, ub[2] = {65535, 5}, uy[2];
  etrt_tensor uin[2] = {op_tensor(ETRT_DTYPE_UINT16, ua, 1, (int64_t)2),
                        op_tensor(ETRT_DTYPE_UINT16, ub, 1, (int64_t)2)};
  etrt_tensor uout = op_tensor(ETRT_DTYPE_UINT16, uy, 0);
  CHECK_OK(op_run("Mul", 2, uin, &uout, 0, NULL));
  CHECK(uy[0] == 1 && uy[1] == 15);
  CHECK_OK(op_run("Sub", 2, uin, &uout, 0, NULL));
  CHECK(uy[0] == 0 && uy[1] == 65534);
  int8_t ra[4] = {-128, -1, 0, 127}, ry[4];
  etrt_tensor rin = op_tensor(ETRT_DTYPE_INT8, ra, 1, (int64_t)4),
              rout = op_tensor(ETRT_DTYPE_INT8, ry, 0);
  CHECK_OK(op_run("Relu", 1, &rin, &rout, 0, NULL));
  CHECK(ry[0] == 0 && ry[1] == 0 && ry[2] == 0 && ry[3] == 127);
}

static void test_floats(void) {
  double a[4] = {-2.5, 0.0, NAN, 3.25}, y[4];
  etrt_tensor in = op_tensor(ETRT_DTYPE_FLOAT64, a, 2, (int64_t)2, (int64_t)2),
              out = op_tensor(ETRT_DTYPE_FLOAT64, y, 0);
  CHECK_OK(op_run("Relu", 1, &in, &out, 0, NULL));
  CHECK(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 2);
  CHECK(y[0] == 0 && y[1] == 0 && isnan(y[2]) && y[3] == 3.25);
  float fa[2] = {1, -1}, fb[1] = {0}, fy[2];
  etrt_tensor fin[2] = {op_tensor(ETRT_DTYPE_FLOAT32, fa, 1, (int64_t)2),
                        op_tensor(ETRT_DTYPE_FLOAT32, fb, 1, (int64_t)1)};
  etrt_tensor fout = op_tensor(ETRT_DTYPE_FLOAT32, fy, 0);
  CHECK_OK(op_run("Div", 2, fin, &fout, 0, NULL));
  CHECK(isinf(fy[0]) && fy[0] > 0 && isinf(fy[1]) && fy[1] < 0);
  /* float16: 1.5 + 0.25 = 1.75 (0x3F00 + 0x3400 = 0x3F00 | ...). */
  uint16_t ha[1] = {0x3E00 /* 1.5 */}, hb[1] = {0x3400 /* 0.25 */}, hy[1];
  etrt_tensor hin[2] = {op_tensor(ETRT_DTYPE_FLOAT16, ha, 1, (int64_t)1),
                        op_tensor(ETRT_DTYPE_FLOAT16, hb, 1, (int64_t)1)};
  etrt_tensor hout = op_tensor(ETRT_DTYPE_FLOAT16, hy, 0);
  CHECK_OK(op_run("Add", 2, hin, &hout, 0, NULL));
  CHECK_EQ_INT(hy[0], 0x3F00); /* 1.75 */
}

static void test_shape_helpers(void) {
  CHECK_EQ_INT(etrt_shape_numel(0, NULL), 1);
  CHECK_EQ_INT(etrt_shape_numel(2, (int64_t[]){3, 4}), 12);
  CHECK_EQ_INT(etrt_shape_numel(2, (int64_t[]){-1, 4}), -1);
  CHECK_EQ_INT(etrt_shape_numel(3, (int64_t[]){INT64_MAX / 2, 3, 1}), -1);
  CHECK_EQ_INT(etrt_shape_numel(9, (int64_t[9]){1}), -1);
  int32_t axis = -5;
  etrt_node node = {.op_type = "Op", .name = "n"};
  CHECK_OK(etrt_shape_axis(&node, "axis", -1, 3, &axis));
  CHECK_EQ_INT(axis, 2);
  CHECK_FAILS(etrt_shape_axis(&node, "axis", 3, 3, &axis), ETRT_ERROR_INVALID_ARGUMENT,
              "axis 3 is outside [-3, 3)");
  CHECK_FAILS(etrt_shape_axis(&node, "axes[1]", -4, 3, &axis), ETRT_ERROR_INVALID_ARGUMENT,
              "axes[1] -4");
  int64_t strides[3];
  etrt_shape_broadcast_strides(2, (int64_t[]){1, 5}, 3, (int64_t[]){4, 3, 5}, strides);
  CHECK(strides[0] == 0 && strides[1] == 0 && strides[2] == 1);
  etrt_shape_broadcast_strides(2, (int64_t[]){3, 1}, 2, (int64_t[]){3, 5}, strides);
  CHECK(strides[0] == 1 && strides[1] == 0);
  CHECK(etrt_shape_broadcastable_to(1, (int64_t[]){5}, 2, (int64_t[]){3, 5}));
  CHECK(!etrt_shape_broadcastable_to(2, (int64_t[]){3, 5}, 1, (int64_t[]){5}));
  CHECK(!etrt_shape_broadcastable_to(1, (int64_t[]){4}, 2, (int64_t[]){3, 5}));
  /* The iteration plan merges contiguous axes: same shapes are one loop, a bias two. */
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, NULL, 3, (int64_t)2, (int64_t)3, (int64_t)4);
  etrt_tensor same = out, bias = op_tensor(ETRT_DTYPE_FLOAT32, NULL, 1, (int64_t)4);
  etrt_broadcast_iter it;
  CHECK_OK(etrt_broadcast_iter_init(&it, &out, 2, (const etrt_tensor *[]){&same, &same}));
  CHECK(it.rank == 1 && it.dims[0] == 24 && it.strides[0][0] == 1 && it.numel == 24);
  CHECK_OK(etrt_broadcast_iter_init(&it, &out, 2, (const etrt_tensor *[]){&same, &bias}));
  CHECK(it.rank == 2 && it.dims[0] == 6 && it.dims[1] == 4 && it.strides[1][0] == 0 &&
        it.strides[1][1] == 1);
  etrt_tensor bad = op_tensor(ETRT_DTYPE_FLOAT32, NULL, 1, (int64_t)3);
  CHECK_FAILS(etrt_broadcast_iter_init(&it, &out, 1, (const etrt_tensor *[]){&bad}),
              ETRT_ERROR_INTERNAL, "does not broadcast");
}

/* When a GPU kernel may take runs of elements with wide accesses, and 32-bit indices. */
static void test_broadcast_walk(void) {
  _Alignas(16) static float buffers[3][64];
  const size_t sizes[2] = {4, 4};
  etrt_tensor out = op_tensor(ETRT_DTYPE_FLOAT32, NULL, 3, (int64_t)2, (int64_t)3, (int64_t)8);
  etrt_tensor same = out, bias = op_tensor(ETRT_DTYPE_FLOAT32, NULL, 1, (int64_t)8);
  etrt_tensor column = op_tensor(ETRT_DTYPE_FLOAT32, NULL, 3, (int64_t)2, (int64_t)3, (int64_t)1);
  etrt_broadcast_iter it;
  const void *aligned[2] = {buffers[0], buffers[1]};
  CHECK_OK(etrt_broadcast_iter_init(&it, &out, 2, (const etrt_tensor *[]){&same, &bias}));
  CHECK(etrt_broadcast_iter_runs_of(&it, 4, aligned, sizes, buffers[2], 4));
  CHECK(etrt_broadcast_iter_runs_of(&it, 8, aligned, sizes, buffers[2], 4));
  CHECK(!etrt_broadcast_iter_runs_of(&it, 16, aligned, sizes, buffers[2], 4)); /* 8 per row */
  CHECK(etrt_broadcast_iter_runs_of(&it, 1, aligned, sizes, buffers[2], 4));
  const void *shifted[2] = {buffers[0] + 1, buffers[1]};
  CHECK(!etrt_broadcast_iter_runs_of(&it, 4, shifted, sizes, buffers[2], 4));
  CHECK(!etrt_broadcast_iter_runs_of(&it, 4, aligned, sizes, buffers[2] + 2, 4));
  /* An operand constant along the rows repeats one element per run. */
  CHECK_OK(etrt_broadcast_iter_init(&it, &out, 2, (const etrt_tensor *[]){&same, &column}));
  CHECK(it.strides[1][it.rank - 1] == 0);
  const void *column_shifted[2] = {buffers[0], buffers[1] + 1};
  CHECK(etrt_broadcast_iter_runs_of(&it, 4, column_shifted, sizes, buffers[2], 4));
  /* A transposed operand (stride 3 along the rows) cannot. */
  it.strides[0][it.rank - 1] = 3;
  CHECK(!etrt_broadcast_iter_runs_of(&it, 4, aligned, sizes, buffers[2], 4));
  /* An outer stride that is not a multiple of the run breaks alignment of later rows. */
  CHECK_OK(etrt_broadcast_iter_init(&it, &out, 2, (const etrt_tensor *[]){&same, &bias}));
  it.rank = 2;
  it.dims[0] = 6;
  it.dims[1] = 8;
  it.strides[0][0] = 10;
  it.strides[0][1] = 1;
  CHECK(!etrt_broadcast_iter_runs_of(&it, 4, aligned, sizes, buffers[2], 4));
  CHECK(etrt_broadcast_iter_runs_of(&it, 2, aligned, sizes, buffers[2], 4));

  CHECK(etrt_broadcast_iter_fits_int32(&it));
  it.strides[0][0] = (int64_t)1 << 29; /* 5 * 2^29 > 2^31 - 1 */
  CHECK(!etrt_broadcast_iter_fits_int32(&it));
  it.strides[0][0] = -((int64_t)1 << 20);
  CHECK(etrt_broadcast_iter_fits_int32(&it));
  it.numel = (int64_t)1 << 31;
  CHECK(!etrt_broadcast_iter_fits_int32(&it));
}

int main(void) {
  RUN_TEST(test_broadcasting);
  RUN_TEST(test_refusals);
  RUN_TEST(test_integers);
  RUN_TEST(test_floats);
  RUN_TEST(test_shape_helpers);
  RUN_TEST(test_broadcast_walk);
  return TEST_EXIT();
}
