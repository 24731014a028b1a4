/* The .pte reader on the two programs ExecuTorch itself wrote. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "pte/pte.h"
#include "test_util.h"

static etrt_pte_program *load(const char *name, etrt_file_map *map) {
  etrt_pte_program *p = NULL;
  CHECK_OK(etrt_file_map_open(etrt_test_fixture(name), map));
  CHECK_OK(etrt_pte_parse(map->data, map->size, &p));
  return p;
}

static bool str_is(etrt_pte_str s, const char *text) {
  return s.data != NULL && s.size == strlen(text) && memcmp(s.data, text, s.size) == 0;
}

static void check_float_tensor(const etrt_pte_value *v, int rank, int d0, int d1) {
  CHECK_EQ_INT(v->kind, ETRT_PTE_VALUE_TENSOR);
  CHECK_EQ_INT(v->tensor.scalar_type, ETRT_DTYPE_FLOAT32);
  CHECK_EQ_INT(v->tensor.sizes.count, rank);
  if (rank >= 1 && v->tensor.sizes.count >= 1) CHECK_EQ_INT(v->tensor.sizes.data[0], d0);
  if (rank >= 2 && v->tensor.sizes.count >= 2) CHECK_EQ_INT(v->tensor.sizes.data[1], d1);
  CHECK_EQ_INT(v->tensor.dim_order.count, rank);
  etrt_device d = etrt_pte_tensor_device(&v->tensor);
  CHECK(d.type == ETRT_DEVICE_CPU);
}

static void test_add(void) {
  etrt_file_map map;
  etrt_pte_program *p = load("pte/add.pte", &map);
  if (p == NULL) return;
  CHECK(strcmp(p->file_identifier, "ET12") == 0);
  CHECK(!p->has_extended_header);
  CHECK_EQ_INT(p->version, 0);
  CHECK_EQ_INT(p->plans_count, 1);
  /* One (empty) constant segment, as ExecuTorch writes for programs without constants. */
  CHECK_EQ_INT(p->segments_count, 1);
  CHECK_EQ_INT(p->segments[0].size, 0);
  CHECK(p->has_constant_segment);
  CHECK_EQ_INT(p->constant_segment.offsets.count, 1);
  CHECK_EQ_INT(p->constant_buffer_count, 0);
  CHECK_EQ_INT(p->named_data_count, 0);

  const etrt_pte_plan *f = etrt_pte_program_find_plan(p, "forward");
  CHECK(f != NULL);
  if (f) {
    CHECK(f->has_container_meta_type);
    CHECK(f->encoded_inp_str.size > 0 && strstr(f->encoded_inp_str.data, "builtins.tuple") != NULL);
    CHECK_EQ_INT(f->values_count, 4);
    CHECK_EQ_INT(f->inputs.count, 2);
    CHECK_EQ_INT(f->outputs.count, 1);
    check_float_tensor(&f->values[0], 1, 1, 0);
    check_float_tensor(&f->values[1], 1, 1, 0);
    check_float_tensor(&f->values[2], 1, 1, 0);
    CHECK(f->values[2].tensor.has_allocation_info);
    CHECK_EQ_INT(f->values[2].tensor.allocation_info.memory_id, 1);
    CHECK_EQ_INT(f->values[3].kind, ETRT_PTE_VALUE_INT); /* alpha */
    CHECK_EQ_INT(f->values[3].int_val, 1);
    CHECK_EQ_INT(f->operators_count, 1);
    CHECK(str_is(f->operators[0].name, "aten::add"));
    CHECK(str_is(f->operators[0].overload, "out"));
    CHECK_EQ_INT(f->chains_count, 1);
    CHECK_EQ_INT(f->chains[0].instructions_count, 1);
    const etrt_pte_instruction *in = &f->chains[0].instructions[0];
    CHECK_EQ_INT(in->kind, ETRT_PTE_INSTR_KERNEL);
    CHECK_EQ_INT(in->kernel.op_index, 0);
    CHECK_EQ_INT(in->kernel.args.count, 5);
    CHECK_EQ_INT(f->delegates_count, 0);
    CHECK_EQ_INT(f->non_const_buffer_sizes.count, 2);
    CHECK_EQ_INT(f->non_const_buffer_sizes.data[1], 48);
    CHECK_EQ_INT(f->non_const_buffer_device_count, 0);
  }
  /* Views point into the mapped file: zero copy. */
  if (f)
    CHECK(f->name.data > (const char *)map.data &&
          f->name.data < (const char *)map.data + map.size);
  etrt_pte_program_free(p);
  etrt_file_map_close(&map);
}

static void test_linear_inline_constants(void) {
  etrt_file_map map;
  etrt_pte_program *p = load("pte/linear_inline_constants.pte", &map);
  if (p == NULL) return;
  CHECK(!p->has_extended_header);
  CHECK_EQ_INT(p->segments_count, 0);
  CHECK_EQ_INT(p->constant_buffer_count, 3); /* placeholder + w + b */
  CHECK_EQ_INT(p->constant_buffer[0].size, 0);
  const etrt_pte_plan *f = p->plans_count ? &p->plans[0] : NULL;
  CHECK(f != NULL);
  if (f) {
    CHECK(str_is(f->name, "forward"));
    CHECK_EQ_INT(f->values_count, 6);
    CHECK_EQ_INT(f->operators_count, 2);
    CHECK_EQ_INT(f->chains[0].instructions_count, 2);
    const etrt_pte_instruction *mul = &f->chains[0].instructions[0],
                               *add = &f->chains[0].instructions[1];
    CHECK_EQ_INT(mul->kind, ETRT_PTE_INSTR_KERNEL);
    CHECK_EQ_INT(add->kind, ETRT_PTE_INSTR_KERNEL);
    CHECK(str_is(f->operators[mul->kernel.op_index].name, "aten::mul"));
    CHECK(str_is(f->operators[add->kernel.op_index].name, "aten::add"));
    /* mul(x, w) with the constant w (all 3.0), then add(., b) with the constant b (all 2.0). */
    float expect[2] = {3.0f, 2.0f};
    for (int i = 0; i < 2; ++i) {
      const etrt_pte_value *v = &f->values[i];
      check_float_tensor(v, 2, 2, 2);
      CHECK(!v->tensor.has_allocation_info);
      CHECK(v->tensor.data_buffer_idx > 0);
      etrt_pte_bytes c;
      CHECK_OK(etrt_pte_program_constant(p, v->tensor.data_buffer_idx, 16, &c));
      if (c.data) {
        float x[4];
        memcpy(x, c.data, sizeof x);
        for (int k = 0; k < 4; ++k) CHECK_NEAR(x[k], expect[i], 0);
        CHECK_EQ_INT((uintptr_t)c.data % 16, 0);
      }
    }
    check_float_tensor(&f->values[f->inputs.data[0]], 2, 2, 2);
    check_float_tensor(&f->values[f->outputs.data[0]], 2, 2, 2);
    etrt_pte_bytes c;
    CHECK_FAILS(etrt_pte_program_constant(p, 1, 17, &c), ETRT_ERROR_INVALID_FORMAT,
                "holds 16 bytes");
    CHECK_FAILS(etrt_pte_program_constant(p, 3, 4, &c), ETRT_ERROR_NOT_FOUND, "constant buffer 3");
  }
  etrt_pte_program_free(p);
  etrt_file_map_close(&map);
}

static void test_names(void) {
  CHECK(strcmp(etrt_pte_value_kind_name(ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST),
               "optional_tensor_list") == 0);
  CHECK(strcmp(etrt_pte_value_kind_name((etrt_pte_value_kind)40), "unknown") == 0);
  CHECK(strcmp(etrt_pte_instruction_kind_name(ETRT_PTE_INSTR_JUMP_FALSE), "jump_false") == 0);
  CHECK(strcmp(etrt_pte_instruction_kind_name((etrt_pte_instruction_kind)0), "unknown") == 0);
}

int main(void) {
  RUN_TEST(test_add);
  RUN_TEST(test_linear_inline_constants);
  RUN_TEST(test_names);
  return TEST_EXIT();
}
