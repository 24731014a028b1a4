/* The .pte reader: identifies the file, checks the extended header, then walks the
 * Program FlatBuffer once, verifying every field before decoding it into the
 * etrt_pte_program model (views into the input, structs in an arena). */
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "pte/flatbuffers_reader.h"
#include "pte/pte.h"
#include "base/arena.h"
#include "pte/pte_format.h"

typedef struct pte_reader {
  etrt_fb_reader fb;
  etrt_arena *arena;
  etrt_pte_program *program;
  const uint8_t *file;
  size_t file_size;
  size_t segment_base;   /* where segment offsets start */
  size_t segment_region; /* bytes of segment data after segment_base */
} pte_reader;

/* What the plan-level checks need to know about the plan being read. */
typedef struct plan_limits {
  size_t values;
  size_t operators;
  size_t delegates;
  size_t buffers; /* non_const_buffer_sizes */
} plan_limits;

static size_t file_offset(const pte_reader *r, const void *p) {
  return (size_t)((const uint8_t *)p - r->file);
}

static etrt_status no_memory(const char *what) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a program: out of memory for %s", what);
}

static void *alloc_array(pte_reader *r, size_t elem_size, size_t count) {
  return etrt_arena_alloc_array(r->arena, elem_size, count, 16);
}

/* ---- small typed field readers ---------------------------------------------- */

static etrt_status read_str(const etrt_fb_table *t, int slot, const char *field,
                            etrt_pte_str *out) {
  etrt_fb_str s;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_string(t, slot, field, &s));
  out->data = s.data;
  out->size = s.size;
  return ETRT_OK;
}

static etrt_status read_required_str(const etrt_fb_table *t, int slot, const char *field,
                                     etrt_pte_str *out) {
  ETRT_RETURN_IF_ERROR(read_str(t, slot, field, out));
  if (out->data == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: required string is missing", t->type, field,
                      t->pos);
  }
  return ETRT_OK;
}

static etrt_status read_bytes(const etrt_fb_table *t, int slot, const char *field,
                              etrt_pte_bytes *out) {
  return etrt_fb_read_numbers(t, slot, field, 1, (const void **)&out->data, &out->size);
}

/* Checks every entry of `v` is a value index (or -1 where `allow_none`). */
static etrt_status check_value_indices(pte_reader *r, const etrt_fb_table *t, const char *field,
                                       etrt_pte_i32s v, size_t limit, bool allow_none) {
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(&r->fb, v.count));
  for (size_t i = 0; i < v.count; ++i) {
    int32_t x = v.data[i];
    if ((x < 0 && !(allow_none && x == -1)) || (x >= 0 && (size_t)x >= limit)) {
      return etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "%s.%s[%zu] at byte offset %zu: value index %d is out of range (%zu values)", t->type,
          field, i, file_offset(r, &v.data[i]), x, limit);
    }
  }
  return ETRT_OK;
}

static etrt_status check_index(const etrt_fb_table *t, int slot, const char *field, int64_t value,
                               size_t limit, const char *what) {
  if (value < 0 || (uint64_t)value >= limit) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: index %lld is out of range (%zu %s)", t->type,
                      field, etrt_fb_field_offset(t, slot), (long long)value, limit, what);
  }
  return ETRT_OK;
}

static etrt_status check_enum(const etrt_fb_table *t, int slot, const char *field, int value,
                              int max) {
  if (value < 0 || value > max) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s.%s at byte offset %zu: value %d is not in 0..%d", t->type, field,
                      etrt_fb_field_offset(t, slot), value, max);
  }
  return ETRT_OK;
}

/* Reads a vector of tables and allocates `elem_size` bytes per element. */
static etrt_status read_table_vector(pte_reader *r, const etrt_fb_table *t, int slot,
                                     const char *field, size_t elem_size, etrt_fb_vector *v,
                                     void **items) {
  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(t, slot, field, 4, 4, v));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(&r->fb, v->count));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge_memory(&r->fb, (uint64_t)v->count * elem_size));
  *items = NULL;
  if (v->count == 0) return ETRT_OK;
  *items = alloc_array(r, elem_size, v->count);
  return *items ? ETRT_OK : no_memory(field);
}

static etrt_status read_allocation(const etrt_fb_table *t, etrt_pte_allocation *a) {
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(t, 0, "memory_id", 0, &a->memory_id));
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(t, 1, "memory_offset_low", 0, &a->memory_offset_low));
  return etrt_fb_read_u32(t, 2, "memory_offset_high", 0, &a->memory_offset_high);
}

/* ---- program-level tables --------------------------------------------------- */

static etrt_status read_segments(pte_reader *r, const etrt_fb_table *root) {
  etrt_fb_vector v;
  etrt_pte_segment *segs;
  ETRT_RETURN_IF_ERROR(read_table_vector(r, root, PTE_PROGRAM_SEGMENTS, "segments", sizeof *segs,
                                         &v, (void **)&segs));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table t;
    etrt_status st = etrt_fb_vector_table(&v, i, "DataSegment", &t);
    if (st == ETRT_OK) st = etrt_fb_read_u64(&t, 0, "offset", 0, &segs[i].offset);
    if (st == ETRT_OK) st = etrt_fb_read_u64(&t, 1, "size", 0, &segs[i].size);
    if (st == ETRT_OK && !etrt_range_ok(segs[i].offset, segs[i].size, r->segment_region)) {
      st = etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "DataSegment at byte offset %zu: bytes [%llu, +%llu) lie outside the segment data "
          "(%zu bytes from byte offset %zu%s)",
          t.pos, (unsigned long long)segs[i].offset, (unsigned long long)segs[i].size,
          r->segment_region, r->segment_base,
          r->program->has_extended_header ? "" : "; the file has no extended header");
    }
    if (st != ETRT_OK) return etrt_error_context(st, "segments[%zu]: ", i);
    segs[i].data.data = r->file + r->segment_base + segs[i].offset;
    segs[i].data.size = (size_t)segs[i].size;
    /* The alignment the segment has in this file, so that writing the model back
     * keeps it (the file does not record what was asked for). */
    uint64_t align = segs[i].offset & (~segs[i].offset + 1);
    segs[i].alignment =
        (align == 0 || align > PTE_MAX_KEPT_ALIGNMENT) ? PTE_MAX_KEPT_ALIGNMENT : (uint32_t)align;
  }
  r->program->segments = segs;
  r->program->segments_count = v.count;
  return ETRT_OK;
}

static etrt_status read_subsegments(pte_reader *r, const etrt_fb_table *t,
                                    etrt_pte_subsegment_offsets *s) {
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(t, 0, "segment_index", 0, &s->segment_index));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 1, "offsets", &s->offsets));
  if (s->offsets.count == 0) return ETRT_OK;
  ETRT_RETURN_IF_ERROR(
      check_index(t, 0, "segment_index", s->segment_index, r->program->segments_count, "segments"));
  uint64_t limit = r->program->segments[s->segment_index].size;
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(&r->fb, s->offsets.count));
  for (size_t i = 0; i < s->offsets.count; ++i) {
    if (s->offsets.data[i] > limit) {
      return etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "%s.offsets[%zu] at byte offset %zu: offset %llu is past the end of segment %u "
          "(%llu bytes)",
          t->type, i, file_offset(r, &s->offsets.data[i]), (unsigned long long)s->offsets.data[i],
          s->segment_index, (unsigned long long)limit);
    }
  }
  return ETRT_OK;
}

static etrt_status read_inline_data(pte_reader *r, const etrt_fb_table *root, int slot,
                                    const char *field, const char *type, const etrt_pte_bytes **out,
                                    size_t *count) {
  etrt_fb_vector v;
  etrt_pte_bytes *items;
  ETRT_RETURN_IF_ERROR(read_table_vector(r, root, slot, field, sizeof *items, &v, (void **)&items));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table t;
    etrt_status st = etrt_fb_vector_table(&v, i, type, &t);
    if (st == ETRT_OK)
      st = read_bytes(&t, 0, slot == PTE_PROGRAM_CONSTANT_BUFFER ? "storage" : "data", &items[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "%s[%zu]: ", field, i);
  }
  *out = items;
  *count = v.count;
  return ETRT_OK;
}

static etrt_status read_program_tables(pte_reader *r, const etrt_fb_table *root) {
  etrt_pte_program *p = r->program;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(root, PTE_PROGRAM_VERSION, "version", 0, &p->version));
  ETRT_RETURN_IF_ERROR(read_segments(r, root));
  ETRT_RETURN_IF_ERROR(read_inline_data(r, root, PTE_PROGRAM_CONSTANT_BUFFER, "constant_buffer",
                                        "Buffer", &p->constant_buffer, &p->constant_buffer_count));
  ETRT_RETURN_IF_ERROR(read_inline_data(
      r, root, PTE_PROGRAM_BACKEND_DELEGATE_DATA, "backend_delegate_data",
      "BackendDelegateInlineData", &p->backend_delegate_data, &p->backend_delegate_data_count));

  etrt_fb_table t;
  bool present;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_table(root, PTE_PROGRAM_CONSTANT_SEGMENT, "constant_segment",
                                          "SubsegmentOffsets", &t, &present));
  if (present) {
    p->has_constant_segment = true;
    etrt_status st = read_subsegments(r, &t, &p->constant_segment);
    if (st != ETRT_OK) return etrt_error_context(st, "constant_segment: ");
    if (p->constant_segment.offsets.count > 1 && p->constant_buffer_count > 1) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "Program.constant_segment at byte offset %zu: both constant_buffer and "
                        "constant_segment hold constants; a program uses one or the other",
                        t.pos);
    }
  }

  etrt_fb_vector v;
  etrt_pte_subsegment_offsets *mutables;
  ETRT_RETURN_IF_ERROR(read_table_vector(r, root, PTE_PROGRAM_MUTABLE_DATA_SEGMENTS,
                                         "mutable_data_segments", sizeof *mutables, &v,
                                         (void **)&mutables));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_status st = etrt_fb_vector_table(&v, i, "SubsegmentOffsets", &t);
    if (st == ETRT_OK) st = read_subsegments(r, &t, &mutables[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "mutable_data_segments[%zu]: ", i);
  }
  p->mutable_data_segments = mutables;
  p->mutable_data_segments_count = v.count;

  etrt_pte_named_data *named;
  ETRT_RETURN_IF_ERROR(read_table_vector(r, root, PTE_PROGRAM_NAMED_DATA, "named_data",
                                         sizeof *named, &v, (void **)&named));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_status st = etrt_fb_vector_table(&v, i, "NamedData", &t);
    if (st == ETRT_OK) st = read_required_str(&t, 0, "key", &named[i].key);
    if (st == ETRT_OK) st = etrt_fb_read_u32(&t, 1, "segment_index", 0, &named[i].segment_index);
    if (st == ETRT_OK)
      st = check_index(&t, 1, "segment_index", named[i].segment_index, p->segments_count,
                       "segments");
    if (st != ETRT_OK) return etrt_error_context(st, "named_data[%zu]: ", i);
  }
  p->named_data = named;
  p->named_data_count = v.count;
  return ETRT_OK;
}

/* ---- values ----------------------------------------------------------------- */

static const char *const kernel_type_names[] = {
    "NONE",   "Null",    "Int",        "Bool",     "Double",     "Tensor",
    "String", "IntList", "DoubleList", "BoolList", "TensorList", "OptionalTensorList"};

/* Where a tensor's bytes come from is checked here, once, so that loading needs no
 * further range checks. */
static etrt_status check_tensor_data(pte_reader *r, const etrt_fb_table *t,
                                     const etrt_pte_tensor *x) {
  const etrt_pte_program *p = r->program;
  if (x->has_extra_tensor_info && x->extra_tensor_info.location == ETRT_PTE_TENSOR_EXTERNAL) {
    if (x->extra_tensor_info.fully_qualified_name.size == 0) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "Tensor at byte offset %zu: external data needs a fully_qualified_name",
                        t->pos);
    }
    return ETRT_OK;
  }
  if (x->data_buffer_idx == 0) return ETRT_OK;
  if (!x->has_allocation_info) {
    size_t limit =
        p->constant_buffer_count > 0 ? p->constant_buffer_count : p->constant_segment.offsets.count;
    return check_index(t, PTE_TENSOR_DATA_BUFFER_IDX, "data_buffer_idx", x->data_buffer_idx, limit,
                       p->constant_buffer_count > 0 ? "inline constant buffers"
                                                    : "constants in the constant segment");
  }
  uint64_t msi = x->has_extra_tensor_info ? x->extra_tensor_info.mutable_data_segments_idx : 0;
  if (msi >= p->mutable_data_segments_count) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "Tensor at byte offset %zu: mutable data segment %llu does not exist (%zu)",
                      t->pos, (unsigned long long)msi, p->mutable_data_segments_count);
  }
  return check_index(t, PTE_TENSOR_DATA_BUFFER_IDX, "data_buffer_idx", x->data_buffer_idx,
                     p->mutable_data_segments[msi].offsets.count,
                     "initial values in the mutable data segment");
}

static etrt_status read_tensor(pte_reader *r, const etrt_fb_table *t, const plan_limits *lim,
                               etrt_pte_tensor *x) {
  int8_t i8 = 0;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(t, PTE_TENSOR_SCALAR_TYPE, "scalar_type", 0, &i8));
  x->scalar_type = (etrt_dtype)i8;
  ETRT_RETURN_IF_ERROR(
      etrt_fb_read_i32(t, PTE_TENSOR_STORAGE_OFFSET, "storage_offset", 0, &x->storage_offset));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, PTE_TENSOR_SIZES, "sizes", &x->sizes));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, PTE_TENSOR_DIM_ORDER, "dim_order", &x->dim_order));
  ETRT_RETURN_IF_ERROR(
      etrt_fb_read_bool(t, PTE_TENSOR_REQUIRES_GRAD, "requires_grad", false, &x->requires_grad));
  ETRT_RETURN_IF_ERROR(
      etrt_fb_read_u32(t, PTE_TENSOR_DATA_BUFFER_IDX, "data_buffer_idx", 0, &x->data_buffer_idx));
  etrt_fb_table sub;
  bool present;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_table(t, PTE_TENSOR_ALLOCATION_INFO, "allocation_info",
                                          "AllocationDetails", &sub, &present));
  if (present) {
    x->has_allocation_info = true;
    ETRT_RETURN_IF_ERROR(read_allocation(&sub, &x->allocation_info));
    ETRT_RETURN_IF_ERROR(check_index(&sub, 0, "memory_id", x->allocation_info.memory_id,
                                     lim->buffers, "planned buffers in non_const_buffer_sizes"));
  }
  ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(t, PTE_TENSOR_LAYOUT, "layout", 0, &i8));
  x->layout = i8;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(t, PTE_TENSOR_SHAPE_DYNAMISM, "shape_dynamism", 0, &i8));
  ETRT_RETURN_IF_ERROR(check_enum(t, PTE_TENSOR_SHAPE_DYNAMISM, "shape_dynamism", i8, 2));
  x->shape_dynamism = (etrt_pte_shape_dynamism)i8;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_table(t, PTE_TENSOR_EXTRA_TENSOR_INFO, "extra_tensor_info",
                                          "ExtraTensorInfo", &sub, &present));
  if (present) {
    etrt_pte_extra_tensor_info *e = &x->extra_tensor_info;
    x->has_extra_tensor_info = true;
    ETRT_RETURN_IF_ERROR(
        etrt_fb_read_u64(&sub, 0, "mutable_data_segments_idx", 0, &e->mutable_data_segments_idx));
    ETRT_RETURN_IF_ERROR(read_str(&sub, 1, "fully_qualified_name", &e->fully_qualified_name));
    ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(&sub, 2, "location", 0, &i8));
    ETRT_RETURN_IF_ERROR(check_enum(&sub, 2, "location", i8, 1));
    e->location = (etrt_pte_tensor_location)i8;
    ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(&sub, 3, "device_type", 0, &i8));
    ETRT_RETURN_IF_ERROR(check_enum(&sub, 3, "device_type", i8, ETRT_PTE_DEVICE_XPU));
    e->device_type = i8;
    ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(&sub, 4, "device_index", 0, &i8));
    e->device_index = i8;
  }
  return check_tensor_data(r, t, x);
}

static etrt_status read_value(pte_reader *r, const etrt_fb_table *ev, const plan_limits *lim,
                              etrt_pte_value *out) {
  uint8_t tag;
  etrt_fb_table t;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_union(ev, 0, "val", ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST,
                                          kernel_type_names, &tag, &t));
  if (tag == 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "EValue.val at byte offset %zu: the value has no type (NONE)", ev->pos);
  }
  out->kind = (etrt_pte_value_kind)tag;
  switch (out->kind) {
    case ETRT_PTE_VALUE_NULL:
      return ETRT_OK;
    case ETRT_PTE_VALUE_INT:
      return etrt_fb_read_i64(&t, 0, "int_val", 0, &out->int_val);
    case ETRT_PTE_VALUE_BOOL:
      return etrt_fb_read_bool(&t, 0, "bool_val", false, &out->bool_val);
    case ETRT_PTE_VALUE_DOUBLE:
      return etrt_fb_read_f64(&t, 0, "double_val", 0.0, &out->double_val);
    case ETRT_PTE_VALUE_TENSOR:
      return read_tensor(r, &t, lim, &out->tensor);
    case ETRT_PTE_VALUE_STRING:
      return read_str(&t, 0, "string_val", &out->string_val);
    case ETRT_PTE_VALUE_INT_LIST:
      return ETRT_FB_READ_VIEW(&t, 0, "items", &out->int_list);
    case ETRT_PTE_VALUE_DOUBLE_LIST:
      return ETRT_FB_READ_VIEW(&t, 0, "items", &out->double_list);
    case ETRT_PTE_VALUE_BOOL_LIST:
      return ETRT_FB_READ_VIEW(&t, 0, "items", &out->bool_list);
    case ETRT_PTE_VALUE_TENSOR_LIST:
      ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(&t, 0, "items", &out->tensor_list));
      return check_value_indices(r, &t, "items", out->tensor_list, lim->values, false);
    case ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST:
      ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(&t, 0, "items", &out->optional_tensor_list));
      return check_value_indices(r, &t, "items", out->optional_tensor_list, lim->values, true);
  }
  return ETRT_OK;
}

/* ---- instructions ----------------------------------------------------------- */

static const char *const instruction_type_names[] = {"NONE",     "KernelCall",    "DelegateCall",
                                                     "MoveCall", "JumpFalseCall", "FreeCall"};

static etrt_status read_scratch(pte_reader *r, const etrt_fb_table *t, etrt_pte_instruction *in) {
  etrt_fb_vector v;
  etrt_pte_delegate_scratch *items;
  ETRT_RETURN_IF_ERROR(read_table_vector(r, t, 2, "scratch", sizeof *items, &v, (void **)&items));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table s, a;
    bool present;
    etrt_status st = etrt_fb_vector_table(&v, i, "DelegateScratch", &s);
    if (st == ETRT_OK)
      st = etrt_fb_read_table(&s, 0, "allocation", "AllocationDetails", &a, &present);
    if (st == ETRT_OK && present) {
      items[i].has_allocation = true;
      st = read_allocation(&a, &items[i].allocation);
    }
    if (st == ETRT_OK) st = etrt_fb_read_u64(&s, 1, "size", 0, &items[i].size);
    if (st != ETRT_OK) return etrt_error_context(st, "scratch[%zu]: ", i);
  }
  in->delegate.scratch = items;
  in->delegate.scratch_count = v.count;
  return ETRT_OK;
}

static etrt_status read_instruction(pte_reader *r, const etrt_fb_table *it, const plan_limits *lim,
                                    size_t instructions, etrt_pte_instruction *in) {
  uint8_t tag;
  etrt_fb_table t;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_union(it, 0, "instr_args", ETRT_PTE_INSTR_FREE,
                                          instruction_type_names, &tag, &t));
  if (tag == 0) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "Instruction.instr_args at byte offset %zu: the instruction has no type (NONE)", it->pos);
  }
  in->kind = (etrt_pte_instruction_kind)tag;
  switch (in->kind) {
    case ETRT_PTE_INSTR_KERNEL:
      ETRT_RETURN_IF_ERROR(etrt_fb_read_i32(&t, 0, "op_index", 0, &in->kernel.op_index));
      ETRT_RETURN_IF_ERROR(
          check_index(&t, 0, "op_index", in->kernel.op_index, lim->operators, "operators"));
      ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(&t, 1, "args", &in->kernel.args));
      return check_value_indices(r, &t, "args", in->kernel.args, lim->values, false);
    case ETRT_PTE_INSTR_DELEGATE:
      ETRT_RETURN_IF_ERROR(
          etrt_fb_read_i32(&t, 0, "delegate_index", 0, &in->delegate.delegate_index));
      ETRT_RETURN_IF_ERROR(check_index(&t, 0, "delegate_index", in->delegate.delegate_index,
                                       lim->delegates, "delegates"));
      ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(&t, 1, "args", &in->delegate.args));
      ETRT_RETURN_IF_ERROR(
          check_value_indices(r, &t, "args", in->delegate.args, lim->values, false));
      return read_scratch(r, &t, in);
    case ETRT_PTE_INSTR_MOVE:
      ETRT_RETURN_IF_ERROR(etrt_fb_read_i32(&t, 0, "move_from", 0, &in->move.move_from));
      ETRT_RETURN_IF_ERROR(
          check_index(&t, 0, "move_from", in->move.move_from, lim->values, "values"));
      ETRT_RETURN_IF_ERROR(etrt_fb_read_i32(&t, 1, "move_to", 0, &in->move.move_to));
      return check_index(&t, 1, "move_to", in->move.move_to, lim->values, "values");
    case ETRT_PTE_INSTR_JUMP_FALSE:
      ETRT_RETURN_IF_ERROR(
          etrt_fb_read_i32(&t, 0, "cond_value_index", 0, &in->jump_false.cond_value_index));
      ETRT_RETURN_IF_ERROR(check_index(&t, 0, "cond_value_index", in->jump_false.cond_value_index,
                                       lim->values, "values"));
      ETRT_RETURN_IF_ERROR(etrt_fb_read_i32(&t, 1, "destination_instruction", 0,
                                            &in->jump_false.destination_instruction));
      /* Jumping to the end (== count) finishes the chain. */
      return check_index(&t, 1, "destination_instruction", in->jump_false.destination_instruction,
                         instructions + 1, "instructions, plus the end");
    case ETRT_PTE_INSTR_FREE:
      ETRT_RETURN_IF_ERROR(etrt_fb_read_i32(&t, 0, "value_index", 0, &in->free_call.value_index));
      return check_index(&t, 0, "value_index", in->free_call.value_index, lim->values, "values");
  }
  return ETRT_OK;
}

static etrt_status read_chain(pte_reader *r, const etrt_fb_table *t, const plan_limits *lim,
                              etrt_pte_chain *c) {
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 0, "inputs", &c->inputs));
  ETRT_RETURN_IF_ERROR(check_value_indices(r, t, "inputs", c->inputs, lim->values, false));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 1, "outputs", &c->outputs));
  ETRT_RETURN_IF_ERROR(check_value_indices(r, t, "outputs", c->outputs, lim->values, false));
  etrt_fb_vector v;
  etrt_pte_instruction *items;
  ETRT_RETURN_IF_ERROR(
      read_table_vector(r, t, 2, "instructions", sizeof *items, &v, (void **)&items));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table it;
    etrt_status st = etrt_fb_vector_table(&v, i, "Instruction", &it);
    if (st == ETRT_OK) st = read_instruction(r, &it, lim, v.count, &items[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "instructions[%zu]: ", i);
  }
  c->instructions = items;
  c->instructions_count = v.count;
  return ETRT_OK;
}

/* ---- delegates and the plan --------------------------------------------------- */

static etrt_status read_delegate(pte_reader *r, const etrt_fb_table *t, etrt_pte_delegate *d) {
  const etrt_pte_program *p = r->program;
  ETRT_RETURN_IF_ERROR(read_required_str(t, 0, "id", &d->id));
  etrt_fb_table ref;
  bool present;
  ETRT_RETURN_IF_ERROR(
      etrt_fb_read_table(t, 1, "processed", "BackendDelegateDataReference", &ref, &present));
  if (!present) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "BackendDelegate.processed at byte offset %zu: the delegate has no payload reference",
        t->pos);
  }
  int8_t location;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(&ref, 0, "location", 0, &location));
  ETRT_RETURN_IF_ERROR(check_enum(&ref, 0, "location", location, 1));
  d->location = (etrt_pte_data_location)location;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(&ref, 1, "index", 0, &d->index));
  if (d->location == ETRT_PTE_DATA_INLINE) {
    ETRT_RETURN_IF_ERROR(check_index(&ref, 1, "index", d->index, p->backend_delegate_data_count,
                                     "inline payloads in backend_delegate_data"));
  } else {
    ETRT_RETURN_IF_ERROR(check_index(&ref, 1, "index", d->index, p->segments_count, "segments"));
  }
  etrt_fb_vector v;
  etrt_pte_compile_spec *specs;
  ETRT_RETURN_IF_ERROR(
      read_table_vector(r, t, 2, "compile_specs", sizeof *specs, &v, (void **)&specs));
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table s;
    etrt_status st = etrt_fb_vector_table(&v, i, "CompileSpec", &s);
    if (st == ETRT_OK) st = read_required_str(&s, 0, "key", &specs[i].key);
    if (st == ETRT_OK) st = read_bytes(&s, 1, "value", &specs[i].value);
    if (st != ETRT_OK) return etrt_error_context(st, "compile_specs[%zu]: ", i);
  }
  d->compile_specs = specs;
  d->compile_specs_count = v.count;
  return ETRT_OK;
}

static etrt_status read_plan(pte_reader *r, const etrt_fb_table *t, etrt_pte_plan *plan) {
  ETRT_RETURN_IF_ERROR(read_str(t, PTE_PLAN_NAME, "name", &plan->name));
  etrt_fb_table sub;
  bool present;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_table(t, PTE_PLAN_CONTAINER_META_TYPE, "container_meta_type",
                                          "ContainerMetadata", &sub, &present));
  if (present) {
    plan->has_container_meta_type = true;
    ETRT_RETURN_IF_ERROR(read_str(&sub, 0, "encoded_inp_str", &plan->encoded_inp_str));
    ETRT_RETURN_IF_ERROR(read_str(&sub, 1, "encoded_out_str", &plan->encoded_out_str));
  }

  /* Sizes first: values, instructions and tensors index into these arrays. */
  etrt_fb_vector values, chains, operators, delegates, devices;
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, PTE_PLAN_NON_CONST_BUFFER_SIZES,
                                         "non_const_buffer_sizes", &plan->non_const_buffer_sizes));
  etrt_pte_value *vals;
  etrt_pte_operator *ops;
  etrt_pte_delegate *dels;
  etrt_pte_chain *chs;
  etrt_pte_buffer_device *devs;
  ETRT_RETURN_IF_ERROR(
      read_table_vector(r, t, PTE_PLAN_VALUES, "values", sizeof *vals, &values, (void **)&vals));
  ETRT_RETURN_IF_ERROR(read_table_vector(r, t, PTE_PLAN_OPERATORS, "operators", sizeof *ops,
                                         &operators, (void **)&ops));
  ETRT_RETURN_IF_ERROR(read_table_vector(r, t, PTE_PLAN_DELEGATES, "delegates", sizeof *dels,
                                         &delegates, (void **)&dels));
  ETRT_RETURN_IF_ERROR(
      read_table_vector(r, t, PTE_PLAN_CHAINS, "chains", sizeof *chs, &chains, (void **)&chs));
  ETRT_RETURN_IF_ERROR(read_table_vector(r, t, PTE_PLAN_NON_CONST_BUFFER_DEVICE,
                                         "non_const_buffer_device", sizeof *devs, &devices,
                                         (void **)&devs));
  plan_limits lim = {values.count, operators.count, delegates.count,
                     plan->non_const_buffer_sizes.count};

  for (size_t i = 0; i < values.count; ++i) {
    etrt_fb_table ev;
    etrt_status st = etrt_fb_vector_table(&values, i, "EValue", &ev);
    if (st == ETRT_OK) st = read_value(r, &ev, &lim, &vals[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "values[%zu]: ", i);
  }
  plan->values = vals;
  plan->values_count = values.count;

  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, PTE_PLAN_INPUTS, "inputs", &plan->inputs));
  ETRT_RETURN_IF_ERROR(check_value_indices(r, t, "inputs", plan->inputs, lim.values, false));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, PTE_PLAN_OUTPUTS, "outputs", &plan->outputs));
  ETRT_RETURN_IF_ERROR(check_value_indices(r, t, "outputs", plan->outputs, lim.values, false));

  for (size_t i = 0; i < operators.count; ++i) {
    etrt_fb_table op;
    etrt_status st = etrt_fb_vector_table(&operators, i, "Operator", &op);
    if (st == ETRT_OK) st = read_required_str(&op, 0, "name", &ops[i].name);
    if (st == ETRT_OK) st = read_str(&op, 1, "overload", &ops[i].overload);
    if (st == ETRT_OK && ops[i].overload.data == NULL) ops[i].overload.data = "";
    if (st != ETRT_OK) return etrt_error_context(st, "operators[%zu]: ", i);
  }
  plan->operators = ops;
  plan->operators_count = operators.count;

  for (size_t i = 0; i < delegates.count; ++i) {
    etrt_fb_table d;
    etrt_status st = etrt_fb_vector_table(&delegates, i, "BackendDelegate", &d);
    if (st == ETRT_OK) st = read_delegate(r, &d, &dels[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "delegates[%zu]: ", i);
  }
  plan->delegates = dels;
  plan->delegates_count = delegates.count;

  for (size_t i = 0; i < chains.count; ++i) {
    etrt_fb_table c;
    etrt_status st = etrt_fb_vector_table(&chains, i, "Chain", &c);
    if (st == ETRT_OK) st = read_chain(r, &c, &lim, &chs[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "chains[%zu]: ", i);
  }
  plan->chains = chs;
  plan->chains_count = chains.count;

  for (size_t i = 0; i < devices.count; ++i) {
    etrt_fb_table d;
    int8_t i8 = 0;
    etrt_status st = etrt_fb_vector_table(&devices, i, "NonConstBufferDevice", &d);
    if (st == ETRT_OK) st = etrt_fb_read_i32(&d, 0, "buffer_idx", 0, &devs[i].buffer_idx);
    if (st == ETRT_OK)
      st = check_index(&d, 0, "buffer_idx", devs[i].buffer_idx, lim.buffers,
                       "planned buffers in non_const_buffer_sizes");
    if (st == ETRT_OK) st = etrt_fb_read_i8(&d, 1, "device_type", 0, &i8);
    if (st == ETRT_OK) st = check_enum(&d, 1, "device_type", i8, ETRT_PTE_DEVICE_XPU);
    devs[i].device_type = i8;
    if (st == ETRT_OK) st = etrt_fb_read_i8(&d, 2, "device_index", 0, &i8);
    devs[i].device_index = i8;
    if (st != ETRT_OK) return etrt_error_context(st, "non_const_buffer_device[%zu]: ", i);
  }
  plan->non_const_buffer_device = devs;
  plan->non_const_buffer_device_count = devices.count;
  return ETRT_OK;
}

/* ---- the file ---------------------------------------------------------------- */

static uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static etrt_status identify(const uint8_t *data, size_t size) {
  if (size < 8) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "not an ExecuTorch program: %zu bytes is too short (a program starts with an 8-byte "
        "FlatBuffer prefix, identifier 'ET12' at byte offset 4)",
        size);
  }
  if (memcmp(data + 4, PTE_FILE_IDENTIFIER, 4) == 0) return ETRT_OK;
  if (memcmp(data + 4, "BP", 2) == 0 && data[6] >= '0' && data[6] <= '9' && data[7] >= '0' &&
      data[7] <= '9') {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "this is an ExecuTorch bundled program (identifier '%.4s' at byte offset 4), not a "
        "program: etrt runs plain .pte programs; extract the program from the bundle",
        (const char *)data + 4);
  }
  char shown[5];
  for (int i = 0; i < 4; ++i)
    shown[i] = (data[4 + i] >= 0x20 && data[4 + i] < 0x7f) ? (char)data[4 + i] : '?';
  shown[4] = 0;
  if (memcmp(data + 4, "ET", 2) == 0) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "ExecuTorch program of another format version (identifier '%s' at byte offset 4); "
        "etrt reads 'ET12'",
        shown);
  }
  return etrt_error(
      ETRT_ERROR_INVALID_FORMAT,
      "not an ExecuTorch program: bytes 4..8 are '%s', expected the identifier 'ET12'", shown);
}

static etrt_status read_extended_header(pte_reader *r) {
  etrt_pte_program *p = r->program;
  const uint8_t *d = r->file;
  size_t size = r->file_size;
  r->segment_base = size;
  r->segment_region = 0;
  if (size < 12 || memcmp(d + 8, PTE_HEADER_MAGIC, 4) != 0) return ETRT_OK;
  if (size < 16) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "extended header at byte offset 8: truncated (file ends at %zu)", size);
  }
  uint32_t length;
  memcpy(&length, d + 12, 4);
  if (length < PTE_HEADER_MIN_LENGTH) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "extended header length at byte offset 12: %u is shorter than the %d bytes it must hold",
        length, PTE_HEADER_MIN_LENGTH);
  }
  if (!etrt_range_ok(8, length, size)) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "extended header at byte offset 8: truncated (%u bytes declared, file ends at %zu)", length,
        size);
  }
  etrt_pte_extended_header *h = &p->extended_header;
  p->has_extended_header = true;
  h->header_length = length;
  h->program_size = load_u64(d + 16);
  h->segment_base_offset = load_u64(d + 24);
  h->segment_data_size = length >= PTE_HEADER_LENGTH ? load_u64(d + 32) : 0;
  if (h->program_size < 8 + (uint64_t)length || h->program_size > size) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "extended header program_size at byte offset 16: %llu is not within the file (%zu bytes)",
        (unsigned long long)h->program_size, size);
  }
  if (h->segment_base_offset == 0) {
    if (h->segment_data_size != 0) {
      return etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "extended header at byte offset 8: %llu bytes of segment data but no segment_base_offset",
          (unsigned long long)h->segment_data_size);
    }
    r->segment_base = (size_t)h->program_size;
    return ETRT_OK;
  }
  if (h->segment_base_offset < h->program_size || h->segment_base_offset > size) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "extended header segment_base_offset at byte offset 24: %llu is not between the "
        "program's end (%llu) and the file's (%zu)",
        (unsigned long long)h->segment_base_offset, (unsigned long long)h->program_size, size);
  }
  r->segment_base = (size_t)h->segment_base_offset;
  if (length >= PTE_HEADER_LENGTH) {
    if (!etrt_range_ok(h->segment_base_offset, h->segment_data_size, size)) {
      return etrt_error(
          ETRT_ERROR_INVALID_FORMAT,
          "extended header segment_data_size at byte offset 32: %llu bytes from byte offset "
          "%llu run past the end of the file (%zu bytes)",
          (unsigned long long)h->segment_data_size, (unsigned long long)h->segment_base_offset,
          size);
    }
    r->segment_region = (size_t)h->segment_data_size;
  } else {
    r->segment_region = size - r->segment_base;
  }
  return ETRT_OK;
}

etrt_status etrt_pte_parse(const uint8_t *data, size_t size, etrt_pte_program **out) {
  *out = NULL;
  if (data == NULL && size != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "etrt_pte_parse: NULL data");
  ETRT_RETURN_IF_ERROR(identify(data, size));

  pte_reader r;
  memset(&r, 0, sizeof r);
  r.file = data;
  r.file_size = size;
  r.arena = etrt_arena_create();
  if (r.arena == NULL) return no_memory("the program");
  r.program = etrt_arena_alloc(r.arena, sizeof *r.program, 16);
  if (r.program == NULL) {
    etrt_arena_destroy(r.arena);
    return no_memory("the program");
  }
  r.program->arena_ = r.arena;
  memcpy(r.program->file_identifier, data + 4, 4);

  etrt_status st = read_extended_header(&r);
  if (st == ETRT_OK) {
    size_t program_size =
        r.program->has_extended_header ? (size_t)r.program->extended_header.program_size : size;
    etrt_fb_reader_init(&r.fb, data, program_size);
    etrt_fb_table root;
    st = etrt_fb_root(&r.fb, "Program", &root);
    if (st == ETRT_OK) st = read_program_tables(&r, &root);
    if (st == ETRT_OK) {
      etrt_fb_vector plans;
      etrt_pte_plan *items;
      st = read_table_vector(&r, &root, PTE_PROGRAM_EXECUTION_PLAN, "execution_plan", sizeof *items,
                             &plans, (void **)&items);
      for (size_t i = 0; st == ETRT_OK && i < plans.count; ++i) {
        etrt_fb_table t;
        st = etrt_fb_vector_table(&plans, i, "ExecutionPlan", &t);
        if (st == ETRT_OK) st = read_plan(&r, &t, &items[i]);
        if (st != ETRT_OK) st = etrt_error_context(st, "execution_plan[%zu]: ", i);
      }
      if (st == ETRT_OK) {
        r.program->plans = items;
        r.program->plans_count = plans.count;
      }
    }
  }
  if (st != ETRT_OK) {
    etrt_error_context(st, "ExecuTorch program: ");
    etrt_arena_destroy(r.arena);
    return st;
  }
  *out = r.program;
  return ETRT_OK;
}

void etrt_pte_program_free(etrt_pte_program *program) {
  if (program != NULL) etrt_arena_destroy(program->arena_);
}
