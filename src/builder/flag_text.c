#include "builder/flag_text.h"

#include <string.h>

bool etrt_flag_text_split(const char *spec, int fields, const etrt_flag_format *format,
                          etrt_flag_text *out) {
  size_t end = strlen(spec);
  memset(out, 0, sizeof *out);
  for (int f = fields - 1; f >= 0; --f) {
    size_t colon = end;
    while (colon > 0 && spec[colon - 1] != ':') --colon;
    if (colon == 0) return false;
    out->fields[f] = spec + colon;
    out->field_sizes[f] = end - colon;
    if (!format->field_ok(out->fields[f], out->field_sizes[f])) return false;
    end = colon - 1;
  }
  if (end == 0) return false;
  out->name = spec;
  out->name_size = end;
  out->field_count = fields;
  return true;
}

etrt_status etrt_flag_text_check(const char *spec, const etrt_flag_format *format) {
  etrt_flag_text text;
  if (!etrt_flag_text_split(spec, 1, format, &text))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s '%s': %s", format->flag, spec,
                      format->syntax);
  /* Which split applies depends on the graph's names, so every one must parse. */
  int64_t values[ETRT_FLAG_TEXT_MAX_VALUES];
  for (int fields = 1; fields <= 2; ++fields) {
    if (!etrt_flag_text_split(spec, fields, format, &text)) continue;
    for (int f = 0; f < fields; ++f)
      if (format->field_parse(text.fields[f], text.field_sizes[f], values) < 0)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s '%s': %s", format->flag, spec,
                          format->parse_failure);
  }
  return ETRT_OK;
}

int32_t etrt_flag_text_find_input(const etrt_ir_graph *graph, const etrt_flag_text *text) {
  int32_t id = etrt_ir_find_value_n(graph, text->name, text->name_size);
  return id >= 0 && graph->values[id].input_index >= 0 ? id : -1;
}
