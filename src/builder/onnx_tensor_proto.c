#include "builder/onnx_tensor_proto.h"

#include <limits.h>
#include <string.h>

#include "base/checked.h"
#include "builder/onnx_external.h"

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

etrt_status etrt_onnx_parse_tensor_cursor(etrt_onnx_parser *p, etrt_pb_cursor *c, size_t offset,
                                          etrt_onnx_tensor *t) {
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
        static const etrt_onnx_storage storage_of[12] = {[4] = ETRT_ONNX_STORAGE_FLOAT,
                                                         [5] = ETRT_ONNX_STORAGE_INT32,
                                                         [7] = ETRT_ONNX_STORAGE_INT64,
                                                         [10] = ETRT_ONNX_STORAGE_DOUBLE,
                                                         [11] = ETRT_ONNX_STORAGE_UINT64};
        static const char *const name_of[12] = {[4] = ".float_data",
                                                [5] = ".int32_data",
                                                [7] = ".int64_data",
                                                [10] = ".double_data",
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
      default:
        break;
    }
    etrt_onnx_path_pop(p, mark);
  });

  int64_t *dims;
  ETRT_ONNX_ALLOC(p, dims, n_dims);
  void *values = NULL;
  etrt_onnx_str *strings = NULL;
  switch (t->storage) {
    case ETRT_ONNX_STORAGE_FLOAT:
      ETRT_ONNX_ALLOC(p, t->float_data, n_values);
      values = (void *)t->float_data;
      break;
    case ETRT_ONNX_STORAGE_INT32:
      ETRT_ONNX_ALLOC(p, t->int32_data, n_values);
      values = (void *)t->int32_data;
      break;
    case ETRT_ONNX_STORAGE_INT64:
      ETRT_ONNX_ALLOC(p, t->int64_data, n_values);
      values = (void *)t->int64_data;
      break;
    case ETRT_ONNX_STORAGE_DOUBLE:
      ETRT_ONNX_ALLOC(p, t->double_data, n_values);
      values = (void *)t->double_data;
      break;
    case ETRT_ONNX_STORAGE_UINT64:
      ETRT_ONNX_ALLOC(p, t->uint64_data, n_values);
      values = (void *)t->uint64_data;
      break;
    case ETRT_ONNX_STORAGE_STRING:
      ETRT_ONNX_ALLOC(p, strings, n_values);
      t->string_data = strings;
      break;
    default:
      break;
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
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_FLOAT, values, n_values, &v));
          break;
        case 5:
          etrt_onnx_path_push(p, ".int32_data");
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT32, values, n_values, &v));
          break;
        case 7:
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT64, values, n_values, &v));
          break;
        case 10:
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_DOUBLE, values, n_values, &v));
          break;
        case 11:
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_UINT64, values, n_values, &v));
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
            ETRT_RETURN_IF_ERROR(
                etrt_onnx_parse_decimal(p, value, f.offset, "offset", &t->external_offset));
          } else if (etrt_onnx_str_eq(key, "length")) {
            ETRT_RETURN_IF_ERROR(
                etrt_onnx_parse_decimal(p, value, f.offset, "length", &t->external_length));
            has_length = 1;
          } /* "checksum" and keys of later versions do not change where the bytes are */
          break;
        }
        default:
          break;
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

etrt_status etrt_onnx_parse_tensor(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
                                   const etrt_pb_field *field, etrt_onnx_tensor *t) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  return etrt_onnx_parse_tensor_cursor(p, &c, field->offset, t);
}
