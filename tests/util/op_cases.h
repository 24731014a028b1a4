/* The operator cases shared by the executor comparison tests: one operation per
 * network, built for cuda:0, run by a CPU context and by a context on another
 * executor (the sim executor in tests/unit/test_op_cases.c, the CUDA executor in
 * tests/gpu/test_cuda_ops.c) on the same inputs, outputs compared. The tests walk
 * the other executor's table and fail for a row without a case here: a new operator
 * brings its case (docs/adding-an-operator.md).
 *
 * Floats must agree within |other - cpu| <= tol * max(1, |cpu|) (1e-5 for
 * elementwise and row-wise work, 1e-4 for matrix products and convolutions in FP32
 * mode); reduced-precision cases compare the relative norm of the difference.
 * Integers, bools and float16 casts must agree exactly. A negative tol runs the case
 * without comparing (an output that depends on the executor, such as EtrtSmId). */
#ifndef ETRT_TESTS_OP_CASES_H
#define ETRT_TESTS_OP_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "device/device.h"
#include "engine/engine.h"
#include "etrt/network.h"

#define CO_MAX_IO 12

/* Data kinds for generated inputs. */
enum { CO_RANDOM = 0, CO_POSITIVE = 1, CO_GIVEN = 2, CO_UNIT = 3, CO_FULL = 4 };

typedef struct co_value {
  etrt_dtype dtype;
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
  int constant; /* a constant of the network rather than an input */
  /* CO_RANDOM, CO_POSITIVE (floats in [0.1, 4)), CO_UNIT (in [-0.9, 0.9)), CO_GIVEN, CO_FULL
   * (8-bit integers over their whole range; other integers are small) */
  int fill;
  const void *data; /* CO_GIVEN */
} co_value;

typedef struct co_case {
  const char *label;
  const char *op;
  uint32_t num_inputs;
  const co_value *inputs;
  uint32_t num_attributes;
  const etrt_attribute *attributes;
  uint32_t num_outputs;
  double tol;
  etrt_precision precision;
} co_case;

/* Every case, in the order of the list. */
const co_case *co_cases(size_t *count);

/* Cases whose index input is out of range: every executor must fail the run with
 * an error naming the op (op_cases.c, after the valid cases). */
const co_case *co_bad_cases(size_t *count);

/* Runs a bad case on a CPU context and on a context of driver `d` (executor
 * `kind`) and checks that both report an error naming the op: the CPU at enqueue,
 * the other executor at its first report after the run completed (executor.h). */
void co_run_bad(const co_case *c, const etrt_device_driver *d, etrt_executor_kind kind);

/* Builds the case's network for cuda:0, runs it on a CPU context and on a context of
 * driver `d` (which must get executor `kind`), and compares every output; with
 * `keep`, hands back the other executor's output 0 (malloc'd) without comparing. */
void co_run(const co_case *c, const etrt_device_driver *d, etrt_executor_kind kind, void **keep);

/* Runs every case of each of the `count` operator types in `ops` (a table's rows).
 * Returns the number of those types that have no case, each named on stderr. */
int co_run_ops(const char *const *ops, size_t count, const etrt_device_driver *d,
               etrt_executor_kind kind);

#endif
