/* Programs and bundles the bundled-program and method-by-name tests share: a .pte
 * with two methods and a .bpte of test cases for it. Header only (static
 * functions), included by the unit tests and the tests/tools fixture writer. */
#ifndef ETRT_TESTS_BUNDLED_TESTING_H
#define ETRT_TESTS_BUNDLED_TESTING_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pte/bpte.h"
#include "pte/pte.h"

/* forward(a, b) = a + b with a, b float32 [2, 3] (a dynamic within that bound);
 * double(x) = x + x with x float32 [4]. */
#define BT_FORWARD_ROWS 2
#define BT_FORWARD_COLS 3
#define BT_DOUBLE_SIZE 4

typedef struct bt_plan {
  etrt_pte_value values[8];
  int32_t count;
  int64_t arena;
} bt_plan;

static inline int32_t bt_tensor(etrt_pte_builder *b, bt_plan *p, int32_t rank, const int32_t *sizes,
                                int dynamic) {
  etrt_pte_value *v = &p->values[p->count];
  v->kind = ETRT_PTE_VALUE_TENSOR;
  v->tensor.scalar_type = ETRT_DTYPE_FLOAT32;
  v->tensor.sizes = etrt_pte_builder_i32s(b, sizes, (size_t)rank);
  uint8_t order[ETRT_MAX_RANK];
  size_t n = 4;
  for (int32_t i = 0; i < rank; ++i) {
    order[i] = (uint8_t)i;
    n *= (size_t)sizes[i];
  }
  v->tensor.dim_order = etrt_pte_builder_u8s(b, order, (size_t)rank);
  v->tensor.shape_dynamism = dynamic ? ETRT_PTE_SHAPE_DYNAMIC_BOUND : ETRT_PTE_SHAPE_STATIC;
  v->tensor.has_allocation_info = 1;
  v->tensor.allocation_info.memory_id = 1;
  v->tensor.allocation_info.memory_offset_low = (uint32_t)p->arena;
  p->arena += (int64_t)((n + 63) / 64 * 64);
  return p->count++;
}

/* One method computing out = lhs + alpha * rhs with aten::add.out. */
static inline void bt_add_method(etrt_pte_builder *b, etrt_pte_plan *plan, const char *name,
                                 bt_plan *p, int32_t lhs, int32_t rhs, int32_t out,
                                 const int32_t *inputs, size_t num_inputs) {
  etrt_pte_value *alpha = &p->values[p->count];
  alpha->kind = ETRT_PTE_VALUE_INT;
  alpha->int_val = 1;
  int32_t a = p->count++;
  etrt_pte_operator *op = ETRT_PTE_NEW(b, etrt_pte_operator, 1);
  op->name = etrt_pte_builder_str(b, "aten::add");
  op->overload = etrt_pte_builder_str(b, "out");
  etrt_pte_instruction *in = ETRT_PTE_NEW(b, etrt_pte_instruction, 1);
  in->kind = ETRT_PTE_INSTR_KERNEL;
  in->kernel.op_index = 0;
  in->kernel.args = etrt_pte_builder_i32s(b, (int32_t[]){lhs, rhs, a, out, out}, 5);
  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  chain->inputs = etrt_pte_builder_i32s(b, inputs, num_inputs);
  chain->outputs = etrt_pte_builder_i32s(b, &out, 1);
  chain->instructions = in;
  chain->instructions_count = 1;
  etrt_pte_value *values = ETRT_PTE_NEW(b, etrt_pte_value, (size_t)p->count);
  memcpy(values, p->values, (size_t)p->count * sizeof *values);
  plan->name = etrt_pte_builder_str(b, name);
  plan->values = values;
  plan->values_count = (size_t)p->count;
  plan->inputs = chain->inputs;
  plan->outputs = chain->outputs;
  plan->chains = chain;
  plan->chains_count = 1;
  plan->operators = op;
  plan->operators_count = 1;
  int64_t buffers[2] = {0, p->arena};
  plan->non_const_buffer_sizes = etrt_pte_builder_i64s(b, buffers, 2);
}

/* The two-method program; malloc'd, NULL on failure. */
static inline uint8_t *bt_two_method_pte(size_t *size) {
  etrt_pte_builder *b = NULL;
  if (etrt_pte_builder_create(&b) != ETRT_OK) return NULL;
  etrt_pte_plan *plans = ETRT_PTE_NEW(b, etrt_pte_plan, 2);
  if (plans == NULL) {
    etrt_pte_builder_destroy(b);
    return NULL;
  }
  bt_plan f = {0};
  int32_t dims[2] = {BT_FORWARD_ROWS, BT_FORWARD_COLS};
  int32_t fa = bt_tensor(b, &f, 2, dims, 1), fb = bt_tensor(b, &f, 2, dims, 0);
  int32_t fo = bt_tensor(b, &f, 2, dims, 1);
  bt_add_method(b, &plans[0], "forward", &f, fa, fb, fo, (int32_t[]){fa, fb}, 2);
  bt_plan d = {0};
  int32_t n = BT_DOUBLE_SIZE;
  int32_t dx = bt_tensor(b, &d, 1, &n, 0), dout = bt_tensor(b, &d, 1, &n, 0);
  bt_add_method(b, &plans[1], "double", &d, dx, dx, dout, &dx, 1);
  etrt_pte_program *program = etrt_pte_builder_program(b);
  program->plans = plans;
  program->plans_count = 2;
  uint8_t *bytes = NULL;
  if (etrt_pte_builder_write(b, &bytes, size) != ETRT_OK) bytes = NULL;
  etrt_pte_builder_destroy(b);
  return bytes;
}

/* A program of `count` methods named method_00, method_01, ...; method k computes
 * x + x on a float32 [k + 1]. Malloc'd, NULL on failure. */
static inline uint8_t *bt_many_method_pte(int count, size_t *size) {
  etrt_pte_builder *b = NULL;
  if (count < 1 || count > 100 || etrt_pte_builder_create(&b) != ETRT_OK) return NULL;
  etrt_pte_plan *plans = ETRT_PTE_NEW(b, etrt_pte_plan, (size_t)count);
  for (int k = 0; plans != NULL && k < count; ++k) {
    bt_plan p = {0};
    int32_t n = k + 1;
    int32_t x = bt_tensor(b, &p, 1, &n, 0), out = bt_tensor(b, &p, 1, &n, 0);
    char name[16];
    snprintf(name, sizeof name, "method_%02d", k);
    bt_add_method(b, &plans[k], name, &p, x, x, out, &x, 1);
  }
  etrt_pte_program *program = etrt_pte_builder_program(b);
  program->plans = plans;
  program->plans_count = plans != NULL ? (size_t)count : 0;
  uint8_t *bytes = NULL;
  if (plans == NULL || etrt_pte_builder_write(b, &bytes, size) != ETRT_OK) bytes = NULL;
  etrt_pte_builder_destroy(b);
  return bytes;
}

/* Storage for a bundle's values while it is written. */
typedef struct bt_bundle_data {
  float forward_a[2][6], forward_b[2][6], forward_out[2][6];
  float double_x[4], double_out[4];
  etrt_bpte_value forward_in[2][2], forward_expected[2][1];
  etrt_bpte_value double_in[1], double_expected[1];
  etrt_bpte_case forward_cases[2], double_cases[1];
  etrt_bpte_suite suites[2];
  int32_t forward_sizes[2], double_sizes[1];
  uint8_t forward_order[2], double_order[1];
} bt_bundle_data;

static inline etrt_bpte_value bt_value(const float *data, size_t count, const int32_t *sizes,
                                       const uint8_t *order, size_t rank) {
  etrt_bpte_value v;
  memset(&v, 0, sizeof v);
  v.kind = ETRT_BPTE_VALUE_TENSOR;
  v.tensor.scalar_type = ETRT_DTYPE_FLOAT32;
  v.tensor.sizes.data = sizes;
  v.tensor.sizes.count = rank;
  v.tensor.dim_order.data = order;
  v.tensor.dim_order.count = rank;
  v.tensor.data.data = (const uint8_t *)data;
  v.tensor.data.size = count * sizeof(float);
  return v;
}

/* Fills `d` and `file` with two forward cases and one double case of `pte`;
 * `wrong` > 0 makes the expected output of forward case 1 off by `wrong` in one
 * element. */
static inline void bt_bundle_fill(bt_bundle_data *d, etrt_bpte_file *file, const uint8_t *pte,
                                  size_t pte_size, float wrong) {
  memset(d, 0, sizeof *d);
  memset(file, 0, sizeof *file);
  d->forward_sizes[0] = BT_FORWARD_ROWS;
  d->forward_sizes[1] = BT_FORWARD_COLS;
  d->forward_order[1] = 1;
  d->double_sizes[0] = BT_DOUBLE_SIZE;
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 6; ++i) {
      d->forward_a[c][i] = (float)(i + 1) * (c ? -0.5f : 1.25f);
      d->forward_b[c][i] = (float)(3 - i) * 0.75f;
      d->forward_out[c][i] = d->forward_a[c][i] + d->forward_b[c][i];
    }
    d->forward_in[c][0] = bt_value(d->forward_a[c], 6, d->forward_sizes, d->forward_order, 2);
    d->forward_in[c][1] = bt_value(d->forward_b[c], 6, d->forward_sizes, d->forward_order, 2);
    d->forward_expected[c][0] =
        bt_value(d->forward_out[c], 6, d->forward_sizes, d->forward_order, 2);
    d->forward_cases[c] = (etrt_bpte_case){d->forward_in[c], 2, d->forward_expected[c], 1};
  }
  d->forward_out[1][4] += wrong;
  for (int i = 0; i < 4; ++i) {
    d->double_x[i] = (float)i - 1.5f;
    d->double_out[i] = 2.0f * d->double_x[i];
  }
  d->double_in[0] = bt_value(d->double_x, 4, d->double_sizes, d->double_order, 1);
  d->double_expected[0] = bt_value(d->double_out, 4, d->double_sizes, d->double_order, 1);
  d->double_cases[0] = (etrt_bpte_case){d->double_in, 1, d->double_expected, 1};
  d->suites[0] = (etrt_bpte_suite){{"forward", 7}, d->forward_cases, 2};
  d->suites[1] = (etrt_bpte_suite){{"double", 6}, d->double_cases, 1};
  file->suites = d->suites;
  file->suites_count = 2;
  file->program.data = pte;
  file->program.size = pte_size;
}

#endif
