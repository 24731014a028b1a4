/* The partitioner: device assignment, cuts, partition inputs and outputs, the
 * description line, placements and their refusals. */
#include <stdint.h>

#include "builder/import.h"
#include "builder/lower.h"
#include "builder/partition.h"
#include "onnx_build_testing.h"
#include "test_util.h"

typedef struct loaded {
  uint8_t *bytes;
  etrt_onnx_model *model;
  etrt_ir_graph *graph;
} loaded;

static void load(tm_model *m, loaded *out) {
  size_t size;
  out->bytes = tm_finish(m, 13, &size);
  CHECK_OK(etrt_onnx_model_parse(out->bytes, size, NULL, &out->model));
  CHECK_OK(etrt_import_onnx(out->model, &out->graph));
  CHECK_OK(etrt_lower_infer_shapes(out->graph));
}

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
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0}, .cuda_supports = no_neg,
                                    .cuda_user = &asked};
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
  etrt_partition_placement places[2] = {{"r2", {ETRT_DEVICE_CUDA, 1}}, {"n1", {ETRT_DEVICE_CUDA, 0}}};
  etrt_partition_options options = {.target = {ETRT_DEVICE_CUDA, 0}, .placements = places,
                                    .num_placements = 1, .cuda_supports = no_neg,
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
#ifndef ETRT_HAVE_CUDA
  /* Without CUDA kernels compiled in, every other operation counts as supported. */
  CHECK(etrt_partition_cuda_default(g, &g->nodes[0], NULL));
  etrt_partitioning *p = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &p));
  CHECK_EQ_INT(p->count, 2);
  CHECK(p->parts[1].device.type == ETRT_DEVICE_CPU && p->parts[1].num_nodes == 2);
  CHECK_EQ_INT(p->parts[0].num_nodes, 1); /* static_reshape */
  CHECK_EQ_INT(p->parts[1].num_inputs, 2); /* x (for its dims) and r */
  etrt_partitioning_destroy(p);
#else
  (void)options;
#endif
  unload(&l);
}

int main(void) {
  RUN_TEST(test_gpu_cpu_gpu);
  RUN_TEST(test_placements);
  RUN_TEST(test_default_value_inputs);
  return TEST_EXIT();
}
