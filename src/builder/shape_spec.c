#include "builder/shape_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "builder/flag_text.h"

/* Digits, possibly separated by 'x': "4", "1x3x224x224". */
static bool etrt_shape_field_ok(const char *text, size_t size) {
  if (size == 0) return false;
  bool digit_expected = true;
  for (size_t i = 0; i < size; ++i) {
    if (isdigit((unsigned char)text[i])) {
      digit_expected = false;
    } else if (text[i] == 'x' && !digit_expected) {
      digit_expected = true;
    } else {
      return false;
    }
  }
  return !digit_expected;
}

/* Parses a field into sizes; returns the count, or -1 when too many or too large. */
static int etrt_shape_field_dims(const char *text, size_t size, int64_t *dims) {
  int count = 0;
  size_t i = 0;
  while (i < size) {
    if (count == ETRT_MAX_RANK) return -1;
    int64_t value = 0;
    while (i < size && text[i] != 'x') {
      if (value > (INT64_MAX - 9) / 10) return -1;
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    dims[count++] = value;
    ++i; /* the 'x' */
  }
  return count;
}

static const etrt_flag_format etrt_shape_format = {
    .flag = "--shape",
    .syntax =
        "expected NAME:N, NAME:MIN:MAX (a dimension symbol), or INPUT:DIMS, "
        "INPUT:MINDIMS:MAXDIMS with DIMS like 1x3x224x224",
    .field_ok = etrt_shape_field_ok,
    .field_parse = etrt_shape_field_dims,
    .parse_failure =
        "a size is too large or has more than " ETRT_FLAG_TEXT_NUMBER(ETRT_MAX_RANK) " axes",
};
_Static_assert(ETRT_MAX_RANK <= ETRT_FLAG_TEXT_MAX_VALUES,
               "a --shape field fits the check's buffer");

etrt_status etrt_shape_spec_check(const char *spec) {
  return etrt_flag_text_check(spec, &etrt_shape_format);
}

/* Whether an axis's dimension symbol (NULL for a numbered axis) is the text's name. */
static bool etrt_shape_symbol_is(const char *symbol, const etrt_flag_text *text) {
  return symbol && strlen(symbol) == text->name_size &&
         memcmp(symbol, text->name, text->name_size) == 0;
}

static bool etrt_shape_is_symbol(const etrt_ir_graph *graph, const etrt_flag_text *text) {
  for (uint32_t i = 0; i < graph->num_inputs; ++i) {
    const etrt_ir_value *v = &graph->values[graph->inputs[i]];
    for (int32_t a = 0; a < v->rank; ++a)
      if (etrt_shape_symbol_is(v->symbol[a], text)) return true;
  }
  return false;
}

typedef enum { ETRT_SHAPE_INPUT, ETRT_SHAPE_SYMBOL } etrt_shape_target;

/* Resolves which split names something the graph has. */
static etrt_status etrt_shape_resolve(const etrt_ir_graph *graph, const char *spec,
                                      etrt_flag_text *text, etrt_shape_target *target) {
  for (int fields = 2; fields >= 1; --fields) {
    if (!etrt_flag_text_split(spec, fields, &etrt_shape_format, text)) continue;
    if (etrt_flag_text_find_input(graph, text) >= 0) {
      *target = ETRT_SHAPE_INPUT;
      return ETRT_OK;
    }
    if (etrt_shape_is_symbol(graph, text)) {
      *target = ETRT_SHAPE_SYMBOL;
      return ETRT_OK;
    }
  }
  if (!etrt_flag_text_split(spec, 1, &etrt_shape_format, text))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "--shape '%s': %s", spec,
                      etrt_shape_format.syntax);
  char known[512] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < graph->num_inputs && used + 2 < sizeof known; ++i) {
    const etrt_ir_value *v = &graph->values[graph->inputs[i]];
    int n = snprintf(known + used, sizeof known - used, "%s'%s'", used ? ", " : "", v->name);
    if (n > 0) used += (size_t)n;
    for (int32_t a = 0; a < v->rank && used + 2 < sizeof known; ++a) {
      if (v->symbol[a] == NULL) continue;
      n = snprintf(known + used, sizeof known - used, ", symbol '%s'", v->symbol[a]);
      if (n > 0) used += (size_t)n;
    }
  }
  return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                    "--shape '%s': the model has no input or dimension symbol named '%.*s' "
                    "(it has %s)",
                    spec, (int)text->name_size, text->name, used ? known : "no inputs");
}

/* Sets one axis's bounds, refusing a contradiction with a size fixed in the model. */
static etrt_status etrt_shape_set_axis(etrt_ir_value *v, int32_t axis, int64_t min, int64_t max,
                                       const char *spec) {
  if (min > max)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape '%s': input '%s' axis %d: minimum %lld is above maximum %lld", spec,
                      v->name, (int)axis, (long long)min, (long long)max);
  bool fixed_in_model =
      v->symbol[axis] == NULL && v->min[axis] >= 0 && v->min[axis] == v->max[axis];
  if (fixed_in_model && (min != v->min[axis] || max != v->max[axis]))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape '%s': input '%s' axis %d has the fixed size %lld in the model", spec,
                      v->name, (int)axis, (long long)v->min[axis]);
  v->min[axis] = min;
  v->max[axis] = max;
  return ETRT_OK;
}

static etrt_status etrt_shape_apply_symbol(etrt_ir_graph *graph, const char *spec,
                                           const etrt_flag_text *text) {
  int64_t bounds[2][ETRT_MAX_RANK];
  for (int f = 0; f < text->field_count; ++f) {
    int n = etrt_shape_field_dims(text->fields[f], text->field_sizes[f], bounds[f]);
    if (n != 1)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "--shape '%s': '%.*s' is a dimension symbol: give one size or MIN:MAX",
                        spec, (int)text->name_size, text->name);
  }
  int64_t min = bounds[0][0], max = bounds[text->field_count - 1][0];
  for (uint32_t i = 0; i < graph->num_inputs; ++i) {
    etrt_ir_value *v = &graph->values[graph->inputs[i]];
    for (int32_t a = 0; a < v->rank; ++a)
      if (etrt_shape_symbol_is(v->symbol[a], text))
        ETRT_RETURN_IF_ERROR(etrt_shape_set_axis(v, a, min, max, spec));
  }
  return ETRT_OK;
}

static etrt_status etrt_shape_apply_input(etrt_ir_graph *graph, const char *spec,
                                          const etrt_flag_text *text) {
  etrt_ir_value *v = &graph->values[etrt_flag_text_find_input(graph, text)];
  int64_t dims[2][ETRT_MAX_RANK];
  int rank[2];
  for (int f = 0; f < text->field_count; ++f) {
    rank[f] = etrt_shape_field_dims(text->fields[f], text->field_sizes[f], dims[f]);
    if (rank[f] < 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "--shape '%s': more than %d axes", spec,
                        ETRT_MAX_RANK);
  }
  int last = text->field_count - 1;
  if (rank[0] != rank[last])
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape '%s': the minimum has %d axes and the maximum %d", spec, rank[0],
                      rank[last]);
  if (v->rank >= 0 && v->rank != rank[0])
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape '%s': input '%s' has %d axes in the model, the flag gives %d", spec,
                      v->name, (int)v->rank, rank[0]);
  if (v->rank < 0) {
    v->rank = rank[0];
    for (int32_t a = 0; a < v->rank; ++a) v->min[a] = v->max[a] = -1;
  }
  for (int32_t a = 0; a < v->rank; ++a)
    ETRT_RETURN_IF_ERROR(etrt_shape_set_axis(v, a, dims[0][a], dims[last][a], spec));
  return ETRT_OK;
}

etrt_status etrt_shape_specs_apply(etrt_ir_graph *graph, const char *const *specs, uint32_t count) {
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < count; ++i) {
      etrt_flag_text text;
      etrt_shape_target target = ETRT_SHAPE_INPUT;
      ETRT_RETURN_IF_ERROR(etrt_shape_resolve(graph, specs[i], &text, &target));
      if (pass == 0 && target == ETRT_SHAPE_SYMBOL)
        ETRT_RETURN_IF_ERROR(etrt_shape_apply_symbol(graph, specs[i], &text));
      if (pass == 1 && target == ETRT_SHAPE_INPUT)
        ETRT_RETURN_IF_ERROR(etrt_shape_apply_input(graph, specs[i], &text));
    }
  }
  for (uint32_t i = 0; i < graph->num_inputs; ++i) {
    const etrt_ir_value *v = &graph->values[graph->inputs[i]];
    if (v->rank < 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "input '%s' has no shape in the model: pass --shape %s:DIMS (e.g. "
                        "1x3x224x224)",
                        v->name, v->name);
    for (int32_t a = 0; a < v->rank; ++a) {
      if (v->min[a] >= 0) continue;
      /* A bound is required: the program's input and output buffers, the GPU
       * workspaces and the CUDA graphs are sized for the largest shapes. */
      if (v->symbol[a])
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "input '%s' axis %d has the symbolic size '%s' with no bounds: pass "
                          "--shape %s:MIN:MAX (or --shape %s:DIMS for the whole input); the "
                          "program's memory is planned for the largest size",
                          v->name, (int)a, v->symbol[a], v->symbol[a], v->name);
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "input '%s' axis %d has no size in the model: pass --shape %s:DIMS "
                        "(or %s:MINDIMS:MAXDIMS)",
                        v->name, (int)a, v->name, v->name);
    }
  }
  return ETRT_OK;
}
