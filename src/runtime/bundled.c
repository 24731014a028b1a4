/* The public bundled-program API (etrt/bundled.h), in the runtime because it loads
 * programs and feeds methods: a verified .bpte, the program it embeds, and a case's inputs. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "base/status.h"
#include "etrt/bundled.h"
#include "pte/bpte.h"
#include "runtime/program.h"

struct etrt_bundled {
  etrt_file_map file; /* the mapped .bpte (empty when loaded from memory) */
  etrt_bpte_file *bpte;
  etrt_program *program;
};

static etrt_status etrt_bundled_finish_load(etrt_bundled *b, const uint8_t *data, size_t size,
                                            const etrt_program_options *options) {
  ETRT_RETURN_IF_ERROR(etrt_bpte_parse(data, size, &b->bpte));
  ETRT_RETURN_IF_ERROR(
      etrt_program_load_memory(b->bpte->program.data, b->bpte->program.size, options, &b->program));
  for (size_t i = 0; i < b->bpte->suites_count; ++i) {
    const etrt_bpte_suite *s = &b->bpte->suites[i];
    if (etrt_program_plan(b->program, s->method_name.data) == NULL) {
      return etrt_error_context(ETRT_ERROR_INVALID_FORMAT, "method_test_suites[%zu]: ", i);
    }
  }
  return ETRT_OK;
}

etrt_status etrt_bundled_load_memory(const void *data, size_t size,
                                     const etrt_program_options *options, etrt_bundled **out) {
  *out = NULL;
  if (data == NULL && size > 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "bundled program bytes are NULL");
  etrt_bundled *b = calloc(1, sizeof *b);
  if (b == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory loading a bundled program");
  etrt_status st = etrt_bundled_finish_load(b, data, size, options);
  if (st != ETRT_OK) {
    etrt_bundled_destroy(b);
    return st;
  }
  *out = b;
  return ETRT_OK;
}

etrt_status etrt_bundled_load_file(const char *path, const etrt_program_options *options,
                                   etrt_bundled **out) {
  *out = NULL;
  etrt_bundled *b = calloc(1, sizeof *b);
  if (b == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
  etrt_status st = etrt_file_map_open(path, &b->file);
  if (st == ETRT_OK) st = etrt_bundled_finish_load(b, b->file.data, b->file.size, options);
  if (st != ETRT_OK) {
    etrt_error_context(st, "%s: ", path);
    etrt_bundled_destroy(b);
    return st;
  }
  *out = b;
  return ETRT_OK;
}

void etrt_bundled_destroy(etrt_bundled *b) {
  if (b == NULL) return;
  etrt_program_destroy(b->program);
  etrt_bpte_file_free(b->bpte);
  etrt_file_map_close(&b->file);
  free(b);
}

const etrt_program *etrt_bundled_program(const etrt_bundled *b) { return b->program; }

uint32_t etrt_bundled_suite_count(const etrt_bundled *b) { return (uint32_t)b->bpte->suites_count; }

const char *etrt_bundled_suite_method(const etrt_bundled *b, uint32_t suite) {
  return suite < b->bpte->suites_count ? b->bpte->suites[suite].method_name.data : NULL;
}

uint32_t etrt_bundled_case_count(const etrt_bundled *b, uint32_t suite) {
  return suite < b->bpte->suites_count ? (uint32_t)b->bpte->suites[suite].cases_count : 0;
}

static etrt_status etrt_bundled_case(const etrt_bundled *b, uint32_t suite, uint32_t test_case,
                                     const etrt_bpte_case **out) {
  if (suite >= b->bpte->suites_count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "bundled program: suite %u is out of range (%zu suites)", suite,
                      b->bpte->suites_count);
  }
  const etrt_bpte_suite *s = &b->bpte->suites[suite];
  if (test_case >= s->cases_count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "bundled program: method '%s' has %zu test cases, not a case %u",
                      s->method_name.data, s->cases_count, test_case);
  }
  *out = &s->cases[test_case];
  return ETRT_OK;
}

etrt_status etrt_bundled_case_io(const etrt_bundled *b, uint32_t suite, uint32_t test_case,
                                 uint32_t *num_inputs, uint32_t *num_expected_outputs) {
  const etrt_bpte_case *c = NULL;
  ETRT_RETURN_IF_ERROR(etrt_bundled_case(b, suite, test_case, &c));
  *num_inputs = (uint32_t)c->inputs_count;
  *num_expected_outputs = (uint32_t)c->expected_outputs_count;
  return ETRT_OK;
}

static void etrt_bundled_value_of(const etrt_bpte_value *v, etrt_bundled_value *out) {
  memset(out, 0, sizeof *out);
  out->kind = (etrt_bundled_kind)v->kind;
  switch (v->kind) {
    case ETRT_BPTE_VALUE_TENSOR:
      /* The view type is shared with writable tensors; inputs are only read. */
      out->tensor.data = (void *)(uintptr_t)v->tensor.data.data;
      out->tensor.dtype = v->tensor.scalar_type;
      out->tensor.rank = (int32_t)v->tensor.sizes.count;
      for (size_t i = 0; i < v->tensor.sizes.count; ++i)
        out->tensor.sizes[i] = v->tensor.sizes.data[i];
      out->nbytes = v->tensor.data.size;
      break;
    case ETRT_BPTE_VALUE_INT:
      out->int_value = v->int_val;
      break;
    case ETRT_BPTE_VALUE_BOOL:
      out->bool_value = v->bool_val;
      break;
    case ETRT_BPTE_VALUE_DOUBLE:
      out->double_value = v->double_val;
      break;
  }
}

etrt_status etrt_bundled_input(const etrt_bundled *b, uint32_t suite, uint32_t test_case,
                               uint32_t index, etrt_bundled_value *out) {
  const etrt_bpte_case *c = NULL;
  ETRT_RETURN_IF_ERROR(etrt_bundled_case(b, suite, test_case, &c));
  if (index >= c->inputs_count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "test case %u has %zu inputs, not an input %u",
                      test_case, c->inputs_count, index);
  }
  etrt_bundled_value_of(&c->inputs[index], out);
  return ETRT_OK;
}

etrt_status etrt_bundled_expected_output(const etrt_bundled *b, uint32_t suite, uint32_t test_case,
                                         uint32_t index, etrt_bundled_value *out) {
  const etrt_bpte_case *c = NULL;
  ETRT_RETURN_IF_ERROR(etrt_bundled_case(b, suite, test_case, &c));
  if (index >= c->expected_outputs_count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "test case %u has %zu expected outputs, not an output %u", test_case,
                      c->expected_outputs_count, index);
  }
  etrt_bundled_value_of(&c->expected_outputs[index], out);
  return ETRT_OK;
}

static const char *const etrt_bundled_kind_names[] = {"none", "tensor", "int", "bool", "double"};

etrt_status etrt_bundled_set_inputs(const etrt_bundled *b, uint32_t suite, uint32_t test_case,
                                    etrt_method *method) {
  const etrt_bpte_case *c = NULL;
  ETRT_RETURN_IF_ERROR(etrt_bundled_case(b, suite, test_case, &c));
  const char *name = b->bpte->suites[suite].method_name.data;
  uint32_t expected = etrt_method_input_count(method);
  if (c->inputs_count != expected) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "method '%s', test case %u: the case has %zu inputs, the method takes %u",
                      name, test_case, c->inputs_count, expected);
  }
  for (uint32_t i = 0; i < expected; ++i) {
    etrt_bundled_value v;
    etrt_bundled_value_of(&c->inputs[i], &v);
    etrt_status st;
    if (v.kind == ETRT_BUNDLED_TENSOR) {
      st = etrt_method_set_input(method, i, &v.tensor);
    } else if (v.kind == ETRT_BUNDLED_INT) {
      st = etrt_method_set_input_int(method, i, v.int_value);
    } else {
      st = etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "method '%s', input %u: a %s input is not supported (tensors and ints are)",
                      name, i, etrt_bundled_kind_names[v.kind]);
    }
    if (st != ETRT_OK) return etrt_error_context(st, "test case %u: ", test_case);
  }
  return ETRT_OK;
}
