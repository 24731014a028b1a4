/* The partitioner: device assignment, cuts, partition inputs and outputs, the
 * description line, placements and their refusals; values a plan needs when it is
 * built that another partition computes (recomputed where needed, the partitions
 * left idle dropped and their neighbours joined), checked down to programs run on
 * simulated GPUs. */
#include <stdint.h>

#include "builder/import.h"
#include "builder/lower.h"
#include "builder/partition.h"
#include "builder/shape_values.h"
#include "built_program_testing.h"
#include "device/sim.h"
#include "onnx_build_testing.h"
#include "test_util.h"

typedef struct loaded {
  uint8_t *bytes;
  etrt_onnx_model *model;
  etrt_ir_graph *graph;
} loaded;

/* With these --shape-values texts (NULL: none). */
static void load_values(tm_model *m, const char *values, loaded *out) {
  size_t size;
  out->bytes = tm_finish(m, 13, &size);
  out->model = NULL;
  out->graph = NULL;
  CHECK_OK(etrt_onnx_model_parse(out->bytes, size, NULL, &out->model));
  if (out->model != NULL) CHECK_OK(etrt_import_onnx(out->model, &out->graph));
  if (out->graph == NULL) return;
  if (values != NULL) CHECK_OK(etrt_shape_values_apply(out->graph, &values, 1));
  CHECK_OK(etrt_lower_infer_shapes(out->graph));
}

static void load(tm_model *m, loaded *out) { load_values(m, NULL, out); }

static void unload(loaded *l) {
  etrt_ir_graph_destroy(l->graph);
  etrt_onnx_model_free(l->model);
  free(l->bytes);
}

/* x -> r1:Relu -> a -> n1:Neg -> b -> r2:Relu -> c;  add1: a + c -> y */
static void diamond(loaded *l) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "3"};
  tm_input(&m, "x", 2, dims);
  tm_node(&m, "Relu", "r1", "x", "a", 0);
  tm_node(&m, "Neg", "n1", "a", "b", 0);
  tm_node(&m, "Relu", "r2", "b", "c", 0);
  tm_node(&m, "Add", "add1", "a,c", "y", 0);
  tm_output(&m, "y");
  load(&m, l);
}

static bool no_neg(const etrt_ir_graph *graph, const etrt_ir_node *node, void *user) {
  (void)graph;
  ++*(int *)user;
  return strcmp(node->op_type, "Neg") != 0;
}

static int32_t v(const etrt_ir_graph *g, const char *name) { return etrt_ir_find_value(g, name); }

static void test_gpu_cpu_gpu(void) {
  loaded l;
  diamond(&l);
  int asked = 0;
  etrt_partition_options options = {
      .target = {ETRT_DEVICE_CUDA, 0}, .cuda_supports = no_neg, .cuda_user = &asked};
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(l.graph, &options, &p));
  CHECK_EQ_INT(asked, 4);
  CHECK_EQ_INT(p->count, 3);
  CHECK(p->parts[0].device.type == ETRT_DEVICE_CUDA && p->parts[0].device.index == 0);
  CHECK(p->parts[1].device.type == ETRT_DEVICE_CPU);
  CHECK(p->parts[2].device.type == ETRT_DEVICE_CUDA);
  const etrt_ir_graph *g = l.graph;
  CHECK(p->parts[0].num_inputs == 1 && p->parts[0].inputs[0] == v(g, "x"));
  CHECK(p->parts[0].num_outputs == 1 && p->parts[0].outputs[0] == v(g, "a"));
  CHECK(p->parts[1].num_inputs == 1 && p->parts[1].inputs[0] == v(g, "a"));
  CHECK(p->parts[1].num_outputs == 1 && p->parts[1].outputs[0] == v(g, "b"));
  CHECK_EQ_INT(p->parts[2].num_nodes, 2);
  CHECK(p->parts[2].num_inputs == 2 && p->parts[2].inputs[0] == v(g, "b") &&
        p->parts[2].inputs[1] == v(g, "a"));
  CHECK(p->parts[2].num_outputs == 1 && p->parts[2].outputs[0] == v(g, "y"));
  char line[256];
  etrt_partition_describe(g, &p->parts[2], 2, line, sizeof line);
  CHECK(strcmp(line, "partition 2 cuda:0: 2 ops (Relu, Add)") == 0);
  etrt_partition_describe(g, &p->parts[1], 1, line, sizeof line);
  CHECK(strcmp(line, "partition 1 cpu: 1 op (Neg)") == 0);
  /* A buffer too short still ends cleanly. */
  char tiny[24];
  etrt_partition_describe(g, &p->parts[2], 2, tiny, sizeof tiny);
  CHECK(strlen(tiny) < sizeof tiny);
  etrt_partitioning_destroy(p);

  /* On the CPU: one partition; the predicate is not asked. */
  asked = 0;
  options.target = (etrt_device){ETRT_DEVICE_CPU, 0};
  CHECK_OK(etrt_partition_graph(l.graph, &options, &p));
  CHECK_EQ_INT(p->count, 1);
  CHECK_EQ_INT(asked, 0);
  CHECK_EQ_INT(p->parts[0].num_nodes, 4);
  etrt_partition_describe(g, &p->parts[0], 0, line, sizeof line);
  CHECK(strcmp(line, "partition 0 cpu: 4 ops (Relu x2, Neg, Add)") == 0);
  etrt_partitioning_destroy(p);
  unload(&l);
}

static void test_placements(void) {
  loaded l;
  diamond(&l);
  int asked = 0;
  etrt_partition_placement places[2] = {{"r2", {ETRT_DEVICE_CUDA, 1}},
                                        {"n1", {ETRT_DEVICE_CUDA, 0}}};
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0},
                                    .placements = places,
                                    .num_placements = 1,
                                    .cuda_supports = no_neg,
                                    .cuda_user = &asked};
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(l.graph, &options, &p));
  CHECK_EQ_INT(p->count, 4);
  CHECK(p->parts[2].device.type == ETRT_DEVICE_CUDA && p->parts[2].device.index == 1);
  CHECK(p->parts[3].device.type == ETRT_DEVICE_CUDA && p->parts[3].device.index == 0);
  /* a crosses from partition 0 to partition 3. */
  CHECK(p->parts[3].num_inputs == 2 && p->parts[3].inputs[0] == v(l.graph, "a"));
  etrt_partitioning_destroy(p);

  /* Placing an operation on a GPU that cannot run it is refused. */
  options.placements = &places[1];
  CHECK_FAILS(etrt_partition_graph(l.graph, &options, &p), ETRT_ERROR_UNSUPPORTED,
              "node 'n1' (Neg) is placed on cuda:0");
  /* A placement naming no node is refused. */
  etrt_partition_placement nobody = {"missing", {ETRT_DEVICE_CPU, 0}};
  options.placements = &nobody;
  CHECK_FAILS(etrt_partition_graph(l.graph, &options, &p), ETRT_ERROR_INVALID_ARGUMENT,
              "no node named 'missing'");
  /* Placing on the CPU on a CPU target changes nothing; on a GPU it makes a GPU
   * partition there. */
  etrt_partition_placement on_gpu = {"add1", {ETRT_DEVICE_CUDA, 2}};
  options.placements = &on_gpu;
  options.target = (etrt_device){ETRT_DEVICE_CPU, 0};
  CHECK_OK(etrt_partition_graph(l.graph, &options, &p));
  CHECK_EQ_INT(p->count, 2);
  CHECK(p->parts[1].device.type == ETRT_DEVICE_CUDA && p->parts[1].device.index == 2);
  CHECK_EQ_INT(p->parts[0].num_outputs, 2); /* a and c */
  etrt_partitioning_destroy(p);
  unload(&l);
}

/* The default predicate keeps an operation whose output shape depends on a value
 * computed at run time off the GPU, and the partitioner keeps the node computing that
 * value with it (on the GPU the CPU plan could not read it when it is built). */
static void test_default_value_inputs(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "3"};
  tm_input(&m, "x", 2, dims);
  int64_t shape[2] = {3, 2};
  tm_initializer(&m, "fixed", ETRT_ONNX_INT64, 1, (int64_t[]){2}, shape, sizeof shape);
  tm_node(&m, "Reshape", "static_reshape", "x,fixed", "r", 0);
  tm_node(&m, "Shape", "shape", "x", "s", 0);
  tm_node(&m, "Reshape", "dynamic_reshape", "r,s", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, &l);
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0}};
  const etrt_ir_graph *g = l.graph;
  CHECK(!etrt_partition_cuda_default(g, &g->nodes[2], NULL));
  /* Reshape's CUDA kernel takes every node; the same in every build. */
  CHECK(etrt_partition_cuda_default(g, &g->nodes[0], NULL));
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  CHECK_EQ_INT(p->count, 2);
  CHECK(p->parts[1].device.type == ETRT_DEVICE_CPU && p->parts[1].num_nodes == 2);
  CHECK_EQ_INT(p->parts[0].num_nodes, 1);  /* static_reshape */
  CHECK_EQ_INT(p->parts[1].num_inputs, 2); /* x (for its dims) and r */
  etrt_partitioning_destroy(p);
  unload(&l);
}

/* NonZero has no CUDA kernel and reads its input's values at execute, not at build
 * time: the Relu computing them stays on the GPU, NonZero goes to the CPU. */
static void test_bounded_reader_leaves_producer_on_gpu(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "3"};
  tm_input(&m, "x", 2, dims);
  tm_node(&m, "Relu", "relu", "x", "r", 0);
  tm_node(&m, "NonZero", "nz", "r", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, &l);
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0}};
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(l.graph, &options, &p));
  CHECK_EQ_INT(p->count, 2);
  CHECK(p->parts[0].device.type == ETRT_DEVICE_CUDA && p->parts[0].num_nodes == 1);
  CHECK(p->parts[1].device.type == ETRT_DEVICE_CPU && p->parts[1].num_nodes == 1);
  etrt_partitioning_destroy(p);
  unload(&l);
}

/* The CUDA predicate decides in every build: the GPU's MatMul takes no float64, so
 * that node stays on the CPU between two GPU partitions, with or without CUDA
 * compiled in. */
static void test_default_follows_cuda_predicate(void) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "3"};
  tm_input(&m, "x", 2, dims);
  double w[6] = {1, 2, 3, 4, 5, 6};
  tm_initializer(&m, "w", ETRT_ONNX_DOUBLE, 2, (int64_t[]){3, 2}, w, sizeof w);
  tm_node(&m, "Cast", "to_double", "x", "d", 1, tm_attr_int("to", ETRT_ONNX_DOUBLE));
  tm_node(&m, "MatMul", "product", "d,w", "p", 0);
  tm_node(&m, "Relu", "relu", "p", "y", 0);
  tm_output(&m, "y");
  loaded l;
  load(&m, &l);
  const etrt_ir_graph *g = l.graph;
  CHECK(etrt_partition_cuda_default(g, &g->nodes[0], NULL));
  CHECK(!etrt_partition_cuda_default(g, &g->nodes[1], NULL));
  CHECK(etrt_partition_cuda_default(g, &g->nodes[2], NULL));
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0}};
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  CHECK_EQ_INT(p->count, 3);
  if (p->count == 3) {
    CHECK(p->parts[0].device.type == ETRT_DEVICE_CUDA);
    CHECK(p->parts[1].device.type == ETRT_DEVICE_CPU && p->parts[1].num_nodes == 1 &&
          p->parts[1].nodes[0] == 1);
    CHECK(p->parts[2].device.type == ETRT_DEVICE_CUDA);
  }
  etrt_partitioning_destroy(p);
  unload(&l);
}

/* A GPU that runs every operation but those listed (comma-separated) in user. */
static bool gpu_runs_all_but(const etrt_ir_graph *graph, const etrt_ir_node *node, void *user) {
  (void)graph;
  const char *list = user;
  size_t len = strlen(node->op_type);
  for (const char *p = list; (p = strstr(p, node->op_type)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return false;
  return true;
}

static void add_int64_scalar_input(tm_model *m, const char *name) {
  etrt_pb_writer vi = tm_value_info(name, ETRT_ONNX_INT64, 0, NULL);
  tm_put(&m->graph, 11, &vi);
}

/* n (int64 scalar, given by value) -> cast: f = float(n) -> half: g = f * 0.5;
 * range: r = Range(0, f, 1); scale: y = r * g, so y[i] = i * n / 2. f is needed on
 * the host by the Range (its length) and as data by half, which a GPU runs: in the
 * node order the GPU's half sits between cast and range. */
static void crossing_graph(tm_model *m) {
  tm_init(m);
  add_int64_scalar_input(m, "n");
  float zero = 0, one = 1, half = 0.5f;
  tm_initializer_f32(m, "zero", 0, NULL, &zero);
  tm_initializer_f32(m, "one", 0, NULL, &one);
  tm_initializer_f32(m, "half_c", 0, NULL, &half);
  tm_node(m, "Cast", "cast", "n", "f", 1, tm_attr_int("to", ETRT_ONNX_FLOAT));
  tm_node(m, "Mul", "half", "f,half_c", "g", 0);
  tm_node(m, "Range", "range", "zero,f,one", "r", 0);
  tm_node(m, "Mul", "scale", "r,g", "y", 0);
  tm_output(m, "y");
}

static uint8_t *crossing_model(size_t *size) {
  tm_model m;
  crossing_graph(&m);
  return tm_finish(&m, 13, size);
}

/* Every partition's plan builds (the engine evaluates what it needs on the host). */
static void check_plans(const etrt_ir_graph *g, const etrt_partitioning *p) {
  for (uint32_t k = 0; k < p->count; ++k) {
    etrt_plan_options options = {.device = p->parts[k].device, .name = "partition"};
    uint8_t *plan = NULL;
    size_t plan_size = 0;
    CHECK_OK(etrt_lower_partition_plan(g, &p->parts[k], &options, NULL, &plan, &plan_size));
    free(plan);
  }
}

/* The partition reading f at Range's value input computes f itself from n (a copy
 * of cast), instead of taking the GPU-side partition's result, which is only known
 * when that partition runs. */
static void test_recompute_host_value(void) {
  tm_model m;
  crossing_graph(&m);
  loaded l;
  load_values(&m, "n:6", &l);
  if (l.graph == NULL) {
    unload(&l);
    return;
  }
  const etrt_ir_graph *g = l.graph;
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0},
                                    .cuda_supports = gpu_runs_all_but,
                                    .cuda_user = (void *)"Range"};
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  if (p == NULL) {
    unload(&l);
    return;
  }
  CHECK_EQ_INT(p->count, 4);
  if (p->count == 4) {
    CHECK(p->parts[0].device.type == ETRT_DEVICE_CPU && p->parts[0].num_nodes == 1);
    CHECK(p->parts[1].device.type == ETRT_DEVICE_CUDA && p->parts[1].num_nodes == 1);
    CHECK(p->parts[2].device.type == ETRT_DEVICE_CPU);
    CHECK(p->parts[3].device.type == ETRT_DEVICE_CUDA && p->parts[3].num_nodes == 1);
    /* Partition 2: cast again, then range; it reads n, not f. */
    CHECK_EQ_INT(p->parts[2].num_nodes, 2);
    CHECK_EQ_INT(p->parts[2].num_recomputed, 1);
    CHECK(strcmp(g->nodes[p->parts[2].nodes[0]].name, "cast") == 0);
    CHECK(strcmp(g->nodes[p->parts[2].nodes[1]].name, "range") == 0);
    CHECK(p->parts[2].num_inputs == 1 && p->parts[2].inputs[0] == v(g, "n"));
    CHECK(p->parts[2].num_outputs == 1 && p->parts[2].outputs[0] == v(g, "r"));
    /* f leaves partition 0 once, for the GPU; the copy's f is nobody's output. */
    CHECK(p->parts[0].num_outputs == 1 && p->parts[0].outputs[0] == v(g, "f"));
    CHECK(p->parts[1].num_inputs == 1 && p->parts[1].inputs[0] == v(g, "f"));
    CHECK(p->parts[3].num_inputs == 2 && p->parts[3].inputs[0] == v(g, "r") &&
          p->parts[3].inputs[1] == v(g, "g"));
    CHECK_EQ_INT(p->parts[0].num_recomputed, 0);
    char line[256];
    etrt_partition_describe(g, &p->parts[2], 2, line, sizeof line);
    CHECK(strcmp(line,
                 "partition 2 cpu: 2 ops (Cast, Range), 1 recomputed from other partitions") == 0);
    check_plans(g, p);
  }
  etrt_partitioning_destroy(p);

  /* On the CPU nothing crosses: one partition, nothing recomputed. */
  options.target = (etrt_device){ETRT_DEVICE_CPU, 0};
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  if (p != NULL) {
    CHECK(p->count == 1 && p->parts[0].num_nodes == 4 && p->parts[0].num_recomputed == 0);
    check_plans(g, p);
  }
  etrt_partitioning_destroy(p);
  unload(&l);
}

/* x[2,3] -> r1: a = Relu(x); shape: s = Shape(x); n1: b = Neg(a) (or Neg(x) placed
 * before r1 with `neg_first`); reshape: y = Reshape(b, s). */
static void shape_chain(int neg_first, loaded *l) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 2, (const char *[]){"2", "3"});
  if (neg_first) {
    tm_node(&m, "Shape", "shape", "x", "s", 0);
    tm_node(&m, "Neg", "n1", "x", "c", 0);
    tm_node(&m, "Relu", "r1", "c", "b", 0);
  } else {
    tm_node(&m, "Relu", "r1", "x", "a", 0);
    tm_node(&m, "Shape", "shape", "x", "s", 0);
    tm_node(&m, "Neg", "n1", "a", "b", 0);
  }
  tm_node(&m, "Reshape", "reshape", "b,s", "y", 0);
  tm_output(&m, "y");
  load(&m, l);
}

/* A partition whose work all moved into the partition that needs it is dropped, and
 * the GPU partitions around it become one. */
static void test_idle_partition_dropped(void) {
  loaded l;
  shape_chain(0, &l);
  const etrt_ir_graph *g = l.graph;
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0},
                                    .cuda_supports = gpu_runs_all_but,
                                    .cuda_user = (void *)"Reshape"};
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  if (p != NULL) {
    CHECK_EQ_INT(p->count, 2);
    CHECK(p->parts[0].device.type == ETRT_DEVICE_CUDA && p->parts[0].num_nodes == 2);
    CHECK(p->parts[0].num_inputs == 1 && p->parts[0].inputs[0] == v(g, "x"));
    CHECK(p->parts[0].num_outputs == 1 && p->parts[0].outputs[0] == v(g, "b"));
    CHECK(p->parts[1].device.type == ETRT_DEVICE_CPU && p->parts[1].num_nodes == 2);
    CHECK_EQ_INT(p->parts[1].num_recomputed, 0); /* its first home is gone */
    CHECK(strcmp(g->nodes[p->parts[1].nodes[0]].name, "shape") == 0);
    CHECK(p->parts[1].num_inputs == 2 && p->parts[1].inputs[0] == v(g, "x") &&
          p->parts[1].inputs[1] == v(g, "b"));
    CHECK(p->parts[1].num_outputs == 1 && p->parts[1].outputs[0] == v(g, "y"));
    char line[256];
    etrt_partition_describe(g, &p->parts[1], 1, line, sizeof line);
    CHECK(strcmp(line, "partition 1 cpu: 2 ops (Shape, Reshape)") == 0);
    check_plans(g, p);
  }
  etrt_partitioning_destroy(p);
  unload(&l);

  /* Where the first partition has other work, only the node nobody reads from
   * there any more leaves it. */
  shape_chain(1, &l);
  g = l.graph;
  options.cuda_user = (void *)"Neg,Reshape";
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  if (p != NULL) {
    CHECK_EQ_INT(p->count, 3);
    CHECK(p->parts[0].device.type == ETRT_DEVICE_CPU && p->parts[0].num_nodes == 1);
    CHECK(strcmp(g->nodes[p->parts[0].nodes[0]].name, "n1") == 0);
    CHECK(p->parts[0].num_outputs == 1 && p->parts[0].outputs[0] == v(g, "c"));
    CHECK(p->parts[2].num_nodes == 2 && p->parts[2].num_inputs == 2);
    check_plans(g, p);
  }
  etrt_partitioning_destroy(p);
  unload(&l);
}

/* The crossing model built and run: on the CPU, and for cuda:0 on a simulated GPU,
 * whose streams run queued copies only when synchronised (the memory a queued
 * host-to-device copy reads must not be reused by a CPU partition meanwhile). */
static void test_crossing_program_runs(void) {
  const char *devices[2] = {"cpu", "cuda:0"};
  for (int d = 0; d < 2; ++d) {
    size_t size, pte_size;
    uint8_t *pte = NULL;
    const char *values = "n:6";
    CHECK_OK(bp_build(crossing_model(&size), &size, devices[d], &values, 1, &pte, &pte_size));
    if (pte == NULL) continue;
    bp_loaded l;
    bp_load(pte, pte_size, &l);
    if (l.method == NULL) {
      bp_unload(&l);
      continue;
    }
    int64_t n = 6;
    etrt_tensor_view nv = bp_view(&n, ETRT_DTYPE_INT64, 0, NULL);
    CHECK_OK(etrt_method_set_input(l.method, 0, &nv));
    for (int run = 0; run < 2; ++run) {
      CHECK_OK(etrt_method_execute(l.method));
      etrt_tensor_view y;
      CHECK_OK(etrt_method_get_output(l.method, 0, &y));
      CHECK(y.rank == 1 && y.sizes[0] == 6);
      for (int i = 0; i < 6 && y.rank == 1 && y.sizes[0] == 6; ++i)
        CHECK_NEAR(((const float *)y.data)[i], i * 3.0f, 0);
    }
    bp_unload(&l);
  }
}

int main(void) {
  RUN_TEST(test_gpu_cpu_gpu);
  RUN_TEST(test_placements);
  RUN_TEST(test_default_value_inputs);
  RUN_TEST(test_default_follows_cuda_predicate);
  RUN_TEST(test_recompute_host_value);
  RUN_TEST(test_bounded_reader_leaves_producer_on_gpu);
  RUN_TEST(test_idle_partition_dropped);
  CHECK_OK(etrt_device_select_sim(1));
  RUN_TEST(test_crossing_program_runs);
  CHECK_OK(etrt_device_select_sim(0));
  return TEST_EXIT();
}
