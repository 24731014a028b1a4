#include "builder/onnx_model.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/checked.h"
#include "base/file.h"
#include "base/status.h"
#include "builder/protobuf.h"

typedef struct etrt_onnx_external {
  char *location;
  etrt_file_map map;
} etrt_onnx_external;

struct etrt_onnx_model {
  etrt_arena *arena; /* every array of the parsed model */
  const etrt_onnx_graph *graph;
  int64_t ir_version;
  etrt_onnx_str producer_name, producer_version;
  const etrt_onnx_opset *opsets;
  size_t opset_count;
  const etrt_onnx_str *function_domains, *function_names;
  size_t function_count;
  etrt_file_map file; /* the model's own bytes when loaded from a file */
  etrt_onnx_external *externals;
  size_t external_count, external_capacity;
};

static const char etrt_onnx_empty[1] = "";
static const etrt_onnx_str etrt_onnx_no_str = {etrt_onnx_empty, 0};

/* --- the parse: context, field path, errors --------------------------------------- */

typedef struct etrt_onnx_parser {
  etrt_onnx_model *model;
  const char *base_dir; /* NULL: external data refused */
  char path[512];
  size_t path_len;
} etrt_onnx_parser;

static size_t etrt_onnx_path_push(etrt_onnx_parser *p, const char *fmt, ...) ETRT_PRINTF(2, 3);
static size_t etrt_onnx_path_push(etrt_onnx_parser *p, const char *fmt, ...) {
  size_t mark = p->path_len;
  if (p->path_len < sizeof p->path - 1) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(p->path + p->path_len, sizeof p->path - p->path_len, fmt, args);
    va_end(args);
    if (n > 0) p->path_len += (size_t)n;
    if (p->path_len >= sizeof p->path) p->path_len = sizeof p->path - 1;
  }
  return mark;
}

static void etrt_onnx_path_pop(etrt_onnx_parser *p, size_t mark) {
  p->path_len = mark;
  p->path[mark] = '\0';
}

/* A lower layer's message, with the field path in front. */
static etrt_status etrt_onnx_wrap(etrt_onnx_parser *p, etrt_status status) {
  if (status == ETRT_OK) return ETRT_OK;
  return etrt_error_context(status, "%s: ", p->path);
}

static etrt_status etrt_onnx_fail(etrt_onnx_parser *p, etrt_status status, size_t offset,
                                  const char *fmt, ...) ETRT_PRINTF(4, 5);
static etrt_status etrt_onnx_fail(etrt_onnx_parser *p, etrt_status status, size_t offset,
                                  const char *fmt, ...) {
  char what[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  return etrt_error(status, "%s: %s at byte %zu", p->path, what, offset);
}

#define ETRT_ONNX_TRY(p, expr) ETRT_RETURN_IF_ERROR(etrt_onnx_wrap((p), (expr)))

static void *etrt_onnx_alloc(etrt_onnx_parser *p, size_t count, size_t element, etrt_status *status) {
  *status = ETRT_OK;
  if (count == 0) return NULL;
  size_t size;
  if (etrt_mul_overflow_size(count, element, &size) || size > SIZE_MAX - 64) {
    *status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s: %zu entries overflow", p->path, count);
    return NULL;
  }
  void *memory = etrt_arena_alloc(p->model->arena, size, 16);
  if (memory == NULL)
    *status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s: out of memory for %zu entries", p->path, count);
  return memory;
}

#define ETRT_ONNX_ALLOC(p, ptr, count)                                              \
  do {                                                                              \
    etrt_status alloc_status_;                                                      \
    (ptr) = etrt_onnx_alloc((p), (count), sizeof *(ptr), &alloc_status_);           \
    if (alloc_status_ != ETRT_OK) return alloc_status_;                             \
  } while (0)

/* --- field readers ------------------------------------------------------------------- */

static etrt_status etrt_onnx_read_str(etrt_onnx_parser *p, const etrt_pb_field *f,
                                      etrt_onnx_str *out) {
  ETRT_ONNX_TRY(p, etrt_pb_field_expect(f, ETRT_PB_WIRE_LEN));
  out->data = f->size ? (const char *)f->data : etrt_onnx_empty;
  out->size = f->size;
  return ETRT_OK;
}

static etrt_status etrt_onnx_read_int64(etrt_onnx_parser *p, const etrt_pb_field *f, int64_t *out) {
  return etrt_onnx_wrap(p, etrt_pb_field_int64(f, out));
}

static etrt_status etrt_onnx_read_int32(etrt_onnx_parser *p, const etrt_pb_field *f, int32_t *out) {
  return etrt_onnx_wrap(p, etrt_pb_field_int32(f, out));
}

/* Counts the values of one occurrence of a repeated scalar field (pass 1). */
static etrt_status etrt_onnx_count_scalars(etrt_onnx_parser *p, const etrt_pb_field *f,
                                           etrt_pb_scalar kind, size_t *total) {
  etrt_pb_repeated it;
  size_t n;
  ETRT_ONNX_TRY(p, etrt_pb_repeated_begin(f, kind, &it, &n));
  if (etrt_add_overflow_size(*total, n, total)) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, f->offset, "too many values");
  }
  return ETRT_OK;
}

/* Appends one occurrence's values to out[*filled..] as raw bits (pass 2). */
typedef enum etrt_onnx_scalar_as {
  ETRT_ONNX_AS_INT64,
  ETRT_ONNX_AS_INT32,
  ETRT_ONNX_AS_UINT64,
  ETRT_ONNX_AS_FLOAT,
  ETRT_ONNX_AS_DOUBLE
} etrt_onnx_scalar_as;

static etrt_status etrt_onnx_fill_scalars(etrt_onnx_parser *p, const etrt_pb_field *f,
                                          etrt_onnx_scalar_as as, void *out, size_t capacity,
                                          size_t *filled) {
  etrt_pb_scalar kind = as == ETRT_ONNX_AS_FLOAT    ? ETRT_PB_SCALAR_FIXED32
                        : as == ETRT_ONNX_AS_DOUBLE ? ETRT_PB_SCALAR_FIXED64
                                                    : ETRT_PB_SCALAR_VARINT;
  etrt_pb_repeated it;
  size_t n;
  ETRT_ONNX_TRY(p, etrt_pb_repeated_begin(f, kind, &it, &n));
  if (n > capacity - *filled) {
    return etrt_onnx_fail(p, ETRT_ERROR_INTERNAL, f->offset, "more values than counted");
  }
  uint64_t bits;
  while (etrt_pb_repeated_next(&it, &bits)) {
    size_t i = (*filled)++;
    switch (as) {
      case ETRT_ONNX_AS_INT64: ((int64_t *)out)[i] = (int64_t)bits; break;
      case ETRT_ONNX_AS_UINT64: ((uint64_t *)out)[i] = bits; break;
      case ETRT_ONNX_AS_DOUBLE: memcpy((double *)out + i, &bits, 8); break;
      case ETRT_ONNX_AS_FLOAT: {
        uint32_t b32 = (uint32_t)bits;
        memcpy((float *)out + i, &b32, 4);
        break;
      }
      case ETRT_ONNX_AS_INT32: {
        int64_t v = (int64_t)bits;
        if (v < INT32_MIN || v > INT32_MAX) {
          return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, f->offset,
                                "value %lld out of range for int32", (long long)v);
        }
        ((int32_t *)out)[i] = (int32_t)v;
        break;
      }
    }
  }
  return ETRT_OK;
}

/* Walks a message's fields: `body` runs for each, with `f` the field. */
#define ETRT_ONNX_FOR_FIELDS(p, cursor, f, ...)                                    \
  do {                                                                             \
    etrt_pb_cursor_rewind(cursor);                                                 \
    for (;;) {                                                                     \
      int more_;                                                                   \
      ETRT_ONNX_TRY((p), etrt_pb_cursor_next((cursor), &(f), &more_));             \
      if (!more_) break;                                                           \
      __VA_ARGS__                                                                  \
    }                                                                              \
  } while (0)

/* Pass 1 of a repeated message or string field: check the wire type and count. */
static etrt_status etrt_onnx_count_len(etrt_onnx_parser *p, const etrt_pb_field *f,
                                       const char *name, size_t *count) {
  if (f->wire != ETRT_PB_WIRE_LEN) {
    size_t mark = etrt_onnx_path_push(p, ".%s", name);
    etrt_status s = etrt_onnx_wrap(p, etrt_pb_field_expect(f, ETRT_PB_WIRE_LEN));
    etrt_onnx_path_pop(p, mark);
    return s;
  }
  ++*count;
  return ETRT_OK;
}

static etrt_status etrt_onnx_refuse_twice(etrt_onnx_parser *p, const etrt_pb_field *f,
                                          const void *already, const char *name) {
  if (already == NULL) return ETRT_OK;
  return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, f->offset, "%s given twice", name);
}

/* --- messages ------------------------------------------------------------------------ */

static etrt_status etrt_onnx_parse_graph(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                         const etrt_pb_field *field, etrt_onnx_graph *out);

static etrt_status etrt_onnx_parse_string_entry(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
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
static etrt_status etrt_onnx_parse_decimal(etrt_onnx_parser *p, etrt_onnx_str text, size_t offset,
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

static etrt_status etrt_onnx_resolve_external(etrt_onnx_parser *p, etrt_onnx_tensor *t,
                                              int has_length) {
  if (p->base_dir == NULL) {
    return etrt_onnx_fail(p, ETRT_ERROR_UNSUPPORTED, t->offset,
                          "tensor '%.*s' keeps its data in external file '%.*s', which needs the "
                          "model's folder (none known here)",
                          ETRT_ONNX_STR_ARGS(t->name), ETRT_ONNX_STR_ARGS(t->external_location));
  }
  ETRT_RETURN_IF_ERROR(etrt_onnx_check_location(p, t->external_location, t->offset));
  const etrt_file_map *map = NULL;
  ETRT_RETURN_IF_ERROR(etrt_onnx_external_map(p, t->external_location, t->offset, &map));
  uint64_t length = has_length ? t->external_length
                               : (t->external_offset <= map->size ? map->size - t->external_offset
                                                                  : 0);
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

static etrt_status etrt_onnx_set_storage(etrt_onnx_parser *p, etrt_onnx_tensor *t,
                                         etrt_onnx_storage storage, size_t offset) {
  if (t->storage != ETRT_ONNX_STORAGE_NONE && t->storage != storage) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                          "tensor has values in both %s and %s", etrt_onnx_storage_name(t->storage),
                          etrt_onnx_storage_name(storage));
  }
  t->storage = storage;
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_tensor_cursor(etrt_onnx_parser *p, etrt_pb_cursor *c,
                                                 size_t offset, etrt_onnx_tensor *t) {
  memset(t, 0, sizeof *t);
  t->name = etrt_onnx_no_str;
  t->external_location = etrt_onnx_no_str;
  t->offset = offset;
  size_t n_dims = 0, n_values = 0, n_external = 0;
  int32_t location = 0;
  etrt_pb_field f;
  /* Pass 1: scalars, views and counts. */
  ETRT_ONNX_FOR_FIELDS(p, c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        etrt_onnx_path_push(p, ".dims");
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_scalars(p, &f, ETRT_PB_SCALAR_VARINT, &n_dims));
        break;
      case 2:
        etrt_onnx_path_push(p, ".data_type");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int32(p, &f, &t->data_type));
        break;
      case 3:
        return etrt_onnx_fail(p, ETRT_ERROR_UNSUPPORTED, f.offset,
                              "TensorProto.segment (a chunked tensor) is not supported");
      case 4:
      case 5:
      case 7:
      case 10:
      case 11: {
        static const etrt_onnx_storage storage_of[12] = {
            [4] = ETRT_ONNX_STORAGE_FLOAT,  [5] = ETRT_ONNX_STORAGE_INT32,
            [7] = ETRT_ONNX_STORAGE_INT64,  [10] = ETRT_ONNX_STORAGE_DOUBLE,
            [11] = ETRT_ONNX_STORAGE_UINT64};
        static const char *const name_of[12] = {[4] = ".float_data", [5] = ".int32_data",
                                                [7] = ".int64_data", [10] = ".double_data",
                                                [11] = ".uint64_data"};
        etrt_pb_scalar kind = f.number == 4    ? ETRT_PB_SCALAR_FIXED32
                              : f.number == 10 ? ETRT_PB_SCALAR_FIXED64
                                               : ETRT_PB_SCALAR_VARINT;
        etrt_onnx_path_push(p, "%s", name_of[f.number]);
        ETRT_RETURN_IF_ERROR(etrt_onnx_set_storage(p, t, storage_of[f.number], f.offset));
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_scalars(p, &f, kind, &n_values));
        break;
      }
      case 6:
        ETRT_RETURN_IF_ERROR(etrt_onnx_set_storage(p, t, ETRT_ONNX_STORAGE_STRING, f.offset));
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "string_data", &n_values));
        break;
      case 8:
        etrt_onnx_path_push(p, ".name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &t->name));
        break;
      case 9: {
        etrt_onnx_path_push(p, ".raw_data");
        etrt_onnx_str raw;
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &raw));
        ETRT_RETURN_IF_ERROR(etrt_onnx_set_storage(p, t, ETRT_ONNX_STORAGE_RAW, f.offset));
        t->raw_data = (const uint8_t *)raw.data;
        t->raw_size = raw.size;
        break;
      }
      case 13:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "external_data", &n_external));
        break;
      case 14:
        etrt_onnx_path_push(p, ".data_location");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int32(p, &f, &location));
        if (location != 0 && location != 1) {
          return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, f.offset,
                                "data_location %d is neither DEFAULT (0) nor EXTERNAL (1)",
                                (int)location);
        }
        break;
      default: break;
    }
    etrt_onnx_path_pop(p, mark);
  });

  int64_t *dims;
  ETRT_ONNX_ALLOC(p, dims, n_dims);
  void *values = NULL;
  etrt_onnx_str *strings = NULL;
  switch (t->storage) {
    case ETRT_ONNX_STORAGE_FLOAT: ETRT_ONNX_ALLOC(p, t->float_data, n_values); values = (void *)t->float_data; break;
    case ETRT_ONNX_STORAGE_INT32: ETRT_ONNX_ALLOC(p, t->int32_data, n_values); values = (void *)t->int32_data; break;
    case ETRT_ONNX_STORAGE_INT64: ETRT_ONNX_ALLOC(p, t->int64_data, n_values); values = (void *)t->int64_data; break;
    case ETRT_ONNX_STORAGE_DOUBLE: ETRT_ONNX_ALLOC(p, t->double_data, n_values); values = (void *)t->double_data; break;
    case ETRT_ONNX_STORAGE_UINT64: ETRT_ONNX_ALLOC(p, t->uint64_data, n_values); values = (void *)t->uint64_data; break;
    case ETRT_ONNX_STORAGE_STRING: ETRT_ONNX_ALLOC(p, strings, n_values); t->string_data = strings; break;
    default: break;
  }

  /* Pass 2: the repeated fields. */
  size_t d = 0, v = 0, e = 0;
  int has_length = 0;
  if (n_dims > 0 || n_values > 0 || n_external > 0) {
    ETRT_ONNX_FOR_FIELDS(p, c, f, {
      size_t mark = p->path_len;
      switch (f.number) {
        case 1:
          etrt_onnx_path_push(p, ".dims");
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT64, dims, n_dims, &d));
          break;
        case 4:
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_FLOAT, values, n_values, &v));
          break;
        case 5:
          etrt_onnx_path_push(p, ".int32_data");
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT32, values, n_values, &v));
          break;
        case 7:
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT64, values, n_values, &v));
          break;
        case 10:
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_DOUBLE, values, n_values, &v));
          break;
        case 11:
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_UINT64, values, n_values, &v));
          break;
        case 6:
          ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &strings[v++]));
          break;
        case 13: {
          etrt_onnx_path_push(p, ".external_data[%zu]", e++);
          etrt_onnx_str key, value;
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_string_entry(p, c, &f, &key, &value));
          if (etrt_onnx_str_eq(key, "location")) {
            t->external_location = value;
          } else if (etrt_onnx_str_eq(key, "offset")) {
            ETRT_RETURN_IF_ERROR(etrt_onnx_parse_decimal(p, value, f.offset, "offset", &t->external_offset));
          } else if (etrt_onnx_str_eq(key, "length")) {
            ETRT_RETURN_IF_ERROR(etrt_onnx_parse_decimal(p, value, f.offset, "length", &t->external_length));
            has_length = 1;
          } /* "checksum" and keys of later versions do not change where the bytes are */
          break;
        }
        default: break;
      }
      etrt_onnx_path_pop(p, mark);
    });
  }
  t->rank = n_dims;
  t->dims = dims;
  t->count = n_values;
  if (location == 1) {
    if (t->storage != ETRT_ONNX_STORAGE_NONE) {
      return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, offset,
                            "tensor '%.*s' is EXTERNAL but also has values in the file",
                            ETRT_ONNX_STR_ARGS(t->name));
    }
    t->storage = ETRT_ONNX_STORAGE_EXTERNAL;
    ETRT_RETURN_IF_ERROR(etrt_onnx_resolve_external(p, t, has_length));
  }
  t->numel = 1;
  for (size_t i = 0; i < t->rank; ++i) {
    if (t->dims[i] < 0 || etrt_mul_overflow_i64(t->numel, t->dims[i], &t->numel)) {
      t->numel = -1; /* etrt_onnx_tensor_check names the problem */
      break;
    }
  }
  return etrt_onnx_wrap(p, etrt_onnx_tensor_check(t));
}

static etrt_status etrt_onnx_parse_tensor(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                          const etrt_pb_field *field, etrt_onnx_tensor *t) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  return etrt_onnx_parse_tensor_cursor(p, &c, field->offset, t);
}

static etrt_status etrt_onnx_parse_shape(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                         const etrt_pb_field *field, etrt_onnx_value_info *vi) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  etrt_pb_field f;
  size_t n = 0;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    if (f.number == 1) ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "dim", &n));
  });
  etrt_onnx_dim *dims;
  ETRT_ONNX_ALLOC(p, dims, n);
  size_t i = 0;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    if (f.number != 1) continue;
    size_t mark = etrt_onnx_path_push(p, ".dim[%zu]", i);
    etrt_onnx_dim *dim = &dims[i++];
    dim->param = etrt_onnx_no_str;
    etrt_pb_cursor dc;
    ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(&c, &f, &dc));
    etrt_pb_field g;
    ETRT_ONNX_FOR_FIELDS(p, &dc, g, {
      /* dim_value and dim_param are a oneof: the last one written wins. */
      if (g.number == 1) {
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int64(p, &g, &dim->value));
        dim->has_value = 1;
        dim->param = etrt_onnx_no_str;
      } else if (g.number == 2) {
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &dim->param));
        dim->has_value = 0;
        dim->value = 0;
      }
    });
    etrt_onnx_path_pop(p, mark);
  });
  vi->has_shape = 1;
  vi->rank = n;
  vi->dims = dims;
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_type(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                        const etrt_pb_field *field, etrt_onnx_value_info *vi) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    switch (f.number) {
      case 1:   /* tensor_type */
      case 8: { /* sparse_tensor_type: the same layout */
        size_t mark = etrt_onnx_path_push(p, f.number == 1 ? ".tensor_type" : ".sparse_tensor_type");
        vi->kind = f.number == 1 ? ETRT_ONNX_TYPE_TENSOR : ETRT_ONNX_TYPE_SPARSE_TENSOR;
        vi->has_shape = 0;
        vi->rank = 0;
        vi->dims = NULL;
        vi->elem_type = 0;
        etrt_pb_cursor tc;
        ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(&c, &f, &tc));
        etrt_pb_field g;
        ETRT_ONNX_FOR_FIELDS(p, &tc, g, {
          if (g.number == 1) {
            size_t m2 = etrt_onnx_path_push(p, ".elem_type");
            ETRT_RETURN_IF_ERROR(etrt_onnx_read_int32(p, &g, &vi->elem_type));
            etrt_onnx_path_pop(p, m2);
          } else if (g.number == 2) {
            size_t m2 = etrt_onnx_path_push(p, ".shape");
            ETRT_RETURN_IF_ERROR(etrt_onnx_refuse_twice(p, &g, vi->has_shape ? "" : NULL, "shape"));
            ETRT_RETURN_IF_ERROR(etrt_onnx_parse_shape(p, &tc, &g, vi));
            etrt_onnx_path_pop(p, m2);
          }
        });
        etrt_onnx_path_pop(p, mark);
        break;
      }
      case 4:
      case 5:
      case 9:
        /* Sequences, maps and optionals are recorded by kind only; the importer
         * refuses them. */
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        vi->kind = (etrt_onnx_type_kind)f.number;
        vi->has_shape = 0;
        vi->rank = 0;
        vi->dims = NULL;
        break;
      default: break;
    }
  });
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_value_info(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                              const etrt_pb_field *field, etrt_onnx_value_info *vi) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  vi->name = etrt_onnx_no_str;
  vi->offset = field->offset;
  int has_type = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    if (f.number == 1) {
      ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &vi->name));
    } else if (f.number == 2) {
      size_t mark = etrt_onnx_path_push(p, ".type");
      ETRT_RETURN_IF_ERROR(etrt_onnx_refuse_twice(p, &f, has_type ? "" : NULL, "type"));
      ETRT_RETURN_IF_ERROR(etrt_onnx_parse_type(p, &c, &f, vi));
      has_type = 1;
      etrt_onnx_path_pop(p, mark);
    }
  });
  return ETRT_OK;
}

/* Which value fields an attribute carries, to infer a missing type. */
enum {
  ETRT_ONNX_HAS_F = 1 << 0,
  ETRT_ONNX_HAS_I = 1 << 1,
  ETRT_ONNX_HAS_S = 1 << 2,
  ETRT_ONNX_HAS_T = 1 << 3,
  ETRT_ONNX_HAS_G = 1 << 4,
  ETRT_ONNX_HAS_FLOATS = 1 << 5,
  ETRT_ONNX_HAS_INTS = 1 << 6,
  ETRT_ONNX_HAS_STRINGS = 1 << 7,
  ETRT_ONNX_HAS_TENSORS = 1 << 8,
  ETRT_ONNX_HAS_GRAPHS = 1 << 9,
  ETRT_ONNX_HAS_SPARSE = 1 << 10,
  ETRT_ONNX_HAS_TP = 1 << 11
};

static int32_t etrt_onnx_infer_attr_type(unsigned has) {
  static const struct {
    unsigned bit;
    int32_t type;
  } table[] = {
      {ETRT_ONNX_HAS_F, ETRT_ONNX_ATTR_FLOAT},          {ETRT_ONNX_HAS_I, ETRT_ONNX_ATTR_INT},
      {ETRT_ONNX_HAS_S, ETRT_ONNX_ATTR_STRING},         {ETRT_ONNX_HAS_T, ETRT_ONNX_ATTR_TENSOR},
      {ETRT_ONNX_HAS_G, ETRT_ONNX_ATTR_GRAPH},          {ETRT_ONNX_HAS_FLOATS, ETRT_ONNX_ATTR_FLOATS},
      {ETRT_ONNX_HAS_INTS, ETRT_ONNX_ATTR_INTS},        {ETRT_ONNX_HAS_STRINGS, ETRT_ONNX_ATTR_STRINGS},
      {ETRT_ONNX_HAS_TENSORS, ETRT_ONNX_ATTR_TENSORS},  {ETRT_ONNX_HAS_GRAPHS, ETRT_ONNX_ATTR_GRAPHS},
      {ETRT_ONNX_HAS_SPARSE, ETRT_ONNX_ATTR_SPARSE_TENSOR}, {ETRT_ONNX_HAS_TP, ETRT_ONNX_ATTR_TYPE_PROTO},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (has == table[i].bit) return table[i].type;
  }
  return ETRT_ONNX_ATTR_UNDEFINED; /* none or several: ambiguous */
}

static etrt_status etrt_onnx_parse_attribute(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                             const etrt_pb_field *field, etrt_onnx_attribute *a) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  a->name = etrt_onnx_no_str;
  a->ref_attr_name = etrt_onnx_no_str;
  a->s = etrt_onnx_no_str;
  a->offset = field->offset;
  size_t n_floats = 0, n_ints = 0, n_strings = 0, n_tensors = 0, n_graphs = 0;
  unsigned has = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1: ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &a->name)); break;
      case 21: ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &a->ref_attr_name)); break;
      case 20:
        etrt_onnx_path_push(p, ".type");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int32(p, &f, &a->type));
        break;
      case 2:
        etrt_onnx_path_push(p, ".f");
        ETRT_ONNX_TRY(p, etrt_pb_field_float(&f, &a->f));
        has |= ETRT_ONNX_HAS_F;
        break;
      case 3:
        etrt_onnx_path_push(p, ".i");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int64(p, &f, &a->i));
        has |= ETRT_ONNX_HAS_I;
        break;
      case 4:
        etrt_onnx_path_push(p, ".s");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &a->s));
        has |= ETRT_ONNX_HAS_S;
        break;
      case 5:
        etrt_onnx_path_push(p, ".t");
        ETRT_RETURN_IF_ERROR(etrt_onnx_refuse_twice(p, &f, (has & ETRT_ONNX_HAS_T) ? "" : NULL, "t"));
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        has |= ETRT_ONNX_HAS_T;
        break;
      case 6:
        etrt_onnx_path_push(p, ".g");
        ETRT_RETURN_IF_ERROR(etrt_onnx_refuse_twice(p, &f, (has & ETRT_ONNX_HAS_G) ? "" : NULL, "g"));
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        has |= ETRT_ONNX_HAS_G;
        break;
      case 7:
        etrt_onnx_path_push(p, ".floats");
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_scalars(p, &f, ETRT_PB_SCALAR_FIXED32, &n_floats));
        has |= ETRT_ONNX_HAS_FLOATS;
        break;
      case 8:
        etrt_onnx_path_push(p, ".ints");
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_scalars(p, &f, ETRT_PB_SCALAR_VARINT, &n_ints));
        has |= ETRT_ONNX_HAS_INTS;
        break;
      case 9:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "strings", &n_strings));
        has |= ETRT_ONNX_HAS_STRINGS;
        break;
      case 10:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "tensors", &n_tensors));
        has |= ETRT_ONNX_HAS_TENSORS;
        break;
      case 11:
        ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "graphs", &n_graphs));
        has |= ETRT_ONNX_HAS_GRAPHS;
        break;
      case 22:
      case 23: has |= ETRT_ONNX_HAS_SPARSE; break;
      case 14:
      case 15: has |= ETRT_ONNX_HAS_TP; break;
      default: break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  if (a->type == ETRT_ONNX_ATTR_UNDEFINED) a->type = etrt_onnx_infer_attr_type(has);

  float *floats;
  int64_t *ints;
  etrt_onnx_str *strings;
  etrt_onnx_tensor *tensors, *t = NULL;
  etrt_onnx_graph *graphs, *g = NULL;
  ETRT_ONNX_ALLOC(p, floats, n_floats);
  ETRT_ONNX_ALLOC(p, ints, n_ints);
  ETRT_ONNX_ALLOC(p, strings, n_strings);
  ETRT_ONNX_ALLOC(p, tensors, n_tensors);
  ETRT_ONNX_ALLOC(p, graphs, n_graphs);
  ETRT_ONNX_ALLOC(p, t, (has & ETRT_ONNX_HAS_T) ? 1 : 0);
  ETRT_ONNX_ALLOC(p, g, (has & ETRT_ONNX_HAS_G) ? 1 : 0);
  size_t nf = 0, ni = 0, ns = 0, nt = 0, ng = 0;
  if (has & (ETRT_ONNX_HAS_T | ETRT_ONNX_HAS_G | ETRT_ONNX_HAS_FLOATS | ETRT_ONNX_HAS_INTS |
             ETRT_ONNX_HAS_STRINGS | ETRT_ONNX_HAS_TENSORS | ETRT_ONNX_HAS_GRAPHS)) {
    ETRT_ONNX_FOR_FIELDS(p, &c, f, {
      size_t mark = p->path_len;
      switch (f.number) {
        case 5:
          etrt_onnx_path_push(p, ".t");
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_tensor(p, &c, &f, t));
          break;
        case 6:
          etrt_onnx_path_push(p, ".g");
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_graph(p, &c, &f, g));
          break;
        case 7:
          etrt_onnx_path_push(p, ".floats");
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_FLOAT, floats, n_floats, &nf));
          break;
        case 8:
          etrt_onnx_path_push(p, ".ints");
          ETRT_RETURN_IF_ERROR(etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT64, ints, n_ints, &ni));
          break;
        case 9: ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &strings[ns++])); break;
        case 10:
          etrt_onnx_path_push(p, ".tensors[%zu]", nt);
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_tensor(p, &c, &f, &tensors[nt++]));
          break;
        case 11:
          etrt_onnx_path_push(p, ".graphs[%zu]", ng);
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_graph(p, &c, &f, &graphs[ng++]));
          break;
        default: break;
      }
      etrt_onnx_path_pop(p, mark);
    });
  }
  a->t = t;
  a->g = g;
  a->floats = floats;
  a->float_count = n_floats;
  a->ints = ints;
  a->int_count = n_ints;
  a->strings = strings;
  a->string_count = n_strings;
  a->tensors = tensors;
  a->tensor_count = n_tensors;
  a->graphs = graphs;
  a->graph_count = n_graphs;
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_node(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                        const etrt_pb_field *field, etrt_onnx_node *node) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  node->name = node->op_type = node->domain = etrt_onnx_no_str;
  node->offset = field->offset;
  size_t n_in = 0, n_out = 0, n_attr = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "input", &n_in)); break;
      case 2: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "output", &n_out)); break;
      case 5: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "attribute", &n_attr)); break;
      case 3:
        etrt_onnx_path_push(p, ".name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &node->name));
        break;
      case 4:
        etrt_onnx_path_push(p, ".op_type");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &node->op_type));
        break;
      case 7:
        etrt_onnx_path_push(p, ".domain");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &node->domain));
        break;
      default: break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  etrt_onnx_str *inputs, *outputs;
  etrt_onnx_attribute *attributes;
  ETRT_ONNX_ALLOC(p, inputs, n_in);
  ETRT_ONNX_ALLOC(p, outputs, n_out);
  ETRT_ONNX_ALLOC(p, attributes, n_attr);
  size_t ii = 0, oo = 0, aa = 0;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    if (f.number == 1) {
      ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &inputs[ii++]));
    } else if (f.number == 2) {
      ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &outputs[oo++]));
    } else if (f.number == 5) {
      size_t mark = etrt_onnx_path_push(p, ".attribute[%zu]", aa);
      ETRT_RETURN_IF_ERROR(etrt_onnx_parse_attribute(p, &c, &f, &attributes[aa++]));
      etrt_onnx_path_pop(p, mark);
    }
  });
  node->inputs = inputs;
  node->input_count = n_in;
  node->outputs = outputs;
  node->output_count = n_out;
  node->attributes = attributes;
  node->attribute_count = n_attr;
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_graph(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                         const etrt_pb_field *field, etrt_onnx_graph *g) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  g->name = etrt_onnx_no_str;
  g->bytes = field->data;
  g->size = field->size;
  g->offset = field->offset;
  size_t n_node = 0, n_init = 0, n_in = 0, n_out = 0, n_vi = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "node", &n_node)); break;
      case 5: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "initializer", &n_init)); break;
      case 11: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "input", &n_in)); break;
      case 12: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "output", &n_out)); break;
      case 13: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "value_info", &n_vi)); break;
      case 2:
        etrt_onnx_path_push(p, ".name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &g->name));
        break;
      case 15:
        etrt_onnx_path_push(p, ".sparse_initializer");
        return etrt_onnx_fail(p, ETRT_ERROR_UNSUPPORTED, f.offset,
                              "sparse initializers are not supported");
      default: break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  etrt_onnx_node *nodes;
  etrt_onnx_tensor *inits;
  etrt_onnx_value_info *inputs, *outputs, *vis;
  ETRT_ONNX_ALLOC(p, nodes, n_node);
  ETRT_ONNX_ALLOC(p, inits, n_init);
  ETRT_ONNX_ALLOC(p, inputs, n_in);
  ETRT_ONNX_ALLOC(p, outputs, n_out);
  ETRT_ONNX_ALLOC(p, vis, n_vi);
  size_t in = 0, ii = 0, ni = 0, no = 0, nv = 0;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        etrt_onnx_path_push(p, ".node[%zu]", in);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_node(p, &c, &f, &nodes[in++]));
        break;
      case 5:
        etrt_onnx_path_push(p, ".initializer[%zu]", ii);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_tensor(p, &c, &f, &inits[ii++]));
        break;
      case 11:
        etrt_onnx_path_push(p, ".input[%zu]", ni);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_value_info(p, &c, &f, &inputs[ni++]));
        break;
      case 12:
        etrt_onnx_path_push(p, ".output[%zu]", no);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_value_info(p, &c, &f, &outputs[no++]));
        break;
      case 13:
        etrt_onnx_path_push(p, ".value_info[%zu]", nv);
        ETRT_RETURN_IF_ERROR(etrt_onnx_parse_value_info(p, &c, &f, &vis[nv++]));
        break;
      default: break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  g->nodes = nodes;
  g->node_count = n_node;
  g->initializers = inits;
  g->initializer_count = n_init;
  g->inputs = inputs;
  g->input_count = n_in;
  g->outputs = outputs;
  g->output_count = n_out;
  g->value_infos = vis;
  g->value_info_count = n_vi;
  return ETRT_OK;
}

static etrt_status etrt_onnx_parse_model_cursor(etrt_onnx_parser *p, etrt_pb_cursor *c) {
  etrt_onnx_model *m = p->model;
  m->producer_name = m->producer_version = etrt_onnx_no_str;
  size_t n_opset = 0, n_func = 0;
  int has_graph = 0;
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, c, f, {
    size_t mark = p->path_len;
    switch (f.number) {
      case 1:
        etrt_onnx_path_push(p, ".ir_version");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_int64(p, &f, &m->ir_version));
        break;
      case 2:
        etrt_onnx_path_push(p, ".producer_name");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &m->producer_name));
        break;
      case 3:
        etrt_onnx_path_push(p, ".producer_version");
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &m->producer_version));
        break;
      case 7:
        etrt_onnx_path_push(p, ".graph");
        ETRT_RETURN_IF_ERROR(etrt_onnx_refuse_twice(p, &f, has_graph ? "" : NULL, "graph"));
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        has_graph = 1;
        break;
      case 8: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "opset_import", &n_opset)); break;
      case 25: ETRT_RETURN_IF_ERROR(etrt_onnx_count_len(p, &f, "functions", &n_func)); break;
      default: break;
    }
    etrt_onnx_path_pop(p, mark);
  });
  if (!has_graph) {
    return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, c->end, "the model has no graph");
  }
  etrt_onnx_opset *opsets;
  etrt_onnx_str *domains, *names;
  etrt_onnx_graph *graph;
  ETRT_ONNX_ALLOC(p, opsets, n_opset);
  ETRT_ONNX_ALLOC(p, domains, n_func);
  ETRT_ONNX_ALLOC(p, names, n_func);
  ETRT_ONNX_ALLOC(p, graph, 1);
  size_t no = 0, nf = 0;
  ETRT_ONNX_FOR_FIELDS(p, c, f, {
    size_t mark = p->path_len;
    if (f.number == 7) {
      etrt_onnx_path_push(p, ".graph");
      ETRT_RETURN_IF_ERROR(etrt_onnx_parse_graph(p, c, &f, graph));
    } else if (f.number == 8) {
      etrt_onnx_path_push(p, ".opset_import[%zu]", no);
      etrt_onnx_opset *o = &opsets[no++];
      o->domain = etrt_onnx_no_str;
      etrt_pb_cursor oc;
      ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(c, &f, &oc));
      etrt_pb_field g;
      ETRT_ONNX_FOR_FIELDS(p, &oc, g, {
        if (g.number == 1) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &o->domain));
        if (g.number == 2) ETRT_RETURN_IF_ERROR(etrt_onnx_read_int64(p, &g, &o->version));
      });
    } else if (f.number == 25) {
      etrt_onnx_path_push(p, ".functions[%zu]", nf);
      domains[nf] = names[nf] = etrt_onnx_no_str;
      etrt_pb_cursor fc;
      ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(c, &f, &fc));
      etrt_pb_field g;
      ETRT_ONNX_FOR_FIELDS(p, &fc, g, {
        if (g.number == 1) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &names[nf]));
        if (g.number == 10) ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &g, &domains[nf]));
      });
      ++nf;
    }
    etrt_onnx_path_pop(p, mark);
  });
  m->opsets = opsets;
  m->opset_count = n_opset;
  m->function_domains = domains;
  m->function_names = names;
  m->function_count = n_func;
  m->graph = graph;
  return ETRT_OK;
}

/* --- public entry points --------------------------------------------------------------- */

static etrt_status etrt_onnx_model_new(etrt_onnx_model **out) {
  *out = calloc(1, sizeof **out);
  if (*out != NULL) (*out)->arena = etrt_arena_create();
  if (*out == NULL || (*out)->arena == NULL) {
    free(*out);
    *out = NULL;
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for an ONNX model");
  }
  return ETRT_OK;
}

static void etrt_onnx_parser_init(etrt_onnx_parser *p, etrt_onnx_model *m, const char *base_dir,
                                  const char *root) {
  p->model = m;
  p->base_dir = base_dir;
  p->path_len = 0;
  p->path[0] = '\0';
  etrt_onnx_path_push(p, "%s", root);
}

etrt_status etrt_onnx_model_parse(const uint8_t *data, size_t size, const char *base_dir,
                                  etrt_onnx_model **out) {
  *out = NULL;
  if (data == NULL && size != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "ONNX model: NULL data");
  }
  static const uint8_t nothing[1] = {0};
  etrt_onnx_model *m;
  ETRT_RETURN_IF_ERROR(etrt_onnx_model_new(&m));
  etrt_onnx_parser p;
  etrt_onnx_parser_init(&p, m, base_dir, "ModelProto");
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data ? data : nothing, size);
  etrt_status s = etrt_onnx_parse_model_cursor(&p, &c);
  if (s != ETRT_OK) {
    etrt_onnx_model_free(m);
    return s;
  }
  *out = m;
  return ETRT_OK;
}

etrt_status etrt_onnx_model_load_file(const char *path, etrt_onnx_model **out) {
  *out = NULL;
  etrt_file_map map;
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &map));
  /* External data lives next to the model: its folder is the path up to the last '/'. */
  const char *slash = strrchr(path, '/');
  char *dir = NULL;
  if (slash == NULL) {
    dir = strdup(".");
  } else {
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    dir = strndup(path, n);
  }
  if (dir == NULL) {
    etrt_file_map_close(&map);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
  }
  etrt_status s = etrt_onnx_model_parse(map.data, map.size, dir, out);
  free(dir);
  if (s != ETRT_OK) {
    etrt_file_map_close(&map);
    return etrt_error_context(s, "'%s': ", path);
  }
  (*out)->file = map;
  return ETRT_OK;
}

void etrt_onnx_model_free(etrt_onnx_model *model) {
  if (model == NULL) return;
  etrt_arena_destroy(model->arena);
  for (size_t i = 0; i < model->external_count; ++i) {
    etrt_file_map_close(&model->externals[i].map);
    free(model->externals[i].location);
  }
  free(model->externals);
  etrt_file_map_close(&model->file);
  free(model);
}

etrt_status etrt_onnx_tensor_parse(const uint8_t *data, size_t size, const char *what,
                                   etrt_onnx_model **holder, const etrt_onnx_tensor **tensor) {
  *holder = NULL;
  *tensor = NULL;
  if (data == NULL && size != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "TensorProto: NULL data");
  }
  static const uint8_t nothing[1] = {0};
  etrt_onnx_model *m;
  ETRT_RETURN_IF_ERROR(etrt_onnx_model_new(&m));
  etrt_onnx_parser p;
  etrt_onnx_parser_init(&p, m, NULL, "TensorProto");
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data ? data : nothing, size);
  etrt_onnx_tensor *t;
  etrt_status s = ETRT_OK;
  t = etrt_onnx_alloc(&p, 1, sizeof *t, &s);
  if (s == ETRT_OK) s = etrt_onnx_parse_tensor_cursor(&p, &c, 0, t);
  if (s != ETRT_OK) {
    etrt_onnx_model_free(m);
    return what != NULL ? etrt_error_context(s, "'%s': ", what) : s;
  }
  *holder = m;
  *tensor = t;
  return ETRT_OK;
}

const etrt_onnx_graph *etrt_onnx_model_graph(const etrt_onnx_model *model) { return model->graph; }
int64_t etrt_onnx_model_ir_version(const etrt_onnx_model *model) { return model->ir_version; }
etrt_onnx_str etrt_onnx_model_producer_name(const etrt_onnx_model *model) {
  return model->producer_name;
}
etrt_onnx_str etrt_onnx_model_producer_version(const etrt_onnx_model *model) {
  return model->producer_version;
}
size_t etrt_onnx_model_opset_count(const etrt_onnx_model *model) { return model->opset_count; }
const etrt_onnx_opset *etrt_onnx_model_opsets(const etrt_onnx_model *model) { return model->opsets; }

static int etrt_onnx_is_default_domain(etrt_onnx_str domain) {
  return domain.size == 0 || etrt_onnx_str_eq(domain, "ai.onnx");
}

int64_t etrt_onnx_model_opset(const etrt_onnx_model *model, const char *domain) {
  etrt_onnx_str want = {domain, strlen(domain)};
  int want_default = etrt_onnx_is_default_domain(want);
  for (size_t i = 0; i < model->opset_count; ++i) {
    etrt_onnx_str d = model->opsets[i].domain;
    if (want_default ? etrt_onnx_is_default_domain(d) : etrt_onnx_str_eq(d, domain)) {
      return model->opsets[i].version;
    }
  }
  return -1;
}

size_t etrt_onnx_model_function_count(const etrt_onnx_model *model) {
  return model->function_count;
}

void etrt_onnx_model_function(const etrt_onnx_model *model, size_t index, etrt_onnx_str *domain,
                              etrt_onnx_str *name) {
  *domain = index < model->function_count ? model->function_domains[index] : etrt_onnx_no_str;
  *name = index < model->function_count ? model->function_names[index] : etrt_onnx_no_str;
}

/* --- attributes ---------------------------------------------------------------------- */

static const char *const etrt_onnx_attr_type_names[] = {
    "UNDEFINED", "FLOAT",   "INT",    "STRING",        "TENSOR",         "GRAPH",
    "FLOATS",    "INTS",    "STRINGS", "TENSORS",      "GRAPHS",         "SPARSE_TENSOR",
    "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};

const char *etrt_onnx_attr_type_name(int32_t type) {
  if (type >= 0 &&
      (size_t)type < sizeof etrt_onnx_attr_type_names / sizeof etrt_onnx_attr_type_names[0]) {
    return etrt_onnx_attr_type_names[type];
  }
  static _Thread_local char unknown[32];
  snprintf(unknown, sizeof unknown, "type %d", (int)type);
  return unknown;
}

const etrt_onnx_attribute *etrt_onnx_node_attr(const etrt_onnx_node *node, const char *name) {
  /* The last occurrence wins, as for a repeated map key. */
  for (size_t i = node->attribute_count; i-- > 0;) {
    if (etrt_onnx_str_eq(node->attributes[i].name, name)) return &node->attributes[i];
  }
  return NULL;
}

/* The attribute when present with the type wanted; NULL (and ETRT_OK) when absent. */
static etrt_status etrt_onnx_attr_typed(const etrt_onnx_node *node, const char *name, int32_t type,
                                        const etrt_onnx_attribute **out) {
  *out = etrt_onnx_node_attr(node, name);
  if (*out == NULL || (*out)->type == type) return ETRT_OK;
  return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                    "node '%.*s' (%.*s): attribute '%s' is %s, expected %s at byte %zu",
                    ETRT_ONNX_STR_ARGS(node->name), ETRT_ONNX_STR_ARGS(node->op_type), name,
                    etrt_onnx_attr_type_name((*out)->type), etrt_onnx_attr_type_name(type),
                    (*out)->offset);
}

static etrt_status etrt_onnx_attr_missing(const etrt_onnx_node *node, const char *name) {
  return etrt_error(ETRT_ERROR_NOT_FOUND, "node '%.*s' (%.*s): attribute '%s' is missing",
                    ETRT_ONNX_STR_ARGS(node->name), ETRT_ONNX_STR_ARGS(node->op_type), name);
}

etrt_status etrt_onnx_node_attr_int(const etrt_onnx_node *node, const char *name,
                                    int64_t fallback, int64_t *out) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_INT, &a));
  *out = a ? a->i : fallback;
  return ETRT_OK;
}

etrt_status etrt_onnx_node_attr_float(const etrt_onnx_node *node, const char *name,
                                      float fallback, float *out) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_FLOAT, &a));
  *out = a ? a->f : fallback;
  return ETRT_OK;
}

etrt_status etrt_onnx_node_attr_string(const etrt_onnx_node *node, const char *name,
                                       const char *fallback, etrt_onnx_str *out) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_STRING, &a));
  if (a != NULL) {
    *out = a->s;
  } else {
    out->data = fallback ? fallback : etrt_onnx_empty;
    out->size = fallback ? strlen(fallback) : 0;
  }
  return ETRT_OK;
}

etrt_status etrt_onnx_node_attr_ints(const etrt_onnx_node *node, const char *name,
                                     const int64_t **values, size_t *count) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_INTS, &a));
  if (a == NULL) return etrt_onnx_attr_missing(node, name);
  *values = a->ints;
  *count = a->int_count;
  return ETRT_OK;
}

etrt_status etrt_onnx_node_attr_floats(const etrt_onnx_node *node, const char *name,
                                       const float **values, size_t *count) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_FLOATS, &a));
  if (a == NULL) return etrt_onnx_attr_missing(node, name);
  *values = a->floats;
  *count = a->float_count;
  return ETRT_OK;
}

etrt_status etrt_onnx_node_attr_tensor(const etrt_onnx_node *node, const char *name,
                                       const etrt_onnx_tensor **out) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_TENSOR, &a));
  if (a == NULL) return etrt_onnx_attr_missing(node, name);
  if (a->t == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "node '%.*s' (%.*s): attribute '%s' is TENSOR but holds no tensor at byte %zu",
                      ETRT_ONNX_STR_ARGS(node->name), ETRT_ONNX_STR_ARGS(node->op_type), name,
                      a->offset);
  }
  *out = a->t;
  return ETRT_OK;
}
