#include "builder/onnx_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"

const char etrt_onnx_empty[1] = "";
const etrt_onnx_str etrt_onnx_no_str = {etrt_onnx_empty, 0};

size_t etrt_onnx_path_push(etrt_onnx_parser *p, const char *fmt, ...) {
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

void etrt_onnx_path_pop(etrt_onnx_parser *p, size_t mark) {
  p->path_len = mark;
  p->path[mark] = '\0';
}

/* A lower layer's message, with the field path in front. */
etrt_status etrt_onnx_wrap(etrt_onnx_parser *p, etrt_status status) {
  if (status == ETRT_OK) return ETRT_OK;
  return etrt_error_context(status, "%s: ", p->path);
}

etrt_status etrt_onnx_fail(etrt_onnx_parser *p, etrt_status status, size_t offset, const char *fmt,
                           ...) {
  char what[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  return etrt_error(status, "%s: %s at byte %zu", p->path, what, offset);
}

void *etrt_onnx_alloc(etrt_onnx_parser *p, size_t count, size_t element, etrt_status *status) {
  *status = ETRT_OK;
  if (count == 0) return NULL;
  size_t size;
  if (etrt_mul_overflow_size(count, element, &size) || size > SIZE_MAX - 64) {
    *status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s: %zu entries overflow", p->path, count);
    return NULL;
  }
  void *memory = etrt_arena_alloc(p->model->arena, size, 16);
  if (memory == NULL)
    *status =
        etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s: out of memory for %zu entries", p->path, count);
  return memory;
}

/* --- field readers ------------------------------------------------------------------- */

etrt_status etrt_onnx_read_str(etrt_onnx_parser *p, const etrt_pb_field *f, etrt_onnx_str *out) {
  ETRT_ONNX_TRY(p, etrt_pb_field_expect(f, ETRT_PB_WIRE_LEN));
  out->data = f->size ? (const char *)f->data : etrt_onnx_empty;
  out->size = f->size;
  return ETRT_OK;
}

etrt_status etrt_onnx_read_int64(etrt_onnx_parser *p, const etrt_pb_field *f, int64_t *out) {
  return etrt_onnx_wrap(p, etrt_pb_field_int64(f, out));
}

etrt_status etrt_onnx_read_int32(etrt_onnx_parser *p, const etrt_pb_field *f, int32_t *out) {
  return etrt_onnx_wrap(p, etrt_pb_field_int32(f, out));
}

/* Counts the values of one occurrence of a repeated scalar field (pass 1). */
etrt_status etrt_onnx_count_scalars(etrt_onnx_parser *p, const etrt_pb_field *f,
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

etrt_status etrt_onnx_fill_scalars(etrt_onnx_parser *p, const etrt_pb_field *f,
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
      case ETRT_ONNX_AS_INT64:
        ((int64_t *)out)[i] = (int64_t)bits;
        break;
      case ETRT_ONNX_AS_UINT64:
        ((uint64_t *)out)[i] = bits;
        break;
      case ETRT_ONNX_AS_DOUBLE:
        memcpy((double *)out + i, &bits, 8);
        break;
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

/* Pass 1 of a repeated message or string field: check the wire type and count. */
etrt_status etrt_onnx_count_len(etrt_onnx_parser *p, const etrt_pb_field *f, const char *name,
                                size_t *count) {
  if (f->wire != ETRT_PB_WIRE_LEN) {
    size_t mark = etrt_onnx_path_push(p, ".%s", name);
    etrt_status s = etrt_onnx_wrap(p, etrt_pb_field_expect(f, ETRT_PB_WIRE_LEN));
    etrt_onnx_path_pop(p, mark);
    return s;
  }
  ++*count;
  return ETRT_OK;
}

etrt_status etrt_onnx_refuse_twice(etrt_onnx_parser *p, const etrt_pb_field *f, const void *already,
                                   const char *name) {
  if (already == NULL) return ETRT_OK;
  return etrt_onnx_fail(p, ETRT_ERROR_INVALID_FORMAT, f->offset, "%s given twice", name);
}
