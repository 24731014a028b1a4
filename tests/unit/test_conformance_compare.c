/* The conformance runner's comparison (ONNX's tolerances, NaN, infinities, exact
 * integers, 16-bit floats kept as uint16, shapes and dtypes) and its reason keys. */
#include <math.h>

#include "base/half.h"
#include "conformance.h"
#include "onnx_build_testing.h"
#include "test_util.h"

static const etrt_conf_tolerance onnx_tol = {1e-3, 1e-7, 0, 0};

static etrt_tensor_view view1(void *data, etrt_dtype dtype, int64_t n) {
  etrt_tensor_view v = {.data = data, .dtype = dtype, .rank = 1, .sizes = {n}};
  return v;
}

static void test_float_tolerance(void) {
  float e[4] = {1.0f, -2.0f, 0.0f, 1000.0f};
  float a[4] = {1.0009f, -2.0019f, 5e-8f, 1000.9f};
  etrt_tensor_view av = view1(a, ETRT_DTYPE_FLOAT32, 4), ev = view1(e, ETRT_DTYPE_FLOAT32, 4);
  char detail[256] = "";
  CHECK(etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  a[2] = 2e-7f; /* beyond atol where the expected value is 0 */
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "1 of 4 elements off");
  CHECK_STR_CONTAINS(detail, "worst at [2]");
  a[2] = 0.0f;
  a[3] = 1001.2f; /* 1.2e-3 relative */
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "expected 1000");
}

static void test_worst_element_and_index(void) {
  double e[6] = {1, 2, 3, 4, 5, 6};
  double a[6] = {1, 2.5, 3, 4, 9, 6};
  etrt_tensor_view av = {.data = a, .dtype = ETRT_DTYPE_FLOAT64, .rank = 2, .sizes = {2, 3}};
  etrt_tensor_view ev = av;
  ev.data = e;
  char detail[256];
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "2 of 6 elements off");
  CHECK_STR_CONTAINS(detail, "worst at [1,1]: got 9, expected 5");
}

static void test_nan_and_infinity(void) {
  float e[3] = {NAN, INFINITY, -INFINITY};
  float a[3] = {-NAN, INFINITY, -INFINITY};
  etrt_tensor_view av = view1(a, ETRT_DTYPE_FLOAT32, 3), ev = view1(e, ETRT_DTYPE_FLOAT32, 3);
  char detail[256];
  CHECK(etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  a[0] = 0.0f; /* a number where NaN is expected */
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  a[0] = NAN;
  a[2] = INFINITY; /* the wrong sign */
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "worst at [2]");
  e[2] = a[2] = NAN;
  e[1] = 1.0f; /* infinity where a number is expected */
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
}

static void test_integers_exact(void) {
  int64_t e[2] = {(int64_t)1 << 60, -3};
  int64_t a[2] = {((int64_t)1 << 60) + 1, -3}; /* equal as doubles, not as integers */
  etrt_tensor_view av = view1(a, ETRT_DTYPE_INT64, 2), ev = view1(e, ETRT_DTYPE_INT64, 2);
  char detail[256];
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "got 1152921504606846977, expected 1152921504606846976");
  a[0] = e[0];
  CHECK(etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  uint8_t be[3] = {1, 0, 1}, ba[3] = {1, 0, 0};
  etrt_tensor_view bav = view1(ba, ETRT_DTYPE_BOOL, 3), bev = view1(be, ETRT_DTYPE_BOOL, 3);
  CHECK(!etrt_conf_compare(&bav, &bev, onnx_tol, detail, sizeof detail));
  ba[2] = 1;
  CHECK(etrt_conf_compare(&bav, &bev, onnx_tol, detail, sizeof detail));
}

static void test_sixteen_bit_floats_as_uint16(void) {
  uint16_t e[2] = {etrt_float_to_bfloat16(1.5f), etrt_float_to_bfloat16(-0.25f)};
  uint16_t a[2] = {e[0], e[1]};
  etrt_tensor_view av = view1(a, ETRT_DTYPE_BFLOAT16, 2), ev = view1(e, ETRT_DTYPE_UINT16, 2);
  char detail[256];
  CHECK(etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  a[1] = etrt_float_to_bfloat16(-0.251953125f); /* one unit off */
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  etrt_conf_tolerance one_unit = {1.0 / 128, 0, 0, 0};
  CHECK(etrt_conf_compare(&av, &ev, one_unit, detail, sizeof detail));
  /* uint16 against uint16 stays an integer comparison */
  av.dtype = ETRT_DTYPE_UINT16;
  CHECK(!etrt_conf_compare(&av, &ev, one_unit, detail, sizeof detail));
}

static void test_dtype_and_shape(void) {
  float f[2] = {1, 2};
  int32_t i[2] = {1, 2};
  etrt_tensor_view fv = view1(f, ETRT_DTYPE_FLOAT32, 2), iv = view1(i, ETRT_DTYPE_INT32, 2);
  char detail[256];
  CHECK(!etrt_conf_compare(&iv, &fv, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "dtype int32, expected float32");
  etrt_tensor_view other = {.data = f, .dtype = ETRT_DTYPE_FLOAT32, .rank = 2, .sizes = {2, 1}};
  CHECK(!etrt_conf_compare(&other, &fv, onnx_tol, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "shape (2,1), expected (2)");
  /* empty tensors match without data */
  etrt_tensor_view e0 = {.data = NULL, .dtype = ETRT_DTYPE_FLOAT32, .rank = 2, .sizes = {0, 3}};
  CHECK(etrt_conf_compare(&e0, &e0, onnx_tol, detail, sizeof detail));
  /* scalars */
  etrt_tensor_view s = {.data = f, .dtype = ETRT_DTYPE_FLOAT32, .rank = 0};
  CHECK(etrt_conf_compare(&s, &s, onnx_tol, detail, sizeof detail));
}

static void test_tolerance_table(void) {
  etrt_conf_tolerance t = etrt_conf_tolerance_for("test_abs", ETRT_DTYPE_FLOAT32);
  CHECK(t.rtol == 1e-3 && t.atol == 1e-7);
  t = etrt_conf_tolerance_for("test_cast_FLOAT_to_BFLOAT16", ETRT_DTYPE_BFLOAT16);
  CHECK(t.rtol == 1.0 / 128 && !t.drawn);
  CHECK(etrt_conf_tolerance_for("test_bernoulli_seed", ETRT_DTYPE_FLOAT32).drawn);
  t = etrt_conf_tolerance_for("test_training_dropout_mask", ETRT_DTYPE_FLOAT32);
  CHECK(t.dropout && t.drawn);
  /* ratio 0 drops nothing: compared exactly */
  CHECK(!etrt_conf_tolerance_for("test_training_dropout_zero_ratio", ETRT_DTYPE_FLOAT32).dropout);
}

/* Training Dropout: 0 or the data scaled by 1 / (1 - ratio) at each place, whichever
 * the expected tensor has there. */
static void test_dropout_values(void) {
  float x[4] = {1.0f, -2.0f, 3.0f, 4.0f}, e[4] = {4.0f, 0.0f, 0.0f, 16.0f};
  float a[4] = {0.0f, -8.0f, 12.0f, 16.0f}, ratio = 0.75f;
  etrt_tensor_view av = view1(a, ETRT_DTYPE_FLOAT32, 4), ev = view1(e, ETRT_DTYPE_FLOAT32, 4);
  etrt_tensor_view xv = view1(x, ETRT_DTYPE_FLOAT32, 4);
  etrt_tensor_view rv = {.data = &ratio, .dtype = ETRT_DTYPE_FLOAT32, .rank = 0};
  char detail[256];
  CHECK(etrt_conf_compare_dropout(&av, &ev, &xv, &rv, detail, sizeof detail));
  a[2] = 3.0f; /* kept but not scaled */
  CHECK(!etrt_conf_compare_dropout(&av, &ev, &xv, &rv, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "value 3 at [2] is neither 0 nor the kept value 12");
  etrt_tensor_view short_view = view1(a, ETRT_DTYPE_FLOAT32, 3);
  CHECK(!etrt_conf_compare_dropout(&short_view, &ev, &xv, &rv, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "shape (3), expected (4)");
  etrt_tensor_view int_ratio = {.data = &ratio, .dtype = ETRT_DTYPE_INT32, .rank = 0};
  CHECK(!etrt_conf_compare_dropout(&av, &ev, &xv, &int_ratio, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "not a Dropout's output, data and ratio");
}

/* Drawn values: any values the expected tensor holds, at any place; dtype and shape
 * still compared. */
static void test_drawn_values(void) {
  double e[4] = {0, 1, 1, 0}, a[4] = {1, 1, 0, 1};
  etrt_tensor_view av = view1(a, ETRT_DTYPE_FLOAT64, 4), ev = view1(e, ETRT_DTYPE_FLOAT64, 4);
  etrt_conf_tolerance drawn = etrt_conf_tolerance_for("test_bernoulli", ETRT_DTYPE_FLOAT64);
  char detail[256];
  CHECK(!etrt_conf_compare(&av, &ev, onnx_tol, detail, sizeof detail));
  CHECK(etrt_conf_compare(&av, &ev, drawn, detail, sizeof detail));
  a[2] = 0.5;
  CHECK(!etrt_conf_compare(&av, &ev, drawn, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "drawn value 0.5 at [2] is none of the expected values");
  etrt_tensor_view short_view = view1(a, ETRT_DTYPE_FLOAT64, 3);
  CHECK(!etrt_conf_compare(&short_view, &ev, drawn, detail, sizeof detail));
  CHECK_STR_CONTAINS(detail, "shape (3), expected (4)");
}

static void test_tolerance_castlike(void) {
  etrt_conf_tolerance t =
      etrt_conf_tolerance_for("test_castlike_FLOAT_to_BFLOAT16", ETRT_DTYPE_BFLOAT16);
  CHECK(t.rtol == 1.0 / 128);
  t = etrt_conf_tolerance_for("test_castlike_BFLOAT16_to_FLOAT", ETRT_DTYPE_FLOAT32);
  CHECK(t.rtol == 1e-3);
}

/* The declared shape of one input changes; the other input, the node and the output
 * are kept. */
static void test_model_reshape(void) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"3", "4"});
  tm_input(&m, "like", 2, (const char *[]){"3", "4"});
  tm_node(&m, "CastLike", "cast", "x,like", "y", 0);
  tm_output(&m, "y");
  size_t size = 0, reshaped_size = 0;
  uint8_t *bytes = tm_finish(&m, 15, &size), *reshaped = NULL;
  CHECK_OK(etrt_conf_model_reshape(bytes, size, "like", 1, (const int64_t[]){1}, &reshaped,
                                   &reshaped_size));
  etrt_onnx_model *model = NULL;
  CHECK_OK(etrt_onnx_model_parse(reshaped, reshaped_size, NULL, &model));
  if (model != NULL) {
    const etrt_onnx_graph *g = etrt_onnx_model_graph(model);
    CHECK_EQ_INT(g->input_count, 2);
    CHECK_EQ_INT(g->inputs[0].rank, 2);
    CHECK_EQ_INT(g->inputs[0].dims[1].value, 4);
    CHECK_EQ_INT(g->inputs[1].rank, 1);
    CHECK_EQ_INT(g->inputs[1].dims[0].value, 1);
    CHECK_EQ_INT(g->inputs[1].elem_type, ETRT_ONNX_FLOAT);
    CHECK_EQ_INT(g->node_count, 1);
    CHECK_EQ_INT(g->output_count, 1);
    etrt_onnx_model_free(model);
  }
  free(reshaped);
  /* no input of that name: the same bytes */
  CHECK_OK(etrt_conf_model_reshape(bytes, size, "z", 0, NULL, &reshaped, &reshaped_size));
  CHECK(reshaped_size == size && memcmp(reshaped, bytes, size) == 0);
  free(reshaped);
  /* not protobuf */
  reshaped = NULL;
  CHECK(etrt_conf_model_reshape((const uint8_t *)"\x0f", 1, "x", 0, NULL, &reshaped,
                                &reshaped_size) != ETRT_OK);
  CHECK(reshaped == NULL);
  free(bytes);
}

static void check_key(const char *message, const char *want) {
  char key[96];
  etrt_conf_reason_key(message, key, sizeof key);
  if (strcmp(key, want) != 0)
    etrt_test_fail(__FILE__, __LINE__, "key of '%s': '%s', wanted '%s'", message, key, want);
}

static void test_reason_keys(void) {
  check_key("the engine has no operator Loop (node 'loop_0'), If (node 'if_1')",
            "no operator Loop");
  check_key(
      "node 0 (Scan): attribute 'body' is a subgraph: control flow (If, Loop, Scan) is not "
      "supported",
      "Scan: attribute 'body' is a subgraph");
  check_key("partition 0 (cpu): node 'pad_3' (Pad): mode 'wrap' is not supported",
            "Pad: mode 'wrap' is not supported");
  check_key("BatchNormalization 'bn_0': training_mode=1 is not supported (inference only)",
            "BatchNormalization: training_mode=N is not supported");
  check_key(
      "Range 'Range_16': input 1 ('Cast_7') decides the output shape, so its values must be known",
      "Range: input N decides the output shape");
  check_key(
      "'/d/test_cast/test_data_set_0/output_0.pb': tensor 'output' at byte 0: ONNX element type "
      "STRING (8) is not supported",
      "ONNX element type STRING is not supported");
  check_key("model: no opset is imported for the default ONNX domain (opset_import)",
            "no opset is imported for the default ONNX domain");
  check_key("output 'values' is a graph input or a constant, not computed by a node",
            "output is a graph input or a constant");
  check_key(
      "node 'g' (Gradient): operators of domain 'ai.onnx.preview.training' are not supported "
      "(only)",
      "Gradient: operators of domain 'ai.onnx.preview.training' are not supported");
  check_key("node 3 (Cast): 'x' has an element type etrt cannot hold",
            "Cast: has an element type etrt cannot hold");
  check_key("'/d/x.pb': holds a SequenceProto or OptionalProto 'opt_in', not a TensorProto",
            "holds a SequenceProto or OptionalProto");
  check_key("", "(no message)");
  char tiny[8];
  etrt_conf_reason_key("a message much longer than the key can hold", tiny, sizeof tiny);
  CHECK(strlen(tiny) < sizeof tiny);
}

int main(void) {
  RUN_TEST(test_tolerance_castlike);
  RUN_TEST(test_model_reshape);
  RUN_TEST(test_float_tolerance);
  RUN_TEST(test_worst_element_and_index);
  RUN_TEST(test_nan_and_infinity);
  RUN_TEST(test_integers_exact);
  RUN_TEST(test_sixteen_bit_floats_as_uint16);
  RUN_TEST(test_dtype_and_shape);
  RUN_TEST(test_tolerance_table);
  RUN_TEST(test_drawn_values);
  RUN_TEST(test_dropout_values);
  RUN_TEST(test_reason_keys);
  return TEST_EXIT();
}
