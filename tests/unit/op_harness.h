/* Runs one operation through the whole engine path on the CPU: a network of that
 * operation (runtime inputs, constants, shape inputs), a CPU plan, an engine, an
 * execution context with the caller's buffers bound, one enqueue. Shared by the
 * tests/unit/test_ops_*.c files (header-only: each test is its own executable). */
#ifndef ETRT_TESTS_OP_HARNESS_H
#define ETRT_TESTS_OP_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/graph.h"
#include "etrt/network.h"
#include "test_util.h"

enum { OH_INPUT = 0, OH_CONSTANT = 1, OH_SHAPE = 2, OH_OMITTED = 3 };

typedef struct oh_value {
  etrt_dtype dtype;
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
  const void *data;
  int kind; /* OH_INPUT, OH_CONSTANT, OH_SHAPE (1-D int64 shape input), OH_OMITTED */
} oh_value;

/* Value literals: OH_F32(2, (2, 3), values...); a scalar is OH_F32(0, (0), value). */
#define OH_UNPAREN(...) __VA_ARGS__
#define OH_VALUE(kind_, dtype_, ctype, rank_, dims_, ...) \
  ((oh_value){.dtype = dtype_,                            \
              .rank = rank_,                              \
              .dims = {OH_UNPAREN dims_},                 \
              .data = (const ctype[]){__VA_ARGS__},       \
              .kind = kind_})
#define OH_F32(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_FLOAT32, float, rank, dims, __VA_ARGS__)
#define OH_F64(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_FLOAT64, double, rank, dims, __VA_ARGS__)
#define OH_I8(rank, dims, ...) OH_VALUE(OH_INPUT, ETRT_DTYPE_INT8, int8_t, rank, dims, __VA_ARGS__)
#define OH_I32(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_INT32, int32_t, rank, dims, __VA_ARGS__)
#define OH_I64(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_INT64, int64_t, rank, dims, __VA_ARGS__)
#define OH_U8(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_UINT8, uint8_t, rank, dims, __VA_ARGS__)
#define OH_U16(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_UINT16, uint16_t, rank, dims, __VA_ARGS__)
#define OH_U64(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_UINT64, uint64_t, rank, dims, __VA_ARGS__)
#define OH_BOOL(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_BOOL, uint8_t, rank, dims, __VA_ARGS__)
#define OH_HALF(rank, dims, ...) \
  OH_VALUE(OH_INPUT, ETRT_DTYPE_FLOAT16, uint16_t, rank, dims, __VA_ARGS__)
#define OH_CONST(v) oh_as(v, OH_CONSTANT)
#define OH_SHAPE_INPUT(v) oh_as(v, OH_SHAPE)
#define OH_NONE ((oh_value){.rank = -1, .kind = OH_OMITTED})

static inline oh_value oh_as(oh_value v, int kind) {
  v.kind = kind;
  return v;
}

#define OH_INT(n, v) ((etrt_attribute){.name = n, .kind = ETRT_ATTRIBUTE_INT, .i = v})
#define OH_FLOAT(n, v) ((etrt_attribute){.name = n, .kind = ETRT_ATTRIBUTE_FLOAT, .f = v})
#define OH_STRING(n, v) ((etrt_attribute){.name = n, .kind = ETRT_ATTRIBUTE_STRING, .s = v})
#define OH_INTS(n, count_, ...)                  \
  ((etrt_attribute){.name = n,                   \
                    .kind = ETRT_ATTRIBUTE_INTS, \
                    .count = count_,             \
                    .ints = (const int64_t[]){__VA_ARGS__}})

#define OH_MAX_IO 12

/* What one output turned out to be. */
typedef struct oh_output {
  etrt_dtype dtype;
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
} oh_output;

/* Builds `op` over `inputs` with `attributes`, runs it, and copies output i into
 * outputs[i] (each at least 4096 bytes, or NULL to skip the output). info, when not
 * NULL, receives each output's dtype and shape. Returns the first failure: the
 * network refusing the op (at add time), the plan, the engine, or the run. */
static inline etrt_status oh_run(const char *op, uint32_t num_inputs, const oh_value *inputs,
                                 uint32_t num_attributes, const etrt_attribute *attributes,
                                 uint32_t num_outputs, void *const *outputs, oh_output *info) {
  etrt_network *net = NULL;
  etrt_engine *engine = NULL;
  etrt_exec_context *ctx = NULL;
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  int32_t ids[OH_MAX_IO], out_ids[OH_MAX_IO];
  uint32_t io_of_input[OH_MAX_IO];
  uint32_t io_count = 0;
  etrt_status s = etrt_network_create(&net);
  for (uint32_t i = 0; i < num_inputs && s == ETRT_OK; ++i) {
    char name[16];
    snprintf(name, sizeof name, "x%u", i);
    const oh_value *v = &inputs[i];
    switch (v->kind) {
      case OH_OMITTED:
        ids[i] = -1;
        break;
      case OH_CONSTANT:
        s = etrt_network_add_constant(net, name, v->dtype, v->rank, v->dims, v->data, &ids[i]);
        break;
      case OH_SHAPE: {
        int64_t count = v->rank == 0 ? 1 : v->dims[0];
        s = etrt_network_add_shape_input(net, name, count, v->data, v->data, &ids[i]);
        io_of_input[i] = io_count++;
        break;
      }
      default:
        s = etrt_network_add_input(net, name, v->dtype, v->rank, v->dims, v->dims, &ids[i]);
        io_of_input[i] = io_count++;
        break;
    }
  }
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, op, "node", num_inputs, ids, num_outputs, out_ids, num_attributes,
                            attributes);
  for (uint32_t k = 0; k < num_outputs && s == ETRT_OK; ++k) {
    char name[16];
    snprintf(name, sizeof name, "y%u", k);
    s = etrt_network_mark_output(net, out_ids[k], name);
  }
  etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}};
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, &plan, &plan_size);
  if (s == ETRT_OK) s = etrt_engine_deserialize(plan, plan_size, &engine);
  if (s == ETRT_OK) s = etrt_exec_context_create(engine, NULL, &ctx);
  for (uint32_t i = 0; i < num_inputs && s == ETRT_OK; ++i) {
    const oh_value *v = &inputs[i];
    if (v->kind == OH_SHAPE) {
      s = etrt_exec_context_set_input_values(ctx, io_of_input[i], v->data,
                                             v->rank == 0 ? 1 : v->dims[0]);
    } else if (v->kind == OH_INPUT) {
      s = etrt_exec_context_set_input_shape(ctx, io_of_input[i], v->rank, v->dims);
      if (s == ETRT_OK) s = etrt_exec_context_set_address(ctx, io_of_input[i], (void *)v->data);
    }
  }
  static uint8_t scratch[OH_MAX_IO][4096];
  for (uint32_t k = 0; k < num_outputs && s == ETRT_OK; ++k) {
    oh_output o = {0};
    s = etrt_exec_context_output_shape(ctx, io_count + k, &o.rank, o.dims);
    o.dtype = etrt_engine_io_at(engine, io_count + k)->dtype;
    if (info != NULL) info[k] = o;
    void *target = outputs != NULL && outputs[k] != NULL ? outputs[k] : scratch[k];
    /* An output with no size bound is in the engine's memory: copied out after the run. */
    if (s == ETRT_OK && !etrt_engine_io_at(engine, io_count + k)->engine_memory)
      s = etrt_exec_context_set_address(ctx, io_count + k, target);
  }
  if (s == ETRT_OK) s = etrt_exec_context_enqueue(ctx, NULL);
  /* Dims known only at execute are the run's. */
  for (uint32_t k = 0; k < num_outputs && s == ETRT_OK; ++k) {
    oh_output o = {0};
    s = etrt_exec_context_output_shape(ctx, io_count + k, &o.rank, o.dims);
    o.dtype = etrt_engine_io_at(engine, io_count + k)->dtype;
    if (info != NULL) info[k] = o;
    void *held = NULL;
    int64_t bytes = etrt_graph_nbytes(o.dtype, o.rank, o.dims);
    if (s == ETRT_OK && etrt_engine_io_at(engine, io_count + k)->engine_memory)
      s = etrt_exec_context_output_memory(ctx, io_count + k, &held, NULL);
    if (s == ETRT_OK && held != NULL && bytes > 4096)
      s = etrt_error(ETRT_ERROR_INTERNAL, "oh_run: output %u has %lld bytes", k, (long long)bytes);
    if (s == ETRT_OK && held != NULL && outputs != NULL && outputs[k] != NULL)
      memcpy(outputs[k], held, (size_t)bytes);
  }
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
  return s;
}

/* Checks float results against double references within atol + rtol * |want|. */
#define OH_CHECK_FLOATS(got, want, n, tol) oh_check_floats(__FILE__, __LINE__, got, want, n, tol)
static inline void oh_check_floats(const char *file, int line, const float *got, const double *want,
                                   int64_t n, double tol) {
  for (int64_t i = 0; i < n; ++i) {
    double g = got[i], w = want[i];
    if (isnan(w) ? !isnan(g) : !(fabs(g - w) <= tol + tol * fabs(w))) {
      etrt_test_fail(file, line, "element %lld: got %.9g, want %.9g", (long long)i, g, w);
      return;
    }
  }
}

/* Checks integer results (any width, as int64) exactly. */
#define OH_CHECK_INTS(got_expr, want, n)                                                           \
  do {                                                                                             \
    for (int64_t i_ = 0; i_ < (int64_t)(n); ++i_) {                                                \
      long long g_ = (long long)(got_expr)[i_], w_ = (long long)(want)[i_];                        \
      if (g_ != w_) {                                                                              \
        etrt_test_fail(__FILE__, __LINE__, "element %lld: got %lld, want %lld", (long long)i_, g_, \
                       w_);                                                                        \
        break;                                                                                     \
      }                                                                                            \
    }                                                                                              \
  } while (0)

/* The op is refused when the network adds it, with a message naming both texts. */
#define OH_CHECK_REFUSED(call, text1, text2)                                                   \
  do {                                                                                         \
    etrt_clear_error();                                                                        \
    etrt_status s_ = (call);                                                                   \
    if (s_ == ETRT_OK) {                                                                       \
      etrt_test_fail(__FILE__, __LINE__, "%s was accepted", #call);                            \
    } else if (strstr(etrt_last_error(), text1) == NULL ||                                     \
               strstr(etrt_last_error(), text2) == NULL) {                                     \
      etrt_test_fail(__FILE__, __LINE__, "message '%s' lacks '%s' or '%s'", etrt_last_error(), \
                     text1, text2);                                                            \
    }                                                                                          \
  } while (0)

#endif
