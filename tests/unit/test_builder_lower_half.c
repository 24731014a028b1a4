/* Half precision for GPU plans (builder/lower_half.h): which nodes run in float16 or
 * bfloat16, which constants are converted (and to what bytes), what stays as it was,
 * where the casts stand, and the refusals; read back from the engine graph of the
 * plan, and one plan run on a simulated GPU against the float32 plan. */
#include <math.h>
#include <stdint.h>

#include "base/half.h"
#include "builder/import.h"
#include "builder/lower.h"
#include "builder/lower_half.h"
#include "builder/partition.h"
#include "built_program_testing.h"
#include "device/sim.h"
#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "onnx_build_testing.h"
#include "test_util.h"

typedef struct loaded {
  uint8_t *bytes;
  etrt_onnx_model *model;
  etrt_ir_graph *graph;
} loaded;

static void load_bytes(uint8_t *bytes, size_t size, loaded *out) {
  out->bytes = bytes;
  out->model = NULL;
  out->graph = NULL;
  CHECK_OK(etrt_onnx_model_parse(out->bytes, size, NULL, &out->model));
  if (out->model != NULL) CHECK_OK(etrt_import_onnx(out->model, &out->graph));
  if (out->graph != NULL) CHECK_OK(etrt_lower_infer_shapes(out->graph));
}

static void load(tm_model *m, loaded *out) {
  size_t size;
  uint8_t *bytes = tm_finish(m, 17, &size);
  load_bytes(bytes, size, out);
}

static void unload(loaded *l) {
  etrt_ir_graph_destroy(l->graph);
  etrt_onnx_model_free(l->model);
  free(l->bytes);
}

/* The engine reads its weights in the plan's bytes: both live until drop(). */
static uint8_t *plans[16];
static int plan_count;

static void drop(etrt_engine *engine) {
  etrt_engine_destroy(engine);
  while (plan_count > 0) free(plans[--plan_count]);
}

/* The whole graph as one plan for `device` with `precision`; NULL on failure. */
static etrt_engine *build(const loaded *l, etrt_device device, etrt_precision precision,
                          etrt_lower_half_stats *stats) {
  if (l->graph == NULL) return NULL;
  etrt_partition_options options = {.target = device};
  etrt_partitioning *parts = NULL;
  CHECK_OK(etrt_partition_graph(l->graph, &options, &parts));
  if (parts == NULL) return NULL;
  CHECK_EQ_INT(parts->count, 1);
  etrt_plan_options plan_options = {.device = device, .precision = precision, .name = "half"};
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_lower_partition_plan(l->graph, &parts->parts[0], &plan_options, stats, &plan,
                                     &plan_size));
  if (plan != NULL) CHECK_OK(etrt_engine_deserialize(plan, plan_size, &engine));
  if (plan != NULL) plans[plan_count++] = plan;
  etrt_partitioning_destroy(parts);
  return engine;
}

static const etrt_node *find_node(const etrt_engine *e, const char *name) {
  for (uint32_t n = 0; n < e->graph.node_count; ++n)
    if (strcmp(e->graph.nodes[n].name, name) == 0) return &e->graph.nodes[n];
  etrt_test_fail(__FILE__, __LINE__, "no node '%s' in the plan", name);
  return NULL;
}

static const etrt_graph_value *find_constant(const etrt_engine *e, const char *name) {
  for (uint32_t v = 0; v < e->graph.value_count; ++v) {
    const etrt_graph_value *value = &e->graph.values[v];
    if (value->kind == ETRT_VALUE_KIND_CONSTANT && strcmp(value->name, name) == 0) return value;
  }
  etrt_test_fail(__FILE__, __LINE__, "no constant '%s' in the plan", name);
  return NULL;
}

static etrt_dtype input_dtype(const etrt_engine *e, const etrt_node *node, uint32_t i) {
  return node != NULL ? e->graph.values[node->inputs[i]].dtype : ETRT_DTYPE_INVALID;
}

static etrt_dtype output_dtype(const etrt_engine *e, const etrt_node *node) {
  return node != NULL ? e->graph.values[node->outputs[0]].dtype : ETRT_DTYPE_INVALID;
}

static uint32_t count_op(const etrt_engine *e, const char *op) {
  uint32_t count = 0;
  for (uint32_t n = 0; n < e->graph.node_count; ++n)
    count += strcmp(e->graph.nodes[n].op_type, op) == 0;
  return count;
}

static const float W[12] = {0.5f, -1.25f, 2.0f,  0.1f, 3.3f, -0.7f,
                            1.0f, 0.0f,   -2.5f, 0.3f, 0.6f, 0.9f};
static const float B[3] = {0.25f, -0.5f, 1.0f / 3.0f};

/* x[2,4] -> MatMul w[4,3] -> Add b -> Relu -> Reshape(shape int64 [3,2]) -> y */
static uint8_t *linear_onnx(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"2", "4"};
  tm_input(&m, "x", 2, dims);
  tm_initializer_f32(&m, "w", 2, (int64_t[]){4, 3}, W);
  tm_initializer_f32(&m, "b", 1, (int64_t[]){3}, B);
  static const int64_t shape[2] = {3, 2};
  tm_initializer(&m, "shape", ETRT_ONNX_INT64, 1, (int64_t[]){2}, shape, sizeof shape);
  tm_node(&m, "MatMul", "mm", "x,w", "p", 0);
  tm_node(&m, "Add", "bias", "p,b", "q", 0);
  tm_node(&m, "Relu", "relu", "q", "r", 0);
  tm_node(&m, "Reshape", "reshape", "r,shape", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 17, size);
}

static void linear_model(loaded *l) {
  size_t size;
  uint8_t *bytes = linear_onnx(&size);
  load_bytes(bytes, size, l);
}

static void test_constants_converted(void) {
  loaded l;
  linear_model(&l);
  etrt_lower_half_stats stats;
  etrt_engine *e = build(&l, (etrt_device){ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_FP16, &stats);
  if (e != NULL) {
    const etrt_graph_value *w = find_constant(e, "w"), *b = find_constant(e, "b");
    if (w != NULL && b != NULL) {
      CHECK_EQ_INT(w->dtype, ETRT_DTYPE_FLOAT16);
      CHECK_EQ_INT(w->nbytes, 12 * sizeof(uint16_t));
      CHECK_EQ_INT(b->dtype, ETRT_DTYPE_FLOAT16);
      const uint16_t *wh = w->data, *bh = b->data;
      for (int k = 0; k < 12; ++k) CHECK_EQ_INT(wh[k], etrt_float_to_half(W[k]));
      for (int k = 0; k < 3; ++k) CHECK_EQ_INT(bh[k], etrt_float_to_half(B[k]));
    }
    /* Integers are left as they are: the shape keeps its type and bytes. */
    const etrt_graph_value *shape = find_constant(e, "shape");
    if (shape != NULL) {
      CHECK_EQ_INT(shape->dtype, ETRT_DTYPE_INT64);
      CHECK_EQ_INT(((const int64_t *)shape->data)[0], 3);
    }
    const etrt_node *mm = find_node(e, "mm"), *relu = find_node(e, "relu");
    CHECK_EQ_INT(input_dtype(e, mm, 0), ETRT_DTYPE_FLOAT16);
    CHECK_EQ_INT(output_dtype(e, mm), ETRT_DTYPE_FLOAT16);
    CHECK_EQ_INT(output_dtype(e, relu), ETRT_DTYPE_FLOAT16);
    /* The plan's I/O keeps float32: a cast after the input and one before the output. */
    CHECK_EQ_INT(e->graph.values[e->graph.inputs[0]].dtype, ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(e->graph.values[e->graph.outputs[0]].dtype, ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(count_op(e, "Cast"), 2);
    CHECK_EQ_INT(stats.half_nodes, 4);
    CHECK_EQ_INT(stats.float_nodes, 0);
    CHECK_EQ_INT(stats.constants, 2);
    CHECK_EQ_INT(stats.casts, 2);
    CHECK_EQ_INT(e->info.precision, ETRT_PRECISION_FP16);
  }
  drop(e);

  /* bfloat16 the same way, with its own rounding. */
  e = build(&l, (etrt_device){ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_BF16, &stats);
  if (e != NULL) {
    const etrt_graph_value *w = find_constant(e, "w");
    if (w != NULL) {
      CHECK_EQ_INT(w->dtype, ETRT_DTYPE_BFLOAT16);
      CHECK_EQ_INT(((const uint16_t *)w->data)[4], etrt_float_to_bfloat16(W[4]));
    }
    CHECK_EQ_INT(output_dtype(e, find_node(e, "relu")), ETRT_DTYPE_BFLOAT16);
  }
  drop(e);
  unload(&l);
}

/* A CPU plan, and fp32/tf32 plans, keep float32. */
static void test_float32_plans_untouched(void) {
  loaded l;
  linear_model(&l);
  etrt_lower_half_stats stats;
  const struct {
    etrt_device device;
    etrt_precision precision;
  } cases[] = {{{ETRT_DEVICE_CPU, 0}, ETRT_PRECISION_FP16},
               {{ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_TF32},
               {{ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_FP32}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    etrt_engine *e = build(&l, cases[c].device, cases[c].precision, &stats);
    if (e == NULL) continue;
    const etrt_graph_value *w = find_constant(e, "w");
    if (w != NULL) CHECK_EQ_INT(w->dtype, ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(count_op(e, "Cast"), 0);
    CHECK_EQ_INT(stats.half_nodes + stats.casts + stats.constants, 0);
    drop(e);
  }
  unload(&l);
}

/* x[2,3,3] -> Relu -> Det -> Neg -> y: Det has no half kernel and keeps float32 between
 * casts; Relu and Neg run in float16. */
static void test_unsupported_node_wrapped(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"2", "3", "3"};
  tm_input(&m, "x", 3, dims);
  tm_node(&m, "Relu", "relu", "x", "r", 0);
  tm_node(&m, "Det", "det", "r", "d", 0);
  tm_node(&m, "Neg", "neg", "d", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, &l);
  etrt_lower_half_stats stats;
  etrt_engine *e = build(&l, (etrt_device){ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_FP16, &stats);
  if (e != NULL) {
    const etrt_node *det = find_node(e, "det");
    CHECK_EQ_INT(input_dtype(e, det, 0), ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(output_dtype(e, det), ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(output_dtype(e, find_node(e, "relu")), ETRT_DTYPE_FLOAT16);
    CHECK_EQ_INT(input_dtype(e, find_node(e, "neg"), 0), ETRT_DTYPE_FLOAT16);
    /* in, around Det (two), out */
    CHECK_EQ_INT(count_op(e, "Cast"), 4);
    CHECK_EQ_INT(stats.casts, 4);
    CHECK_EQ_INT(stats.float_nodes, 1);
    CHECK_EQ_INT(stats.half_nodes, 2);
    etrt_engine_types types;
    CHECK(etrt_engine_plan_types(NULL, 0, &types) == 0); /* not a plan */
    etrt_clear_error();
  }
  drop(e);
  unload(&l);
}

/* A float16 weight must stay finite: a node reading 1e6 keeps float32 under fp16, and
 * runs in bfloat16 (float32's range) under bf16. A Cast to float writes the half type. */
static void test_out_of_range_constant_and_cast(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[] = {"4"};
  tm_input(&m, "x", 1, dims);
  static const float big[4] = {1e6f, 1.0f, -2.0f, 0.5f};
  tm_initializer_f32(&m, "big", 1, (int64_t[]){4}, big);
  tm_node(&m, "Mul", "scale", "x,big", "s", 0);
  tm_node(&m, "Cast", "to_int", "s", "i", 1, tm_attr_int("to", ETRT_ONNX_INT32));
  tm_node(&m, "Cast", "to_float", "i", "f", 1, tm_attr_int("to", ETRT_ONNX_FLOAT));
  tm_node(&m, "Relu", "relu", "f", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, &l);
  etrt_lower_half_stats stats;
  etrt_engine *e = build(&l, (etrt_device){ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_FP16, &stats);
  if (e != NULL) {
    const etrt_graph_value *c = find_constant(e, "big");
    if (c != NULL) CHECK_EQ_INT(c->dtype, ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(output_dtype(e, find_node(e, "scale")), ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(input_dtype(e, find_node(e, "to_int"), 0), ETRT_DTYPE_FLOAT32);
    CHECK_EQ_INT(output_dtype(e, find_node(e, "to_int")), ETRT_DTYPE_INT32);
    CHECK_EQ_INT(output_dtype(e, find_node(e, "to_float")), ETRT_DTYPE_FLOAT16);
    CHECK_EQ_INT(output_dtype(e, find_node(e, "relu")), ETRT_DTYPE_FLOAT16);
    CHECK_EQ_INT(stats.constants, 0);
  }
  drop(e);
  e = build(&l, (etrt_device){ETRT_DEVICE_CUDA, 0}, ETRT_PRECISION_BF16, &stats);
  if (e != NULL) {
    const etrt_graph_value *c = find_constant(e, "big");
    if (c != NULL) CHECK_EQ_INT(c->dtype, ETRT_DTYPE_BFLOAT16);
    CHECK_EQ_INT(output_dtype(e, find_node(e, "scale")), ETRT_DTYPE_BFLOAT16);
  }
  drop(e);
  unload(&l);
}

static void test_refusals(void) {
  loaded l;
  linear_model(&l);
  if (l.graph != NULL) {
    etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0}};
    etrt_partitioning *parts = NULL;
    CHECK_OK(etrt_partition_graph(l.graph, &options, &parts));
    etrt_network *network = NULL;
    CHECK_OK(etrt_network_create(&network));
    int32_t *ids = malloc(l.graph->num_values * sizeof *ids);
    etrt_lower_half_stats stats;
    if (parts != NULL && network != NULL && ids != NULL) {
      for (uint32_t v = 0; v < l.graph->num_values; ++v) ids[v] = -1;
      CHECK_FAILS(etrt_lower_half_partition(l.graph, &parts->parts[0], ETRT_DTYPE_FLOAT32, network,
                                            ids, &stats),
                  ETRT_ERROR_INVALID_ARGUMENT, "must be float16 or bfloat16, not float32");
      /* A node reading a value nothing has computed (the partition's input was not
       * added) is an internal error naming it. */
      CHECK_FAILS(etrt_lower_half_partition(l.graph, &parts->parts[0], ETRT_DTYPE_FLOAT16, network,
                                            ids, &stats),
                  ETRT_ERROR_INTERNAL, "node 'mm' (MatMul) reads 'x' before it is computed");
    }
    free(ids);
    etrt_network_destroy(network);
    etrt_partitioning_destroy(parts);
  }
  unload(&l);
}

/* Built for a simulated GPU with fp16 and bf16, the program gives the float32
 * program's results within the half type's rounding. */
static void run_program(const char *device, etrt_precision precision, float *y) {
  size_t size, pte_size;
  uint8_t *onnx = linear_onnx(&size), *pte = NULL;
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = device;
  o.precision = precision;
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &pte, &pte_size));
  free(onnx);
  if (pte == NULL) return;
  bp_loaded l;
  bp_load(pte, pte_size, &l);
  static float x[8] = {1.0f, -0.5f, 0.25f, 2.0f, -1.0f, 0.75f, 1.5f, -2.0f};
  etrt_tensor_view xv = bp_view(x, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){2, 4});
  if (l.method != NULL) CHECK_OK(etrt_method_set_input(l.method, 0, &xv));
  if (l.method != NULL) CHECK_OK(etrt_method_execute(l.method));
  etrt_tensor_view yv = {0};
  if (l.method != NULL) CHECK_OK(etrt_method_get_output(l.method, 0, &yv));
  CHECK(yv.dtype == ETRT_DTYPE_FLOAT32 && yv.rank == 2 && yv.sizes[0] == 3 && yv.sizes[1] == 2);
  if (yv.data != NULL && yv.rank == 2) memcpy(y, yv.data, 6 * sizeof *y);
  bp_unload(&l);
}

static void test_runs_on_sim(void) {
  float want[6] = {0}, got[6] = {0};
  run_program("cpu", ETRT_PRECISION_FP32, want);
  CHECK(want[0] != 0.0f || want[1] != 0.0f);
  run_program("cuda:0", ETRT_PRECISION_FP16, got);
  for (int k = 0; k < 6; ++k) CHECK_NEAR(got[k], want[k], 2e-3 * (1.0 + fabs(want[k])));
  run_program("cuda:0", ETRT_PRECISION_BF16, got);
  for (int k = 0; k < 6; ++k) CHECK_NEAR(got[k], want[k], 2e-2 * (1.0 + fabs(want[k])));
}

int main(void) {
  RUN_TEST(test_constants_converted);
  RUN_TEST(test_float32_plans_untouched);
  RUN_TEST(test_unsupported_node_wrapped);
  RUN_TEST(test_out_of_range_constant_and_cast);
  RUN_TEST(test_refusals);
  CHECK_OK(etrt_device_select_sim(1));
  RUN_TEST(test_runs_on_sim);
  CHECK_OK(etrt_device_select_sim(0));
  return TEST_EXIT();
}
