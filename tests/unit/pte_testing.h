/* Helpers shared by the .pte tests and the fuzz target: deep comparison of two
 * program models, and a sample model that uses every part of the schema. Header
 * only (static functions), included by each test that needs it. */
#ifndef ETRT_TESTS_PTE_TESTING_H
#define ETRT_TESTS_PTE_TESTING_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pte/pte.h"

/* Where the first difference is, for the failure message. */
static char pte_diff_where[256];

static inline bool pte_diff(const char *what) {
  snprintf(pte_diff_where, sizeof pte_diff_where, "%s", what);
  return false;
}

static inline bool pte_str_eq(etrt_pte_str a, etrt_pte_str b) {
  if ((a.data == NULL) != (b.data == NULL)) return false;
  return a.size == b.size && (a.size == 0 || memcmp(a.data, b.data, a.size) == 0);
}

static inline bool pte_mem_eq(const void *a, const void *b, size_t bytes) {
  return bytes == 0 || memcmp(a, b, bytes) == 0;
}

#define PTE_VIEW_EQ(a, b) \
  ((a).count == (b).count && pte_mem_eq((a).data, (b).data, (a).count * sizeof *(a).data))
#define PTE_BYTES_EQ(a, b) ((a).size == (b).size && pte_mem_eq((a).data, (b).data, (a).size))

static inline bool pte_tensor_eq(const etrt_pte_tensor *a, const etrt_pte_tensor *b) {
  if (a->scalar_type != b->scalar_type || a->storage_offset != b->storage_offset)
    return pte_diff("tensor scalar_type/storage_offset");
  if (!PTE_VIEW_EQ(a->sizes, b->sizes) || !PTE_VIEW_EQ(a->dim_order, b->dim_order))
    return pte_diff("tensor sizes/dim_order");
  if (a->requires_grad != b->requires_grad || a->data_buffer_idx != b->data_buffer_idx)
    return pte_diff("tensor requires_grad/data_buffer_idx");
  if (a->has_allocation_info != b->has_allocation_info ||
      (a->has_allocation_info &&
       memcmp(&a->allocation_info, &b->allocation_info, sizeof a->allocation_info) != 0)) {
    return pte_diff("tensor allocation_info");
  }
  if (a->layout != b->layout || a->shape_dynamism != b->shape_dynamism)
    return pte_diff("tensor layout/dynamism");
  if (a->has_extra_tensor_info != b->has_extra_tensor_info)
    return pte_diff("tensor has_extra_tensor_info");
  if (a->has_extra_tensor_info) {
    const etrt_pte_extra_tensor_info *x = &a->extra_tensor_info, *y = &b->extra_tensor_info;
    if (x->mutable_data_segments_idx != y->mutable_data_segments_idx ||
        !pte_str_eq(x->fully_qualified_name, y->fully_qualified_name) ||
        x->location != y->location || x->device_type != y->device_type ||
        x->device_index != y->device_index) {
      return pte_diff("tensor extra_tensor_info");
    }
  }
  return true;
}

static inline bool pte_value_eq(const etrt_pte_value *a, const etrt_pte_value *b) {
  if (a->kind != b->kind) return pte_diff("value kind");
  switch (a->kind) {
    case ETRT_PTE_VALUE_NULL:
      return true;
    case ETRT_PTE_VALUE_INT:
      return a->int_val == b->int_val || pte_diff("int value");
    case ETRT_PTE_VALUE_BOOL:
      return a->bool_val == b->bool_val || pte_diff("bool value");
    case ETRT_PTE_VALUE_DOUBLE:
      return memcmp(&a->double_val, &b->double_val, sizeof(double)) == 0 ||
             pte_diff("double value");
    case ETRT_PTE_VALUE_TENSOR:
      return pte_tensor_eq(&a->tensor, &b->tensor);
    case ETRT_PTE_VALUE_STRING:
      return pte_str_eq(a->string_val, b->string_val) || pte_diff("string value");
    case ETRT_PTE_VALUE_INT_LIST:
      return PTE_VIEW_EQ(a->int_list, b->int_list) || pte_diff("int list");
    case ETRT_PTE_VALUE_DOUBLE_LIST:
      return PTE_VIEW_EQ(a->double_list, b->double_list) || pte_diff("double list");
    case ETRT_PTE_VALUE_BOOL_LIST:
      return PTE_VIEW_EQ(a->bool_list, b->bool_list) || pte_diff("bool list");
    case ETRT_PTE_VALUE_TENSOR_LIST:
      return PTE_VIEW_EQ(a->tensor_list, b->tensor_list) || pte_diff("tensor list");
    case ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST:
      return PTE_VIEW_EQ(a->optional_tensor_list, b->optional_tensor_list) ||
             pte_diff("optional tensor list");
  }
  return pte_diff("unknown value kind");
}

static inline bool pte_instruction_eq(const etrt_pte_instruction *a,
                                      const etrt_pte_instruction *b) {
  if (a->kind != b->kind) return pte_diff("instruction kind");
  switch (a->kind) {
    case ETRT_PTE_INSTR_KERNEL:
      return (a->kernel.op_index == b->kernel.op_index &&
              PTE_VIEW_EQ(a->kernel.args, b->kernel.args)) ||
             pte_diff("kernel call");
    case ETRT_PTE_INSTR_DELEGATE:
      if (a->delegate.delegate_index != b->delegate.delegate_index ||
          !PTE_VIEW_EQ(a->delegate.args, b->delegate.args) ||
          a->delegate.scratch_count != b->delegate.scratch_count) {
        return pte_diff("delegate call");
      }
      for (size_t i = 0; i < a->delegate.scratch_count; ++i) {
        const etrt_pte_delegate_scratch *x = &a->delegate.scratch[i], *y = &b->delegate.scratch[i];
        if (x->has_allocation != y->has_allocation || x->size != y->size ||
            (x->has_allocation &&
             memcmp(&x->allocation, &y->allocation, sizeof x->allocation) != 0)) {
          return pte_diff("delegate scratch");
        }
      }
      return true;
    case ETRT_PTE_INSTR_MOVE:
      return (a->move.move_from == b->move.move_from && a->move.move_to == b->move.move_to) ||
             pte_diff("move call");
    case ETRT_PTE_INSTR_JUMP_FALSE:
      return (a->jump_false.cond_value_index == b->jump_false.cond_value_index &&
              a->jump_false.destination_instruction == b->jump_false.destination_instruction) ||
             pte_diff("jump_false call");
    case ETRT_PTE_INSTR_FREE:
      return a->free_call.value_index == b->free_call.value_index || pte_diff("free call");
  }
  return pte_diff("unknown instruction kind");
}

static inline bool pte_plan_eq(const etrt_pte_plan *a, const etrt_pte_plan *b) {
  if (!pte_str_eq(a->name, b->name)) return pte_diff("plan name");
  if (a->has_container_meta_type != b->has_container_meta_type ||
      (a->has_container_meta_type && (!pte_str_eq(a->encoded_inp_str, b->encoded_inp_str) ||
                                      !pte_str_eq(a->encoded_out_str, b->encoded_out_str)))) {
    return pte_diff("container_meta_type");
  }
  if (a->values_count != b->values_count) return pte_diff("values count");
  for (size_t i = 0; i < a->values_count; ++i)
    if (!pte_value_eq(&a->values[i], &b->values[i])) return false;
  if (!PTE_VIEW_EQ(a->inputs, b->inputs) || !PTE_VIEW_EQ(a->outputs, b->outputs))
    return pte_diff("plan inputs/outputs");
  if (a->chains_count != b->chains_count) return pte_diff("chains count");
  for (size_t c = 0; c < a->chains_count; ++c) {
    const etrt_pte_chain *x = &a->chains[c], *y = &b->chains[c];
    if (!PTE_VIEW_EQ(x->inputs, y->inputs) || !PTE_VIEW_EQ(x->outputs, y->outputs) ||
        x->instructions_count != y->instructions_count) {
      return pte_diff("chain");
    }
    for (size_t i = 0; i < x->instructions_count; ++i) {
      if (!pte_instruction_eq(&x->instructions[i], &y->instructions[i])) return false;
    }
  }
  if (a->operators_count != b->operators_count) return pte_diff("operators count");
  for (size_t i = 0; i < a->operators_count; ++i) {
    if (!pte_str_eq(a->operators[i].name, b->operators[i].name) ||
        a->operators[i].overload.size != b->operators[i].overload.size ||
        !pte_mem_eq(a->operators[i].overload.data, b->operators[i].overload.data,
                    a->operators[i].overload.size)) {
      return pte_diff("operator");
    }
  }
  if (a->delegates_count != b->delegates_count) return pte_diff("delegates count");
  for (size_t i = 0; i < a->delegates_count; ++i) {
    const etrt_pte_delegate *x = &a->delegates[i], *y = &b->delegates[i];
    if (!pte_str_eq(x->id, y->id) || x->location != y->location || x->index != y->index ||
        x->compile_specs_count != y->compile_specs_count) {
      return pte_diff("delegate");
    }
    for (size_t s = 0; s < x->compile_specs_count; ++s) {
      if (!pte_str_eq(x->compile_specs[s].key, y->compile_specs[s].key) ||
          !PTE_BYTES_EQ(x->compile_specs[s].value, y->compile_specs[s].value)) {
        return pte_diff("compile spec");
      }
    }
  }
  if (!PTE_VIEW_EQ(a->non_const_buffer_sizes, b->non_const_buffer_sizes))
    return pte_diff("non_const_buffer_sizes");
  if (a->non_const_buffer_device_count != b->non_const_buffer_device_count ||
      !pte_mem_eq(a->non_const_buffer_device, b->non_const_buffer_device,
                  a->non_const_buffer_device_count * sizeof *a->non_const_buffer_device)) {
    return pte_diff("non_const_buffer_device");
  }
  return true;
}

static inline bool pte_subsegments_eq(const etrt_pte_subsegment_offsets *a,
                                      const etrt_pte_subsegment_offsets *b) {
  return a->segment_index == b->segment_index && PTE_VIEW_EQ(a->offsets, b->offsets);
}

/* Equal models; segment offsets are layout, so segments compare by their bytes. */
static inline bool pte_program_eq(const etrt_pte_program *a, const etrt_pte_program *b) {
  pte_diff_where[0] = 0;
  if (a->version != b->version) return pte_diff("version");
  if (a->plans_count != b->plans_count) return pte_diff("plans count");
  for (size_t i = 0; i < a->plans_count; ++i)
    if (!pte_plan_eq(&a->plans[i], &b->plans[i])) return false;
  if (a->constant_buffer_count != b->constant_buffer_count)
    return pte_diff("constant_buffer count");
  for (size_t i = 0; i < a->constant_buffer_count; ++i) {
    if (!PTE_BYTES_EQ(a->constant_buffer[i], b->constant_buffer[i]))
      return pte_diff("constant_buffer");
  }
  if (a->backend_delegate_data_count != b->backend_delegate_data_count)
    return pte_diff("backend_delegate_data count");
  for (size_t i = 0; i < a->backend_delegate_data_count; ++i) {
    if (!PTE_BYTES_EQ(a->backend_delegate_data[i], b->backend_delegate_data[i]))
      return pte_diff("backend_delegate_data");
  }
  if (a->segments_count != b->segments_count) return pte_diff("segments count");
  for (size_t i = 0; i < a->segments_count; ++i) {
    if (!PTE_BYTES_EQ(a->segments[i].data, b->segments[i].data)) return pte_diff("segment bytes");
  }
  if (a->has_constant_segment != b->has_constant_segment ||
      (a->has_constant_segment &&
       !pte_subsegments_eq(&a->constant_segment, &b->constant_segment))) {
    return pte_diff("constant_segment");
  }
  if (a->mutable_data_segments_count != b->mutable_data_segments_count)
    return pte_diff("mutable_data_segments count");
  for (size_t i = 0; i < a->mutable_data_segments_count; ++i) {
    if (!pte_subsegments_eq(&a->mutable_data_segments[i], &b->mutable_data_segments[i]))
      return pte_diff("mutable_data_segments");
  }
  if (a->named_data_count != b->named_data_count) return pte_diff("named_data count");
  for (size_t i = 0; i < a->named_data_count; ++i) {
    if (!pte_str_eq(a->named_data[i].key, b->named_data[i].key) ||
        a->named_data[i].segment_index != b->named_data[i].segment_index) {
      return pte_diff("named_data");
    }
  }
  return true;
}

/* A program that uses every part of the schema: two methods, every value kind,
 * every instruction kind, delegates inline and in a segment with compile specs,
 * constants in the constant segment, named data, a mutable data segment, device
 * fields on tensors and planned buffers, delegate scratch. The builder owns it. */
enum { PTE_SAMPLE_VALUES = 15 };

static inline etrt_status pte_make_sample(etrt_pte_builder **out) {
  etrt_pte_builder *b;
  etrt_status st = etrt_pte_builder_create(&b);
  if (st != ETRT_OK) return st;
  etrt_pte_program *p = etrt_pte_builder_program(b);
  p->version = 0;

  static const float weights[6] = {1, 2, 3, 4, 5, 6};
  static const float bias[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  uint32_t w_idx = 0, b_idx = 0, payload_segment = 0, mutable_segment = 0;
  if ((st = etrt_pte_builder_add_constant(b, weights, sizeof weights, &w_idx)) != ETRT_OK ||
      (st = etrt_pte_builder_add_constant(b, bias, 5, &b_idx)) != ETRT_OK) { /* odd size: padding */
    etrt_pte_builder_destroy(b);
    return st;
  }
  static const uint8_t engine[300] = {0xe7, 1, 2, 3};
  static const float initial[6] = {9, 9, 9, 9, 9, 9};
  static const uint8_t named[40] = {0x4e, 0x44};
  if ((st = etrt_pte_builder_add_segment(b, engine, sizeof engine, 0, &payload_segment)) !=
          ETRT_OK ||
      (st = etrt_pte_builder_add_segment(b, initial, sizeof initial, 0, &mutable_segment)) !=
          ETRT_OK ||
      (st = etrt_pte_builder_add_named_data(b, "weights.external", named, sizeof named, 256)) !=
          ETRT_OK) {
    etrt_pte_builder_destroy(b);
    return st;
  }
  etrt_pte_subsegment_offsets *mut = ETRT_PTE_NEW(b, etrt_pte_subsegment_offsets, 1);
  static const uint64_t mut_offsets[2] = {0, 0};
  mut->segment_index = mutable_segment;
  mut->offsets.data = mut_offsets;
  mut->offsets.count = 2;
  p->mutable_data_segments = mut;
  p->mutable_data_segments_count = 1;

  static const uint8_t inline_payload[5] = {'i', 'n', 'l', 'n', 0};
  etrt_pte_bytes *inl = ETRT_PTE_NEW(b, etrt_pte_bytes, 1);
  *inl = etrt_pte_builder_bytes(b, inline_payload, sizeof inline_payload);
  p->backend_delegate_data = inl;
  p->backend_delegate_data_count = 1;

  etrt_pte_plan *plans = ETRT_PTE_NEW(b, etrt_pte_plan, 2);
  p->plans = plans;
  p->plans_count = 2;
  etrt_pte_plan *f = &plans[0];
  f->name = etrt_pte_builder_str(b, "forward");
  f->has_container_meta_type = true;
  f->encoded_inp_str = etrt_pte_builder_str(b, "[1, {\"type\": null}]");
  f->encoded_out_str = etrt_pte_builder_str(b, "");

  static const int32_t sizes23[2] = {2, 3};
  static const uint8_t order2[2] = {0, 1};
  etrt_pte_value *v = ETRT_PTE_NEW(b, etrt_pte_value, PTE_SAMPLE_VALUES);
  v[0].kind = ETRT_PTE_VALUE_NULL;
  v[1].kind = ETRT_PTE_VALUE_INT;
  v[1].int_val = -4200000000000ll;
  v[2].kind = ETRT_PTE_VALUE_BOOL;
  v[2].bool_val = true;
  v[3].kind = ETRT_PTE_VALUE_DOUBLE;
  v[3].double_val = -1.5;
  for (int i = 4; i <= 5; ++i) {
    v[i].kind = ETRT_PTE_VALUE_TENSOR;
    v[i].tensor.scalar_type = ETRT_DTYPE_FLOAT32;
    v[i].tensor.sizes = etrt_pte_builder_i32s(b, sizes23, 2);
    v[i].tensor.dim_order = etrt_pte_builder_u8s(b, order2, 2);
  }
  /* 4: the input, planned in buffer 2 on cuda:1. */
  v[4].tensor.has_allocation_info = true;
  v[4].tensor.allocation_info = (etrt_pte_allocation){2, 64, 0};
  v[4].tensor.has_extra_tensor_info = true;
  v[4].tensor.extra_tensor_info.device_type = ETRT_DEVICE_CUDA;
  v[4].tensor.extra_tensor_info.device_index = 1;
  v[4].tensor.shape_dynamism = ETRT_PTE_SHAPE_DYNAMIC_BOUND;
  /* 5: a constant. */
  v[5].tensor.data_buffer_idx = w_idx;
  v[6].kind = ETRT_PTE_VALUE_STRING;
  v[6].string_val = etrt_pte_builder_str(b, "h\xc3\xa9llo \"q\"");
  static const int64_t ints[3] = {1, -2, 1ll << 40};
  v[7].kind = ETRT_PTE_VALUE_INT_LIST;
  v[7].int_list = etrt_pte_builder_i64s(b, ints, 3);
  static const double doubles[2] = {0.25, -1e300};
  v[8].kind = ETRT_PTE_VALUE_DOUBLE_LIST;
  v[8].double_list = etrt_pte_builder_f64s(b, doubles, 2);
  static const uint8_t bools[3] = {1, 0, 1};
  v[9].kind = ETRT_PTE_VALUE_BOOL_LIST;
  v[9].bool_list = etrt_pte_builder_u8s(b, bools, 3);
  static const int32_t tlist[2] = {4, 5}, olist[3] = {4, -1, 5};
  v[10].kind = ETRT_PTE_VALUE_TENSOR_LIST;
  v[10].tensor_list = etrt_pte_builder_i32s(b, tlist, 2);
  v[11].kind = ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST;
  v[11].optional_tensor_list = etrt_pte_builder_i32s(b, olist, 3);
  for (int i = 12; i <= 14; ++i) {
    v[i].kind = ETRT_PTE_VALUE_TENSOR;
    v[i].tensor.scalar_type = i == 12 ? ETRT_DTYPE_FLOAT16 : ETRT_DTYPE_FLOAT32;
    v[i].tensor.sizes = etrt_pte_builder_i32s(b, sizes23, 2);
    v[i].tensor.dim_order = etrt_pte_builder_u8s(b, order2, 2);
  }
  /* 12: the output, planned on the host in buffer 1, at an offset above 4 GiB. */
  v[12].tensor.has_allocation_info = true;
  v[12].tensor.allocation_info = (etrt_pte_allocation){1, 16, 1};
  /* 13: external data, by name. */
  v[13].tensor.has_extra_tensor_info = true;
  v[13].tensor.extra_tensor_info.location = ETRT_PTE_TENSOR_EXTERNAL;
  v[13].tensor.extra_tensor_info.fully_qualified_name = etrt_pte_builder_str(b, "linear.weight");
  /* 14: mutable with an initial value. */
  v[14].tensor.has_allocation_info = true;
  v[14].tensor.allocation_info = (etrt_pte_allocation){1, 0, 0};
  v[14].tensor.data_buffer_idx = 1;
  v[14].tensor.has_extra_tensor_info = true;
  v[14].tensor.extra_tensor_info.mutable_data_segments_idx = 0;
  v[14].tensor.requires_grad = true;
  f->values = v;
  f->values_count = PTE_SAMPLE_VALUES;
  static const int32_t in_idx[1] = {4}, out_idx[1] = {12};
  f->inputs = etrt_pte_builder_i32s(b, in_idx, 1);
  f->outputs = etrt_pte_builder_i32s(b, out_idx, 1);

  etrt_pte_operator *ops = ETRT_PTE_NEW(b, etrt_pte_operator, 2);
  ops[0].name = etrt_pte_builder_str(b, "aten::add");
  ops[0].overload = etrt_pte_builder_str(b, "out");
  ops[1].name = etrt_pte_builder_str(b, "et_copy::_h2d_copy");
  ops[1].overload = etrt_pte_builder_str(b, "");
  f->operators = ops;
  f->operators_count = 2;

  etrt_pte_delegate *dels = ETRT_PTE_NEW(b, etrt_pte_delegate, 2);
  dels[0].id = etrt_pte_builder_str(b, "EtrtBackend");
  dels[0].location = ETRT_PTE_DATA_SEGMENT;
  dels[0].index = payload_segment;
  etrt_pte_compile_spec *specs = ETRT_PTE_NEW(b, etrt_pte_compile_spec, 2);
  specs[0].key = etrt_pte_builder_str(b, "target_device");
  specs[0].value = etrt_pte_builder_bytes(b, "cuda:1", 6);
  specs[1].key = etrt_pte_builder_str(b, "blob");
  specs[1].value = etrt_pte_builder_bytes(b, "\x00\xff\x10", 3);
  dels[0].compile_specs = specs;
  dels[0].compile_specs_count = 2;
  dels[1].id = etrt_pte_builder_str(b, "InlineBackend");
  dels[1].location = ETRT_PTE_DATA_INLINE;
  dels[1].index = 0;
  f->delegates = dels;
  f->delegates_count = 2;

  etrt_pte_instruction *ins = ETRT_PTE_NEW(b, etrt_pte_instruction, 7);
  static const int32_t kargs[3] = {4, 5, 12}, dargs[2] = {4, 12};
  ins[0].kind = ETRT_PTE_INSTR_KERNEL;
  ins[0].kernel.op_index = 0;
  ins[0].kernel.args = etrt_pte_builder_i32s(b, kargs, 3);
  ins[1].kind = ETRT_PTE_INSTR_DELEGATE;
  ins[1].delegate.delegate_index = 0;
  ins[1].delegate.args = etrt_pte_builder_i32s(b, dargs, 2);
  etrt_pte_delegate_scratch *scratch = ETRT_PTE_NEW(b, etrt_pte_delegate_scratch, 1);
  scratch->has_allocation = true;
  scratch->allocation = (etrt_pte_allocation){2, 128, 0};
  scratch->size = 4096;
  ins[1].delegate.scratch = scratch;
  ins[1].delegate.scratch_count = 1;
  ins[2].kind = ETRT_PTE_INSTR_DELEGATE;
  ins[2].delegate.delegate_index = 1;
  ins[2].delegate.args = etrt_pte_builder_i32s(b, dargs, 2);
  ins[3].kind = ETRT_PTE_INSTR_MOVE;
  ins[3].move.move_from = 4;
  ins[3].move.move_to = 12;
  ins[4].kind = ETRT_PTE_INSTR_JUMP_FALSE;
  ins[4].jump_false.cond_value_index = 2;
  ins[4].jump_false.destination_instruction = 6;
  ins[5].kind = ETRT_PTE_INSTR_FREE;
  ins[5].free_call.value_index = 12;
  ins[6].kind = ETRT_PTE_INSTR_KERNEL;
  ins[6].kernel.op_index = 1;
  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  chain->inputs = f->inputs;
  chain->outputs = f->outputs;
  chain->instructions = ins;
  chain->instructions_count = 7;
  f->chains = chain;
  f->chains_count = 1;

  static const int64_t buffer_sizes[3] = {0, 96, 4096 + 256};
  f->non_const_buffer_sizes = etrt_pte_builder_i64s(b, buffer_sizes, 3);
  etrt_pte_buffer_device *dev = ETRT_PTE_NEW(b, etrt_pte_buffer_device, 1);
  *dev = (etrt_pte_buffer_device){2, ETRT_DEVICE_CUDA, 1};
  f->non_const_buffer_device = dev;
  f->non_const_buffer_device_count = 1;

  /* A second, nearly empty method. */
  plans[1].name = etrt_pte_builder_str(b, "other");
  *out = b;
  return ETRT_OK;
}

/* A change made to the sample before it is written (refusal tests break one field). */
typedef void (*pte_sample_mutation)(etrt_pte_builder *b, etrt_pte_plan *forward);

/* The sample program's bytes (malloc'd), changed by `mutate` when it is not NULL. */
static inline etrt_status pte_write_sample(pte_sample_mutation mutate, uint8_t **bytes,
                                           size_t *size) {
  *bytes = NULL;
  *size = 0;
  etrt_pte_builder *b = NULL;
  etrt_status st = pte_make_sample(&b);
  if (st != ETRT_OK) return st;
  if (mutate) mutate(b, (etrt_pte_plan *)&etrt_pte_builder_program(b)->plans[0]);
  st = etrt_pte_builder_write(b, bytes, size);
  etrt_pte_builder_destroy(b);
  return st;
}

#endif
