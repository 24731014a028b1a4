#include "builder/shape_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One shape text split into a name and one or two size fields. Names may contain
 * ':' themselves (TensorFlow exports name inputs "x:0"), so the fields are taken
 * from the right and the name is whatever the graph knows. */
typedef struct etrt_shape_text {
  const char *name;
  size_t name_size;
  const char *fields[2];
  size_t field_sizes[2];
  int field_count;
} etrt_shape_text;

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

/* Splits at the last `fields` colons; false when the fields are malformed. */
static bool etrt_shape_split(const char *spec, int fields, etrt_shape_text *out) {
  size_t end = strlen(spec);
  memset(out, 0, sizeof *out);
  for (int f = fields - 1; f >= 0; --f) {
    size_t colon = end;
    while (colon > 0 && spec[colon - 1] != ':') --colon;
    if (colon == 0) return false;
    out->fields[f] = spec + colon;
    out->field_sizes[f] = end - colon;
    if (!etrt_shape_field_ok(out->fields[f], out->field_sizes[f])) return false;
    end = colon - 1;
  }
  if (end == 0) return false;
  out->name = spec;
  out->name_size = end;
  out->field_count = fields;
  return true;
}

static const char etrt_shape_syntax[] =
    "expected NAME:N, NAME:MIN:MAX (a dimension symbol), or INPUT:DIMS, "
    "INPUT:MINDIMS:MAXDIMS with DIMS like 1x3x224x224";

etrt_status etrt_shape_spec_check(const char *spec) {
  etrt_shape_text text;
  if (!etrt_shape_split(spec, 1, &text))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "--shape '%s': %s", spec, etrt_shape_syntax);
  int64_t dims[ETRT_MAX_RANK];
  for (int fields = 1; fields <= 2; ++fields) {
    if (!etrt_shape_split(spec, fields, &text)) continue;
    for (int f = 0; f < fields; ++f)
      if (etrt_shape_field_dims(text.fields[f], text.field_sizes[f], dims) < 0)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "--shape '%s': a size is too large or has more than %d axes", spec,
                          ETRT_MAX_RANK);
  }
  return ETRT_OK;
}

static bool etrt_shape_is_symbol(const etrt_ir_graph *graph, const char *name, size_t size) {
  for (uint32_t i = 0; i < graph->num_inputs; ++i) {
    const etrt_ir_value *v = &graph->values[graph->inputs[i]];
    for (int32_t a = 0; a < v->rank; ++a)
      if (v->symbol[a] && strlen(v->symbol[a]) == size && memcmp(v->symbol[a], name, size) == 0)
        return true;
  }
  return false;
}

static int32_t etrt_shape_find_input(const etrt_ir_graph *graph, const char *name, size_t size) {
  int32_t id = etrt_ir_find_value_n(graph, name, size);
  return id >= 0 && graph->values[id].input_index >= 0 ? id : -1;
}

typedef enum { ETRT_SHAPE_INPUT, ETRT_SHAPE_SYMBOL } etrt_shape_target;

/* Resolves which split names something the graph has. */
static etrt_status etrt_shape_resolve(const etrt_ir_graph *graph, const char *spec,
                                      etrt_shape_text *text, etrt_shape_target *target) {
  for (int fields = 2; fields >= 1; --fields) {
    if (!etrt_shape_split(spec, fields, text)) continue;
    if (etrt_shape_find_input(graph, text->name, text->name_size) >= 0) {
      *target = ETRT_SHAPE_INPUT;
      return ETRT_OK;
    }
    if (etrt_shape_is_symbol(graph, text->name, text->name_size)) {
      *target = ETRT_SHAPE_SYMBOL;
      return ETRT_OK;
    }
  }
  if (!etrt_shape_split(spec, 1, text))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "--shape '%s': %s", spec, etrt_shape_syntax);
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
  bool fixed_in_model = v->symbol[axis] == NULL && v->min[axis] >= 0 && v->min[axis] == v->max[axis];
  if (fixed_in_model && (min != v->min[axis] || max != v->max[axis]))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--shape '%s': input '%s' axis %d has the fixed size %lld in the model", spec,
                      v->name, (int)axis, (long long)v->min[axis]);
  v->min[axis] = min;
  v->max[axis] = max;
  return ETRT_OK;
}

static etrt_status etrt_shape_apply_symbol(etrt_ir_graph *graph, const char *spec,
                                           const etrt_shape_text *text) {
  int64_t bounds[2][ETRT_MAX_RANK];
  for (int f = 0; f < text->field_count; ++f) {
    int n = etrt_shape_field_dims(text->fields[f], text->field_sizes[f], bounds[f]);
    if (n != 1)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "--shape '%s': '%.*s' is a dimension symbol: give one size or MIN:MAX", spec,
                        (int)text->name_size, text->name);
  }
  int64_t min = bounds[0][0], max = bounds[text->field_count - 1][0];
  for (uint32_t i = 0; i < graph->num_inputs; ++i) {
    etrt_ir_value *v = &graph->values[graph->inputs[i]];
    for (int32_t a = 0; a < v->rank; ++a) {
      const char *symbol = v->symbol[a];
      if (symbol && strlen(symbol) == text->name_size &&
          memcmp(symbol, text->name, text->name_size) == 0)
        ETRT_RETURN_IF_ERROR(etrt_shape_set_axis(v, a, min, max, spec));
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_shape_apply_input(etrt_ir_graph *graph, const char *spec,
                                          const etrt_shape_text *text) {
  etrt_ir_value *v = &graph->values[etrt_shape_find_input(graph, text->name, text->name_size)];
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
      etrt_shape_text text;
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
      if (v->symbol[a])
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "input '%s' axis %d has the symbolic size '%s' with no bounds: pass "
                          "--shape %s:MIN:MAX (or --shape %s:DIMS for the whole input)",
                          v->name, (int)a, v->symbol[a], v->symbol[a], v->name);
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "input '%s' axis %d has no size in the model: pass --shape %s:DIMS "
                        "(or %s:MINDIMS:MAXDIMS)",
                        v->name, (int)a, v->name, v->name);
    }
  }
  return ETRT_OK;
}
