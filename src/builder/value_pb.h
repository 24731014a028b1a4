/* Standalone .pb value files: a TensorProto, a SequenceProto of tensors, or an
 * OptionalProto holding a tensor, a sequence of tensors or nothing (the ONNX backend
 * test data's inputs and outputs; `etrt run --input`).
 *
 *   etrt_value_pb v;
 *   ETRT_RETURN_IF_ERROR(etrt_value_pb_read_file("input_0.pb", &v));
 *   ... v.kind, v.present, v.tensors[0 .. v.count) ...
 *   etrt_value_pb_release(&v);
 *
 * The three have no magic: the bytes are read as a TensorProto first (tensor_pb.h) and,
 * where that fails and they have the layout of the other two (name 1, elem_type 2, a
 * value in fields 3..7), as a SequenceProto or OptionalProto. Those are read strictly:
 * an element type other than a tensor (sparse tensors, maps, sequences of sequences),
 * a value in a field its elem_type does not name, or a second value of an optional
 * is refused naming the field and its byte offset. */
#ifndef ETRT_BUILDER_VALUE_PB_H
#define ETRT_BUILDER_VALUE_PB_H

#include <stddef.h>
#include <stdint.h>

#include "builder/tensor_pb.h"
#include "etrt/status.h"

typedef enum etrt_value_pb_kind {
  ETRT_VALUE_PB_TENSOR = 0,   /* one tensor */
  ETRT_VALUE_PB_SEQUENCE = 1, /* count tensors */
  ETRT_VALUE_PB_OPTIONAL = 2  /* present: a tensor, or a sequence (holds_sequence) */
} etrt_value_pb_kind;

/* Most tensors one sequence file may hold. */
#define ETRT_VALUE_PB_MAX_TENSORS 4096

typedef struct etrt_value_pb {
  char *name; /* NUL-terminated, "" when the file names none; owned */
  etrt_value_pb_kind kind;
  int present;             /* OPTIONAL: holds a value; 1 for the others */
  int holds_sequence;      /* OPTIONAL: the value held is a sequence */
  etrt_tensor_pb *tensors; /* count tensors, owned (NULL when count is 0) */
  uint32_t count;
} etrt_value_pb;

/* Parses `size` bytes; `what` names the source in messages (may be NULL). */
etrt_status etrt_value_pb_read(const uint8_t *data, size_t size, const char *what,
                               etrt_value_pb *out);
etrt_status etrt_value_pb_read_file(const char *path, etrt_value_pb *out);
void etrt_value_pb_release(etrt_value_pb *value);

/* Serializes `count` host tensors as a SequenceProto named `name` (may be NULL) into
 * malloc'd bytes. */
etrt_status etrt_value_pb_encode_sequence(const char *name, const etrt_tensor_view *tensors,
                                          uint32_t count, uint8_t **data, size_t *size);
/* The same, written to `path` (all or nothing). */
etrt_status etrt_value_pb_write_sequence(const char *path, const char *name,
                                         const etrt_tensor_view *tensors, uint32_t count);

#endif
