#include "builder/onnx_attribute.h"

#include <stdio.h>
#include <string.h>

#include "builder/onnx_graph.h"
#include "builder/onnx_tensor_proto.h"

/* --- parsing ------------------------------------------------------------------------- */

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
      {ETRT_ONNX_HAS_F, ETRT_ONNX_ATTR_FLOAT},
      {ETRT_ONNX_HAS_I, ETRT_ONNX_ATTR_INT},
      {ETRT_ONNX_HAS_S, ETRT_ONNX_ATTR_STRING},
      {ETRT_ONNX_HAS_T, ETRT_ONNX_ATTR_TENSOR},
      {ETRT_ONNX_HAS_G, ETRT_ONNX_ATTR_GRAPH},
      {ETRT_ONNX_HAS_FLOATS, ETRT_ONNX_ATTR_FLOATS},
      {ETRT_ONNX_HAS_INTS, ETRT_ONNX_ATTR_INTS},
      {ETRT_ONNX_HAS_STRINGS, ETRT_ONNX_ATTR_STRINGS},
      {ETRT_ONNX_HAS_TENSORS, ETRT_ONNX_ATTR_TENSORS},
      {ETRT_ONNX_HAS_GRAPHS, ETRT_ONNX_ATTR_GRAPHS},
      {ETRT_ONNX_HAS_SPARSE, ETRT_ONNX_ATTR_SPARSE_TENSOR},
      {ETRT_ONNX_HAS_TP, ETRT_ONNX_ATTR_TYPE_PROTO},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    if (has == table[i].bit) return table[i].type;
  }
  return ETRT_ONNX_ATTR_UNDEFINED; /* none or several: ambiguous */
}

etrt_status etrt_onnx_parse_attribute(etrt_onnx_parser *p, const etrt_pb_cursor *parent,
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
      case 1:
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &a->name));
        break;
      case 21:
        ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &a->ref_attr_name));
        break;
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
        ETRT_RETURN_IF_ERROR(
            etrt_onnx_refuse_twice(p, &f, (has & ETRT_ONNX_HAS_T) ? "" : NULL, "t"));
        ETRT_ONNX_TRY(p, etrt_pb_field_expect(&f, ETRT_PB_WIRE_LEN));
        has |= ETRT_ONNX_HAS_T;
        break;
      case 6:
        etrt_onnx_path_push(p, ".g");
        ETRT_RETURN_IF_ERROR(
            etrt_onnx_refuse_twice(p, &f, (has & ETRT_ONNX_HAS_G) ? "" : NULL, "g"));
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
      case 23:
        has |= ETRT_ONNX_HAS_SPARSE;
        break;
      case 14:
      case 15:
        has |= ETRT_ONNX_HAS_TP;
        break;
      default:
        break;
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
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_FLOAT, floats, n_floats, &nf));
          break;
        case 8:
          etrt_onnx_path_push(p, ".ints");
          ETRT_RETURN_IF_ERROR(
              etrt_onnx_fill_scalars(p, &f, ETRT_ONNX_AS_INT64, ints, n_ints, &ni));
          break;
        case 9:
          ETRT_RETURN_IF_ERROR(etrt_onnx_read_str(p, &f, &strings[ns++]));
          break;
        case 10:
          etrt_onnx_path_push(p, ".tensors[%zu]", nt);
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_tensor(p, &c, &f, &tensors[nt++]));
          break;
        case 11:
          etrt_onnx_path_push(p, ".graphs[%zu]", ng);
          ETRT_RETURN_IF_ERROR(etrt_onnx_parse_graph(p, &c, &f, &graphs[ng++]));
          break;
        default:
          break;
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

/* --- accessors of onnx_model.h --------------------------------------------------- */

static const char *const etrt_onnx_attr_type_names[] = {
    "UNDEFINED",      "FLOAT",      "INT",        "STRING",  "TENSOR", "GRAPH",
    "FLOATS",         "INTS",       "STRINGS",    "TENSORS", "GRAPHS", "SPARSE_TENSOR",
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

etrt_status etrt_onnx_node_attr_int(const etrt_onnx_node *node, const char *name, int64_t fallback,
                                    int64_t *out) {
  const etrt_onnx_attribute *a;
  ETRT_RETURN_IF_ERROR(etrt_onnx_attr_typed(node, name, ETRT_ONNX_ATTR_INT, &a));
  *out = a ? a->i : fallback;
  return ETRT_OK;
}

etrt_status etrt_onnx_node_attr_float(const etrt_onnx_node *node, const char *name, float fallback,
                                      float *out) {
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
    return etrt_error(
        ETRT_ERROR_INVALID_FORMAT,
        "node '%.*s' (%.*s): attribute '%s' is TENSOR but holds no tensor at byte %zu",
        ETRT_ONNX_STR_ARGS(node->name), ETRT_ONNX_STR_ARGS(node->op_type), name, a->offset);
  }
  *out = a->t;
  return ETRT_OK;
}
