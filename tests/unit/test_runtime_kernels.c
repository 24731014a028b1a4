/* The runtime's own instructions on hand-built programs: every portable operator,
 * the copies, MoveCall / JumpFalseCall / FreeCall, and external tensors from a .ptd. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "pte/ptd.h"
#include "pte/pte.h"
#include "test_programs.h"
#include "test_util.h"

/* --- a small program writer: values through the shared KernelCall writer
 * (tests/util/test_programs.h), instructions of every kind here ------------------ */

typedef etrt_test_kp program_spec;

static void spec_init(program_spec *p) { etrt_test_kp_init(p); }

/* A float32 tensor planned in the host arena (or, with `constant`, a constant). */
static int32_t spec_tensor(program_spec *p, int32_t rank, const int32_t *sizes,
                           const float *constant, int dynamic) {
  return etrt_test_kp_tensor(p, ETRT_DTYPE_FLOAT32, rank, sizes, constant, dynamic);
}

typedef struct instruction_spec {
  etrt_pte_instruction_kind kind;
  int32_t op; /* kernel: index into `ops` */
  int32_t args[8];
  uint32_t num_args;
} instruction_spec;

static uint8_t *spec_write(program_spec *p, const char *const *ops, uint32_t num_ops,
                           const instruction_spec *ins, uint32_t num_ins, const int32_t *inputs,
                           uint32_t num_inputs, const int32_t *outputs, uint32_t num_outputs,
                           size_t *size) {
  etrt_pte_builder *b = p->b;
  etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  etrt_pte_operator *operators = ETRT_PTE_NEW(b, etrt_pte_operator, num_ops ? num_ops : 1);
  for (uint32_t i = 0; i < num_ops; ++i) {
    const char *dot = strrchr(ops[i], '.');
    operators[i].name = etrt_pte_builder_strn(b, ops[i], (size_t)(dot - ops[i]));
    operators[i].overload = etrt_pte_builder_str(b, dot + 1);
  }
  etrt_pte_instruction *instructions = ETRT_PTE_NEW(b, etrt_pte_instruction, num_ins);
  for (uint32_t i = 0; i < num_ins; ++i) {
    instructions[i].kind = ins[i].kind;
    if (ins[i].kind == ETRT_PTE_INSTR_KERNEL) {
      instructions[i].kernel.op_index = ins[i].op;
      instructions[i].kernel.args = etrt_pte_builder_i32s(b, ins[i].args, ins[i].num_args);
    } else if (ins[i].kind == ETRT_PTE_INSTR_MOVE) {
      instructions[i].move.move_from = ins[i].args[0];
      instructions[i].move.move_to = ins[i].args[1];
    } else if (ins[i].kind == ETRT_PTE_INSTR_JUMP_FALSE) {
      instructions[i].jump_false.cond_value_index = ins[i].args[0];
      instructions[i].jump_false.destination_instruction = ins[i].args[1];
    } else if (ins[i].kind == ETRT_PTE_INSTR_FREE) {
      instructions[i].free_call.value_index = ins[i].args[0];
    }
  }
  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  chain->inputs = etrt_pte_builder_i32s(b, inputs, num_inputs);
  chain->outputs = etrt_pte_builder_i32s(b, outputs, num_outputs);
  chain->instructions = instructions;
  chain->instructions_count = num_ins;
  etrt_pte_value *values = ETRT_PTE_NEW(b, etrt_pte_value, p->num_values);
  memcpy(values, p->values, p->num_values * sizeof *values);
  plan->name = etrt_pte_builder_str(b, "forward");
  plan->values = values;
  plan->values_count = p->num_values;
  plan->inputs = chain->inputs;
  plan->outputs = chain->outputs;
  plan->chains = chain;
  plan->chains_count = 1;
  plan->operators = operators;
  plan->operators_count = num_ops;
  int64_t buffers[2] = {0, p->arena};
  plan->non_const_buffer_sizes = etrt_pte_builder_i64s(b, buffers, 2);
  etrt_pte_program *program = etrt_pte_builder_program(b);
  program->plans = plan;
  program->plans_count = 1;
  uint8_t *bytes = NULL;
  CHECK_OK(etrt_pte_builder_write(b, &bytes, size));
  etrt_pte_builder_destroy(b);
  return bytes;
}

/* Runs a one-method program on float inputs; returns the first output copied. */
static int run_program(const uint8_t *pte, size_t size, const etrt_program_options *options,
                       const float *const *inputs, int64_t (*sizes)[ETRT_MAX_RANK],
                       const int32_t *ranks, uint32_t num_inputs, float *out, size_t out_count,
                       etrt_tensor_view *out_view) {
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  etrt_status s = etrt_program_load_memory(pte, size, options, &program);
  if (s == ETRT_OK) s = etrt_method_create(program, "forward", &method);
  for (uint32_t i = 0; s == ETRT_OK && i < num_inputs; ++i) {
    etrt_tensor_view v = {(void *)inputs[i], ETRT_DTYPE_FLOAT32, ranks[i], {0}};
    memcpy(v.sizes, sizes[i], sizeof v.sizes);
    s = etrt_method_set_input(method, i, &v);
  }
  if (s == ETRT_OK) s = etrt_method_execute(method);
  etrt_tensor_view view;
  if (s == ETRT_OK) s = etrt_method_get_output(method, 0, &view);
  if (s == ETRT_OK) {
    memcpy(out, view.data, out_count * sizeof *out);
    if (out_view != NULL) *out_view = view;
  } else {
    fprintf(stderr, "run_program: %s\n", etrt_last_error());
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  return s == ETRT_OK;
}

/* --- portable operators ---------------------------------------------------------- */

static void test_sub_with_alpha_and_relu(void) {
  program_spec p;
  spec_init(&p);
  int32_t dims[1] = {4};
  int32_t a = spec_tensor(&p, 1, dims, NULL, 0), b = spec_tensor(&p, 1, dims, NULL, 0);
  int32_t alpha = etrt_test_kp_int(&p, 2);
  int32_t d = spec_tensor(&p, 1, dims, NULL, 0), y = spec_tensor(&p, 1, dims, NULL, 0);
  const char *ops[] = {"aten::sub.out", "aten::relu.out"};
  instruction_spec ins[] = {{ETRT_PTE_INSTR_KERNEL, 0, {a, b, alpha, d, d}, 5},
                            {ETRT_PTE_INSTR_KERNEL, 1, {d, y, y}, 3}};
  size_t size;
  uint8_t *pte = spec_write(&p, ops, 2, ins, 2, (int32_t[]){a, b}, 2, &y, 1, &size);
  float x0[4] = {1, 2, 3, 4}, x1[4] = {1, -1, 2, 0}, out[4];
  const float *in[2] = {x0, x1};
  int64_t sizes[2][ETRT_MAX_RANK] = {{4}, {4}};
  CHECK(run_program(pte, size, NULL, in, sizes, (int32_t[]){1, 1}, 2, out, 4, NULL));
  for (int i = 0; i < 4; ++i) {
    float want = x0[i] - 2 * x1[i];
    CHECK_NEAR(out[i], want > 0 ? want : 0, 1e-6); /* relu(a - alpha * b) */
  }
  free(pte);
}

static void test_mm_addmm_linear(void) {
  /* y = linear(addmm(c, mm(a, b), w_t, beta=0.5, alpha=2), w, bias) over a rank-3 input. */
  program_spec p;
  spec_init(&p);
  float bmat[6] = {1, 0, 2, -1, 0.5f, 3};    /* [2, 3] */
  float w2[9] = {1, 0, 0, 0, 1, 0, 1, 1, 1}; /* [3, 3] */
  float c[3] = {0.5f, -0.5f, 1};             /* [3] broadcast over rows */
  float w[6] = {1, 2, 3, -1, 0, 1};          /* linear weight [2, 3] (out, in) */
  float bias[2] = {0.25f, -0.25f};
  int32_t a = spec_tensor(&p, 2, (int32_t[]){2, 2}, NULL, 0);
  int32_t bc = spec_tensor(&p, 2, (int32_t[]){2, 3}, bmat, 0);
  int32_t m = spec_tensor(&p, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t w2c = spec_tensor(&p, 2, (int32_t[]){3, 3}, w2, 0);
  int32_t cc = spec_tensor(&p, 1, (int32_t[]){3}, c, 0);
  int32_t beta = etrt_test_kp_double(&p, 0.5), alpha = etrt_test_kp_int(&p, 2);
  int32_t am = spec_tensor(&p, 2, (int32_t[]){2, 3}, NULL, 0);
  int32_t am3 = spec_tensor(&p, 3, (int32_t[]){1, 2, 3}, NULL, 0);
  int32_t wc = spec_tensor(&p, 2, (int32_t[]){2, 3}, w, 0);
  int32_t bc2 = spec_tensor(&p, 1, (int32_t[]){2}, bias, 0);
  int32_t y = spec_tensor(&p, 3, (int32_t[]){1, 2, 2}, NULL, 0);
  int32_t y2 = spec_tensor(&p, 3, (int32_t[]){1, 2, 2}, NULL, 0);
  int32_t none = etrt_test_kp_none(&p);
  const char *ops[] = {"aten::mm.out", "aten::addmm.out", "aten::linear.out"};
  /* am3 shares am's memory: a MoveCall cannot reshape, so the test copies the
   * rank-2 result into a rank-3 view with the same planned bytes. */
  p.values[am3].tensor.allocation_info = p.values[am].tensor.allocation_info;
  instruction_spec ins[] = {{ETRT_PTE_INSTR_KERNEL, 0, {a, bc, m, m}, 4},
                            {ETRT_PTE_INSTR_KERNEL, 1, {cc, m, w2c, beta, alpha, am, am}, 7},
                            {ETRT_PTE_INSTR_KERNEL, 2, {am3, wc, bc2, y, y}, 5},
                            {ETRT_PTE_INSTR_KERNEL, 2, {am3, wc, none, y2, y2}, 5}};
  size_t size;
  uint8_t *pte = spec_write(&p, ops, 3, ins, 4, &a, 1, (int32_t[]){y, y2}, 2, &size);
  float x[4] = {1, 2, -1, 0.5f};
  const float *in[1] = {x};
  int64_t sizes[1][ETRT_MAX_RANK] = {{2, 2}};
  float out[4];
  CHECK(run_program(pte, size, NULL, in, sizes, (int32_t[]){2}, 1, out, 4, NULL));
  /* Reference in plain loops. */
  float mm[6], ad[6], want[4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) mm[i * 3 + j] = x[i * 2] * bmat[j] + x[i * 2 + 1] * bmat[3 + j];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      float acc = 0;
      for (int k = 0; k < 3; ++k) acc += mm[i * 3 + k] * w2[k * 3 + j];
      ad[i * 3 + j] = 0.5f * c[j] + 2 * acc;
    }
  for (int i = 0; i < 2; ++i)
    for (int o = 0; o < 2; ++o) {
      float acc = bias[o];
      for (int k = 0; k < 3; ++k) acc += ad[i * 3 + k] * w[o * 3 + k];
      want[i * 2 + o] = acc;
    }
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], want[i], 1e-4);
  free(pte);
}

/* --- control flow --------------------------------------------------------------- */

static uint8_t *control_program(int condition, size_t *size) {
  /* 0: jump_false(cond) -> 2;  1: mul(x, x) -> t;  2: relu(x) -> u;  3: move u -> t
   * only when jumped... the output is t: x*x when cond, relu(x) moved into t when not. */
  program_spec p;
  spec_init(&p);
  int32_t dims[1] = {3};
  int32_t x = spec_tensor(&p, 1, dims, NULL, 0), t = spec_tensor(&p, 1, dims, NULL, 0),
          u = spec_tensor(&p, 1, dims, NULL, 0);
  int32_t cond = etrt_test_kp_bool(&p, condition), not_cond = etrt_test_kp_bool(&p, !condition);
  int32_t out = spec_tensor(&p, 1, dims, NULL, 0);
  const char *ops[] = {"aten::mul.out", "aten::relu.out"};
  instruction_spec ins[] = {
      {ETRT_PTE_INSTR_JUMP_FALSE, 0, {cond, 3}, 2}, /* not cond: skip the mul */
      {ETRT_PTE_INSTR_KERNEL, 0, {x, x, t, t}, 4},
      {ETRT_PTE_INSTR_JUMP_FALSE, 0, {not_cond, 5}, 2}, /* cond: skip the relu */
      {ETRT_PTE_INSTR_KERNEL, 1, {x, u, u}, 3},
      {ETRT_PTE_INSTR_MOVE, 0, {u, t}, 2},
      {ETRT_PTE_INSTR_MOVE, 0, {t, out}, 2},
      {ETRT_PTE_INSTR_FREE, 0, {u}, 1},
  };
  return spec_write(&p, ops, 2, ins, 7, &x, 1, &out, 1, size);
}

static void test_jump_move_free(void) {
  float x[3] = {-2, 0.5f, 3}, out[3];
  const float *in[1] = {x};
  int64_t sizes[1][ETRT_MAX_RANK] = {{3}};
  size_t size;
  uint8_t *pte = control_program(1, &size);
  CHECK(run_program(pte, size, NULL, in, sizes, (int32_t[]){1}, 1, out, 3, NULL));
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], x[i] * x[i], 0);
  free(pte);
  pte = control_program(0, &size);
  CHECK(run_program(pte, size, NULL, in, sizes, (int32_t[]){1}, 1, out, 3, NULL));
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], x[i] > 0 ? x[i] : 0, 0);
  free(pte);
}

/* --- external tensors ------------------------------------------------------------ */

static void test_external_tensor_from_ptd(void) {
  program_spec p;
  spec_init(&p);
  int32_t dims[1] = {3};
  int32_t x = spec_tensor(&p, 1, dims, NULL, 0);
  int32_t w = spec_tensor(&p, 1, dims, NULL, 0);
  etrt_pte_tensor *wt = &p.values[w].tensor;
  wt->has_allocation_info = 0;
  wt->has_extra_tensor_info = 1;
  wt->extra_tensor_info.location = ETRT_PTE_TENSOR_EXTERNAL;
  wt->extra_tensor_info.fully_qualified_name = etrt_pte_builder_str(p.b, "layer.weight");
  int32_t y = spec_tensor(&p, 1, dims, NULL, 0);
  const char *ops[] = {"aten::mul.out"};
  instruction_spec ins[] = {{ETRT_PTE_INSTR_KERNEL, 0, {x, w, y, y}, 4}};
  size_t size;
  uint8_t *pte = spec_write(&p, ops, 1, ins, 1, &x, 1, &y, 1, &size);
  float weight[3] = {2, -1, 0.5f};
  etrt_ptd_blob blob = {.key = "layer.weight", .data = weight, .size = sizeof weight};
  uint8_t *ptd = NULL;
  size_t ptd_size = 0;
  CHECK_OK(etrt_ptd_write(&blob, 1, &ptd, &ptd_size));
  char path[512];
  snprintf(path, sizeof path, "%s/weights.ptd", etrt_test_tmpdir());
  CHECK_OK(etrt_file_write_atomic(path, ptd, ptd_size));
  float in0[3] = {1, 2, 3}, out[3];
  const float *in[1] = {in0};
  int64_t sizes[1][ETRT_MAX_RANK] = {{3}};
  etrt_program_options options = {.data_path = path};
  CHECK(run_program(pte, size, &options, in, sizes, (int32_t[]){1}, 1, out, 3, NULL));
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], in0[i] * weight[i], 0);
  /* A .ptd without the key: refused naming it. */
  etrt_ptd_blob other = {.key = "other", .data = weight, .size = sizeof weight};
  free(ptd);
  CHECK_OK(etrt_ptd_write(&other, 1, &ptd, &ptd_size));
  CHECK_OK(etrt_file_write_atomic(path, ptd, ptd_size));
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  CHECK_OK(etrt_program_load_memory(pte, size, &options, &program));
  CHECK_FAILS(etrt_method_create(program, "forward", &method), ETRT_ERROR_NOT_FOUND,
              "layer.weight");
  etrt_program_destroy(program);
  free(ptd);
  free(pte);
}

int main(void) {
  RUN_TEST(test_sub_with_alpha_and_relu);
  RUN_TEST(test_mm_addmm_linear);
  RUN_TEST(test_jump_move_free);
  RUN_TEST(test_external_tensor_from_ptd);
  return TEST_EXIT();
}
