/* The plan verifier: reads a plan (plan_format.h) from untrusted bytes into a graph.
 * Every read is bounds-checked first; every refusal names the field and its byte
 * offset. The digest protects against corruption, not against a hostile writer, so
 * every field is checked whatever the digest says. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/digest.h"
#include "base/status.h"
#include "engine/ops/shape_util.h"
#include "engine/plan_format.h"

typedef struct etrt_plan_reader {
  const uint8_t *base;
  size_t size;
  size_t pos;
  etrt_arena *arena;
  char where[192]; /* the record being read: "value 3 'x' ", "node 2 " */
} etrt_plan_reader;

static etrt_status etrt_plan_fail(const etrt_plan_reader *r, size_t offset, const char *field,
                                  const char *fmt, ...) ETRT_PRINTF(4, 5);

static etrt_status etrt_plan_fail(const etrt_plan_reader *r, size_t offset, const char *field,
                                  const char *fmt, ...) {
  char detail[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(detail, sizeof detail, fmt, args);
  va_end(args);
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "plan: %s%s at byte offset %zu: %s", r->where, field,
                    offset, detail);
}

static etrt_status etrt_plan_need(const etrt_plan_reader *r, size_t n, const char *field) {
  if (!etrt_range_ok(r->pos, n, r->size))
    return etrt_plan_fail(r, r->pos, field, "truncated: needs %zu bytes, %zu left", n,
                          r->size - (r->pos < r->size ? r->pos : r->size));
  return ETRT_OK;
}

static etrt_status etrt_plan_u8(etrt_plan_reader *r, const char *field, uint8_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, 1, field));
  *out = r->base[r->pos++];
  return ETRT_OK;
}
static etrt_status etrt_plan_u16(etrt_plan_reader *r, const char *field, uint16_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, 2, field));
  *out = (uint16_t)(r->base[r->pos] | (r->base[r->pos + 1] << 8));
  r->pos += 2;
  return ETRT_OK;
}
static etrt_status etrt_plan_u32(etrt_plan_reader *r, const char *field, uint32_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, 4, field));
  *out = etrt_plan_load_u32(r->base + r->pos);
  r->pos += 4;
  return ETRT_OK;
}
static etrt_status etrt_plan_u64(etrt_plan_reader *r, const char *field, uint64_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, 8, field));
  *out = etrt_plan_load_u64(r->base + r->pos);
  r->pos += 8;
  return ETRT_OK;
}
static etrt_status etrt_plan_i32(etrt_plan_reader *r, const char *field, int32_t *out) {
  uint32_t v;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, field, &v));
  *out = (int32_t)v;
  return ETRT_OK;
}
static etrt_status etrt_plan_i64(etrt_plan_reader *r, const char *field, int64_t *out) {
  uint64_t v;
  ETRT_RETURN_IF_ERROR(etrt_plan_u64(r, field, &v));
  *out = (int64_t)v;
  return ETRT_OK;
}
static etrt_status etrt_plan_f32(etrt_plan_reader *r, const char *field, float *out) {
  uint32_t v;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, field, &v));
  memcpy(out, &v, sizeof *out);
  return ETRT_OK;
}

/* A zero field (reserved words). */
static etrt_status etrt_plan_zero(etrt_plan_reader *r, const char *field, size_t n) {
  size_t at = r->pos;
  uint64_t v = 0;
  if (n == 1) {
    uint8_t b;
    ETRT_RETURN_IF_ERROR(etrt_plan_u8(r, field, &b));
    v = b;
  } else if (n == 2) {
    uint16_t h;
    ETRT_RETURN_IF_ERROR(etrt_plan_u16(r, field, &h));
    v = h;
  } else {
    uint32_t w;
    ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, field, &w));
    v = w;
  }
  if (v != 0)
    return etrt_plan_fail(r, at, field, "reserved, must be 0 (is %llu)", (unsigned long long)v);
  return ETRT_OK;
}

/* A string copied, NUL-terminated, into the arena. */
static etrt_status etrt_plan_string(etrt_plan_reader *r, const char *field, const char **out) {
  size_t at = r->pos;
  uint32_t n;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, field, &n));
  if (n > ETRT_PLAN_MAX_STRING)
    return etrt_plan_fail(r, at, field, "string length %u exceeds %u", n, ETRT_PLAN_MAX_STRING);
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, n, field));
  const char *bytes = (const char *)r->base + r->pos;
  if (memchr(bytes, '\0', n) != NULL)
    return etrt_plan_fail(r, r->pos, field, "string holds a NUL byte");
  char *copy = etrt_arena_strndup(r->arena, bytes, n);
  if (copy == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
  r->pos += n;
  *out = copy;
  return ETRT_OK;
}

static etrt_status etrt_plan_dtype(etrt_plan_reader *r, const char *field, etrt_dtype *out) {
  size_t at = r->pos;
  int32_t v;
  ETRT_RETURN_IF_ERROR(etrt_plan_i32(r, field, &v));
  if (etrt_dtype_size((etrt_dtype)v) == 0)
    return etrt_plan_fail(r, at, field, "unknown dtype %d", (int)v);
  *out = (etrt_dtype)v;
  return ETRT_OK;
}

static etrt_status etrt_plan_rank(etrt_plan_reader *r, const char *field, int32_t *out) {
  size_t at = r->pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_i32(r, field, out));
  if (*out < 0 || *out > ETRT_MAX_RANK)
    return etrt_plan_fail(r, at, field, "rank %d is outside [0, %d]", (int)*out, ETRT_MAX_RANK);
  return ETRT_OK;
}

static etrt_status etrt_plan_dims(etrt_plan_reader *r, const char *field, int32_t rank,
                                  int64_t *dims) {
  for (int32_t i = 0; i < rank; ++i) {
    size_t at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_i64(r, field, &dims[i]));
    if (dims[i] < 0 || dims[i] > ETRT_GRAPH_MAX_DIM)
      return etrt_plan_fail(r, at, field, "axis %d size %lld is outside [0, 2^40]", (int)i,
                            (long long)dims[i]);
  }
  return ETRT_OK;
}

/* dtype, rank, min and max dims, with bound order checked. */
static etrt_status etrt_plan_shape(etrt_plan_reader *r, etrt_dtype *dtype, int32_t *rank,
                                   int64_t *min_dims, int64_t *max_dims) {
  ETRT_RETURN_IF_ERROR(etrt_plan_dtype(r, "dtype", dtype));
  ETRT_RETURN_IF_ERROR(etrt_plan_rank(r, "rank", rank));
  ETRT_RETURN_IF_ERROR(etrt_plan_dims(r, "min dims", *rank, min_dims));
  size_t at = r->pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_dims(r, "max dims", *rank, max_dims));
  for (int32_t i = 0; i < *rank; ++i) {
    if (min_dims[i] > max_dims[i])
      return etrt_plan_fail(r, at + 8 * (size_t)i, "max dims",
                            "axis %d bounds [%lld, %lld] are out of order", (int)i,
                            (long long)min_dims[i], (long long)max_dims[i]);
  }
  /* An axis at the largest size has no bound (dims known only at execute, whose memory is
   * grown): the engine checks, once inference has run, that only such values overflow. */
  int unbounded = 0;
  for (int32_t i = 0; i < *rank; ++i) unbounded |= max_dims[i] == ETRT_GRAPH_MAX_DIM;
  if (!unbounded && etrt_graph_nbytes(*dtype, *rank, max_dims) < 0)
    return etrt_plan_fail(r, at, "max dims", "the size overflows");
  return ETRT_OK;
}

static etrt_status etrt_plan_header(etrt_plan_reader *r, etrt_plan_info *info) {
  r->where[0] = '\0';
  if (r->size < ETRT_PLAN_HEADER_SIZE)
    return etrt_plan_fail(r, 0, "header", "truncated: the plan has %zu bytes, the header needs %u",
                          r->size, ETRT_PLAN_HEADER_SIZE);
  const uint8_t *h = r->base;
  if (memcmp(h, ETRT_PLAN_MAGIC, 8) != 0)
    return etrt_plan_fail(r, 0, "magic", "not an etrt plan (bad magic)");
  uint32_t version = etrt_plan_load_u32(h + 8);
  if (version != ETRT_PLAN_VERSION)
    return etrt_plan_fail(r, 8, "format version", "version %u, this build reads version %u",
                          version, ETRT_PLAN_VERSION);
  uint32_t header_size = etrt_plan_load_u32(h + 12);
  if (header_size != ETRT_PLAN_HEADER_SIZE)
    return etrt_plan_fail(r, 12, "header size", "%u, version 1 has %u", header_size,
                          ETRT_PLAN_HEADER_SIZE);
  uint32_t type = etrt_plan_load_u32(h + 16);
  int32_t index = (int32_t)etrt_plan_load_u32(h + 20);
  if (type != ETRT_DEVICE_CPU && type != ETRT_DEVICE_CUDA)
    return etrt_plan_fail(r, 16, "device type", "unknown device type %u", type);
  if ((type == ETRT_DEVICE_CPU && index != 0) ||
      (type == ETRT_DEVICE_CUDA && (index < 0 || index > ETRT_PLAN_MAX_DEVICE_INDEX)))
    return etrt_plan_fail(r, 20, "device index", "index %d for a %s plan", (int)index,
                          type == ETRT_DEVICE_CPU ? "cpu" : "cuda");
  uint32_t major = etrt_plan_load_u32(h + 24), minor = etrt_plan_load_u32(h + 28);
  if ((type == ETRT_DEVICE_CPU && (major != 0 || minor != 0)) ||
      (type == ETRT_DEVICE_CUDA && (major < 1 || major > 99 || minor > 99)))
    return etrt_plan_fail(r, 24, "compute capability", "%u.%u for a %s plan", major, minor,
                          type == ETRT_DEVICE_CPU ? "cpu" : "cuda");
  uint32_t precision = etrt_plan_load_u32(h + 32);
  if (precision > ETRT_PRECISION_BF16)
    return etrt_plan_fail(r, 32, "precision", "unknown precision %u", precision);
  uint32_t flags = etrt_plan_load_u32(h + 36);
  if ((flags & ~ETRT_PLAN_FLAG_TUNED) != 0)
    return etrt_plan_fail(r, 36, "flags", "unknown flags 0x%x", flags);
  if ((flags & ETRT_PLAN_FLAG_TUNED) != 0 && type != ETRT_DEVICE_CUDA)
    return etrt_plan_fail(r, 36, "flags", "a tuning record in a cpu plan");
  uint64_t body = etrt_plan_load_u64(h + 40);
  if (body != r->size - ETRT_PLAN_HEADER_SIZE)
    return etrt_plan_fail(r, 40, "body size", "%llu bytes, but the plan has %zu after the header%s",
                          (unsigned long long)body, r->size - ETRT_PLAN_HEADER_SIZE,
                          body > r->size - ETRT_PLAN_HEADER_SIZE ? " (truncated)" : "");
  const uint8_t *name = h + ETRT_PLAN_NAME_OFFSET;
  const uint8_t *nul = memchr(name, '\0', ETRT_PLAN_NAME_SIZE);
  if (nul == NULL)
    return etrt_plan_fail(r, ETRT_PLAN_NAME_OFFSET, "engine name",
                          "not NUL-terminated within %u bytes", ETRT_PLAN_NAME_SIZE);
  for (const uint8_t *p = nul; p < name + ETRT_PLAN_NAME_SIZE; ++p) {
    if (*p != 0) return etrt_plan_fail(r, (size_t)(p - h), "engine name", "padding is not zero");
  }
  uint8_t digest[ETRT_DIGEST_SIZE];
  etrt_sha256(h + ETRT_PLAN_HEADER_SIZE, r->size - ETRT_PLAN_HEADER_SIZE, digest);
  if (memcmp(digest, h + 48, ETRT_DIGEST_SIZE) != 0)
    return etrt_plan_fail(r, 48, "digest", "SHA-256 mismatch: the body is corrupted");
  info->device.type = (etrt_device_type)type;
  info->device.index = index;
  info->compute_major = (int)major;
  info->compute_minor = (int)minor;
  info->precision = (etrt_precision)precision;
  memset(&info->tuning, 0, sizeof info->tuning);
  info->tuning.present = (flags & ETRT_PLAN_FLAG_TUNED) != 0;
  memcpy(info->name, name, ETRT_PLAN_NAME_SIZE);
  r->pos = ETRT_PLAN_HEADER_SIZE;
  return ETRT_OK;
}

/* Reads values; constants' data offsets (relative to the weights) go to `weight_at`. */
static etrt_status etrt_plan_values(etrt_plan_reader *r, etrt_graph *graph, uint32_t count,
                                    uint64_t weights_size, uint64_t *weight_at) {
  uint64_t weights_end = 0;
  for (uint32_t v = 0; v < count; ++v) {
    etrt_graph_value value;
    memset(&value, 0, sizeof value);
    snprintf(r->where, sizeof r->where, "value %u ", v);
    ETRT_RETURN_IF_ERROR(etrt_plan_string(r, "name", &value.name));
    snprintf(r->where, sizeof r->where, "value %u '%.64s' ", v, value.name);
    size_t at = r->pos;
    uint8_t kind, flags;
    ETRT_RETURN_IF_ERROR(etrt_plan_u8(r, "kind", &kind));
    if (kind > ETRT_VALUE_KIND_INTERMEDIATE)
      return etrt_plan_fail(r, at, "kind", "unknown value kind %u", kind);
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u8(r, "flags", &flags));
    if ((flags & ~ETRT_PLAN_VALUE_SHAPE_INPUT) != 0 ||
        (flags != 0 && kind != ETRT_VALUE_KIND_INPUT))
      return etrt_plan_fail(r, at, "flags", "flags 0x%x are not valid for this value", flags);
    ETRT_RETURN_IF_ERROR(etrt_plan_zero(r, "reserved", 2));
    value.kind = (etrt_value_kind)kind;
    value.is_shape_input = (flags & ETRT_PLAN_VALUE_SHAPE_INPUT) != 0;
    value.producer = -1;
    at = r->pos;
    ETRT_RETURN_IF_ERROR(
        etrt_plan_shape(r, &value.dtype, &value.rank, value.min_dims, value.max_dims));
    int64_t min_values[64], max_values[64];
    if (kind == ETRT_VALUE_KIND_CONSTANT) {
      if (!etrt_shape_equal(value.rank, value.min_dims, value.rank, value.max_dims))
        return etrt_plan_fail(r, at, "dims", "a constant's dims must be fixed");
      at = r->pos;
      uint64_t offset, nbytes;
      ETRT_RETURN_IF_ERROR(etrt_plan_u64(r, "data offset", &offset));
      if (offset % ETRT_PLAN_WEIGHT_ALIGNMENT != 0 || offset < weights_end)
        return etrt_plan_fail(
            r, at, "data offset",
            "%llu is not 64-byte aligned or overlaps the previous constant (which ends at %llu)",
            (unsigned long long)offset, (unsigned long long)weights_end);
      size_t size_at = r->pos;
      ETRT_RETURN_IF_ERROR(etrt_plan_u64(r, "data size", &nbytes));
      int64_t expected = etrt_graph_nbytes(value.dtype, value.rank, value.min_dims);
      if ((uint64_t)expected != nbytes)
        return etrt_plan_fail(r, size_at, "data size", "%llu bytes, the dims and dtype need %lld",
                              (unsigned long long)nbytes, (long long)expected);
      if (!etrt_range_ok(offset, nbytes, weights_size))
        return etrt_plan_fail(r, at, "data offset",
                              "[%llu, +%llu) lies outside the %llu bytes of weights",
                              (unsigned long long)offset, (unsigned long long)nbytes,
                              (unsigned long long)weights_size);
      weights_end = offset + nbytes;
      weight_at[v] = offset;
      value.nbytes = (size_t)nbytes;
    }
    if (value.is_shape_input) {
      if (value.dtype != ETRT_DTYPE_INT64 || value.rank != 1 ||
          value.min_dims[0] != value.max_dims[0] || value.min_dims[0] > 64)
        return etrt_plan_fail(r, at, "dims",
                              "a shape input must be int64, 1-D, of a fixed length up to 64");
      int64_t n = value.min_dims[0];
      for (int64_t i = 0; i < n; ++i)
        ETRT_RETURN_IF_ERROR(etrt_plan_i64(r, "min values", &min_values[i]));
      at = r->pos;
      for (int64_t i = 0; i < n; ++i) {
        ETRT_RETURN_IF_ERROR(etrt_plan_i64(r, "max values", &max_values[i]));
        if (max_values[i] < min_values[i])
          return etrt_plan_fail(r, at + 8 * (size_t)i, "max values",
                                "value %lld bounds [%lld, %lld] are out of order", (long long)i,
                                (long long)min_values[i], (long long)max_values[i]);
      }
      value.min_values = min_values;
      value.max_values = max_values;
    }
    int32_t id;
    ETRT_RETURN_IF_ERROR(etrt_graph_add_value(graph, &value, &id));
  }
  r->where[0] = '\0';
  return ETRT_OK;
}

static etrt_status etrt_plan_io(etrt_plan_reader *r, etrt_graph *graph, uint32_t count) {
  int outputs_started = 0;
  for (uint32_t io = 0; io < count; ++io) {
    snprintf(r->where, sizeof r->where, "I/O %u ", io);
    size_t at = r->pos;
    uint32_t id;
    uint8_t is_input, is_shape;
    ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "value id", &id));
    if (id >= graph->value_count)
      return etrt_plan_fail(r, at, "value id", "value %u, the plan has %u", id, graph->value_count);
    const etrt_graph_value *v = &graph->values[id];
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u8(r, "is input", &is_input));
    if (is_input > 1 || (is_input && outputs_started))
      return etrt_plan_fail(r, at, "is input", "%u (inputs come first, 0 or 1)", is_input);
    outputs_started = !is_input;
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u8(r, "is shape input", &is_shape));
    if (is_shape > 1 || is_shape != (uint8_t)v->is_shape_input)
      return etrt_plan_fail(r, at, "is shape input", "%u disagrees with value %u", is_shape, id);
    ETRT_RETURN_IF_ERROR(etrt_plan_zero(r, "reserved", 2));
    at = r->pos;
    const char *name;
    ETRT_RETURN_IF_ERROR(etrt_plan_string(r, "name", &name));
    if (strcmp(name, v->name) != 0)
      return etrt_plan_fail(r, at, "name", "'%.64s' differs from value %u's name '%.64s'", name, id,
                            v->name);
    snprintf(r->where, sizeof r->where, "I/O %u '%.64s' ", io, name);
    etrt_dtype dtype;
    int32_t rank;
    int64_t min_dims[ETRT_MAX_RANK], max_dims[ETRT_MAX_RANK];
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_shape(r, &dtype, &rank, min_dims, max_dims));
    if (dtype != v->dtype || !etrt_shape_equal(rank, min_dims, v->rank, v->min_dims) ||
        !etrt_shape_equal(rank, max_dims, v->rank, v->max_dims))
      return etrt_plan_fail(r, at, "shape", "dtype or dims differ from value %u's", id);
    ETRT_RETURN_IF_ERROR(etrt_graph_add_io(graph, is_input, (int32_t)id));
  }
  r->where[0] = '\0';
  return ETRT_OK;
}

static etrt_status etrt_plan_attribute(etrt_plan_reader *r, etrt_attribute *a) {
  ETRT_RETURN_IF_ERROR(etrt_plan_string(r, "attribute name", &a->name));
  size_t at = r->pos;
  uint32_t kind;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "attribute kind", &kind));
  if (kind > ETRT_ATTRIBUTE_GRAPH)
    return etrt_plan_fail(r, at, "attribute kind", "unknown kind %u for attribute '%.64s'", kind,
                          a->name);
  a->kind = (etrt_attribute_kind)kind;
  switch (a->kind) {
    case ETRT_ATTRIBUTE_INT:
      return etrt_plan_i64(r, "attribute value", &a->i);
    case ETRT_ATTRIBUTE_FLOAT:
      return etrt_plan_f32(r, "attribute value", &a->f);
    case ETRT_ATTRIBUTE_STRING:
      return etrt_plan_string(r, "attribute value", &a->s);
    case ETRT_ATTRIBUTE_INTS:
    case ETRT_ATTRIBUTE_FLOATS: {
      int ints = a->kind == ETRT_ATTRIBUTE_INTS;
      size_t item = ints ? 8 : 4;
      uint32_t n;
      ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "attribute count", &n));
      ETRT_RETURN_IF_ERROR(etrt_plan_need(r, (size_t)n * item, "attribute values"));
      void *values = etrt_arena_alloc(r->arena, (size_t)n * item, 8);
      if (values == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
      for (uint32_t i = 0; i < n; ++i) {
        if (ints)
          ETRT_RETURN_IF_ERROR(etrt_plan_i64(r, "attribute values", (int64_t *)values + i));
        else
          ETRT_RETURN_IF_ERROR(etrt_plan_f32(r, "attribute values", (float *)values + i));
      }
      a->count = n;
      if (ints)
        a->ints = values;
      else
        a->floats = values;
      return ETRT_OK;
    }
    case ETRT_ATTRIBUTE_TENSOR:
    case ETRT_ATTRIBUTE_GRAPH: {
      etrt_tensor_view *t = &a->tensor;
      at = r->pos;
      ETRT_RETURN_IF_ERROR(etrt_plan_dtype(r, "tensor dtype", &t->dtype));
      ETRT_RETURN_IF_ERROR(etrt_plan_rank(r, "tensor rank", &t->rank));
      /* A body graph is a nested plan, verified when its node is prepared. */
      if (a->kind == ETRT_ATTRIBUTE_GRAPH && (t->dtype != ETRT_DTYPE_UINT8 || t->rank != 1))
        return etrt_plan_fail(r, at, "tensor dtype",
                              "graph attribute '%.64s' must hold its plan as 1-D uint8 bytes",
                              a->name);
      ETRT_RETURN_IF_ERROR(etrt_plan_dims(r, "tensor dims", t->rank, t->sizes));
      at = r->pos;
      uint64_t n;
      ETRT_RETURN_IF_ERROR(etrt_plan_u64(r, "tensor size", &n));
      int64_t expected = etrt_graph_nbytes(t->dtype, t->rank, t->sizes);
      if (expected < 0 || (uint64_t)expected != n)
        return etrt_plan_fail(r, at, "tensor size", "%llu bytes, the dims and dtype need %lld",
                              (unsigned long long)n, (long long)expected);
      ETRT_RETURN_IF_ERROR(etrt_plan_need(r, (size_t)n, "tensor bytes"));
      t->data = etrt_arena_memdup(r->arena, r->base + r->pos, (size_t)n, 64);
      if (t->data == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
      r->pos += (size_t)n;
      return ETRT_OK;
    }
  }
  return ETRT_OK;
}

/* A count of items of at least `item_size` bytes each that the rest of the plan could
 * hold; refuses counts that would make the reader allocate for bytes that are not
 * there. */
static etrt_status etrt_plan_count(etrt_plan_reader *r, const char *field, size_t item_size,
                                   uint32_t limit, uint32_t *out) {
  size_t at = r->pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, field, out));
  size_t left = r->size - r->pos;
  if (*out > limit || (size_t)*out > left / item_size)
    return etrt_plan_fail(r, at, field, "%u is more than the plan can hold", *out);
  return ETRT_OK;
}

static etrt_status etrt_plan_ids(etrt_plan_reader *r, const char *field, uint32_t count,
                                 int allow_omitted, uint32_t value_count, int32_t *ids) {
  for (uint32_t i = 0; i < count; ++i) {
    size_t at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_i32(r, field, &ids[i]));
    if ((ids[i] == -1 && !allow_omitted) || ids[i] < -1 || ids[i] >= (int32_t)value_count)
      return etrt_plan_fail(r, at, field, "%u is value %d, the plan has %u values", i, (int)ids[i],
                            value_count);
  }
  return ETRT_OK;
}

static etrt_status etrt_plan_nodes(etrt_plan_reader *r, etrt_graph *graph, uint32_t count,
                                   size_t *offsets) {
  for (uint32_t n = 0; n < count; ++n) {
    etrt_node node;
    memset(&node, 0, sizeof node);
    offsets[n] = r->pos;
    snprintf(r->where, sizeof r->where, "node %u ", n);
    size_t at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_string(r, "op type", &node.op_type));
    etrt_op_resolve(&node);
    if (node.def == NULL)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "plan: node %u op type at byte offset %zu: unknown operation '%.64s'", n,
                        at, node.op_type);
    ETRT_RETURN_IF_ERROR(etrt_plan_string(r, "name", &node.name));
    snprintf(r->where, sizeof r->where, "node %u '%.64s' (%s) ", n, node.name, node.op_type);
    ETRT_RETURN_IF_ERROR(
        etrt_plan_count(r, "input count", 4, ETRT_GRAPH_MAX_NODE_ARGS, &node.num_inputs));
    int32_t *inputs = etrt_arena_alloc(r->arena, (size_t)node.num_inputs * 4, 4);
    if (inputs == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
    ETRT_RETURN_IF_ERROR(etrt_plan_ids(r, "input", node.num_inputs, 1, graph->value_count, inputs));
    at = r->pos;
    ETRT_RETURN_IF_ERROR(
        etrt_plan_count(r, "output count", 4, ETRT_GRAPH_MAX_NODE_ARGS, &node.num_outputs));
    if (node.num_outputs == 0)
      return etrt_plan_fail(r, at, "output count", "a node needs an output");
    int32_t *outputs = etrt_arena_alloc(r->arena, (size_t)node.num_outputs * 4, 4);
    if (outputs == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
    ETRT_RETURN_IF_ERROR(
        etrt_plan_ids(r, "output", node.num_outputs, 0, graph->value_count, outputs));
    ETRT_RETURN_IF_ERROR(
        etrt_plan_count(r, "attribute count", 8, ETRT_GRAPH_MAX_ATTRIBUTES, &node.num_attributes));
    etrt_attribute *attributes =
        etrt_arena_alloc(r->arena, (size_t)node.num_attributes * sizeof *attributes, 8);
    if (attributes == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
    for (uint32_t a = 0; a < node.num_attributes; ++a)
      ETRT_RETURN_IF_ERROR(etrt_plan_attribute(r, &attributes[a]));
    node.inputs = inputs;
    node.outputs = outputs;
    node.attributes = attributes;
    ETRT_RETURN_IF_ERROR(etrt_graph_append_node(graph, &node));
  }
  r->where[0] = '\0';
  return ETRT_OK;
}

/* The tuning record (plan_format.h): checked field by field, the choices copied
 * into the graph's arena. */
static etrt_status etrt_plan_tuning_read(etrt_plan_reader *r, uint32_t node_count,
                                         etrt_plan_tuning *t) {
  snprintf(r->where, sizeof r->where, "tuning record ");
  r->pos = etrt_align_up(r->pos, ETRT_PLAN_WEIGHT_ALIGNMENT);
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, 0, "GPU name"));
  size_t at = r->pos;
  const char *gpu;
  ETRT_RETURN_IF_ERROR(etrt_plan_string(r, "GPU name", &gpu));
  size_t n = strlen(gpu);
  if (n == 0 || n > ETRT_PLAN_TUNING_NAME_MAX)
    return etrt_plan_fail(r, at, "GPU name", "%zu bytes, wants 1..%u", n,
                          ETRT_PLAN_TUNING_NAME_MAX);
  memcpy(t->gpu, gpu, n + 1);
  uint32_t major, minor, cudnn, count;
  at = r->pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "compute capability", &major));
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "compute capability", &minor));
  if (major < 1 || major > 99 || minor > 99)
    return etrt_plan_fail(r, at, "compute capability", "%u.%u", major, minor);
  at = r->pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "cuDNN version", &cudnn));
  if (cudnn == 0) return etrt_plan_fail(r, at, "cuDNN version", "0");
  at = r->pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "choice count", &count));
  if (count > node_count)
    return etrt_plan_fail(r, at, "choice count", "%u choices for %u nodes", count, node_count);
  ETRT_RETURN_IF_ERROR(etrt_plan_need(r, (size_t)count * 24, "choices"));
  etrt_plan_conv_choice *choices =
      etrt_arena_alloc(r->arena, (count > 0 ? count : 1) * sizeof *choices, 8);
  if (choices == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
  for (uint32_t i = 0; i < count; ++i) {
    etrt_plan_conv_choice *c = &choices[i];
    snprintf(r->where, sizeof r->where, "tuning record choice %u ", i);
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "node index", &c->node));
    if (c->node >= node_count || (i > 0 && c->node <= choices[i - 1].node))
      return etrt_plan_fail(r, at, "node index",
                            "%u is not a node after the previous choice's (of %u nodes)", c->node,
                            node_count);
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "algorithm", &c->algorithm));
    if (c->algorithm > ETRT_PLAN_TUNING_MAX_ALGORITHM)
      return etrt_plan_fail(r, at, "algorithm", "%u, wants 0..%u", c->algorithm,
                            ETRT_PLAN_TUNING_MAX_ALGORITHM);
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u32(r, "math type", &c->math));
    if (c->math > ETRT_PLAN_TUNING_MAX_MATH)
      return etrt_plan_fail(r, at, "math type", "%u, wants 0..%u", c->math,
                            ETRT_PLAN_TUNING_MAX_MATH);
    ETRT_RETURN_IF_ERROR(etrt_plan_zero(r, "reserved", 4));
    at = r->pos;
    ETRT_RETURN_IF_ERROR(etrt_plan_u64(r, "scratch bytes", &c->scratch_bytes));
    if (c->scratch_bytes > ETRT_PLAN_TUNING_MAX_SCRATCH)
      return etrt_plan_fail(r, at, "scratch bytes", "%llu is over 2^40",
                            (unsigned long long)c->scratch_bytes);
  }
  t->compute_major = (int)major;
  t->compute_minor = (int)minor;
  t->cudnn_version = cudnn;
  t->count = count;
  t->choices = choices;
  r->where[0] = '\0';
  return ETRT_OK;
}

etrt_status etrt_plan_parse(const void *plan, size_t size, etrt_plan_info *info, etrt_graph *graph,
                            size_t **node_offsets) {
  *node_offsets = NULL;
  if (plan == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "plan: NULL plan");
  etrt_plan_reader r = {.base = plan, .size = size, .arena = &graph->arena};
  ETRT_RETURN_IF_ERROR(etrt_plan_header(&r, info));

  uint32_t io_count, value_count, node_count;
  uint64_t weights_offset, weights_size;
  ETRT_RETURN_IF_ERROR(etrt_plan_count(&r, "I/O count", 16, ETRT_GRAPH_MAX_VALUES, &io_count));
  ETRT_RETURN_IF_ERROR(etrt_plan_count(&r, "value count", 16, ETRT_GRAPH_MAX_VALUES, &value_count));
  ETRT_RETURN_IF_ERROR(etrt_plan_count(&r, "node count", 20, ETRT_GRAPH_MAX_NODES, &node_count));
  ETRT_RETURN_IF_ERROR(etrt_plan_zero(&r, "reserved", 4));
  size_t weights_at = r.pos;
  ETRT_RETURN_IF_ERROR(etrt_plan_u64(&r, "weights offset", &weights_offset));
  ETRT_RETURN_IF_ERROR(etrt_plan_u64(&r, "weights size", &weights_size));
  if (weights_offset % ETRT_PLAN_WEIGHT_ALIGNMENT != 0 || weights_offset < r.pos ||
      weights_offset > size || weights_size != size - weights_offset)
    return etrt_plan_fail(&r, weights_at, "weights offset",
                          "[%llu, +%llu) is not a 64-byte aligned region ending the %zu-byte plan",
                          (unsigned long long)weights_offset, (unsigned long long)weights_size,
                          size);
  uint64_t *weight_at = calloc(value_count > 0 ? value_count : 1, sizeof *weight_at);
  size_t *offsets = calloc(node_count > 0 ? node_count : 1, sizeof *offsets);
  etrt_status s = weight_at != NULL && offsets != NULL
                      ? ETRT_OK
                      : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory");
  if (s == ETRT_OK) s = etrt_plan_values(&r, graph, value_count, weights_size, weight_at);
  if (s == ETRT_OK) s = etrt_plan_io(&r, graph, io_count);
  if (s == ETRT_OK) s = etrt_plan_nodes(&r, graph, node_count, offsets);
  if (s == ETRT_OK && info->tuning.present)
    s = etrt_plan_tuning_read(&r, node_count, &info->tuning);
  if (s == ETRT_OK && etrt_align_up(r.pos, ETRT_PLAN_WEIGHT_ALIGNMENT) != weights_offset)
    s = etrt_plan_fail(
        &r, weights_at, "weights offset",
        "%llu, but the metadata ends at %zu (the weights start at the next multiple of 64)",
        (unsigned long long)weights_offset, r.pos);
  if (s == ETRT_OK) {
    s = etrt_graph_check(graph, offsets);
    if (s != ETRT_OK) etrt_error_context(s, "plan: ");
  }
  if (s == ETRT_OK) {
    /* In place when aligned (zero copy); else one aligned copy of the whole region. */
    const uint8_t *weights = (const uint8_t *)plan + weights_offset;
    if ((uintptr_t)weights % ETRT_PLAN_WEIGHT_ALIGNMENT != 0) {
      weights = etrt_arena_memdup(&graph->arena, weights, (size_t)weights_size,
                                  ETRT_PLAN_WEIGHT_ALIGNMENT);
      if (weights == NULL)
        s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "plan: out of memory for %llu bytes of weights",
                       (unsigned long long)weights_size);
    }
    info->weights = weights;
    info->weights_size = weights_size;
    for (uint32_t v = 0; v < value_count && s == ETRT_OK; ++v) {
      if (graph->values[v].kind == ETRT_VALUE_KIND_CONSTANT)
        graph->values[v].data = weights + weight_at[v];
    }
  }
  free(weight_at);
  if (s != ETRT_OK) {
    free(offsets);
    return s;
  }
  *node_offsets = offsets;
  return ETRT_OK;
}
