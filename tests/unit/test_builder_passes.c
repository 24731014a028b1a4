/* The builder's passes on small ONNX models: what each rewrites, and that the
 * rewritten graph computes what the original did (both run on the engine's CPU
 * executor). */
#include <math.h>
#include <stdint.h>

#include "builder/import.h"
#include "builder/lower.h"
#include "builder/partition.h"
#include "builder/passes.h"
#include "engine/engine.h"
#include "onnx_build_testing.h"
#include "test_util.h"

typedef struct loaded {
  uint8_t *bytes;
  etrt_onnx_model *model;
  etrt_ir_graph *graph;
} loaded;

static void load_raw(tm_model *m, int64_t opset, loaded *out, bool infer) {
  size_t size;
  out->bytes = tm_finish(m, opset, &size);
  out->model = NULL;
  out->graph = NULL;
  CHECK_OK(etrt_onnx_model_parse(out->bytes, size, NULL, &out->model));
  CHECK_OK(etrt_import_onnx(out->model, &out->graph));
  if (infer) CHECK_OK(etrt_lower_infer_shapes(out->graph));
}

static void load(tm_model *m, int64_t opset, loaded *out) { load_raw(m, opset, out, true); }

static void unload(loaded *l) {
  etrt_ir_graph_destroy(l->graph);
  etrt_onnx_model_free(l->model);
  free(l->bytes);
}

static uint32_t count_live(const etrt_ir_graph *g, const char *op) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->num_nodes; ++i)
    n += !g->nodes[i].dead && strcmp(g->nodes[i].op_type, op) == 0;
  return n;
}

/* Runs the whole graph (one input, one output) as a CPU plan. */
static void run_cpu(const etrt_ir_graph *g, const float *x, float *y, size_t y_count) {
  etrt_partition_options options = {.target = {ETRT_DEVICE_CPU, 0}};
  etrt_partitioning *parts = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &parts));
  if (parts == NULL) return;
  CHECK_EQ_INT(parts->count, 1);
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_plan_options plan_options = {.device = {ETRT_DEVICE_CPU, 0}, .name = "test"};
  CHECK_OK(etrt_lower_partition_plan(g, &parts->parts[0], &plan_options, NULL, &plan, &plan_size));
  etrt_engine *engine = NULL;
  etrt_exec_context *context = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  if (engine != NULL) CHECK_OK(etrt_exec_context_create(engine, NULL, &context));
  if (context != NULL) {
    const etrt_ir_value *in = &g->values[g->inputs[0]];
    CHECK_OK(etrt_exec_context_set_input_shape(context, 0, in->rank, in->max));
    CHECK_OK(etrt_exec_context_set_address(context, 0, (void *)x));
    int32_t rank;
    int64_t sizes[ETRT_MAX_RANK];
    CHECK_OK(etrt_exec_context_output_shape(context, 1, &rank, sizes));
    int64_t numel = 1;
    for (int32_t i = 0; i < rank; ++i) numel *= sizes[i];
    CHECK_EQ_INT(numel, (int64_t)y_count);
    CHECK_OK(etrt_exec_context_set_address(context, 1, y));
    CHECK_OK(etrt_exec_context_enqueue(context, NULL));
  }
  etrt_exec_context_destroy(context);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_partitioning_destroy(parts);
}

static void check_same(const float *a, const float *b, size_t n, double tol) {
  for (size_t i = 0; i < n; ++i) CHECK_NEAR(a[i], b[i], tol);
}

static void test_identity_and_dropout(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "3"};
  tm_input(&m, "x", 2, dims);
  tm_node(&m, "Relu", "r1", "x", "a", 0);
  tm_node(&m, "Identity", "id1", "a", "b", 0);
  tm_node(&m, "Dropout", "drop", "b", "c", 0);
  tm_node(&m, "Neg", "neg", "c", "d", 0);
  tm_node(&m, "Identity", "id2", "d", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load_raw(&m, 13, &l, false); /* Dropout is no engine operation: removed first */
  etrt_ir_graph *g = l.graph;
  uint32_t removed;
  CHECK_OK(etrt_pass_drop_identity(g, &removed));
  CHECK_EQ_INT(removed, 3);
  CHECK_OK(etrt_lower_infer_shapes(g));
  CHECK_EQ_INT(count_live(g, "Identity") + count_live(g, "Dropout"), 0);
  /* The Neg now writes the graph output y itself. */
  int32_t y = etrt_ir_find_value(g, "y");
  CHECK(g->outputs[0] == y && g->values[y].producer >= 0);
  CHECK(strcmp(g->nodes[g->values[y].producer].op_type, "Neg") == 0);
  CHECK_EQ_INT(g->nodes[g->values[y].producer].inputs[0], etrt_ir_find_value(g, "a"));
  float x[6] = {-1, 2, -3, 4, 0, 6}, out[6];
  run_cpu(g, x, out, 6);
  for (int i = 0; i < 6; ++i) CHECK_NEAR(out[i], x[i] > 0 ? -x[i] : 0, 0);
  unload(&l);
}

static void test_fold_constants(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "2"};
  tm_input(&m, "x", 2, dims);
  float c1[2] = {1, 2}, c2[2] = {10, 20};
  tm_initializer_f32(&m, "c1", 1, (int64_t[]){2}, c1);
  tm_initializer_f32(&m, "c2", 1, (int64_t[]){2}, c2);
  tm_node(&m, "Add", "sum", "c1,c2", "c3", 0);
  tm_node(&m, "Mul", "scale", "x,c3", "p", 0);
  tm_node(&m, "Shape", "shape", "x", "s", 0);
  tm_node(&m, "Reshape", "flat", "p,s", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, 13, &l);
  etrt_ir_graph *g = l.graph;
  uint32_t folded;
  CHECK_OK(etrt_pass_fold_constants(g, 4, &folded)); /* too small for c3 (8 bytes) */
  CHECK_EQ_INT(folded, 1);                           /* only the Shape, which has no cap */
  CHECK_OK(etrt_pass_fold_constants(g, 1 << 20, &folded));
  CHECK_EQ_INT(folded, 1);
  const etrt_ir_value *c3 = &g->values[etrt_ir_find_value(g, "c3")];
  CHECK(c3->is_constant && c3->producer == -1 && c3->rank == 1);
  CHECK_NEAR(((const float *)c3->data)[0], 11, 0);
  CHECK_NEAR(((const float *)c3->data)[1], 22, 0);
  const etrt_ir_value *s = &g->values[etrt_ir_find_value(g, "s")];
  CHECK(s->is_constant && s->dtype == ETRT_DTYPE_INT64);
  CHECK(((const int64_t *)s->data)[0] == 2 && ((const int64_t *)s->data)[1] == 2);
  CHECK_EQ_INT(etrt_ir_live_node_count(g), 2);
  float x[4] = {1, 1, 2, 2}, out[4];
  run_cpu(g, x, out, 4);
  CHECK_NEAR(out[0], 11, 0);
  CHECK_NEAR(out[3], 44, 0);
  unload(&l);
}

/* x[1,2,3,3] -> Conv(W[3,2,1,1], B[3]) -> BatchNormalization -> y */
static void test_batchnorm_into_conv(void) {
  float w[6] = {0.5f, -1, 2, 0.25f, -0.5f, 1}, bias[3] = {0.1f, -0.2f, 0.3f};
  float scale[3] = {1.5f, 0.5f, -2}, shift[3] = {0.25f, 0, 1};
  float mean[3] = {0.2f, -0.1f, 0.4f}, var[3] = {0.8f, 1.2f, 0.3f};
  float x[18], reference[27], folded_out[27];
  for (int i = 0; i < 18; ++i) x[i] = (float)(i % 7) * 0.3f - 0.9f;
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[4] = {"1", "2", "3", "3"};
    tm_input(&m, "x", 4, dims);
    tm_initializer_f32(&m, "W", 4, (int64_t[]){3, 2, 1, 1}, w);
    tm_initializer_f32(&m, "B", 1, (int64_t[]){3}, bias);
    tm_initializer_f32(&m, "scale", 1, (int64_t[]){3}, scale);
    tm_initializer_f32(&m, "shift", 1, (int64_t[]){3}, shift);
    tm_initializer_f32(&m, "mean", 1, (int64_t[]){3}, mean);
    tm_initializer_f32(&m, "var", 1, (int64_t[]){3}, var);
    tm_node(&m, "Conv", "conv", "x,W,B", "c", 0);
    tm_node(&m, "BatchNormalization", "bn", "c,scale,shift,mean,var", "y", 1,
            tm_attr_float("epsilon", 1e-3f));
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    etrt_ir_graph *g = l.graph;
    if (pass == 0) {
      run_cpu(g, x, reference, 27);
    } else {
      uint32_t folded, scales;
      CHECK_OK(etrt_pass_fold_batchnorm(g, &folded, &scales));
      CHECK_EQ_INT(folded, 1);
      CHECK_EQ_INT(scales, 0);
      CHECK_EQ_INT(count_live(g, "BatchNormalization"), 0);
      const etrt_ir_node *conv = &g->nodes[0];
      CHECK_EQ_INT(conv->outputs[0], etrt_ir_find_value(g, "y"));
      const float *w2 = g->values[conv->inputs[1]].data;
      const float *b2 = g->values[conv->inputs[2]].data;
      double s0 = scale[0] / sqrt(var[0] + 1e-3);
      CHECK_NEAR(w2[0], w[0] * s0, 1e-6);
      CHECK_NEAR(b2[0], (bias[0] - mean[0]) * s0 + shift[0], 1e-6);
      /* The original weights are untouched (another node could share them). */
      CHECK_NEAR(((const float *)g->values[etrt_ir_find_value(g, "W")].data)[0], w[0], 0);
      run_cpu(g, x, folded_out, 27);
      check_same(reference, folded_out, 27, 1e-5);
    }
    unload(&l);
  }
}

/* x[1,4,3,3] -> ConvTranspose(W[4,3,2,2], two groups, stride 2: 6 maps) -> Add of a
 * [1,6,1,1] bias (as PaddlePaddle's exporter writes it) -> BatchNormalization -> y: both
 * fold into the ConvTranspose, whose output channel c is group * 3 + W's axis 1. */
static void test_batchnorm_into_conv_transpose(void) {
  float w[48], bias[6], scale[6], shift[6], mean[6], var[6];
  for (int i = 0; i < 48; ++i) w[i] = (float)((i * 7) % 11) * 0.1f - 0.5f;
  for (int c = 0; c < 6; ++c) {
    bias[c] = 0.1f * (float)c - 0.2f;
    scale[c] = 0.5f + 0.25f * (float)c;
    shift[c] = (float)(c % 3) - 1.0f;
    mean[c] = 0.05f * (float)c;
    var[c] = 0.5f + 0.1f * (float)c;
  }
  float x[36], reference[216], folded_out[216];
  for (int i = 0; i < 36; ++i) x[i] = (float)(i % 5) * 0.4f - 0.8f;
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[4] = {"1", "4", "3", "3"};
    tm_input(&m, "x", 4, dims);
    tm_initializer_f32(&m, "W", 4, (int64_t[]){4, 3, 2, 2}, w);
    tm_initializer_f32(&m, "B", 4, (int64_t[]){1, 6, 1, 1}, bias);
    tm_initializer_f32(&m, "scale", 1, (int64_t[]){6}, scale);
    tm_initializer_f32(&m, "shift", 1, (int64_t[]){6}, shift);
    tm_initializer_f32(&m, "mean", 1, (int64_t[]){6}, mean);
    tm_initializer_f32(&m, "var", 1, (int64_t[]){6}, var);
    tm_node(&m, "ConvTranspose", "up", "x,W", "u", 2, tm_attr_int("group", 2),
            tm_attr_ints("strides", 2, (int64_t[]){2, 2}));
    tm_node(&m, "Add", "bias", "u,B", "ub", 0);
    tm_node(&m, "BatchNormalization", "bn", "ub,scale,shift,mean,var", "y", 0);
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    etrt_ir_graph *g = l.graph;
    if (pass == 0) {
      run_cpu(g, x, reference, 216);
    } else {
      uint32_t folded, scales;
      CHECK_OK(etrt_pass_fold_batchnorm(g, &folded, &scales));
      CHECK_EQ_INT(folded, 1);
      CHECK_EQ_INT(scales, 1);
      CHECK_EQ_INT(count_live(g, "BatchNormalization") + count_live(g, "Add"), 0);
      CHECK_EQ_INT(g->nodes[0].outputs[0], etrt_ir_find_value(g, "y"));
      run_cpu(g, x, folded_out, 216);
      check_same(reference, folded_out, 216, 1e-5);
    }
    unload(&l);
  }
}

/* BN after a Gemm with transB = 1 and a bias; and after a Conv whose output has a
 * second reader (not folded). */
static void test_batchnorm_into_gemm(void) {
  float w[6] = {1, 2, 3, -1, 0.5f, 2}, c[2] = {0.5f, -1};
  float scale[2] = {2, -0.5f}, shift[2] = {1, 0.5f}, mean[2] = {0.1f, 0.2f}, var[2] = {1, 4};
  float x[6] = {1, -2, 0.5f, 3, 0, -1}, reference[4], folded_out[4];
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[2] = {"2", "3"};
    tm_input(&m, "x", 2, dims);
    tm_initializer_f32(&m, "W", 2, (int64_t[]){2, 3}, w);
    tm_initializer_f32(&m, "C", 1, (int64_t[]){2}, c);
    tm_initializer_f32(&m, "scale", 1, (int64_t[]){2}, scale);
    tm_initializer_f32(&m, "shift", 1, (int64_t[]){2}, shift);
    tm_initializer_f32(&m, "mean", 1, (int64_t[]){2}, mean);
    tm_initializer_f32(&m, "var", 1, (int64_t[]){2}, var);
    tm_node(&m, "Gemm", "fc", "x,W,C", "g", 3, tm_attr_int("transB", 1),
            tm_attr_float("alpha", 0.5f), tm_attr_float("beta", 2.0f));
    tm_node(&m, "BatchNormalization", "bn", "g,scale,shift,mean,var", "y", 0);
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    if (pass == 0) {
      run_cpu(l.graph, x, reference, 4);
    } else {
      uint32_t folded, scales;
      CHECK_OK(etrt_pass_fold_batchnorm(l.graph, &folded, &scales));
      CHECK_EQ_INT(folded, 1);
      CHECK_NEAR(etrt_ir_node_attribute_float(&l.graph->nodes[0], "beta", 0), 1.0, 0);
      run_cpu(l.graph, x, folded_out, 4);
      check_same(reference, folded_out, 4, 1e-5);
    }
    unload(&l);
  }

  tm_model m;
  tm_init(&m);
  const char *dims[4] = {"1", "1", "2", "2"};
  tm_input(&m, "x", 4, dims);
  float one[1] = {1};
  tm_initializer_f32(&m, "W", 4, (int64_t[]){1, 1, 1, 1}, one);
  tm_initializer_f32(&m, "s", 1, (int64_t[]){1}, one);
  tm_node(&m, "Conv", "conv", "x,W", "c", 0);
  tm_node(&m, "BatchNormalization", "bn", "c,s,s,s,s", "b", 0);
  tm_node(&m, "Add", "residual", "b,c", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, 13, &l);
  uint32_t folded, scales;
  CHECK_OK(etrt_pass_fold_batchnorm(l.graph, &folded, &scales));
  CHECK_EQ_INT(folded, 0);
  CHECK_EQ_INT(scales, 0); /* the residual Add reads no constant */
  unload(&l);
}

/* PaddlePaddle's learnable affine block after a Conv: Mul by a scalar, Add of a
 * per-channel [C, 1, 1] constant; both fold into the weights and bias, and the output is
 * unchanged. A Mul by a constant of another shape ([1, 1, 2]: along W) is left alone. */
static void test_scale_shift_into_conv(void) {
  float w[4] = {1, -2, 0.5f, 3}, b[2] = {0.25f, -1}, m1[1] = {1.5f}, a2[2] = {0.5f, 2};
  float along_w[2] = {2, 3};
  float x[8] = {1, -2, 0.5f, 3, 0, -1, 2, 4}, reference[8], folded_out[8];
  for (int variant = 0; variant < 2; ++variant)
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      const char *dims[4] = {"1", "2", "2", "2"};
      tm_input(&m, "x", 4, dims);
      tm_initializer_f32(&m, "W", 4, (int64_t[]){2, 2, 1, 1}, w);
      tm_initializer_f32(&m, "B", 1, (int64_t[]){2}, b);
      tm_initializer_f32(&m, "m", 1, (int64_t[]){1}, m1);
      if (variant == 0)
        tm_initializer_f32(&m, "a", 3, (int64_t[]){2, 1, 1}, a2);
      else
        tm_initializer_f32(&m, "a", 3, (int64_t[]){1, 1, 2}, along_w);
      tm_node(&m, "Conv", "conv", "x,W,B", "c", 0);
      tm_node(&m, "Mul", "scale", "m,c", "s", 0);
      tm_node(&m, variant == 0 ? "Add" : "Mul", "shift", "s,a", "y", 0);
      tm_output(&m, "y");
      loaded l;
      load(&m, 13, &l);
      if (pass == 0) {
        run_cpu(l.graph, x, reference, 8);
      } else {
        uint32_t folded, scales;
        CHECK_OK(etrt_pass_fold_batchnorm(l.graph, &folded, &scales));
        CHECK_EQ_INT(folded, 0);
        CHECK_EQ_INT(scales, variant == 0 ? 2 : 1);
        CHECK_EQ_INT(count_live(l.graph, "Mul") + count_live(l.graph, "Add"), variant == 0 ? 0 : 1);
        run_cpu(l.graph, x, folded_out, 8);
        check_same(reference, folded_out, 8, 1e-5);
      }
      unload(&l);
    }
}

/* HardSwish as x * Clip(x + 3, 0, 6) / 6 and as x * HardSigmoid(x) (alpha 1/6) becomes one
 * HardSwish; a Clip to other bounds is left alone. */
static void test_fuse_hardswish(void) {
  float x[6] = {-4, -3, -1, 0.5f, 2.5f, 5}, reference[6], fused_out[6];
  float three[1] = {3}, zero[1] = {0}, six[1] = {6}, five[1] = {5};
  for (int variant = 0; variant < 3; ++variant)
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      const char *dims[2] = {"2", "3"};
      tm_input(&m, "x", 2, dims);
      tm_initializer_f32(&m, "three", 0, NULL, three);
      tm_initializer_f32(&m, "zero", 0, NULL, zero);
      tm_initializer_f32(&m, "six", 0, NULL, six);
      tm_initializer_f32(&m, "five", 0, NULL, five);
      if (variant == 1) {
        tm_node(&m, "HardSigmoid", "hs", "x", "h", 1, tm_attr_float("alpha", 1.0f / 6.0f));
        tm_node(&m, "Mul", "mul", "h,x", "y", 0);
      } else {
        tm_node(&m, "Add", "add", "x,three", "a", 0);
        tm_node(&m, "Clip", "clip", variant == 0 ? "a,zero,six" : "a,zero,five", "c", 0);
        tm_node(&m, "Mul", "mul", "x,c", "p", 0);
        tm_node(&m, "Div", "div", "p,six", "y", 0);
      }
      tm_output(&m, "y");
      loaded l;
      load(&m, 13, &l);
      if (pass == 0) {
        run_cpu(l.graph, x, reference, 6);
      } else {
        uint32_t fused;
        CHECK_OK(etrt_pass_fuse_hardswish(l.graph, &fused));
        CHECK_EQ_INT(fused, variant == 2 ? 0 : 1);
        CHECK_EQ_INT(count_live(l.graph, "HardSwish"), variant == 2 ? 0 : 1);
        CHECK_EQ_INT(count_live(l.graph, "Mul"), variant == 2 ? 1 : 0);
        run_cpu(l.graph, x, fused_out, 6);
        check_same(reference, fused_out, 6, 1e-6);
      }
      unload(&l);
    }
}

static void test_fuse_gemm(void) {
  float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -0.5f, 1};
  float x[4] = {1, 2, -1, 0.5f}, reference[6], fused_out[6];
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[2] = {"2", "2"};
    tm_input(&m, "x", 2, dims);
    tm_initializer_f32(&m, "W", 2, (int64_t[]){2, 3}, w);
    tm_initializer_f32(&m, "b", 2, (int64_t[]){1, 3}, b);
    tm_node(&m, "MatMul", "mm", "x,W", "p", 0);
    tm_node(&m, "Add", "bias", "b,p", "y", 0); /* bias on the left */
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    if (pass == 0) {
      run_cpu(l.graph, x, reference, 6);
    } else {
      uint32_t fused;
      CHECK_OK(etrt_pass_fuse_gemm(l.graph, &fused));
      CHECK_EQ_INT(fused, 1);
      CHECK_EQ_INT(count_live(l.graph, "Gemm"), 1);
      CHECK_EQ_INT(count_live(l.graph, "Add") + count_live(l.graph, "MatMul"), 0);
      run_cpu(l.graph, x, fused_out, 6);
      check_same(reference, fused_out, 6, 1e-6);
    }
    unload(&l);
  }

  /* A 3-D MatMul by a 2-D weight with a bias vector becomes EtrtMatMulBias. */
  float x3[8], ref3[12], out3[12];
  for (int i = 0; i < 8; ++i) x3[i] = 0.5f * (float)i - 1.5f;
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[3] = {"2", "2", "2"};
    tm_input(&m, "x", 3, dims);
    tm_initializer_f32(&m, "W", 2, (int64_t[]){2, 3}, w);
    tm_initializer_f32(&m, "b", 1, (int64_t[]){3}, b);
    tm_node(&m, "MatMul", "mm", "x,W", "p", 0);
    tm_node(&m, "Add", "bias", "b,p", "y", 0);
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    if (pass == 0) {
      run_cpu(l.graph, x3, ref3, 12);
    } else {
      uint32_t fused;
      CHECK_OK(etrt_pass_fuse_gemm(l.graph, &fused));
      CHECK_EQ_INT(fused, 1);
      CHECK_EQ_INT(count_live(l.graph, "EtrtMatMulBias"), 1);
      CHECK_EQ_INT(count_live(l.graph, "Add") + count_live(l.graph, "MatMul"), 0);
      run_cpu(l.graph, x3, out3, 12);
      check_same(ref3, out3, 12, 1e-6);
    }
    unload(&l);
  }

  /* ... but not with a bias shaped [1, n], which EtrtMatMulBias does not take. */
  tm_model m;
  tm_init(&m);
  const char *dims[3] = {"2", "2", "2"};
  tm_input(&m, "x", 3, dims);
  tm_initializer_f32(&m, "W", 2, (int64_t[]){2, 3}, w);
  tm_initializer_f32(&m, "b", 2, (int64_t[]){1, 3}, b);
  tm_node(&m, "MatMul", "mm", "x,W", "p", 0);
  tm_node(&m, "Add", "bias", "p,b", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, 13, &l);
  uint32_t fused;
  CHECK_OK(etrt_pass_fuse_gemm(l.graph, &fused));
  CHECK_EQ_INT(fused, 0);
  unload(&l);
}

/* A linear layer (EtrtMatMulBias) followed by Relu or Gelu becomes one EtrtMatMulBias
 * with that activation, computing what the two nodes did: a Relu and a tanh-form Gelu
 * always, an exact Gelu only when the tanh form may stand for it (within 4.8e-4). A
 * product that is also a graph output keeps its activation apart. */
static void test_fuse_gemm_activation(void) {
  float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -0.5f, 1};
  float x[8], reference[12], fused_out[12];
  for (int i = 0; i < 8; ++i) x[i] = 0.4f * (float)i - 1.5f;
  enum { RELU, GELU_EXACT, GELU_EXACT_APPROXIMATED, GELU_TANH, RELU_OF_OUTPUT, CASES };
  for (int c = 0; c < CASES; ++c) {
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      const char *dims[3] = {"2", "2", "2"};
      tm_input(&m, "x", 3, dims);
      tm_initializer_f32(&m, "W", 2, (int64_t[]){2, 3}, w);
      tm_initializer_f32(&m, "b", 1, (int64_t[]){3}, b);
      tm_node(&m, "MatMul", "mm", "x,W", "p", 0);
      tm_node(&m, "Add", "bias", "p,b", "q", 0);
      if (c == RELU || c == RELU_OF_OUTPUT)
        tm_node(&m, "Relu", "act", "q", "y", 0);
      else if (c == GELU_TANH)
        tm_node(&m, "Gelu", "act", "q", "y", 1, tm_attr_string("approximate", "tanh"));
      else
        tm_node(&m, "Gelu", "act", "q", "y", 0);
      tm_output(&m, "y");
      if (c == RELU_OF_OUTPUT) tm_output(&m, "q");
      loaded l;
      load(&m, 20, &l);
      uint32_t fused;
      CHECK_OK(etrt_pass_fuse_gemm(l.graph, &fused));
      CHECK_EQ_INT(fused, 1);
      if (pass == 0) {
        if (c != RELU_OF_OUTPUT) run_cpu(l.graph, x, reference, 12);
      } else {
        CHECK_OK(etrt_pass_fuse_gemm_activation(l.graph, c == GELU_EXACT_APPROXIMATED, &fused));
        int expect = c == RELU || c == GELU_EXACT_APPROXIMATED || c == GELU_TANH;
        CHECK_EQ_INT(fused, expect);
        CHECK_EQ_INT(count_live(l.graph, "Relu") + count_live(l.graph, "Gelu"), !expect);
        const char *want = c == RELU ? "relu" : "gelu_tanh";
        for (uint32_t i = 0; expect && i < l.graph->num_nodes; ++i) {
          const etrt_ir_node *node = &l.graph->nodes[i];
          if (node->dead || strcmp(node->op_type, "EtrtMatMulBias") != 0) continue;
          const etrt_attribute *a = etrt_ir_node_attribute(node, "activation");
          CHECK(a != NULL && a->kind == ETRT_ATTRIBUTE_STRING && strcmp(a->s, want) == 0);
        }
        if (c != RELU_OF_OUTPUT) {
          run_cpu(l.graph, x, fused_out, 12);
          check_same(reference, fused_out, 12, c == GELU_EXACT_APPROXIMATED ? 5e-4 : 1e-6);
        }
      }
      unload(&l);
    }
  }
}

/* Conv + Relu, Conv + Add of a shortcut computed after it + Clip, Conv + SiLU (Sigmoid
 * and Mul) become EtrtFusedConv nodes computing what the separate nodes did; the
 * shortcut's Conv, read by the fused node, and a Conv with two readers stay. */
static void test_fuse_conv(void) {
  float w1[144], w2[16], w3[16], w4[32], w5[16], b1[4], b4[8];
  for (int i = 0; i < 144; ++i) w1[i] = (float)((i * 7) % 11) * 0.05f - 0.25f;
  for (int i = 0; i < 16; ++i) {
    w2[i] = (float)((i * 5) % 7) * 0.1f - 0.3f;
    w3[i] = (float)((i * 3) % 5) * 0.2f - 0.4f;
    w5[i] = (float)(i % 4) * 0.1f - 0.15f;
  }
  for (int i = 0; i < 32; ++i) w4[i] = (float)((i * 9) % 13) * 0.05f - 0.3f;
  for (int i = 0; i < 4; ++i) b1[i] = 0.1f * (float)i - 0.2f;
  for (int i = 0; i < 8; ++i) b4[i] = 0.05f * (float)i - 0.1f;
  float lo = 0.0f, hi = 0.75f;
  float x[100], reference[400], fused_out[400];
  for (int i = 0; i < 100; ++i) x[i] = (float)(i % 9) * 0.25f - 1.0f;
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[4] = {"1", "4", "5", "5"};
    tm_input(&m, "x", 4, dims);
    tm_initializer_f32(&m, "W1", 4, (int64_t[]){4, 4, 3, 3}, w1);
    tm_initializer_f32(&m, "B1", 1, (int64_t[]){4}, b1);
    tm_initializer_f32(&m, "W2", 4, (int64_t[]){4, 4, 1, 1}, w2);
    tm_initializer_f32(&m, "W3", 4, (int64_t[]){4, 4, 1, 1}, w3);
    tm_initializer_f32(&m, "W4", 4, (int64_t[]){8, 4, 1, 1}, w4);
    tm_initializer_f32(&m, "B4", 1, (int64_t[]){8}, b4);
    tm_initializer_f32(&m, "W5", 4, (int64_t[]){8, 2, 1, 1}, w5);
    tm_initializer_f32(&m, "lo", 0, NULL, &lo);
    tm_initializer_f32(&m, "hi", 0, NULL, &hi);
    const int64_t pads[4] = {1, 1, 1, 1};
    tm_node(&m, "Conv", "conv1", "x,W1,B1", "c1", 1, tm_attr_ints("pads", 4, pads));
    tm_node(&m, "Relu", "relu", "c1", "r1", 0);
    tm_node(&m, "Conv", "conv2", "r1,W2", "c2", 0);
    tm_node(&m, "Conv", "shortcut", "x,W3", "s", 0);
    tm_node(&m, "Add", "add", "s,c2", "a", 0);
    tm_node(&m, "Clip", "clip", "a,lo,hi", "y1", 0);
    tm_node(&m, "Conv", "conv4", "y1,W4,B4", "c4", 0);
    tm_node(&m, "Sigmoid", "sigmoid", "c4", "g", 0);
    tm_node(&m, "Mul", "silu", "c4,g", "y2", 0);
    /* Two readers that are not SiLU: left alone. */
    tm_node(&m, "Conv", "conv5", "y2,W5", "c5", 1, tm_attr_int("group", 4));
    tm_node(&m, "Relu", "relu5", "c5", "r5", 0);
    tm_node(&m, "Add", "twice", "c5,r5", "y3", 0);
    tm_node(&m, "Concat", "cat", "y2,y3", "y", 1, tm_attr_int("axis", 1));
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    etrt_ir_graph *g = l.graph;
    if (pass == 0) {
      run_cpu(g, x, reference, 400);
    } else {
      uint32_t fused;
      CHECK_OK(etrt_pass_fuse_conv(g, true, &fused));
      CHECK_EQ_INT(fused, 3);
      CHECK_EQ_INT(count_live(g, "EtrtFusedConv"), 3);
      CHECK_EQ_INT(count_live(g, "Conv"), 2);
      CHECK_EQ_INT(count_live(g, "Clip") + count_live(g, "Sigmoid") + count_live(g, "Mul"), 0);
      CHECK_EQ_INT(count_live(g, "Relu"), 1);
      CHECK_EQ_INT(count_live(g, "Add"), 1);
      run_cpu(g, x, fused_out, 400);
      check_same(reference, fused_out, 400, 1e-5);
    }
    unload(&l);
  }
}

/* In a CPU plan, Mul and Add of constant scalars after a fused activation (PaddlePaddle's
 * affine blocks) join the EtrtFusedConv with the same results; a Mul by a tensor, an Add
 * with a second reader's input and a plan that may use a GPU keep them. */
static void test_fuse_conv_affine(void) {
  float w[16], scale = 1.75f, shift = -0.375f, per_channel[4] = {1, 2, 3, 4};
  for (int i = 0; i < 16; ++i) w[i] = (float)((i * 5) % 7) * 0.3f - 0.9f;
  float x[100], reference[300], fused_out[300];
  for (int i = 0; i < 100; ++i) x[i] = (float)(i % 13) * 0.5f - 3.0f;
  for (int pass = 0; pass < 3; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[4] = {"1", "4", "5", "5"};
    tm_input(&m, "x", 4, dims);
    tm_initializer_f32(&m, "W", 4, (int64_t[]){4, 4, 1, 1}, w);
    tm_initializer_f32(&m, "scale", 0, NULL, &scale);
    tm_initializer_f32(&m, "shift", 1, (int64_t[]){1}, &shift);
    tm_initializer_f32(&m, "per_channel", 4, (int64_t[]){1, 4, 1, 1}, per_channel);
    /* HardSwish, scale, shift: all one node */
    tm_node(&m, "Conv", "conv1", "x,W", "c1", 0);
    tm_node(&m, "HardSwish", "hs1", "c1", "h1", 0);
    tm_node(&m, "Mul", "mul1", "scale,h1", "m1", 0);
    tm_node(&m, "Add", "add1", "m1,shift", "y1", 0);
    /* Relu then only an Add; a Mul by a per-channel tensor stays */
    tm_node(&m, "Conv", "conv2", "y1,W", "c2", 0);
    tm_node(&m, "Relu", "relu2", "c2", "r2", 0);
    tm_node(&m, "Add", "add2", "r2,shift", "y2", 0);
    tm_node(&m, "Mul", "mul2", "y2,per_channel", "y3", 0);
    tm_node(&m, "Concat", "cat", "y1,y2,y3", "y", 1, tm_attr_int("axis", 1));
    tm_output(&m, "y");
    loaded l;
    load(&m, 14, &l);
    etrt_ir_graph *g = l.graph;
    uint32_t fused;
    if (pass == 0) {
      run_cpu(g, x, reference, 300);
    } else if (pass == 1) {
      CHECK_OK(etrt_pass_fuse_conv(g, true, &fused));
      CHECK_EQ_INT(fused, 2);
      CHECK_EQ_INT(count_live(g, "EtrtFusedConv"), 2);
      CHECK_EQ_INT(count_live(g, "Add"), 0);
      CHECK_EQ_INT(count_live(g, "Mul"), 1);
      run_cpu(g, x, fused_out, 300);
      check_same(reference, fused_out, 300, 1e-5); /* oneDNN may fuse the multiply-add */
    } else {
      CHECK_OK(etrt_pass_fuse_conv(g, false, &fused)); /* Relu alone */
      CHECK_EQ_INT(fused, 1);
      CHECK_EQ_INT(count_live(g, "Add"), 2);
      CHECK_EQ_INT(count_live(g, "Mul"), 2);
    }
    unload(&l);
  }
}

/* For a plan that may use a GPU: Conv -> Add(residual) -> Relu becomes one
 * EtrtFusedConv in the Relu's place, even though the residual's producer (another
 * Conv) comes after the first Conv; a Conv whose output is also a graph output is
 * left alone. */
static void test_fuse_conv_relu_only(void) {
  float w1[2 * 3 * 3 * 3], b1[3], w2[3 * 2], x[2 * 16], reference[48], fused_out[48];
  for (int i = 0; i < 54; ++i) w1[i] = (float)((i * 7) % 11) * 0.1f - 0.5f;
  for (int i = 0; i < 3; ++i) b1[i] = 0.1f * (float)i - 0.1f;
  for (int i = 0; i < 6; ++i) w2[i] = 0.3f * (float)i - 0.8f;
  for (int i = 0; i < 32; ++i) x[i] = (float)(i % 9) * 0.25f - 1.0f;
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[4] = {"1", "2", "4", "4"};
    tm_input(&m, "x", 4, dims);
    tm_initializer_f32(&m, "W1", 4, (int64_t[]){3, 2, 3, 3}, w1);
    tm_initializer_f32(&m, "B1", 1, (int64_t[]){3}, b1);
    tm_initializer_f32(&m, "W2", 4, (int64_t[]){3, 2, 1, 1}, w2);
    tm_node(&m, "Conv", "main", "x,W1,B1", "c1", 1,
            tm_attr_ints("pads", 4, (int64_t[]){1, 1, 1, 1}));
    tm_node(&m, "Conv", "shortcut", "x,W2", "c2", 0);
    tm_node(&m, "Add", "residual", "c1,c2", "sum", 0);
    tm_node(&m, "Relu", "act", "sum", "y", 0);
    tm_output(&m, "y");
    loaded l;
    load(&m, 13, &l);
    if (pass == 0) {
      run_cpu(l.graph, x, reference, 48);
    } else {
      uint32_t fused;
      CHECK_OK(etrt_pass_fuse_conv(l.graph, false, &fused));
      CHECK_EQ_INT(fused, 1);
      CHECK_EQ_INT(count_live(l.graph, "EtrtFusedConv"), 1);
      CHECK_EQ_INT(count_live(l.graph, "Conv"), 1);
      CHECK_EQ_INT(count_live(l.graph, "Add") + count_live(l.graph, "Relu"), 0);
      const etrt_ir_node *f = &l.graph->nodes[3];
      CHECK(strcmp(f->op_type, "EtrtFusedConv") == 0);
      CHECK_EQ_INT(f->num_inputs, 4);
      CHECK_EQ_INT(f->inputs[3], etrt_ir_find_value(l.graph, "c2"));
      CHECK(strcmp(etrt_ir_node_attribute(f, "activation")->s, "Relu") == 0);
      CHECK_EQ_INT(etrt_ir_node_attribute(f, "pads")->count, 4);
      run_cpu(l.graph, x, fused_out, 48);
      check_same(reference, fused_out, 48, 1e-6);
    }
    unload(&l);
  }

  /* The Conv's output is read twice (Relu and a graph output): nothing to fuse. */
  tm_model m;
  tm_init(&m);
  const char *dims[4] = {"1", "2", "4", "4"};
  tm_input(&m, "x", 4, dims);
  tm_initializer_f32(&m, "W2", 4, (int64_t[]){3, 2, 1, 1}, w2);
  tm_node(&m, "Conv", "conv", "x,W2", "c", 0);
  tm_node(&m, "Relu", "act", "c", "y", 0);
  tm_output(&m, "y");
  tm_output(&m, "c");
  loaded l;
  load(&m, 13, &l);
  uint32_t fused;
  CHECK_OK(etrt_pass_fuse_conv(l.graph, false, &fused));
  CHECK_EQ_INT(fused, 0);
  CHECK_EQ_INT(count_live(l.graph, "Conv"), 1);
  unload(&l);

  /* HardSwish is fused only where no node may land on a GPU. */
  for (int any = 0; any < 2; ++any) {
    tm_init(&m);
    tm_input(&m, "x", 4, dims);
    tm_initializer_f32(&m, "W2", 4, (int64_t[]){3, 2, 1, 1}, w2);
    tm_node(&m, "Conv", "conv", "x,W2", "c", 0);
    tm_node(&m, "HardSwish", "act", "c", "y", 0);
    tm_output(&m, "y");
    load(&m, 14, &l);
    CHECK_OK(etrt_pass_fuse_conv(l.graph, any != 0, &fused));
    CHECK_EQ_INT(fused, (uint32_t)any);
    CHECK_EQ_INT(count_live(l.graph, "HardSwish"), 1 - any);
    unload(&l);
  }
}

/* Both spellings of the exact GELU become one Gelu computing the same values; a chain
 * whose Erf term is read elsewhere too stays as it is. */
static void test_fuse_gelu(void) {
  float x[6] = {-3, -1, -0.25f, 0.5f, 1, 2.5f}, reference[6], fused_out[6];
  float sqrt2 = 1.41421356f, one = 1, half = 0.5f;
  for (int spelling = 0; spelling < 3; ++spelling) {
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      const char *dims[2] = {"2", "3"};
      tm_input(&m, "x", 2, dims);
      tm_initializer_f32(&m, "sqrt2", 1, (int64_t[]){1}, &sqrt2);
      tm_initializer_f32(&m, "one", 1, (int64_t[]){1}, &one);
      tm_initializer_f32(&m, "half", 1, (int64_t[]){1}, &half);
      tm_node(&m, "Div", "div", "x,sqrt2", "d", 0);
      tm_node(&m, "Erf", "erf", "d", "e", 0);
      tm_node(&m, "Add", "add", "one,e", "q", 0);
      if (spelling == 1) {
        tm_node(&m, "Mul", "inner", "half,x", "p", 0);
        tm_node(&m, "Mul", "outer", "p,q", "y", 0);
      } else {
        tm_node(&m, "Mul", "inner", "x,q", "p", 0);
        tm_node(&m, "Mul", "outer", "half,p", "y", 0);
      }
      tm_output(&m, "y");
      if (spelling == 2) tm_output(&m, "q"); /* the Erf term has a second reader */
      loaded l;
      load(&m, 13, &l);
      if (pass == 0) {
        if (spelling < 2) run_cpu(l.graph, x, reference, 6);
      } else {
        uint32_t fused;
        CHECK_OK(etrt_pass_fuse_gelu(l.graph, &fused));
        CHECK_EQ_INT(fused, spelling < 2 ? 1 : 0);
        CHECK_EQ_INT(count_live(l.graph, "Gelu"), spelling < 2 ? 1 : 0);
        CHECK_EQ_INT(count_live(l.graph, "Erf") + count_live(l.graph, "Mul"), spelling < 2 ? 0 : 3);
        if (spelling < 2) {
          run_cpu(l.graph, x, fused_out, 6);
          check_same(reference, fused_out, 6, 1e-6);
        }
      }
      unload(&l);
    }
  }
}

/* Two residual blocks: Add + LayerNormalization become EtrtAddLayerNorm, the second also
 * writing its sum (read again after the normalization) and keeping its epsilon; the
 * result is the unfused graph's. An Add that broadcasts its bias stays apart. */
static void test_fuse_add_layer_norm(void) {
  float x[48], gamma[8], beta[8], reference[48], fused_out[48];
  for (int i = 0; i < 48; ++i) x[i] = (float)((i * 13) % 17) * 0.2f - 1.6f;
  for (int i = 0; i < 8; ++i) {
    gamma[i] = 0.5f + 0.1f * (float)i;
    beta[i] = 0.05f * (float)i - 0.2f;
  }
  for (int variant = 0; variant < 2; ++variant) {
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      const char *dims[3] = {"2", "3", "8"};
      tm_input(&m, "x", 3, dims);
      tm_initializer_f32(&m, "g", 1, (int64_t[]){8}, gamma);
      tm_initializer_f32(&m, "b", 1, (int64_t[]){8}, beta);
      if (variant == 0) {
        tm_node(&m, "Sigmoid", "act1", "x", "t", 0);
        tm_node(&m, "Add", "res1", "x,t", "s1", 0);
        tm_node(&m, "LayerNormalization", "ln1", "s1,g,b", "y1", 0);
        tm_node(&m, "Tanh", "act2", "y1", "u", 0);
        tm_node(&m, "Add", "res2", "u,y1", "s2", 0);
        tm_node(&m, "LayerNormalization", "ln2", "s2,g", "y2", 1, tm_attr_float("epsilon", 0.5f));
        tm_node(&m, "Add", "out", "y2,s2", "y", 0);
      } else {
        tm_node(&m, "Add", "bias", "x,b", "s", 0);
        tm_node(&m, "LayerNormalization", "ln", "s,g", "y", 0);
      }
      tm_output(&m, "y");
      loaded l;
      load(&m, 17, &l);
      if (pass == 0) {
        run_cpu(l.graph, x, reference, 48);
      } else {
        uint32_t fused;
        CHECK_OK(etrt_pass_fuse_add_layer_norm(l.graph, &fused));
        CHECK_EQ_INT(fused, variant == 0 ? 2 : 0);
        CHECK_EQ_INT(count_live(l.graph, "EtrtAddLayerNorm"), variant == 0 ? 2 : 0);
        CHECK_EQ_INT(count_live(l.graph, "LayerNormalization"), variant == 0 ? 0 : 1);
        run_cpu(l.graph, x, fused_out, 48);
        check_same(reference, fused_out, 48, 1e-6);
      }
      unload(&l);
    }
  }
}

/* com.microsoft SkipLayerNormalization with a bias imports as Add(input + bias, skip) and
 * LayerNormalization, which fuse into one EtrtAddLayerNorm computing
 * LayerNorm(input + skip + bias) (reference computed here). */
static void test_fuse_skip_layer_norm(void) {
  float x[48], gamma[8], beta[8], bias[8], out[48];
  for (int i = 0; i < 48; ++i) x[i] = (float)((i * 7) % 19) * 0.15f - 1.3f;
  for (int i = 0; i < 8; ++i) {
    gamma[i] = 1.0f - 0.05f * (float)i;
    beta[i] = 0.1f * (float)i;
    bias[i] = 0.3f - 0.07f * (float)i;
  }
  tm_model m;
  tm_init(&m);
  const char *dims[3] = {"2", "3", "8"};
  tm_input(&m, "x", 3, dims);
  tm_initializer_f32(&m, "g", 1, (int64_t[]){8}, gamma);
  tm_initializer_f32(&m, "be", 1, (int64_t[]){8}, beta);
  tm_initializer_f32(&m, "bi", 1, (int64_t[]){8}, bias);
  tm_node(&m, "Sigmoid", "skip", "x", "s", 0);
  etrt_pb_writer n;
  etrt_pb_writer_init(&n);
  const char *ins[5] = {"x", "s", "g", "be", "bi"};
  for (int i = 0; i < 5; ++i) etrt_pb_write_string_field(&n, 1, ins[i]);
  etrt_pb_write_string_field(&n, 2, "y");
  etrt_pb_write_string_field(&n, 3, "sln");
  etrt_pb_write_string_field(&n, 4, "SkipLayerNormalization");
  etrt_pb_write_string_field(&n, 7, "com.microsoft");
  tm_put(&m.graph, 1, &n);
  tm_output(&m, "y");
  loaded l;
  load(&m, 17, &l);
  uint32_t fused;
  CHECK_OK(etrt_pass_fuse_add_layer_norm(l.graph, &fused));
  CHECK_EQ_INT(fused, 1);
  CHECK_EQ_INT(count_live(l.graph, "LayerNormalization"), 0);
  run_cpu(l.graph, x, out, 48);
  for (int r = 0; r < 6; ++r) {
    double v[8], mean = 0, var = 0;
    for (int i = 0; i < 8; ++i) {
      double xi = x[r * 8 + i];
      v[i] = xi + 1.0 / (1.0 + exp(-xi)) + bias[i];
      mean += v[i] / 8;
    }
    for (int i = 0; i < 8; ++i) var += (v[i] - mean) * (v[i] - mean) / 8;
    for (int i = 0; i < 8; ++i)
      CHECK_NEAR(out[r * 8 + i], (v[i] - mean) / sqrt(var + 1e-12) * gamma[i] + beta[i], 1e-5);
  }
  unload(&l);
}

/* DequantizeLinear -> Conv -> QuantizeLinear with a constant int8 weight (per output
 * channel) and an int32 bias becomes one QLinearConv whose integer result matches the
 * float path within one output step; a bias at another scale keeps the float path. */
static void test_fuse_qdq(void) {
  float x[2 * 3 * 4 * 4], reference[2 * 4 * 4 * 4], fused_out[2 * 4 * 4 * 4];
  for (int i = 0; i < 96; ++i) x[i] = (float)((i * 37) % 23) / 11.0f - 1.0f;
  int8_t w[4 * 3 * 3 * 3];
  for (int i = 0; i < 108; ++i) w[i] = (int8_t)((i * 53) % 61 - 30);
  float xs = 0.02f, ws[4] = {0.01f, 0.02f, 0.005f, 0.03f}, ys = 0.05f;
  uint8_t xzp = 100, yzp = 90;
  int8_t wzp[4] = {0, 0, 0, 0};
  int32_t bias[4] = {100, -200, 3000, 0}, bzp[4] = {0, 0, 0, 0};
  for (int bad = 0; bad < 2; ++bad) {
    float bs[4];
    for (int i = 0; i < 4; ++i) bs[i] = xs * ws[i] * (bad ? 2.0f : 1.0f);
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      const char *dims[4] = {"2", "3", "4", "4"};
      tm_input(&m, "x", 4, dims);
      tm_initializer_f32(&m, "xs", 0, NULL, &xs);
      tm_initializer(&m, "xzp", 2 /* UINT8 */, 0, NULL, &xzp, 1);
      tm_initializer(&m, "wq", 3 /* INT8 */, 4, (int64_t[]){4, 3, 3, 3}, w, sizeof w);
      tm_initializer_f32(&m, "ws", 1, (int64_t[]){4}, ws);
      tm_initializer(&m, "wzp", 3, 1, (int64_t[]){4}, wzp, sizeof wzp);
      tm_initializer(&m, "bq", 6 /* INT32 */, 1, (int64_t[]){4}, bias, sizeof bias);
      tm_initializer_f32(&m, "bs", 1, (int64_t[]){4}, bs);
      tm_initializer(&m, "bzp", 6, 1, (int64_t[]){4}, bzp, sizeof bzp);
      tm_initializer_f32(&m, "ys", 0, NULL, &ys);
      tm_initializer(&m, "yzp", 2, 0, NULL, &yzp, 1);
      int64_t pads[4] = {1, 1, 1, 1};
      tm_node(&m, "QuantizeLinear", "qx", "x,xs,xzp", "xq", 0);
      tm_node(&m, "DequantizeLinear", "dqx", "xq,xs,xzp", "xd", 0);
      tm_node(&m, "DequantizeLinear", "dqw", "wq,ws,wzp", "wd", 1, tm_attr_int("axis", 0));
      tm_node(&m, "DequantizeLinear", "dqb", "bq,bs,bzp", "bd", 1, tm_attr_int("axis", 0));
      tm_node(&m, "Conv", "conv", "xd,wd,bd", "c", 1, tm_attr_ints("pads", 4, pads));
      tm_node(&m, "QuantizeLinear", "qy", "c,ys,yzp", "yq", 0);
      tm_node(&m, "DequantizeLinear", "dqy", "yq,ys,yzp", "y", 0);
      tm_output(&m, "y");
      loaded l;
      load(&m, 21, &l);
      if (pass == 0) {
        run_cpu(l.graph, x, reference, 128);
      } else {
        uint32_t fused;
        CHECK_OK(etrt_pass_fuse_qdq(l.graph, &fused));
        CHECK_EQ_INT(fused, bad ? 0 : 1);
        CHECK_EQ_INT(count_live(l.graph, "QLinearConv"), bad ? 0 : 1);
        CHECK_EQ_INT(count_live(l.graph, "Conv"), bad ? 1 : 0);
        run_cpu(l.graph, x, fused_out, 128);
        /* Float rounding before the requantization may move a value by one step. */
        check_same(reference, fused_out, 128, ys * 1.001);
      }
      unload(&l);
    }
  }
}

/* A Gemm (transB) between the same Q/DQ pairs becomes a QLinearMatMul with the weight
 * transposed once and the bias per column. */
static void test_fuse_qdq_gemm(void) {
  float x[2 * 5] = {-1.0f, 0.5f, 0.25f, 2.0f, -0.75f, 1.5f, -2.0f, 0.1f, 0.3f, 0.9f};
  float reference[2 * 3], fused_out[2 * 3];
  int8_t w[3 * 5] = {10, -20, 30, -40, 50, 5, 15, -25, 35, -45, 60, -60, 7, 0, -7};
  float xs = 0.02f, ws[3] = {0.01f, 0.02f, 0.005f}, ys = 0.01f, bs[3];
  for (int i = 0; i < 3; ++i) bs[i] = xs * ws[i];
  uint8_t xzp = 128, yzp = 120;
  int8_t wzp[3] = {0, 0, 0};
  int32_t bias[3] = {500, -300, 1000};
  for (int pass = 0; pass < 2; ++pass) {
    tm_model m;
    tm_init(&m);
    const char *dims[2] = {"2", "5"};
    tm_input(&m, "x", 2, dims);
    tm_initializer_f32(&m, "xs", 0, NULL, &xs);
    tm_initializer(&m, "xzp", 2 /* UINT8 */, 0, NULL, &xzp, 1);
    tm_initializer(&m, "wq", 3 /* INT8 */, 2, (int64_t[]){3, 5}, w, sizeof w);
    tm_initializer_f32(&m, "ws", 1, (int64_t[]){3}, ws);
    tm_initializer(&m, "wzp", 3, 1, (int64_t[]){3}, wzp, sizeof wzp);
    tm_initializer(&m, "bq", 6 /* INT32 */, 1, (int64_t[]){3}, bias, sizeof bias);
    tm_initializer_f32(&m, "bs", 1, (int64_t[]){3}, bs);
    tm_initializer_f32(&m, "ys", 0, NULL, &ys);
    tm_initializer(&m, "yzp", 2, 0, NULL, &yzp, 1);
    tm_node(&m, "QuantizeLinear", "qx", "x,xs,xzp", "xq", 0);
    tm_node(&m, "DequantizeLinear", "dqx", "xq,xs,xzp", "xd", 0);
    tm_node(&m, "DequantizeLinear", "dqw", "wq,ws,wzp", "wd", 1, tm_attr_int("axis", 0));
    tm_node(&m, "DequantizeLinear", "dqb", "bq,bs", "bd", 1, tm_attr_int("axis", 0));
    tm_node(&m, "Gemm", "fc", "xd,wd,bd", "g", 1, tm_attr_int("transB", 1));
    tm_node(&m, "QuantizeLinear", "qy", "g,ys,yzp", "yq", 0);
    tm_node(&m, "DequantizeLinear", "dqy", "yq,ys,yzp", "y", 0);
    tm_output(&m, "y");
    loaded l;
    load(&m, 21, &l);
    if (pass == 0) {
      run_cpu(l.graph, x, reference, 6);
    } else {
      uint32_t fused;
      CHECK_OK(etrt_pass_fuse_qdq(l.graph, &fused));
      CHECK_EQ_INT(fused, 1);
      CHECK_EQ_INT(count_live(l.graph, "QLinearMatMul"), 1);
      CHECK_EQ_INT(count_live(l.graph, "Gemm"), 0);
      run_cpu(l.graph, x, fused_out, 6);
      check_same(reference, fused_out, 6, ys * 1.001);
    }
    unload(&l);
  }
}

/* Self-attention over x [1, 4, 32] (2 heads of 16) whose Q, K and V come from three
 * projections of one input. Variants: 0 MatMul + Add of a bias each, 1 MatMul alone
 * (both packed into one product read at three offsets); then what keeps them apart:
 * 2 K's projection also a graph output, 3 V's projection reading Relu(x), 4 Q's
 * projection without a bias, 5 K's weight not a constant (a Relu of one). */
static void attention_separate_model(tm_model *m, int variant, const float *w, const float *b) {
  const char *dims[3] = {"1", "4", "32"};
  tm_input(m, "x", 3, dims);
  static const int64_t heads[4] = {1, 4, 2, 16}, merge[3] = {1, 4, 32};
  tm_initializer(m, "heads", ETRT_ONNX_INT64, 1, (int64_t[]){4}, heads, sizeof heads);
  tm_initializer(m, "merge", ETRT_ONNX_INT64, 1, (int64_t[]){3}, merge, sizeof merge);
  tm_initializer_f32(m, "c", 0, NULL, (float[]){0.25f});
  const char *names[3] = {"q", "k", "v"};
  if (variant == 3) tm_node(m, "Relu", "relu", "x", "rx", 0);
  if (variant == 5) tm_node(m, "Relu", "wk_relu", "wk_raw", "wk", 0);
  for (int i = 0; i < 3; ++i) {
    char w_name[8], b_name[8], mm[8], inputs[32], out[8], reshape_in[8], reshape_out[8];
    snprintf(w_name, sizeof w_name, "w%s", names[i]);
    snprintf(b_name, sizeof b_name, "b%s", names[i]);
    tm_initializer_f32(m, variant == 5 && i == 1 ? "wk_raw" : w_name, 2, (int64_t[]){32, 32},
                       w + i * 32 * 32);
    bool bias = variant != 1 && !(variant == 4 && i == 0);
    snprintf(mm, sizeof mm, "%s_mm", names[i]);
    snprintf(inputs, sizeof inputs, "%s,%s", variant == 3 && i == 2 ? "rx" : "x", w_name);
    snprintf(out, sizeof out, "%s", names[i]);
    tm_node(m, "MatMul", mm, inputs, bias ? mm : out, 0);
    if (bias) {
      tm_initializer_f32(m, b_name, 1, (int64_t[]){32}, b + i * 32);
      snprintf(inputs, sizeof inputs, "%s,%s", mm, b_name);
      snprintf(reshape_in, sizeof reshape_in, "%s_add", names[i]);
      tm_node(m, "Add", reshape_in, inputs, out, 0);
    }
    snprintf(inputs, sizeof inputs, "%s,heads", out);
    snprintf(reshape_out, sizeof reshape_out, "%s_h", names[i]);
    tm_node(m, "Reshape", reshape_out, inputs, reshape_out, 0);
  }
  tm_node(m, "Transpose", "qt", "q_h", "qt", 1, tm_attr_ints("perm", 4, (int64_t[]){0, 2, 1, 3}));
  tm_node(m, "Transpose", "kt", "k_h", "kt", 1, tm_attr_ints("perm", 4, (int64_t[]){0, 2, 3, 1}));
  tm_node(m, "Transpose", "vt", "v_h", "vt", 1, tm_attr_ints("perm", 4, (int64_t[]){0, 2, 1, 3}));
  tm_node(m, "MatMul", "scores", "qt,kt", "s", 0);
  tm_node(m, "Mul", "scale", "s,c", "sc", 0);
  tm_node(m, "Softmax", "softmax", "sc", "p", 1, tm_attr_int("axis", -1));
  tm_node(m, "MatMul", "context", "p,vt", "ctx", 0);
  tm_node(m, "Transpose", "ctx_t", "ctx", "ctx_t", 1,
          tm_attr_ints("perm", 4, (int64_t[]){0, 2, 1, 3}));
  tm_node(m, "Reshape", "merge_heads", "ctx_t,merge", "y", 0);
  tm_output(m, "y");
  if (variant == 2) tm_output(m, "k");
}

static void test_pack_qkv(void) {
  static float w[3 * 32 * 32], b[3 * 32], x[4 * 32];
  for (int i = 0; i < 3 * 32 * 32; ++i) w[i] = (float)((i * 37) % 23) * 0.02f - 0.22f;
  for (int i = 0; i < 3 * 32; ++i) b[i] = (float)((i * 11) % 7) * 0.05f - 0.15f;
  for (int i = 0; i < 4 * 32; ++i) x[i] = (float)((i * 13) % 17) * 0.1f - 0.8f;
  for (int variant = 0; variant < 6; ++variant) {
    bool packs = variant <= 1;
    /* Graphs with one input and one output are also run: unfused, then fused. */
    bool runs = variant <= 1 || variant == 3 || variant == 4;
    float reference[4 * 32], fused_out[4 * 32];
    for (int pass = 0; pass < 2; ++pass) {
      tm_model m;
      tm_init(&m);
      attention_separate_model(&m, variant, w, b);
      loaded l;
      load(&m, 17, &l);
      if (pass == 0) {
        if (runs) run_cpu(l.graph, x, reference, 4 * 32);
        unload(&l);
        continue;
      }
      uint32_t gemms, fused, packed, removed;
      CHECK_OK(etrt_pass_fuse_gemm(l.graph, &gemms));
      uint32_t biased = 3 - (variant == 1 ? 3 : variant == 4 ? 1 : 0);
      CHECK_EQ_INT(gemms, biased);
      /* Without the switch nothing is packed. */
      if (variant == 0) {
        loaded apart;
        tm_model m2;
        tm_init(&m2);
        attention_separate_model(&m2, variant, w, b);
        load(&m2, 17, &apart);
        CHECK_OK(etrt_pass_fuse_gemm(apart.graph, &gemms));
        CHECK_OK(etrt_pass_fuse_attention(apart.graph, false, &fused, &packed));
        CHECK_EQ_INT(fused, 1);
        CHECK_EQ_INT(packed, 0);
        CHECK_EQ_INT(count_live(apart.graph, "EtrtMatMulBias"), 3);
        unload(&apart);
      }
      CHECK_OK(etrt_pass_fuse_attention(l.graph, true, &fused, &packed));
      CHECK_EQ_INT(fused, 1);
      CHECK_EQ_INT(packed, packs ? 1 : 0);
      CHECK_EQ_INT(count_live(l.graph, "EtrtAttention"), 1);
      uint32_t products = count_live(l.graph, "MatMul") + count_live(l.graph, "EtrtMatMulBias");
      CHECK_EQ_INT(products, packs ? 1 : 3);
      if (packs) {
        /* One projection writing [1, 4, 96], its weight [32, 96] the three side by side
         * (and its bias the three end to end); the attention reads it at 0, 32 and 64. */
        const etrt_ir_node *proj = NULL, *att = NULL;
        for (uint32_t n = 0; n < l.graph->num_nodes; ++n) {
          const etrt_ir_node *node = &l.graph->nodes[n];
          if (node->dead) continue;
          if (strcmp(node->op_type, "EtrtAttention") == 0) att = node;
          if (strcmp(node->op_type, variant == 0 ? "EtrtMatMulBias" : "MatMul") == 0) proj = node;
        }
        CHECK(proj != NULL && att != NULL);
        if (proj != NULL && att != NULL) {
          const etrt_ir_value *out = &l.graph->values[proj->outputs[0]];
          CHECK_EQ_INT(out->rank, 3);
          CHECK_EQ_INT(out->max[2], 96);
          for (int i = 0; i < 3; ++i) CHECK_EQ_INT(att->inputs[i], proj->outputs[0]);
          const etrt_attribute *offsets = etrt_ir_node_attribute(att, "offsets");
          CHECK(offsets != NULL && offsets->count == 3 && offsets->ints[0] == 0 &&
                offsets->ints[1] == 32 && offsets->ints[2] == 64);
          const etrt_ir_value *wv = &l.graph->values[proj->inputs[1]];
          CHECK(wv->is_constant && wv->rank == 2 && wv->max[0] == 32 && wv->max[1] == 96);
          const float *packed_w = wv->data;
          for (int r = 0; r < 32; ++r)
            for (int c = 0; c < 96; ++c)
              CHECK_NEAR(packed_w[r * 96 + c], w[(c / 32) * 1024 + r * 32 + c % 32], 0);
          if (variant == 0) {
            const etrt_ir_value *bv = &l.graph->values[proj->inputs[2]];
            CHECK(bv->is_constant && bv->rank == 1 && bv->max[0] == 96);
            check_same(bv->data, b, 96, 0);
          }
        }
        /* The three weights the projections read are left to the dead-code pass. */
        CHECK_OK(etrt_pass_eliminate_dead(l.graph, &removed));
      }
      if (runs) {
        run_cpu(l.graph, x, fused_out, 4 * 32);
        check_same(reference, fused_out, 4 * 32, 1e-4);
      }
      unload(&l);
    }
  }
}

static void test_dead_code_and_pipeline(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "2"};
  tm_input(&m, "x", 2, dims);
  tm_node(&m, "Relu", "used", "x", "y", 0);
  tm_node(&m, "Neg", "unused", "x", "z", 0);
  tm_node(&m, "Abs", "unused2", "z", "w", 0);
  tm_output(&m, "y");
  loaded l;
  load_raw(&m, 13, &l, false);
  etrt_pass_stats stats;
  CHECK_OK(etrt_passes_run(l.graph, 0, &stats));
  CHECK_EQ_INT(stats.dead, 2);
  CHECK_EQ_INT(etrt_ir_live_node_count(l.graph), 1);
  unload(&l);
}

int main(void) {
  RUN_TEST(test_identity_and_dropout);
  RUN_TEST(test_fold_constants);
  RUN_TEST(test_batchnorm_into_conv);
  RUN_TEST(test_batchnorm_into_conv_transpose);
  RUN_TEST(test_batchnorm_into_gemm);
  RUN_TEST(test_scale_shift_into_conv);
  RUN_TEST(test_fuse_hardswish);
  RUN_TEST(test_fuse_gemm);
  RUN_TEST(test_fuse_gemm_activation);
  RUN_TEST(test_fuse_conv);
  RUN_TEST(test_fuse_conv_affine);
  RUN_TEST(test_fuse_conv_relu_only);
  RUN_TEST(test_fuse_gelu);
  RUN_TEST(test_fuse_add_layer_norm);
  RUN_TEST(test_fuse_skip_layer_norm);
  RUN_TEST(test_fuse_qdq);
  RUN_TEST(test_fuse_qdq_gemm);
  RUN_TEST(test_pack_qkv);
  RUN_TEST(test_dead_code_and_pipeline);
  return TEST_EXIT();
}
