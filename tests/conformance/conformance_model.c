/* A model's bytes with a graph input's declared shape replaced (conformance.h). Every
 * field off the path to that shape is copied byte for byte. */
#include <string.h>

#include "builder/protobuf.h"
#include "conformance.h"

/* The fields on the path to a graph input's shape: ModelProto.graph,
 * GraphProto.input (the one of the name), ValueInfoProto.type, TypeProto.tensor_type,
 * TypeProto.Tensor.shape. */
static const uint32_t etrt_conf_shape_path[] = {7, 11, 2, 1, 2};

/* Whether the ValueInfoProto in `field` is named `name`. */
static int etrt_conf_value_info_named(const etrt_pb_cursor *parent, const etrt_pb_field *field,
                                      const char *name) {
  etrt_pb_cursor c;
  etrt_pb_field f;
  int more;
  if (etrt_pb_cursor_sub(parent, field, &c) != ETRT_OK) return 0;
  while (etrt_pb_cursor_next(&c, &f, &more) == ETRT_OK && more)
    if (f.number == 1 && f.wire == ETRT_PB_WIRE_LEN)
      return f.size == strlen(name) && memcmp(f.data, name, f.size) == 0;
  return 0;
}

static etrt_status etrt_conf_rewrite_shape(etrt_pb_cursor *c, int depth, const char *name,
                                           int32_t rank, const int64_t *dims, etrt_pb_writer *w) {
  etrt_pb_field f;
  int more;
  etrt_status s;
  while ((s = etrt_pb_cursor_next(c, &f, &more)) == ETRT_OK && more) {
    size_t end = c->pos;
    if (f.number != etrt_conf_shape_path[depth] || f.wire != ETRT_PB_WIRE_LEN ||
        (depth == 1 && !etrt_conf_value_info_named(c, &f, name))) {
      etrt_pb_write_raw(w, c->base + f.offset, end - f.offset);
      continue;
    }
    etrt_pb_writer sub;
    etrt_pb_writer_init(&sub);
    if (depth == 4) {
      for (int32_t a = 0; a < rank; ++a) { /* TensorShapeProto.dim.dim_value */
        etrt_pb_writer dim;
        etrt_pb_writer_init(&dim);
        etrt_pb_write_varint_field(&dim, 1, (uint64_t)dims[a]);
        etrt_pb_write_message_field(&sub, 1, &dim);
        etrt_pb_writer_release(&dim);
      }
    } else {
      etrt_pb_cursor child;
      s = etrt_pb_cursor_sub(c, &f, &child);
      if (s == ETRT_OK) s = etrt_conf_rewrite_shape(&child, depth + 1, name, rank, dims, &sub);
    }
    if (s == ETRT_OK) etrt_pb_write_message_field(w, f.number, &sub);
    etrt_pb_writer_release(&sub);
    if (s != ETRT_OK) return s;
  }
  return s;
}

etrt_status etrt_conf_model_reshape(const uint8_t *model, size_t size, const char *name,
                                    int32_t rank, const int64_t *dims, uint8_t **out,
                                    size_t *out_size) {
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, model, size);
  etrt_pb_writer w;
  etrt_pb_writer_init(&w);
  etrt_status s = etrt_conf_rewrite_shape(&c, 0, name, rank, dims, &w);
  if (s == ETRT_OK) return etrt_pb_writer_finish(&w, out, out_size);
  etrt_pb_writer_release(&w);
  return s;
}
