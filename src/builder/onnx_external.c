#include "builder/onnx_external.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"

etrt_status etrt_onnx_parse_string_entry(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                         const etrt_pb_field *field, etrt_onnx_str *key,
                                         etrt_onnx_str *value) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  *key = etrt_onnx_no_str;
  *value = etrt_onnx_no_str;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    if (f.number == 1) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, key));
    if (f.number == 2) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, value));
  });
  return ETRT_OK;
}

/* A decimal number from an external_data value (written as text by ONNX). */
etrt_status etrt_onnx_parse_decimal(etrt_onnx_parser *p, etrt_onnx_str text, size_t offset,
                                    const char *key, uint64_t *out) {
  uint64_t v = 0;
  if (text.size == 0) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset, "external_data '%s' is empty", key);
  }
  for (size_t i = 0; i < text.size; ++i) {
    char ch = text.data[i];
    if (ch < '0' || ch > '9' || v > (UINT64_MAX - (uint64_t)(ch - '0')) / 10) {
      return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                            "external_data '%s' = '%.*s' is not a decimal number that fits in 64 "
                            "bits",
                            key, (int)(text.size < 40 ? text.size : 40), text.data);
    }
    v = v * 10 + (uint64_t)(ch - '0');
  }
  *out = v;
  return ETRT_OK;
}

/* Refuses locations that could reach outside the model's folder by their spelling;
 * symbolic links are caught after resolution. */
static etrt_status etrt_onnx_check_location(etrt_onnx_parser *p, etrt_onnx_str loc, size_t offset) {
  if (loc.size == 0) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset, "external data has no location");
  }
  if (memchr(loc.data, '\0', loc.size) != NULL) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                          "external data location contains a NUL byte");
  }
  if (loc.data[0] == '/' || loc.data[0] == '\\') {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                          "external data location '%.*s' is an absolute path; it must be relative "
                          "to the model's folder",
                          ETRT_ONNX_STR_ARGS(loc));
  }
  size_t start = 0;
  for (size_t i = 0; i <= loc.size; ++i) {
    if (i == loc.size || loc.data[i] == '/' || loc.data[i] == '\\') {
      if (i - start == 2 && loc.data[start] == '.' && loc.data[start + 1] == '.') {
        return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                              "external data location '%.*s' leaves the model's folder ('..')",
                              ETRT_ONNX_STR_ARGS(loc));
      }
      start = i + 1;
    }
  }
  return ETRT_OK;
}

/* Maps `location` (relative to base_dir) once per model and returns the mapping. */
static etrt_status etrt_onnx_external_map(etrt_onnx_parser *p, etrt_onnx_str loc, size_t offset,
                                          const etrt_file_map **out) {
  etrt_onnx_model *m = p->model;
  for (size_t i = 0; i < m->external_count; ++i) {
    if (etrt_onnx_str_eq(loc, m->externals[i].location)) {
      *out = &m->externals[i].map;
      return ETRT_OK;
    }
  }
  if (m->external_count == m->external_capacity) {
    size_t capacity = m->external_capacity ? m->external_capacity * 2 : 4;
    etrt_onnx_external *grown = realloc(m->externals, capacity * sizeof *grown);
    if (grown == NULL) {
      return etrt_onnx_fail(p, ETRT_ERROR_OUT_OF_MEMORY, offset, "out of memory");
    }
    m->externals = grown;
    m->external_capacity = capacity;
  }
  size_t path_size = strlen(p->base_dir) + loc.size + 2;
  char *location = malloc(loc.size + 1);
  char *path = malloc(path_size);
  char *real_dir = realpath(p->base_dir, NULL);
  char *real_path = NULL;
  etrt_status s = ETRT_OK;
  if (location == NULL || path == NULL) {
    s = etrt_onnx_fail(p, ETRT_ERROR_OUT_OF_MEMORY, offset, "out of memory");
    goto done;
  }
  memcpy(location, loc.data, loc.size);
  location[loc.size] = '\0';
  snprintf(path, path_size, "%s/%s", p->base_dir, location);
  real_path = realpath(path, NULL);
  if (real_dir == NULL || real_path == NULL) {
    s = etrt_onnx_fail(p, ETRT_ERROR_NOT_FOUND, offset, "external data file '%s' not found", path);
    goto done;
  }
  size_t dir_len = strlen(real_dir);
  int inside = strncmp(real_path, real_dir, dir_len) == 0 &&
               (real_path[dir_len] == '/' || (dir_len == 1 && real_dir[0] == '/'));
  if (!inside) {
    s = etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                       "external data location '%s' resolves to '%s', outside the model's folder",
                       location, real_path);
    goto done;
  }
  etrt_onnx_external *e = &m->externals[m->external_count];
  s = etrt_file_map_open(real_path, &e->map);
  if (s != ETRT_OK) {
    s = etrt_error_context(s, "%s: external data at byte %zu: ", p->path, offset);
    goto done;
  }
  e->location = location;
  location = NULL;
  ++m->external_count;
  *out = &e->map;
done:
  free(location);
  free(path);
  free(real_dir);
  free(real_path);
  return s;
}

etrt_status etrt_onnx_resolve_external(etrt_onnx_parser *p, etrt_onnx_tensor *t, int has_length) {
  if (p->base_dir == NULL) {
    return etrt_onnx_fail(p, ETRT_ERROR_UNSUPPORTED, t->offset,
                          "tensor '%.*s' keeps its data in external file '%.*s', which needs the "
                          "model's folder (none known here)",
                          ETRT_ONNX_STR_ARGS(t->name), ETRT_ONNX_STR_ARGS(t->external_location));
  }
  ETRT_RETURN_IF_ERROR(etrt_onnx_check_location(p, t->external_location, t->offset));
  const etrt_file_map *map = NULL;
  ETRT_RETURN_IF_ERROR(etrt_onnx_external_map(p, t->external_location, t->offset, &map));
  uint64_t length = has_length
                        ? t->external_length
                        : (t->external_offset <= map->size ? map->size - t->external_offset : 0);
  if (!etrt_range_ok(t->external_offset, length, map->size)) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, t->offset,
                          "tensor '%.*s': external data [%llu, +%llu) lies outside '%.*s' (%zu "
                          "bytes)",
                          ETRT_ONNX_STR_ARGS(t->name), (unsigned long long)t->external_offset,
                          (unsigned long long)length, ETRT_ONNX_STR_ARGS(t->external_location),
                          map->size);
  }
  t->raw_data = map->data + t->external_offset;
  t->raw_size = (size_t)length;
  t->external_length = length;
  return ETRT_OK;
}
