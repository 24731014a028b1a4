/* Import's rewrites of operators into what the engine implements, checked on what
 * the built programs compute: inference Dropout (with its all-true mask), training
 * Dropout kept as the engine's operation, the refusals, the legacy `broadcast`/`axis` attributes of
 * opset < 7 Gemm and binary operations, and DFT's axis attribute before opset 20. */
#include <stdint.h>

#include "built_program_testing.h"
#include "onnx_build_testing.h"
#include "test_util.h"

static void add_input(tm_model *m, const char *name, int32_t elem, int rank,
                      const char *const *dims) {
  etrt_pb_writer vi = tm_value_info(name, elem, rank, dims);
  tm_put(&m->graph, 11, &vi);
}

/* Runs a built one-input program on x (float, 2x3) and returns its outputs. */
static void run_one(uint8_t *pte, size_t pte_size, float *x, etrt_tensor_view *outputs,
                    uint32_t count, bp_loaded *l) {
  bp_load(pte, pte_size, l);
  if (l->method == NULL) return;
  etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 3});
  CHECK_OK(etrt_method_set_input(l->method, 0, &xv));
  CHECK_OK(etrt_method_execute(l->method));
  for (uint32_t i = 0; i < count; ++i) CHECK_OK(etrt_method_get_output(l->method, i, &outputs[i]));
}

static uint8_t *dropout_model(int64_t opset, const char *inputs, const char *outputs, int training,
                              float ratio, size_t *size) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  if (training >= 0) {
    uint8_t mode = (uint8_t)training;
    tm_initializer(&m, "t", ETRT_ONNX_BOOL, 0, NULL, &mode, 1);
  } else {
    add_input(&m, "t", ETRT_ONNX_BOOL, 0, NULL);
  }
  tm_initializer_f32(&m, "r", 0, NULL, &ratio);
  tm_node(&m, "Dropout", "drop", inputs, outputs, 0);
  tm_output(&m, "y");
  if (strchr(outputs, ',') != NULL) {
    etrt_pb_writer vi = tm_value_info("mask", ETRT_ONNX_BOOL, -1, NULL);
    tm_put(&m.graph, 12, &vi);
  }
  return tm_finish(&m, opset, size);
}

static void test_dropout_identity_and_mask(void) {
  size_t size, pte_size;
  uint8_t *pte = NULL;
  /* The input straight to the output, and an all-true mask of its shape. */
  CHECK_OK(bp_build(dropout_model(13, "x,r,t", "y,mask", 0, 0.5f, &size), &size, "cpu", NULL, 0,
                    &pte, &pte_size));
  float x[6] = {1, -2, 3, -4, 5, -6};
  etrt_tensor_view out[2];
  bp_loaded l;
  run_one(pte, pte_size, x, out, 2, &l);
  if (l.method != NULL) {
    CHECK(out[0].rank == 2 && out[0].sizes[0] == 2 && out[0].sizes[1] == 3);
    for (int i = 0; i < 6; ++i) CHECK_NEAR(((const float *)out[0].data)[i], x[i], 0);
    CHECK(out[1].dtype == ETRT_DTYPE_BOOL && out[1].rank == 2 && out[1].sizes[1] == 3);
    for (int i = 0; i < 6; ++i) CHECK_EQ_INT(((const uint8_t *)out[1].data)[i], 1);
  }
  bp_unload(&l);
  /* Training with a constant ratio of 0 drops nothing; an old opset without the
   * training input is inference. */
  CHECK_OK(bp_build(dropout_model(13, "x,r,t", "y", 1, 0.0f, &size), &size, "cpu", NULL, 0, &pte,
                    &pte_size));
  free(pte);
  CHECK_OK(
      bp_build(dropout_model(7, "x", "y", 0, 0.5f, &size), &size, "cpu", NULL, 0, &pte, &pte_size));
  free(pte);
}

/* Training with a ratio that may drop: the engine's Dropout, whose kept elements are
 * scaled by 1 / (1 - ratio) and marked in the mask. */
static void test_dropout_training(void) {
  size_t size, pte_size;
  uint8_t *pte = NULL;
  CHECK_OK(bp_build(dropout_model(13, "x,r,t", "y,mask", 1, 0.5f, &size), &size, "cpu", NULL, 0,
                    &pte, &pte_size));
  float x[6] = {1, -2, 3, -4, 5, -6};
  etrt_tensor_view out[2];
  bp_loaded l;
  run_one(pte, pte_size, x, out, 2, &l);
  if (l.method != NULL) {
    CHECK(out[1].dtype == ETRT_DTYPE_BOOL && out[1].rank == 2 && out[1].sizes[1] == 3);
    for (int i = 0; i < 6; ++i) {
      uint8_t keep = ((const uint8_t *)out[1].data)[i];
      CHECK_NEAR(((const float *)out[0].data)[i], keep ? 2 * x[i] : 0.0f, 0);
    }
  }
  bp_unload(&l);
  /* training_mode known only at run time builds too */
  CHECK_OK(bp_build(dropout_model(13, "x,r,t", "y", -1, 0.5f, &size), &size, "cpu", NULL, 0, &pte,
                    &pte_size));
  free(pte);
}

static void test_dropout_refusals(void) {
  size_t size, pte_size;
  uint8_t *pte = NULL;
  CHECK_FAILS(bp_build(dropout_model(9, "x", "y,mask", 0, 0.5f, &size), &size, "cpu", NULL, 0, &pte,
                       &pte_size),
              ETRT_ERROR_UNSUPPORTED, "the mask output of an opset 9 Dropout");
  CHECK(pte == NULL);
}

/* y = x (2x3) @ w (3x2) + c (2), with Gemm's opset-6 broadcast flag. */
static void test_gemm_legacy_broadcast(void) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  const float w[6] = {1, 0, 0, 1, 1, 1}, c[2] = {10, 20};
  tm_initializer_f32(&m, "w", 2, (const int64_t[]){3, 2}, w);
  tm_initializer_f32(&m, "c", 1, (const int64_t[]){2}, c);
  tm_node(&m, "Gemm", "gemm", "x,w,c", "y", 1, tm_attr_int("broadcast", 1));
  tm_output(&m, "y");
  size_t size, pte_size;
  uint8_t *pte = NULL;
  CHECK_OK(bp_build(tm_finish(&m, 6, &size), &size, "cpu", NULL, 0, &pte, &pte_size));
  float x[6] = {1, 2, 3, 4, 5, 6};
  etrt_tensor_view y;
  bp_loaded l;
  run_one(pte, pte_size, x, &y, 1, &l);
  if (l.method != NULL) {
    const float want[4] = {1 + 3 + 10, 2 + 3 + 20, 4 + 6 + 10, 5 + 6 + 20};
    for (int i = 0; i < 4; ++i) CHECK_NEAR(((const float *)y.data)[i], want[i], 1e-6);
  }
  bp_unload(&l);
}

/* x (2x3) + b, opset 6: b aligned at x's last axes (axis 1, or no axis) is numpy
 * broadcasting; b aligned at axis 0 is refused. */
static uint8_t *add_model(int64_t b_size, int with_axis, int64_t axis, size_t *size) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  const float b[3] = {10, 20, 30};
  tm_initializer_f32(&m, "b", 1, (const int64_t[]){b_size}, b);
  if (with_axis)
    tm_node(&m, "Add", "add", "x,b", "y", 2, tm_attr_int("broadcast", 1),
            tm_attr_int("axis", axis));
  else
    tm_node(&m, "Add", "add", "x,b", "y", 1, tm_attr_int("broadcast", 1));
  tm_output(&m, "y");
  return tm_finish(&m, 6, size);
}

static void test_binary_legacy_broadcast(void) {
  for (int with_axis = 0; with_axis < 2; ++with_axis) {
    size_t size, pte_size;
    uint8_t *pte = NULL;
    CHECK_OK(bp_build(add_model(3, with_axis, -1, &size), &size, "cpu", NULL, 0, &pte, &pte_size));
    float x[6] = {1, 2, 3, 4, 5, 6};
    etrt_tensor_view y;
    bp_loaded l;
    run_one(pte, pte_size, x, &y, 1, &l);
    if (l.method != NULL)
      for (int i = 0; i < 6; ++i)
        CHECK_NEAR(((const float *)y.data)[i], x[i] + 10 * (i % 3 + 1), 0);
    bp_unload(&l);
  }
  size_t size, pte_size;
  uint8_t *pte = NULL;
  CHECK_FAILS(bp_build(add_model(2, 1, 0, &size), &size, "cpu", NULL, 0, &pte, &pte_size),
              ETRT_ERROR_UNSUPPORTED,
              "opset 6 broadcasting B at axis 0 of A, not at A's last axes");
}

/* DFT over x [2, 3, 1] = [[1, 2, 3], [4, 5, 6]]: before opset 20 the axis is an
 * attribute (1 when absent), moved to input 2; `axis_input` adds one as well. */
static uint8_t *dft_model(int64_t opset, int axis_attribute, int64_t axis, int axis_input,
                          size_t *size) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 3, (const char *[]){"2", "3", "1"});
  if (axis_input) {
    float one = 1;
    tm_initializer_f32(&m, "a", 0, NULL, &one);
  }
  const char *inputs = axis_input ? "x,,a" : "x";
  if (axis_attribute == 1)
    tm_node(&m, "DFT", "dft", inputs, "y", 1, tm_attr_int("axis", axis));
  else if (axis_attribute == 2)
    tm_node(&m, "DFT", "dft", inputs, "y", 1, tm_attr_float("axis", (float)axis));
  else
    tm_node(&m, "DFT", "dft", inputs, "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, opset, size);
}

static void test_dft_axis(void) {
  /* {opset, attribute?, axis}: axis 1 (the default of both opsets), then axis 0 */
  const int64_t forms[3][3] = {{17, 0, 0}, {20, 0, 0}, {17, 1, 0}};
  for (int f = 0; f < 3; ++f) {
    size_t size, pte_size;
    uint8_t *pte = NULL;
    CHECK_OK(bp_build(dft_model(forms[f][0], (int)forms[f][1], forms[f][2], 0, &size), &size, "cpu",
                      NULL, 0, &pte, &pte_size));
    bp_loaded l;
    bp_load(pte, pte_size, &l);
    if (l.method == NULL) continue;
    float x[6] = {1, 2, 3, 4, 5, 6};
    etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 3, (int64_t[]){2, 3, 1}), y;
    CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
    CHECK_OK(etrt_method_execute(l.method));
    CHECK_OK(etrt_method_get_output(l.method, 0, &y));
    CHECK(y.rank == 3 && y.sizes[0] == 2 && y.sizes[1] == 3 && y.sizes[2] == 2);
    const float *v = y.data;
    if (forms[f][1] == 0) { /* along axis 1: the sums of the rows first */
      CHECK_NEAR(v[0], 6, 1e-5);
      CHECK_NEAR(v[2], -1.5, 1e-5);
      CHECK_NEAR(v[3], 0.8660254, 1e-5);
      CHECK_NEAR(v[6], 15, 1e-5);
    } else { /* along axis 0: sums, then differences of the rows */
      CHECK_NEAR(v[0], 5, 1e-5);
      CHECK_NEAR(v[4], 9, 1e-5);
      CHECK_NEAR(v[6], -3, 1e-5);
      CHECK_NEAR(v[7], 0, 1e-5);
    }
    bp_unload(&l);
  }
  size_t size, pte_size;
  uint8_t *pte = NULL;
  CHECK_FAILS(bp_build(dft_model(17, 2, 0, 0, &size), &size, "cpu", NULL, 0, &pte, &pte_size),
              ETRT_ERROR_INVALID_FORMAT, "attribute 'axis' must be INT");
  CHECK_FAILS(bp_build(dft_model(17, 0, 0, 1, &size), &size, "cpu", NULL, 0, &pte, &pte_size),
              ETRT_ERROR_INVALID_FORMAT, "an opset 17 DFT has no axis input");
  CHECK(pte == NULL);
}

int main(void) {
  RUN_TEST(test_dropout_identity_and_mask);
  RUN_TEST(test_dropout_training);
  RUN_TEST(test_dropout_refusals);
  RUN_TEST(test_gemm_legacy_broadcast);
  RUN_TEST(test_binary_legacy_broadcast);
  RUN_TEST(test_dft_axis);
  return TEST_EXIT();
}
