#include "test_programs.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/log.h"
#include "pte/pte.h"

static float etrt_test_random(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return ((float)(*state >> 8) / 16777216.0f - 0.5f);
}

static float *etrt_test_fill(size_t n, uint32_t *state) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; p != NULL && i < n; ++i) p[i] = etrt_test_random(state);
  return p;
}

etrt_status etrt_test_mlp_plan(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out,
                               int64_t min_batch, int64_t max_batch, uint32_t seed,
                               etrt_device device, const char *name, uint8_t **plan,
                               size_t *plan_size) {
  memset(mlp, 0, sizeof *mlp);
  mlp->in = in;
  mlp->hidden = hidden;
  mlp->out = out;
  uint32_t state = seed;
  mlp->w1 = etrt_test_fill((size_t)(in * hidden), &state);
  mlp->b1 = etrt_test_fill((size_t)hidden, &state);
  mlp->w2 = etrt_test_fill((size_t)(hidden * out), &state);
  mlp->b2 = etrt_test_fill((size_t)out, &state);
  if (!mlp->w1 || !mlp->b1 || !mlp->w2 || !mlp->b2) return ETRT_ERROR_OUT_OF_MEMORY;
  etrt_network *net;
  etrt_status s = etrt_network_create(&net);
  if (s != ETRT_OK) return s;
  int32_t x, w1, b1, w2, b2, h, r, y;
  s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){min_batch, in},
                             (int64_t[]){max_batch, in}, &x);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "w1", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){in, hidden},
                                  mlp->w1, &w1);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "b1", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){hidden}, mlp->b1,
                                  &b1);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "w2", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){hidden, out},
                                  mlp->w2, &w2);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, "b2", ETRT_DTYPE_FLOAT32, 1, (int64_t[]){out}, mlp->b2, &b2);
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, "Gemm", "fc1", 3, (int32_t[]){x, w1, b1}, 1, &h, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_add_op(net, "Relu", "relu", 1, &h, 1, &r, 0, NULL);
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, "Gemm", "fc2", 3, (int32_t[]){r, w2, b2}, 1, &y, 0, NULL);
  if (s == ETRT_OK) s = etrt_network_mark_output(net, y, "y");
  etrt_plan_options options = {.device = device, .name = name};
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, plan, plan_size);
  etrt_network_destroy(net);
  return s;
}

etrt_status etrt_test_mlp_program(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out,
                                  int64_t min_batch, int64_t max_batch, uint32_t seed,
                                  etrt_device device, const char *name, uint8_t **pte,
                                  size_t *pte_size) {
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_status s = etrt_test_mlp_plan(mlp, in, hidden, out, min_batch, max_batch, seed, device, name,
                                     &plan, &plan_size);
  if (s == ETRT_OK) s = etrt_plan_to_program(plan, plan_size, pte, pte_size);
  free(plan);
  return s;
}

void etrt_test_mlp_reference(const etrt_test_mlp *mlp, const float *x, int64_t batch, float *y) {
  float *h = malloc((size_t)mlp->hidden * sizeof *h);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < mlp->hidden; ++j) {
      double acc = mlp->b1[j];
      for (int64_t k = 0; k < mlp->in; ++k)
        acc += (double)x[b * mlp->in + k] * mlp->w1[k * mlp->hidden + j];
      h[j] = acc > 0 ? (float)acc : 0.0f;
    }
    for (int64_t j = 0; j < mlp->out; ++j) {
      double acc = mlp->b2[j];
      for (int64_t k = 0; k < mlp->hidden; ++k) acc += (double)h[k] * mlp->w2[k * mlp->out + j];
      y[b * mlp->out + j] = (float)acc;
    }
  }
  free(h);
}

void etrt_test_mlp_free(etrt_test_mlp *mlp) {
  free(mlp->w1);
  free(mlp->b1);
  free(mlp->w2);
  free(mlp->b2);
  memset(mlp, 0, sizeof *mlp);
}

double etrt_test_max_diff(const float *a, const float *b, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > worst || d != d) worst = d;
  }
  return worst;
}

int etrt_test_mlp_fixture_open(etrt_test_mlp_fixture *f, int64_t in, int64_t hidden, int64_t out,
                               int64_t max_batch, etrt_device device, const char *name,
                               uint32_t seed) {
  memset(f, 0, sizeof *f);
  etrt_status s = etrt_test_mlp_program(&f->mlp, in, hidden, out, 0, max_batch, seed, device, name,
                                        &f->pte, &f->size);
  if (s == ETRT_OK) s = etrt_program_load_memory(f->pte, f->size, NULL, &f->program);
  if (s == ETRT_OK) s = etrt_method_create(f->program, "forward", &f->method);
  if (s != ETRT_OK) fprintf(stderr, "fixture: %s\n", etrt_last_error());
  return s == ETRT_OK;
}

void etrt_test_mlp_fixture_close(etrt_test_mlp_fixture *f) {
  etrt_method_destroy(f->method);
  etrt_program_destroy(f->program);
  free(f->pte);
  etrt_test_mlp_free(&f->mlp);
}

typedef struct etrt_test_race_job {
  etrt_test_mlp_fixture *f;
  const float *want;
  int runs;
  double tolerance;
  int mismatches;
} etrt_test_race_job;

static void *etrt_test_race_thread(void *arg) {
  etrt_test_race_job *job = arg;
  for (int i = 0; i < job->runs; ++i) {
    etrt_tensor_view out;
    if (etrt_method_execute(job->f->method) != ETRT_OK ||
        etrt_method_get_output(job->f->method, 0, &out) != ETRT_OK ||
        etrt_test_max_diff(out.data, job->want, (size_t)(2 * job->f->mlp.out)) > job->tolerance)
      ++job->mismatches;
  }
  return NULL;
}

int etrt_test_mlp_fixture_race(etrt_test_mlp_fixture *f, int runs, double tolerance) {
  float *x = malloc((size_t)(2 * f->mlp.in) * sizeof *x);
  float *want = malloc((size_t)(2 * f->mlp.out) * sizeof *want);
  int mismatches = -1;
  if (x == NULL || want == NULL) goto done;
  etrt_test_mlp_fill_input(x, 2, f->mlp.in, 6);
  etrt_test_mlp_reference(&f->mlp, x, 2, want);
  etrt_tensor_view vx = {x, ETRT_DTYPE_FLOAT32, 2, {2, f->mlp.in}};
  if (etrt_method_set_input(f->method, 0, &vx) != ETRT_OK) goto done;
  etrt_test_race_job jobs[2] = {{f, want, runs, tolerance, 0}, {f, want, runs, tolerance, 0}};
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, etrt_test_race_thread, &jobs[t]);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  mismatches = jobs[0].mismatches + jobs[1].mismatches;
done:
  free(x);
  free(want);
  return mismatches;
}

void etrt_test_mlp_fill_input(float *x, int64_t batch, int64_t in, int salt) {
  for (int64_t i = 0; i < batch * in; ++i) x[i] = (float)((i * 29 + salt * 7) % 31) / 15.0f - 1.0f;
}

static int etrt_test_staging_lines;
static char etrt_test_staging_last_line[512];

static void etrt_test_staging_sink(etrt_log_level level, const char *message, void *user) {
  (void)user;
  if (level == ETRT_LOG_INFO && strstr(message, "staging") != NULL) {
    ++etrt_test_staging_lines;
    snprintf(etrt_test_staging_last_line, sizeof etrt_test_staging_last_line, "%s", message);
  }
}

void etrt_test_staging_log_start(void) {
  etrt_test_staging_lines = 0;
  etrt_test_staging_last_line[0] = '\0';
  etrt_log_set_level(ETRT_LOG_INFO);
  etrt_log_set_sink(etrt_test_staging_sink, NULL);
}

void etrt_test_staging_log_stop(void) {
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(ETRT_LOG_WARN);
}

int etrt_test_staging_log_count(void) { return etrt_test_staging_lines; }

const char *etrt_test_staging_log_last(void) { return etrt_test_staging_last_line; }

/* --- KernelCall programs ------------------------------------------------------- */

void etrt_test_kp_init(etrt_test_kp *p) {
  memset(p, 0, sizeof *p);
  etrt_pte_builder_create(&p->b);
  p->values = ETRT_PTE_NEW(p->b, etrt_pte_value, ETRT_TEST_KP_MAX_VALUES);
}

static etrt_pte_value *etrt_test_kp_value(etrt_test_kp *p, etrt_pte_value_kind kind) {
  if (p->num_values >= ETRT_TEST_KP_MAX_VALUES) {
    fprintf(stderr, "etrt_test_kp: too many values\n");
    abort();
  }
  etrt_pte_value *v = &p->values[p->num_values];
  memset(v, 0, sizeof *v);
  v->kind = kind;
  return v;
}

int32_t etrt_test_kp_tensor(etrt_test_kp *p, etrt_dtype dtype, int32_t rank, const int32_t *sizes,
                            const void *constant, int dynamic) {
  etrt_pte_value *v = etrt_test_kp_value(p, ETRT_PTE_VALUE_TENSOR);
  v->tensor.scalar_type = dtype;
  v->tensor.sizes = etrt_pte_builder_i32s(p->b, sizes, (size_t)rank);
  uint8_t order[ETRT_MAX_RANK];
  size_t n = etrt_dtype_size(dtype);
  for (int32_t i = 0; i < rank; ++i) {
    order[i] = (uint8_t)i;
    n *= (size_t)sizes[i];
  }
  v->tensor.dim_order = etrt_pte_builder_u8s(p->b, order, (size_t)rank);
  v->tensor.shape_dynamism = dynamic ? ETRT_PTE_SHAPE_DYNAMIC_BOUND : ETRT_PTE_SHAPE_STATIC;
  if (constant != NULL) {
    etrt_pte_builder_add_constant(p->b, constant, n, &v->tensor.data_buffer_idx);
  } else {
    v->tensor.has_allocation_info = 1;
    v->tensor.allocation_info.memory_id = 1;
    v->tensor.allocation_info.memory_offset_low = (uint32_t)p->arena;
    p->arena += (int64_t)((n + 63) / 64 * 64);
  }
  return (int32_t)p->num_values++;
}

void etrt_test_kp_dim_order(etrt_test_kp *p, int32_t value, const uint8_t *order) {
  etrt_pte_tensor *t = &p->values[value].tensor;
  t->dim_order = etrt_pte_builder_u8s(p->b, order, t->sizes.count);
}

int32_t etrt_test_kp_int(etrt_test_kp *p, int64_t value) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_INT)->int_val = value;
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_double(etrt_test_kp *p, double value) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_DOUBLE)->double_val = value;
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_bool(etrt_test_kp *p, int value) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_BOOL)->bool_val = value != 0;
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_none(etrt_test_kp *p) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_NULL);
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_string(etrt_test_kp *p, const char *text) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_STRING)->string_val = etrt_pte_builder_str(p->b, text);
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_ints(etrt_test_kp *p, const int64_t *items, uint32_t count) {
  int64_t indices[ETRT_MAX_RANK * 2];
  for (uint32_t i = 0; i < count && i < ETRT_MAX_RANK * 2; ++i)
    indices[i] = etrt_test_kp_int(p, items[i]);
  etrt_test_kp_value(p, ETRT_PTE_VALUE_INT_LIST)->int_list =
      etrt_pte_builder_i64s(p->b, indices, count);
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_int_list(etrt_test_kp *p, const int32_t *int_values, uint32_t count) {
  int64_t indices[ETRT_MAX_RANK * 2];
  for (uint32_t i = 0; i < count && i < ETRT_MAX_RANK * 2; ++i) indices[i] = int_values[i];
  etrt_test_kp_value(p, ETRT_PTE_VALUE_INT_LIST)->int_list =
      etrt_pte_builder_i64s(p->b, indices, count);
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_doubles(etrt_test_kp *p, const double *items, uint32_t count) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_DOUBLE_LIST)->double_list =
      etrt_pte_builder_f64s(p->b, items, count);
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_optional_tensor_list(etrt_test_kp *p, const int32_t *items, uint32_t count) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST)->optional_tensor_list =
      etrt_pte_builder_i32s(p->b, items, count);
  return (int32_t)p->num_values++;
}

int32_t etrt_test_kp_tensor_list(etrt_test_kp *p, const int32_t *items, uint32_t count) {
  etrt_test_kp_value(p, ETRT_PTE_VALUE_TENSOR_LIST)->tensor_list =
      etrt_pte_builder_i32s(p->b, items, count);
  return (int32_t)p->num_values++;
}

void etrt_test_kp_call(etrt_test_kp *p, const char *op, const int32_t *args, uint32_t num_args) {
  uint32_t index = 0;
  while (index < p->num_ops && strcmp(p->ops[index], op) != 0) ++index;
  if (index == p->num_ops) p->ops[p->num_ops++] = op;
  p->call_op[p->num_calls] = (int32_t)index;
  memcpy(p->call_args[p->num_calls], args, num_args * sizeof *args);
  p->call_num_args[p->num_calls++] = num_args;
}

uint8_t *etrt_test_kp_write(etrt_test_kp *p, const int32_t *inputs, uint32_t num_inputs,
                            const int32_t *outputs, uint32_t num_outputs, size_t *size) {
  etrt_pte_builder *b = p->b;
  etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  etrt_pte_operator *operators = ETRT_PTE_NEW(b, etrt_pte_operator, p->num_ops ? p->num_ops : 1);
  for (uint32_t i = 0; i < p->num_ops; ++i) {
    /* A default overload is written as ExecuTorch does: an empty string
     * ("aten::copy_"). */
    const char *dot = strrchr(p->ops[i], '.');
    if (dot == NULL) dot = p->ops[i] + strlen(p->ops[i]);
    operators[i].name = etrt_pte_builder_strn(b, p->ops[i], (size_t)(dot - p->ops[i]));
    operators[i].overload = etrt_pte_builder_str(b, *dot ? dot + 1 : "");
  }
  etrt_pte_instruction *instructions =
      ETRT_PTE_NEW(b, etrt_pte_instruction, p->num_calls ? p->num_calls : 1);
  for (uint32_t i = 0; i < p->num_calls; ++i) {
    instructions[i].kind = ETRT_PTE_INSTR_KERNEL;
    instructions[i].kernel.op_index = p->call_op[i];
    instructions[i].kernel.args = etrt_pte_builder_i32s(b, p->call_args[i], p->call_num_args[i]);
  }
  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  chain->inputs = etrt_pte_builder_i32s(b, inputs, num_inputs);
  chain->outputs = etrt_pte_builder_i32s(b, outputs, num_outputs);
  chain->instructions = instructions;
  chain->instructions_count = p->num_calls;
  plan->name = etrt_pte_builder_str(b, "forward");
  plan->values = p->values;
  plan->values_count = p->num_values;
  plan->inputs = chain->inputs;
  plan->outputs = chain->outputs;
  plan->chains = chain;
  plan->chains_count = 1;
  plan->operators = operators;
  plan->operators_count = p->num_ops;
  int64_t buffers[2] = {0, p->arena};
  plan->non_const_buffer_sizes = etrt_pte_builder_i64s(b, buffers, 2);
  etrt_pte_program *program = etrt_pte_builder_program(b);
  program->plans = plan;
  program->plans_count = 1;
  uint8_t *bytes = NULL;
  if (etrt_pte_builder_write(b, &bytes, size) != ETRT_OK) bytes = NULL;
  etrt_pte_builder_destroy(b);
  p->b = NULL;
  return bytes;
}

etrt_status etrt_test_kp_execute(const uint8_t *pte, size_t size, const etrt_tensor_view *inputs,
                                 uint32_t num_inputs, etrt_program **program,
                                 etrt_method **method) {
  *program = NULL;
  *method = NULL;
  etrt_status s = etrt_program_load_memory(pte, size, NULL, program);
  if (s == ETRT_OK) s = etrt_method_create(*program, "forward", method);
  for (uint32_t i = 0; s == ETRT_OK && i < num_inputs; ++i)
    s = etrt_method_set_input(*method, i, &inputs[i]);
  if (s == ETRT_OK) s = etrt_method_execute(*method);
  return s;
}

etrt_status etrt_test_kp_run(const uint8_t *pte, size_t size, const etrt_tensor_view *inputs,
                             uint32_t num_inputs, void *out, size_t out_bytes,
                             etrt_tensor_view *view) {
  etrt_program *program;
  etrt_method *method;
  etrt_status s = etrt_test_kp_execute(pte, size, inputs, num_inputs, &program, &method);
  etrt_tensor_view got;
  memset(&got, 0, sizeof got);
  if (s == ETRT_OK) s = etrt_method_get_output(method, 0, &got);
  if (s == ETRT_OK && out_bytes > 0) memcpy(out, got.data, out_bytes);
  if (view != NULL) *view = got;
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  return s;
}
