/* Compress, NonZero and Unique on the CPU: values worked by hand along an axis and flattened,
 * conditions known at build time and only at execute, and every refusal. */
#include <math.h>

#include "op_harness.h"

static void test_compress(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value x = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (3), 1, 0, 1))}, 1,
                  (etrt_attribute[]){OH_INT("axis", 0)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 5, 6}), 4, 0);
  /* a short condition: the missing entries are false */
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (1), 1))}, 1,
                  (etrt_attribute[]){OH_INT("axis", -1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_FLOATS(y, ((double[]){1, 3, 5}), 3, 0);
  /* no axis: the flattened input; entries past its end are ignored */
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (8), 0, 1, 0, 0, 1, 0, 1, 1))},
                  0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 1);
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_FLOATS(y, ((double[]){2, 5}), 2, 0);
}

static void test_refusals(void) {
  const oh_value x = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  OH_CHECK_REFUSED(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 1, 0))}, 0, NULL,
                          1, NULL, NULL),
                   "Compress", "bool");
  OH_CHECK_REFUSED(oh_run("Compress", 2, (oh_value[]){x, OH_CONST(OH_BOOL(1, (3), 1, 0, 1))}, 1,
                          (etrt_attribute[]){OH_INT("axis", 2)}, 1, NULL, NULL),
                   "Compress", "axis");
  OH_CHECK_REFUSED(oh_run("Compress", 1, (oh_value[]){x}, 0, NULL, 1, NULL, NULL), "Compress",
                   "2 inputs");
  OH_CHECK_REFUSED(oh_run("NonZero", 1, (oh_value[]){OH_F32(0, (0), 1)}, 0, NULL, 1, NULL, NULL),
                   "NonZero", "rank 1 or more");
  OH_CHECK_REFUSED(oh_run("NonZero", 2, (oh_value[]){x, x}, 0, NULL, 1, NULL, NULL), "NonZero",
                   "1 input");
}

/* A condition only known at execute: memory for every entry, the run's dims. */
static void test_compress_at_execute(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value x = OH_F32(2, (3, 2), 1, 2, 3, 4, 5, 6);
  CHECK_OK(oh_run("Compress", 2, (oh_value[]){x, OH_BOOL(1, (3), 0, 0, 1)}, 1,
                  (etrt_attribute[]){OH_INT("axis", 0)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[0], 1);
  CHECK_EQ_INT(info[0].dims[1], 2);
  OH_CHECK_FLOATS(y, ((double[]){5, 6}), 2, 0);
}

static void test_nonzero(void) {
  int64_t y[4096 / 8];
  oh_output info[1];
  /* -0.0 is zero, NaN is not */
  const oh_value x = OH_F32(2, (2, 3), 0, 2, -0.0f, NAN, 0, 7);
  CHECK_OK(oh_run("NonZero", 1, (oh_value[]){x}, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT64);
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(info[0].dims[1], 3);
  const int64_t want[] = {0, 1, 1, 1, 0, 2};
  for (int i = 0; i < 6; ++i) CHECK_EQ_INT(y[i], want[i]);
  /* known at build time: evaluated then, the same answer */
  CHECK_OK(oh_run("NonZero", 1, (oh_value[]){OH_CONST(OH_I64(1, (4), 0, 5, 0, 1))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 1);
  CHECK_EQ_INT(info[0].dims[1], 2);
  CHECK_EQ_INT(y[0], 1);
  CHECK_EQ_INT(y[1], 3);
}

static void test_unique(void) {
  float y[64];
  int64_t first[64], inverse[64], counts[64];
  oh_output info[4];
  void *outs[] = {y, first, inverse, counts};
  const oh_value x = OH_F32(1, (6), 2, 1, 1, 3, 4, 3);
  CHECK_OK(oh_run("Unique", 1, (oh_value[]){x}, 1, (etrt_attribute[]){OH_INT("sorted", 0)}, 4, outs,
                  info));
  CHECK_EQ_INT(info[0].dims[0], 4);
  CHECK_EQ_INT(info[2].dims[0], 6);
  OH_CHECK_FLOATS(y, ((double[]){2, 1, 3, 4}), 4, 0);
  const int64_t want_first[] = {0, 1, 3, 4}, want_inverse[] = {0, 1, 1, 2, 3, 2},
                want_counts[] = {1, 2, 2, 1};
  for (int i = 0; i < 4; ++i) CHECK_EQ_INT(first[i], want_first[i]);
  for (int i = 0; i < 6; ++i) CHECK_EQ_INT(inverse[i], want_inverse[i]);
  for (int i = 0; i < 4; ++i) CHECK_EQ_INT(counts[i], want_counts[i]);
  CHECK_OK(oh_run("Unique", 1, (oh_value[]){x}, 0, NULL, 4, outs, info));
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 3, 4}), 4, 0);
  const int64_t sorted_first[] = {1, 0, 3, 4}, sorted_inverse[] = {1, 0, 0, 2, 3, 2};
  for (int i = 0; i < 4; ++i) CHECK_EQ_INT(first[i], sorted_first[i]);
  for (int i = 0; i < 6; ++i) CHECK_EQ_INT(inverse[i], sorted_inverse[i]);
  /* rows along axis 0, the last one repeating the first */
  CHECK_OK(oh_run("Unique", 1, (oh_value[]){OH_I32(2, (3, 2), 5, 1, 0, 2, 5, 1)}, 1,
                  (etrt_attribute[]){OH_INT("axis", 0)}, 4, outs, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(info[0].dims[1], 2);
  const int32_t *rows = (const int32_t *)y;
  const int32_t want_rows[] = {0, 2, 5, 1};
  for (int i = 0; i < 4; ++i) CHECK_EQ_INT(rows[i], want_rows[i]);
  CHECK_EQ_INT(counts[1], 2);
  OH_CHECK_REFUSED(oh_run("Unique", 1, (oh_value[]){x}, 0, NULL, 5, NULL, NULL), "Unique",
                   "1 to 4 outputs");
  OH_CHECK_REFUSED(
      oh_run("Unique", 1, (oh_value[]){x}, 1, (etrt_attribute[]){OH_INT("axis", 1)}, 1, NULL, NULL),
      "Unique", "axis");
}

/* One context run twice: NonZero -> Transpose, whose dims follow NonZero's at execute,
 * give a different output shape for different values, within the memory planned once. */
static void test_twice(void) {
  etrt_network *net = NULL;
  etrt_engine *engine = NULL;
  etrt_exec_context *ctx = NULL;
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  int32_t x, nz, y;
  const int64_t dims[] = {2, 3};
  CHECK_OK(etrt_network_create(&net));
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_INT32, 2, dims, dims, &x));
  CHECK_OK(etrt_network_add_op(net, "NonZero", "nz", 1, &x, 1, &nz, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Transpose", "t", 1, &nz, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}};
  CHECK_OK(etrt_plan_build(net, &options, &plan, &plan_size));
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  const etrt_engine_io *io = etrt_engine_io_at(engine, 1);
  CHECK(io->dims_at_execute);
  CHECK_EQ_INT(io->max_sizes[0], 6);
  CHECK_EQ_INT(io->min_sizes[0], 0);
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  size_t arena = etrt_exec_context_arena_size(ctx);
  int32_t a[6] = {0, 1, 0, 0, 0, 1}, b[6] = {1, 1, 1, 0, 1, 0};
  int64_t out[12];
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, a));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, out));
  CHECK_OK(etrt_exec_context_output_shape(ctx, 1, &rank, sizes));
  CHECK_EQ_INT(sizes[0], 6); /* before a run: the planned bound */
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  CHECK_OK(etrt_exec_context_output_shape(ctx, 1, &rank, sizes));
  CHECK_EQ_INT(rank, 2);
  CHECK_EQ_INT(sizes[0], 2);
  CHECK_EQ_INT(sizes[1], 2);
  const int64_t want_a[] = {0, 1, 1, 2};
  for (int i = 0; i < 4; ++i) CHECK_EQ_INT(out[i], want_a[i]);
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, b));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  CHECK_OK(etrt_exec_context_output_shape(ctx, 1, &rank, sizes));
  CHECK_EQ_INT(sizes[0], 4);
  CHECK_EQ_INT(sizes[1], 2);
  const int64_t want_b[] = {0, 0, 0, 1, 0, 2, 1, 1};
  for (int i = 0; i < 8; ++i) CHECK_EQ_INT(out[i], want_b[i]);
  CHECK_EQ_INT(etrt_exec_context_arena_size(ctx), arena); /* nothing re-planned */
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

/* Dims that follow NonZero's count n through shape arithmetic: n * (6 - n) elements is 0
 * at both ends of n's range, 9 at n = 3. The run refuses to write past what was planned,
 * naming the node. */
static void test_over_plan(void) {
  etrt_network *net = NULL;
  etrt_engine *engine = NULL;
  etrt_exec_context *ctx = NULL;
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  int32_t x, nz, shape, one, six, n, rest, k, y;
  const int64_t dims[] = {6}, one_dim[] = {1};
  const int64_t one_value[] = {1}, six_value[] = {6};
  CHECK_OK(etrt_network_create(&net));
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_INT32, 1, dims, dims, &x));
  CHECK_OK(etrt_network_add_constant(net, "one", ETRT_DTYPE_INT64, 1, one_dim, one_value, &one));
  CHECK_OK(etrt_network_add_constant(net, "six", ETRT_DTYPE_INT64, 1, one_dim, six_value, &six));
  CHECK_OK(etrt_network_add_op(net, "NonZero", "nz", 1, &x, 1, &nz, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Shape", "shape", 1, &nz, 1, &shape, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Gather", "n", 2, (int32_t[]){shape, one}, 1, &n, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Sub", "rest", 2, (int32_t[]){six, n}, 1, &rest, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Mul", "k", 2, (int32_t[]){n, rest}, 1, &k, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "ConstantOfShape", "fill", 1, &k, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}};
  CHECK_OK(etrt_plan_build(net, &options, &plan, &plan_size));
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  CHECK(etrt_engine_io_at(engine, 1)->dims_at_execute);
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  int32_t all[6] = {1, 1, 1, 1, 1, 1}, three[6] = {1, 0, 1, 0, 1, 0};
  float out[16];
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, all));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, out));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  CHECK_OK(etrt_exec_context_output_shape(ctx, 1, &rank, sizes));
  CHECK_EQ_INT(sizes[0], 0);
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, three));
  CHECK_FAILS(etrt_exec_context_enqueue(ctx, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "node 5 'fill' (ConstantOfShape): output 0 ('y') is float32 rank 1 of 36 bytes for "
              "these values; float32 rank 1 of at most 0 bytes was planned");
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

int main(void) {
  RUN_TEST(test_compress);
  RUN_TEST(test_refusals);
  RUN_TEST(test_compress_at_execute);
  RUN_TEST(test_nonzero);
  RUN_TEST(test_unique);
  RUN_TEST(test_twice);
  RUN_TEST(test_over_plan);
  return TEST_EXIT();
}
