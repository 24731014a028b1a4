/* Control flow in the builder: an If whose condition is known at build time is
 * replaced by the branch it takes (values renamed, outer-scope names resolved, nested
 * Ifs folded too) and the result computes what the branch does; an If on a run-time
 * condition stays, and a branch of it that cannot be built for the plan's shapes fails only
 * when taken; constant work in a Loop body is done at build time; and the refusals name the
 * node: branch outputs of different counts or types, a missing subgraph attribute, subgraphs nested
 * too deep. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builder/import.h"
#include "builder/lower.h"
#include "builder/partition.h"
#include "builder/passes.h"
#include "engine/engine.h"
#include "onnx_build_testing.h"
#include "test_util.h"

static const float X[4] = {-2.0f, -0.5f, 0.5f, 3.0f};

static void bool_initializer(tm_model *m, const char *name, int value) {
  uint8_t v = (uint8_t)value;
  tm_initializer(m, name, ETRT_ONNX_BOOL, 0, NULL, &v, 1);
}

/* A branch with one node `op` reading the outer `x` into `out`. */
static etrt_pb_writer branch(const char *attribute, const char *op, const char *name,
                             const char *out) {
  tm_model b;
  tm_init(&b);
  tm_node(&b, op, name, "x", out, 0);
  tm_output(&b, out);
  return tm_attr_graph(attribute, &b);
}

static void main_graph(tm_model *m) {
  tm_init(m);
  const char *dims[1] = {"4"};
  tm_input(m, "x", 1, dims);
}

/* Imports and runs the passes; returns the status of the passes. */
static etrt_status build_graph(tm_model *m, uint8_t **bytes, etrt_onnx_model **model,
                               etrt_ir_graph **graph) {
  size_t size;
  *bytes = tm_finish(m, 13, &size);
  *graph = NULL;
  etrt_status s = etrt_onnx_model_parse(*bytes, size, NULL, model);
  if (s == ETRT_OK) s = etrt_import_onnx(*model, graph);
  etrt_pass_stats stats;
  if (s == ETRT_OK) s = etrt_passes_run(*graph, 0, &stats);
  return s;
}

static void release(uint8_t *bytes, etrt_onnx_model *model, etrt_ir_graph *graph) {
  etrt_ir_graph_destroy(graph);
  etrt_onnx_model_free(model);
  free(bytes);
}

static uint32_t count_live(const etrt_ir_graph *g, const char *op) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->num_nodes; ++i)
    n += !g->nodes[i].dead && strcmp(g->nodes[i].op_type, op) == 0;
  return n;
}

static int has_live_node(const etrt_ir_graph *g, const char *name) {
  for (uint32_t i = 0; i < g->num_nodes; ++i)
    if (!g->nodes[i].dead && strcmp(g->nodes[i].name, name) == 0) return 1;
  return 0;
}

static etrt_status plan_and_run(const etrt_ir_graph *g, int cond, float *y);

/* Runs a graph of input x[4] and output y[4] as one CPU plan. */
static void run(const etrt_ir_graph *g, float *y) { CHECK_OK(plan_and_run(g, 0, y)); }

static void test_constant_if_inlined(void) {
  tm_model m;
  main_graph(&m);
  bool_initializer(&m, "yes", 1);
  tm_node(&m, "If", "choose", "yes", "y", 2, branch("then_branch", "Neg", "neg", "t"),
          branch("else_branch", "Relu", "relu", "e"));
  tm_output(&m, "y");
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(build_graph(&m, &bytes, &model, &g));
  if (g != NULL) {
    CHECK_EQ_INT(count_live(g, "If"), 0);
    CHECK_EQ_INT(count_live(g, "Relu"), 0);
    /* The branch's node, renamed after the If, reads the outer x. */
    CHECK(has_live_node(g, "choose/neg"));
    float y[4] = {0};
    run(g, y);
    for (int i = 0; i < 4; ++i) CHECK(y[i] == -X[i]);
  }
  release(bytes, model, g);
}

static void test_nested_if_folded(void) {
  /* then: an inner If on an outer constant (two scopes up), whose else branch reads x
   * two scopes up too. */
  tm_model inner_then, outer_then;
  tm_init(&inner_then);
  tm_init(&outer_then);
  tm_node(&outer_then, "If", "inner", "no", "inner_y", 2, branch("then_branch", "Neg", "neg", "n"),
          branch("else_branch", "Sigmoid", "sig", "s"));
  tm_output(&outer_then, "inner_y");
  etrt_pb_writer_release(&inner_then.graph);
  tm_model m;
  main_graph(&m);
  bool_initializer(&m, "yes", 1);
  bool_initializer(&m, "no", 0);
  tm_node(&m, "If", "outer", "yes", "y", 2, tm_attr_graph("then_branch", &outer_then),
          branch("else_branch", "Relu", "relu", "e"));
  tm_output(&m, "y");
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(build_graph(&m, &bytes, &model, &g));
  if (g != NULL) {
    CHECK_EQ_INT(count_live(g, "If"), 0);
    CHECK_EQ_INT(count_live(g, "Neg") + count_live(g, "Relu"), 0);
    CHECK(has_live_node(g, "outer/inner/sig"));
    float y[4] = {0};
    run(g, y);
    for (int i = 0; i < 4; ++i) CHECK(fabsf(y[i] - 1.0f / (1.0f + expf(-X[i]))) < 1e-6f);
  }
  release(bytes, model, g);
}

static void test_shape_condition_folded(void) {
  /* size(x) == 4 is known once shapes are: the If goes before the plan is built. */
  tm_model m;
  main_graph(&m);
  int64_t four = 4;
  tm_initializer(&m, "four", ETRT_ONNX_INT64, 0, NULL, &four, sizeof four);
  tm_node(&m, "Size", "size", "x", "n", 0);
  tm_node(&m, "Equal", "is4", "n,four", "c", 0);
  tm_node(&m, "If", "by_shape", "c", "y", 2, branch("then_branch", "Relu", "relu", "t"),
          branch("else_branch", "Neg", "neg", "e"));
  tm_output(&m, "y");
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(build_graph(&m, &bytes, &model, &g));
  if (g != NULL) {
    CHECK_EQ_INT(count_live(g, "If"), 0);
    CHECK(has_live_node(g, "by_shape/relu"));
  }
  release(bytes, model, g);
}

static void test_runtime_if_kept(void) {
  tm_model m;
  main_graph(&m);
  etrt_pb_writer vi = tm_value_info("c", ETRT_ONNX_BOOL, 0, NULL);
  tm_put(&m.graph, 11, &vi);
  tm_node(&m, "If", "at_run", "c", "y", 2, branch("then_branch", "Relu", "relu", "t"),
          branch("else_branch", "Neg", "neg", "e"));
  tm_output(&m, "y");
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(build_graph(&m, &bytes, &model, &g));
  if (g != NULL) {
    CHECK_EQ_INT(count_live(g, "If"), 1);
    /* x is read by the branches: it is the If's captured input, after the condition. */
    for (uint32_t i = 0; i < g->num_nodes; ++i) {
      const etrt_ir_node *n = &g->nodes[i];
      if (n->dead || strcmp(n->op_type, "If") != 0) continue;
      CHECK_EQ_INT(n->num_captures, 1);
      CHECK_EQ_INT(n->num_inputs, 2);
      CHECK(strcmp(g->values[n->inputs[1]].name, "x") == 0);
      CHECK_EQ_INT(n->num_bodies, 2);
    }
  }
  release(bytes, model, g);
}

/* Plans graph g (input x[4], bool c if it has one, output y[4]) for the CPU and runs
 * it with c = cond; returns the first failure (the plan's or the run's). */
static etrt_status plan_and_run(const etrt_ir_graph *g, int cond, float *y) {
  etrt_partition_options options = {.target = {ETRT_DEVICE_CPU, 0}};
  etrt_partitioning *parts = NULL;
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_engine *engine = NULL;
  etrt_exec_context *context = NULL;
  uint8_t c = (uint8_t)cond;
  etrt_plan_options plan_options = {.device = {ETRT_DEVICE_CPU, 0}, .name = "control"};
  etrt_status s = etrt_partition_graph(g, &options, &parts);
  if (s == ETRT_OK)
    s = etrt_lower_partition_plan(g, &parts->parts[0], &plan_options, NULL, &plan, &plan_size);
  if (s == ETRT_OK) s = etrt_engine_deserialize(plan, plan_size, &engine);
  if (s == ETRT_OK) s = etrt_exec_context_create(engine, NULL, &context);
  for (uint32_t i = 0; s == ETRT_OK && i < etrt_engine_io_count(engine); ++i) {
    const char *name = etrt_engine_io_at(engine, i)->name;
    void *at = strcmp(name, "x") == 0 ? (void *)X : strcmp(name, "c") == 0 ? (void *)&c : y;
    s = etrt_exec_context_set_address(context, i, at);
  }
  if (s == ETRT_OK) s = etrt_exec_context_enqueue(context, NULL);
  etrt_exec_context_destroy(context);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_partitioning_destroy(parts);
  return s;
}

/* A branch reshaping the outer x[4] to [3]: it cannot be built for any x. */
static etrt_pb_writer unbuildable_branch(const char *attribute, const char *out) {
  tm_model b;
  tm_init(&b);
  int64_t three = 3;
  tm_initializer(&b, "three", ETRT_ONNX_INT64, 1, (int64_t[]){1}, &three, sizeof three);
  tm_node(&b, "Reshape", "to_three", "x,three", out, 0);
  tm_output(&b, out);
  return tm_attr_graph(attribute, &b);
}

static void test_unbuildable_branch_fails_when_taken(void) {
  /* The else branch cannot be built for x[4] (as an 8 kHz network cannot take a 16 kHz
   * chunk): the plan builds, the then branch runs, and taking the else branch fails
   * with the reason the build found. */
  tm_model m;
  main_graph(&m);
  etrt_pb_writer vi = tm_value_info("c", ETRT_ONNX_BOOL, 0, NULL);
  tm_put(&m.graph, 11, &vi);
  tm_node(&m, "If", "by_rate", "c", "y", 2, branch("then_branch", "Relu", "relu", "t"),
          unbuildable_branch("else_branch", "e"));
  tm_output(&m, "y");
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(build_graph(&m, &bytes, &model, &g));
  if (g != NULL) {
    float y[4] = {0};
    CHECK_OK(plan_and_run(g, 1, y));
    for (int i = 0; i < 4; ++i) CHECK(y[i] == (X[i] > 0 ? X[i] : 0.0f));
    CHECK(plan_and_run(g, 0, y) == ETRT_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(etrt_last_error(), "'by_rate' (If): else_branch");
    CHECK_STR_CONTAINS(etrt_last_error(),
                       "this branch cannot run with the shapes the plan was "
                       "built for");
    CHECK_STR_CONTAINS(etrt_last_error(), "to_three");
  }
  release(bytes, model, g);

  /* Neither branch builds: the plan is refused, naming the If. */
  main_graph(&m);
  vi = tm_value_info("c", ETRT_ONNX_BOOL, 0, NULL);
  tm_put(&m.graph, 11, &vi);
  tm_node(&m, "If", "neither", "c", "y", 2, unbuildable_branch("then_branch", "t"),
          unbuildable_branch("else_branch", "e"));
  tm_output(&m, "y");
  etrt_status s = build_graph(&m, &bytes, &model, &g);
  if (s == ETRT_OK) {
    float y[4] = {0};
    s = plan_and_run(g, 1, y);
  }
  CHECK(s != ETRT_OK);
  CHECK_STR_CONTAINS(etrt_last_error(), "If 'neither'");
  CHECK_STR_CONTAINS(etrt_last_error(), "to_three");
  release(bytes, model, g);
}

static void test_body_constants_folded(void) {
  /* The body adds k = 1 + w (w from the enclosing graph) to the carried value: k is
   * worked out when the plan is built, once, not at every iteration. */
  tm_model body, m;
  tm_init(&body);
  tm_input(&body, "i", -1, NULL);
  tm_input(&body, "c", -1, NULL);
  tm_input(&body, "h", -1, NULL);
  float one[4] = {1, 1, 1, 1}, w[4] = {0.5f, 1.5f, 2.5f, 3.5f};
  tm_initializer_f32(&body, "one", 1, (int64_t[]){4}, one);
  tm_node(&body, "Identity", "keep", "c", "c_out", 0);
  tm_node(&body, "Add", "k", "one,w", "k", 0);
  tm_node(&body, "Add", "step", "h,k", "h_out", 0);
  tm_output(&body, "c_out");
  tm_output(&body, "h_out");
  main_graph(&m);
  tm_initializer_f32(&m, "w", 1, (int64_t[]){4}, w);
  int64_t trips = 3;
  tm_initializer(&m, "trips", ETRT_ONNX_INT64, 0, NULL, &trips, sizeof trips);
  tm_node(&m, "Loop", "loop", "trips,,x", "y", 1, tm_attr_graph("body", &body));
  tm_output(&m, "y");
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(build_graph(&m, &bytes, &model, &g));
  if (g != NULL) {
    CHECK_EQ_INT(count_live(g, "Loop"), 1);
    for (uint32_t i = 0; i < g->num_nodes; ++i) {
      const etrt_ir_node *n = &g->nodes[i];
      if (n->dead || n->num_bodies != 1) continue;
      CHECK_EQ_INT(n->num_captures, 0); /* w, a constant, was copied in */
      CHECK_EQ_INT(count_live(n->bodies[0], "Add"), 1);
      CHECK(!has_live_node(n->bodies[0], "k"));
    }
    float y[4] = {0};
    run(g, y);
    for (int i = 0; i < 4; ++i) CHECK(fabsf(y[i] - (X[i] + 3 * (1 + w[i]))) < 1e-6f);
  }
  release(bytes, model, g);
}

/* A model whose build fails: the message holds every `want`. */
static void expect_refusal(tm_model *m, const char *want1, const char *want2) {
  uint8_t *bytes;
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  etrt_status s = build_graph(m, &bytes, &model, &g);
  CHECK(s != ETRT_OK);
  CHECK_STR_CONTAINS(etrt_last_error(), want1);
  if (want2 != NULL) CHECK_STR_CONTAINS(etrt_last_error(), want2);
  release(bytes, model, g);
}

static void test_refusals(void) {
  /* Branch outputs of different counts. */
  tm_model m, two;
  main_graph(&m);
  etrt_pb_writer vi = tm_value_info("c", ETRT_ONNX_BOOL, 0, NULL);
  tm_put(&m.graph, 11, &vi);
  tm_init(&two);
  tm_node(&two, "Relu", "r", "x", "a", 0);
  tm_node(&two, "Neg", "n", "x", "b", 0);
  tm_output(&two, "a");
  tm_output(&two, "b");
  tm_node(&m, "If", "uneven", "c", "y", 2, branch("then_branch", "Relu", "relu", "t"),
          tm_attr_graph("else_branch", &two));
  tm_output(&m, "y");
  expect_refusal(&m, "node 'uneven' (If)", "then_branch has 1 outputs and else_branch 2");

  /* Branch outputs of different types. */
  tm_model cast;
  main_graph(&m);
  vi = tm_value_info("c", ETRT_ONNX_BOOL, 0, NULL);
  tm_put(&m.graph, 11, &vi);
  tm_init(&cast);
  tm_node(&cast, "Cast", "to_int", "x", "i", 1, tm_attr_int("to", ETRT_ONNX_INT64));
  tm_output(&cast, "i");
  tm_node(&m, "If", "mixed", "c", "y", 2, branch("then_branch", "Relu", "relu", "t"),
          tm_attr_graph("else_branch", &cast));
  tm_output(&m, "y");
  expect_refusal(&m, "If 'mixed'", "float32 rank 1 in then_branch but int64 rank 1 in else_branch");

  /* A missing subgraph attribute. */
  main_graph(&m);
  vi = tm_value_info("c", ETRT_ONNX_BOOL, 0, NULL);
  tm_put(&m.graph, 11, &vi);
  tm_node(&m, "If", "half", "c", "y", 1, branch("then_branch", "Relu", "relu", "t"));
  tm_output(&m, "y");
  expect_refusal(&m, "node 'half' (If)", "the subgraph attribute 'else_branch' is missing");

  /* A Loop body whose outputs do not match the node's. */
  tm_model body;
  main_graph(&m);
  tm_init(&body);
  tm_node(&body, "Relu", "r", "x", "a", 0);
  tm_output(&body, "a");
  tm_node(&m, "Loop", "short", ",,x", "y", 1, tm_attr_graph("body", &body));
  tm_output(&m, "y");
  expect_refusal(&m, "node 'short' (Loop)", "the body has 0 inputs and 1 outputs");

  /* A Scan declaring more scan inputs than it has (found by fuzzing: the count of
   * loop-carried values went below zero). */
  tm_model scan_body;
  main_graph(&m);
  tm_init(&scan_body);
  const char *one[1] = {"1"};
  tm_input(&scan_body, "s", 1, one);
  tm_node(&scan_body, "Identity", "i", "s", "t", 0);
  tm_output(&scan_body, "t");
  tm_node(&m, "Scan", "greedy", "x", "y", 2, tm_attr_graph("body", &scan_body),
          tm_attr_int("num_scan_inputs", 9));
  tm_output(&m, "y");
  expect_refusal(&m, "Scan 'greedy'", "num_scan_inputs 9");
}

static void test_nesting_limit(void) {
  /* Ten Ifs, each in the then branch of the one before: deeper than the reader takes. */
  tm_model level;
  tm_init(&level);
  tm_node(&level, "Relu", "leaf", "x", "leaf_y", 0);
  tm_output(&level, "leaf_y");
  for (int depth = 0; depth < 10; ++depth) {
    tm_model up;
    tm_init(&up);
    char name[32], out[32];
    snprintf(name, sizeof name, "if%d", depth);
    snprintf(out, sizeof out, "y%d", depth);
    tm_node(&up, "If", name, "yes", out, 2, tm_attr_graph("then_branch", &level),
            branch("else_branch", "Neg", "neg", "e"));
    tm_output(&up, out);
    level = up;
  }
  tm_model m;
  main_graph(&m);
  bool_initializer(&m, "yes", 1);
  tm_node(&m, "If", "top", "yes", "y", 2, tm_attr_graph("then_branch", &level),
          branch("else_branch", "Neg", "neg", "e"));
  tm_output(&m, "y");
  size_t size;
  uint8_t *bytes = tm_finish(&m, 13, &size);
  etrt_onnx_model *model = NULL;
  CHECK(etrt_onnx_model_parse(bytes, size, NULL, &model) == ETRT_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(etrt_last_error(), "subgraphs nest deeper than 8 levels");
  CHECK_STR_CONTAINS(etrt_last_error(), "at byte");
  etrt_onnx_model_free(model);
  free(bytes);
}

int main(void) {
  test_constant_if_inlined();
  test_nested_if_folded();
  test_shape_condition_folded();
  test_runtime_if_kept();
  test_unbuildable_branch_fails_when_taken();
  test_body_constants_folded();
  test_refusals();
  test_nesting_limit();
  TEST_EXIT();
}
