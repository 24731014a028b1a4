/* Every refusal of the .pte reader, each on a hand-made file: the message must
 * name the field and the byte offset. Semantic faults are written by the writer
 * (it does not check indices); structural ones are patched into valid files. */
#include <stdlib.h>
#include <string.h>

#include "pte/flatbuffers_reader.h"
#include "pte/pte.h"
#include "pte_testing.h"
#include "test_util.h"

/* The sample program, changed by `mutate` before it is written; malloc'd. */
static uint8_t *sample(pte_sample_mutation mutate, size_t *size) {
  uint8_t *bytes = NULL;
  CHECK_OK(pte_write_sample(mutate, &bytes, size));
  return bytes;
}

/* The parse fails as invalid format, naming `text` and a byte offset. */
#define REFUSED(bytes, size, text)                                                        \
  do {                                                                                    \
    etrt_pte_program *p_ = NULL;                                                          \
    CHECK_FAILS(etrt_pte_parse((bytes), (size), &p_), ETRT_ERROR_INVALID_FORMAT, (text)); \
    CHECK_STR_CONTAINS(etrt_last_error(), "offset");                                      \
    CHECK(p_ == NULL);                                                                    \
  } while (0)

static void refuse_model(pte_sample_mutation mutate, const char *text) {
  size_t size;
  uint8_t *bytes = sample(mutate, &size);
  if (bytes) REFUSED(bytes, size, text);
  free(bytes);
}

/* ---- walking to a table of a written file, to patch it ---------------------- */

typedef struct step {
  int slot;
  int index; /* -1: a table field; otherwise an element of a vector of tables */
} step;

static etrt_fb_table walk(etrt_fb_reader *r, uint8_t *bytes, size_t size, const step *steps,
                          int n) {
  etrt_fb_table t;
  memset(&t, 0, sizeof t);
  etrt_fb_reader_init(r, bytes, size);
  CHECK_OK(etrt_fb_root(r, "Program", &t));
  for (int i = 0; i < n; ++i) {
    etrt_fb_table next;
    if (steps[i].index < 0) {
      bool present = false;
      CHECK_OK(etrt_fb_read_table(&t, steps[i].slot, "field", "T", &next, &present));
      CHECK(present);
    } else {
      etrt_fb_vector v;
      CHECK_OK(etrt_fb_read_vector(&t, steps[i].slot, "vector", 4, 4, &v));
      CHECK((size_t)steps[i].index < v.count);
      CHECK_OK(etrt_fb_vector_table(&v, (size_t)steps[i].index, "T", &next));
    }
    t = next;
  }
  return t;
}

#define WALK(r, bytes, size, ...)                         \
  walk((r), (bytes), (size), (const step[]){__VA_ARGS__}, \
       (int)(sizeof((const step[]){__VA_ARGS__}) / sizeof(step)))

static const step PLAN = {1, 0};
enum { PTE_SEGMENTS_SLOT = 4 }; /* Program.segments */

/* ---- the file level ------------------------------------------------------------ */

static void test_identification(void) {
  etrt_pte_program *p = NULL;
  uint8_t small[4] = {0};
  CHECK_FAILS(etrt_pte_parse(small, sizeof small, &p), ETRT_ERROR_INVALID_FORMAT, "too short");
  uint8_t other[16] = {1, 0, 0, 0, 'A', 'B', 'C', 'D'};
  CHECK_FAILS(etrt_pte_parse(other, sizeof other, &p), ETRT_ERROR_INVALID_FORMAT,
              "not an ExecuTorch program");
  CHECK_STR_CONTAINS(etrt_last_error(), "bytes 4..8");
  uint8_t bundled[16] = {1, 0, 0, 0, 'B', 'P', '0', '8'};
  CHECK_FAILS(etrt_pte_parse(bundled, sizeof bundled, &p), ETRT_ERROR_INVALID_FORMAT,
              "bundled program");
  CHECK_STR_CONTAINS(etrt_last_error(), "byte offset 4");
  uint8_t old[16] = {1, 0, 0, 0, 'E', 'T', '1', '1'};
  CHECK_FAILS(etrt_pte_parse(old, sizeof old, &p), ETRT_ERROR_INVALID_FORMAT,
              "another format version");
  uint8_t root_out[16] = {0xf0, 0, 0, 0, 'E', 'T', '1', '2'};
  REFUSED(root_out, sizeof root_out, "root table offset");
  CHECK(p == NULL);
}

static void test_extended_header(void) {
  size_t size;
  uint8_t *good = sample(NULL, &size);
  if (good == NULL) return;
  uint8_t *b = malloc(size);
  REFUSED(good, 14, "extended header at byte offset 8: truncated");
  REFUSED(good, 30, "extended header at byte offset 8: truncated");

  memcpy(b, good, size);
  uint32_t len = 16;
  memcpy(b + 12, &len, 4);
  REFUSED(b, size, "extended header length at byte offset 12");

  memcpy(b, good, size);
  uint64_t big = (uint64_t)size + 1;
  memcpy(b + 16, &big, 8);
  REFUSED(b, size, "program_size at byte offset 16");

  memcpy(b, good, size);
  uint64_t base = 8;
  memcpy(b + 24, &base, 8);
  REFUSED(b, size, "segment_base_offset at byte offset 24");

  memcpy(b, good, size);
  memcpy(b + 32, &big, 8);
  REFUSED(b, size, "segment_data_size at byte offset 32");

  /* A smaller segment region: the later segments fall outside it. */
  memcpy(b, good, size);
  uint64_t small = 64;
  memcpy(b + 32, &small, 8);
  REFUSED(b, size, "segments[1]: DataSegment at byte offset");

  /* Without the header, segments with data cannot be anywhere. */
  memcpy(b, good, size);
  b[8] = 'x';
  REFUSED(b, size, "no extended header");

  /* The file cut short inside the segment data. */
  REFUSED(good, size - 1, "segment_data_size at byte offset 32");
  free(b);
  free(good);
}

/* ---- structural faults, patched -------------------------------------------------- */

static void test_union_tags(void) {
  size_t size;
  uint8_t *good = sample(NULL, &size);
  if (good == NULL) return;
  uint8_t *b = malloc(size);
  etrt_fb_reader r;

  memcpy(b, good, size);
  etrt_fb_table ev = WALK(&r, b, size, PLAN, {2, 0});
  b[etrt_fb_field_offset(&ev, 0)] = 12;
  REFUSED(b, size, "values[0]: EValue.val at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "union tag 12");

  memcpy(b, good, size);
  ev = WALK(&r, b, size, PLAN, {2, 1});
  b[etrt_fb_field_offset(&ev, 0)] = 0;
  REFUSED(b, size, "EValue.val at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "no type");

  memcpy(b, good, size);
  etrt_fb_table in = WALK(&r, b, size, PLAN, {5, 0}, {2, 3});
  b[etrt_fb_field_offset(&in, 0)] = 6;
  REFUSED(b, size, "instructions[3]: Instruction.instr_args at byte offset");

  /* A tag whose value table is missing (its vtable entry zeroed). */
  memcpy(b, good, size);
  in = WALK(&r, b, size, PLAN, {5, 0}, {2, 0});
  memset(b + in.vtable + 4 + 2 * 1, 0, 2);
  REFUSED(b, size, "has no value");
  free(b);
  free(good);
}

static void test_structure(void) {
  size_t size;
  uint8_t *good = sample(NULL, &size);
  if (good == NULL) return;
  uint8_t *b = malloc(size);
  etrt_fb_reader r;

  /* An 8-byte vector moved by 4 bytes: its elements lose their alignment. */
  memcpy(b, good, size);
  etrt_fb_table list = WALK(&r, b, size, PLAN, {2, 7}, {1, -1});
  size_t field = etrt_fb_field_offset(&list, 0);
  uint32_t off;
  memcpy(&off, b + field, 4);
  off += 4;
  uint32_t one = 1;
  memcpy(b + field, &off, 4);
  memcpy(b + field + off, &one, 4);
  REFUSED(b, size, "IntList.items: vector elements at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "not 8-byte aligned");

  /* A vector whose length runs past the end. */
  memcpy(b, good, size);
  etrt_fb_table tensor = WALK(&r, b, size, PLAN, {2, 4}, {1, -1});
  field = etrt_fb_field_offset(&tensor, 2);
  memcpy(&off, b + field, 4);
  uint32_t huge = 0x10000000;
  memcpy(b + field + off, &huge, 4);
  REFUSED(b, size, "Tensor.sizes: vector at byte offset");

  /* A string without its NUL. */
  memcpy(b, good, size);
  etrt_fb_table plan = WALK(&r, b, size, PLAN);
  field = etrt_fb_field_offset(&plan, 0);
  memcpy(&off, b + field, 4);
  b[field + off + 4 + 7] = 'X'; /* after "forward" */
  REFUSED(b, size, "ExecutionPlan.name: string at byte offset");

  /* An offset pointing outside the file. */
  memcpy(b, good, size);
  field = etrt_fb_field_offset(&plan, 2);
  memcpy(b + field, &huge, 4);
  REFUSED(b, size, "ExecutionPlan.values at byte offset");

  /* A vtable outside the file. */
  memcpy(b, good, size);
  int32_t soff = -(int32_t)size;
  memcpy(b + plan.pos, &soff, 4);
  REFUSED(b, size, "ExecutionPlan at byte offset");

  /* Required fields removed from the vtable. (Operator shares its vtable with
   * NamedData, which is read first: either names the missing string.) */
  memcpy(b, good, size);
  etrt_fb_table op = WALK(&r, b, size, PLAN, {6, 0});
  memset(b + op.vtable + 4, 0, 2);
  REFUSED(b, size, "required string is missing");
  memcpy(b, good, size);
  etrt_fb_table del = WALK(&r, b, size, PLAN, {7, 0});
  memset(b + del.vtable + 4 + 2, 0, 2);
  REFUSED(b, size, "BackendDelegate.processed at byte offset");
  free(b);
  free(good);
}

/* ---- index and value checks, written by the writer --------------------------------- */

static etrt_pte_instruction *instr(etrt_pte_plan *f, size_t i) {
  return (etrt_pte_instruction *)&f->chains[0].instructions[i];
}
static etrt_pte_value *value(etrt_pte_plan *f, size_t i) { return (etrt_pte_value *)&f->values[i]; }

static void bad_op_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  instr(f, 0)->kernel.op_index = 2;
}
static void bad_delegate_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  instr(f, 1)->delegate.delegate_index = -1;
}
static void bad_kernel_arg(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t args[2] = {4, 99};
  instr(f, 0)->kernel.args = (etrt_pte_i32s){args, 2};
}
static void bad_delegate_arg(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t args[1] = {-1};
  instr(f, 2)->delegate.args = (etrt_pte_i32s){args, 1};
}
static void bad_plan_input(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t in[1] = {15};
  f->inputs = (etrt_pte_i32s){in, 1};
}
static void bad_plan_output(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t out[1] = {-3};
  f->outputs = (etrt_pte_i32s){out, 1};
}
static void bad_chain_input(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t in[1] = {100};
  ((etrt_pte_chain *)f->chains)->inputs = (etrt_pte_i32s){in, 1};
}
static void bad_tensor_list(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t items[1] = {-1}; /* allowed only in optional lists */
  value(f, 10)->tensor_list = (etrt_pte_i32s){items, 1};
}
static void bad_optional_list(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const int32_t items[1] = {-2};
  value(f, 11)->optional_tensor_list = (etrt_pte_i32s){items, 1};
}
static void bad_move(etrt_pte_builder *b, etrt_pte_plan *f) { instr(f, 3)->move.move_to = 15; }
static void bad_move_from(etrt_pte_builder *b, etrt_pte_plan *f) {
  instr(f, 3)->move.move_from = -1;
}
static void bad_jump_cond(etrt_pte_builder *b, etrt_pte_plan *f) {
  instr(f, 4)->jump_false.cond_value_index = 20;
}
static void bad_jump_dest(etrt_pte_builder *b, etrt_pte_plan *f) {
  instr(f, 4)->jump_false.destination_instruction = 8;
}
static void bad_free(etrt_pte_builder *b, etrt_pte_plan *f) {
  instr(f, 5)->free_call.value_index = 15;
}
static void bad_inline_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  ((etrt_pte_delegate *)&f->delegates[1])->index = 1;
}
static void bad_segment_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  ((etrt_pte_delegate *)&f->delegates[0])->index = 4;
}
static void bad_location(etrt_pte_builder *b, etrt_pte_plan *f) {
  ((etrt_pte_delegate *)&f->delegates[0])->location = (etrt_pte_data_location)2;
}
static void bad_constant_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 5)->tensor.data_buffer_idx = 3;
}
static void bad_memory_id(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 4)->tensor.allocation_info.memory_id = 3;
}
static void bad_dynamism(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 4)->tensor.shape_dynamism = (etrt_pte_shape_dynamism)3;
}
static void bad_device_type(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 4)->tensor.extra_tensor_info.device_type = 5;
}
static void bad_tensor_location(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 4)->tensor.extra_tensor_info.location = (etrt_pte_tensor_location)4;
}
static void external_without_name(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 13)->tensor.extra_tensor_info.fully_qualified_name = (etrt_pte_str){NULL, 0};
}
static void bad_mutable_segment(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 14)->tensor.extra_tensor_info.mutable_data_segments_idx = 3;
}
static void bad_mutable_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  value(f, 14)->tensor.data_buffer_idx = 2;
}
static void bad_buffer_device(etrt_pte_builder *b, etrt_pte_plan *f) {
  ((etrt_pte_buffer_device *)f->non_const_buffer_device)->buffer_idx = 3;
}
static void bad_buffer_device_type(etrt_pte_builder *b, etrt_pte_plan *f) {
  ((etrt_pte_buffer_device *)f->non_const_buffer_device)->device_type = -1;
}
static void bad_mutable_offset(etrt_pte_builder *b, etrt_pte_plan *f) {
  static const uint64_t offsets[2] = {0, 25}; /* the segment holds 24 bytes */
  ((etrt_pte_subsegment_offsets *)etrt_pte_builder_program(b)->mutable_data_segments)->offsets =
      (etrt_pte_u64s){offsets, 2};
}
static void bad_mutable_segment_index(etrt_pte_builder *b, etrt_pte_plan *f) {
  ((etrt_pte_subsegment_offsets *)etrt_pte_builder_program(b)->mutable_data_segments)
      ->segment_index = 9;
}

static void test_indices(void) {
  refuse_model(bad_op_index, "KernelCall.op_index at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "execution_plan[0]: chains[0]: instructions[0]");
  CHECK_STR_CONTAINS(etrt_last_error(), "(2 operators)");
  refuse_model(bad_delegate_index, "DelegateCall.delegate_index at byte offset");
  refuse_model(bad_kernel_arg, "KernelCall.args[1] at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "value index 99");
  refuse_model(bad_delegate_arg, "DelegateCall.args[0] at byte offset");
  refuse_model(bad_plan_input, "ExecutionPlan.inputs[0] at byte offset");
  refuse_model(bad_plan_output, "ExecutionPlan.outputs[0] at byte offset");
  refuse_model(bad_chain_input, "Chain.inputs[0] at byte offset");
  refuse_model(bad_tensor_list, "TensorList.items[0] at byte offset");
  refuse_model(bad_optional_list, "OptionalTensorList.items[0] at byte offset");
  refuse_model(bad_move, "MoveCall.move_to at byte offset");
  refuse_model(bad_move_from, "MoveCall.move_from at byte offset");
  refuse_model(bad_jump_cond, "JumpFalseCall.cond_value_index at byte offset");
  refuse_model(bad_jump_dest, "JumpFalseCall.destination_instruction at byte offset");
  refuse_model(bad_free, "FreeCall.value_index at byte offset");
  refuse_model(bad_inline_index, "BackendDelegateDataReference.index at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "inline payloads");
  refuse_model(bad_segment_index, "BackendDelegateDataReference.index at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "(4 segments)");
  refuse_model(bad_location, "BackendDelegateDataReference.location at byte offset");
  refuse_model(bad_constant_index, "Tensor.data_buffer_idx at byte offset");
  CHECK_STR_CONTAINS(etrt_last_error(), "values[5]");
  refuse_model(bad_memory_id, "AllocationDetails.memory_id at byte offset");
  refuse_model(bad_dynamism, "Tensor.shape_dynamism at byte offset");
  refuse_model(bad_device_type, "ExtraTensorInfo.device_type at byte offset");
  refuse_model(bad_tensor_location, "ExtraTensorInfo.location at byte offset");
  refuse_model(external_without_name, "needs a fully_qualified_name");
  refuse_model(bad_mutable_segment, "mutable data segment 3 does not exist");
  refuse_model(bad_mutable_index, "Tensor.data_buffer_idx at byte offset");
  refuse_model(bad_buffer_device, "NonConstBufferDevice.buffer_idx at byte offset");
  refuse_model(bad_buffer_device_type, "NonConstBufferDevice.device_type at byte offset");
  refuse_model(bad_mutable_offset,
               "mutable_data_segments[0]: SubsegmentOffsets.offsets[1] at byte offset");
  refuse_model(bad_mutable_segment_index, "SubsegmentOffsets.segment_index at byte offset");
}

static void two_constant_tables(etrt_pte_builder *b, etrt_pte_plan *f) {
  etrt_pte_program *p = etrt_pte_builder_program(b);
  etrt_pte_bytes *buffers = ETRT_PTE_NEW(b, etrt_pte_bytes, 2);
  buffers[1] = etrt_pte_builder_bytes(b, "abcd", 4);
  p->constant_buffer = buffers;
  p->constant_buffer_count = 2;
}

static void named_data_out_of_range(void) {
  etrt_pte_builder *b = NULL;
  CHECK_OK(etrt_pte_builder_create(&b));
  if (b == NULL) return;
  etrt_pte_program *p = etrt_pte_builder_program(b);
  etrt_pte_named_data *nd = ETRT_PTE_NEW(b, etrt_pte_named_data, 1);
  nd->key = etrt_pte_builder_str(b, "k");
  nd->segment_index = 1;
  p->named_data = nd;
  p->named_data_count = 1;
  etrt_pte_subsegment_offsets cs = {5, {(const uint64_t[]){0, 0}, 2}};
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(etrt_pte_write(p, &bytes, &size));
  if (bytes) REFUSED(bytes, size, "named_data[0]: NamedData.segment_index at byte offset");
  free(bytes);
  p->named_data_count = 0;
  p->has_constant_segment = true;
  p->constant_segment = cs;
  CHECK_OK(etrt_pte_write(p, &bytes, &size));
  if (bytes)
    REFUSED(bytes, size, "constant_segment: SubsegmentOffsets.segment_index at byte offset");
  free(bytes);
  etrt_pte_builder_destroy(b);
}

static void test_program_tables(void) {
  refuse_model(two_constant_tables, "both constant_buffer and constant_segment");
  named_data_out_of_range();
}

/* Not a refusal: a DataSegment whose vtable declares a 4-byte table (the soffset
 * alone) while its offset and size fields lie beyond. The FlatBuffers verifier
 * never compares fields with that size, and ExecuTorch loads such files. */
static void test_declared_table_size_is_not_a_bound(void) {
  size_t size;
  uint8_t *good = sample(NULL, &size);
  if (good == NULL) return;
  uint8_t *b = malloc(size);
  memcpy(b, good, size);
  etrt_fb_reader r;
  etrt_fb_table segment = WALK(&r, b, size, {PTE_SEGMENTS_SLOT, 0});
  CHECK(segment.table_size > 4);
  uint16_t four = 4;
  memcpy(b + segment.vtable + 2, &four, 2);
  etrt_pte_program *expected = NULL, *patched = NULL;
  CHECK_OK(etrt_pte_parse(good, size, &expected));
  CHECK_OK(etrt_pte_parse(b, size, &patched));
  if (expected != NULL && patched != NULL) {
    CHECK(patched->segments_count == expected->segments_count && patched->segments_count > 0);
    CHECK(patched->segments[0].offset == expected->segments[0].offset);
    CHECK(patched->segments[0].size == expected->segments[0].size);
  }
  etrt_pte_program_free(expected);
  etrt_pte_program_free(patched);
  free(b);
  free(good);
}

int main(void) {
  RUN_TEST(test_identification);
  RUN_TEST(test_extended_header);
  RUN_TEST(test_union_tags);
  RUN_TEST(test_structure);
  RUN_TEST(test_indices);
  RUN_TEST(test_program_tables);
  RUN_TEST(test_declared_table_size_is_not_a_bound);
  return TEST_EXIT();
}
