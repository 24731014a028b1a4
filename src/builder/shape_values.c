#include "builder/shape_values.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "builder/flag_text.h"
#include "builder/host_values.h"

/* Signed integers separated by commas; empty is no values at all. */
static bool etrt_values_field_ok(const char *text, size_t size) {
  bool digit_expected = true;
  for (size_t i = 0; i < size; ++i) {
    if (isdigit((unsigned char)text[i])) {
      digit_expected = false;
    } else if (text[i] == '-' && digit_expected && (i == 0 || text[i - 1] == ',')) {
      continue;
    } else if (text[i] == ',' && !digit_expected) {
      digit_expected = true;
    } else {
      return false;
    }
  }
  return size == 0 || !digit_expected;
}

/* Parses a well-formed field; returns the count, or -1 when there are too many
 * values or one does not fit in int64. */
static int etrt_values_field_parse(const char *text, size_t size, int64_t *values) {
  int count = 0;
  size_t i = 0;
  while (i < size) {
    if (count == ETRT_SHAPE_VALUES_MAX) return -1;
    bool negative = text[i] == '-';
    if (negative) ++i;
    int64_t value = 0;
    for (; i < size && text[i] != ','; ++i) {
      int digit = text[i] - '0';
      if (value < (INT64_MIN + digit) / 10) return -1;
      value = value * 10 - digit; /* accumulated negative: INT64_MIN fits */
    }
    if (!negative) {
      if (value == INT64_MIN) return -1;
      value = -value;
    }
    values[count++] = value;
    ++i; /* the ',' */
  }
  return count;
}

static const etrt_flag_format etrt_values_format = {
    .flag = "--shape-values",
    .syntax =
        "expected INPUT:V1,V2,... (the values) or INPUT:MIN1,MIN2,...:MAX1,MAX2,... (bounds "
        "of each value), with signed integers",
    .field_ok = etrt_values_field_ok,
    .field_parse = etrt_values_field_parse,
    .parse_failure =
        "more than " ETRT_FLAG_TEXT_NUMBER(ETRT_SHAPE_VALUES_MAX) " values, or one outside int64",
};
_Static_assert(ETRT_SHAPE_VALUES_MAX <= ETRT_FLAG_TEXT_MAX_VALUES,
               "a --shape-values field fits the check's buffer");

etrt_status etrt_shape_value_spec_check(const char *spec) {
  return etrt_flag_text_check(spec, &etrt_values_format);
}

/* The values (or bounds) of one text, checked against the input they name. */
static etrt_status etrt_values_apply_one(etrt_ir_graph *graph, const char *spec,
                                         const etrt_host_value_use *uses) {
  etrt_flag_text text;
  int32_t id = -1;
  for (int fields = 2; fields >= 1 && id < 0; --fields)
    if (etrt_flag_text_split(spec, fields, &etrt_values_format, &text))
      id = etrt_flag_text_find_input(graph, &text);
  if (id < 0) {
    if (!etrt_flag_text_split(spec, 1, &etrt_values_format, &text))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "--shape-values '%s': %s", spec,
                        etrt_values_format.syntax);
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': the model has no input named '%.*s'", spec,
                      (int)text.name_size, text.name);
  }
  etrt_ir_value *v = &graph->values[id];
  if (v->values_from_import) return ETRT_OK;
  if (v->value_min != NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': input '%s' is given values twice", spec, v->name);
  if (v->dtype != ETRT_DTYPE_INT64 && v->dtype != ETRT_DTYPE_INT32)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': input '%s' is %s; only int32 and int64 inputs are "
                      "given values at build time",
                      spec, v->name, etrt_dtype_name(v->dtype));
  if (v->rank > 1)
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "--shape-values '%s': input '%s' has rank %d; only scalars and 1-D inputs are "
        "given values at build time",
        spec, v->name, (int)v->rank);
  if (uses[id].node < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': no operation needs the values of input '%s' when the "
                      "plan is built (they decide no shape): pass them at run time only",
                      spec, v->name);
  int64_t lo[ETRT_SHAPE_VALUES_MAX], hi[ETRT_SHAPE_VALUES_MAX];
  int count = etrt_values_field_parse(text.fields[0], text.field_sizes[0], lo);
  int count_hi = text.field_count == 2
                     ? etrt_values_field_parse(text.fields[1], text.field_sizes[1], hi)
                     : count;
  if (count < 0 || count_hi < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "--shape-values '%s': %s", spec,
                      etrt_values_format.parse_failure);
  if (text.field_count == 1) memcpy(hi, lo, (size_t)count * sizeof *lo);
  if (count != count_hi)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': the minimum has %d values and the maximum %d", spec,
                      count, count_hi);
  for (int i = 0; i < count; ++i)
    if (lo[i] > hi[i])
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "--shape-values '%s': value %d: minimum %lld is above maximum %lld", spec,
                        i, (long long)lo[i], (long long)hi[i]);
  if (v->rank == 0 && count != 1)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': input '%s' is a scalar: give one value, not %d", spec,
                      v->name, count);
  bool fixed = v->rank == 1 && v->symbol[0] == NULL && v->min[0] >= 0 && v->min[0] == v->max[0];
  if (fixed && v->min[0] != count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape-values '%s': input '%s' holds %lld values in the model, the flag "
                      "gives %d",
                      spec, v->name, (long long)v->min[0], count);
  int64_t *min_values = etrt_ir_alloc(graph, (size_t)count * sizeof *min_values);
  int64_t *max_values = etrt_ir_alloc(graph, (size_t)count * sizeof *max_values);
  if (min_values == NULL || max_values == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "--shape-values: out of memory");
  memcpy(min_values, lo, (size_t)count * sizeof *lo);
  memcpy(max_values, hi, (size_t)count * sizeof *hi);
  if (v->rank != 0) {
    /* The count fixes the size: no --shape is needed for it, and a --shape that
     * says otherwise is refused as contradicting the model. */
    v->rank = 1;
    v->min[0] = v->max[0] = count;
    v->symbol[0] = NULL;
  }
  v->value_min = min_values;
  v->value_max = max_values;
  v->value_count = count;
  return ETRT_OK;
}

/* Whether `v` could be given by value (it only lacks the flag). */
static bool etrt_values_passable(const etrt_ir_value *v) {
  if (v->dtype != ETRT_DTYPE_INT64 && v->dtype != ETRT_DTYPE_INT32) return false;
  if (v->rank > 1) return false;
  return v->rank != 1 || v->min[0] < 0 || v->min[0] != v->max[0] ||
         v->max[0] <= ETRT_SHAPE_VALUES_MAX;
}

etrt_status etrt_shape_values_apply(etrt_ir_graph *graph, const char *const *specs,
                                    uint32_t count) {
  etrt_host_value_use *uses = malloc(((size_t)graph->num_values + 1) * sizeof *uses);
  if (uses == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "--shape-values: out of memory");
  etrt_host_values_find(graph, uses);
  etrt_status status = ETRT_OK;
  for (uint32_t i = 0; i < count && status == ETRT_OK; ++i)
    status = etrt_values_apply_one(graph, specs[i], uses);
  for (uint32_t i = 0; i < graph->num_inputs && status == ETRT_OK; ++i) {
    int32_t id = graph->inputs[i];
    const etrt_ir_value *v = &graph->values[id];
    if (uses[id].node < 0 || uses[id].optional || v->value_min != NULL) continue;
    const etrt_ir_node *reader = &graph->nodes[uses[id].node];
    if (etrt_values_passable(v))
      status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s '%s': its input %u needs the values of the graph input '%s' when the "
                          "plan is built (they decide shapes): pass --shape-values %s:V1,V2,... "
                          "(or %s:MIN1,...:MAX1,... with bounds); the program then refuses other "
                          "values",
                          reader->op_type, reader->name, uses[id].input, v->name, v->name, v->name);
    else
      status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s '%s': its input %u needs the values of the graph input '%s' (%s) "
                          "when the plan is built (they decide shapes); only int32 and int64 "
                          "inputs of at most %d values can be given then (--shape-values): make "
                          "'%s' an initializer",
                          reader->op_type, reader->name, uses[id].input, v->name,
                          etrt_dtype_name(v->dtype), ETRT_SHAPE_VALUES_MAX, v->name);
  }
  free(uses);
  return status;
}
