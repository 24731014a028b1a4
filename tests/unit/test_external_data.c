/* EXTERNAL tensors: found by fully qualified name in the .ptd given at load, then
 * in the program's own named data, whatever their data_buffer_idx says; every
 * mismatch refused at method creation naming the key. The program is y = x * w
 * with w EXTERNAL ("layer.weight", three floats). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "pte/ptd.h"
#include "pte/pte.h"
#include "test_util.h"

#define KEY "layer.weight"

static const float weight[3] = {2, -1, 0.5f};
static const float decoy[3] = {100, 200, 300};

typedef struct external_spec {
  uint32_t data_buffer_idx; /* what the writer left in the EXTERNAL tensor */
  int planned;              /* the EXTERNAL tensor has a planned buffer too */
  const void *named;        /* named data for KEY inside the .pte, or NULL */
  size_t named_size;
} external_spec;

static etrt_pte_tensor float_vector(etrt_pte_builder *b) {
  etrt_pte_tensor t;
  memset(&t, 0, sizeof t);
  int32_t sizes[1] = {3};
  uint8_t order[1] = {0};
  t.scalar_type = ETRT_DTYPE_FLOAT32;
  t.sizes = etrt_pte_builder_i32s(b, sizes, 1);
  t.dim_order = etrt_pte_builder_u8s(b, order, 1);
  return t;
}

static void plan_in_arena(etrt_pte_tensor *t, uint32_t offset) {
  t->has_allocation_info = 1;
  t->allocation_info.memory_id = 1;
  t->allocation_info.memory_offset_low = offset;
}

static uint8_t *write_program(const external_spec *spec, size_t *size) {
  etrt_pte_builder *b = NULL;
  CHECK_OK(etrt_pte_builder_create(&b));
  etrt_pte_value *values = ETRT_PTE_NEW(b, etrt_pte_value, 3);
  for (int i = 0; i < 3; ++i) {
    values[i].kind = ETRT_PTE_VALUE_TENSOR;
    values[i].tensor = float_vector(b);
  }
  plan_in_arena(&values[0].tensor, 0);
  plan_in_arena(&values[2].tensor, 64);
  /* A real constant at index 1 with other values: the name must win over it. */
  uint32_t decoy_idx = 0;
  CHECK_OK(etrt_pte_builder_add_constant(b, decoy, sizeof decoy, &decoy_idx));
  CHECK_EQ_INT(decoy_idx, 1);
  etrt_pte_tensor *w = &values[1].tensor;
  w->data_buffer_idx = spec->data_buffer_idx;
  if (spec->planned) plan_in_arena(w, 128);
  w->has_extra_tensor_info = 1;
  w->extra_tensor_info.location = ETRT_PTE_TENSOR_EXTERNAL;
  w->extra_tensor_info.fully_qualified_name = etrt_pte_builder_str(b, KEY);
  if (spec->named != NULL)
    CHECK_OK(etrt_pte_builder_add_named_data(b, KEY, spec->named, spec->named_size, 16));

  etrt_pte_operator *op = ETRT_PTE_NEW(b, etrt_pte_operator, 1);
  op->name = etrt_pte_builder_str(b, "aten::mul");
  op->overload = etrt_pte_builder_str(b, "out");
  int32_t args[4] = {0, 1, 2, 2}, in[1] = {0}, out[1] = {2};
  etrt_pte_instruction *ins = ETRT_PTE_NEW(b, etrt_pte_instruction, 1);
  ins->kind = ETRT_PTE_INSTR_KERNEL;
  ins->kernel.op_index = 0;
  ins->kernel.args = etrt_pte_builder_i32s(b, args, 4);
  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  chain->inputs = etrt_pte_builder_i32s(b, in, 1);
  chain->outputs = etrt_pte_builder_i32s(b, out, 1);
  chain->instructions = ins;
  chain->instructions_count = 1;
  etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  plan->name = etrt_pte_builder_str(b, "forward");
  plan->values = values;
  plan->values_count = 3;
  plan->inputs = chain->inputs;
  plan->outputs = chain->outputs;
  plan->chains = chain;
  plan->chains_count = 1;
  plan->operators = op;
  plan->operators_count = 1;
  int64_t buffers[2] = {0, 192};
  plan->non_const_buffer_sizes = etrt_pte_builder_i64s(b, buffers, 2);
  etrt_pte_program *program = etrt_pte_builder_program(b);
  program->plans = plan;
  program->plans_count = 1;
  uint8_t *bytes = NULL;
  CHECK_OK(etrt_pte_builder_write(b, &bytes, size));
  etrt_pte_builder_destroy(b);
  return bytes;
}

/* Writes a .ptd holding `blob` and returns its path (a static buffer). */
static const char *write_ptd(const etrt_ptd_blob *blob) {
  static char path[512];
  snprintf(path, sizeof path, "%s/external.ptd", etrt_test_tmpdir());
  uint8_t *ptd = NULL;
  size_t size = 0;
  CHECK_OK(etrt_ptd_write(blob, 1, &ptd, &size));
  CHECK_OK(etrt_file_write_atomic(path, ptd, size));
  free(ptd);
  return path;
}

/* Runs y = x * w on x = {1, 2, 3}; true when y = x * expected. */
static int runs_with(const uint8_t *pte, size_t size, const char *data_path,
                     const float *expected) {
  etrt_program_options options = {.data_path = data_path};
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  float x[3] = {1, 2, 3};
  etrt_tensor_view in = {x, ETRT_DTYPE_FLOAT32, 1, {3}}, out;
  etrt_status s = etrt_program_load_memory(pte, size, &options, &program);
  if (s == ETRT_OK) s = etrt_method_create(program, "forward", &method);
  if (s == ETRT_OK) s = etrt_method_set_input(method, 0, &in);
  if (s == ETRT_OK) s = etrt_method_execute(method);
  if (s == ETRT_OK) s = etrt_method_get_output(method, 0, &out);
  int ok = s == ETRT_OK;
  if (!ok) fprintf(stderr, "runs_with: %s\n", etrt_last_error());
  for (int i = 0; ok && i < 3; ++i) ok = ((const float *)out.data)[i] == x[i] * expected[i];
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  return ok;
}

/* Method creation fails with `status` and a message containing `text`. */
static void refused_with(const uint8_t *pte, size_t size, const char *data_path, etrt_status status,
                         const char *text) {
  etrt_program_options options = {.data_path = data_path};
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  CHECK_OK(etrt_program_load_memory(pte, size, &options, &program));
  CHECK_FAILS(etrt_method_create(program, "forward", &method), status, text);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
}

static void test_found_by_name_whatever_the_index(void) {
  etrt_ptd_blob blob = {.key = KEY, .data = weight, .size = sizeof weight};
  const char *ptd = write_ptd(&blob);
  /* Index 1 is a real constant (the decoy), index 7 does not exist: the name wins. */
  uint32_t indices[3] = {0, 1, 7};
  for (int i = 0; i < 3; ++i) {
    external_spec spec = {.data_buffer_idx = indices[i]};
    size_t size;
    uint8_t *pte = write_program(&spec, &size);
    CHECK(runs_with(pte, size, ptd, weight));
    free(pte);
  }
  /* A planned EXTERNAL tensor starts from the named bytes. */
  external_spec planned = {.data_buffer_idx = 3, .planned = 1};
  size_t size;
  uint8_t *pte = write_program(&planned, &size);
  CHECK(runs_with(pte, size, ptd, weight));
  free(pte);
  /* A layout recording the same dtype is accepted. */
  etrt_ptd_blob typed = blob;
  int32_t dims[1] = {3};
  uint8_t order[1] = {0};
  typed.has_layout = true;
  typed.layout = (etrt_ptd_tensor_layout){ETRT_DTYPE_FLOAT32, {dims, 1}, {order, 1}};
  ptd = write_ptd(&typed);
  external_spec spec = {.data_buffer_idx = 2};
  pte = write_program(&spec, &size);
  CHECK(runs_with(pte, size, ptd, weight));
  free(pte);
}

static void test_named_data_in_the_program(void) {
  /* No data file: the program's own named data holds the key. */
  external_spec spec = {.data_buffer_idx = 1, .named = weight, .named_size = sizeof weight};
  size_t size;
  uint8_t *pte = write_program(&spec, &size);
  CHECK(runs_with(pte, size, NULL, weight));
  /* With a data file holding the key too, the data file wins. */
  etrt_ptd_blob blob = {.key = KEY, .data = decoy, .size = sizeof decoy};
  CHECK(runs_with(pte, size, write_ptd(&blob), decoy));
  /* A data file without the key: the program's named data is used. */
  etrt_ptd_blob other = {.key = "other", .data = decoy, .size = sizeof decoy};
  CHECK(runs_with(pte, size, write_ptd(&other), weight));
  free(pte);
}

static void test_refusals(void) {
  external_spec spec = {.data_buffer_idx = 1};
  size_t size;
  uint8_t *pte = write_program(&spec, &size);
  /* No data file given, and the program has no such named data. */
  refused_with(pte, size, NULL, ETRT_ERROR_NOT_FOUND,
               "tensor '" KEY
               "' is external and the program's named data does not hold it: load the program "
               "with its .ptd data file");
  /* The data file lacks the key. */
  etrt_ptd_blob other = {.key = "other", .data = weight, .size = sizeof weight};
  refused_with(pte, size, write_ptd(&other), ETRT_ERROR_NOT_FOUND,
               "external tensor '" KEY
               "' is neither in the data file nor in the program's named data");
  /* The entry holds more bytes than the tensor, then fewer. */
  float four[4] = {1, 2, 3, 4};
  etrt_ptd_blob longer = {.key = KEY, .data = four, .size = sizeof four};
  refused_with(pte, size, write_ptd(&longer), ETRT_ERROR_INVALID_FORMAT,
               "external tensor '" KEY "' has 16 bytes in the data file, the tensor needs 12");
  etrt_ptd_blob shorter = {.key = KEY, .data = four, .size = 8};
  refused_with(pte, size, write_ptd(&shorter), ETRT_ERROR_INVALID_FORMAT,
               "external tensor '" KEY "' has 8 bytes in the data file, the tensor needs 12");
  /* The data file records another dtype of the same size. */
  int32_t ints[3] = {1, 2, 3}, dims[1] = {3};
  uint8_t order[1] = {0};
  etrt_ptd_blob typed = {.key = KEY, .data = ints, .size = sizeof ints, .has_layout = true};
  typed.layout = (etrt_ptd_tensor_layout){ETRT_DTYPE_INT32, {dims, 1}, {order, 1}};
  char expected[160];
  snprintf(expected, sizeof expected,
           "external tensor '%s' is %s in the data file, but the program declares it %s", KEY,
           etrt_dtype_name(ETRT_DTYPE_INT32), etrt_dtype_name(ETRT_DTYPE_FLOAT32));
  refused_with(pte, size, write_ptd(&typed), ETRT_ERROR_INVALID_FORMAT, expected);
  free(pte);
  /* The program's named data has the wrong size. */
  external_spec named = {.data_buffer_idx = 1, .named = four, .named_size = sizeof four};
  pte = write_program(&named, &size);
  refused_with(pte, size, NULL, ETRT_ERROR_INVALID_FORMAT,
               "external tensor '" KEY
               "' has 16 bytes in the program's named data, the tensor needs 12");
  free(pte);
  /* A planned EXTERNAL tensor is refused the same way. */
  external_spec planned = {.data_buffer_idx = 1, .planned = 1};
  pte = write_program(&planned, &size);
  refused_with(pte, size, write_ptd(&longer), ETRT_ERROR_INVALID_FORMAT,
               "has 16 bytes in the data file");
  free(pte);
}

int main(void) {
  RUN_TEST(test_found_by_name_whatever_the_index);
  RUN_TEST(test_named_data_in_the_program);
  RUN_TEST(test_refusals);
  return TEST_EXIT();
}
