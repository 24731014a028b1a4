/* Running one operation definition directly (prepare, infer, CPU kernel) on host
 * tensors, for the op tests. */
#ifndef ETRT_TESTS_OP_TEST_UTIL_H
#define ETRT_TESTS_OP_TEST_UTIL_H

#include <stdarg.h>
#include <string.h>

#include "engine/op.h"

static inline etrt_tensor op_tensor(etrt_dtype dtype, void *data, int32_t rank, ...) {
  etrt_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.data = data;
  t.rank = rank;
  va_list args;
  va_start(args, rank);
  for (int32_t i = 0; i < rank; ++i) t.dims[i] = va_arg(args, int64_t);
  va_end(args);
  return t;
}

static inline etrt_tensor op_absent(void) {
  etrt_tensor t;
  memset(&t, 0, sizeof t);
  t.rank = -1;
  t.dtype = ETRT_DTYPE_INVALID;
  return t;
}

/* Infers the output (dtype, rank, dims written into *out, keeping out->data) and runs
 * the CPU kernel. */
static inline etrt_status op_run(const char *op_type, uint32_t num_inputs,
                                 const etrt_tensor *inputs, etrt_tensor *out,
                                 uint32_t num_attributes, const etrt_attribute *attributes) {
  const etrt_op_def *def = etrt_op_find(op_type);
  if (def == NULL) return ETRT_ERROR_NOT_FOUND;
  _Alignas(64) unsigned char state[512];
  memset(state, 0, sizeof state);
  int32_t ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  etrt_node node = {.op_type = op_type,
                    .name = "t",
                    .num_inputs = num_inputs,
                    .num_outputs = 1,
                    .num_attributes = num_attributes,
                    .inputs = ids,
                    .outputs = ids,
                    .attributes = attributes,
                    .def = def,
                    .state = state,
                    .run_cpu = etrt_op_cpu_find(op_type)};
  if (def->state_size > sizeof state) return ETRT_ERROR_INTERNAL;
  if (def->prepare != NULL) {
    etrt_status s = def->prepare(&node, state);
    if (s != ETRT_OK) return s;
  }
  void *data = out->data;
  memset(out, 0, sizeof *out);
  out->dtype = ETRT_DTYPE_INVALID;
  etrt_status s = def->infer(&node, inputs, out);
  if (s != ETRT_OK) return s;
  out->data = data;
  if (node.run_cpu == NULL) return ETRT_ERROR_NOT_FOUND;
  return node.run_cpu(&node, inputs, out);
}

#endif
