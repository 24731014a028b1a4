/* Models whose shapes follow from the values of graph inputs, built without
 * --shape-values: the values are read when the program runs, the outputs take the
 * run's shapes (growing and shrinking from run to run), on the CPU and on a simulated
 * GPU (where what computes a value may run on the GPU and the program copies it back
 * on the stream before the CPU plan reads it: sim streams run only when synchronised,
 * so a missing wait gives wrong shapes here). Values that would make a shape negative
 * or too large are refused at execute naming the node and the input. */
#include <stdint.h>

#include "built_program_testing.h"
#include "device/sim.h"
#include "onnx_build_testing.h"
#include "test_util.h"

static const float X[6] = {1, 2, 3, 4, 5, 6}; /* x[2,3]: positive, so Relu keeps it */

static void add_int_input(tm_model *m, const char *name, int count) {
  char text[16];
  snprintf(text, sizeof text, "%d", count);
  etrt_pb_writer vi = tm_value_info(name, ETRT_ONNX_INT64, 1, (const char *[]){text});
  tm_put(&m->graph, 11, &vi);
}

/* x[2,3] -> Relu -> `op`(r, v[count] graph input) -> Neg -> y. */
static uint8_t *op_model(const char *op, int count, size_t *size) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  add_int_input(&m, "v", count);
  tm_node(&m, "Relu", "relu", "x", "r", 0);
  /* TopK's indices are left unread */
  tm_node(&m, op, "op", "r,v", strcmp(op, "TopK") == 0 ? "o,indices" : "o", 0);
  tm_node(&m, "Neg", "neg", "o", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 18, size);
}

typedef struct run_case {
  int64_t values[8];
  int32_t rank;                                                           /* of y */
  int64_t dims[4];                                                        /* of y */
  float (*expect)(int64_t i, const int64_t *dims, const int64_t *values); /* of y[i], flat */
} run_case;

/* Builds once for `device` and runs every case in order, checking y's shape and values. */
static void run_cases(uint8_t *onnx, size_t size, const char *device, int count,
                      const run_case *cases, int num_cases) {
  size_t pte_size = 0;
  uint8_t *pte = NULL;
  CHECK_OK(bp_build(onnx, &size, device, NULL, 0, &pte, &pte_size));
  if (pte == NULL) return;
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  for (int c = 0; c < num_cases && l.method != NULL; ++c) {
    int64_t values[8];
    memcpy(values, cases[c].values, sizeof values);
    etrt_tensor_view xv = bp_view((void *)X, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
    etrt_tensor_view vv = bp_view(values, ETRT_DTYPE_INT64, 1, (int64_t[]){count});
    CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
    CHECK_OK(etrt_method_set_input(l.method, 1, &vv));
    CHECK_OK(etrt_method_execute(l.method));
    etrt_tensor_view y;
    memset(&y, 0, sizeof y);
    CHECK_OK(etrt_method_get_output(l.method, 0, &y));
    int same = y.rank == cases[c].rank;
    for (int32_t a = 0; a < y.rank && same; ++a) same = y.sizes[a] == cases[c].dims[a];
    if (!same) {
      etrt_test_fail(__FILE__, __LINE__, "%s on %s, case %d: y has rank %d, dims %lld %lld %lld",
                     device, device, c, (int)y.rank, (long long)y.sizes[0], (long long)y.sizes[1],
                     (long long)y.sizes[2]);
      continue;
    }
    int64_t n = 1;
    for (int32_t a = 0; a < y.rank; ++a) n *= y.sizes[a];
    for (int64_t i = 0; i < n; ++i)
      CHECK_NEAR(((const float *)y.data)[i], cases[c].expect(i, y.sizes, cases[c].values), 0);
  }
  bp_unload(&l);
}

static float same_order(int64_t i, const int64_t *dims, const int64_t *values) {
  (void)dims;
  (void)values;
  return -X[i % 6];
}

/* Tile and Expand of x[2,3]: y[r][c] = -x[r % 2][c % 3] over the last two axes. */
static float tiled(int64_t i, const int64_t *dims, const int64_t *values) {
  (void)values;
  int64_t cols = dims[1], r = i / cols, c = i % cols;
  return -X[(r % 2) * 3 + c % 3];
}

static float top_k(int64_t i, const int64_t *dims, const int64_t *values) {
  (void)values;
  int64_t r = i / dims[1], c = i % dims[1];
  return -X[r * 3 + 2 - c];
}

/* Slice with starts {0, s1}, ends {2, e1}: columns s1.. of each row. */
static float sliced(int64_t i, const int64_t *dims, const int64_t *values) {
  int64_t r = i / dims[1], c = i % dims[1];
  return -X[r * 3 + values[1] + c];
}

/* ReduceSum over axes given (keepdims): by axis 1 the row sums, by 0 the column sums. */
static float summed(int64_t i, const int64_t *dims, const int64_t *values) {
  (void)values;
  if (dims[0] == 2 && dims[1] == 1) return -(X[i * 3] + X[i * 3 + 1] + X[i * 3 + 2]);
  if (dims[0] == 1 && dims[1] == 3) return -(X[i] + X[i + 3]);
  return -21;
}

/* Pad {0, 1, 0, 1}: a zero column on each side. */
static float padded(int64_t i, const int64_t *dims, const int64_t *values) {
  int64_t r = i / dims[1] - values[0], c = i % dims[1] - values[1];
  if (r < 0 || r >= 2 || c < 0 || c >= 3) return 0;
  return -X[r * 3 + c];
}

static void run_op(const char *op, int count, const run_case *cases, int num_cases) {
  static const char *const devices[] = {"cpu", "cuda:0"};
  for (int d = 0; d < 2; ++d) {
    size_t size = 0;
    uint8_t *onnx = op_model(op, count, &size);
    run_cases(onnx, size, devices[d], count, cases, num_cases);
  }
}

static void test_reshape(void) {
  const run_case cases[] = {
      {{3, 2}, 2, {3, 2}, same_order}, {{6, 1}, 2, {6, 1}, same_order},
      {{1, 6}, 2, {1, 6}, same_order}, {{-1, 2}, 2, {3, 2}, same_order},
      {{2, 3}, 2, {2, 3}, same_order},
  };
  run_op("Reshape", 2, cases, 5);
}

static void test_expand_and_tile(void) {
  const run_case expand[] = {
      {{2, 3}, 2, {2, 3}, tiled},
      {{4, 2, 3}, 3, {4, 2, 3}, same_order},
      {{1, 1}, 2, {2, 3}, tiled},
  };
  run_op("Expand", 2, expand, 1);
  run_op("Expand", 3, expand + 1, 1);
  const run_case tile[] = {
      {{1, 1}, 2, {2, 3}, tiled},
      {{2, 3}, 2, {4, 9}, tiled},
      {{1, 2}, 2, {2, 6}, tiled},
  };
  run_op("Tile", 2, tile, 3);
}

static void test_slice_top_k_reduce_pad(void) {
  const run_case top[] = {
      {{1}, 2, {2, 1}, top_k}, {{3}, 2, {2, 3}, top_k}, {{2}, 2, {2, 2}, top_k}};
  run_op("TopK", 1, top, 3);
  const run_case sums[] = {
      {{1}, 2, {2, 1}, summed}, {{0}, 2, {1, 3}, summed}, {{0, 1}, 2, {1, 1}, summed}};
  run_op("ReduceSum", 1, sums, 2);
  run_op("ReduceSum", 2, sums + 2, 1);
  const run_case pads[] = {{{0, 1, 0, 1}, 2, {2, 5}, padded},
                           {{1, 0, 0, 0}, 2, {3, 3}, padded},
                           {{0, 0, 0, 0}, 2, {2, 3}, padded}};
  run_op("Pad", 4, pads, 3);
}

/* Slice's starts and ends are two inputs: its own model. */
static void test_slice(void) {
  static const char *const devices[] = {"cpu", "cuda:0"};
  const int64_t bounds[3][4] = {{0, 1, 2, 3}, {0, 0, 2, 3}, {0, 2, 2, 3}};
  const int64_t cols[3] = {2, 3, 1};
  for (int d = 0; d < 2; ++d) {
    tm_model m;
    tm_init(&m);
    tm_input(&m, "x", 2, (const char *[]){"2", "3"});
    add_int_input(&m, "starts", 2);
    add_int_input(&m, "ends", 2);
    tm_node(&m, "Relu", "relu", "x", "r", 0);
    tm_node(&m, "Slice", "slice", "r,starts,ends", "o", 0);
    tm_node(&m, "Neg", "neg", "o", "y", 0);
    tm_output(&m, "y");
    size_t size = 0, pte_size = 0;
    uint8_t *pte = NULL;
    CHECK_OK(bp_build(tm_finish(&m, 18, &size), &size, devices[d], NULL, 0, &pte, &pte_size));
    if (pte == NULL) continue;
    bp_loaded l;
    bp_load(pte, pte_size, &l);
    for (int c = 0; c < 3 && l.method != NULL; ++c) {
      int64_t starts[2] = {bounds[c][0], bounds[c][1]}, ends[2] = {bounds[c][2], bounds[c][3]};
      etrt_tensor_view xv = bp_view((void *)X, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
      etrt_tensor_view sv = bp_view(starts, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
      etrt_tensor_view ev = bp_view(ends, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
      CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
      CHECK_OK(etrt_method_set_input(l.method, 1, &sv));
      CHECK_OK(etrt_method_set_input(l.method, 2, &ev));
      CHECK_OK(etrt_method_execute(l.method));
      etrt_tensor_view y;
      memset(&y, 0, sizeof y);
      CHECK_OK(etrt_method_get_output(l.method, 0, &y));
      CHECK(y.rank == 2 && y.sizes[0] == 2 && y.sizes[1] == cols[c]);
      if (y.rank != 2 || y.sizes[1] != cols[c]) continue;
      for (int64_t i = 0; i < 2 * cols[c]; ++i)
        CHECK_NEAR(((const float *)y.data)[i], sliced(i, y.sizes, starts), 0);
    }
    bp_unload(&l);
  }
}

/* ConstantOfShape(s + 1): on a GPU target the Add runs on the GPU and its result is
 * copied back to the host for the CPU plan that reads its values. */
static void test_constant_of_shape_from_device(void) {
  static const char *const devices[] = {"cpu", "cuda:0"};
  const int64_t shapes[4][2] = {{1, 2}, {3, 4}, {0, 0}, {2, 1}};
  for (int d = 0; d < 2; ++d) {
    tm_model m;
    tm_init(&m);
    add_int_input(&m, "s", 2);
    int64_t one = 1;
    tm_initializer(&m, "one", ETRT_ONNX_INT64, 0, NULL, &one, sizeof one);
    tm_node(&m, "Add", "plus", "s,one", "s1", 0);
    tm_node(&m, "ConstantOfShape", "fill", "s1", "y", 0);
    tm_output(&m, "y");
    size_t size = 0, pte_size = 0;
    uint8_t *pte = NULL;
    CHECK_OK(bp_build(tm_finish(&m, 18, &size), &size, devices[d], NULL, 0, &pte, &pte_size));
    if (pte == NULL) continue;
    bp_loaded l;
    bp_load(pte, pte_size, &l);
    for (int c = 0; c < 4 && l.method != NULL; ++c) {
      int64_t s[2] = {shapes[c][0], shapes[c][1]};
      etrt_tensor_view sv = bp_view(s, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
      CHECK_OK(etrt_method_set_input(l.method, 0, &sv));
      CHECK_OK(etrt_method_execute(l.method));
      etrt_tensor_view y;
      memset(&y, 0, sizeof y);
      CHECK_OK(etrt_method_get_output(l.method, 0, &y));
      CHECK(y.rank == 2 && y.sizes[0] == s[0] + 1 && y.sizes[1] == s[1] + 1);
      if (y.rank == 2 && y.sizes[0] == s[0] + 1 && y.sizes[1] == s[1] + 1)
        for (int64_t i = 0; i < y.sizes[0] * y.sizes[1]; ++i)
          CHECK_NEAR(((const float *)y.data)[i], 0, 0);
    }
    /* A shape that would be negative, or past the largest axis, is refused naming the
     * node and the input whose values decided it. */
    int64_t negative[2] = {-3, 1};
    etrt_tensor_view nv = bp_view(negative, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
    if (l.method != NULL) {
      CHECK_OK(etrt_method_set_input(l.method, 0, &nv));
      CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT,
                  "ConstantOfShape 'fill'");
      int64_t huge[2] = {(int64_t)1 << 41, 0};
      etrt_tensor_view hv = bp_view(huge, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
      CHECK_OK(etrt_method_set_input(l.method, 0, &hv));
      CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT,
                  "'fill' (ConstantOfShape): output 0 ('y') axis 0 would be 2199023255553 for "
                  "the values of input 0");
      /* and the program still runs after a refusal */
      int64_t fine[2] = {1, 1};
      etrt_tensor_view fv = bp_view(fine, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
      CHECK_OK(etrt_method_set_input(l.method, 0, &fv));
      CHECK_OK(etrt_method_execute(l.method));
    }
    bp_unload(&l);
  }
}

/* Reshape refuses a shape that does not fit its input, naming itself. */
static void test_reshape_refusal(void) {
  size_t size = 0, pte_size = 0;
  uint8_t *pte = NULL;
  uint8_t *onnx = op_model("Reshape", 2, &size);
  CHECK_OK(bp_build(onnx, &size, "cpu", NULL, 0, &pte, &pte_size));
  if (pte == NULL) return;
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  if (l.method != NULL) {
    int64_t shape[2] = {-2, 3};
    etrt_tensor_view xv = bp_view((void *)X, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
    etrt_tensor_view sv = bp_view(shape, ETRT_DTYPE_INT64, 1, (int64_t[]){2});
    CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
    CHECK_OK(etrt_method_set_input(l.method, 1, &sv));
    CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT, "Reshape 'op'");
    shape[0] = 4;
    CHECK_FAILS(etrt_method_execute(l.method), ETRT_ERROR_INVALID_ARGUMENT, "Reshape 'op'");
  }
  bp_unload(&l);
}

/* An op with no bound still needs its values when the plan is built, and says how. */
static void test_values_still_needed(void) {
  tm_model m;
  tm_init(&m);
  etrt_pb_writer vi = tm_value_info("x", ETRT_ONNX_FLOAT, 3, (const char *[]){"1", "4", "4"});
  tm_put(&m.graph, 11, &vi);
  add_int_input(&m, "image", 2);
  int64_t block[2] = {2, 2};
  tm_initializer(&m, "block", ETRT_ONNX_INT64, 1, (int64_t[]){2}, block, sizeof block);
  tm_node(&m, "Col2Im", "col2im", "x,image,block", "y", 0);
  tm_output(&m, "y");
  size_t size = 0, pte_size = 0;
  uint8_t *pte = NULL;
  CHECK_FAILS(bp_build(tm_finish(&m, 18, &size), &size, "cpu", NULL, 0, &pte, &pte_size),
              ETRT_ERROR_UNSUPPORTED,
              "Col2Im 'col2im': its input 1 needs the values of the graph input 'image' when the "
              "plan is built (they decide shapes): pass --shape-values image:V1,V2,...");
  CHECK(pte == NULL);
}

int main(void) {
  CHECK_OK(etrt_device_select_sim(2));
  RUN_TEST(test_reshape);
  RUN_TEST(test_expand_and_tile);
  RUN_TEST(test_slice_top_k_reduce_pad);
  RUN_TEST(test_slice);
  RUN_TEST(test_constant_of_shape_from_device);
  RUN_TEST(test_reshape_refusal);
  RUN_TEST(test_values_still_needed);
  return TEST_EXIT();
}
