#include "builder/onnx_value_info.h"

#include <string.h>

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
                                        const etrt_pb_field *field, etrt_onnx_value_info *vi,
                                        int depth) {
  etrt_pb_cursor c;
  ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(parent, field, &c));
  etrt_pb_field f;
  ETRT_ONNX_FOR_FIELDS(p, &c, f, {
    switch (f.number) {
      case 1:   /* tensor_type */
      case 8: { /* sparse_tensor_type: the same layout */
        size_t mark =
            etrt_onnx_path_push(p, f.number == 1 ? ".tensor_type" : ".sparse_tensor_type");
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
      case 9: {
        /* sequence_type / optional_type: one field, elem_type (1), a TypeProto. The
         * value held is described in place (its kind in elem_kind, a tensor's type and
         * shape in elem_type and dims); optional(sequence(tensor)) is the deepest the
         * importer takes, so nesting past two wrappers is recorded as a map (refused). */
        size_t mark = etrt_onnx_path_push(p, f.number == 4 ? ".sequence_type" : ".optional_type");
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        etrt_onnx_value_info inner = {.kind = ETRT_ONNX_TYPE_NONE};
        etrt_pb_cursor sc;
        ETRT_ONNX_TRY(p, etrt_pb_cursor_sub(&c, &f, &sc));
        etrt_pb_field g;
        ETRT_ONNX_FOR_FIELDS(p, &sc, g, {
          if (g.number == 1) {
            size_t m2 = etrt_onnx_path_push(p, ".elem_type");
            ETRT_ONNX_TRY(p, etrt_pb_field_expect(&g, ETRT_PB_WIRE_LEN));
            if (depth < 2)
              ETRT_RETURN_IF_ERROR(etrt_onnx_parse_type(p, &sc, &g, &inner, depth + 1));
            else
              inner.kind = ETRT_ONNX_TYPE_MAP;
            etrt_onnx_path_pop(p, m2);
          }
        });
        vi->kind = (etrt_onnx_type_kind)f.number;
        vi->elem_kind = inner.kind;
        vi->elem_tensor = inner.kind == ETRT_ONNX_TYPE_TENSOR ||
                          (inner.kind == ETRT_ONNX_TYPE_SEQUENCE && inner.elem_tensor);
        vi->elem_type = inner.elem_type;
        vi->has_shape = inner.has_shape;
        vi->rank = inner.rank;
        vi->dims = inner.dims;
        etrt_onnx_path_pop(p, mark);
        break;
      }
      case 5:
        /* Maps are recorded by kind only; the importer refuses them. */
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        vi->kind = ETRT_ONNX_TYPE_MAP;
        vi->has_shape = 0;
        vi->rank = 0;
        vi->dims = NULL;
        break;
      default:
        break;
    }
  });
  return ETRT_OK;
}

etrt_status etrt_onnx_parse_value_info(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
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
      ETRT_RETURN_IF_ERROR(etrt_onnx_parse_type(p, &c, &f, vi, 0));
      has_type = 1;
      etrt_onnx_path_pop(p, mark);
    }
  });
  return ETRT_OK;
}
