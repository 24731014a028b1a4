/* Accessors over a program model: names of kinds, lookups, and the bounds-checked
 * views of segments, delegate payloads, constants and named data. */
#include "pte/pte.h"

#include <string.h>

#include "base/checked.h"
#include "base/status.h"

const char *etrt_pte_value_kind_name(etrt_pte_value_kind kind) {
  static const char *const names[] = {
      "none",   "null",     "int",         "bool",      "double",      "tensor",
      "string", "int_list", "double_list", "bool_list", "tensor_list", "optional_tensor_list"};
  return (kind >= 1 && kind <= ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST) ? names[kind] : "unknown";
}

const char *etrt_pte_instruction_kind_name(etrt_pte_instruction_kind kind) {
  static const char *const names[] = {"none", "kernel", "delegate", "move", "jump_false", "free"};
  return (kind >= 1 && kind <= ETRT_PTE_INSTR_FREE) ? names[kind] : "unknown";
}

etrt_device etrt_pte_tensor_device(const etrt_pte_tensor *tensor) {
  etrt_device device = {ETRT_DEVICE_CPU, 0};
  if (tensor->has_extra_tensor_info) {
    device.type = (etrt_device_type)tensor->extra_tensor_info.device_type;
    device.index = tensor->extra_tensor_info.device_index;
  }
  return device;
}

const etrt_pte_plan *etrt_pte_program_find_plan(const etrt_pte_program *program, const char *name) {
  size_t len = strlen(name);
  for (size_t i = 0; i < program->plans_count; ++i) {
    const etrt_pte_str *n = &program->plans[i].name;
    if (n->data != NULL && n->size == len && memcmp(n->data, name, len) == 0)
      return &program->plans[i];
  }
  return NULL;
}

etrt_status etrt_pte_program_segment(const etrt_pte_program *program, size_t index,
                                     etrt_pte_bytes *out) {
  if (index >= program->segments_count) {
    return etrt_error(ETRT_ERROR_NOT_FOUND, "program: segment %zu does not exist (%zu segments)",
                      index, program->segments_count);
  }
  *out = program->segments[index].data;
  return ETRT_OK;
}

etrt_status etrt_pte_program_delegate_data(const etrt_pte_program *program,
                                           const etrt_pte_delegate *delegate, etrt_pte_bytes *out) {
  if (delegate->location == ETRT_PTE_DATA_SEGMENT) {
    etrt_status st = etrt_pte_program_segment(program, delegate->index, out);
    return st == ETRT_OK ? st
                         : etrt_error_context(
                               st, "delegate '%s': ", delegate->id.data ? delegate->id.data : "");
  }
  if (delegate->index >= program->backend_delegate_data_count) {
    return etrt_error(ETRT_ERROR_NOT_FOUND, "delegate '%s': inline payload %u does not exist (%zu)",
                      delegate->id.data ? delegate->id.data : "", delegate->index,
                      program->backend_delegate_data_count);
  }
  *out = program->backend_delegate_data[delegate->index];
  return ETRT_OK;
}

/* Bytes [offsets[index], next offset or the segment's end) of a subsegment table. */
static etrt_status subsegment(const etrt_pte_program *program, const etrt_pte_subsegment_offsets *s,
                              uint32_t index, size_t nbytes, const char *what,
                              etrt_pte_bytes *out) {
  if (index >= s->offsets.count) {
    return etrt_error(ETRT_ERROR_NOT_FOUND, "program: %s %u does not exist (%zu)", what, index,
                      s->offsets.count);
  }
  etrt_pte_bytes seg = {NULL, 0};
  ETRT_RETURN_IF_ERROR(etrt_pte_program_segment(program, s->segment_index, &seg));
  uint64_t start = s->offsets.data[index];
  if (!etrt_range_ok(start, nbytes, seg.size)) {
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "program: %s %u needs %zu bytes at offset %llu of segment %u, which holds %zu", what, index,
        nbytes, (unsigned long long)start, s->segment_index, seg.size);
  }
  out->data = seg.data + start;
  out->size = nbytes;
  return ETRT_OK;
}

etrt_status etrt_pte_program_constant(const etrt_pte_program *program, uint32_t buffer_index,
                                      size_t nbytes, etrt_pte_bytes *out) {
  if (buffer_index == 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "program: constant index 0 is the 'no data' placeholder");
  }
  if (program->constant_buffer_count > 0) {
    if (buffer_index >= program->constant_buffer_count) {
      return etrt_error(ETRT_ERROR_NOT_FOUND, "program: constant buffer %u does not exist (%zu)",
                        buffer_index, program->constant_buffer_count);
    }
    etrt_pte_bytes b = program->constant_buffer[buffer_index];
    if (b.size < nbytes) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "program: constant buffer %u holds %zu bytes, the tensor needs %zu",
                        buffer_index, b.size, nbytes);
    }
    out->data = b.data;
    out->size = nbytes;
    return ETRT_OK;
  }
  return subsegment(program, &program->constant_segment, buffer_index, nbytes, "constant", out);
}

etrt_status etrt_pte_program_mutable_data(const etrt_pte_program *program,
                                          const etrt_pte_tensor *tensor, size_t nbytes,
                                          etrt_pte_bytes *out) {
  uint64_t msi =
      tensor->has_extra_tensor_info ? tensor->extra_tensor_info.mutable_data_segments_idx : 0;
  if (msi >= program->mutable_data_segments_count) {
    return etrt_error(ETRT_ERROR_NOT_FOUND,
                      "program: mutable data segment %llu does not exist (%zu)",
                      (unsigned long long)msi, program->mutable_data_segments_count);
  }
  return subsegment(program, &program->mutable_data_segments[msi], tensor->data_buffer_idx, nbytes,
                    "mutable tensor data", out);
}

etrt_status etrt_pte_program_named_data(const etrt_pte_program *program, const char *key,
                                        etrt_pte_bytes *out) {
  size_t len = strlen(key);
  for (size_t i = 0; i < program->named_data_count; ++i) {
    const etrt_pte_named_data *n = &program->named_data[i];
    if (n->key.size == len && memcmp(n->key.data, key, len) == 0) {
      etrt_status st = etrt_pte_program_segment(program, n->segment_index, out);
      return st == ETRT_OK ? st : etrt_error_context(st, "named data '%s': ", key);
    }
  }
  return etrt_error(ETRT_ERROR_NOT_FOUND, "program: no named data '%s'", key);
}

etrt_status etrt_pte_tensor_nbytes(const etrt_pte_tensor *tensor, size_t *out) {
  size_t n = etrt_dtype_size(tensor->scalar_type);
  for (size_t i = 0; i < tensor->sizes.count; ++i) {
    int32_t d = tensor->sizes.data[i];
    if (d < 0 || etrt_mul_overflow_size(n, (size_t)d, &n)) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "tensor: size %d of dimension %zu is negative or too large", d, i);
    }
  }
  *out = n;
  return ETRT_OK;
}
