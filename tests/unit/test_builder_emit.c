/* The emitter and the target_device labels: the .pte a partitioned graph becomes,
 * read back with the .pte reader. Copies exactly at host/device boundaries, none
 * between partitions on one GPU, device labels, planned buffers and lifetimes. */
#include <stdint.h>

#include "builder/emit.h"
#include "builder/import.h"
#include "builder/lower.h"
#include "builder/partition.h"
#include "builder/shape_spec.h"
#include "builder/target_device.h"
#include "engine/engine.h"
#include "built_program_testing.h"
#include "onnx_build_testing.h"
#include "pte/pte.h"
#include "test_util.h"

/* --- target_device ------------------------------------------------------------------ */

static uint8_t *tiny_plan(etrt_device device, size_t *size) {
  etrt_network *net = NULL;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, y;
  CHECK_OK(
      etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){4}, (int64_t[]){4}, &x));
  CHECK_OK(etrt_network_add_op(net, "Relu", "r", 1, &x, 1, &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  uint8_t *plan = NULL;
  etrt_plan_options options = {.device = device};
  CHECK_OK(etrt_plan_build(net, &options, &plan, size));
  etrt_network_destroy(net);
  return plan;
}

static void test_target_device_label(void) {
  char label[32];
  etrt_target_device_label((etrt_device){ETRT_DEVICE_CUDA, 1}, NULL, label, sizeof label);
  CHECK(strcmp(label, "cuda:1") == 0);
  etrt_target_device_label((etrt_device){ETRT_DEVICE_CUDA, 1}, "cuda:3", label, sizeof label);
  CHECK(strcmp(label, "cuda:3") == 0); /* the user's label, verbatim */
  etrt_target_device_label((etrt_device){ETRT_DEVICE_CUDA, -1}, NULL, label, sizeof label);
  CHECK(strcmp(label, "cuda:0") == 0); /* no usable index: the seed's fallback */
  etrt_target_device_label((etrt_device){ETRT_DEVICE_CPU, 0}, NULL, label, sizeof label);
  CHECK(strcmp(label, "cpu") == 0);
  etrt_target_device_label((etrt_device){ETRT_DEVICE_CPU, 0}, "cuda:3", label, sizeof label);
  CHECK(strcmp(label, "cpu") == 0); /* a CPU partition is never labelled a GPU */
}

/* The builder labels partitions from the device it built each plan for, without
 * reading the plan back: that device must be the one the engine reads from the plan. */
static void test_plan_records_its_device(void) {
  etrt_device devices[3] = {{ETRT_DEVICE_CPU, 0}, {ETRT_DEVICE_CUDA, 0}, {ETRT_DEVICE_CUDA, 5}};
  for (int k = 0; k < 3; ++k) {
    size_t size;
    uint8_t *plan = tiny_plan(devices[k], &size);
    etrt_engine *engine = NULL;
    CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
    if (engine != NULL) {
      etrt_device read = etrt_engine_device(engine);
      CHECK(read.type == devices[k].type && read.index == devices[k].index);
    }
    etrt_engine_destroy(engine);
    free(plan);
  }
}

/* --- programs --------------------------------------------------------------------------- */

typedef bp_built built;

typedef struct recipe {
  etrt_device target;
  const char *user_target;
  bool io_on_device;
  const etrt_partition_placement *placements;
  uint32_t num_placements;
} recipe;

static bool no_neg(const etrt_ir_graph *graph, const etrt_ir_node *node, void *user) {
  (void)graph;
  (void)user;
  return strcmp(node->op_type, "Neg") != 0;
}

/* x -> r1:Relu -> a -> n1:Neg -> b -> r2:Relu -> c;  add1: a + c -> y */
static uint8_t *diamond(size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {"2", "batch"};
  tm_input(&m, "x", 2, dims);
  tm_node(&m, "Relu", "r1", "x", "a", 0);
  tm_node(&m, "Neg", "n1", "a", "b", 0);
  tm_node(&m, "Relu", "r2", "b", "c", 0);
  tm_node(&m, "Add", "add1", "a,c", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 13, size);
}

static void build(const recipe *r, built *out) {
  memset(out, 0, sizeof *out);
  size_t onnx_size;
  uint8_t *onnx = diamond(&onnx_size);
  etrt_onnx_model *model = NULL;
  etrt_ir_graph *g = NULL;
  CHECK_OK(etrt_onnx_model_parse(onnx, onnx_size, NULL, &model));
  CHECK_OK(etrt_import_onnx(model, &g));
  const char *shape = "batch:1:3";
  CHECK_OK(etrt_shape_specs_apply(g, &shape, 1));
  CHECK_OK(etrt_lower_infer_shapes(g));
  etrt_partition_options options = {.target = r->target,
                                    .placements = r->placements,
                                    .num_placements = r->num_placements,
                                    .cuda_supports = no_neg};
  etrt_partitioning *parts = NULL;
  CHECK_OK(etrt_partition_graph(g, &options, &parts));
  etrt_emit_partition plans[8];
  char labels[8][32];
  for (uint32_t k = 0; parts && k < parts->count; ++k) {
    etrt_plan_options po = {.device = parts->parts[k].device};
    uint8_t *plan = NULL;
    CHECK_OK(etrt_lower_partition_plan(g, &parts->parts[k], &po, NULL, &plan, &plans[k].plan_size));
    plans[k].plan = plan;
    etrt_target_device_label(po.device, r->user_target, labels[k], 32);
    plans[k].target_device = labels[k];
  }
  etrt_emit_options eo = {.io_on_device = r->io_on_device};
  CHECK_OK(etrt_emit_program(g, parts, plans, &eo, &out->bytes, &out->size, NULL));
  for (uint32_t k = 0; parts && k < parts->count; ++k) free((void *)plans[k].plan);
  etrt_partitioning_destroy(parts);
  etrt_ir_graph_destroy(g);
  etrt_onnx_model_free(model);
  free(onnx);
  bp_parse(out);
}

static const etrt_pte_tensor *tensor(const built *b, int32_t index) {
  CHECK(index >= 0 && (size_t)index < b->plan->values_count);
  CHECK(b->plan->values[index].kind == ETRT_PTE_VALUE_TENSOR);
  return &b->plan->values[index].tensor;
}

static bool on_device(const built *b, int32_t index, int device) {
  etrt_device d = etrt_pte_tensor_device(tensor(b, index));
  return device < 0 ? d.type == ETRT_DEVICE_CPU : (d.type == ETRT_DEVICE_CUDA && d.index == device);
}

static const char *op_name(const built *b, const etrt_pte_instruction *in) {
  return b->plan->operators[in->kernel.op_index].name.data;
}

/* Checks instruction i: a copy `op` from `from` to a fresh tensor (args [self, out,
 * out]); returns the out tensor. */
static int32_t expect_copy(const built *b, size_t i, const char *op, int32_t from) {
  const etrt_pte_instruction *in = &b->plan->chains[0].instructions[i];
  CHECK_EQ_INT(in->kind, ETRT_PTE_INSTR_KERNEL);
  if (in->kind != ETRT_PTE_INSTR_KERNEL) return -1;
  CHECK(strcmp(op_name(b, in), op) == 0);
  CHECK_EQ_INT(in->kernel.args.count, 3);
  CHECK_EQ_INT(in->kernel.args.data[0], from);
  CHECK_EQ_INT(in->kernel.args.data[1], in->kernel.args.data[2]);
  return in->kernel.args.data[1];
}

static const etrt_pte_instruction *expect_delegate(const built *b, size_t i, int32_t index,
                                                   size_t args) {
  const etrt_pte_instruction *in = &b->plan->chains[0].instructions[i];
  CHECK_EQ_INT(in->kind, ETRT_PTE_INSTR_DELEGATE);
  CHECK_EQ_INT(in->delegate.delegate_index, index);
  CHECK_EQ_INT(in->delegate.args.count, args);
  return in;
}

static const char *spec(const built *b, size_t delegate) {
  static char text[64];
  const etrt_pte_delegate *d = &b->plan->delegates[delegate];
  CHECK(strcmp(d->id.data, "EtrtBackend") == 0);
  CHECK_EQ_INT(d->location, ETRT_PTE_DATA_SEGMENT);
  CHECK_EQ_INT(d->compile_specs_count, 1);
  CHECK(strcmp(d->compile_specs[0].key.data, "target_device") == 0);
  snprintf(text, sizeof text, "%.*s", (int)d->compile_specs[0].value.size,
           (const char *)d->compile_specs[0].value.data);
  return text;
}

/* GPU (r1), CPU (n1), GPU (r2, add1): copies exactly at the boundaries; `a` goes
 * from the first GPU partition to the last without a host round trip. */
static void test_gpu_cpu_gpu_copies(void) {
  recipe r = {.target = {ETRT_DEVICE_CUDA, 0}};
  built b;
  build(&r, &b);
  const etrt_pte_plan *p = b.plan;
  if (p == NULL) return;
  CHECK_EQ_INT(p->delegates_count, 3);
  CHECK(strcmp(spec(&b, 0), "cuda:0") == 0);
  CHECK(strcmp(spec(&b, 1), "cpu") == 0);
  CHECK(strcmp(spec(&b, 2), "cuda:0") == 0);
  CHECK_EQ_INT(p->chains[0].instructions_count, 7);
  CHECK_EQ_INT(p->inputs.count, 1);
  int32_t x = p->inputs.data[0];
  CHECK(on_device(&b, x, -1) && tensor(&b, x)->has_allocation_info);
  int32_t x_dev = expect_copy(&b, 0, "et_copy::_h2d_copy", x);
  CHECK(on_device(&b, x_dev, 0));
  const etrt_pte_instruction *d0 = expect_delegate(&b, 1, 0, 2);
  CHECK_EQ_INT(d0->delegate.args.data[0], x_dev);
  int32_t a_dev = d0->delegate.args.data[1];
  CHECK(on_device(&b, a_dev, 0));
  int32_t a_host = expect_copy(&b, 2, "et_copy::_d2h_copy", a_dev);
  CHECK(on_device(&b, a_host, -1));
  const etrt_pte_instruction *d1 = expect_delegate(&b, 3, 1, 2);
  CHECK_EQ_INT(d1->delegate.args.data[0], a_host);
  int32_t b_host = d1->delegate.args.data[1];
  CHECK(on_device(&b, b_host, -1));
  int32_t b_dev = expect_copy(&b, 4, "et_copy::_h2d_copy", b_host);
  const etrt_pte_instruction *d2 = expect_delegate(&b, 5, 2, 3);
  CHECK_EQ_INT(d2->delegate.args.data[0], b_dev);
  CHECK_EQ_INT(d2->delegate.args.data[1], a_dev); /* same tensor: no copy between GPUs */
  int32_t y_dev = d2->delegate.args.data[2];
  int32_t y_host = expect_copy(&b, 6, "et_copy::_d2h_copy", y_dev);
  CHECK(p->outputs.count == 1 && p->outputs.data[0] == y_host);
  /* Two operators, each once in the table. */
  CHECK_EQ_INT(p->operators_count, 2);
  CHECK(strcmp(p->operators[0].overload.data, "out") == 0);
  /* Buffers: 0 unused, 1 host, 2 cuda:0. */
  CHECK_EQ_INT(p->non_const_buffer_sizes.count, 3);
  CHECK_EQ_INT(p->non_const_buffer_sizes.data[0], 0);
  CHECK_EQ_INT(p->non_const_buffer_device_count, 1);
  CHECK(p->non_const_buffer_device[0].buffer_idx == 2 &&
        p->non_const_buffer_device[0].device_type == ETRT_DEVICE_CUDA &&
        p->non_const_buffer_device[0].device_index == 0);
  for (size_t i = 0; i < p->values_count; ++i) {
    const etrt_pte_tensor *t = &p->values[i].tensor;
    CHECK(t->has_allocation_info);
    CHECK_EQ_INT(t->allocation_info.memory_id, on_device(&b, (int32_t)i, 0) ? 2 : 1);
    /* [2, batch 1..3] recorded at its largest, as a bound. */
    CHECK(t->sizes.count == 2 && t->sizes.data[0] == 2 && t->sizes.data[1] == 3);
    CHECK_EQ_INT(t->shape_dynamism, ETRT_PTE_SHAPE_DYNAMIC_BOUND);
    CHECK(t->dim_order.count == 2 && t->dim_order.data[1] == 1);
    CHECK_EQ_INT(t->scalar_type, ETRT_DTYPE_FLOAT32);
  }
  /* Tensors of one buffer whose lifetimes overlap do not overlap in memory: x and
   * x_dev are in different buffers; a_dev and y_dev are both live at delegate 2. */
  const etrt_pte_tensor *ta = tensor(&b, a_dev), *ty = tensor(&b, y_dev);
  CHECK(etrt_pte_allocation_offset(&ta->allocation_info) !=
        etrt_pte_allocation_offset(&ty->allocation_info));
  bp_drop(&b);
}

/* Deterministic bytes; a user label is used verbatim for every GPU partition. */
static void test_labels_and_determinism(void) {
  recipe r = {.target = {ETRT_DEVICE_CUDA, 0}};
  built one, two, labelled;
  build(&r, &one);
  build(&r, &two);
  CHECK(one.size == two.size && memcmp(one.bytes, two.bytes, one.size) == 0);
  r.user_target = "cuda:0";
  build(&r, &labelled);
  CHECK(one.size == labelled.size && memcmp(one.bytes, labelled.bytes, one.size) == 0);
  bp_drop(&one);
  bp_drop(&two);
  bp_drop(&labelled);

  r.user_target = "cuda:3";
  build(&r, &one);
  CHECK(strcmp(spec(&one, 0), "cuda:3") == 0);
  CHECK(strcmp(spec(&one, 1), "cpu") == 0);
  CHECK(strcmp(spec(&one, 2), "cuda:3") == 0);
  CHECK(on_device(&one, one.plan->chains[0].instructions[1].delegate.args.data[0], 3));
  CHECK_EQ_INT(one.plan->non_const_buffer_device[0].device_index, 3);
  bp_drop(&one);
}

/* r2 placed on cuda:1: each GPU partition labelled and planned on its own device;
 * a value crossing GPUs goes through the host. */
static void test_two_devices(void) {
  etrt_partition_placement place = {"r2", {ETRT_DEVICE_CUDA, 1}};
  recipe r = {.target = {ETRT_DEVICE_CUDA, 0}, .placements = &place, .num_placements = 1};
  built b;
  build(&r, &b);
  const etrt_pte_plan *p = b.plan;
  if (p == NULL) return;
  CHECK_EQ_INT(p->delegates_count, 4);
  CHECK(strcmp(spec(&b, 0), "cuda:0") == 0);
  CHECK(strcmp(spec(&b, 1), "cpu") == 0);
  CHECK(strcmp(spec(&b, 2), "cuda:1") == 0);
  CHECK(strcmp(spec(&b, 3), "cuda:0") == 0);
  CHECK_EQ_INT(p->non_const_buffer_device_count, 2);
  CHECK(p->non_const_buffer_device[0].buffer_idx == 2 &&
        p->non_const_buffer_device[0].device_index == 0);
  CHECK(p->non_const_buffer_device[1].buffer_idx == 3 &&
        p->non_const_buffer_device[1].device_index == 1);
  /* Every delegate's tensors are on that delegate's device. */
  for (size_t i = 0; i < p->chains[0].instructions_count; ++i) {
    const etrt_pte_instruction *in = &p->chains[0].instructions[i];
    if (in->kind != ETRT_PTE_INSTR_DELEGATE) continue;
    int device = in->delegate.delegate_index == 1 ? -1 : in->delegate.delegate_index == 2 ? 1 : 0;
    for (size_t a = 0; a < in->delegate.args.count; ++a) {
      int32_t v = in->delegate.args.data[a];
      CHECK(on_device(&b, v, device));
      CHECK_EQ_INT(tensor(&b, v)->allocation_info.memory_id, device < 0 ? 1 : device == 0 ? 2 : 3);
    }
  }
  bp_drop(&b);
}

/* Method inputs and outputs on the device: unplanned, labelled, no copies for them. */
static void test_io_on_device(void) {
  recipe r = {.target = {ETRT_DEVICE_CUDA, 2}, .io_on_device = true};
  built b;
  build(&r, &b);
  const etrt_pte_plan *p = b.plan;
  if (p == NULL) return;
  int32_t x = p->inputs.data[0], y = p->outputs.data[0];
  CHECK(on_device(&b, x, 2) && !tensor(&b, x)->has_allocation_info);
  CHECK(on_device(&b, y, 2) && !tensor(&b, y)->has_allocation_info);
  /* The first instruction is the first delegate, reading x directly. */
  const etrt_pte_instruction *d0 = expect_delegate(&b, 0, 0, 2);
  CHECK_EQ_INT(d0->delegate.args.data[0], x);
  /* The last delegate writes y directly. */
  size_t last = p->chains[0].instructions_count - 1;
  const etrt_pte_instruction *d2 = expect_delegate(&b, last, 2, 3);
  CHECK_EQ_INT(d2->delegate.args.data[2], y);
  bp_drop(&b);
}

int main(void) {
  RUN_TEST(test_target_device_label);
  RUN_TEST(test_plan_records_its_device);
  RUN_TEST(test_gpu_cpu_gpu_copies);
  RUN_TEST(test_labels_and_determinism);
  RUN_TEST(test_two_devices);
  RUN_TEST(test_io_on_device);
  return TEST_EXIT();
}
