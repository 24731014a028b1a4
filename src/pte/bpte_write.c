/* The .bpte writer, in the layout of ExecuTorch's bundled program serializer. */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "pte/bpte.h"
#include "pte/flatbuffers_builder.h"

static void write_value(etrt_fb_builder *b, size_t ref, const etrt_bpte_value *v) {
  etrt_fb_table_begin(b);
  etrt_fb_add_u8(b, 0, (uint8_t)v->kind, 0);
  etrt_fb_add_offset(b, 1);
  etrt_fb_patch(b, ref, etrt_fb_table_end(b));
  size_t ref_val = etrt_fb_slot_pos(b, 1);
  etrt_fb_table_begin(b);
  switch (v->kind) {
    case ETRT_BPTE_VALUE_TENSOR: {
      const etrt_bpte_tensor *t = &v->tensor;
      etrt_fb_add_i8(b, 0, (int8_t)t->scalar_type, 0);
      etrt_fb_add_offset(b, 1);
      etrt_fb_add_offset(b, 2);
      etrt_fb_add_offset(b, 3);
      etrt_fb_patch(b, ref_val, etrt_fb_table_end(b));
      size_t ref_sizes = etrt_fb_slot_pos(b, 1), ref_data = etrt_fb_slot_pos(b, 2),
             ref_order = etrt_fb_slot_pos(b, 3);
      etrt_fb_patch(b, ref_sizes, etrt_fb_add_vector(b, t->sizes.data, t->sizes.count, 4, 4));
      etrt_fb_patch(b, ref_data,
                    etrt_fb_add_vector(b, t->data.data, t->data.size, 1, BPTE_TENSOR_ALIGNMENT));
      etrt_fb_patch(b, ref_order,
                    etrt_fb_add_vector(b, t->dim_order.data, t->dim_order.count, 1, 1));
      return;
    }
    case ETRT_BPTE_VALUE_INT:
      etrt_fb_add_i64(b, 0, v->int_val, 0);
      break;
    case ETRT_BPTE_VALUE_BOOL:
      etrt_fb_add_bool(b, 0, v->bool_val, false);
      break;
    case ETRT_BPTE_VALUE_DOUBLE:
      etrt_fb_add_f64(b, 0, v->double_val, 0.0);
      break;
  }
  etrt_fb_patch(b, ref_val, etrt_fb_table_end(b));
}

static void write_values(etrt_fb_builder *b, size_t ref, const etrt_bpte_value *values,
                         size_t count) {
  size_t vec = etrt_fb_add_offset_vector(b, count);
  etrt_fb_patch(b, ref, vec);
  for (size_t i = 0; i < count; ++i) write_value(b, etrt_fb_element(vec, i), &values[i]);
}

etrt_status etrt_bpte_write(const etrt_bpte_file *f, uint8_t **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  etrt_fb_builder b;
  etrt_fb_builder_init(&b);
  etrt_fb_builder_start(&b, BPTE_FILE_IDENTIFIER, 0);
  etrt_fb_table_begin(&b);
  etrt_fb_add_u32(&b, 0, f->version, 0);
  etrt_fb_add_offset(&b, 1);
  etrt_fb_add_offset(&b, 2);
  etrt_fb_set_root(&b, etrt_fb_table_end(&b));
  size_t ref_suites = etrt_fb_slot_pos(&b, 1), ref_program = etrt_fb_slot_pos(&b, 2);
  size_t suites = etrt_fb_add_offset_vector(&b, f->suites_count);
  etrt_fb_patch(&b, ref_suites, suites);
  for (size_t s = 0; s < f->suites_count; ++s) {
    const etrt_bpte_suite *suite = &f->suites[s];
    etrt_fb_table_begin(&b);
    if (suite->method_name.data != NULL) etrt_fb_add_offset(&b, 0);
    etrt_fb_add_offset(&b, 1);
    etrt_fb_patch(&b, etrt_fb_element(suites, s), etrt_fb_table_end(&b));
    size_t ref_name = etrt_fb_slot_pos(&b, 0), ref_cases = etrt_fb_slot_pos(&b, 1);
    if (suite->method_name.data != NULL) {
      etrt_fb_patch(&b, ref_name,
                    etrt_fb_add_string(&b, suite->method_name.data, suite->method_name.size));
    }
    size_t cases = etrt_fb_add_offset_vector(&b, suite->cases_count);
    etrt_fb_patch(&b, ref_cases, cases);
    for (size_t c = 0; c < suite->cases_count; ++c) {
      const etrt_bpte_case *tc = &suite->cases[c];
      etrt_fb_table_begin(&b);
      etrt_fb_add_offset(&b, 0);
      etrt_fb_add_offset(&b, 1);
      etrt_fb_patch(&b, etrt_fb_element(cases, c), etrt_fb_table_end(&b));
      size_t ref_in = etrt_fb_slot_pos(&b, 0), ref_out = etrt_fb_slot_pos(&b, 1);
      write_values(&b, ref_in, tc->inputs, tc->inputs_count);
      write_values(&b, ref_out, tc->expected_outputs, tc->expected_outputs_count);
    }
  }
  etrt_fb_patch(
      &b, ref_program,
      etrt_fb_add_vector(&b, f->program.data, f->program.size, 1, BPTE_PROGRAM_ALIGNMENT));
  etrt_status st = etrt_fb_builder_status(&b);
  if (st != ETRT_OK) {
    etrt_fb_builder_release(&b);
    return etrt_error_context(st, "writing a .bpte: ");
  }
  *out = b.buf;
  *out_size = b.size;
  b.buf = NULL;
  etrt_fb_builder_release(&b);
  return ETRT_OK;
}
