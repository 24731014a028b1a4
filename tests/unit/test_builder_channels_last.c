/* Channels-last regions in GPU plans (builder/pass_channels_last.c): which nodes take the
 * attribute, where the layout conversions stand and how many there are, the weights
 * permuted, a region not worth converting left alone; a small CNN built for a simulated
 * GPU (whose plan runs the NHWC CPU kernels) against the CPU plan in fp32, fp16 and bf16;
 * and the refusals of the attribute where no NHWC kernel exists, at network building and
 * at plan loading. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/digest.h"
#include "builder/import.h"
#include "builder/lower.h"
#include "builder/passes.h"
#include "built_program_testing.h"
#include "device/sim.h"
#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "engine/plan_format.h"
#include "onnx_build_testing.h"
#include "op_harness.h"
#include "test_util.h"

/* Deterministic weights in (-0.5, 0.5). */
static float *weights(int64_t count, uint32_t seed) {
  float *w = malloc((size_t)count * sizeof *w);
  for (int64_t i = 0; i < count && w != NULL; ++i) {
    seed = seed * 1664525u + 1013904223u;
    w[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  return w;
}

static void initializer(tm_model *m, const char *name, int rank, const int64_t *dims,
                        uint32_t seed) {
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) count *= dims[i];
  float *w = weights(count, seed);
  tm_initializer_f32(m, name, rank, dims, w);
  free(w);
}

/* x[2,3,8,8] -> Conv 3x3 (pads 1) -> Relu -> MaxPool 2x2 -> p [2,8,4,4]
 *   -> Conv 3x3 -> Relu -> Conv 1x1 -> Add p (residual) -> Relu -> Mul by a scalar
 *   -> AveragePool 2x2 -> GlobalAveragePool -> Flatten -> Gemm -> y [2,5] */
static uint8_t *cnn_onnx(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"2", "3", "8", "8"};
  tm_input(&m, "x", 4, dims);
  initializer(&m, "w1", 4, (int64_t[]){8, 3, 3, 3}, 1);
  initializer(&m, "b1", 1, (int64_t[]){8}, 2);
  initializer(&m, "w2", 4, (int64_t[]){8, 8, 3, 3}, 3);
  initializer(&m, "b2", 1, (int64_t[]){8}, 4);
  initializer(&m, "w3", 4, (int64_t[]){8, 8, 1, 1}, 5);
  initializer(&m, "wf", 2, (int64_t[]){8, 5}, 6);
  initializer(&m, "bf", 1, (int64_t[]){5}, 7);
  tm_initializer_f32(&m, "s", 1, (int64_t[]){1}, (float[]){1.5f});
  static const int64_t pads[4] = {1, 1, 1, 1}, k2[2] = {2, 2};
  tm_node(&m, "Conv", "conv1", "x,w1,b1", "c1", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Relu", "relu1", "c1", "r1", 0);
  tm_node(&m, "MaxPool", "pool1", "r1", "p", 2, tm_attr_ints("kernel_shape", 2, k2),
          tm_attr_ints("strides", 2, k2));
  tm_node(&m, "Conv", "conv2", "p,w2,b2", "c2", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Relu", "relu2", "c2", "r2", 0);
  tm_node(&m, "Conv", "conv3", "r2,w3", "c3", 0);
  tm_node(&m, "Add", "add3", "c3,p", "a3", 0);
  tm_node(&m, "Relu", "relu3", "a3", "r3", 0);
  tm_node(&m, "Mul", "scale", "r3,s", "m", 0);
  tm_node(&m, "AveragePool", "pool2", "m", "ap", 2, tm_attr_ints("kernel_shape", 2, k2),
          tm_attr_ints("strides", 2, k2));
  tm_node(&m, "GlobalAveragePool", "gap", "ap", "g", 0);
  tm_node(&m, "Flatten", "flatten", "g", "f", 0);
  tm_node(&m, "Gemm", "fc", "f,wf,bf", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 17, size);
}

/* x[1,3,6,6] -> Conv 3x3 -> y: one convolution between two conversions. */
static uint8_t *single_conv_onnx(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"1", "3", "6", "6"};
  tm_input(&m, "x", 4, dims);
  initializer(&m, "w", 4, (int64_t[]){4, 3, 3, 3}, 9);
  tm_node(&m, "Conv", "conv", "x,w", "c", 0);
  tm_node(&m, "Relu", "relu", "c", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 17, size);
}

/* x[2,3,8,8] -> Conv 3x3 a, Conv 1x1 b (both read x) -> Relu each -> Concat on channels
 *   -> BatchNormalization (not after a convolution: it stays) -> Conv 3x3 -> Split on channels (5,
 * 3): Tanh -> Mul by a per-channel constant [5,1,1]
 *   -> squeeze-excitation (GlobalAveragePool, Sigmoid, Mul of [2,5,4,4] by [2,5,1,1])
 *   -> GlobalMaxPool -> Flatten -> y [2, 5], and ReduceSum of the other part -> r (a scalar) */
static uint8_t *branches_onnx(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"2", "3", "8", "8"};
  tm_input(&m, "x", 4, dims);
  initializer(&m, "wa", 4, (int64_t[]){4, 3, 3, 3}, 21);
  initializer(&m, "wb", 4, (int64_t[]){2, 3, 1, 1}, 22);
  initializer(&m, "wc", 4, (int64_t[]){8, 6, 3, 3}, 23);
  initializer(&m, "pc", 3, (int64_t[]){5, 1, 1}, 24);
  initializer(&m, "bn_scale", 1, (int64_t[]){6}, 25);
  initializer(&m, "bn_b", 1, (int64_t[]){6}, 26);
  initializer(&m, "bn_mean", 1, (int64_t[]){6}, 27);
  tm_initializer_f32(&m, "bn_var", 1, (int64_t[]){6},
                     (float[]){0.5f, 1.0f, 2.0f, 0.25f, 1.5f, 0.75f});
  static const int64_t split[2] = {5, 3};
  tm_initializer(&m, "split", ETRT_ONNX_INT64, 1, (int64_t[]){2}, split, sizeof split);
  static const int64_t pads[4] = {1, 1, 1, 1};
  tm_node(&m, "Conv", "conv_a", "x,wa", "ca", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Relu", "relu_a", "ca", "ra", 0);
  tm_node(&m, "Conv", "conv_b", "x,wb", "cb", 0);
  tm_node(&m, "Sigmoid", "sig_b", "cb", "sb", 0);
  tm_node(&m, "Concat", "cat", "ra,sb", "cat", 1, tm_attr_int("axis", 1));
  tm_node(&m, "BatchNormalization", "norm", "cat,bn_scale,bn_b,bn_mean,bn_var", "nrm", 0);
  tm_node(&m, "Conv", "conv_c", "nrm,wc", "cc", 1, tm_attr_ints("pads", 4, pads));
  tm_node(&m, "Split", "halves", "cc,split", "h0,h1", 1, tm_attr_int("axis", 1));
  tm_node(&m, "Tanh", "tanh", "h0", "t0", 0);
  tm_node(&m, "Mul", "per_channel", "t0,pc", "q", 0);
  tm_node(&m, "GlobalAveragePool", "se_pool", "q", "se", 0);
  tm_node(&m, "Sigmoid", "se_gate", "se", "gate", 0);
  tm_node(&m, "Mul", "se_scale", "q,gate", "z", 0);
  tm_node(&m, "GlobalMaxPool", "gmp", "z", "g", 0);
  tm_node(&m, "Flatten", "flatten", "g", "y", 0);
  tm_node(&m, "ReduceSum", "rest", "h1", "r", 1, tm_attr_int("keepdims", 0));
  tm_output(&m, "y");
  tm_output(&m, "r");
  return tm_finish(&m, 17, size);
}

typedef struct passed {
  uint8_t *bytes;
  etrt_onnx_model *model;
  etrt_ir_graph *graph;
  etrt_pass_channels_last_stats stats;
} passed;

/* The build's graph steps for a GPU target: import, shapes, passes, the GPU fusion, then
 * the channels-last pass and shape inference again over what it wrote. */
static void run_passes(uint8_t *bytes, size_t size, passed *out) {
  memset(out, 0, sizeof *out);
  out->bytes = bytes;
  CHECK_OK(etrt_onnx_model_parse(bytes, size, NULL, &out->model));
  if (out->model != NULL) CHECK_OK(etrt_import_onnx(out->model, &out->graph));
  if (out->graph == NULL) return;
  CHECK_OK(etrt_lower_infer_shapes(out->graph));
  etrt_pass_stats stats;
  CHECK_OK(etrt_passes_run(out->graph, 0, &stats));
  uint32_t fused = 0;
  CHECK_OK(etrt_pass_fuse_conv(out->graph, false, &fused));
  CHECK_OK(etrt_pass_channels_last(out->graph, &out->stats));
  CHECK_OK(etrt_lower_infer_shapes(out->graph));
}

static void release(passed *p) {
  etrt_ir_graph_destroy(p->graph);
  etrt_onnx_model_free(p->model);
  free(p->bytes);
}

static uint32_t live_ops(const etrt_ir_graph *g, const char *op) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < g->num_nodes; ++n)
    count += !g->nodes[n].dead && strcmp(g->nodes[n].op_type, op) == 0;
  return count;
}

static const etrt_ir_node *live_node(const etrt_ir_graph *g, const char *op, uint32_t nth) {
  for (uint32_t n = 0; n < g->num_nodes; ++n)
    if (!g->nodes[n].dead && strcmp(g->nodes[n].op_type, op) == 0 && nth-- == 0)
      return &g->nodes[n];
  etrt_test_fail(__FILE__, __LINE__, "no live %s", op);
  return NULL;
}

static void test_region_and_conversions(void) {
  size_t size;
  uint8_t *bytes = cnn_onnx(&size);
  passed p;
  run_passes(bytes, size, &p);
  const etrt_ir_graph *g = p.graph;
  if (g == NULL) {
    release(&p);
    return;
  }
  /* Three fused convolutions and three pools take the attribute; the Mul joins the region
   * unchanged (its other operand is a scalar). */
  CHECK_EQ_INT(p.stats.regions, 1);
  CHECK_EQ_INT(p.stats.nodes, 6);
  CHECK_EQ_INT(p.stats.members, 7);
  /* One conversion, at the input; the global pool's 1x1 output leaves by a Reshape. */
  CHECK_EQ_INT(p.stats.transposes, 1);
  CHECK_EQ_INT(p.stats.reshapes, 1);
  CHECK_EQ_INT(live_ops(g, "Transpose"), 1);
  CHECK_EQ_INT(live_ops(g, "Reshape"), 1);
  CHECK_EQ_INT(live_ops(g, "EtrtFusedConv"), 3);
  for (uint32_t k = 0; k < 3; ++k) {
    const etrt_ir_node *conv = live_node(g, "EtrtFusedConv", k);
    if (conv == NULL) continue;
    CHECK_EQ_INT(etrt_ir_node_attribute_int(conv, "channels_last", 0), 1);
    const etrt_ir_value *x = &g->values[conv->inputs[0]], *w = &g->values[conv->inputs[1]];
    /* X is NHWC: 8 channels last (or 3 for the first); W is [M, kH, kW, C]. */
    CHECK_EQ_INT(x->max[3], k == 0 ? 3 : 8);
    CHECK_EQ_INT(w->max[3], k == 0 ? 3 : 8);
    CHECK_EQ_INT(w->max[0], 8);
  }
  /* The first convolution's weights, permuted: W'[m][r][s][c] = W[m][c][r][s]. */
  const etrt_ir_node *conv1 = live_node(g, "EtrtFusedConv", 0);
  float *w1 = weights(8 * 3 * 3 * 3, 1);
  if (conv1 != NULL && w1 != NULL) {
    const float *wp = g->values[conv1->inputs[1]].data;
    CHECK(wp[((2 * 3 + 1) * 3 + 0) * 3 + 2] == w1[((2 * 3 + 2) * 3 + 1) * 3 + 0]);
    CHECK(wp[((7 * 3 + 2) * 3 + 2) * 3 + 1] == w1[((7 * 3 + 1) * 3 + 2) * 3 + 2]);
  }
  free(w1);
  const etrt_ir_node *gap = live_node(g, "GlobalAveragePool", 0);
  if (gap != NULL) {
    CHECK_EQ_INT(etrt_ir_node_attribute_int(gap, "channels_last", 0), 1);
    const etrt_ir_value *out = &g->values[gap->outputs[0]];
    CHECK(out->max[1] == 1 && out->max[2] == 1 && out->max[3] == 8);
  }
  /* The values outside keep NCHW: the graph input, and what the Flatten reads. */
  const etrt_ir_node *flatten = live_node(g, "Flatten", 0);
  if (flatten != NULL) CHECK_EQ_INT(g->values[flatten->inputs[0]].max[1], 8);
  CHECK_EQ_INT(g->values[g->inputs[0]].max[1], 3);
  /* Every node reads values written before it. */
  for (uint32_t n = 0; n < g->num_nodes; ++n) {
    const etrt_ir_node *node = &g->nodes[n];
    if (node->dead) continue;
    for (uint32_t i = 0; i < node->num_inputs; ++i)
      if (node->inputs[i] >= 0) CHECK(g->values[node->inputs[i]].producer < (int32_t)n);
  }
  release(&p);
}

static void test_single_conv_stays_nchw(void) {
  size_t size;
  uint8_t *bytes = single_conv_onnx(&size);
  passed p;
  run_passes(bytes, size, &p);
  if (p.graph != NULL) {
    CHECK_EQ_INT(p.stats.regions, 0);
    CHECK_EQ_INT(p.stats.nodes, 0);
    CHECK_EQ_INT(p.stats.transposes, 0);
    CHECK_EQ_INT(live_ops(p.graph, "Transpose"), 0);
    const etrt_ir_node *conv = live_node(p.graph, "EtrtFusedConv", 0);
    if (conv != NULL) CHECK(etrt_ir_node_attribute(conv, "channels_last") == NULL);
  }
  release(&p);
}

/* Progress lines of a build, kept for the checks. */
static char progress_text[8192];

static void progress(const char *line, void *user) {
  (void)user;
  size_t used = strlen(progress_text);
  snprintf(progress_text + used, sizeof progress_text - used, "%s\n", line);
}

/* Builds the model `make` writes for `device`, runs it on the same x [2,3,8,8], and copies
 * output k's first counts[k] floats to outs[k] (num_outputs of them). */
static void run_model(uint8_t *(*make)(size_t *), const char *device, etrt_precision precision,
                      uint32_t num_outputs, const int64_t *counts, float *const *outs) {
  size_t size, pte_size;
  uint8_t *onnx = make(&size), *pte = NULL;
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = device;
  o.precision = precision;
  o.progress = progress;
  progress_text[0] = '\0';
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &pte, &pte_size));
  free(onnx);
  if (pte == NULL) return;
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  float *x = weights(2 * 3 * 8 * 8, 42);
  etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 4, (int64_t[]){2, 3, 8, 8});
  if (l.method != NULL) CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
  if (l.method != NULL) CHECK_OK(etrt_method_execute(l.method));
  for (uint32_t k = 0; k < num_outputs && l.method != NULL; ++k) {
    etrt_tensor_view yv = {0};
    CHECK_OK(etrt_method_get_output(l.method, k, &yv));
    int64_t numel = 1;
    for (int32_t a = 0; a < yv.rank; ++a) numel *= yv.sizes[a];
    CHECK(yv.dtype == ETRT_DTYPE_FLOAT32 && numel == counts[k]);
    if (yv.data != NULL && numel == counts[k])
      memcpy(outs[k], yv.data, (size_t)counts[k] * sizeof(float));
  }
  free(x);
  bp_unload(&l);
}

static void run_cnn(const char *device, etrt_precision precision, float *y) {
  run_model(cnn_onnx, device, precision, 1, (int64_t[]){10}, (float *[]){y});
}

/* The GPU plans (NHWC inside, run by the simulated GPU with the CPU kernels) give the CPU
 * plan's logits (NCHW throughout). */
static void test_cnn_on_sim_matches_cpu(void) {
  float want[10] = {0}, got[10] = {0};
  run_cnn("cpu", ETRT_PRECISION_FP32, want);
  CHECK(strstr(progress_text, "layouts:") == NULL);
  double largest = 0.0;
  for (int k = 0; k < 10; ++k) largest = fmax(largest, fabs(want[k]));
  CHECK(largest > 0.01);
  const struct {
    etrt_precision precision;
    double tolerance;
  } cases[] = {
      {ETRT_PRECISION_FP32, 1e-5}, {ETRT_PRECISION_FP16, 4e-3}, {ETRT_PRECISION_BF16, 3e-2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    memset(got, 0, sizeof got);
    run_cnn("cuda:0", cases[c].precision, got);
    CHECK_STR_CONTAINS(progress_text, "layouts: 6 nodes channels-last");
    CHECK_STR_CONTAINS(progress_text, "1 layout conversions");
    for (int k = 0; k < 10; ++k) CHECK_NEAR(got[k], want[k], cases[c].tolerance * largest);
  }
  /* ETRT_CHANNELS_LAST=0 keeps the GPU plan NCHW (for measuring one against the other). */
  setenv("ETRT_CHANNELS_LAST", "0", 1);
  memset(got, 0, sizeof got);
  run_cnn("cuda:0", ETRT_PRECISION_FP32, got);
  unsetenv("ETRT_CHANNELS_LAST");
  CHECK(strstr(progress_text, "layouts:") == NULL);
  for (int k = 0; k < 10; ++k) CHECK_NEAR(got[k], want[k], 1e-5 * largest);
}

/* Concat and Split join the region with the channel axis moved to 3, a batch norm becomes a
 * Mul and an Add, a per-channel constant
 * is stored permuted, a squeeze-excitation's [N, C, 1, 1] scale stays inside; the Split's
 * second part leaves for a ReduceSum outside (a Transpose), the last pool's output by a
 * Reshape. */
static void test_concat_split_region(void) {
  size_t size;
  uint8_t *bytes = branches_onnx(&size);
  passed p;
  run_passes(bytes, size, &p);
  if (p.graph != NULL) {
    CHECK_EQ_INT(p.stats.regions, 1);
    CHECK_EQ_INT(p.stats.nodes, 5);
    CHECK_EQ_INT(p.stats.members, 13);
    /* The batch norm became a Mul and an Add of [1, 1, 1, 6] constants. */
    CHECK_EQ_INT(live_ops(p.graph, "BatchNormalization"), 0);
    const etrt_ir_node *norm = live_node(p.graph, "Mul", 0);
    if (norm != NULL) {
      CHECK_STR_CONTAINS(norm->name, "norm/mul");
      CHECK_EQ_INT(p.graph->values[norm->inputs[1]].max[3], 6);
    }
    CHECK_EQ_INT(p.stats.transposes, 2);
    CHECK_EQ_INT(p.stats.reshapes, 1);
    const etrt_ir_node *cat = live_node(p.graph, "Concat", 0),
                       *split = live_node(p.graph, "Split", 0);
    if (cat != NULL) CHECK_EQ_INT(etrt_ir_node_attribute_int(cat, "axis", 0), 3);
    if (split != NULL) CHECK_EQ_INT(etrt_ir_node_attribute_int(split, "axis", 0), 3);
    const etrt_ir_node *mul = live_node(p.graph, "Mul", 1);
    if (mul != NULL) {
      const etrt_ir_value *pc = &p.graph->values[mul->inputs[1]];
      CHECK(pc->is_constant && pc->rank == 4 && pc->max[0] == 1 && pc->max[1] == 1 &&
            pc->max[2] == 1 && pc->max[3] == 5);
    }
  }
  release(&p);
  float want_y[10], want_r[1], got_y[10] = {0}, got_r[1] = {0};
  const int64_t counts[2] = {10, 1};
  run_model(branches_onnx, "cpu", ETRT_PRECISION_FP32, 2, counts, (float *[]){want_y, want_r});
  run_model(branches_onnx, "cuda:0", ETRT_PRECISION_FP32, 2, counts, (float *[]){got_y, got_r});
  CHECK_STR_CONTAINS(progress_text, "2 layout conversions");
  for (int k = 0; k < 10; ++k) CHECK_NEAR(got_y[k], want_y[k], 1e-5);
  CHECK_NEAR(got_r[0], want_r[0], 1e-4 * (1.0 + fabs(want_r[0])));
}

/* What `etrt inspect` reads from the GPU plan: the channels-last nodes and the one
 * conversion. */
static void test_inspect_layouts(void) {
  size_t size;
  uint8_t *onnx = cnn_onnx(&size);
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = "cuda:0";
  bp_built b = {0};
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &b.bytes, &b.size));
  free(onnx);
  bp_parse(&b);
  etrt_pte_bytes payload = bp_delegate(&b);
  etrt_engine_types types;
  char names[256];
  CHECK(payload.size > 0 && etrt_engine_plan_types(payload.data, payload.size, &types));
  CHECK(payload.size > 0 &&
        etrt_engine_plan_channels_last(payload.data, payload.size, names, sizeof names));
  if (payload.size > 0) {
    CHECK_EQ_INT(types.channels_last_nodes, 6);
    CHECK_EQ_INT(types.layout_conversions, 1);
    CHECK_STR_CONTAINS(names, "conv1, pool1, ");
    CHECK_STR_CONTAINS(names, "gap");
    /* Too small a buffer is cut with an ellipsis. */
    char cut[12];
    CHECK(etrt_engine_plan_channels_last(payload.data, payload.size, cut, sizeof cut));
    CHECK(strcmp(cut, "conv1, p...") == 0);
  }
  bp_drop(&b);
}

/* A network holding Conv [1,6,6,3] x [4,3,3,3] with channels_last = `value` on an op of
 * type `op` (Conv, or another given that name). */
static etrt_status conv_network(const char *op, int64_t value, etrt_network **out) {
  etrt_network *n = NULL;
  ETRT_RETURN_IF_ERROR(etrt_network_create(&n));
  *out = n;
  int32_t x, w, y;
  float *wd = weights(4 * 3 * 3 * 3, 3);
  etrt_status s = etrt_network_add_input(n, "x", ETRT_DTYPE_FLOAT32, 4, (int64_t[]){1, 6, 6, 3},
                                         (int64_t[]){1, 6, 6, 3}, &x);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(n, "w", ETRT_DTYPE_FLOAT32, 4, (int64_t[]){4, 3, 3, 3}, wd, &w);
  free(wd);
  etrt_attribute a = {.name = "channels_last", .kind = ETRT_ATTRIBUTE_INT, .i = value};
  if (s == ETRT_OK) s = etrt_network_add_op(n, op, "n1", 2, (int32_t[]){x, w}, 1, &y, 1, &a);
  if (s == ETRT_OK) s = etrt_network_mark_output(n, y, "y");
  return s;
}

static void test_refusals(void) {
  etrt_network *n = NULL;
  /* An op without NHWC kernels, a value other than 0 or 1. */
  CHECK_FAILS(conv_network("ConvTranspose", 1, &n), ETRT_ERROR_UNSUPPORTED,
              "ConvTranspose node 'n1': attribute channels_last: ConvTranspose has no "
              "channels-last kernels");
  etrt_network_destroy(n);
  CHECK_FAILS(conv_network("Conv", 2, &n), ETRT_ERROR_INVALID_ARGUMENT,
              "Conv node 'n1': attribute channels_last must be the int 0 or 1");
  etrt_network_destroy(n);

  /* Shapes the NHWC kernels do not take. */
  CHECK_OK(etrt_network_create(&n));
  int32_t x, y[2];
  CHECK_OK(etrt_network_add_input(n, "x", ETRT_DTYPE_FLOAT32, 3, (int64_t[]){1, 6, 3},
                                  (int64_t[]){1, 6, 3}, &x));
  etrt_attribute attrs[2] = {
      {.name = "channels_last", .kind = ETRT_ATTRIBUTE_INT, .i = 1},
      {.name = "kernel_shape", .kind = ETRT_ATTRIBUTE_INTS, .count = 1, .ints = (int64_t[]){2}}};
  CHECK_FAILS(etrt_network_add_op(n, "MaxPool", "p3", 1, &x, 1, y, 2, attrs),
              ETRT_ERROR_INVALID_ARGUMENT, "channels_last takes a 4-D X ([N, H, W, C])");
  int32_t x4;
  CHECK_OK(etrt_network_add_input(n, "x4", ETRT_DTYPE_FLOAT32, 4, (int64_t[]){1, 6, 6, 3},
                                  (int64_t[]){1, 6, 6, 3}, &x4));
  attrs[1].count = 2;
  attrs[1].ints = (int64_t[]){2, 2};
  CHECK_FAILS(etrt_network_add_op(n, "MaxPool", "p2", 1, &x4, 2, y, 2, attrs),
              ETRT_ERROR_INVALID_ARGUMENT, "channels_last takes one output (no Indices)");
  /* The NHWC shapes: [1,6,6,3] pooled 2x2 is [1,5,5,3]. */
  CHECK_OK(etrt_network_add_op(n, "MaxPool", "p1", 1, &x4, 1, y, 2, attrs));
  etrt_dtype dtype;
  int32_t rank;
  int64_t lo[ETRT_MAX_RANK], hi[ETRT_MAX_RANK];
  CHECK_OK(etrt_network_value_info(n, y[0], &dtype, &rank, lo, hi));
  CHECK(rank == 4 && hi[0] == 1 && hi[1] == 5 && hi[2] == 5 && hi[3] == 3);
  etrt_network_destroy(n);
}

/* A plan whose Conv carries the attribute, its op type then changed in the bytes to one
 * without NHWC kernels (same length): loading refuses it naming the node. */
static void test_plan_with_attribute_on_other_op_refused(void) {
  etrt_network *n = NULL;
  CHECK_OK(conv_network("Conv", 1, &n));
  uint8_t *plan = NULL;
  size_t size = 0;
  etrt_plan_options options = {.device = {ETRT_DEVICE_CUDA, 0}};
  CHECK_OK(etrt_plan_build(n, &options, &plan, &size));
  etrt_network_destroy(n);
  if (plan == NULL) return;
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_engine_destroy(engine);
  engine = NULL;
  uint32_t found = 0;
  for (size_t i = 0; i + 4 <= size; ++i) {
    if (memcmp(plan + i, "Conv", 4) != 0) continue;
    memcpy(plan + i, "Tile", 4);
    ++found;
  }
  CHECK_EQ_INT(found, 1);
  /* A writer that also makes the digest right again. */
  etrt_sha256(plan + ETRT_PLAN_HEADER_SIZE, size - ETRT_PLAN_HEADER_SIZE, plan + 48);
  CHECK_FAILS(etrt_engine_deserialize(plan, size, &engine), ETRT_ERROR_UNSUPPORTED,
              "Tile node 'n1': attribute channels_last: Tile has no channels-last kernels");
  CHECK(engine == NULL);
  free(plan);
}

/* [A, B, C, D] -> [A, C, D, B] (NCHW to NHWC, KCRS to KRSC). */
static void to_nhwc(const float *src, const int64_t *d, float *dst) {
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          dst[((n * d[2] + h) * d[3] + w) * d[1] + c] = src[((n * d[1] + c) * d[2] + h) * d[3] + w];
}

static oh_value f32_value(const float *data, const int64_t *dims, int kind) {
  oh_value v = {.dtype = ETRT_DTYPE_FLOAT32, .rank = 4, .data = data, .kind = kind};
  memcpy(v.dims, dims, 4 * sizeof *dims);
  return v;
}

/* One node run on the CPU in NCHW and with channels_last = 1 on the same data: the NHWC
 * kernels give the NCHW kernels' output, permuted. */
typedef struct layout_case {
  const char *label, *op;
  int64_t x[4], w[4]; /* w[0] == 0: no weights */
  int bias, residual;
  uint32_t num_attributes;
  etrt_attribute attributes[4];
} layout_case;

static void check_layout_case(const layout_case *c) {
  int64_t xn = c->x[0] * c->x[1] * c->x[2] * c->x[3], wn = c->w[0] * c->w[1] * c->w[2] * c->w[3];
  float *x = weights(xn, 11), *xh = malloc((size_t)xn * sizeof *xh);
  float *w = c->w[0] ? weights(wn, 12) : NULL,
        *wh = c->w[0] ? malloc((size_t)wn * sizeof *wh) : NULL;
  float *b = weights(c->w[0] + 1, 13);
  static float y[1024], yh[1024], want[1024], z[1024], zh[1024];
  oh_output info;
  oh_value in[4], inh[4];
  uint32_t count = 0;
  to_nhwc(x, c->x, xh);
  in[count] = f32_value(x, c->x, OH_INPUT);
  inh[count++] = f32_value(xh, (int64_t[]){c->x[0], c->x[2], c->x[3], c->x[1]}, OH_INPUT);
  if (w != NULL) {
    to_nhwc(w, c->w, wh);
    in[count] = f32_value(w, c->w, OH_CONSTANT);
    inh[count++] = f32_value(wh, (int64_t[]){c->w[0], c->w[2], c->w[3], c->w[1]}, OH_CONSTANT);
  }
  if (c->bias || c->residual) {
    oh_value bv = c->bias ? (oh_value){.dtype = ETRT_DTYPE_FLOAT32,
                                       .rank = 1,
                                       .dims = {c->w[0]},
                                       .data = b,
                                       .kind = OH_CONSTANT}
                          : OH_NONE;
    in[count] = inh[count] = bv;
    ++count;
  }
  etrt_attribute attrs[5];
  memcpy(attrs, c->attributes, c->num_attributes * sizeof *attrs);
  /* The plain run first: its output's shape sizes Z. */
  void *outs[1] = {y};
  if (c->residual) {
    CHECK_OK(oh_run(c->op, count, in, c->num_attributes, attrs, 1, outs, &info));
    int64_t zn = info.dims[0] * info.dims[1] * info.dims[2] * info.dims[3];
    for (int64_t i = 0; i < zn; ++i) z[i] = 0.25f - (float)(i % 7) * 0.1f;
    to_nhwc(z, info.dims, zh);
    in[count] = f32_value(z, info.dims, OH_INPUT);
    inh[count++] = f32_value(
        zh, (int64_t[]){info.dims[0], info.dims[2], info.dims[3], info.dims[1]}, OH_INPUT);
  }
  CHECK_OK(oh_run(c->op, count, in, c->num_attributes, attrs, 1, outs, &info));
  attrs[c->num_attributes] = OH_INT("channels_last", 1);
  outs[0] = yh;
  oh_output infoh;
  CHECK_OK(oh_run(c->op, count, inh, c->num_attributes + 1, attrs, 1, outs, &infoh));
  CHECK(infoh.rank == 4 && infoh.dims[0] == info.dims[0] && infoh.dims[1] == info.dims[2] &&
        infoh.dims[2] == info.dims[3] && infoh.dims[3] == info.dims[1]);
  int64_t yn = info.dims[0] * info.dims[1] * info.dims[2] * info.dims[3];
  to_nhwc(y, info.dims, want);
  double worst = 0.0;
  for (int64_t i = 0; i < yn; ++i) worst = fmax(worst, fabs((double)yh[i] - (double)want[i]));
  if (worst > 1e-5) etrt_test_fail(__FILE__, __LINE__, "%s: off by %g", c->label, worst);
  free(x);
  free(xh);
  free(w);
  free(wh);
  free(b);
}

static void test_nhwc_kernels_match_nchw(void) {
  const layout_case cases[] = {
      {"conv stride 2 pad 1 bias",
       "Conv",
       {2, 3, 7, 7},
       {4, 3, 3, 3},
       1,
       0,
       2,
       {OH_INTS("strides", 2, 2, 2), OH_INTS("pads", 4, 1, 1, 1, 1)}},
      {"conv dilated, no bias",
       "Conv",
       {1, 4, 6, 6},
       {5, 4, 3, 3},
       0,
       0,
       2,
       {OH_INTS("dilations", 2, 2, 2), OH_INTS("pads", 4, 2, 2, 2, 2)}},
      {"conv grouped", "Conv", {1, 4, 5, 5}, {6, 2, 3, 3}, 1, 0, 1, {OH_INT("group", 2)}},
      {"fused conv residual relu",
       "EtrtFusedConv",
       {1, 3, 5, 5},
       {4, 3, 3, 3},
       1,
       1,
       2,
       {OH_INTS("pads", 4, 1, 1, 1, 1), OH_STRING("activation", "Relu")}},
      {"fused conv residual, no bias", "EtrtFusedConv", {2, 3, 4, 4}, {2, 3, 1, 1}, 0, 1, 0, {{0}}},
      {"max pool",
       "MaxPool",
       {2, 3, 9, 9},
       {0},
       0,
       0,
       3,
       {OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("strides", 2, 2, 2),
        OH_INTS("pads", 4, 1, 1, 1, 1)}},
      {"average pool count_include_pad",
       "AveragePool",
       {1, 3, 7, 7},
       {0},
       0,
       0,
       3,
       {OH_INTS("kernel_shape", 2, 2, 2), OH_INTS("pads", 4, 1, 1, 0, 0),
        OH_INT("count_include_pad", 1)}},
      {"average pool ceil",
       "AveragePool",
       {1, 2, 6, 6},
       {0},
       0,
       0,
       3,
       {OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("strides", 2, 2, 2), OH_INT("ceil_mode", 1)}},
      {"global average pool", "GlobalAveragePool", {2, 5, 3, 4}, {0}, 0, 0, 0, {{0}}},
      {"global max pool", "GlobalMaxPool", {2, 5, 3, 4}, {0}, 0, 0, 0, {{0}}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) check_layout_case(&cases[k]);
}

int main(void) {
  RUN_TEST(test_nhwc_kernels_match_nchw);
  RUN_TEST(test_region_and_conversions);
  RUN_TEST(test_single_conv_stays_nchw);
  RUN_TEST(test_refusals);
  RUN_TEST(test_plan_with_attribute_on_other_op_refused);
  RUN_TEST(test_inspect_layouts);
  CHECK_OK(etrt_device_select_sim(1));
  RUN_TEST(test_cnn_on_sim_matches_cpu);
  RUN_TEST(test_concat_split_region);
  CHECK_OK(etrt_device_select_sim(0));
  return TEST_EXIT();
}
