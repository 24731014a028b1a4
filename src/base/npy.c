#include "base/npy.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/file.h"
#include "base/status.h"

#define ETRT_NPY_MAGIC "\x93NUMPY"
#define ETRT_NPY_MAGIC_SIZE 6
/* numpy itself refuses headers past 10 KB unless told otherwise; a bit more room. */
#define ETRT_NPY_MAX_HEADER (64u * 1024u)

static const struct {
  const char *descr;
  etrt_dtype dtype;
} etrt_npy_dtypes[] = {
    {"<f2", ETRT_DTYPE_FLOAT16},
    {"<f4", ETRT_DTYPE_FLOAT32},
    {"<f8", ETRT_DTYPE_FLOAT64},
    {"|b1", ETRT_DTYPE_BOOL},
    {"|u1", ETRT_DTYPE_UINT8},
    {"|i1", ETRT_DTYPE_INT8},
    {"<i2", ETRT_DTYPE_INT16},
    {"<i4", ETRT_DTYPE_INT32},
    {"<i8", ETRT_DTYPE_INT64},
    {"<u2", ETRT_DTYPE_UINT16},
    {"<u4", ETRT_DTYPE_UINT32},
    {"<u8", ETRT_DTYPE_UINT64},
    /* NumPy has no bfloat16: ml_dtypes' bfloat16 saves as the 2-byte void '<V2', which
     * numpy.load returns as '|V2' and saves again as that. Both read as bfloat16; the
     * first is what is written. */
    {"<V2", ETRT_DTYPE_BFLOAT16},
    {"|V2", ETRT_DTYPE_BFLOAT16},
};
#define ETRT_NPY_DTYPE_COUNT (sizeof etrt_npy_dtypes / sizeof etrt_npy_dtypes[0])

static etrt_status etrt_npy_fail(size_t offset, const char *field, const char *fmt, ...)
    ETRT_PRINTF(3, 4);

static etrt_status etrt_npy_fail(size_t offset, const char *field, const char *fmt, ...) {
  char detail[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(detail, sizeof detail, fmt, args);
  va_end(args);
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "npy: %s at byte offset %zu: %s", field, offset,
                    detail);
}

/* A cursor over the header text; `base` is the header's offset in the file, for
 * messages. */
typedef struct etrt_npy_text {
  const char *p;
  size_t n, i, base;
} etrt_npy_text;

static void etrt_npy_space(etrt_npy_text *t) {
  while (t->i < t->n && (t->p[t->i] == ' ' || t->p[t->i] == '\t')) ++t->i;
}

static size_t etrt_npy_at(const etrt_npy_text *t) { return t->base + t->i; }

static etrt_status etrt_npy_expect(etrt_npy_text *t, char c, const char *field) {
  etrt_npy_space(t);
  if (t->i >= t->n || t->p[t->i] != c)
    return etrt_npy_fail(etrt_npy_at(t), field, "expected '%c'", c);
  ++t->i;
  return ETRT_OK;
}

/* A Python string literal in single or double quotes, without escapes. */
static etrt_status etrt_npy_string(etrt_npy_text *t, const char *field, char *out, size_t cap) {
  etrt_npy_space(t);
  size_t start = etrt_npy_at(t);
  if (t->i >= t->n || (t->p[t->i] != '\'' && t->p[t->i] != '"'))
    return etrt_npy_fail(start, field, "expected a quoted string");
  char quote = t->p[t->i++];
  size_t len = 0;
  while (t->i < t->n && t->p[t->i] != quote) {
    char c = t->p[t->i];
    if (c == '\\' || (unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
      return etrt_npy_fail(etrt_npy_at(t), field, "unexpected character 0x%02x in a string",
                           (unsigned char)c);
    if (len + 1 >= cap) return etrt_npy_fail(start, field, "string longer than %zu bytes", cap - 1);
    out[len++] = c;
    ++t->i;
  }
  if (t->i >= t->n) return etrt_npy_fail(start, field, "unterminated string");
  ++t->i;
  out[len] = '\0';
  return ETRT_OK;
}

static int etrt_npy_word(etrt_npy_text *t, const char *word) {
  size_t n = strlen(word);
  if (t->n - t->i < n || memcmp(t->p + t->i, word, n) != 0) return 0;
  t->i += n;
  return 1;
}

static etrt_status etrt_npy_descr(etrt_npy_text *t, etrt_dtype *dtype) {
  size_t at = (etrt_npy_space(t), etrt_npy_at(t));
  char descr[32];
  ETRT_RETURN_IF_ERROR(etrt_npy_string(t, "descr", descr, sizeof descr));
  for (size_t k = 0; k < ETRT_NPY_DTYPE_COUNT; ++k) {
    if (strcmp(descr, etrt_npy_dtypes[k].descr) == 0) {
      *dtype = etrt_npy_dtypes[k].dtype;
      return ETRT_OK;
    }
  }
  if (descr[0] == '>')
    return etrt_npy_fail(at, "descr", "big-endian dtype '%s' is not supported", descr);
  return etrt_npy_fail(at, "descr", "dtype '%s' is not supported", descr);
}

static etrt_status etrt_npy_fortran(etrt_npy_text *t) {
  etrt_npy_space(t);
  size_t at = etrt_npy_at(t);
  if (etrt_npy_word(t, "False")) return ETRT_OK;
  if (etrt_npy_word(t, "True"))
    return etrt_npy_fail(at, "fortran_order",
                         "Fortran-order (column-major) data is not supported; save a C-order "
                         "array (numpy.ascontiguousarray)");
  return etrt_npy_fail(at, "fortran_order", "expected True or False");
}

/* (), (n,), (a, b), (a, b,): non-negative decimal integers without leading zeros. */
static etrt_status etrt_npy_shape(etrt_npy_text *t, int32_t *rank, int64_t *sizes) {
  ETRT_RETURN_IF_ERROR(etrt_npy_expect(t, '(', "shape"));
  int32_t r = 0;
  int trailing_comma = 0;
  for (;;) {
    etrt_npy_space(t);
    size_t at = etrt_npy_at(t);
    if (t->i < t->n && t->p[t->i] == ')') {
      ++t->i;
      break;
    }
    if (r > 0 && !trailing_comma) return etrt_npy_fail(at, "shape", "expected ',' or ')'");
    if (t->i >= t->n || t->p[t->i] < '0' || t->p[t->i] > '9')
      return etrt_npy_fail(at, "shape", "expected a non-negative integer");
    if (r == ETRT_MAX_RANK)
      return etrt_npy_fail(at, "shape", "more than %d dimensions", ETRT_MAX_RANK);
    int64_t v = 0;
    size_t digits = 0;
    while (t->i < t->n && t->p[t->i] >= '0' && t->p[t->i] <= '9') {
      if (digits == 1 && v == 0) return etrt_npy_fail(at, "shape", "integer with a leading zero");
      if (v > (INT64_MAX - 9) / 10) return etrt_npy_fail(at, "shape", "integer too large");
      v = v * 10 + (t->p[t->i] - '0');
      ++digits;
      ++t->i;
    }
    sizes[r++] = v;
    etrt_npy_space(t);
    trailing_comma = t->i < t->n && t->p[t->i] == ',';
    if (trailing_comma)
      ++t->i;
    else if (r == 1 && t->i < t->n && t->p[t->i] == ')')
      return etrt_npy_fail(etrt_npy_at(t), "shape", "a one-element tuple needs a trailing comma");
  }
  *rank = r;
  return ETRT_OK;
}

static etrt_status etrt_npy_header(etrt_npy_text *t, etrt_npy *out) {
  ETRT_RETURN_IF_ERROR(etrt_npy_expect(t, '{', "header"));
  int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
  for (;;) {
    etrt_npy_space(t);
    if (t->i < t->n && t->p[t->i] == '}') {
      ++t->i;
      break;
    }
    size_t at = etrt_npy_at(t);
    char key[32];
    ETRT_RETURN_IF_ERROR(etrt_npy_string(t, "header key", key, sizeof key));
    ETRT_RETURN_IF_ERROR(etrt_npy_expect(t, ':', key));
    int *seen;
    if (strcmp(key, "descr") == 0) {
      seen = &seen_descr;
      if (!*seen) ETRT_RETURN_IF_ERROR(etrt_npy_descr(t, &out->view.dtype));
    } else if (strcmp(key, "fortran_order") == 0) {
      seen = &seen_fortran;
      if (!*seen) ETRT_RETURN_IF_ERROR(etrt_npy_fortran(t));
    } else if (strcmp(key, "shape") == 0) {
      seen = &seen_shape;
      if (!*seen) ETRT_RETURN_IF_ERROR(etrt_npy_shape(t, &out->view.rank, out->view.sizes));
    } else {
      return etrt_npy_fail(at, "header key", "unknown key '%s'", key);
    }
    if (*seen) return etrt_npy_fail(at, "header key", "key '%s' appears twice", key);
    *seen = 1;
    etrt_npy_space(t);
    if (t->i < t->n && t->p[t->i] == ',') {
      ++t->i;
    } else if (t->i >= t->n || t->p[t->i] != '}') {
      return etrt_npy_fail(etrt_npy_at(t), "header", "expected ',' or '}'");
    }
  }
  if (!seen_descr || !seen_fortran || !seen_shape)
    return etrt_npy_fail(t->base, "header", "missing key '%s'",
                         !seen_descr     ? "descr"
                         : !seen_fortran ? "fortran_order"
                                         : "shape");
  /* numpy pads with spaces and ends the header with a newline. */
  etrt_npy_space(t);
  if (t->i + 1 != t->n || t->p[t->i] != '\n')
    return etrt_npy_fail(etrt_npy_at(t), "header", "expected only padding and a newline after '}'");
  return ETRT_OK;
}

etrt_status etrt_npy_parse(const void *data, size_t size, etrt_npy *out) {
  memset(out, 0, sizeof *out);
  const uint8_t *b = data;
  if (b == NULL && size > 0) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "npy: NULL data");
  if (size < 10) return etrt_npy_fail(0, "header", "truncated: %zu bytes", size);
  if (memcmp(b, ETRT_NPY_MAGIC, ETRT_NPY_MAGIC_SIZE) != 0)
    return etrt_npy_fail(0, "magic", "not a .npy file");
  uint8_t major = b[6], minor = b[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return etrt_npy_fail(6, "version", "format %u.%u is not supported (1.0, 2.0, 3.0 are)", major,
                         minor);
  size_t header_at, header_len;
  if (major == 1) {
    header_at = 10;
    header_len = (size_t)b[8] | (size_t)b[9] << 8;
  } else {
    if (size < 12) return etrt_npy_fail(8, "header length", "truncated: %zu bytes", size);
    header_at = 12;
    header_len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
  }
  if (header_len > ETRT_NPY_MAX_HEADER)
    return etrt_npy_fail(8, "header length", "%zu bytes, at most %u", header_len,
                         ETRT_NPY_MAX_HEADER);
  if (!etrt_range_ok(header_at, header_len, size))
    return etrt_npy_fail(8, "header length", "%zu bytes, but only %zu follow", header_len,
                         size - header_at);
  etrt_npy_text t = {.p = (const char *)b + header_at, .n = header_len, .i = 0, .base = header_at};
  out->view.dtype = ETRT_DTYPE_INVALID;
  ETRT_RETURN_IF_ERROR(etrt_npy_header(&t, out));
  size_t offset = header_at + header_len;
  size_t item = etrt_dtype_size(out->view.dtype);
  int64_t numel = etrt_tensor_view_numel(&out->view);
  size_t nbytes;
  if (numel < 0 || etrt_mul_overflow_size((size_t)numel, item, &nbytes))
    return etrt_npy_fail(header_at, "shape", "the size overflows");
  if (size - offset != nbytes)
    return etrt_npy_fail(offset, "data", "%zu bytes, the shape and dtype need %zu (%s)",
                         size - offset, nbytes,
                         size - offset < nbytes ? "truncated" : "trailing bytes");
  out->nbytes = nbytes;
  out->data_offset = offset;
  const uint8_t *p = b + offset;
  if (nbytes == 0 || (uintptr_t)p % item == 0) {
    out->view.data = (void *)p;
    return ETRT_OK;
  }
  out->owned = malloc(nbytes);
  if (out->owned == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "npy: out of memory for %zu bytes", nbytes);
  memcpy(out->owned, p, nbytes);
  out->view.data = out->owned;
  return ETRT_OK;
}

void etrt_npy_release(etrt_npy *npy) {
  if (npy == NULL) return;
  free(npy->owned);
  memset(npy, 0, sizeof *npy);
}

etrt_status etrt_npy_read_file(const char *path, etrt_tensor_view *view, size_t *nbytes) {
  etrt_file_map map;
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &map));
  etrt_npy npy;
  etrt_status s = etrt_npy_parse(map.data, map.size, &npy);
  if (s == ETRT_OK) {
    void *copy = malloc(npy.nbytes > 0 ? npy.nbytes : 1);
    if (copy == NULL) {
      s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "npy: out of memory for %zu bytes", npy.nbytes);
    } else {
      if (npy.nbytes > 0) memcpy(copy, npy.view.data, npy.nbytes);
      *view = npy.view;
      view->data = copy;
      if (nbytes != NULL) *nbytes = npy.nbytes;
    }
    etrt_npy_release(&npy);
  } else {
    etrt_error_context(s, "%s: ", path);
  }
  etrt_file_map_close(&map);
  return s;
}

etrt_status etrt_npy_encode(const etrt_tensor_view *view, uint8_t **out, size_t *size) {
  const char *descr = NULL;
  for (size_t k = 0; k < ETRT_NPY_DTYPE_COUNT; ++k) {
    if (descr == NULL && etrt_npy_dtypes[k].dtype == view->dtype) descr = etrt_npy_dtypes[k].descr;
  }
  if (descr == NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "npy: dtype %s has no NumPy equivalent",
                      etrt_dtype_name(view->dtype));
  int64_t numel = etrt_tensor_view_numel(view);
  size_t nbytes;
  if (numel < 0 || etrt_mul_overflow_size((size_t)numel, etrt_dtype_size(view->dtype), &nbytes))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "npy: bad shape (rank %d)", (int)view->rank);
  if (nbytes > 0 && view->data == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "npy: NULL data");
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t i = 0; i < view->rank; ++i)
    n += snprintf(dict + n, sizeof dict - (size_t)n, i ? ", %lld" : "%lld",
                  (long long)view->sizes[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", view->rank == 1 ? "," : "");
  /* Pad with spaces so that the data starts on a 64-byte boundary, newline last. */
  size_t header_len = etrt_align_up(10 + (size_t)n + 1, 64) - 10;
  size_t total = 10 + header_len + nbytes;
  uint8_t *buf = malloc(total);
  if (buf == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "npy: out of memory for %zu bytes", total);
  memcpy(buf, ETRT_NPY_MAGIC, ETRT_NPY_MAGIC_SIZE);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (uint8_t)header_len;
  buf[9] = (uint8_t)(header_len >> 8);
  memcpy(buf + 10, dict, (size_t)n);
  memset(buf + 10 + n, ' ', header_len - (size_t)n - 1);
  buf[10 + header_len - 1] = '\n';
  if (nbytes > 0) memcpy(buf + 10 + header_len, view->data, nbytes);
  *out = buf;
  *size = total;
  return ETRT_OK;
}

etrt_status etrt_npy_write_file(const char *path, const etrt_tensor_view *view) {
  uint8_t *buf;
  size_t size;
  ETRT_RETURN_IF_ERROR(etrt_npy_encode(view, &buf, &size));
  etrt_status s = etrt_file_write_atomic(path, buf, size);
  free(buf);
  return s;
}
