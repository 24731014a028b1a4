#include "builder/tensor_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/file.h"
#include "base/status.h"
#include "builder/onnx_model.h"
#include "builder/protobuf.h"

/* The test data keeps sequence and optional values in SequenceProto / OptionalProto
 * files, which have no magic either: name (1), elem_type (2, 0..5), then values in
 * length-delimited fields 3..7. Bytes that fail as a TensorProto but have exactly that
 * layout are named for what they are. */
static int etrt_tensor_pb_is_sequence_or_optional(const uint8_t *data, size_t size,
                                                  etrt_onnx_str *name) {
  etrt_pb_cursor c;
  etrt_pb_cursor_init(&c, data, size);
  etrt_pb_field f;
  int more, has_elem_type = 0;
  name->data = "";
  name->size = 0;
  while (etrt_pb_cursor_next(&c, &f, &more) == ETRT_OK && more) {
    if (f.number == 1 && f.wire == ETRT_PB_WIRE_LEN) {
      name->data = (const char *)f.data;
      name->size = f.size;
    } else if (f.number == 2 && f.wire == ETRT_PB_WIRE_VARINT && f.value <= 5) {
      has_elem_type = 1;
    } else if (!(f.number >= 3 && f.number <= 7 && f.wire == ETRT_PB_WIRE_LEN)) {
      return 0;
    }
  }
  return more == 0 && has_elem_type;
}

static int etrt_tensor_pb_printable(etrt_onnx_str s) {
  if (s.size > 64) return 0;
  for (size_t i = 0; i < s.size; ++i) {
    if (s.data[i] < 0x20 || s.data[i] > 0x7e) return 0;
  }
  return 1;
}

etrt_status etrt_tensor_pb_read(const uint8_t *data, size_t size, const char *what,
                                etrt_tensor_pb *out) {
  memset(out, 0, sizeof *out);
  etrt_onnx_model *holder;
  const etrt_onnx_tensor *t;
  etrt_status s = etrt_onnx_tensor_parse(data, size, what, &holder, &t);
  etrt_onnx_host_tensor host;
  if (s == ETRT_OK) {
    s = etrt_onnx_tensor_to_host(t, &host);
    if (s != ETRT_OK) {
      etrt_onnx_model_free(holder);
      if (what != NULL) etrt_error_context(s, "'%s': ", what);
    }
  }
  if (s != ETRT_OK) {
    /* The layout probe may overwrite the message; keep the tensor parser's. */
    char message[1024];
    snprintf(message, sizeof message, "%s", etrt_last_error());
    etrt_onnx_str name;
    if (data != NULL && etrt_tensor_pb_is_sequence_or_optional(data, size, &name)) {
      int show = etrt_tensor_pb_printable(name);
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "'%s': holds a SequenceProto or OptionalProto%s%.*s%s, not a "
                        "TensorProto, where a tensor is expected",
                        what ? what : "TensorProto", show ? " '" : "", show ? (int)name.size : 0,
                        name.data, show ? "'" : "");
    }
    return etrt_error(s, "%s", message);
  }
  char *name = malloc(t->name.size + 1);
  void *copy = malloc(host.nbytes ? host.nbytes : 1);
  if (name == NULL || copy == NULL) {
    free(name);
    free(copy);
    etrt_onnx_host_tensor_release(&host);
    etrt_onnx_model_free(holder);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "'%s': out of memory for %zu bytes",
                      what ? what : "TensorProto", host.nbytes);
  }
  memcpy(name, t->name.data, t->name.size);
  name[t->name.size] = '\0';
  memcpy(copy, host.data, host.nbytes);
  out->name = name;
  out->dtype = host.dtype;
  out->rank = host.rank;
  memcpy(out->sizes, host.dims, sizeof out->sizes);
  out->data = copy;
  out->nbytes = host.nbytes;
  etrt_onnx_host_tensor_release(&host);
  etrt_onnx_model_free(holder);
  return ETRT_OK;
}

etrt_status etrt_tensor_pb_read_file(const char *path, etrt_tensor_pb *out) {
  memset(out, 0, sizeof *out);
  etrt_file_map map;
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &map));
  etrt_status s = etrt_tensor_pb_read(map.data, map.size, path, out);
  etrt_file_map_close(&map);
  return s;
}

void etrt_tensor_pb_release(etrt_tensor_pb *tensor) {
  free(tensor->name);
  free(tensor->data);
  memset(tensor, 0, sizeof *tensor);
}

etrt_status etrt_tensor_pb_encode(const char *name, const etrt_tensor_view *tensor, uint8_t **data,
                                  size_t *size) {
  *data = NULL;
  *size = 0;
  int32_t onnx_type;
  ETRT_RETURN_IF_ERROR(etrt_onnx_dtype_from_etrt(tensor->dtype, &onnx_type));
  if (tensor->rank < 0 || tensor->rank > ETRT_MAX_RANK) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "TensorProto '%s': rank %d is not 0..%d",
                      name ? name : "", (int)tensor->rank, ETRT_MAX_RANK);
  }
  int64_t numel = etrt_tensor_view_numel(tensor);
  size_t nbytes;
  if (numel < 0 || (uint64_t)numel > SIZE_MAX ||
      etrt_mul_overflow_size((size_t)numel, etrt_dtype_size(tensor->dtype), &nbytes)) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "TensorProto '%s': bad sizes", name ? name : "");
  }
  if (nbytes > 0 && tensor->data == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "TensorProto '%s': NULL data", name ? name : "");
  }
  etrt_pb_writer w;
  etrt_pb_writer_init(&w);
  for (int32_t i = 0; i < tensor->rank; ++i) {
    etrt_pb_write_varint_field(&w, 1, (uint64_t)tensor->sizes[i]);
  }
  etrt_pb_write_varint_field(&w, 2, (uint64_t)onnx_type);
  if (name != NULL) etrt_pb_write_string_field(&w, 8, name);
  etrt_pb_write_bytes_field(&w, 9, tensor->data, nbytes);
  return etrt_pb_writer_finish(&w, data, size);
}

etrt_status etrt_tensor_pb_write_file(const char *path, const char *name,
                                      const etrt_tensor_view *tensor) {
  uint8_t *data;
  size_t size;
  ETRT_RETURN_IF_ERROR(etrt_tensor_pb_encode(name, tensor, &data, &size));
  etrt_status s = etrt_file_write_atomic(path, data, size);
  free(data);
  return s;
}
