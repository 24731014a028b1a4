/* The CPU executor's two kernel paths for convolutions and matrix products: plans
 * built in code run once with oneDNN (where the build has it) and once with
 * ETRT_CPU_KERNELS=etrt, and must agree; oneDNN must take the nodes it is meant to,
 * and a run at a shape other than the plan's largest falls back to etrt's kernels.
 * EtrtFusedConv's refusals are checked here too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cpu_onednn.h"
#include "engine/engine.h"
#include "etrt/network.h"
#include "test_util.h"

typedef struct plan_case {
  uint8_t *plan;
  size_t size;
  int64_t x_count, y_count;
} plan_case;

static void fill(float *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

static int32_t constant(etrt_network *net, const char *name, int32_t rank, const int64_t *dims,
                        uint32_t seed) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= dims[i];
  float *data = malloc((size_t)n * sizeof(float));
  fill(data, n, seed);
  int32_t id = -1;
  CHECK_OK(etrt_network_add_constant(net, name, ETRT_DTYPE_FLOAT32, rank, dims, data, &id));
  free(data);
  return id;
}

/* A context of the plan made with the kernels of `kernels` ("etrt", or NULL: the build's
 * default); ETRT_CPU_KERNELS is left set until close_context. */
static void open_context(const plan_case *p, const char *kernels, etrt_engine **engine,
                         etrt_exec_context **ctx) {
  if (kernels != NULL)
    setenv("ETRT_CPU_KERNELS", kernels, 1);
  else
    unsetenv("ETRT_CPU_KERNELS");
  *engine = NULL;
  *ctx = NULL;
  CHECK_OK(etrt_engine_deserialize(p->plan, p->size, engine));
  CHECK_OK(etrt_exec_context_create(*engine, NULL, ctx));
}

static void close_context(etrt_engine *engine, etrt_exec_context *ctx) {
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  unsetenv("ETRT_CPU_KERNELS");
}

/* Runs a plan's context with the kernels of `kernels` on input x of x_dims (and the
 * residual input, if any); returns the output (malloc'd). */
static float *run(const plan_case *p, const char *kernels, const int64_t *x_dims, int32_t x_rank,
                  float *x, float *residual) {
  etrt_engine *engine;
  etrt_exec_context *ctx;
  open_context(p, kernels, &engine, &ctx);
  float *y = calloc((size_t)p->y_count, sizeof(float));
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, x_rank, x_dims));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, x));
  int io = 1;
  if (residual != NULL) CHECK_OK(etrt_exec_context_set_address(ctx, io++, residual));
  CHECK_OK(etrt_exec_context_set_address(ctx, io, y));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  close_context(engine, ctx);
  return y;
}

static double max_difference(const float *a, const float *b, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

/* The nodes oneDNN takes in a plan (0 where the build or machine has none). */
static uint32_t onednn_nodes(const plan_case *p) {
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_engine_deserialize(p->plan, p->size, &engine));
  etrt_cpu_onednn *s = NULL;
  CHECK_OK(etrt_cpu_onednn_create((const etrt_engine *)engine, &s));
  uint32_t count = etrt_cpu_onednn_node_count(s);
  etrt_cpu_onednn_destroy(s);
  etrt_engine_destroy(engine);
  return count;
}

static int onednn_built(void) { return strcmp(etrt_cpu_kernels_default(), "onednn") == 0; }

static void build(etrt_network *net, plan_case *p) {
  CHECK_OK(etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 0}}, &p->plan,
                           &p->size));
  etrt_network_destroy(net);
}

/* Both paths on one plan; `expect` nodes taken by oneDNN where built. */
static void compare(const char *what, plan_case *p, const int64_t *x_dims, int32_t x_rank,
                    int with_residual, uint32_t expect) {
  float *x = malloc((size_t)p->x_count * sizeof(float));
  float *z = with_residual ? malloc((size_t)p->y_count * sizeof(float)) : NULL;
  fill(x, p->x_count, 7);
  if (z) fill(z, p->y_count, 11);
  float *a = run(p, NULL, x_dims, x_rank, x, z);
  float *b = run(p, "etrt", x_dims, x_rank, x, z);
  /* Other summation orders: equal to float rounding relative to the output's size. */
  double scale = 1.0;
  for (int64_t i = 0; i < p->y_count; ++i)
    if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);
  double d = max_difference(a, b, p->y_count);
  if (!(d <= 1e-4 * scale))
    fprintf(stderr, "%s: paths differ by %g (largest %g)\n", what, d, scale);
  CHECK(d <= 1e-4 * scale);
  uint32_t taken = onednn_nodes(p);
  if (onednn_built() && taken != expect)
    fprintf(stderr, "%s: oneDNN took %u nodes, expected %u\n", what, taken, expect);
  if (onednn_built()) CHECK_EQ_INT(taken, expect);
  free(x);
  free(z);
  free(a);
  free(b);
  free(p->plan);
}

typedef struct conv_shape {
  const char *what;
  int64_t n, c, h, w, m, k, stride, pad_l, pad_r, dilation, group;
  int bias;
  const char *activation; /* NULL: a plain Conv */
  int residual;
  uint32_t expect;    /* nodes oneDNN takes */
  float scale, shift; /* a folded affine block; 0 and 0: none */
} conv_shape;

static void test_convolutions(void) {
  static const conv_shape shapes[] = {
      {"3x3 pad 1 bias", 1, 16, 12, 12, 32, 3, 1, 1, 1, 1, 1, 1, NULL, 0, 1, 0.0f, 0.0f},
      {"1x1 no bias", 2, 24, 7, 9, 8, 1, 1, 0, 0, 1, 1, 0, NULL, 0, 1, 0.0f, 0.0f},
      {"7x7 stride 2 asymmetric pads", 1, 3, 23, 23, 16, 7, 2, 3, 2, 1, 1, 1, NULL, 0, 1, 0.0f,
       0.0f},
      {"3x3 dilated 2", 1, 8, 15, 15, 8, 3, 1, 2, 2, 2, 1, 1, NULL, 0, 1, 0.0f, 0.0f},
      {"grouped 4", 1, 16, 10, 10, 32, 3, 1, 1, 1, 1, 4, 1, NULL, 0, 1, 0.0f, 0.0f},
      {"depthwise (etrt's kernel)", 1, 16, 10, 10, 16, 3, 1, 1, 1, 1, 16, 1, NULL, 0, 0, 0.0f,
       0.0f},
      {"fused Relu", 1, 16, 12, 12, 32, 3, 1, 1, 1, 1, 1, 1, "Relu", 0, 1, 0.0f, 0.0f},
      {"fused residual + Relu", 1, 16, 12, 12, 16, 3, 1, 1, 1, 1, 1, 1, "Relu", 1, 1, 0.0f, 0.0f},
      {"fused residual only", 1, 32, 6, 6, 32, 1, 1, 0, 0, 1, 1, 1, "NONE", 1, 1, 0.0f, 0.0f},
      {"fused Clip", 1, 16, 12, 12, 32, 3, 2, 1, 1, 1, 1, 1, "Clip", 0, 1, 0.0f, 0.0f},
      {"fused HardSwish", 1, 16, 12, 12, 32, 1, 1, 0, 0, 1, 1, 1, "HardSwish", 0, 1, 0.0f, 0.0f},
      {"fused HardSwish affine", 1, 16, 12, 12, 32, 1, 1, 0, 0, 1, 1, 1, "HardSwish", 0, 1, 1.5f,
       -0.25f},
      {"fused residual Relu shift", 1, 8, 9, 9, 8, 3, 1, 1, 1, 1, 1, 1, "Relu", 1, 1, 1.0f, 0.5f},
      {"fused Sigmoid", 1, 16, 12, 12, 32, 1, 1, 0, 0, 1, 1, 0, "Sigmoid", 0, 1, 0.0f, 0.0f},
      {"fused Silu grouped", 1, 16, 12, 12, 32, 3, 1, 1, 1, 1, 2, 1, "Silu", 0, 1, 0.0f, 0.0f},
      {"fused depthwise residual Silu", 1, 8, 9, 9, 8, 3, 1, 1, 1, 1, 8, 1, "Silu", 1, 0, 0.0f,
       0.0f},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
    const conv_shape *s = &shapes[i];
    etrt_network *net;
    CHECK_OK(etrt_network_create(&net));
    int64_t x_dims[4] = {s->n, s->c, s->h, s->w};
    int32_t x, y, inputs[4] = {-1, -1, -1, -1};
    CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
    int64_t extent = (s->k - 1) * s->dilation + 1;
    int64_t oh = (s->h + s->pad_l + s->pad_r - extent) / s->stride + 1;
    int64_t ow = (s->w + s->pad_l + s->pad_r - extent) / s->stride + 1;
    int64_t y_dims[4] = {s->n, s->m, oh, ow};
    inputs[0] = x;
    inputs[1] = constant(net, "w", 4, (int64_t[]){s->m, s->c / s->group, s->k, s->k}, 3);
    if (s->bias) inputs[2] = constant(net, "b", 1, (int64_t[]){s->m}, 5);
    if (s->residual)
      CHECK_OK(etrt_network_add_input(net, "z", ETRT_DTYPE_FLOAT32, 4, y_dims, y_dims, &inputs[3]));
    etrt_attribute attributes[] = {
        {.name = "kernel_shape",
         .kind = ETRT_ATTRIBUTE_INTS,
         .count = 2,
         .ints = (int64_t[]){s->k, s->k}},
        {.name = "strides",
         .kind = ETRT_ATTRIBUTE_INTS,
         .count = 2,
         .ints = (int64_t[]){s->stride, s->stride}},
        {.name = "pads",
         .kind = ETRT_ATTRIBUTE_INTS,
         .count = 4,
         .ints = (int64_t[]){s->pad_l, s->pad_l, s->pad_r, s->pad_r}},
        {.name = "dilations",
         .kind = ETRT_ATTRIBUTE_INTS,
         .count = 2,
         .ints = (int64_t[]){s->dilation, s->dilation}},
        {.name = "group", .kind = ETRT_ATTRIBUTE_INT, .i = s->group},
        {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = s->activation},
        {.name = "activation_min", .kind = ETRT_ATTRIBUTE_FLOAT, .f = -0.25f},
        {.name = "activation_max", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 0.5f},
        {.name = "activation_scale", .kind = ETRT_ATTRIBUTE_FLOAT, .f = s->scale},
        {.name = "activation_shift", .kind = ETRT_ATTRIBUTE_FLOAT, .f = s->shift},
    };
    uint32_t attribute_count = s->activation == NULL                  ? 5
                               : s->scale == 0.0f && s->shift == 0.0f ? 8
                                                                      : 10;
    CHECK_OK(etrt_network_add_op(net, s->activation ? "EtrtFusedConv" : "Conv", "conv",
                                 s->residual ? 4 : 3, inputs, 1, &y, attribute_count, attributes));
    CHECK_OK(etrt_network_mark_output(net, y, "y"));
    plan_case p = {.x_count = s->n * s->c * s->h * s->w, .y_count = s->n * s->m * oh * ow};
    build(net, &p);
    printf("  %s\n", s->what);
    compare(s->what, &p, x_dims, 4, s->residual, s->expect);
  }
}

/* One fused convolution node of a chain: `k`x`k`, `group`, activation (NULL: Conv). */
static int32_t chain_conv(etrt_network *net, const char *name, int32_t x, int32_t residual,
                          int64_t c, int64_t m, int64_t k, int64_t group, const char *activation,
                          uint32_t seed) {
  int32_t y, inputs[4] = {x, constant(net, name, 4, (int64_t[]){m, c / group, k, k}, seed),
                          constant(net, "bias", 1, (int64_t[]){m}, seed + 1), residual};
  int64_t pad = k / 2;
  etrt_attribute attributes[] = {
      {.name = "pads",
       .kind = ETRT_ATTRIBUTE_INTS,
       .count = 4,
       .ints = (int64_t[]){pad, pad, pad, pad}},
      {.name = "group", .kind = ETRT_ATTRIBUTE_INT, .i = group},
      {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = activation},
      {.name = "activation_min", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 0.0f},
      {.name = "activation_max", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 6.0f},
  };
  CHECK_OK(etrt_network_add_op(net, activation ? "EtrtFusedConv" : "Conv", name,
                               residual >= 0 ? 4 : 3, inputs, 1, &y, activation ? 5 : 2,
                               attributes));
  return y;
}

/* An inverted-residual block between two convolutions, as MobileNets have them: the
 * values only convolutions touch stay in oneDNN's blocked layout (a residual that is
 * one of them is copied as it is, an NCHW one is reordered), the depthwise convolution
 * runs in oneDNN, and the output is what etrt's kernels compute. */
static void test_convolution_chain(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int64_t x_dims[4] = {1, 16, 10, 10};
  int32_t x;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
  int32_t h0 = chain_conv(net, "stem", x, -1, 16, 16, 3, 1, NULL, 3);
  int32_t h1 = chain_conv(net, "expand", h0, -1, 16, 32, 1, 1, "Relu", 5);
  int32_t h2 = chain_conv(net, "depthwise", h1, -1, 32, 32, 3, 32, "Clip", 7);
  int32_t h3 = chain_conv(net, "project", h2, h0, 32, 16, 1, 1, "NONE", 9);
  int32_t h4 = chain_conv(net, "input_residual", h3, x, 16, 16, 1, 1, "Relu", 11);
  int32_t y = chain_conv(net, "head", h4, -1, 16, 8, 3, 1, NULL, 13);
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case p = {.x_count = 16 * 100, .y_count = 8 * 100};
  build(net, &p);
  compare("inverted residual chain", &p, x_dims, 4, 0, 6);
  if (onednn_built()) {
    /* The same plan again, to count what stayed blocked (the compare freed it). */
    CHECK_OK(etrt_network_create(&net));
    CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
    h0 = chain_conv(net, "stem", x, -1, 16, 16, 3, 1, NULL, 3);
    h1 = chain_conv(net, "expand", h0, -1, 16, 32, 1, 1, "Relu", 5);
    y = chain_conv(net, "head", h1, -1, 32, 8, 3, 1, NULL, 13);
    CHECK_OK(etrt_network_mark_output(net, y, "y"));
    build(net, &p);
    etrt_engine *engine = NULL;
    etrt_cpu_onednn *s = NULL;
    CHECK_OK(etrt_engine_deserialize(p.plan, p.size, &engine));
    CHECK_OK(etrt_cpu_onednn_create((const etrt_engine *)engine, &s));
    uint32_t chained = etrt_cpu_onednn_chained_count(s);
    printf("  values kept blocked between 3 convolutions: %u\n", chained);
    CHECK_EQ_INT(etrt_cpu_onednn_node_count(s), 3);
    CHECK(chained <= 2);
    etrt_cpu_onednn_destroy(s);
    etrt_engine_destroy(engine);
    free(p.plan);
  }
}

/* The same block with channel counts that oneDNN's blocks pad (12 and 36 in blocks of 8
 * or 16): the padded values stay blocked too, in room the arena sizes for their padding,
 * and the output is still what etrt's kernels compute. */
static void test_padded_chain(void) {
  int64_t x_dims[4] = {1, 12, 9, 9};
  plan_case p = {.x_count = 12 * 81, .y_count = 8 * 81};
  for (int again = 0; again < 2; ++again) {
    etrt_network *net;
    int32_t x;
    CHECK_OK(etrt_network_create(&net));
    CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
    int32_t h0 = chain_conv(net, "stem", x, -1, 12, 12, 3, 1, NULL, 3);
    int32_t h1 = chain_conv(net, "expand", h0, -1, 12, 36, 1, 1, "Relu", 5);
    int32_t h2 = chain_conv(net, "depthwise", h1, -1, 36, 36, 3, 36, "Clip", 7);
    int32_t h3 = chain_conv(net, "project", h2, h0, 36, 12, 1, 1, "NONE", 9);
    int32_t y = chain_conv(net, "head", h3, -1, 12, 8, 3, 1, NULL, 13);
    CHECK_OK(etrt_network_mark_output(net, y, "y"));
    build(net, &p);
    if (!again) {
      compare("padded inverted residual chain", &p, x_dims, 4, 0, 5);
      if (!onednn_built()) return;
      continue;
    }
    /* Again, to look at the context (the compare freed the plan). */
    etrt_engine *engine = NULL;
    etrt_cpu_onednn *s = NULL;
    CHECK_OK(etrt_engine_deserialize(p.plan, p.size, &engine));
    CHECK_OK(etrt_cpu_onednn_create((const etrt_engine *)engine, &s));
    uint32_t chained = etrt_cpu_onednn_chained_count(s), padded = 0;
    const etrt_graph *g = &engine->graph;
    for (uint32_t v = 0; v < g->value_count; ++v) {
      size_t own = etrt_cpu_onednn_value_bytes(s, v);
      int64_t planned =
          etrt_graph_nbytes(g->values[v].dtype, g->values[v].rank, g->values[v].max_dims);
      if (own > 0) CHECK(own >= (size_t)planned);
      if (own > (size_t)planned) ++padded;
    }
    printf("  padded chain: %u values kept blocked, %u of them padded\n", chained, padded);
    CHECK(chained >= 2);
    CHECK(padded >= 1);
    CHECK_EQ_INT(etrt_cpu_onednn_value_bytes(s, (uint32_t)x), 0);
    CHECK_EQ_INT(etrt_cpu_onednn_value_bytes(s, (uint32_t)y), 0);
    etrt_cpu_onednn_destroy(s);
    etrt_engine_destroy(engine);
    free(p.plan);
  }
}

/* A YOLO-style block (as C2f has it): a convolution's output split in two along the
 * channels, one half through a convolution and added to itself, the parts concatenated
 * and read by a last convolution. With halves of 16 channels (a whole number of blocks of
 * 8 or 16) the Split, Add and Concat values stay in the convolutions' blocked layout, run
 * by etrt's kernels on the blocked bytes; with parts of 4 and 28 channels they stay NCHW.
 * Either way the output is what etrt's kernels compute on NCHW. */
static void yolo_block(plan_case *p, const int64_t *x_dims, int64_t first_part) {
  etrt_network *net;
  int32_t x, parts[2], sum, joined;
  CHECK_OK(etrt_network_create(&net));
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
  int32_t h = chain_conv(net, "stem", x, -1, 16, 32, 3, 1, "Relu", 3);
  int32_t sizes = -1;
  int64_t split[2] = {first_part, 32 - first_part};
  CHECK_OK(
      etrt_network_add_constant(net, "sizes", ETRT_DTYPE_INT64, 1, (int64_t[]){2}, split, &sizes));
  etrt_attribute axis = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = 1};
  CHECK_OK(
      etrt_network_add_op(net, "Split", "split", 2, (int32_t[]){h, sizes}, 2, parts, 1, &axis));
  int64_t second = 32 - first_part;
  int32_t m = chain_conv(net, "bottleneck", parts[1], -1, second, second, 3, 1, "Relu", 5);
  CHECK_OK(
      etrt_network_add_op(net, "Add", "shortcut", 2, (int32_t[]){parts[1], m}, 1, &sum, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "Concat", "concat", 3, (int32_t[]){parts[0], parts[1], sum}, 1,
                               &joined, 1, &axis));
  int32_t y = chain_conv(net, "fuse", joined, -1, 32 + second, 8, 1, 1, NULL, 7);
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  build(net, p);
}

static void test_layout_free_nodes(void) {
  int64_t x_dims[4] = {1, 16, 10, 10};
  for (int blocked = 1; blocked >= 0; --blocked) {
    int64_t first_part = blocked ? 16 : 4;
    plan_case p = {.x_count = 16 * 100, .y_count = 8 * 100};
    yolo_block(&p, x_dims, first_part);
    compare(blocked ? "split, add and concat of whole blocks" : "split into parts of 4 and 28", &p,
            x_dims, 4, 0, 3);
    if (!onednn_built()) continue;
    yolo_block(&p, x_dims, first_part); /* again, to look at the context */
    etrt_engine *engine = NULL;
    etrt_cpu_onednn *s = NULL;
    CHECK_OK(etrt_engine_deserialize(p.plan, p.size, &engine));
    CHECK_OK(etrt_cpu_onednn_create((const etrt_engine *)engine, &s));
    uint32_t chained = etrt_cpu_onednn_chained_count(s);
    printf("  %s: %u values kept blocked\n", blocked ? "whole blocks" : "parts of 4 and 28",
           chained);
    /* The stem's and the bottleneck's outputs, both halves, the sum and the concatenation;
     * with parts of 4 and 28 none of them (the bottleneck's output feeds an NCHW Add). */
    if (blocked)
      CHECK_EQ_INT(chained, 6);
    else
      CHECK_EQ_INT(chained, 0);
    etrt_cpu_onednn_destroy(s);
    etrt_engine_destroy(engine);
    free(p.plan);
  }
}

/* A squeeze-and-excitation block (MobileNet v3, EfficientNet): a convolution's output
 * pooled to one value per channel, which two 1x1 convolutions and a Sigmoid turn into a
 * per-channel scale that multiplies the output (on either side of the Mul) before the
 * next convolution. With 16 channels the output and the product stay blocked and the pool
 * and the Mul run on the blocked values; with 12 (padded by the blocks) both stay NCHW. */
static void squeeze_block(plan_case *p, const int64_t *x_dims, int64_t c, int scale_first) {
  etrt_network *net;
  int32_t x, pooled, gate, scaled;
  CHECK_OK(etrt_network_create(&net));
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
  int32_t h = chain_conv(net, "expand", x, -1, 8, c, 3, 1, "Relu", 3);
  CHECK_OK(etrt_network_add_op(net, "GlobalAveragePool", "pool", 1, &h, 1, &pooled, 0, NULL));
  int32_t squeezed = chain_conv(net, "squeeze", pooled, -1, c, 8, 1, 1, "Relu", 5);
  int32_t excited = chain_conv(net, "excite", squeezed, -1, 8, c, 1, 1, NULL, 7);
  CHECK_OK(etrt_network_add_op(net, "Sigmoid", "gate", 1, &excited, 1, &gate, 0, NULL));
  int32_t operands[2] = {scale_first ? gate : h, scale_first ? h : gate};
  CHECK_OK(etrt_network_add_op(net, "Mul", "scale", 2, operands, 1, &scaled, 0, NULL));
  int32_t y = chain_conv(net, "project", scaled, -1, c, 8, 1, 1, NULL, 9);
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  build(net, p);
}

static void test_squeeze_excitation(void) {
  int64_t x_dims[4] = {2, 8, 9, 9};
  for (int variant = 0; variant < 3; ++variant) {
    int64_t c = variant < 2 ? 16 : 12;
    int scale_first = variant == 1;
    plan_case p = {.x_count = 2 * 8 * 81, .y_count = 2 * 8 * 81};
    squeeze_block(&p, x_dims, c, scale_first);
    compare(variant == 0   ? "squeeze-and-excitation"
            : variant == 1 ? "squeeze-and-excitation, scale first"
                           : "squeeze-and-excitation on 12 channels",
            &p, x_dims, 4, 0, 4);
    if (!onednn_built()) continue;
    squeeze_block(&p, x_dims, c, scale_first); /* again, to look at the context */
    etrt_engine *engine = NULL;
    etrt_cpu_onednn *s = NULL;
    CHECK_OK(etrt_engine_deserialize(p.plan, p.size, &engine));
    CHECK_OK(etrt_cpu_onednn_create((const etrt_engine *)engine, &s));
    uint32_t chained = etrt_cpu_onednn_chained_count(s);
    printf("  %lld channels: %u values kept blocked\n", (long long)c, chained);
    /* The squeezed value between the two 1x1 convolutions, and with 16 channels the
     * expansion's output and the product too. */
    CHECK_EQ_INT(chained, c == 16 ? 3 : 1);
    etrt_cpu_onednn_destroy(s);
    etrt_engine_destroy(engine);
    free(p.plan);
  }
}

/* ConvTranspose through oneDNN's deconvolution, against etrt's kernel: upsampling 2x2
 * stride 2 with a bias, 3x3 stride 2 with pads and output_padding, two groups dilated;
 * an output_shape whose end pad is negative and 2 output maps stay with etrt's kernel. */
static void test_conv_transpose(void) {
  const struct {
    const char *what;
    int64_t c, m, k, stride, pad, out_pad, group, dilation, out_shape;
    uint32_t expect;
  } cases[] = {
      {"ConvTranspose 2x2 stride 2", 16, 8, 2, 2, 0, 0, 1, 1, 0, 1},
      {"ConvTranspose 3x3 stride 2 pads output_padding", 8, 12, 3, 2, 1, 1, 1, 1, 0, 1},
      {"ConvTranspose grouped dilated", 8, 16, 3, 1, 2, 0, 2, 2, 0, 1},
      {"ConvTranspose output_shape past the natural size", 8, 8, 3, 2, 0, 0, 1, 1, 14, 0},
      {"ConvTranspose to fewer maps than a channel block", 8, 2, 2, 2, 0, 0, 1, 1, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    const int64_t h = 6, w = 7, k = cases[i].k, st = cases[i].stride, pad = cases[i].pad;
    const int64_t span = (k - 1) * cases[i].dilation + 1;
    int64_t oh = st * (h - 1) + span - 2 * pad + cases[i].out_pad;
    int64_t ow = st * (w - 1) + span - 2 * pad + cases[i].out_pad;
    if (cases[i].out_shape) oh = ow = cases[i].out_shape;
    etrt_network *net;
    CHECK_OK(etrt_network_create(&net));
    int64_t x_dims[4] = {2, cases[i].c, h, w};
    int32_t x, y;
    CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
    int32_t inputs[3] = {
        x, constant(net, "w", 4, (int64_t[]){cases[i].c, cases[i].m / cases[i].group, k, k}, 3),
        constant(net, "bias", 1, (int64_t[]){cases[i].m}, 4)};
    etrt_attribute attributes[] = {
        {.name = "strides", .kind = ETRT_ATTRIBUTE_INTS, .count = 2, .ints = (int64_t[]){st, st}},
        {.name = "pads",
         .kind = ETRT_ATTRIBUTE_INTS,
         .count = 4,
         .ints = (int64_t[]){pad, pad, pad, pad}},
        {.name = "group", .kind = ETRT_ATTRIBUTE_INT, .i = cases[i].group},
        {.name = "dilations",
         .kind = ETRT_ATTRIBUTE_INTS,
         .count = 2,
         .ints = (int64_t[]){cases[i].dilation, cases[i].dilation}},
        cases[i].out_shape
            ? (etrt_attribute){.name = "output_shape",
                               .kind = ETRT_ATTRIBUTE_INTS,
                               .count = 2,
                               .ints = (int64_t[]){oh, ow}}
            : (etrt_attribute){.name = "output_padding",
                               .kind = ETRT_ATTRIBUTE_INTS,
                               .count = 2,
                               .ints = (int64_t[]){cases[i].out_pad, cases[i].out_pad}},
    };
    CHECK_OK(etrt_network_add_op(net, "ConvTranspose", "up", 3, inputs, 1, &y, 5, attributes));
    CHECK_OK(etrt_network_mark_output(net, y, "y"));
    plan_case p = {.x_count = 2 * cases[i].c * h * w, .y_count = 2 * cases[i].m * oh * ow};
    build(net, &p);
    printf("  %s\n", cases[i].what);
    compare(cases[i].what, &p, x_dims, 4, 0, cases[i].expect);
  }
}

static void test_matrix_products(void) {
  /* MatMul of a 3-D input by constant weights: the leading axes fold into M. */
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int64_t a_dims[3] = {2, 5, 24};
  int32_t a, y, gemm_out;
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 3, a_dims, a_dims, &a));
  int32_t w = constant(net, "w", 2, (int64_t[]){24, 40}, 3);
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm", 2, (int32_t[]){a, w}, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case p = {.x_count = 2 * 5 * 24, .y_count = 2 * 5 * 40};
  build(net, &p);
  compare("MatMul 3-D", &p, a_dims, 3, 0, 1);

  /* Gemm with transB and a row bias; and one with alpha, which stays on etrt's kernel. */
  for (int alpha = 0; alpha < 2; ++alpha) {
    CHECK_OK(etrt_network_create(&net));
    int64_t x_dims[2] = {7, 33};
    CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 2, x_dims, x_dims, &a));
    int32_t b = constant(net, "b", 2, (int64_t[]){9, 33}, 5);
    int32_t c = constant(net, "c", 2, (int64_t[]){1, 9}, 9);
    etrt_attribute attributes[] = {{.name = "transB", .kind = ETRT_ATTRIBUTE_INT, .i = 1},
                                   {.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 0.5f}};
    CHECK_OK(etrt_network_add_op(net, "Gemm", "gemm", 3, (int32_t[]){a, b, c}, 1, &gemm_out,
                                 alpha ? 2 : 1, attributes));
    CHECK_OK(etrt_network_mark_output(net, gemm_out, "y"));
    plan_case q = {.x_count = 7 * 33, .y_count = 7 * 9};
    build(net, &q);
    compare(alpha ? "Gemm alpha 0.5" : "Gemm transB bias", &q, x_dims, 2, 0, alpha ? 0 : 1);
  }
}

/* The linear layers of transformers (EtrtMatMulBias: a 3-D input, constant weights and
 * bias) run through oneDNN; attention's products of two computed operands with batch axes
 * stay with etrt's GEMM (its order of sums is onnxruntime's), the same bits either way. */
static void test_transformer_products(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int64_t a_dims[3] = {2, 7, 16};
  int32_t a, y;
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 3, a_dims, a_dims, &a));
  int32_t inputs[3] = {a, constant(net, "w", 2, (int64_t[]){16, 24}, 3),
                       constant(net, "bias", 1, (int64_t[]){24}, 5)};
  CHECK_OK(etrt_network_add_op(net, "EtrtMatMulBias", "linear", 3, inputs, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case p = {.x_count = 2 * 7 * 16, .y_count = 2 * 7 * 24};
  build(net, &p);
  compare("EtrtMatMulBias 3-D", &p, a_dims, 3, 0, 1);

  /* N = 1024: rows 4 KiB apart, which the weights' copy pads (the tail of each padded
   * row must never be read as a weight). */
  CHECK_OK(etrt_network_create(&net));
  int64_t wide_dims[3] = {1, 5, 12};
  CHECK_OK(etrt_network_add_input(net, "a", ETRT_DTYPE_FLOAT32, 3, wide_dims, wide_dims, &a));
  int32_t wide[3] = {a, constant(net, "w", 2, (int64_t[]){12, 1024}, 13),
                     constant(net, "bias", 1, (int64_t[]){1024}, 15)};
  CHECK_OK(etrt_network_add_op(net, "EtrtMatMulBias", "linear", 3, wide, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case padded = {.x_count = 5 * 12, .y_count = 5 * 1024};
  build(net, &padded);
  compare("EtrtMatMulBias N 1024", &padded, wide_dims, 3, 0, 1);

  /* [2, 3, 5, 8] x [2, 3, 8, 6]: both operands are inputs. */
  CHECK_OK(etrt_network_create(&net));
  int64_t q_dims[4] = {2, 3, 5, 8}, k_dims[4] = {2, 3, 8, 6};
  int32_t q, k;
  CHECK_OK(etrt_network_add_input(net, "q", ETRT_DTYPE_FLOAT32, 4, q_dims, q_dims, &q));
  CHECK_OK(etrt_network_add_input(net, "k", ETRT_DTYPE_FLOAT32, 4, k_dims, k_dims, &k));
  CHECK_OK(etrt_network_add_op(net, "MatMul", "scores", 2, (int32_t[]){q, k}, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case b = {.x_count = 2 * 3 * 5 * 8, .y_count = 2 * 3 * 5 * 6};
  build(net, &b);
  float *qv = malloc((size_t)b.x_count * sizeof(float)),
        *kv = malloc(2 * 3 * 8 * 6 * sizeof(float));
  fill(qv, b.x_count, 17);
  fill(kv, 2 * 3 * 8 * 6, 19);
  float *with_onednn = run(&b, NULL, q_dims, 4, qv, kv);
  float *with_etrt = run(&b, "etrt", q_dims, 4, qv, kv);
  CHECK(max_difference(with_onednn, with_etrt, b.y_count) == 0);
  CHECK_EQ_INT(onednn_nodes(&b), 0);
  free(qv);
  free(kv);
  free(with_onednn);
  free(with_etrt);
  free(b.plan);
}

/* A plan with a dynamic batch: the primitive is made for the largest batch, and a
 * smaller one runs etrt's kernel; both match the etrt path. */
static void test_smaller_batch_falls_back(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, y;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, (int64_t[]){1, 8, 6, 6},
                                  (int64_t[]){4, 8, 6, 6}, &x));
  int32_t w = constant(net, "w", 4, (int64_t[]){8, 8, 3, 3}, 3);
  etrt_attribute pads = {
      .name = "pads", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = (int64_t[]){1, 1, 1, 1}};
  CHECK_OK(etrt_network_add_op(net, "Conv", "conv", 2, (int32_t[]){x, w}, 1, &y, 1, &pads));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case p = {0};
  build(net, &p);
  for (int64_t batch = 4; batch >= 1; batch -= 3) {
    int64_t dims[4] = {batch, 8, 6, 6};
    p.x_count = p.y_count = batch * 8 * 36;
    float *xv = malloc((size_t)p.x_count * sizeof(float));
    fill(xv, p.x_count, 13);
    float *a = run(&p, NULL, dims, 4, xv, NULL);
    float *b = run(&p, "etrt", dims, 4, xv, NULL);
    CHECK(max_difference(a, b, p.y_count) <= 1e-4);
    free(xv);
    free(a);
    free(b);
  }
  if (onednn_built()) CHECK_EQ_INT(onednn_nodes(&p), 1);
  free(p.plan);
}

/* Arena bytes of a context of the plan with `kernels` (NULL: the build's default). */
static size_t arena_bytes(const plan_case *p, const char *kernels) {
  etrt_engine *engine;
  etrt_exec_context *ctx;
  open_context(p, kernels, &engine, &ctx);
  size_t bytes = etrt_exec_context_arena_size(ctx);
  close_context(engine, ctx);
  return bytes;
}

/* A convolution between NCHW tensors, after a larger intermediate that is dead by then:
 * its blocked source and destination (its workspace) live in the context's arena, in
 * the room that intermediate leaves, so the arena is no larger than with etrt's kernels;
 * a context runs twice with the same result (the blocked operands stay bound). */
static void test_workspace_in_arena(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int64_t x_dims[4] = {1, 16, 24, 24};
  int32_t x, a, b, y;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
  CHECK_OK(etrt_network_add_op(net, "Relu", "relu", 1, &x, 1, &a, 0, NULL));
  etrt_attribute pool[] = {
      {.name = "kernel_shape", .kind = ETRT_ATTRIBUTE_INTS, .count = 2, .ints = (int64_t[]){2, 2}},
      {.name = "strides", .kind = ETRT_ATTRIBUTE_INTS, .count = 2, .ints = (int64_t[]){2, 2}}};
  CHECK_OK(etrt_network_add_op(net, "MaxPool", "pool", 1, &a, 1, &b, 2, pool));
  int32_t w = constant(net, "w", 4, (int64_t[]){16, 16, 3, 3}, 5);
  etrt_attribute pads = {
      .name = "pads", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = (int64_t[]){1, 1, 1, 1}};
  CHECK_OK(etrt_network_add_op(net, "Conv", "conv", 2, (int32_t[]){b, w}, 1, &y, 1, &pads));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  plan_case p = {.x_count = 16 * 24 * 24, .y_count = 16 * 12 * 12};
  build(net, &p);
  etrt_engine *engine = NULL;
  etrt_cpu_onednn *s = NULL;
  CHECK_OK(etrt_engine_deserialize(p.plan, p.size, &engine));
  CHECK_OK(etrt_cpu_onednn_create((const etrt_engine *)engine, &s));
  size_t workspace = 0;
  for (uint32_t n = 0; n < engine->graph.node_count; ++n) {
    size_t bytes = etrt_cpu_onednn_workspace(s, n);
    CHECK(bytes == 0 || etrt_cpu_onednn_takes(s, n));
    workspace += bytes;
  }
  CHECK_EQ_INT(etrt_cpu_onednn_workspace(s, engine->graph.node_count), 0);
  CHECK_EQ_INT(etrt_cpu_onednn_workspace(NULL, 0), 0);
  etrt_cpu_onednn_destroy(s);
  etrt_engine_destroy(engine);
  size_t with_etrt = arena_bytes(&p, "etrt"), with_default = arena_bytes(&p, NULL);
  printf("  oneDNN workspace %zu bytes; arena %zu bytes (etrt's kernels %zu)\n", workspace,
         with_default, with_etrt);
  /* The blocked layouts oneDNN picks on AVX2 and AVX-512 for 16 channels. */
  if (onednn_built()) CHECK(workspace >= 2 * 16 * 12 * 12 * sizeof(float));
  CHECK_EQ_INT(with_default, with_etrt);
  float *xv = malloc((size_t)p.x_count * sizeof(float));
  fill(xv, p.x_count, 17);
  float *expect = run(&p, "etrt", x_dims, 4, xv, NULL);
  etrt_exec_context *ctx;
  open_context(&p, NULL, &engine, &ctx);
  float *yv = calloc((size_t)p.y_count, sizeof(float));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, xv));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, yv));
  for (int round = 0; round < 2; ++round) {
    memset(yv, 0, (size_t)p.y_count * sizeof(float));
    CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
    CHECK(max_difference(yv, expect, p.y_count) <= 1e-4);
  }
  close_context(engine, ctx);
  free(xv);
  free(yv);
  free(expect);
  free(p.plan);
}

static void test_fused_conv_refusals(void) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, z, y;
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, (int64_t[]){1, 4, 5, 5},
                                  (int64_t[]){1, 4, 5, 5}, &x));
  CHECK_OK(etrt_network_add_input(net, "z", ETRT_DTYPE_FLOAT32, 4, (int64_t[]){1, 4, 5, 4},
                                  (int64_t[]){1, 4, 5, 4}, &z));
  int32_t w = constant(net, "w", 4, (int64_t[]){4, 4, 1, 1}, 3);
  etrt_attribute bad = {.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = "Tanh"};
  CHECK_FAILS(etrt_network_add_op(net, "EtrtFusedConv", "f", 2, (int32_t[]){x, w}, 1, &y, 1, &bad),
              ETRT_ERROR_INVALID_ARGUMENT, "activation 'Tanh' is not one of");
  etrt_attribute bounds[] = {{.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = "Clip"},
                             {.name = "activation_min", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 2.0f},
                             {.name = "activation_max", .kind = ETRT_ATTRIBUTE_FLOAT, .f = 1.0f}};
  CHECK_FAILS(
      etrt_network_add_op(net, "EtrtFusedConv", "f", 2, (int32_t[]){x, w}, 1, &y, 3, bounds),
      ETRT_ERROR_INVALID_ARGUMENT, "activation_min 2 is above activation_max 1");
  etrt_attribute affine[] = {{.name = "activation", .kind = ETRT_ATTRIBUTE_STRING, .s = "Relu"},
                             {.name = "activation_scale", .kind = ETRT_ATTRIBUTE_FLOAT, .f = NAN}};
  CHECK_FAILS(
      etrt_network_add_op(net, "EtrtFusedConv", "f", 2, (int32_t[]){x, w}, 1, &y, 2, affine),
      ETRT_ERROR_INVALID_ARGUMENT, "activation_scale nan and activation_shift 0 must be finite");
  CHECK_FAILS(
      etrt_network_add_op(net, "EtrtFusedConv", "f", 4, (int32_t[]){x, w, -1, z}, 1, &y, 1, bounds),
      ETRT_ERROR_INVALID_ARGUMENT, "the residual Z must have the output's type and shape");
  CHECK_FAILS(etrt_network_add_op(net, "Conv", "c", 4, (int32_t[]){x, w, -1, z}, 1, &y, 0, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "takes inputs X, W and an optional B");
  etrt_network_destroy(net);
}

int main(void) {
  RUN_TEST(test_convolutions);
  RUN_TEST(test_convolution_chain);
  RUN_TEST(test_padded_chain);
  RUN_TEST(test_layout_free_nodes);
  RUN_TEST(test_squeeze_excitation);
  RUN_TEST(test_conv_transpose);
  RUN_TEST(test_matrix_products);
  RUN_TEST(test_transformer_products);
  RUN_TEST(test_smaller_batch_falls_back);
  RUN_TEST(test_workspace_in_arena);
  RUN_TEST(test_fused_conv_refusals);
  return TEST_EXIT();
}
