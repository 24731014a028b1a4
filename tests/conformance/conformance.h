/* The ONNX backend conformance runner (etrt_conformance): each test case of the
 * ONNX backend test data built with the builder, run with the runtime and its
 * outputs compared with the expected ones, in a child process of its own.
 *
 *   conformance.c          options, the case list, the workers, the report
 *   conformance_case.c     one case, in-process: build, load, run every data set
 *   conformance_compare.c  an output against the expected tensor (ONNX tolerances)
 *   conformance_reason.c   a refusal message cut down to a short key for counting
 *   conformance_model.c    a model with a graph input's declared shape replaced */
#ifndef ETRT_CONFORMANCE_H
#define ETRT_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

typedef enum etrt_conf_outcome {
  ETRT_CONF_PASSED = 0,
  ETRT_CONF_FAILED = 1,     /* wrong output, crash, time-out, or a failure while running */
  ETRT_CONF_UNSUPPORTED = 2 /* refused cleanly by the builder or the runtime */
} etrt_conf_outcome;

/* What a child hands back through its pipe: one fixed-size record, smaller than
 * PIPE_BUF so that the write is atomic and never blocks. */
typedef struct etrt_conf_result {
  int32_t outcome;     /* etrt_conf_outcome */
  uint32_t data_sets;  /* test_data_set_* run */
  uint32_t partitions; /* engine partitions in the program */
  uint32_t gpu_ops;    /* operations in partitions on a GPU */
  uint32_t cpu_ops;    /* operations in partitions on the CPU */
  char key[96];        /* the reason, short enough to count: "no operator Loop" */
  char detail[1024];   /* the whole message, or the worst element of a mismatch */
} etrt_conf_result;

/* The ONNX backend runner's tolerances: |actual - expected| <= atol + rtol * |expected|. */
typedef struct etrt_conf_tolerance {
  double rtol;
  double atol;
  /* The expected values were drawn at random (Bernoulli, the Random* generators): no
   * generator can reproduce them, so the dtype and shape are compared and each value
   * must be one that the expected tensor holds (0 or 1 for Bernoulli). */
  int drawn;
  /* Training Dropout: which elements are kept was drawn at random, so each value of
   * the float output must be 0 or the data's (input 0) scaled by 1 / (1 - ratio)
   * (input 1: etrt_conf_compare_dropout); the mask compares as drawn. */
  int dropout;
} etrt_conf_tolerance;

/* The tolerance for `case_name` (some cases' precision needs more than ONNX's
 * defaults: the table in conformance_compare.c says which and why). */
etrt_conf_tolerance etrt_conf_tolerance_for(const char *case_name, etrt_dtype dtype);

/* Compares one output with its expected tensor. Floats within `tol` (NaN equals NaN,
 * infinities equal when their signs are), integers and bools exactly. Returns 1 when
 * they match; otherwise 0 with the reason (dtype, shape, or the worst element and
 * how many are off) in `detail`. `expected` may be stored as uint16 where `actual`
 * is a 16-bit float (the test data keeps bfloat16 that way). */
int etrt_conf_compare(const etrt_tensor_view *actual, const etrt_tensor_view *expected,
                      etrt_conf_tolerance tol, char *detail, size_t size);

/* Training Dropout's output against its data and ratio: the dtype and shape are the
 * expected ones, and each value is 0 or data * 1 / (1 - ratio) within ONNX's
 * tolerances. Returns 1 when it is; otherwise 0 with the reason in `detail`. */
int etrt_conf_compare_dropout(const etrt_tensor_view *actual, const etrt_tensor_view *expected,
                              const etrt_tensor_view *data, const etrt_tensor_view *ratio,
                              char *detail, size_t size);

/* Runs the case in `case_dir` (model.onnx, test_data_set_*) on `device` ("cpu" or
 * "cuda:N"); fills `out`. The model is built as a user would build it, from the model
 * and the device alone; with `flags_from_data` also with --shape bounds and
 * --shape-values derived from the test data (for debugging). Meant for a child
 * process: a crash or hang is the parent's to notice. */
void etrt_conf_case_run(const char *case_dir, const char *case_name, const char *device,
                        int flags_from_data, etrt_conf_result *out);

/* Cuts a refusal message down to a key under which like refusals are counted:
 * "the engine has no operator Loop (node 'x')" -> "no operator Loop";
 * "partition 0 (cpu): node 'n' (Pad): mode 'wrap' is not supported" ->
 * "Pad: mode '' is not supported". Quoted names are emptied and numbers become N. */
void etrt_conf_reason_key(const char *message, char *key, size_t size);

/* The ONNX model `model` with the declared shape of graph input `name` replaced by
 * `dims` (for inputs whose fixed shape in the model the test data contradict:
 * conformance_case.c). Writes a malloc'd copy to *out; an input of another name, or a
 * model without one, is copied unchanged. Refuses bytes that are not protobuf. */
etrt_status etrt_conf_model_reshape(const uint8_t *model, size_t size, const char *name,
                                    int32_t rank, const int64_t *dims, uint8_t **out,
                                    size_t *out_size);

#endif
