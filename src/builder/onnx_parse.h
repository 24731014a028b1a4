/* The ONNX reader's parse context, shared by the files that read one kind of message
 * each (onnx_graph.c, onnx_attribute.c, onnx_tensor_proto.c, onnx_value_info.c,
 * onnx_external.c): the model being filled, the field path that errors name, arena
 * allocation, and readers of single fields. Every message is read in two passes over
 * its fields: pass 1 checks wire types and counts repeated fields, pass 2 fills arrays
 * allocated at their exact size. */
#ifndef ETRT_BUILDER_ONNX_PARSE_H
#define ETRT_BUILDER_ONNX_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/file.h"
#include "base/status.h"
#include "builder/onnx_model.h"
#include "builder/protobuf.h"

typedef struct etrt_onnx_external {
  char *location;
  etrt_file_map map;
} etrt_onnx_external;

struct etrt_onnx_model {
  etrt_arena *arena; /* every array of the parsed model */
  const etrt_onnx_graph *graph;
  int64_t ir_version;
  etrt_onnx_str producer_name, producer_version;
  const etrt_onnx_opset *opsets;
  size_t opset_count;
  const etrt_onnx_str *function_domains, *function_names;
  size_t function_count;
  etrt_file_map file; /* the model's own bytes when loaded from a file */
  etrt_onnx_external *externals;
  size_t external_count, external_capacity;
};

/* A view of nothing: what an absent string field reads as. */
extern const char etrt_onnx_empty[1];
extern const etrt_onnx_str etrt_onnx_no_str;

/* How deep subgraphs (If, Loop and Scan bodies) may nest below the main graph. */
#define ETRT_ONNX_MAX_GRAPH_DEPTH 8

typedef struct etrt_onnx_parser {
  etrt_onnx_model *model;
  int graph_depth;      /* subgraphs open around the field being read */
  const char *base_dir; /* NULL: external data refused */
  char path[512];
  size_t path_len;
} etrt_onnx_parser;

/* Appends to the field path; returns the mark to pop back to. */
size_t etrt_onnx_path_push(etrt_onnx_parser *p, const char *fmt, ...) ETRT_PRINTF(2, 3);
void etrt_onnx_path_pop(etrt_onnx_parser *p, size_t mark);
/* A lower layer's message, with the field path in front. */
etrt_status etrt_onnx_wrap(etrt_onnx_parser *p, etrt_status status);
/* An error naming the field path and the byte offset. */
etrt_status etrt_onnx_fail(etrt_onnx_parser *p, etrt_status status, size_t offset, const char *fmt,
                           ...) ETRT_PRINTF(4, 5);
/* `count` zeroed elements in the model's arena; NULL (and ETRT_OK) for 0. */
void *etrt_onnx_alloc(etrt_onnx_parser *p, size_t count, size_t element, etrt_status *status);

#define ETRT_ONNX_TRY(p, expr) ETRT_RETURN_IF_ERROR(etrt_onnx_wrap((p), (expr)))

/* Allocates `count` elements for `ptr`, returning from the caller on failure. */
#define ETRT_ONNX_ALLOC(p, ptr, count)                                    \
  do {                                                                    \
    etrt_status alloc_status_;                                            \
    (ptr) = etrt_onnx_alloc((p), (count), sizeof *(ptr), &alloc_status_); \
    if (alloc_status_ != ETRT_OK) return alloc_status_;                   \
  } while (0)

/* Walks a message's fields: `body` runs for each, with `f` the field. */
#define ETRT_ONNX_FOR_FIELDS(p, cursor, f, ...)                        \
  do {                                                                 \
    etrt_pb_cursor_rewind(cursor);                                     \
    for (;;) {                                                         \
      int more_;                                                       \
      ETRT_ONNX_TRY((p), etrt_pb_cursor_next((cursor), &(f), &more_)); \
      if (!more_) break;                                               \
      __VA_ARGS__                                                      \
    }                                                                  \
  } while (0)

/* --- field readers: each names the field path in its errors */

etrt_status etrt_onnx_read_str(etrt_onnx_parser *p, const etrt_pb_field *f, etrt_onnx_str *out);
etrt_status etrt_onnx_read_int64(etrt_onnx_parser *p, const etrt_pb_field *f, int64_t *out);
etrt_status etrt_onnx_read_int32(etrt_onnx_parser *p, const etrt_pb_field *f, int32_t *out);

/* Counts the values of one occurrence of a repeated scalar field (pass 1). */
etrt_status etrt_onnx_count_scalars(etrt_onnx_parser *p, const etrt_pb_field *f,
                                    etrt_pb_scalar kind, size_t *total);

/* How fill_scalars stores each value. */
typedef enum etrt_onnx_scalar_as {
  ETRT_ONNX_AS_INT64,
  ETRT_ONNX_AS_INT32,
  ETRT_ONNX_AS_UINT64,
  ETRT_ONNX_AS_FLOAT,
  ETRT_ONNX_AS_DOUBLE
} etrt_onnx_scalar_as;

/* Appends one occurrence's values to out[*filled..] as raw bits (pass 2). */
etrt_status etrt_onnx_fill_scalars(etrt_onnx_parser *p, const etrt_pb_field *f,
                                   etrt_onnx_scalar_as as, void *out, size_t capacity,
                                   size_t *filled);

/* Pass 1 of a repeated message or string field: check the wire type and count. */
etrt_status etrt_onnx_count_len(etrt_onnx_parser *p, const etrt_pb_field *f, const char *name,
                                size_t *count);

/* Refuses a singular message field given a second time (`already` non-NULL). */
etrt_status etrt_onnx_refuse_twice(etrt_onnx_parser *p, const etrt_pb_field *f, const void *already,
                                   const char *name);

#endif
