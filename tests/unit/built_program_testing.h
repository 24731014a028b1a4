/* Building an ONNX model written in C (onnx_build_testing.h), reading the program
 * built and running it: for builder tests that check what a built program holds or
 * computes. Header only (static functions). */
#ifndef ETRT_TESTS_BUILT_PROGRAM_TESTING_H
#define ETRT_TESTS_BUILT_PROGRAM_TESTING_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/build.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "pte/pte.h"
#include "test_util.h"

/* Builds `onnx` (freed here) for `device` with these --shape-values texts. `size`
 * is read here, after the argument expression that makes the model writes it. */
static inline etrt_status bp_build(uint8_t *onnx, const size_t *size, const char *device,
                                   const char *const *values, uint32_t count, uint8_t **pte,
                                   size_t *pte_size) {
  etrt_build_options o;
  etrt_build_options_init(&o);
  o.device = device;
  o.shape_values = values;
  o.num_shape_values = count;
  etrt_status s = etrt_build_onnx_memory(onnx, *size, &o, pte, pte_size);
  free(onnx);
  return s;
}

typedef struct bp_loaded {
  uint8_t *pte;
  etrt_program *program;
  etrt_method *method; /* NULL when loading failed (the check has said so) */
} bp_loaded;

/* Loads the program (taking `pte`) and makes its "forward" method. */
static inline void bp_load(uint8_t *pte, size_t size, bp_loaded *out) {
  memset(out, 0, sizeof *out);
  out->pte = pte;
  CHECK_OK(etrt_program_load_memory(pte, size, NULL, &out->program));
  if (out->program != NULL) CHECK_OK(etrt_method_create(out->program, "forward", &out->method));
}

static inline void bp_unload(bp_loaded *l) {
  etrt_method_destroy(l->method);
  etrt_program_destroy(l->program);
  free(l->pte);
}

static inline etrt_tensor_view bp_view(void *data, etrt_dtype dtype, int32_t rank,
                                       const int64_t *sizes) {
  etrt_tensor_view v = {.data = data, .dtype = dtype, .rank = rank};
  for (int32_t a = 0; a < rank; ++a) v.sizes[a] = sizes[a];
  return v;
}

/* A built program's bytes, parsed, with its "forward" plan. */
typedef struct bp_built {
  uint8_t *bytes;
  size_t size;
  etrt_pte_program *program;
  const etrt_pte_plan *plan;
} bp_built;

/* Parses the bytes (when there are any) and finds the "forward" plan, checking both. */
static inline void bp_parse(bp_built *b) {
  if (b->bytes) CHECK_OK(etrt_pte_parse(b->bytes, b->size, &b->program));
  if (b->program) b->plan = etrt_pte_program_find_plan(b->program, "forward");
  CHECK(b->plan != NULL);
}

/* The plan bytes of the "forward" plan's one delegate (none when it has not exactly one). */
static inline etrt_pte_bytes bp_delegate(const bp_built *b) {
  etrt_pte_bytes payload = {NULL, 0};
  if (b->plan != NULL && b->plan->delegates_count == 1)
    CHECK_OK(etrt_pte_program_delegate_data(b->program, &b->plan->delegates[0], &payload));
  return payload;
}

/* A malloc'd copy of them and their size (NULL and 0 when there are none). */
static inline uint8_t *bp_delegate_copy(const bp_built *b, size_t *size) {
  etrt_pte_bytes payload = bp_delegate(b);
  uint8_t *copy = payload.size > 0 ? (uint8_t *)malloc(payload.size) : NULL;
  if (copy != NULL) memcpy(copy, payload.data, payload.size);
  *size = copy != NULL ? payload.size : 0;
  return copy;
}

static inline void bp_drop(bp_built *b) {
  etrt_pte_program_free(b->program);
  free(b->bytes);
}

#endif
