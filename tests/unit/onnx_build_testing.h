/* Small ONNX models written in C for the builder's tests: a graph is assembled node
 * by node with the library's protobuf writer. Header only (static functions). */
#ifndef ETRT_TESTS_ONNX_BUILD_TESTING_H
#define ETRT_TESTS_ONNX_BUILD_TESTING_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "builder/onnx_model.h"
#include "builder/protobuf.h"
#include "test_util.h"

typedef struct tm_model {
  etrt_pb_writer graph;
} tm_model;

static inline void tm_init(tm_model *m) {
  etrt_pb_writer_init(&m->graph);
  etrt_pb_write_string_field(&m->graph, 2, "test_graph");
}

static inline void tm_put(etrt_pb_writer *w, uint32_t number, etrt_pb_writer *sub) {
  etrt_pb_write_message_field(w, number, sub);
  etrt_pb_writer_release(sub);
}

/* dims: "4" a size, "batch" a symbol, "?" unknown; rank -1: no shape at all. */
static inline etrt_pb_writer tm_value_info(const char *name, int32_t elem, int rank,
                                           const char *const *dims) {
  etrt_pb_writer vi, type, tensor, shape;
  etrt_pb_writer_init(&vi);
  etrt_pb_writer_init(&type);
  etrt_pb_writer_init(&tensor);
  etrt_pb_writer_init(&shape);
  etrt_pb_write_string_field(&vi, 1, name);
  etrt_pb_write_varint_field(&tensor, 1, (uint64_t)elem);
  for (int i = 0; i < rank; ++i) {
    etrt_pb_writer dim;
    etrt_pb_writer_init(&dim);
    if (dims[i][0] >= '0' && dims[i][0] <= '9')
      etrt_pb_write_varint_field(&dim, 1, (uint64_t)atoll(dims[i]));
    else if (dims[i][0] != '?')
      etrt_pb_write_string_field(&dim, 2, dims[i]);
    tm_put(&shape, 1, &dim);
  }
  if (rank >= 0)
    tm_put(&tensor, 2, &shape);
  else
    etrt_pb_writer_release(&shape);
  tm_put(&type, 1, &tensor);
  tm_put(&vi, 2, &type);
  return vi;
}

static inline void tm_input(tm_model *m, const char *name, int rank, const char *const *dims) {
  etrt_pb_writer vi = tm_value_info(name, ETRT_ONNX_FLOAT, rank, dims);
  tm_put(&m->graph, 11, &vi);
}

static inline void tm_output(tm_model *m, const char *name) {
  etrt_pb_writer vi = tm_value_info(name, ETRT_ONNX_FLOAT, -1, NULL);
  tm_put(&m->graph, 12, &vi);
}

static inline void tm_initializer(tm_model *m, const char *name, int32_t elem, int rank,
                                  const int64_t *dims, const void *data, size_t nbytes) {
  etrt_pb_writer t;
  etrt_pb_writer_init(&t);
  for (int i = 0; i < rank; ++i) etrt_pb_write_varint_field(&t, 1, (uint64_t)dims[i]);
  etrt_pb_write_varint_field(&t, 2, (uint64_t)elem);
  etrt_pb_write_string_field(&t, 8, name);
  etrt_pb_write_bytes_field(&t, 9, data, nbytes);
  tm_put(&m->graph, 5, &t);
}

static inline void tm_initializer_f32(tm_model *m, const char *name, int rank, const int64_t *dims,
                                      const float *data) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= (size_t)dims[i];
  tm_initializer(m, name, ETRT_ONNX_FLOAT, rank, dims, data, n * sizeof(float));
}

/* Attributes are passed to tm_node as writers made by these. */
static inline etrt_pb_writer tm_attr_int(const char *name, int64_t v) {
  etrt_pb_writer a;
  etrt_pb_writer_init(&a);
  etrt_pb_write_string_field(&a, 1, name);
  etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_INT);
  etrt_pb_write_varint_field(&a, 3, (uint64_t)v);
  return a;
}

static inline etrt_pb_writer tm_attr_float(const char *name, float f) {
  etrt_pb_writer a;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  etrt_pb_writer_init(&a);
  etrt_pb_write_string_field(&a, 1, name);
  etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_FLOAT);
  etrt_pb_write_fixed32_field(&a, 2, bits);
  return a;
}

static inline etrt_pb_writer tm_attr_string(const char *name, const char *v) {
  etrt_pb_writer a;
  etrt_pb_writer_init(&a);
  etrt_pb_write_string_field(&a, 1, name);
  etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_STRING);
  etrt_pb_write_string_field(&a, 4, v);
  return a;
}

static inline etrt_pb_writer tm_attr_ints(const char *name, int count, const int64_t *v) {
  etrt_pb_writer a;
  etrt_pb_writer_init(&a);
  etrt_pb_write_string_field(&a, 1, name);
  etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_INTS);
  for (int i = 0; i < count; ++i) etrt_pb_write_varint_field(&a, 8, (uint64_t)v[i]);
  return a;
}

/* A GRAPH attribute (an If branch, a Loop or Scan body); the body's writer is consumed
 * (it holds its nodes, inputs and outputs as a model's graph does). */
static inline etrt_pb_writer tm_attr_graph(const char *name, tm_model *body) {
  etrt_pb_writer a;
  etrt_pb_writer_init(&a);
  etrt_pb_write_string_field(&a, 1, name);
  etrt_pb_write_varint_field(&a, 20, ETRT_ONNX_ATTR_GRAPH);
  tm_put(&a, 6, &body->graph);
  return a;
}

/* Inputs and outputs as comma-separated names ("x,w"; an empty name between commas
 * is an omitted optional input), then `num_attributes` attribute writers. */
static inline void tm_node(tm_model *m, const char *op, const char *name, const char *inputs,
                           const char *outputs, int num_attributes, ...) {
  etrt_pb_writer n;
  etrt_pb_writer_init(&n);
  const char *lists[2] = {inputs, outputs};
  for (int l = 0; l < 2; ++l) {
    const char *p = lists[l];
    while (p != NULL && *p) {
      const char *comma = strchr(p, ',');
      size_t len = comma ? (size_t)(comma - p) : strlen(p);
      etrt_pb_write_bytes_field(&n, (uint32_t)(l + 1), p, len);
      if (comma == NULL) break;
      p = comma + 1;
    }
  }
  if (name) etrt_pb_write_string_field(&n, 3, name);
  etrt_pb_write_string_field(&n, 4, op);
  va_list args;
  va_start(args, num_attributes);
  for (int i = 0; i < num_attributes; ++i) {
    etrt_pb_writer a = va_arg(args, etrt_pb_writer);
    tm_put(&n, 5, &a);
  }
  va_end(args);
  tm_put(&m->graph, 1, &n);
}

/* The ModelProto bytes (malloc'd); the graph writer is consumed. */
static inline uint8_t *tm_finish(tm_model *m, int64_t opset, size_t *size) {
  etrt_pb_writer model, op;
  etrt_pb_writer_init(&model);
  etrt_pb_writer_init(&op);
  etrt_pb_write_varint_field(&model, 1, 8);
  etrt_pb_write_string_field(&model, 2, "etrt-test");
  etrt_pb_write_string_field(&op, 1, "");
  etrt_pb_write_varint_field(&op, 2, (uint64_t)opset);
  tm_put(&model, 8, &op);
  tm_put(&model, 7, &m->graph);
  uint8_t *bytes = NULL;
  CHECK_OK(etrt_pb_writer_finish(&model, &bytes, size));
  return bytes;
}

/* x[batch, 4] -> MatMul w1[4,8] -> Add b1 -> Relu -> MatMul w2[8,3] -> Add b2 -> y,
 * nodes named mm1, add1, relu1, mm2, add2. `batch` is a dimension symbol when
 * `symbolic`, else 2. Deterministic weights. */
static inline uint8_t *tm_mlp(int symbolic, size_t *size) {
  tm_model m;
  tm_init(&m);
  const char *dims[2] = {symbolic ? "batch" : "2", "4"};
  tm_input(&m, "x", 2, dims);
  float w1[32], b1[8], w2[24], b2[3];
  for (int i = 0; i < 32; ++i) w1[i] = (float)((i * 7) % 11 - 5) / 8.0f;
  for (int i = 0; i < 8; ++i) b1[i] = (float)(i % 3) / 4.0f;
  for (int i = 0; i < 24; ++i) w2[i] = (float)((i * 5) % 9 - 4) / 6.0f;
  for (int i = 0; i < 3; ++i) b2[i] = 0.25f * (float)i;
  tm_initializer_f32(&m, "w1", 2, (int64_t[]){4, 8}, w1);
  tm_initializer_f32(&m, "b1", 1, (int64_t[]){8}, b1);
  tm_initializer_f32(&m, "w2", 2, (int64_t[]){8, 3}, w2);
  tm_initializer_f32(&m, "b2", 1, (int64_t[]){3}, b2);
  tm_node(&m, "MatMul", "mm1", "x,w1", "h1", 0);
  tm_node(&m, "Add", "add1", "h1,b1", "h2", 0);
  tm_node(&m, "Relu", "relu1", "h2", "h3", 0);
  tm_node(&m, "MatMul", "mm2", "h3,w2", "h4", 0);
  tm_node(&m, "Add", "add2", "h4,b2", "y", 0);
  tm_output(&m, "y");
  return tm_finish(&m, 13, size);
}

#endif
