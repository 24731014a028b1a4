/* The .pte writer: the Program FlatBuffer (front to back, tables before their
 * children), then ExecuTorch's extended header and segment layout. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "pte/flatbuffers_builder.h"
#include "pte/pte.h"
#include "pte/pte_format.h"

typedef struct pte_writer {
  etrt_fb_builder b;
  const char *missing; /* first array with a count but no data: a caller bug */
} pte_writer;

#define MAX_SLOTS 10

/* Ends the table being written and records the positions of its offset fields, by
 * slot, for the children written after it to patch. */
static size_t end_table(pte_writer *w, size_t refs[MAX_SLOTS]) {
  size_t pos = etrt_fb_table_end(&w->b);
  for (int s = 0; s < MAX_SLOTS; ++s) refs[s] = etrt_fb_slot_pos(&w->b, s);
  return pos;
}

/* A table of nothing but `count` offset fields, in slots 0 to count - 1. */
static size_t write_offsets_table(pte_writer *w, int count, size_t refs[MAX_SLOTS]) {
  etrt_fb_table_begin(&w->b);
  for (int s = 0; s < count; ++s) etrt_fb_add_offset(&w->b, s);
  return end_table(w, refs);
}

static bool usable(pte_writer *w, const void *data, size_t count, const char *what) {
  if (count > 0 && data == NULL) {
    if (w->missing == NULL) w->missing = what;
    return false;
  }
  return true;
}

static size_t str_or_empty(pte_writer *w, etrt_pte_str s) {
  return etrt_fb_add_string(&w->b, s.data ? s.data : "", s.data ? s.size : 0);
}

static void patch(pte_writer *w, size_t ref, size_t target) {
  if (ref != 0) etrt_fb_patch(&w->b, ref, target);
}

/* Optional strings are written only when present, so absent stays absent. */
static void add_optional_str(pte_writer *w, int slot, etrt_pte_str s) {
  if (s.data) etrt_fb_add_offset(&w->b, slot);
}

static void patch_optional_str(pte_writer *w, size_t ref, etrt_pte_str s) {
  if (s.data) patch(w, ref, str_or_empty(w, s));
}

#define NUMBERS(w, view, what)                                                                     \
  etrt_fb_add_vector(&(w)->b, usable((w), (view).data, (view).count, (what)) ? (view).data : NULL, \
                     (view).count, sizeof *(view).data, sizeof *(view).data)

static size_t write_bytes(pte_writer *w, etrt_pte_bytes bytes, size_t align, const char *what) {
  return etrt_fb_add_vector(&w->b, usable(w, bytes.data, bytes.size, what) ? bytes.data : NULL,
                            bytes.size, 1, align);
}

/* Writes `count` tables with `fn` and returns the vector of offsets to them. */
#define TABLE_VECTOR(w, items, count, fn, what)                       \
  do {                                                                \
    size_t vec_ = etrt_fb_add_offset_vector(&(w)->b, (count));        \
    if (usable((w), (items), (count), (what))) {                      \
      for (size_t i_ = 0; i_ < (count); ++i_) {                       \
        patch((w), etrt_fb_element(vec_, i_), fn((w), &(items)[i_])); \
      }                                                               \
    }                                                                 \
    result_ = vec_;                                                   \
  } while (0)

static size_t write_allocation(pte_writer *w, const etrt_pte_allocation *a) {
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_u32(&w->b, 0, a->memory_id, 0);
  etrt_fb_add_u32(&w->b, 1, a->memory_offset_low, 0);
  etrt_fb_add_u32(&w->b, 2, a->memory_offset_high, 0);
  return etrt_fb_table_end(&w->b);
}

static size_t write_extra(pte_writer *w, const etrt_pte_extra_tensor_info *e) {
  size_t refs[MAX_SLOTS];
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_u64(&w->b, 0, e->mutable_data_segments_idx, 0);
  add_optional_str(w, 1, e->fully_qualified_name);
  etrt_fb_add_i8(&w->b, 2, (int8_t)e->location, 0);
  etrt_fb_add_i8(&w->b, 3, (int8_t)e->device_type, 0);
  etrt_fb_add_i8(&w->b, 4, (int8_t)e->device_index, 0);
  size_t pos = end_table(w, refs);
  patch_optional_str(w, refs[1], e->fully_qualified_name);
  return pos;
}

static size_t write_tensor(pte_writer *w, const etrt_pte_tensor *t) {
  size_t refs[MAX_SLOTS];
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_i8(&w->b, PTE_TENSOR_SCALAR_TYPE, (int8_t)t->scalar_type, 0);
  etrt_fb_add_i32(&w->b, PTE_TENSOR_STORAGE_OFFSET, t->storage_offset, 0);
  etrt_fb_add_offset(&w->b, PTE_TENSOR_SIZES);
  etrt_fb_add_offset(&w->b, PTE_TENSOR_DIM_ORDER);
  etrt_fb_add_bool(&w->b, PTE_TENSOR_REQUIRES_GRAD, t->requires_grad, false);
  etrt_fb_add_u32(&w->b, PTE_TENSOR_DATA_BUFFER_IDX, t->data_buffer_idx, 0);
  if (t->has_allocation_info) etrt_fb_add_offset(&w->b, PTE_TENSOR_ALLOCATION_INFO);
  etrt_fb_add_i8(&w->b, PTE_TENSOR_LAYOUT, (int8_t)t->layout, 0);
  etrt_fb_add_i8(&w->b, PTE_TENSOR_SHAPE_DYNAMISM, (int8_t)t->shape_dynamism, 0);
  if (t->has_extra_tensor_info) etrt_fb_add_offset(&w->b, PTE_TENSOR_EXTRA_TENSOR_INFO);
  size_t pos = end_table(w, refs);
  patch(w, refs[PTE_TENSOR_SIZES], NUMBERS(w, t->sizes, "Tensor.sizes"));
  patch(w, refs[PTE_TENSOR_DIM_ORDER], NUMBERS(w, t->dim_order, "Tensor.dim_order"));
  if (t->has_allocation_info)
    patch(w, refs[PTE_TENSOR_ALLOCATION_INFO], write_allocation(w, &t->allocation_info));
  if (t->has_extra_tensor_info) {
    patch(w, refs[PTE_TENSOR_EXTRA_TENSOR_INFO], write_extra(w, &t->extra_tensor_info));
  }
  return pos;
}

/* The member table of an EValue's union. */
static size_t write_value_member(pte_writer *w, const etrt_pte_value *v) {
  size_t refs[MAX_SLOTS];
  switch (v->kind) {
    case ETRT_PTE_VALUE_TENSOR:
      return write_tensor(w, &v->tensor);
    case ETRT_PTE_VALUE_NULL:
      etrt_fb_table_begin(&w->b);
      return etrt_fb_table_end(&w->b);
    case ETRT_PTE_VALUE_INT:
      etrt_fb_table_begin(&w->b);
      etrt_fb_add_i64(&w->b, 0, v->int_val, 0);
      return etrt_fb_table_end(&w->b);
    case ETRT_PTE_VALUE_BOOL:
      etrt_fb_table_begin(&w->b);
      etrt_fb_add_bool(&w->b, 0, v->bool_val, false);
      return etrt_fb_table_end(&w->b);
    case ETRT_PTE_VALUE_DOUBLE:
      etrt_fb_table_begin(&w->b);
      etrt_fb_add_f64(&w->b, 0, v->double_val, 0.0);
      return etrt_fb_table_end(&w->b);
    default:
      break;
  }
  /* The remaining kinds are a table with one offset field in slot 0. */
  etrt_fb_table_begin(&w->b);
  if (v->kind != ETRT_PTE_VALUE_STRING || v->string_val.data) etrt_fb_add_offset(&w->b, 0);
  size_t pos = end_table(w, refs);
  size_t child = 0;
  switch (v->kind) {
    case ETRT_PTE_VALUE_STRING:
      patch_optional_str(w, refs[0], v->string_val);
      return pos;
    case ETRT_PTE_VALUE_INT_LIST:
      child = NUMBERS(w, v->int_list, "IntList.items");
      break;
    case ETRT_PTE_VALUE_DOUBLE_LIST:
      child = NUMBERS(w, v->double_list, "DoubleList.items");
      break;
    case ETRT_PTE_VALUE_BOOL_LIST:
      child = NUMBERS(w, v->bool_list, "BoolList.items");
      break;
    case ETRT_PTE_VALUE_TENSOR_LIST:
      child = NUMBERS(w, v->tensor_list, "TensorList.items");
      break;
    case ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST:
      child = NUMBERS(w, v->optional_tensor_list, "OptionalTensorList.items");
      break;
    default:
      if (w->missing == NULL) w->missing = "EValue.val (unknown kind)";
      return pos;
  }
  patch(w, refs[0], child);
  return pos;
}

/* A table holding a union: type byte in `slot`, value offset in `slot + 1`. */
static size_t write_union_holder(pte_writer *w, uint8_t tag,
                                 size_t (*member)(pte_writer *, const void *), const void *item) {
  size_t refs[MAX_SLOTS];
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_u8(&w->b, 0, tag, 0);
  etrt_fb_add_offset(&w->b, 1);
  size_t pos = end_table(w, refs);
  patch(w, refs[1], member(w, item));
  return pos;
}

static size_t value_member_thunk(pte_writer *w, const void *item) {
  return write_value_member(w, item);
}

static size_t write_value(pte_writer *w, const etrt_pte_value *v) {
  return write_union_holder(w, (uint8_t)v->kind, value_member_thunk, v);
}

static size_t write_scratch(pte_writer *w, const etrt_pte_delegate_scratch *s) {
  size_t refs[MAX_SLOTS];
  etrt_fb_table_begin(&w->b);
  if (s->has_allocation) etrt_fb_add_offset(&w->b, 0);
  etrt_fb_add_u64(&w->b, 1, s->size, 0);
  size_t pos = end_table(w, refs);
  if (s->has_allocation) patch(w, refs[0], write_allocation(w, &s->allocation));
  return pos;
}

static size_t write_call(pte_writer *w, int32_t index, etrt_pte_i32s args,
                         const etrt_pte_delegate_scratch *scratch, size_t scratch_count) {
  size_t refs[MAX_SLOTS], result_;
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_i32(&w->b, 0, index, 0);
  etrt_fb_add_offset(&w->b, 1);
  if (scratch_count > 0) etrt_fb_add_offset(&w->b, 2);
  size_t pos = end_table(w, refs);
  patch(w, refs[1], NUMBERS(w, args, "args"));
  if (scratch_count > 0) {
    TABLE_VECTOR(w, scratch, scratch_count, write_scratch, "DelegateCall.scratch");
    patch(w, refs[2], result_);
  }
  return pos;
}

static size_t write_two_ints(pte_writer *w, int32_t a, int32_t b) {
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_i32(&w->b, 0, a, 0);
  etrt_fb_add_i32(&w->b, 1, b, 0);
  return etrt_fb_table_end(&w->b);
}

static size_t instruction_member_thunk(pte_writer *w, const void *item) {
  const etrt_pte_instruction *in = item;
  switch (in->kind) {
    case ETRT_PTE_INSTR_KERNEL:
      return write_call(w, in->kernel.op_index, in->kernel.args, NULL, 0);
    case ETRT_PTE_INSTR_DELEGATE:
      return write_call(w, in->delegate.delegate_index, in->delegate.args, in->delegate.scratch,
                        in->delegate.scratch_count);
    case ETRT_PTE_INSTR_MOVE:
      return write_two_ints(w, in->move.move_from, in->move.move_to);
    case ETRT_PTE_INSTR_JUMP_FALSE:
      return write_two_ints(w, in->jump_false.cond_value_index,
                            in->jump_false.destination_instruction);
    case ETRT_PTE_INSTR_FREE:
      etrt_fb_table_begin(&w->b);
      etrt_fb_add_i32(&w->b, 0, in->free_call.value_index, 0);
      return etrt_fb_table_end(&w->b);
  }
  if (w->missing == NULL) w->missing = "Instruction.instr_args (unknown kind)";
  etrt_fb_table_begin(&w->b);
  return etrt_fb_table_end(&w->b);
}

static size_t write_instruction(pte_writer *w, const etrt_pte_instruction *in) {
  return write_union_holder(w, (uint8_t)in->kind, instruction_member_thunk, in);
}

static size_t write_chain(pte_writer *w, const etrt_pte_chain *c) {
  size_t refs[MAX_SLOTS], result_;
  size_t pos = write_offsets_table(w, 3, refs);
  patch(w, refs[0], NUMBERS(w, c->inputs, "Chain.inputs"));
  patch(w, refs[1], NUMBERS(w, c->outputs, "Chain.outputs"));
  TABLE_VECTOR(w, c->instructions, c->instructions_count, write_instruction, "Chain.instructions");
  patch(w, refs[2], result_);
  return pos;
}

static size_t write_operator(pte_writer *w, const etrt_pte_operator *op) {
  size_t refs[MAX_SLOTS];
  size_t pos = write_offsets_table(w, 2, refs);
  patch(w, refs[0], str_or_empty(w, op->name));
  patch(w, refs[1], str_or_empty(w, op->overload));
  return pos;
}

static size_t write_compile_spec(pte_writer *w, const etrt_pte_compile_spec *s) {
  size_t refs[MAX_SLOTS];
  size_t pos = write_offsets_table(w, 2, refs);
  patch(w, refs[0], str_or_empty(w, s->key));
  patch(w, refs[1], write_bytes(w, s->value, 1, "CompileSpec.value"));
  return pos;
}

static size_t write_delegate(pte_writer *w, const etrt_pte_delegate *d) {
  size_t refs[MAX_SLOTS], result_;
  size_t pos = write_offsets_table(w, 3, refs);
  patch(w, refs[0], str_or_empty(w, d->id));
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_i8(&w->b, 0, (int8_t)d->location, 0);
  etrt_fb_add_u32(&w->b, 1, d->index, 0);
  patch(w, refs[1], etrt_fb_table_end(&w->b));
  TABLE_VECTOR(w, d->compile_specs, d->compile_specs_count, write_compile_spec,
               "BackendDelegate.compile_specs");
  patch(w, refs[2], result_);
  return pos;
}

static size_t write_buffer_device(pte_writer *w, const etrt_pte_buffer_device *d) {
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_i32(&w->b, 0, d->buffer_idx, 0);
  etrt_fb_add_i8(&w->b, 1, (int8_t)d->device_type, 0);
  etrt_fb_add_i8(&w->b, 2, (int8_t)d->device_index, 0);
  return etrt_fb_table_end(&w->b);
}

static size_t write_plan(pte_writer *w, const etrt_pte_plan *p) {
  size_t refs[MAX_SLOTS], result_;
  etrt_fb_table_begin(&w->b);
  add_optional_str(w, PTE_PLAN_NAME, p->name);
  if (p->has_container_meta_type) etrt_fb_add_offset(&w->b, PTE_PLAN_CONTAINER_META_TYPE);
  for (int s = PTE_PLAN_VALUES; s <= PTE_PLAN_NON_CONST_BUFFER_SIZES; ++s)
    etrt_fb_add_offset(&w->b, s);
  if (p->non_const_buffer_device_count > 0)
    etrt_fb_add_offset(&w->b, PTE_PLAN_NON_CONST_BUFFER_DEVICE);
  size_t pos = end_table(w, refs);
  patch_optional_str(w, refs[PTE_PLAN_NAME], p->name);
  if (p->has_container_meta_type) {
    size_t meta_refs[MAX_SLOTS];
    etrt_fb_table_begin(&w->b);
    add_optional_str(w, 0, p->encoded_inp_str);
    add_optional_str(w, 1, p->encoded_out_str);
    patch(w, refs[PTE_PLAN_CONTAINER_META_TYPE], end_table(w, meta_refs));
    patch_optional_str(w, meta_refs[0], p->encoded_inp_str);
    patch_optional_str(w, meta_refs[1], p->encoded_out_str);
  }
  TABLE_VECTOR(w, p->values, p->values_count, write_value, "ExecutionPlan.values");
  patch(w, refs[PTE_PLAN_VALUES], result_);
  patch(w, refs[PTE_PLAN_INPUTS], NUMBERS(w, p->inputs, "ExecutionPlan.inputs"));
  patch(w, refs[PTE_PLAN_OUTPUTS], NUMBERS(w, p->outputs, "ExecutionPlan.outputs"));
  TABLE_VECTOR(w, p->chains, p->chains_count, write_chain, "ExecutionPlan.chains");
  patch(w, refs[PTE_PLAN_CHAINS], result_);
  TABLE_VECTOR(w, p->operators, p->operators_count, write_operator, "ExecutionPlan.operators");
  patch(w, refs[PTE_PLAN_OPERATORS], result_);
  TABLE_VECTOR(w, p->delegates, p->delegates_count, write_delegate, "ExecutionPlan.delegates");
  patch(w, refs[PTE_PLAN_DELEGATES], result_);
  patch(w, refs[PTE_PLAN_NON_CONST_BUFFER_SIZES],
        NUMBERS(w, p->non_const_buffer_sizes, "ExecutionPlan.non_const_buffer_sizes"));
  if (p->non_const_buffer_device_count > 0) {
    TABLE_VECTOR(w, p->non_const_buffer_device, p->non_const_buffer_device_count,
                 write_buffer_device, "ExecutionPlan.non_const_buffer_device");
    patch(w, refs[PTE_PLAN_NON_CONST_BUFFER_DEVICE], result_);
  }
  return pos;
}

static size_t write_inline_buffer(pte_writer *w, const etrt_pte_bytes *bytes) {
  size_t refs[MAX_SLOTS];
  size_t pos = write_offsets_table(w, 1, refs);
  patch(w, refs[0], write_bytes(w, *bytes, PTE_INLINE_ALIGNMENT, "inline data"));
  return pos;
}

/* Segment i's offset relative to the segment base, as ExecuTorch lays them out. */
typedef struct segment_layout {
  uint64_t offset;
  uint64_t size;
} segment_layout;

static size_t write_segment(pte_writer *w, const segment_layout *s) {
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_u64(&w->b, 0, s->offset, 0);
  etrt_fb_add_u64(&w->b, 1, s->size, 0);
  return etrt_fb_table_end(&w->b);
}

static size_t write_subsegments(pte_writer *w, const etrt_pte_subsegment_offsets *s) {
  size_t refs[MAX_SLOTS];
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_u32(&w->b, 0, s->segment_index, 0);
  etrt_fb_add_offset(&w->b, 1);
  size_t pos = end_table(w, refs);
  patch(w, refs[1], NUMBERS(w, s->offsets, "SubsegmentOffsets.offsets"));
  return pos;
}

static size_t write_named_data(pte_writer *w, const etrt_pte_named_data *n) {
  size_t refs[MAX_SLOTS];
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_offset(&w->b, 0);
  etrt_fb_add_u32(&w->b, 1, n->segment_index, 0);
  size_t pos = end_table(w, refs);
  patch(w, refs[0], str_or_empty(w, n->key));
  return pos;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static etrt_status layout_segments(const etrt_pte_program *m, segment_layout *layout,
                                   uint64_t *total) {
  uint64_t end = 0;
  for (size_t i = 0; i < m->segments_count; ++i) {
    const etrt_pte_segment *s = &m->segments[i];
    uint64_t align = PTE_SEGMENT_ALIGNMENT;
    if (s->alignment > 1) align = align / gcd_u64(align, s->alignment) * s->alignment; /* lcm */
    uint64_t start = (end + align - 1) / align * align;
    if (start < end || (s->data.size > 0 && s->data.data == NULL) || start + s->data.size < start) {
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "writing a program: segment %zu has no data or is too large", i);
    }
    layout[i].offset = start;
    layout[i].size = s->data.size;
    end = start + s->data.size;
  }
  *total = end;
  return ETRT_OK;
}

static size_t write_program(pte_writer *w, const etrt_pte_program *m,
                            const segment_layout *layout) {
  size_t refs[MAX_SLOTS], result_;
  etrt_fb_table_begin(&w->b);
  etrt_fb_add_u32(&w->b, PTE_PROGRAM_VERSION, m->version, 0);
  for (int s = PTE_PROGRAM_EXECUTION_PLAN; s <= PTE_PROGRAM_SEGMENTS; ++s)
    etrt_fb_add_offset(&w->b, s);
  if (m->has_constant_segment) etrt_fb_add_offset(&w->b, PTE_PROGRAM_CONSTANT_SEGMENT);
  if (m->mutable_data_segments_count > 0)
    etrt_fb_add_offset(&w->b, PTE_PROGRAM_MUTABLE_DATA_SEGMENTS);
  if (m->named_data_count > 0) etrt_fb_add_offset(&w->b, PTE_PROGRAM_NAMED_DATA);
  size_t pos = end_table(w, refs);
  TABLE_VECTOR(w, m->plans, m->plans_count, write_plan, "Program.execution_plan");
  patch(w, refs[PTE_PROGRAM_EXECUTION_PLAN], result_);
  TABLE_VECTOR(w, m->constant_buffer, m->constant_buffer_count, write_inline_buffer,
               "Program.constant_buffer");
  patch(w, refs[PTE_PROGRAM_CONSTANT_BUFFER], result_);
  TABLE_VECTOR(w, m->backend_delegate_data, m->backend_delegate_data_count, write_inline_buffer,
               "Program.backend_delegate_data");
  patch(w, refs[PTE_PROGRAM_BACKEND_DELEGATE_DATA], result_);
  TABLE_VECTOR(w, layout, m->segments_count, write_segment, "Program.segments");
  patch(w, refs[PTE_PROGRAM_SEGMENTS], result_);
  if (m->has_constant_segment)
    patch(w, refs[PTE_PROGRAM_CONSTANT_SEGMENT], write_subsegments(w, &m->constant_segment));
  if (m->mutable_data_segments_count > 0) {
    TABLE_VECTOR(w, m->mutable_data_segments, m->mutable_data_segments_count, write_subsegments,
                 "Program.mutable_data_segments");
    patch(w, refs[PTE_PROGRAM_MUTABLE_DATA_SEGMENTS], result_);
  }
  if (m->named_data_count > 0) {
    TABLE_VECTOR(w, m->named_data, m->named_data_count, write_named_data, "Program.named_data");
    patch(w, refs[PTE_PROGRAM_NAMED_DATA], result_);
  }
  return pos;
}

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

etrt_status etrt_pte_write(const etrt_pte_program *model, uint8_t **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  if (model->segments_count > 0 && model->segments == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "writing a program: segments_count %zu with no segments",
                      model->segments_count);
  }
  segment_layout *layout =
      calloc(model->segments_count ? model->segments_count : 1, sizeof *layout);
  if (layout == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "writing a program: out of memory");
  uint64_t segment_bytes = 0;
  etrt_status st = layout_segments(model, layout, &segment_bytes);
  if (st != ETRT_OK) {
    free(layout);
    return st;
  }
  /* As ExecuTorch: the extended header only when there is segment data. */
  bool header = segment_bytes > 0;

  pte_writer w;
  memset(&w, 0, sizeof w);
  etrt_fb_builder_init(&w.b);
  etrt_fb_builder_start(&w.b, PTE_FILE_IDENTIFIER, header ? PTE_HEADER_LENGTH : 0);
  etrt_fb_set_root(&w.b, write_program(&w, model, layout));
  st = etrt_fb_builder_status(&w.b);
  if (st == ETRT_OK && w.missing != NULL) {
    st = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s has a count but no data", w.missing);
  }
  size_t program_size = w.b.size;
  size_t base = header ? etrt_align_up(program_size, PTE_SEGMENT_ALIGNMENT) : program_size;
  size_t total = 0;
  uint8_t *file = NULL;
  if (st == ETRT_OK && (segment_bytes > SIZE_MAX - base)) {
    st = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "segments too large");
  }
  if (st == ETRT_OK) {
    total = base + (size_t)segment_bytes;
    file = calloc(total ? total : 1, 1);
    if (file == NULL)
      st = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for %zu bytes", total);
  }
  if (st != ETRT_OK) {
    free(layout);
    etrt_fb_builder_release(&w.b);
    return etrt_error_context(st, "writing a program: ");
  }
  memcpy(file, w.b.buf, program_size);
  etrt_fb_builder_release(&w.b);
  if (header) {
    uint8_t *h = file + PTE_HEADER_OFFSET;
    memcpy(h, PTE_HEADER_MAGIC, 4);
    put_u32(h + 4, PTE_HEADER_LENGTH);
    put_u64(h + 8, program_size);
    put_u64(h + 16, base);
    put_u64(h + 24, segment_bytes);
    for (size_t i = 0; i < model->segments_count; ++i) {
      if (layout[i].size)
        memcpy(file + base + layout[i].offset, model->segments[i].data.data, layout[i].size);
    }
  }
  free(layout);
  *out = file;
  *out_size = total;
  return ETRT_OK;
}
