#include "builder/onnx_tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/dtype.h"
#include "base/status.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw_data is little-endian and is used in place: etrt needs a little-endian host"
#endif

int etrt_onnx_str_eq(etrt_onnx_str s, const char *text) {
  size_t n = strlen(text);
  return s.size == n && memcmp(s.data, text, n) == 0;
}

static const char *const etrt_onnx_type_names[] = {
    "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
    "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
    "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",     "FLOAT4E2M1"};

const char *etrt_onnx_data_type_name(int32_t onnx_type) {
  if (onnx_type >= 0 &&
      (size_t)onnx_type < sizeof etrt_onnx_type_names / sizeof etrt_onnx_type_names[0]) {
    return etrt_onnx_type_names[onnx_type];
  }
  static _Thread_local char unknown[32];
  snprintf(unknown, sizeof unknown, "type %d", (int)onnx_type);
  return unknown;
}

etrt_status etrt_onnx_dtype_to_etrt(int32_t onnx_type, etrt_dtype *out) {
  *out = etrt_dtype_from_onnx(onnx_type);
  if (*out != ETRT_DTYPE_INVALID) return ETRT_OK;
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "ONNX element type %s (%d) is not supported",
                    etrt_onnx_data_type_name(onnx_type), (int)onnx_type);
}

etrt_status etrt_onnx_dtype_from_etrt(etrt_dtype dtype, int32_t *out) {
  int32_t onnx_type = etrt_dtype_to_onnx(dtype);
  if (onnx_type == ETRT_ONNX_UNDEFINED)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "dtype %d has no ONNX element type", (int)dtype);
  *out = onnx_type;
  return ETRT_OK;
}

/* The typed field ONNX stores a type's values in, and how many entries per element;
 * 0 entries for types whose layout etrt does not check (unknown or sub-byte). */
static void etrt_onnx_type_layout(int32_t type, etrt_onnx_storage *storage, size_t *per_element,
                                  size_t *element_bytes) {
  *per_element = 1;
  *element_bytes = 0;
  switch (type) {
    case ETRT_ONNX_FLOAT:
      *storage = ETRT_ONNX_STORAGE_FLOAT;
      *element_bytes = 4;
      return;
    case ETRT_ONNX_COMPLEX64:
      *storage = ETRT_ONNX_STORAGE_FLOAT;
      *per_element = 2;
      *element_bytes = 8;
      return;
    case ETRT_ONNX_INT32:
      *storage = ETRT_ONNX_STORAGE_INT32;
      *element_bytes = 4;
      return;
    case ETRT_ONNX_INT16:
    case ETRT_ONNX_UINT16:
    case ETRT_ONNX_FLOAT16:
    case ETRT_ONNX_BFLOAT16:
      *storage = ETRT_ONNX_STORAGE_INT32;
      *element_bytes = 2;
      return;
    case ETRT_ONNX_INT8:
    case ETRT_ONNX_UINT8:
    case ETRT_ONNX_BOOL:
    case 17:
    case 18:
    case 19:
    case 20: /* the FLOAT8 types */
      *storage = ETRT_ONNX_STORAGE_INT32;
      *element_bytes = 1;
      return;
    case ETRT_ONNX_INT64:
      *storage = ETRT_ONNX_STORAGE_INT64;
      *element_bytes = 8;
      return;
    case ETRT_ONNX_DOUBLE:
      *storage = ETRT_ONNX_STORAGE_DOUBLE;
      *element_bytes = 8;
      return;
    case ETRT_ONNX_COMPLEX128:
      *storage = ETRT_ONNX_STORAGE_DOUBLE;
      *per_element = 2;
      *element_bytes = 16;
      return;
    case ETRT_ONNX_UINT32:
      *storage = ETRT_ONNX_STORAGE_UINT64;
      *element_bytes = 4;
      return;
    case ETRT_ONNX_UINT64:
      *storage = ETRT_ONNX_STORAGE_UINT64;
      *element_bytes = 8;
      return;
    case ETRT_ONNX_STRING:
      *storage = ETRT_ONNX_STORAGE_STRING;
      return;
    default:
      *storage = ETRT_ONNX_STORAGE_NONE;
      *per_element = 0;
      return;
  }
}

const char *etrt_onnx_storage_name(etrt_onnx_storage storage) {
  switch (storage) {
    case ETRT_ONNX_STORAGE_NONE:
      return "no data";
    case ETRT_ONNX_STORAGE_RAW:
      return "raw_data";
    case ETRT_ONNX_STORAGE_EXTERNAL:
      return "external data";
    case ETRT_ONNX_STORAGE_FLOAT:
      return "float_data";
    case ETRT_ONNX_STORAGE_INT32:
      return "int32_data";
    case ETRT_ONNX_STORAGE_INT64:
      return "int64_data";
    case ETRT_ONNX_STORAGE_DOUBLE:
      return "double_data";
    case ETRT_ONNX_STORAGE_UINT64:
      return "uint64_data";
    case ETRT_ONNX_STORAGE_STRING:
      return "string_data";
  }
  return "unknown storage";
}

/* "[2, 3, 4]" into buf, shortened when long. */
static const char *etrt_onnx_dims_text(const etrt_onnx_tensor *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (size_t i = 0; i < t->rank && n < size; ++i) {
    if (i == 6 && t->rank > 8) {
      n += (size_t)snprintf(buf + n, size - n, ", ...");
      break;
    }
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
  }
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

static etrt_status etrt_onnx_tensor_fail(const etrt_onnx_tensor *t, const char *problem) {
  return etrt_error(ETRT_ERROR_INVALID_FORMAT, "tensor '%.*s': %s at byte %zu",
                    ETRT_ONNX_STR_ARGS(t->name), problem, t->offset);
}

etrt_status etrt_onnx_tensor_check(const etrt_onnx_tensor *t) {
  char problem[256], dims[128];
  int64_t numel = 1;
  for (size_t i = 0; i < t->rank; ++i) {
    if (t->dims[i] < 0) {
      snprintf(problem, sizeof problem, "dims[%zu] is negative (%lld)", i, (long long)t->dims[i]);
      return etrt_onnx_tensor_fail(t, problem);
    }
    if (etrt_mul_overflow_i64(numel, t->dims[i], &numel)) {
      snprintf(problem, sizeof problem, "dims %s overflow",
               etrt_onnx_dims_text(t, dims, sizeof dims));
      return etrt_onnx_tensor_fail(t, problem);
    }
  }
  if (numel != t->numel) return etrt_onnx_tensor_fail(t, "element count does not match dims");
  etrt_onnx_storage typed;
  size_t per_element, element_bytes;
  etrt_onnx_type_layout(t->data_type, &typed, &per_element, &element_bytes);
  const char *type = etrt_onnx_data_type_name(t->data_type);
  etrt_onnx_dims_text(t, dims, sizeof dims);

  if (t->storage == ETRT_ONNX_STORAGE_NONE) {
    if (numel == 0 || per_element == 0) return ETRT_OK;
    snprintf(problem, sizeof problem, "dims %s of %s need %lld elements but the tensor has no data",
             dims, type, (long long)numel);
    return etrt_onnx_tensor_fail(t, problem);
  }
  if (per_element == 0) return ETRT_OK; /* a type whose layout etrt does not know */

  if (t->storage == ETRT_ONNX_STORAGE_RAW || t->storage == ETRT_ONNX_STORAGE_EXTERNAL) {
    if (t->data_type == ETRT_ONNX_STRING) {
      return etrt_onnx_tensor_fail(t, "STRING values cannot be raw bytes");
    }
    size_t needed;
    if ((uint64_t)numel > SIZE_MAX ||
        etrt_mul_overflow_size((size_t)numel, element_bytes, &needed) || needed != t->raw_size) {
      snprintf(problem, sizeof problem, "%s holds %zu bytes, dims %s of %s need %lld x %zu",
               etrt_onnx_storage_name(t->storage), t->raw_size, dims, type, (long long)numel,
               element_bytes);
      return etrt_onnx_tensor_fail(t, problem);
    }
    return ETRT_OK;
  }
  if (t->storage != typed) {
    snprintf(problem, sizeof problem, "%s values are stored in %s, ONNX keeps them in %s", type,
             etrt_onnx_storage_name(t->storage), etrt_onnx_storage_name(typed));
    return etrt_onnx_tensor_fail(t, problem);
  }
  uint64_t needed;
  if (__builtin_mul_overflow((uint64_t)numel, (uint64_t)per_element, &needed) ||
      needed != (uint64_t)t->count) {
    snprintf(problem, sizeof problem, "%s holds %zu values, dims %s of %s need %lld%s",
             etrt_onnx_storage_name(t->storage), t->count, dims, type, (long long)numel,
             per_element == 2 ? " x 2" : "");
    return etrt_onnx_tensor_fail(t, problem);
  }
  return ETRT_OK;
}

/* A valid address for tensors without bytes. */
static const uint64_t etrt_onnx_empty_data[1] = {0};

/* int32_data carries narrower types as int32 values; refuse values that are not
 * representable rather than silently wrapping them. */
static etrt_status etrt_onnx_narrow_int32(const etrt_onnx_tensor *t, size_t element_bytes,
                                          int64_t lo, int64_t hi, uint8_t *out) {
  for (size_t i = 0; i < t->count; ++i) {
    int32_t v = t->int32_data[i];
    if (v < lo || v > hi) {
      char problem[160];
      snprintf(problem, sizeof problem, "int32_data[%zu] = %d is out of range for %s", i, (int)v,
               etrt_onnx_data_type_name(t->data_type));
      return etrt_onnx_tensor_fail(t, problem);
    }
    uint32_t bits = (uint32_t)v;
    if (element_bytes == 1) {
      out[i] = (uint8_t)bits;
    } else {
      uint16_t half = (uint16_t)bits;
      memcpy(out + 2 * i, &half, 2);
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_onnx_convert_typed(const etrt_onnx_tensor *t, uint8_t *out) {
  switch (t->data_type) {
    case ETRT_ONNX_FLOAT:
      memcpy(out, t->float_data, t->count * 4);
      return ETRT_OK;
    case ETRT_ONNX_INT32:
      memcpy(out, t->int32_data, t->count * 4);
      return ETRT_OK;
    case ETRT_ONNX_INT64:
      memcpy(out, t->int64_data, t->count * 8);
      return ETRT_OK;
    case ETRT_ONNX_DOUBLE:
      memcpy(out, t->double_data, t->count * 8);
      return ETRT_OK;
    case ETRT_ONNX_UINT64:
      memcpy(out, t->uint64_data, t->count * 8);
      return ETRT_OK;
    case ETRT_ONNX_INT8:
      return etrt_onnx_narrow_int32(t, 1, INT8_MIN, INT8_MAX, out);
    case ETRT_ONNX_UINT8:
      return etrt_onnx_narrow_int32(t, 1, 0, UINT8_MAX, out);
    case ETRT_ONNX_BOOL:
      return etrt_onnx_narrow_int32(t, 1, 0, 1, out);
    case ETRT_ONNX_INT16:
      return etrt_onnx_narrow_int32(t, 2, INT16_MIN, INT16_MAX, out);
    case ETRT_ONNX_UINT16:
      return etrt_onnx_narrow_int32(t, 2, 0, UINT16_MAX, out);
    /* 16-bit float patterns: written as unsigned by ONNX's helpers, accepted
     * sign-extended too. */
    case ETRT_ONNX_FLOAT16:
    case ETRT_ONNX_BFLOAT16:
      return etrt_onnx_narrow_int32(t, 2, INT16_MIN, UINT16_MAX, out);
    case ETRT_ONNX_UINT32:
      for (size_t i = 0; i < t->count; ++i) {
        if (t->uint64_data[i] > UINT32_MAX) {
          char problem[160];
          snprintf(problem, sizeof problem, "uint64_data[%zu] = %llu is out of range for UINT32", i,
                   (unsigned long long)t->uint64_data[i]);
          return etrt_onnx_tensor_fail(t, problem);
        }
        uint32_t v = (uint32_t)t->uint64_data[i];
        memcpy(out + 4 * i, &v, 4);
      }
      return ETRT_OK;
    default:
      break;
  }
  return etrt_error(ETRT_ERROR_INTERNAL, "tensor '%.*s': no conversion from %s",
                    ETRT_ONNX_STR_ARGS(t->name), etrt_onnx_data_type_name(t->data_type));
}

etrt_status etrt_onnx_tensor_to_host(const etrt_onnx_tensor *t, etrt_onnx_host_tensor *out) {
  memset(out, 0, sizeof *out);
  etrt_dtype dtype;
  etrt_status s = etrt_onnx_dtype_to_etrt(t->data_type, &dtype);
  if (s != ETRT_OK) {
    return etrt_error_context(s, "tensor '%.*s' at byte %zu: ", ETRT_ONNX_STR_ARGS(t->name),
                              t->offset);
  }
  if (t->rank > ETRT_MAX_RANK) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "tensor '%.*s': rank %zu exceeds etrt's %d at byte %zu",
                      ETRT_ONNX_STR_ARGS(t->name), t->rank, ETRT_MAX_RANK, t->offset);
  }
  ETRT_RETURN_IF_ERROR(etrt_onnx_tensor_check(t));
  size_t element = etrt_dtype_size(dtype);
  size_t nbytes;
  if ((uint64_t)t->numel > SIZE_MAX || etrt_mul_overflow_size((size_t)t->numel, element, &nbytes)) {
    return etrt_onnx_tensor_fail(t, "size overflows");
  }
  out->dtype = dtype;
  out->rank = (int32_t)t->rank;
  for (size_t i = 0; i < t->rank; ++i) out->dims[i] = t->dims[i];
  out->numel = t->numel;
  out->nbytes = nbytes;
  out->data = etrt_onnx_empty_data;
  if (nbytes == 0) return ETRT_OK;

  if (t->storage == ETRT_ONNX_STORAGE_RAW || t->storage == ETRT_ONNX_STORAGE_EXTERNAL) {
    if ((uintptr_t)t->raw_data % element == 0) {
      out->data = t->raw_data;
      return ETRT_OK;
    }
  }
  uint8_t *copy = malloc(nbytes);
  if (copy == NULL) {
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "tensor '%.*s': out of memory for %zu bytes",
                      ETRT_ONNX_STR_ARGS(t->name), nbytes);
  }
  if (t->storage == ETRT_ONNX_STORAGE_RAW || t->storage == ETRT_ONNX_STORAGE_EXTERNAL) {
    memcpy(copy, t->raw_data, nbytes); /* realigned: malloc aligns for every element type */
  } else {
    s = etrt_onnx_convert_typed(t, copy);
    if (s != ETRT_OK) {
      free(copy);
      return s;
    }
  }
  out->data = copy;
  out->owned_ = copy;
  return ETRT_OK;
}

void etrt_onnx_host_tensor_release(etrt_onnx_host_tensor *tensor) {
  free(tensor->owned_);
  memset(tensor, 0, sizeof *tensor);
}
