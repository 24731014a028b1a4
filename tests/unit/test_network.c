/* The network definition API: inputs, constants, operations with inferred types and
 * bounds, outputs, and every refusal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "etrt/network.h"
#include "test_util.h"

static void test_inputs_and_constants(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, c;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){1, 8},
                                  (int64_t[]){16, 8}, &x));
  CHECK_FAILS(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){1}, (int64_t[]){1}, &c),
      ETRT_ERROR_ALREADY_EXISTS, "input 'x': an input or output has that name already");
  CHECK_FAILS(etrt_network_add_input(net, "", ETRT_DTYPE_FLOAT32, 0, NULL, NULL, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "needs a name");
  CHECK_FAILS(etrt_network_add_input(net, "z", (etrt_dtype)42, 0, NULL, NULL, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "unknown dtype 42");
  CHECK_FAILS(
      etrt_network_add_input(net, "z", ETRT_DTYPE_FLOAT32, 9, (int64_t[9]){0}, (int64_t[9]){0}, &c),
      ETRT_ERROR_INVALID_ARGUMENT, "rank 9");
  CHECK_FAILS(etrt_network_add_input(net, "z", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){4, 1},
                                     (int64_t[]){2, 1}, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "input 'z': axis 0 has bounds [4, 2]");
  CHECK_FAILS(
      etrt_network_add_input(net, "z", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){-1}, (int64_t[]){2}, &c),
      ETRT_ERROR_INVALID_ARGUMENT, "axis 0 has bounds [-1, 2]");
  CHECK_FAILS(etrt_network_add_input(net, "z", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){1},
                                     (int64_t[]){(int64_t)1 << 41}, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "2^40");
  CHECK_FAILS(etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){4}, NULL, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "constant 'w': NULL data");
  float w[4] = {1, 2, 3, 4};
  CHECK_OK(etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){4}, w, &c));
  w[0] = 100; /* the network holds its own copy */
  etrt_dtype dtype;
  int32_t rank;
  int64_t lo[ETRT_MAX_RANK], hi[ETRT_MAX_RANK];
  CHECK_OK(etrt_network_value_info(net, x, &dtype, &rank, lo, hi));
  CHECK(dtype == ETRT_DTYPE_FLOAT32 && rank == 2 && lo[0] == 1 && hi[0] == 16 && lo[1] == 8);
  CHECK_FAILS(etrt_network_value_info(net, 99, &dtype, &rank, lo, hi), ETRT_ERROR_INVALID_ARGUMENT,
              "value 99 does not exist");
  int64_t none[2] = {3, 1};
  CHECK_FAILS(etrt_network_add_shape_input(net, "s", 2, none, (int64_t[]){2, 2}, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "value 0 has bounds [3, 2]");
  CHECK_FAILS(etrt_network_add_shape_input(net, "s", 65, NULL, NULL, &c),
              ETRT_ERROR_INVALID_ARGUMENT, "at most 64");
  etrt_network_destroy(net);
}

static void test_ops_infer_bounds(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, w, y, r, z;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 3, (int64_t[]){1, 2, 8},
                                  (int64_t[]){4, 5, 8}, &x));
  float wd[8 * 3] = {0};
  CHECK_OK(etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){8, 3}, wd, &w));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm", 2, (int32_t[]){x, w}, 1, &y, 0, NULL));
  etrt_dtype dtype;
  int32_t rank;
  int64_t lo[ETRT_MAX_RANK], hi[ETRT_MAX_RANK];
  CHECK_OK(etrt_network_value_info(net, y, &dtype, &rank, lo, hi));
  CHECK(dtype == ETRT_DTYPE_FLOAT32 && rank == 3);
  CHECK(lo[0] == 1 && hi[0] == 4 && lo[1] == 2 && hi[1] == 5 && lo[2] == 3 && hi[2] == 3);
  CHECK_OK(etrt_network_add_op(net, "Relu", NULL, 1, &y, 1, &r, 0, NULL));
  /* Broadcasting against a [1]-shaped constant keeps the bounds. */
  float one = 1;
  int32_t c1;
  CHECK_OK(etrt_network_add_constant(net, "one", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){1}, &one, &c1));
  CHECK_OK(etrt_network_add_op(net, "Div", "div", 2, (int32_t[]){r, c1}, 1, &z, 0, NULL));
  CHECK_OK(etrt_network_value_info(net, z, NULL, &rank, lo, hi));
  CHECK(rank == 3 && hi[0] == 4 && hi[1] == 5 && hi[2] == 3);
  /* Refusals name the op, and a refused op leaves nothing behind. */
  int32_t before_probe;
  CHECK_OK(
      etrt_network_add_constant(net, "probe", ETRT_DTYPE_FLOAT32, 0, NULL, &one, &before_probe));
  int32_t bad;
  CHECK_FAILS(etrt_network_add_op(net, "Frobnicate", "f", 1, &x, 1, &bad, 0, NULL),
              ETRT_ERROR_UNSUPPORTED, "operation 'Frobnicate' (node 'f') is not supported");
  CHECK_FAILS(etrt_network_add_op(net, "MatMul", "bad", 2, (int32_t[]){x, x}, 1, &bad, 0, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "MatMul 'bad': inner sizes differ");
  CHECK_FAILS(etrt_network_add_op(net, "Add", "a", 2, (int32_t[]){x, 77}, 1, &bad, 0, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "input 1 is value 77, which does not exist");
  CHECK_FAILS(etrt_network_add_op(net, "Add", "a", 1, &x, 1, &bad, 0, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "Add 'a': takes 2 input(s)");
  int32_t i64;
  int64_t iv = 3;
  CHECK_OK(etrt_network_add_constant(net, "i", ETRT_DTYPE_INT64, 0, NULL, &iv, &i64));
  CHECK_FAILS(etrt_network_add_op(net, "Add", "mixed", 2, (int32_t[]){x, i64}, 1, &bad, 0, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "inputs must have one dtype, got float32 and int64");
  etrt_attribute wrong = {.name = "transA", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 1};
  CHECK_FAILS(etrt_network_add_op(net, "Gemm", "g", 2, (int32_t[]){w, w}, 1, &bad, 1, &wrong),
              ETRT_ERROR_INVALID_ARGUMENT, "Gemm 'g': attribute 'transA' must be 0 or 1");
  int32_t after_probe;
  CHECK_OK(
      etrt_network_add_constant(net, "probe2", ETRT_DTYPE_FLOAT32, 0, NULL, &one, &after_probe));
  CHECK_EQ_INT(after_probe, before_probe + 2); /* probe, i64, probe2: nothing in between */
  etrt_network_destroy(net);
}

static void test_outputs(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, y, c;
  float k = 2;
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){3}, (int64_t[]){3}, &x));
  CHECK_OK(etrt_network_add_constant(net, "k", ETRT_DTYPE_FLOAT32, 0, NULL, &k, &c));
  CHECK_OK(etrt_network_add_op(net, "Mul", "m", 2, (int32_t[]){x, c}, 1, &y, 0, NULL));
  CHECK_FAILS(etrt_network_mark_output(net, x, "out"), ETRT_ERROR_UNSUPPORTED,
              "value 0 ('x') is an input");
  CHECK_FAILS(etrt_network_mark_output(net, c, "out"), ETRT_ERROR_UNSUPPORTED, "is a constant");
  CHECK_FAILS(etrt_network_mark_output(net, 42, "out"), ETRT_ERROR_INVALID_ARGUMENT,
              "value 42 does not exist");
  CHECK_FAILS(etrt_network_mark_output(net, y, "x"), ETRT_ERROR_ALREADY_EXISTS,
              "has that name already");
  CHECK_OK(etrt_network_mark_output(net, y, "out"));
  CHECK_FAILS(etrt_network_mark_output(net, y, "again"), ETRT_ERROR_ALREADY_EXISTS,
              "already output 'out'");
  /* Outputs follow inputs in the engine's I/O table, whatever the call order. */
  int32_t late;
  CHECK_OK(etrt_network_add_input(net, "late", ETRT_DTYPE_INT32, 0, NULL, NULL, &late));
  uint8_t *plan;
  size_t size;
  CHECK_OK(etrt_plan_build(net, &(etrt_plan_options){.name = "outs"}, &plan, &size));
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  CHECK_EQ_INT(etrt_engine_io_count(engine), 3);
  CHECK(strcmp(etrt_engine_io_at(engine, 0)->name, "x") == 0);
  CHECK(strcmp(etrt_engine_io_at(engine, 1)->name, "late") == 0);
  CHECK(strcmp(etrt_engine_io_at(engine, 2)->name, "out") == 0 &&
        !etrt_engine_io_at(engine, 2)->is_input);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

/* An op whose output shape depends on an input's values needs those values at build,
 * unless its definition bounds the shapes (Reshape: any size, grown at execute). */
static void test_value_inputs_known_at_build(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, s, y;
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){6}, (int64_t[]){6}, &x));
  CHECK_OK(
      etrt_network_add_input(net, "dyn", ETRT_DTYPE_INT64, 1, (int64_t[]){2}, (int64_t[]){2}, &s));
  CHECK_FAILS(etrt_network_add_op(net, "Col2Im", "c", 3, (int32_t[]){x, s, s}, 1, &y, 0, NULL),
              ETRT_ERROR_UNSUPPORTED, "Col2Im 'c': input 1 ('dyn') decides the output shape");
  CHECK_OK(etrt_network_add_op(net, "Reshape", "r", 2, (int32_t[]){x, s}, 1, &y, 0, NULL));
  etrt_dtype dtype;
  int32_t y_rank;
  int64_t y_lo[ETRT_MAX_RANK], y_hi[ETRT_MAX_RANK];
  CHECK_OK(etrt_network_value_info(net, y, &dtype, &y_rank, y_lo, y_hi));
  CHECK(dtype == ETRT_DTYPE_FLOAT32 && y_rank == 2 && y_lo[0] == 0 &&
        y_hi[1] == ETRT_ENGINE_DIM_UNBOUNDED);
  int64_t shape[2] = {2, 3};
  int32_t c;
  CHECK_OK(etrt_network_add_constant(net, "shape", ETRT_DTYPE_INT64, 1, (int64_t[]){2}, shape, &c));
  CHECK_OK(etrt_network_add_op(net, "Reshape", "r", 2, (int32_t[]){x, c}, 1, &y, 0, NULL));
  int32_t rank;
  int64_t hi[ETRT_MAX_RANK];
  CHECK_OK(etrt_network_value_info(net, y, NULL, &rank, NULL, hi));
  CHECK(rank == 2 && hi[0] == 2 && hi[1] == 3);
  etrt_network_destroy(net);
}

/* Attributes of every kind survive the plan (checked through the deserialized graph). */
static void test_attribute_kinds_round_trip(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t a, b, y;
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3},
                                  (int64_t[]){2, 3}, &a));
  CHECK_OK(etrt_network_add_input(net, "b", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){3, 4},
                                  (int64_t[]){3, 4}, &b));
  etrt_attribute attrs[] = {
      {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 0.5f},
      {.name = "transA", .kind = ETRT_ATTRIBUTE_INT, .i = 0},
  };
  CHECK_OK(etrt_network_add_op(net, "Gemm", "g", 2, (int32_t[]){a, b}, 1, &y, 2, attrs));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  uint8_t *plan;
  size_t size;
  CHECK_OK(etrt_plan_build(net, &(etrt_plan_options){0}, &plan, &size));
  etrt_engine *engine;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  const etrt_engine_io *io = etrt_engine_io_at(engine, 2);
  CHECK(io->rank == 2 && io->max_sizes[0] == 2 && io->max_sizes[1] == 4);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
}

int main(void) {
  RUN_TEST(test_inputs_and_constants);
  RUN_TEST(test_ops_infer_bounds);
  RUN_TEST(test_outputs);
  RUN_TEST(test_value_inputs_known_at_build);
  RUN_TEST(test_attribute_kinds_round_trip);
  return TEST_EXIT();
}
