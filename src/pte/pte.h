/* The in-memory model of an ExecuTorch program (.pte), as plain C structs that
 * cover the whole current schema (schema/program.fbs, file identifier "ET12").
 *
 * The same structs are what etrt_pte_parse produces and what etrt_pte_write
 * consumes, so a model can be read, changed and written back.
 *
 * Memory: strings, byte payloads and arrays of numbers are views. In a parsed
 * program they point INTO the input buffer (zero copy: the caller keeps that buffer,
 * usually a mapped file, alive and unchanged for as long as the program is used).
 * Arrays of structs belong to an arena owned by the program (or by the builder
 * that made it). Numbers in views are little-endian, as on every host etrt builds
 * for, and the reader has checked that each view is aligned for its element type.
 *
 * Absent and empty are the same thing for every array here (count 0). Optional
 * tables have a has_* flag. Indices are checked by the reader against the arrays
 * they index, so code that walks a parsed program needs no further range checks
 * for the fields documented as "checked".
 */
#ifndef ETRT_PTE_PTE_H
#define ETRT_PTE_PTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

/* ---- views -------------------------------------------------------------------- */

/* A string. `data` is NUL-terminated at data[size] (the reader checks the
 * terminator, the builder adds one), so it can be used as a C string; FlatBuffers
 * strings may also contain NULs before that, so `size` is the length that counts.
 * data == NULL means absent. */
typedef struct etrt_pte_str {
  const char *data;
  size_t size;
} etrt_pte_str;

typedef struct etrt_pte_bytes {
  const uint8_t *data;
  size_t size;
} etrt_pte_bytes;

typedef struct etrt_pte_i32s {
  const int32_t *data;
  size_t count;
} etrt_pte_i32s;

typedef struct etrt_pte_i64s {
  const int64_t *data;
  size_t count;
} etrt_pte_i64s;

typedef struct etrt_pte_u64s {
  const uint64_t *data;
  size_t count;
} etrt_pte_u64s;

typedef struct etrt_pte_f64s {
  const double *data;
  size_t count;
} etrt_pte_f64s;

/* Bytes read as small numbers: dim_order entries, or bools (0 or 1). */
typedef struct etrt_pte_u8s {
  const uint8_t *data;
  size_t count;
} etrt_pte_u8s;

/* ---- tensors ------------------------------------------------------------------ */

typedef enum etrt_pte_shape_dynamism {
  ETRT_PTE_SHAPE_STATIC = 0,
  ETRT_PTE_SHAPE_DYNAMIC_BOUND = 1,  /* sizes are upper bounds */
  ETRT_PTE_SHAPE_DYNAMIC_UNBOUND = 2 /* sizes mean nothing; runtime allocates */
} etrt_pte_shape_dynamism;

/* Where a tensor's data lives (ExtraTensorInfo.location). */
typedef enum etrt_pte_tensor_location {
  ETRT_PTE_TENSOR_IN_SEGMENT = 0, /* constant segment / mutable data segment */
  ETRT_PTE_TENSOR_EXTERNAL = 1    /* in a .ptd file, keyed by fully_qualified_name */
} etrt_pte_tensor_location;

/* Schema DeviceType; CPU and CUDA equal etrt_device_type. */
#define ETRT_PTE_DEVICE_XPU 2

/* Where a non-constant tensor is placed: buffer `memory_id` (an index into
 * non_const_buffer_sizes), at byte offset (high << 32) | low. */
typedef struct etrt_pte_allocation {
  uint32_t memory_id;
  uint32_t memory_offset_low;
  uint32_t memory_offset_high;
} etrt_pte_allocation;

static inline uint64_t etrt_pte_allocation_offset(const etrt_pte_allocation *a) {
  return ((uint64_t)a->memory_offset_high << 32) | a->memory_offset_low;
}

typedef struct etrt_pte_extra_tensor_info {
  /* Index into program.mutable_data_segments for a mutable tensor with initial
   * data (checked when such a tensor uses it). */
  uint64_t mutable_data_segments_idx;
  etrt_pte_str fully_qualified_name; /* absent: data == NULL */
  etrt_pte_tensor_location location; /* checked: 0 or 1; EXTERNAL needs a name */
  int32_t device_type;               /* etrt_device_type or ETRT_PTE_DEVICE_XPU; checked 0..2 */
  int32_t device_index;              /* schema byte: -128..127 */
} etrt_pte_extra_tensor_info;

/* Constant tensors: data_buffer_idx > 0 and no allocation_info; the bytes are
 * constant_buffer[idx] (older inline form) or constant_segment.offsets[idx] in the
 * constant segment. Index 0 means "no data". Mutable tensors have allocation_info
 * and, with data_buffer_idx > 0, an initial value in a mutable data segment. */
typedef struct etrt_pte_tensor {
  etrt_dtype scalar_type; /* the schema's ScalarType number, not checked: may be a
                             type etrt does not know (etrt_dtype_size() == 0) */
  int32_t storage_offset;
  etrt_pte_i32s sizes;
  etrt_pte_u8s dim_order;
  bool requires_grad;
  uint32_t data_buffer_idx; /* checked against the constant table it indexes */
  bool has_allocation_info;
  etrt_pte_allocation allocation_info;    /* memory_id checked < non_const_buffer_sizes.count */
  int32_t layout;                         /* schema byte */
  etrt_pte_shape_dynamism shape_dynamism; /* checked 0..2 */
  bool has_extra_tensor_info;
  etrt_pte_extra_tensor_info extra_tensor_info;
} etrt_pte_tensor;

/* The device a tensor is recorded on: extra_tensor_info's device, CPU without one. */
etrt_device etrt_pte_tensor_device(const etrt_pte_tensor *tensor);

/* ---- values ------------------------------------------------------------------- */

/* Numbered as the schema's KernelTypes union tags. */
typedef enum etrt_pte_value_kind {
  ETRT_PTE_VALUE_NULL = 1,
  ETRT_PTE_VALUE_INT = 2,
  ETRT_PTE_VALUE_BOOL = 3,
  ETRT_PTE_VALUE_DOUBLE = 4,
  ETRT_PTE_VALUE_TENSOR = 5,
  ETRT_PTE_VALUE_STRING = 6,
  ETRT_PTE_VALUE_INT_LIST = 7,
  ETRT_PTE_VALUE_DOUBLE_LIST = 8,
  ETRT_PTE_VALUE_BOOL_LIST = 9,
  ETRT_PTE_VALUE_TENSOR_LIST = 10,
  ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST = 11
} etrt_pte_value_kind;

/* "null", "int", ..., "optional_tensor_list"; "unknown" otherwise. */
const char *etrt_pte_value_kind_name(etrt_pte_value_kind kind);

typedef struct etrt_pte_value {
  etrt_pte_value_kind kind;
  union {
    int64_t int_val;
    bool bool_val;
    double double_val;
    etrt_pte_tensor tensor;
    etrt_pte_str string_val;
    etrt_pte_i64s int_list; /* IntList items; in ExecuTorch these are value indices
                               of Int values (not checked: also plain ints) */
    etrt_pte_f64s double_list;
    etrt_pte_u8s bool_list;
    etrt_pte_i32s tensor_list;          /* value indices, checked in range */
    etrt_pte_i32s optional_tensor_list; /* value indices or -1 (none), checked */
  };
} etrt_pte_value;

/* ---- instructions ------------------------------------------------------------- */

/* Numbered as the schema's InstructionArguments union tags. */
typedef enum etrt_pte_instruction_kind {
  ETRT_PTE_INSTR_KERNEL = 1,
  ETRT_PTE_INSTR_DELEGATE = 2,
  ETRT_PTE_INSTR_MOVE = 3,
  ETRT_PTE_INSTR_JUMP_FALSE = 4,
  ETRT_PTE_INSTR_FREE = 5
} etrt_pte_instruction_kind;

/* "kernel", "delegate", "move", "jump_false", "free"; "unknown" otherwise. */
const char *etrt_pte_instruction_kind_name(etrt_pte_instruction_kind kind);

/* Scratch memory a delegate call asks the planner for (DelegateCall.scratch, a
 * recent schema addition; absent in most files). */
typedef struct etrt_pte_delegate_scratch {
  bool has_allocation;
  etrt_pte_allocation allocation;
  uint64_t size;
} etrt_pte_delegate_scratch;

typedef struct etrt_pte_instruction {
  etrt_pte_instruction_kind kind;
  union {
    struct {
      int32_t op_index;   /* checked < operators_count */
      etrt_pte_i32s args; /* value indices, checked */
    } kernel;
    struct {
      int32_t delegate_index; /* checked < delegates_count */
      etrt_pte_i32s args;     /* value indices, checked */
      const etrt_pte_delegate_scratch *scratch;
      size_t scratch_count;
    } delegate;
    struct {
      int32_t move_from; /* value indices, checked */
      int32_t move_to;
    } move;
    struct {
      int32_t cond_value_index;        /* checked */
      int32_t destination_instruction; /* checked 0..instructions_count */
    } jump_false;
    struct {
      int32_t value_index; /* checked */
    } free_call;
  };
} etrt_pte_instruction;

typedef struct etrt_pte_chain {
  etrt_pte_i32s inputs;  /* value indices, checked */
  etrt_pte_i32s outputs; /* value indices, checked */
  const etrt_pte_instruction *instructions;
  size_t instructions_count;
  /* Chain.stacktrace is skipped by the reader (debug only) and never written. */
} etrt_pte_chain;

typedef struct etrt_pte_operator {
  etrt_pte_str name;     /* "aten::add" */
  etrt_pte_str overload; /* "out"; may be empty */
} etrt_pte_operator;

/* ---- delegates ---------------------------------------------------------------- */

typedef enum etrt_pte_data_location {
  ETRT_PTE_DATA_INLINE = 0, /* index into program.backend_delegate_data */
  ETRT_PTE_DATA_SEGMENT = 1 /* index into program.segments */
} etrt_pte_data_location;

typedef struct etrt_pte_compile_spec {
  etrt_pte_str key;
  etrt_pte_bytes value;
} etrt_pte_compile_spec;

typedef struct etrt_pte_delegate {
  etrt_pte_str id;                 /* backend name */
  etrt_pte_data_location location; /* checked */
  uint32_t index;                  /* checked against the array `location` names */
  const etrt_pte_compile_spec *compile_specs;
  size_t compile_specs_count;
} etrt_pte_delegate;

/* A planned buffer that lives on a device; buffers not listed are on the CPU. */
typedef struct etrt_pte_buffer_device {
  int32_t buffer_idx;   /* index into non_const_buffer_sizes, checked */
  int32_t device_type;  /* etrt_device_type or ETRT_PTE_DEVICE_XPU; checked 0..2 */
  int32_t device_index; /* schema byte */
} etrt_pte_buffer_device;

/* ---- methods ------------------------------------------------------------------ */

typedef struct etrt_pte_plan {
  etrt_pte_str name; /* method name, "forward" */
  bool has_container_meta_type;
  etrt_pte_str encoded_inp_str; /* pytree specs, informational */
  etrt_pte_str encoded_out_str;
  const etrt_pte_value *values;
  size_t values_count;
  etrt_pte_i32s inputs;  /* value indices, checked */
  etrt_pte_i32s outputs; /* value indices, checked */
  const etrt_pte_chain *chains;
  size_t chains_count;
  const etrt_pte_operator *operators;
  size_t operators_count;
  const etrt_pte_delegate *delegates;
  size_t delegates_count;
  /* Sizes of the planned buffers; entry 0 is reserved (constants) and ignored. */
  etrt_pte_i64s non_const_buffer_sizes;
  const etrt_pte_buffer_device *non_const_buffer_device;
  size_t non_const_buffer_device_count;
} etrt_pte_plan;

/* ---- the program -------------------------------------------------------------- */

/* Where a data segment lies. Reader: offset and size as recorded (offset relative
 * to the segment base), `data`, the checked view of those bytes in the file, and
 * `alignment`, the largest power of two (up to 4096) its offset is a multiple of.
 * Writer: only `data` and `alignment` are used; the writer lays segments out. */
typedef struct etrt_pte_segment {
  uint64_t offset;
  uint64_t size;
  etrt_pte_bytes data;
  uint32_t alignment; /* power of two, or 0 for the default (128) */
} etrt_pte_segment;

typedef struct etrt_pte_subsegment_offsets {
  uint32_t segment_index; /* checked < segments_count when offsets are present */
  etrt_pte_u64s offsets;  /* checked <= that segment's size */
} etrt_pte_subsegment_offsets;

typedef struct etrt_pte_named_data {
  etrt_pte_str key;
  uint32_t segment_index; /* checked */
} etrt_pte_named_data;

/* The optional "eh00" header after the file identifier. header_length is 24 (older
 * form) or 32 (with segment_data_size); 0 in other fields when not recorded. */
typedef struct etrt_pte_extended_header {
  uint32_t header_length;
  uint64_t program_size;
  uint64_t segment_base_offset;
  uint64_t segment_data_size;
} etrt_pte_extended_header;

typedef struct etrt_arena etrt_arena;

typedef struct etrt_pte_program {
  char file_identifier[5];  /* "ET12", NUL-terminated (reader output only) */
  bool has_extended_header; /* reader output only; the writer decides itself */
  etrt_pte_extended_header extended_header;

  uint32_t version;
  const etrt_pte_plan *plans; /* execution_plan */
  size_t plans_count;
  /* Older inline constants (Buffer.storage); index 0 is a placeholder. */
  const etrt_pte_bytes *constant_buffer;
  size_t constant_buffer_count;
  /* Inline delegate payloads (BackendDelegateInlineData.data). */
  const etrt_pte_bytes *backend_delegate_data;
  size_t backend_delegate_data_count;
  const etrt_pte_segment *segments;
  size_t segments_count;
  bool has_constant_segment;
  etrt_pte_subsegment_offsets constant_segment;
  const etrt_pte_subsegment_offsets *mutable_data_segments;
  size_t mutable_data_segments_count;
  const etrt_pte_named_data *named_data;
  size_t named_data_count;

  etrt_arena *arena_; /* private: what etrt_pte_program_free releases */
} etrt_pte_program;

/* ---- reading ------------------------------------------------------------------ */

/* Verifies the whole file (every offset, length, index, union tag and alignment),
 * then returns the model. `data` must stay alive and unchanged while the program
 * is used. Refuses with ETRT_ERROR_INVALID_FORMAT and a message naming the field
 * and byte offset; a bundled program ("BP08") or a file that is not a program is
 * refused with a message that says so. `data` should be 16-byte aligned (a mapped
 * file or malloc'd memory is). */
etrt_status etrt_pte_parse(const uint8_t *data, size_t size, etrt_pte_program **out);

/* Frees a parsed program (not the input buffer). NULL is allowed. */
void etrt_pte_program_free(etrt_pte_program *program);

/* Looks a method up by name; NULL when absent. */
const etrt_pte_plan *etrt_pte_program_find_plan(const etrt_pte_program *program, const char *name);

/* The bytes of segment `index` (bounds checked again; NOT_FOUND when out of range). */
etrt_status etrt_pte_program_segment(const etrt_pte_program *program, size_t index,
                                     etrt_pte_bytes *out);

/* A delegate's payload, inline or in a segment. */
etrt_status etrt_pte_program_delegate_data(const etrt_pte_program *program,
                                           const etrt_pte_delegate *delegate, etrt_pte_bytes *out);

/* The bytes of constant `buffer_index` (Tensor.data_buffer_idx), from the inline
 * constant_buffer or the constant segment. `nbytes` is what the tensor needs: the
 * call fails when fewer bytes are there. Index 0 is refused (it means no data). */
etrt_status etrt_pte_program_constant(const etrt_pte_program *program, uint32_t buffer_index,
                                      size_t nbytes, etrt_pte_bytes *out);

/* The initial bytes of a mutable tensor (allocation_info present, data_buffer_idx
 * > 0) from program.mutable_data_segments. */
etrt_status etrt_pte_program_mutable_data(const etrt_pte_program *program,
                                          const etrt_pte_tensor *tensor, size_t nbytes,
                                          etrt_pte_bytes *out);

/* The bytes of named data `key` (program.named_data); NOT_FOUND when absent. */
etrt_status etrt_pte_program_named_data(const etrt_pte_program *program, const char *key,
                                        etrt_pte_bytes *out);

/* Bytes a tensor's sizes and scalar_type describe (0 for an unknown type); fails
 * on negative sizes or overflow. */
etrt_status etrt_pte_tensor_nbytes(const etrt_pte_tensor *tensor, size_t *out);

/* ---- writing ------------------------------------------------------------------ */

/* Writes `model` in the layout ExecuTorch's serializer uses: the FlatBuffer, then
 * (when any segment has data) the 32-byte "eh00" header after the identifier,
 * segments at 128-byte alignment (or a segment's own larger alignment), inline
 * constant and delegate bytes 16-byte aligned. Deterministic: the same model gives
 * the same bytes. `*out` is malloc'd; the caller frees it. The model's arrays are
 * not checked against each other: etrt_pte_parse the result to verify it. */
etrt_status etrt_pte_write(const etrt_pte_program *model, uint8_t **out, size_t *out_size);

/* ---- building a model --------------------------------------------------------- */

/* A builder owns a model and every array, string and byte copy made for it, so
 * that code elsewhere can fill an etrt_pte_program without knowing the allocation
 * scheme. Typical use:
 *
 *   etrt_pte_builder *b; etrt_pte_builder_create(&b);
 *   etrt_pte_program *p = etrt_pte_builder_program(b);
 *   etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
 *   plan->name = etrt_pte_builder_str(b, "forward"); ...
 *   p->plans = plan; p->plans_count = 1;
 *   etrt_pte_builder_add_constant(b, weights, nbytes, &tensor->data_buffer_idx);
 *   etrt_pte_builder_write(b, &bytes, &size);
 *   etrt_pte_builder_destroy(b);
 *
 * Allocation failures make later calls fail: the copy functions return empty
 * views, and etrt_pte_builder_write reports ETRT_ERROR_OUT_OF_MEMORY. */
typedef struct etrt_pte_builder etrt_pte_builder;

etrt_status etrt_pte_builder_create(etrt_pte_builder **out);
void etrt_pte_builder_destroy(etrt_pte_builder *builder);

/* The model being built (zeroed at creation, version 0); owned by the builder. */
etrt_pte_program *etrt_pte_builder_program(etrt_pte_builder *builder);

/* Zeroed memory, 16-byte aligned, freed with the builder; NULL on failure. */
void *etrt_pte_builder_alloc(etrt_pte_builder *builder, size_t size);
#define ETRT_PTE_NEW(builder, type, count) \
  ((type *)etrt_pte_builder_alloc_array((builder), sizeof(type), (count)))
void *etrt_pte_builder_alloc_array(etrt_pte_builder *builder, size_t elem_size, size_t count);

/* Copies owned by the builder. */
etrt_pte_str etrt_pte_builder_str(etrt_pte_builder *builder, const char *text);
etrt_pte_str etrt_pte_builder_strn(etrt_pte_builder *builder, const char *text, size_t size);
etrt_pte_bytes etrt_pte_builder_bytes(etrt_pte_builder *builder, const void *data, size_t size);
etrt_pte_i32s etrt_pte_builder_i32s(etrt_pte_builder *builder, const int32_t *values, size_t count);
etrt_pte_i64s etrt_pte_builder_i64s(etrt_pte_builder *builder, const int64_t *values, size_t count);
etrt_pte_f64s etrt_pte_builder_f64s(etrt_pte_builder *builder, const double *values, size_t count);
etrt_pte_u8s etrt_pte_builder_u8s(etrt_pte_builder *builder, const uint8_t *values, size_t count);

/* Appends a constant tensor's bytes to the constant segment (16-byte aligned in
 * it, as ExecuTorch does) and returns its data_buffer_idx (1, 2, ...). Index 0 is
 * the reserved placeholder. The bytes are copied. */
etrt_status etrt_pte_builder_add_constant(etrt_pte_builder *builder, const void *data, size_t size,
                                          uint32_t *buffer_index);

/* Appends a segment (e.g. a delegate payload: set the delegate's location to
 * ETRT_PTE_DATA_SEGMENT and index to *segment_index). alignment: 0 or a power of
 * two. The bytes are copied. */
etrt_status etrt_pte_builder_add_segment(etrt_pte_builder *builder, const void *data, size_t size,
                                         uint32_t alignment, uint32_t *segment_index);

/* Appends named data (a segment plus a program.named_data entry). */
etrt_status etrt_pte_builder_add_named_data(etrt_pte_builder *builder, const char *key,
                                            const void *data, size_t size, uint32_t alignment);

/* Sets program.segments, constant_segment and named_data, then writes. As in
 * ExecuTorch's output, segment 0 is always the constant segment (empty when no
 * constant was added, with the placeholder offset 0), so the first add_segment
 * returns index 1. The builder owns those three fields: values set by hand there
 * are replaced. */
etrt_status etrt_pte_builder_write(etrt_pte_builder *builder, uint8_t **out, size_t *out_size);

#endif
