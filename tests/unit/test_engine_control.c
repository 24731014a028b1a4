/* Control flow in the engine, through the network API: an If whose branches are plans
 * runs the branch its condition picks, with its captured input; a GRAPH attribute that
 * is not a plan's bytes is refused by the plan reader naming the field and offset; and
 * bodies nested deeper than the limit are refused naming the node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest.h"
#include "engine/engine.h"
#include "engine/ops/control.h"
#include "engine/plan_format.h"
#include "etrt/network.h"
#include "test_util.h"

static const etrt_plan_options CPU = {.device = {ETRT_DEVICE_CPU, 0}, .name = "control"};

/* A body of inputs cond (bool) and x (float32 [2]) whose output is op(x). */
static uint8_t *leaf_plan(const char *op, size_t *size) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t cond, x, y;
  CHECK_OK(etrt_network_add_input(net, "cond", ETRT_DTYPE_BOOL, 0, NULL, NULL, &cond));
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){2}, (int64_t[]){2}, &x));
  CHECK_OK(etrt_network_add_op(net, op, "leaf", 1, &x, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  uint8_t *plan = NULL;
  CHECK_OK(etrt_plan_build(net, &CPU, &plan, size));
  etrt_network_destroy(net);
  return plan;
}

static etrt_attribute graph_attribute(const char *name, const uint8_t *plan, size_t size) {
  etrt_attribute a = {.name = name, .kind = ETRT_ATTRIBUTE_GRAPH};
  a.tensor.data = (void *)plan;
  a.tensor.dtype = ETRT_DTYPE_UINT8;
  a.tensor.rank = 1;
  a.tensor.sizes[0] = (int64_t)size;
  return a;
}

/* A network cond, x -> If(cond; captures cond, x) with both branches `then` / `other`;
 * the plan of it in *plan (NULL when add_op refused: its status is returned). */
static etrt_status if_plan(const uint8_t *then, size_t then_size, const uint8_t *other,
                           size_t other_size, uint8_t **plan, size_t *size) {
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t cond, x, y;
  CHECK_OK(etrt_network_add_input(net, "cond", ETRT_DTYPE_BOOL, 0, NULL, NULL, &cond));
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){2}, (int64_t[]){2}, &x));
  etrt_attribute attributes[3] = {graph_attribute("then_branch", then, then_size),
                                  graph_attribute("else_branch", other, other_size),
                                  {.name = "_captures", .kind = ETRT_ATTRIBUTE_INT, .i = 2}};
  *plan = NULL;
  etrt_status s =
      etrt_network_add_op(net, "If", "choose", 3, (int32_t[]){cond, cond, x}, 1, &y, 3, attributes);
  if (s == ETRT_OK) {
    CHECK_OK(etrt_network_mark_output(net, y, "y"));
    CHECK_OK(etrt_plan_build(net, &CPU, plan, size));
  }
  etrt_network_destroy(net);
  return s;
}

static void run_if(const uint8_t *plan, size_t size, int cond, const float *x, float *y) {
  etrt_engine *engine = NULL;
  etrt_exec_context *context = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  if (engine != NULL) CHECK_OK(etrt_exec_context_create(engine, NULL, &context));
  if (context == NULL) {
    etrt_engine_destroy(engine);
    return;
  }
  uint8_t c = (uint8_t)cond;
  CHECK_OK(etrt_exec_context_set_address(context, 0, &c));
  CHECK_OK(etrt_exec_context_set_address(context, 1, (void *)x));
  CHECK_OK(etrt_exec_context_set_address(context, 2, y));
  CHECK_OK(etrt_exec_context_enqueue(context, NULL));
  int32_t rank = -1;
  int64_t dims[ETRT_MAX_RANK] = {0};
  CHECK_OK(etrt_exec_context_output_shape(context, 2, &rank, dims));
  CHECK(rank == 1 && dims[0] == 2);
  etrt_exec_context_destroy(context);
  etrt_engine_destroy(engine);
}

static void test_if_runs_the_branch_taken(void) {
  size_t neg_size, relu_size, size;
  uint8_t *neg = leaf_plan("Neg", &neg_size), *relu = leaf_plan("Relu", &relu_size), *plan;
  CHECK_OK(if_plan(neg, neg_size, relu, relu_size, &plan, &size));
  const float x[2] = {-1.5f, 2.0f};
  float y[2] = {0, 0};
  if (plan != NULL) {
    run_if(plan, size, 1, x, y);
    CHECK(y[0] == 1.5f && y[1] == -2.0f);
    run_if(plan, size, 0, x, y);
    CHECK(y[0] == 0.0f && y[1] == 2.0f);
  }
  free(plan);
  free(neg);
  free(relu);
}

static void test_branch_mismatch_refused(void) {
  /* A branch of another output type. */
  etrt_network *net;
  CHECK_OK(etrt_network_create(&net));
  int32_t cond, x, y;
  CHECK_OK(etrt_network_add_input(net, "cond", ETRT_DTYPE_BOOL, 0, NULL, NULL, &cond));
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){2}, (int64_t[]){2}, &x));
  etrt_attribute to = {.name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = 7 /* int64 */};
  CHECK_OK(etrt_network_add_op(net, "Cast", "leaf", 1, &x, 1, &y, 1, &to));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  uint8_t *cast = NULL, *neg = NULL, *plan = NULL;
  size_t cast_size = 0, neg_size = 0, size = 0;
  CHECK_OK(etrt_plan_build(net, &CPU, &cast, &cast_size));
  etrt_network_destroy(net);
  neg = leaf_plan("Neg", &neg_size);
  CHECK_FAILS(if_plan(neg, neg_size, cast, cast_size, &plan, &size), ETRT_ERROR_UNSUPPORTED,
              "If 'choose': output 0 is float32 rank 1 in then_branch but int64 rank 1 in "
              "else_branch");
  /* Bytes that are no plan: the branch's verifier says where. */
  uint8_t junk[256];
  memset(junk, 0, sizeof junk);
  CHECK_FAILS(if_plan(neg, neg_size, junk, sizeof junk, &plan, &size), ETRT_ERROR_INVALID_FORMAT,
              "If 'choose': subgraph 'else_branch' (offsets within its plan): plan: magic at byte "
              "offset 0");
  free(plan);
  free(cast);
  free(neg);
}

static void test_nesting_limit(void) {
  /* Level k's branches are level k - 1: one more control level each time. */
  size_t size;
  uint8_t *plan = leaf_plan("Relu", &size);
  etrt_status s = ETRT_OK;
  int level = 0;
  while (s == ETRT_OK && level <= ETRT_CONTROL_MAX_DEPTH) {
    uint8_t *up = NULL;
    size_t up_size = 0;
    s = if_plan(plan, size, plan, size, &up, &up_size);
    if (s != ETRT_OK) break;
    free(plan);
    plan = up;
    size = up_size;
    ++level;
  }
  CHECK_EQ_INT(level, ETRT_CONTROL_MAX_DEPTH);
  CHECK(s == ETRT_ERROR_UNSUPPORTED);
  CHECK_STR_CONTAINS(etrt_last_error(), "If 'choose': subgraph 'then_branch' nests deeper than 8");
  /* The deepest plan that was allowed still runs. */
  const float x[2] = {-1.0f, 4.0f};
  float y[2] = {9, 9};
  run_if(plan, size, 1, x, y);
  CHECK(y[0] == 0.0f && y[1] == 4.0f);
  free(plan);
}

/* The plan reader refuses a GRAPH attribute that is not 1-D uint8 bytes. */
static void test_graph_attribute_refused(void) {
  size_t neg_size, size;
  uint8_t *neg = leaf_plan("Neg", &neg_size), *plan = NULL;
  CHECK_OK(if_plan(neg, neg_size, neg, neg_size, &plan, &size));
  if (plan != NULL) {
    /* The then_branch attribute's dtype word follows its name and kind. */
    const char key[] = "then_branch";
    uint8_t *at = NULL;
    for (size_t i = 0; i + sizeof key < size && at == NULL; ++i)
      if (memcmp(plan + i, key, sizeof key - 1) == 0) at = plan + i + sizeof key - 1;
    CHECK(at != NULL);
    if (at != NULL) {
      CHECK_EQ_INT(etrt_plan_load_u32(at), ETRT_ATTRIBUTE_GRAPH);
      etrt_plan_store_u32(at + 4, ETRT_DTYPE_FLOAT32);
      etrt_sha256(plan + ETRT_PLAN_HEADER_SIZE, size - ETRT_PLAN_HEADER_SIZE, plan + 48);
      etrt_engine *engine = NULL;
      char want[128];
      snprintf(want, sizeof want, "tensor dtype at byte offset %zu", (size_t)(at + 4 - plan));
      CHECK_FAILS(etrt_engine_deserialize(plan, size, &engine), ETRT_ERROR_INVALID_FORMAT, want);
      CHECK_STR_CONTAINS(etrt_last_error(), "graph attribute 'then_branch' must hold its plan");
      etrt_engine_destroy(engine);
    }
  }
  free(plan);
  free(neg);
}

int main(void) {
  test_if_runs_the_branch_taken();
  test_branch_mismatch_refused();
  test_nesting_limit();
  test_graph_attribute_refused();
  TEST_EXIT();
}
