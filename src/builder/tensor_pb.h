/* Standalone serialized TensorProto files (.pb): the inputs and expected outputs of
 * the ONNX backend test data (test_data_set_N/input_M.pb), accepted by `etrt run`.
 *
 *   etrt_tensor_pb t;
 *   ETRT_RETURN_IF_ERROR(etrt_tensor_pb_read_file("input_0.pb", &t));
 *   ... t.name, t.dtype, t.rank, t.sizes, t.data (t.nbytes) ...
 *   etrt_tensor_pb_release(&t);
 *
 * A TensorProto has no magic number: the bytes are parsed strictly (see onnx_model.h)
 * and must describe a tensor etrt can hold (a known element type, rank at most
 * ETRT_MAX_RANK, data matching the dims). External data, STRING tensors and the
 * SequenceProto / OptionalProto files are refused here (value_pb.h reads them). */
#ifndef ETRT_BUILDER_TENSOR_PB_H
#define ETRT_BUILDER_TENSOR_PB_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

typedef struct etrt_tensor_pb {
  char *name; /* NUL-terminated, "" when the file names none; owned */
  etrt_dtype dtype;
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  void *data; /* contiguous little-endian elements, malloc'd (never NULL); owned */
  size_t nbytes;
} etrt_tensor_pb;

/* Parses `size` bytes; `what` names the source in messages (may be NULL). */
etrt_status etrt_tensor_pb_read(const uint8_t *data, size_t size, const char *what,
                                etrt_tensor_pb *out);
etrt_status etrt_tensor_pb_read_file(const char *path, etrt_tensor_pb *out);
void etrt_tensor_pb_release(etrt_tensor_pb *tensor);

/* Serializes a host tensor as a TensorProto (dims, data_type, name, raw_data) into
 * malloc'd bytes. `name` may be NULL. */
etrt_status etrt_tensor_pb_encode(const char *name, const etrt_tensor_view *tensor, uint8_t **data,
                                  size_t *size);
/* The same, written to `path` (all or nothing). */
etrt_status etrt_tensor_pb_write_file(const char *path, const char *name,
                                      const etrt_tensor_view *tensor);

#endif
