/* The public builder API (etrt/build.h) end to end on models written in C: the
 * seed's target_device plan, several devices through placements, device I/O,
 * dynamic bounds, atomic files, and every refusal of bad options and models. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/sim.h"
#include "etrt/build.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "built_program_testing.h"
#include "onnx_build_testing.h"
#include "pte/pte.h"
#include "test_util.h"

typedef bp_built built;

static etrt_status build_mlp(const etrt_build_options *options, int symbolic, built *out) {
  memset(out, 0, sizeof *out);
  size_t size;
  uint8_t *onnx = tm_mlp(symbolic, &size);
  etrt_status s = etrt_build_onnx_memory(onnx, size, options, &out->bytes, &out->size);
  free(onnx);
  if (s != ETRT_OK) return s;
  bp_parse(out);
  return ETRT_OK;
}

static bool same_bytes(const built *a, const built *b) {
  return a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

static const char *label(const built *b, size_t delegate) {
  static char text[64];
  const etrt_pte_delegate *d = &b->plan->delegates[delegate];
  snprintf(text, sizeof text, "%.*s", (int)d->compile_specs[0].value.size,
           (const char *)d->compile_specs[0].value.data);
  return text;
}

/* Every tensor a GPU delegate reads or writes is on `device`. */
static void check_boundaries(const built *b, size_t delegate, int device) {
  const etrt_pte_chain *chain = &b->plan->chains[0];
  for (size_t i = 0; i < chain->instructions_count; ++i) {
    const etrt_pte_instruction *in = &chain->instructions[i];
    if (in->kind != ETRT_PTE_INSTR_DELEGATE || in->delegate.delegate_index != (int32_t)delegate)
      continue;
    for (size_t a = 0; a < in->delegate.args.count; ++a) {
      etrt_device d = etrt_pte_tensor_device(&b->plan->values[in->delegate.args.data[a]].tensor);
      if (device < 0)
        CHECK(d.type == ETRT_DEVICE_CPU);
      else
        CHECK(d.type == ETRT_DEVICE_CUDA && d.index == device);
    }
  }
}

static void count_copies(const built *b, int *h2d, int *d2h) {
  *h2d = *d2h = 0;
  const etrt_pte_chain *chain = &b->plan->chains[0];
  for (size_t i = 0; i < chain->instructions_count; ++i) {
    const etrt_pte_instruction *in = &chain->instructions[i];
    if (in->kind != ETRT_PTE_INSTR_KERNEL) continue;
    const char *op = b->plan->operators[in->kernel.op_index].name.data;
    *h2d += strcmp(op, "et_copy::_h2d_copy") == 0;
    *d2h += strcmp(op, "et_copy::_d2h_copy") == 0;
  }
}

/* The seed's test plan. */
static void test_target_device_plan(void) {
  etrt_build_options o;
  etrt_build_options_init(&o);
  built derived, explicit_label, again;

  /* Single engine on cuda:0: the same bytes with and without --target-device cuda:0. */
  o.device = "cuda:0";
  CHECK_OK(build_mlp(&o, 0, &derived));
  CHECK_OK(build_mlp(&o, 0, &again));
  CHECK(same_bytes(&derived, &again)); /* deterministic */
  o.target_device = "cuda:0";
  CHECK_OK(build_mlp(&o, 0, &explicit_label));
  CHECK(same_bytes(&derived, &explicit_label));
  CHECK_EQ_INT(derived.plan->delegates_count, 1);
  CHECK(strcmp(label(&derived, 0), "cuda:0") == 0);
  bp_drop(&derived);
  bp_drop(&again);
  bp_drop(&explicit_label);

  /* cuda:1: the label and the boundary tensors say 1. */
  o.device = "cuda:1";
  o.target_device = NULL;
  CHECK_OK(build_mlp(&o, 0, &derived));
  CHECK(strcmp(label(&derived, 0), "cuda:1") == 0);
  check_boundaries(&derived, 0, 1);
  CHECK(derived.plan->non_const_buffer_device_count == 1 &&
        derived.plan->non_const_buffer_device[0].device_index == 1);
  bp_drop(&derived);

  /* --target-device cuda:3 verbatim for every GPU partition (here two, around a
   * CPU one). */
  etrt_build_placement place = {"relu1", "cpu"};
  o.device = "cuda:0";
  o.target_device = "cuda:3";
  o.placements = &place;
  o.num_placements = 1;
  CHECK_OK(build_mlp(&o, 0, &derived));
  CHECK_EQ_INT(derived.plan->delegates_count, 3);
  CHECK(strcmp(label(&derived, 0), "cuda:3") == 0);
  CHECK(strcmp(label(&derived, 1), "cpu") == 0);
  CHECK(strcmp(label(&derived, 2), "cuda:3") == 0);
  check_boundaries(&derived, 0, 3);
  check_boundaries(&derived, 1, -1);
  check_boundaries(&derived, 2, 3);
  bp_drop(&derived);
}

/* Two engine partitions on two devices, asked for through a placement: each
 * labelled with its own device (the step beyond the seed's cuda:0 fallback). */
static void test_two_devices(void) {
  etrt_build_options o;
  etrt_build_options_init(&o);
  etrt_build_placement place = {"mm2", "cuda:1"};
  o.device = "cuda:0";
  o.placements = &place;
  o.num_placements = 1;
  built b;
  CHECK_OK(build_mlp(&o, 0, &b));
  if (b.plan == NULL) return;
  CHECK_EQ_INT(b.plan->delegates_count, 2);
  CHECK(strcmp(label(&b, 0), "cuda:0") == 0);
  CHECK(strcmp(label(&b, 1), "cuda:1") == 0);
  check_boundaries(&b, 0, 0);
  check_boundaries(&b, 1, 1);
  CHECK_EQ_INT(b.plan->non_const_buffer_device_count, 2);
  int h2d, d2h;
  count_copies(&b, &h2d, &d2h);
  CHECK_EQ_INT(h2d, 2); /* x to cuda:0, the hidden state to cuda:1 */
  CHECK_EQ_INT(d2h, 2); /* the hidden state from cuda:0, y from cuda:1 */
  bp_drop(&b);
}

static void test_device_io_and_bounds(void) {
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = "cuda:0";
  o.io_on_device = 1;
  const char *shape = "batch:1:16";
  o.shapes = &shape;
  o.num_shapes = 1;
  built b;
  CHECK_OK(build_mlp(&o, 1, &b));
  if (b.plan == NULL) return;
  int h2d, d2h;
  count_copies(&b, &h2d, &d2h);
  CHECK(h2d == 0 && d2h == 0);
  const etrt_pte_tensor *x = &b.plan->values[b.plan->inputs.data[0]].tensor;
  CHECK(!x->has_allocation_info && x->has_extra_tensor_info &&
        x->extra_tensor_info.device_type == 1);
  CHECK(x->sizes.data[0] == 16 && x->shape_dynamism == ETRT_PTE_SHAPE_DYNAMIC_BOUND);
  bp_drop(&b);

  /* On the CPU: host tensors, no device buffers, no copies. */
  o.device = "cpu";
  o.io_on_device = 0;
  CHECK_OK(build_mlp(&o, 1, &b));
  count_copies(&b, &h2d, &d2h);
  CHECK(h2d == 0 && d2h == 0 && b.plan->non_const_buffer_device_count == 0);
  CHECK(strcmp(label(&b, 0), "cpu") == 0);
  bp_drop(&b);
}

static int progress_lines;
static bool saw_partition_line;
static void on_progress(const char *line, void *user) {
  (void)user;
  ++progress_lines;
  if (strncmp(line, "partition 0 cuda:2: 3 ops (Gemm x2, Relu)", 41) == 0)
    saw_partition_line = true;
}

static void test_default_device_and_progress(void) {
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = "cuda:2";
  o.progress = on_progress;
  built b;
  CHECK_OK(build_mlp(&o, 0, &b));
  CHECK(progress_lines >= 4);
  CHECK(saw_partition_line);
  bp_drop(&b);
  /* No GPU: the default is the CPU; with simulated GPUs, cuda:0. */
  CHECK_OK(etrt_device_select_sim(0));
  setenv("ETRT_DEVICE", "cpu", 1);
  o.device = NULL;
  o.progress = NULL;
  if (etrt_device_driver_get() == NULL) {
    CHECK_OK(build_mlp(&o, 0, &b));
    CHECK(strcmp(label(&b, 0), "cpu") == 0);
    bp_drop(&b);
  }
  CHECK_OK(etrt_device_select_sim(2));
  CHECK_OK(build_mlp(&o, 0, &b));
  CHECK(strcmp(label(&b, 0), "cuda:0") == 0);
  bp_drop(&b);
  unsetenv("ETRT_DEVICE");
}

static void test_refusals(void) {
  etrt_build_options o;
  etrt_build_options_init(&o);
  built b;
  CHECK_FAILS(
      build_mlp(&o, 1, &b), ETRT_ERROR_UNSUPPORTED,
      "input 'x' axis 0 has the symbolic size 'batch' with no bounds: pass --shape batch:MIN:MAX");
  o.device = "gpu:0";
  CHECK_FAILS(build_mlp(&o, 0, &b), ETRT_ERROR_INVALID_ARGUMENT, "device 'gpu:0'");
  o.device = "cuda:0";
  o.target_device = "tpu";
  CHECK_FAILS(build_mlp(&o, 0, &b), ETRT_ERROR_INVALID_ARGUMENT, "target device 'tpu'");
  o.target_device = NULL;
  etrt_build_placement bad_device = {"mm1", "cuda"};
  bad_device.device = "cuda:x";
  o.placements = &bad_device;
  o.num_placements = 1;
  CHECK_FAILS(build_mlp(&o, 0, &b), ETRT_ERROR_INVALID_ARGUMENT, "placement 0");
  etrt_build_placement nobody = {"nobody", "cpu"};
  o.placements = &nobody;
  CHECK_FAILS(build_mlp(&o, 0, &b), ETRT_ERROR_INVALID_ARGUMENT, "no node named 'nobody'");
  o.placements = NULL;
  o.num_placements = 0;
  const char *bad_shape = "batch";
  o.shapes = &bad_shape;
  o.num_shapes = 1;
  CHECK_FAILS(build_mlp(&o, 1, &b), ETRT_ERROR_INVALID_ARGUMENT, "--shape 'batch'");
  o.num_shapes = 0;
  o.precision = (etrt_precision)9;
  CHECK_FAILS(build_mlp(&o, 0, &b), ETRT_ERROR_INVALID_ARGUMENT, "precision 9");
  o.precision = ETRT_PRECISION_FP16;
  CHECK_OK(build_mlp(&o, 0, &b));
  bp_drop(&b);
  o.precision = ETRT_PRECISION_FP32;

  /* Not a model; an operator the engine does not have. */
  uint8_t *pte = NULL;
  size_t pte_size = 0;
  const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01};
  CHECK_FAILS(etrt_build_onnx_memory(junk, sizeof junk, &o, &pte, &pte_size),
              ETRT_ERROR_INVALID_FORMAT, "");
  CHECK(pte == NULL);
  tm_model m;
  tm_init(&m);
  const char *dims[1] = {"2"};
  tm_input(&m, "x", 1, dims);
  tm_node(&m, "Frobnicate", "f1", "x", "t", 0);
  tm_node(&m, "Relu", "r1", "t", "u", 0);
  tm_node(&m, "Frobnicate", "f2", "u", "y", 0);
  tm_output(&m, "y");
  size_t size;
  uint8_t *onnx = tm_finish(&m, 13, &size);
  CHECK_FAILS(etrt_build_onnx_memory(onnx, size, &o, &pte, &pte_size), ETRT_ERROR_UNSUPPORTED,
              "the engine has no operator Frobnicate (node 'f1')");
  free(onnx);
}

static void test_files(void) {
  char onnx_path[512], pte_path[512];
  snprintf(onnx_path, sizeof onnx_path, "%s/mlp.onnx", etrt_test_tmpdir());
  snprintf(pte_path, sizeof pte_path, "%s/mlp.pte", etrt_test_tmpdir());
  size_t size;
  uint8_t *onnx = tm_mlp(1, &size);
  FILE *f = fopen(onnx_path, "wb");
  CHECK(f != NULL && fwrite(onnx, 1, size, f) == size);
  if (f) fclose(f);
  free(onnx);
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = "cpu";
  /* A failed build writes nothing. */
  CHECK_FAILS(etrt_build_onnx_file(onnx_path, &o, pte_path), ETRT_ERROR_UNSUPPORTED, "batch");
  struct stat st;
  CHECK(stat(pte_path, &st) != 0);
  const char *shape = "x:3x4";
  o.shapes = &shape;
  o.num_shapes = 1;
  CHECK_OK(etrt_build_onnx_file(onnx_path, &o, pte_path));
  CHECK(stat(pte_path, &st) == 0 && st.st_size > 0);
  CHECK_FAILS(etrt_build_onnx_file("/nonexistent/model.onnx", &o, pte_path), ETRT_ERROR_NOT_FOUND,
              "");
}

/* A Resize by scales from a graph input has no size bound: its output stays in its CPU
 * plan's memory, where the method's output points after each execute (or is copied to
 * memory the caller set); on a GPU target what reads it (the Relu) stays in that plan. */
static void test_unbounded_value_stays_on_cpu(void) {
  tm_model m;
  tm_init(&m);
  tm_input(&m, "x", 4, (const char *const[]){"1", "1", "2", "2"});
  tm_input(&m, "scales", 1, (const char *const[]){"4"});
  tm_node(&m, "Resize", "up", "x,,scales", "r", 0);
  tm_node(&m, "Relu", "relu", "r", "y", 0);
  tm_output(&m, "y");
  size_t size;
  uint8_t *onnx = tm_finish(&m, 13, &size);
  etrt_build_options o;
  etrt_build_options_init(&o);
  uint8_t *bytes = NULL;
  size_t out_size = 0;
  /* On the CPU it builds: the engine holds the output's memory. */
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &bytes, &out_size));
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  CHECK_OK(etrt_program_load_memory(bytes, out_size, NULL, &program));
  CHECK_OK(etrt_method_create(program, "forward", &method));
  float x[4] = {1, -2, 3, -4}, twice[4] = {1, 1, 2, 2}, thrice[4] = {1, 1, 3, 3};
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 4, {1, 1, 2, 2}};
  etrt_tensor_view vs = {twice, ETRT_DTYPE_FLOAT32, 1, {4}};
  etrt_tensor_view y;
  CHECK_OK(etrt_method_set_input(method, 0, &vx));
  CHECK_OK(etrt_method_set_input(method, 1, &vs));
  CHECK_OK(etrt_method_execute(method));
  CHECK_OK(etrt_method_get_output(method, 0, &y));
  CHECK(y.rank == 4 && y.sizes[2] == 4 && y.sizes[3] == 4);
  CHECK(((const float *)y.data)[15] == 0.0f && ((const float *)y.data)[8] == 3.0f); /* Relu */
  vs.data = thrice;
  CHECK_OK(etrt_method_set_input(method, 1, &vs));
  CHECK_OK(etrt_method_execute(method));
  CHECK_OK(etrt_method_get_output(method, 0, &y));
  CHECK(y.sizes[2] == 6 && y.sizes[3] == 6);
  CHECK(((const float *)y.data)[35] == 0.0f && ((const float *)y.data)[30] == 3.0f);
  /* Memory the caller sets receives a copy, as long as the run's output fits it. */
  float mine[16] = {0};
  CHECK_OK(etrt_method_set_output(method, 0, mine, sizeof mine));
  CHECK_FAILS(etrt_method_execute(method), ETRT_ERROR_INVALID_ARGUMENT,
              "the run gave more bytes than the memory set for it holds");
  vs.data = twice;
  CHECK_OK(etrt_method_set_input(method, 1, &vs));
  CHECK_OK(etrt_method_execute(method));
  CHECK_OK(etrt_method_get_output(method, 0, &y));
  CHECK(y.data == (void *)mine && mine[8] == 3.0f && mine[5] == 1.0f && mine[15] == 0.0f);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(bytes);
  bytes = NULL;
  o.device = "cuda:0";
  CHECK_OK(etrt_build_onnx_memory(onnx, size, &o, &bytes, &out_size));
  program = NULL;
  method = NULL;
  if (bytes != NULL) CHECK_OK(etrt_program_load_memory(bytes, out_size, NULL, &program));
  if (program != NULL) CHECK_OK(etrt_method_create(program, "forward", &method));
  if (method != NULL) {
    vs.data = thrice;
    CHECK_OK(etrt_method_set_input(method, 0, &vx));
    CHECK_OK(etrt_method_set_input(method, 1, &vs));
    CHECK_OK(etrt_method_execute(method));
    CHECK_OK(etrt_method_get_output(method, 0, &y));
    CHECK(y.rank == 4 && y.sizes[2] == 6 && y.sizes[3] == 6);
    CHECK(((const float *)y.data)[35] == 0.0f && ((const float *)y.data)[30] == 3.0f);
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(bytes);
  free(onnx);
}

int main(void) {
  CHECK_OK(etrt_device_select_sim(4));
  RUN_TEST(test_target_device_plan);
  RUN_TEST(test_two_devices);
  RUN_TEST(test_device_io_and_bounds);
  RUN_TEST(test_default_device_and_progress);
  RUN_TEST(test_refusals);
  RUN_TEST(test_files);
  CHECK_OK(etrt_device_select_sim(0));
  RUN_TEST(test_unbounded_value_stays_on_cpu);
  return TEST_EXIT();
}
