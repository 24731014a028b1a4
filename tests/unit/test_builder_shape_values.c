/* Graph inputs whose values decide shapes (--shape-values): the builder makes them
 * engine shape inputs bounded by the values given, the program takes them on the
 * host, and other values are refused at run time; every refusal of a bad text or
 * an input that cannot be given by value, and the GPU placement of the nodes that
 * compute such values. */
#include <stdint.h>

#include "built_program_testing.h"
#include "device/sim.h"
#include "onnx_build_testing.h"
#include "pte/pte.h"
#include "test_util.h"

static void add_input(tm_model *m, const char *name, int32_t elem, int rank,
                      const char *const *dims) {
  etrt_pb_writer vi = tm_value_info(name, elem, rank, dims);
  tm_put(&m->graph, 11, &vi);
}

/* x[2,3] float, s int64[2]: y = Reshape(x, s). */
static uint8_t *reshape_model(size_t *size) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  add_input(&m, "s", ETRT_ONNX_INT64, 1, (const char *[]){"2"});
  tm_node(&m, "Reshape", "reshape", "x,s", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 13, size);
}

static void test_reshape_values(void) {
  size_t size, pte_size;
  uint8_t *pte = NULL;
  const char *spec = "s:3,2";
  CHECK_OK(bp_build(reshape_model(&size), &size, "cpu", &spec, 1, &pte, &pte_size));
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  if (l.method == NULL) {
    bp_unload(&l);
    return;
  }
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t s[2] = {3, 2};
  etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
  etrt_tensor_view sv = bp_view(s, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
  CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
  CHECK_OK(etrt_method_set_input(l.method, 1, &sv));
  CHECK_OK(etrt_method_execute(l.method));
  etrt_tensor_view y;
  CHECK_OK(etrt_method_get_output(l.method, 0, &y));
  CHECK(y.rank == 2 && y.sizes[0] == 3 && y.sizes[1] == 2);
  for (int i = 0; i < 6; ++i) CHECK_NEAR(((const float *)y.data)[i], x[i], 0);
  /* Values other than those the plan was built for are refused, naming them. */
  s[0] = 6;
  s[1] = 1;
  CHECK_OK(etrt_method_set_input(l.method, 1, &sv));
  CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT,
              "shape input 's' value 0: 6 is outside its bounds [3, 3]");
  bp_unload(&l);
}

/* ConstantOfShape(s): the output's bounds follow each value's range. */
static void test_value_ranges(void) {
  tm_model m;
  tm_init(&m);
  add_input(&m, "s", ETRT_ONNX_INT64, 1, (const char *[]){"n"});
  tm_node(&m, "ConstantOfShape", "fill", "s", "y", 0);
  tm_output(&m, "y");
  size_t size, pte_size;
  uint8_t *pte = NULL;
  const char *spec = "s:1,2:3,4"; /* also fixes the symbolic size n at 2 */
  CHECK_OK(bp_build(tm_finish(&m, 13, &size), &size, "cpu", &spec, 1, &pte, &pte_size));
  etrt_tensor_info info;
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  if (l.method == NULL) {
    bp_unload(&l);
    return;
  }
  CHECK_OK(etrt_program_input_info(l.program, "forward", 0, &info));
  CHECK(info.dtype == ETRT_DTYPE_INT64 && info.rank == 1 && info.sizes[0] == 2 && !info.dynamic);
  CHECK_OK(etrt_program_output_info(l.program, "forward", 0, &info));
  CHECK(info.rank == 2 && info.sizes[0] == 3 && info.sizes[1] == 4 && info.dynamic);
  int64_t s[2] = {2, 3};
  etrt_tensor_view sv = bp_view(s, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
  CHECK_OK(etrt_method_set_input(l.method, 0, &sv));
  CHECK_OK(etrt_method_execute(l.method));
  etrt_tensor_view y;
  CHECK_OK(etrt_method_get_output(l.method, 0, &y));
  CHECK(y.rank == 2 && y.sizes[0] == 2 && y.sizes[1] == 3);
  for (int i = 0; i < 6; ++i) CHECK_NEAR(((const float *)y.data)[i], 0, 0);
  s[1] = 5;
  CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT,
              "5 is outside its bounds [2, 4]");
  bp_unload(&l);
}

/* Range(start, limit, delta) with the scalar `limit` a graph input of `elem`. */
static uint8_t *range_model(int32_t elem, size_t *size) {
  tm_model m;
  tm_init(&m);
  add_input(&m, "limit", elem, 0, NULL);
  if (elem == ETRT_ONNX_INT32) {
    int32_t start = 1, delta = 2;
    tm_initializer(&m, "start", elem, 0, NULL, &start, sizeof start);
    tm_initializer(&m, "delta", elem, 0, NULL, &delta, sizeof delta);
  } else {
    int64_t start = 1, delta = 2;
    tm_initializer(&m, "start", elem, 0, NULL, &start, sizeof start);
    tm_initializer(&m, "delta", elem, 0, NULL, &delta, sizeof delta);
  }
  tm_node(&m, "Range", "range", "start,limit,delta", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 13, size);
}

/* Scalars (a rank-0 input) and int32 inputs, which the engine's int64 shape input
 * carries: the program keeps the model's type and rank. */
static void test_scalar_and_int32(void) {
  for (int pass = 0; pass < 2; ++pass) {
    int32_t elem = pass ? ETRT_ONNX_INT32 : ETRT_ONNX_INT64;
    etrt_dtype dtype = pass ? ETRT_DTYPE_INT32 : ETRT_DTYPE_INT64;
    size_t size, pte_size;
    uint8_t *pte = NULL;
    const char *spec = "limit:8";
    CHECK_OK(bp_build(range_model(elem, &size), &size, "cpu", &spec, 1, &pte, &pte_size));
    bp_loaded l;
    bp_load(pte, pte_size, &l);
    if (l.method == NULL) {
      bp_unload(&l);
      continue;
    }
    etrt_tensor_info info;
    CHECK_OK(etrt_program_input_info(l.program, "forward", 0, &info));
    CHECK(info.dtype == dtype && info.rank == 0);
    int64_t limit64 = 8;
    int32_t limit32 = 8;
    etrt_tensor_view lv = bp_view(pass ? (void *)&limit32 : (void *)&limit64, dtype, 0, NULL);
    CHECK_OK(etrt_method_set_input(l.method, 0, &lv));
    CHECK_OK(etrt_method_execute(l.method));
    etrt_tensor_view y;
    CHECK_OK(etrt_method_get_output(l.method, 0, &y));
    CHECK(y.dtype == dtype && y.rank == 1 && y.sizes[0] == 4);
    for (int i = 0; i < 4; ++i) {
      int64_t v = pass ? ((const int32_t *)y.data)[i] : ((const int64_t *)y.data)[i];
      CHECK_EQ_INT(v, 1 + 2 * i);
    }
    limit64 = limit32 = 9;
    CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT,
                "shape input 'limit' value 0: 9 is outside its bounds [8, 8]");
    bp_unload(&l);
  }
}

/* No values at all: an input of no values (ReduceSum's empty axes, a no-op). */
static void test_no_values(void) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "2"});
  add_input(&m, "axes", ETRT_ONNX_INT64, 1, (const char *[]){"0"});
  tm_node(&m, "ReduceSum", "sum", "x,axes", "y", 1, tm_attr_int("noop_with_empty_axes", 1));
  tm_output(&m, "y");
  size_t size, pte_size;
  uint8_t *pte = NULL;
  const char *spec = "axes:";
  CHECK_OK(bp_build(tm_finish(&m, 13, &size), &size, "cpu", &spec, 1, &pte, &pte_size));
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  if (l.method != NULL) {
    float x[4] = {1, 2, 3, 4};
    etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 2});
    etrt_tensor_view av = bp_view(x, ETRT_DTYPE_INT64, 1, (int64_t[]){0});
    CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
    CHECK_OK(etrt_method_set_input(l.method, 1, &av));
    CHECK_OK(etrt_method_execute(l.method));
    etrt_tensor_view y;
    CHECK_OK(etrt_method_get_output(l.method, 0, &y));
    CHECK(y.rank == 2 && y.sizes[0] == 2 && y.sizes[1] == 2);
    for (int i = 0; i < 4; ++i) CHECK_NEAR(((const float *)y.data)[i], x[i], 0);
  }
  bp_unload(&l);
}

static void test_refusals(void) {
  size_t size, pte_size;
  uint8_t *pte = NULL;
  static const struct {
    const char *spec, *message;
    etrt_status status;
  } bad[] = {
      {"s", "--shape-values 's': expected INPUT:V1,V2,...", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:1,,2", "--shape-values 's:1,,2': expected", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:3,x", "expected INPUT:V1,V2,...", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:1-2", "expected INPUT:V1,V2,...", ETRT_ERROR_INVALID_ARGUMENT},
      {":3,2", "expected INPUT:V1,V2,...", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:99999999999999999999", "one outside int64", ETRT_ERROR_INVALID_ARGUMENT},
      {"t:3,2", "the model has no input named 't'", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:1:2:3", "the model has no input named 's:1:2'", ETRT_ERROR_INVALID_ARGUMENT},
      {"x:3,2", "input 'x' is float32; only int32 and int64 inputs", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:3,2,1", "input 's' holds 2 values in the model, the flag gives 3",
       ETRT_ERROR_INVALID_ARGUMENT},
      {"s:3,2:2,2", "value 0: minimum 3 is above maximum 2", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:3,2:3", "the minimum has 2 values and the maximum 1", ETRT_ERROR_INVALID_ARGUMENT},
      {"s:-3,2", "Reshape 'reshape'", ETRT_ERROR_INVALID_ARGUMENT}, /* the op refuses the shape */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    const char *spec = bad[i].spec;
    CHECK_FAILS(bp_build(reshape_model(&size), &size, "cpu", &spec, 1, &pte, &pte_size),
                bad[i].status, bad[i].message);
  }
  const char *twice[2] = {"s:3,2", "s:2,3"};
  CHECK_FAILS(bp_build(reshape_model(&size), &size, "cpu", twice, 2, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT, "input 's' is given values twice");
  char many[400] = "s:";
  for (int i = 0; i < 65; ++i) strcat(many, i ? ",1" : "1");
  const char *too_many = many;
  CHECK_FAILS(bp_build(reshape_model(&size), &size, "cpu", &too_many, 1, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT, "more than 64 values");
  CHECK_FAILS(bp_build(reshape_model(&size), &size, "cpu", NULL, 1, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT, "shape values: NULL array with 1 entries");
  const char *null_spec = NULL;
  CHECK_FAILS(bp_build(reshape_model(&size), &size, "cpu", &null_spec, 1, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT, "shape values 0 is NULL");

  /* A scalar takes one value. */
  const char *two = "limit:1,2";
  CHECK_FAILS(bp_build(range_model(ETRT_ONNX_INT64, &size), &size, "cpu", &two, 1, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT, "input 'limit' is a scalar: give one value, not 2");
  /* A 2-D input cannot be given by value: the message says what to do instead. */
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 1, (const char *[]){"4"});
  add_input(&m, "shape", ETRT_ONNX_INT64, 2, (const char *[]){"1", "2"});
  tm_node(&m, "Reshape", "reshape", "x,shape", "y", 0);
  tm_output(&m, "y");
  CHECK_FAILS(bp_build(tm_finish(&m, 13, &size), &size, "cpu", NULL, 0, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT,
              "Reshape 'reshape': input 1 must be a scalar or 1-D, has rank 2");
  /* A float input read by an op with a bound is taken at execute: no flag needed. */
  tm_init(&m);
  tm_input(&m, "limit", 0, NULL);
  float start = 0, delta = 1;
  tm_initializer_f32(&m, "start", 0, NULL, &start);
  tm_initializer_f32(&m, "delta", 0, NULL, &delta);
  tm_node(&m, "Range", "range", "start,limit,delta", "y", 0);
  tm_output(&m, "y");
  CHECK_OK(bp_build(tm_finish(&m, 13, &size), &size, "cpu", NULL, 0, &pte, &pte_size));
  free(pte);
  pte = NULL;
  /* Values for an input no plan needs the values of, and for a 2-D input. */
  tm_init(&m);
  add_input(&m, "i", ETRT_ONNX_INT64, 1, (const char *[]){"2"});
  add_input(&m, "j", ETRT_ONNX_INT64, 2, (const char *[]){"1", "2"});
  tm_node(&m, "Neg", "neg", "i", "y", 0);
  tm_node(&m, "Neg", "neg2", "j", "z", 0);
  tm_output(&m, "y");
  tm_output(&m, "z");
  size_t neg_size;
  uint8_t *neg = tm_finish(&m, 13, &neg_size);
  const char *idle = "i:1,2";
  uint8_t *copy = malloc(neg_size);
  if (copy != NULL) memcpy(copy, neg, neg_size);
  CHECK_FAILS(bp_build(copy, &neg_size, "cpu", &idle, 1, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT,
              "no operation needs the values of input 'i' when the plan is built");
  const char *flat = "j:1,2";
  CHECK_FAILS(bp_build(neg, &neg_size, "cpu", &flat, 1, &pte, &pte_size),
              ETRT_ERROR_INVALID_ARGUMENT, "input 'j' has rank 2; only scalars and 1-D inputs");
}

/* What an input's values are needed for follows the data: through a Cast and an
 * Add (values), not through Shape (which reads dims only). */
static void test_what_needs_values(void) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  add_input(&m, "n", ETRT_ONNX_INT32, 1, (const char *[]){"1"});
  add_input(&m, "d", ETRT_ONNX_INT64, 1, (const char *[]){"2"});
  int64_t zero = 0;
  tm_initializer(&m, "zero", ETRT_ONNX_INT64, 1, (const int64_t[]){1}, &zero, sizeof zero);
  tm_node(&m, "Cast", "wide", "n", "n64", 1, tm_attr_int("to", ETRT_ONNX_INT64));
  tm_node(&m, "Add", "plus", "n64,zero", "k", 0);
  tm_node(&m, "TopK", "top", "x,k", "v,i", 0);
  tm_node(&m, "Shape", "dims", "d", "ds", 0);
  tm_node(&m, "ConstantOfShape", "fill", "ds", "f", 0);
  tm_output(&m, "v");
  tm_output(&m, "f");
  size_t size, pte_size;
  uint8_t *onnx = tm_finish(&m, 13, &size);
  uint8_t *pte = NULL, *copy = malloc(size);
  if (copy != NULL) memcpy(copy, onnx, size);
  const char *both[2] = {"n:2", "d:5,5"};
  CHECK_FAILS(bp_build(copy, &size, "cpu", both, 2, &pte, &pte_size), ETRT_ERROR_INVALID_ARGUMENT,
              "no operation needs the values of input 'd'");
  CHECK_OK(bp_build(onnx, &size, "cpu", both, 1, &pte, &pte_size));
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  if (l.method != NULL) {
    float x[6] = {1, 5, 3, 9, 2, 4};
    int32_t n = 2;
    int64_t d[2] = {7, 7};
    etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
    etrt_tensor_view nv = bp_view(&n, ETRT_DTYPE_INT32, 1, (int64_t[]){1});
    etrt_tensor_view dv = bp_view(d, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
    CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
    CHECK_OK(etrt_method_set_input(l.method, 1, &nv));
    CHECK_OK(etrt_method_set_input(l.method, 2, &dv));
    CHECK_OK(etrt_method_execute(l.method));
    etrt_tensor_view v;
    CHECK_OK(etrt_method_get_output(l.method, 0, &v));
    CHECK(v.rank == 2 && v.sizes[0] == 2 && v.sizes[1] == 2);
    const float want[4] = {5, 3, 9, 4};
    for (int i = 0; i < 4; ++i) CHECK_NEAR(((const float *)v.data)[i], want[i], 0);
  }
  bp_unload(&l);
}

/* On a GPU target the input stays on the host (the engines read shape inputs
 * there), the node computing a value from it runs on the CPU, and a GPU partition
 * that reads it as data gets it as a shape input too. */
static void test_gpu_target(void) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  add_input(&m, "s", ETRT_ONNX_INT64, 1, (const char *[]){"2"});
  int64_t one = 1;
  tm_initializer(&m, "one", ETRT_ONNX_INT64, 0, NULL, &one, sizeof one);
  tm_node(&m, "Relu", "relu", "x", "r", 0);
  tm_node(&m, "Add", "plus", "s,one", "s1", 0);
  tm_node(&m, "Reshape", "reshape", "r,s1", "y", 0);
  tm_node(&m, "Cast", "cast", "s", "z", 1, tm_attr_int("to", ETRT_ONNX_FLOAT));
  tm_output(&m, "y");
  tm_output(&m, "z");
  size_t size, pte_size;
  uint8_t *pte = NULL;
  const char *spec = "s:2,1";
  CHECK_OK(bp_build(tm_finish(&m, 13, &size), &size, "cuda:0", &spec, 1, &pte, &pte_size));
  if (pte == NULL) return;
  etrt_pte_program *program = NULL;
  CHECK_OK(etrt_pte_parse(pte, pte_size, &program));
  const etrt_pte_plan *plan = program ? etrt_pte_program_find_plan(program, "forward") : NULL;
  if (plan != NULL) {
    etrt_device d = etrt_pte_tensor_device(&plan->values[plan->inputs.data[1]].tensor);
    CHECK(d.type == ETRT_DEVICE_CPU);
    /* Every delegate reads s where the method input is: no copy of it is planned. */
    const etrt_pte_chain *chain = &plan->chains[0];
    int readers = 0;
    for (size_t i = 0; i < chain->instructions_count; ++i) {
      const etrt_pte_instruction *in = &chain->instructions[i];
      const etrt_pte_i32s *args =
          in->kind == ETRT_PTE_INSTR_KERNEL ? &in->kernel.args : &in->delegate.args;
      for (size_t a = 0; a < args->count; ++a) readers += args->data[a] == plan->inputs.data[1];
    }
    CHECK_EQ_INT(readers, 2); /* the CPU partition (Add, Reshape) and the GPU one (Cast) */
  }
  etrt_pte_program_free(program);
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  if (l.method == NULL) {
    bp_unload(&l);
    return;
  }
  float x[6] = {-1, 2, -3, 4, -5, 6};
  int64_t s[2] = {2, 1};
  etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
  etrt_tensor_view sv = bp_view(s, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
  CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
  CHECK_OK(etrt_method_set_input(l.method, 1, &sv));
  CHECK_OK(etrt_method_execute(l.method));
  etrt_tensor_view y, z;
  CHECK_OK(etrt_method_get_output(l.method, 0, &y));
  CHECK_OK(etrt_method_get_output(l.method, 1, &z));
  CHECK(y.rank == 2 && y.sizes[0] == 3 && y.sizes[1] == 2);
  for (int i = 0; i < 6; ++i) CHECK_NEAR(((const float *)y.data)[i], x[i] > 0 ? x[i] : 0, 0);
  CHECK(z.rank == 1 && z.sizes[0] == 2);
  CHECK_NEAR(((const float *)z.data)[0], 2, 0);
  CHECK_NEAR(((const float *)z.data)[1], 1, 0);
  bp_unload(&l);
}

int main(void) {
  RUN_TEST(test_reshape_values);
  RUN_TEST(test_value_ranges);
  RUN_TEST(test_scalar_and_int32);
  RUN_TEST(test_no_values);
  RUN_TEST(test_refusals);
  RUN_TEST(test_what_needs_values);
  CHECK_OK(etrt_device_select_sim(1));
  RUN_TEST(test_gpu_target);
  return TEST_EXIT();
}
