/* The .bpte reader: the BundledProgram FlatBuffer with its suites, cases and values,
 * all verified before use; tensors checked to be usable as method inputs as they
 * are (known type, contiguous, exactly their bytes, aligned). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/checked.h"
#include "base/status.h"
#include "pte/bpte.h"
#include "pte/flatbuffers_reader.h"
#include "pte/pte_format.h"

static const char *const value_types[] = {"NONE", "Tensor", "Int", "Bool", "Double"};

static etrt_status read_tensor(const etrt_fb_table *t, etrt_bpte_tensor *out) {
  int8_t scalar_type;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_i8(t, 0, "scalar_type", 0, &scalar_type));
  out->scalar_type = (etrt_dtype)scalar_type;
  size_t nbytes = etrt_dtype_size(out->scalar_type);
  if (nbytes == 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "Tensor.scalar_type at byte offset %zu: scalar type %d is not one etrt knows",
                      etrt_fb_field_offset(t, 0), scalar_type);
  }
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 1, "sizes", &out->sizes));
  ETRT_RETURN_IF_ERROR(
      etrt_fb_read_numbers(t, 2, "data", 1, (const void **)&out->data.data, &out->data.size));
  ETRT_RETURN_IF_ERROR(ETRT_FB_READ_VIEW(t, 3, "dim_order", &out->dim_order));
  if (out->sizes.count > ETRT_MAX_RANK) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "Tensor.sizes at byte offset %zu: rank %zu is above the largest etrt "
                      "handles (%d)",
                      etrt_fb_field_offset(t, 1), out->sizes.count, ETRT_MAX_RANK);
  }
  size_t elem = nbytes;
  for (size_t i = 0; i < out->sizes.count; ++i) {
    int32_t d = out->sizes.data[i];
    if (d < 0 || etrt_mul_overflow_size(nbytes, (size_t)d, &nbytes)) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "Tensor.sizes[%zu] at byte offset %zu: bad size %d", i,
                        etrt_fb_field_offset(t, 1), d);
    }
  }
  if (out->dim_order.count != 0) {
    if (out->dim_order.count != out->sizes.count) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "Tensor.dim_order at byte offset %zu: %zu entries for %zu sizes",
                        etrt_fb_field_offset(t, 3), out->dim_order.count, out->sizes.count);
    }
    for (size_t i = 0; i < out->dim_order.count; ++i) {
      if (out->dim_order.data[i] != i) {
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "Tensor.dim_order at byte offset %zu: only contiguous tensors (dim "
                          "order 0, 1, ...) are supported; entry %zu is %u",
                          etrt_fb_field_offset(t, 3), i, out->dim_order.data[i]);
      }
    }
  }
  if (out->data.size != nbytes) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "Tensor.data at byte offset %zu: %zu bytes, the tensor's type and sizes "
                      "need %zu",
                      etrt_fb_field_offset(t, 2), out->data.size, nbytes);
  }
  /* The data is handed to methods in place, read as elements of its type. */
  if (out->data.data != NULL && (uintptr_t)out->data.data % elem != 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "Tensor.data at byte offset %zu: not aligned to its element size (%zu)",
                      etrt_fb_field_offset(t, 2), elem);
  }
  return ETRT_OK;
}

static etrt_status read_value(const etrt_fb_table *t, etrt_bpte_value *out) {
  uint8_t tag;
  etrt_fb_table v;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_union(t, 0, "val", 4, value_types, &tag, &v));
  if (tag == 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "Value.val at byte offset %zu: the value is missing",
                      etrt_fb_field_offset(t, 0));
  }
  out->kind = (etrt_bpte_value_kind)tag;
  switch (out->kind) {
    case ETRT_BPTE_VALUE_TENSOR:
      return read_tensor(&v, &out->tensor);
    case ETRT_BPTE_VALUE_INT:
      return etrt_fb_read_i64(&v, 0, "int_val", 0, &out->int_val);
    case ETRT_BPTE_VALUE_BOOL:
      return etrt_fb_read_bool(&v, 0, "bool_val", false, &out->bool_val);
    case ETRT_BPTE_VALUE_DOUBLE:
      return etrt_fb_read_f64(&v, 0, "double_val", 0.0, &out->double_val);
  }
  return ETRT_OK;
}

static etrt_status read_values(etrt_fb_reader *fb, etrt_arena *arena, const etrt_fb_table *t,
                               int slot, const char *field, const etrt_bpte_value **out,
                               size_t *count) {
  etrt_fb_vector v;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(t, slot, field, 4, 4, &v));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(fb, v.count));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge_memory(fb, (uint64_t)v.count * sizeof(etrt_bpte_value)));
  etrt_bpte_value *values = etrt_arena_alloc_array(arena, sizeof *values, v.count, 16);
  if (values == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .bpte: out of memory");
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table value;
    etrt_status st = etrt_fb_vector_table(&v, i, "Value", &value);
    if (st == ETRT_OK) st = read_value(&value, &values[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "%s[%zu]: ", field, i);
  }
  *out = values;
  *count = v.count;
  return ETRT_OK;
}

static etrt_status read_suite(etrt_fb_reader *fb, etrt_arena *arena, const etrt_fb_table *t,
                              etrt_bpte_suite *out) {
  etrt_fb_str name;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_string(t, 0, "method_name", &name));
  if (name.data == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "BundledMethodTestSuite.method_name at byte offset %zu: the name is missing",
                      t->pos);
  }
  out->method_name.data = name.data;
  out->method_name.size = name.size;
  etrt_fb_vector v;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(t, 1, "test_cases", 4, 4, &v));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(fb, v.count));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge_memory(fb, (uint64_t)v.count * sizeof(etrt_bpte_case)));
  etrt_bpte_case *cases = etrt_arena_alloc_array(arena, sizeof *cases, v.count, 16);
  if (cases == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .bpte: out of memory");
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table c;
    etrt_bpte_case *out_case = &cases[i];
    etrt_status st = etrt_fb_vector_table(&v, i, "BundledMethodTestCase", &c);
    if (st == ETRT_OK)
      st = read_values(fb, arena, &c, 0, "inputs", &out_case->inputs, &out_case->inputs_count);
    if (st == ETRT_OK)
      st = read_values(fb, arena, &c, 1, "expected_outputs", &out_case->expected_outputs,
                       &out_case->expected_outputs_count);
    if (st != ETRT_OK) return etrt_error_context(st, "test_cases[%zu]: ", i);
  }
  out->cases = cases;
  out->cases_count = v.count;
  return ETRT_OK;
}

static etrt_status read_body(etrt_fb_reader *fb, etrt_bpte_file *f) {
  etrt_fb_table root;
  ETRT_RETURN_IF_ERROR(etrt_fb_root(fb, "BundledProgram", &root));
  ETRT_RETURN_IF_ERROR(etrt_fb_read_u32(&root, 0, "version", 0, &f->version));
  etrt_fb_vector v;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_vector(&root, 1, "method_test_suites", 4, 4, &v));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge(fb, v.count));
  ETRT_RETURN_IF_ERROR(etrt_fb_charge_memory(fb, (uint64_t)v.count * sizeof(etrt_bpte_suite)));
  etrt_bpte_suite *suites = etrt_arena_alloc_array(f->arena_, sizeof *suites, v.count, 16);
  if (suites == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .bpte: out of memory");
  for (size_t i = 0; i < v.count; ++i) {
    etrt_fb_table s;
    etrt_status st = etrt_fb_vector_table(&v, i, "BundledMethodTestSuite", &s);
    if (st == ETRT_OK) st = read_suite(fb, f->arena_, &s, &suites[i]);
    if (st != ETRT_OK) return etrt_error_context(st, "method_test_suites[%zu]: ", i);
  }
  f->suites = suites;
  f->suites_count = v.count;
  ETRT_RETURN_IF_ERROR(etrt_fb_read_numbers(&root, 2, "program", 1, (const void **)&f->program.data,
                                            &f->program.size));
  if (f->program.size == 0) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "BundledProgram.program at byte offset %zu: the program is missing",
                      etrt_fb_field_offset(&root, 2));
  }
  return ETRT_OK;
}

etrt_status etrt_bpte_parse(const uint8_t *data, size_t size, etrt_bpte_file **out) {
  *out = NULL;
  if (data == NULL && size != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "etrt_bpte_parse: NULL data");
  if (!etrt_fb_has_identifier(data, size, BPTE_FILE_IDENTIFIER)) {
    if (etrt_fb_has_identifier(data, size, PTE_FILE_IDENTIFIER)) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "this is an ExecuTorch program (identifier 'ET12'), not a bundled program "
                        "(.bpte)");
    }
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "not an ExecuTorch bundled program: expected the identifier 'BP08' at byte "
                      "offset 4");
  }
  etrt_arena *arena = etrt_arena_create();
  etrt_bpte_file *f = arena ? etrt_arena_alloc(arena, sizeof *f, 16) : NULL;
  if (f == NULL) {
    etrt_arena_destroy(arena);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "reading a .bpte: out of memory");
  }
  f->arena_ = arena;
  etrt_fb_reader fb;
  etrt_fb_reader_init(&fb, data, size);
  etrt_status st = read_body(&fb, f);
  if (st != ETRT_OK) {
    etrt_arena_destroy(arena);
    return etrt_error_context(st, "ExecuTorch bundled program: ");
  }
  *out = f;
  return ETRT_OK;
}

void etrt_bpte_file_free(etrt_bpte_file *file) {
  if (file != NULL) etrt_arena_destroy(file->arena_);
}
