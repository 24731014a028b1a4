/* Bundled programs (.bpte): an ExecuTorch program together with test cases for its
 * methods (inputs and the outputs eager execution produced for them). Loading one
 * verifies the bundle and loads the embedded program; each case's inputs can be set
 * on a method and its outputs compared with the expected ones. */
#ifndef ETRT_BUNDLED_H
#define ETRT_BUNDLED_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/method.h"
#include "etrt/program.h"
#include "etrt/status.h"
#include "etrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etrt_bundled etrt_bundled;

typedef enum etrt_bundled_kind {
  ETRT_BUNDLED_TENSOR = 1,
  ETRT_BUNDLED_INT = 2,
  ETRT_BUNDLED_BOOL = 3,
  ETRT_BUNDLED_DOUBLE = 4
} etrt_bundled_kind;

/* One input or expected output of a test case. A tensor's data are the file's bytes
 * (contiguous, aligned to the element type): read only, valid while the bundle is. */
typedef struct etrt_bundled_value {
  etrt_bundled_kind kind;
  etrt_tensor_view tensor; /* ETRT_BUNDLED_TENSOR */
  size_t nbytes;           /* bytes of the tensor's data */
  int64_t int_value;       /* ETRT_BUNDLED_INT */
  int bool_value;          /* ETRT_BUNDLED_BOOL */
  double double_value;     /* ETRT_BUNDLED_DOUBLE */
} etrt_bundled_value;

/* Loads a .bpte (the file is mapped and read in place) and the program it holds,
 * with `options` as for etrt_program_load_file. A file that is not a valid bundle
 * is refused with ETRT_ERROR_INVALID_FORMAT naming the field and byte offset. */
etrt_status etrt_bundled_load_file(const char *path, const etrt_program_options *options,
                                   etrt_bundled **out);
/* The same from memory; `data` must outlive the bundle (it is not copied). */
etrt_status etrt_bundled_load_memory(const void *data, size_t size,
                                     const etrt_program_options *options, etrt_bundled **out);
void etrt_bundled_destroy(etrt_bundled *bundled);

/* The embedded program, owned by the bundle. */
const etrt_program *etrt_bundled_program(const etrt_bundled *bundled);

/* Test suites, one per method tested, in file order. */
uint32_t etrt_bundled_suite_count(const etrt_bundled *bundled);
/* The method a suite tests; NULL for an index out of range. */
const char *etrt_bundled_suite_method(const etrt_bundled *bundled, uint32_t suite);
/* Test cases of a suite; 0 for an index out of range. */
uint32_t etrt_bundled_case_count(const etrt_bundled *bundled, uint32_t suite);
etrt_status etrt_bundled_case_io(const etrt_bundled *bundled, uint32_t suite, uint32_t test_case,
                                 uint32_t *num_inputs, uint32_t *num_expected_outputs);
etrt_status etrt_bundled_input(const etrt_bundled *bundled, uint32_t suite, uint32_t test_case,
                               uint32_t index, etrt_bundled_value *out);
etrt_status etrt_bundled_expected_output(const etrt_bundled *bundled, uint32_t suite,
                                         uint32_t test_case, uint32_t index,
                                         etrt_bundled_value *out);

/* Sets every input of a test case on `method` (an instance of the suite's method):
 * tensors in place from the bundle's bytes, ints as scalar inputs. A case whose
 * input count differs from the method's, or a value the method refuses, fails
 * naming the input. */
etrt_status etrt_bundled_set_inputs(const etrt_bundled *bundled, uint32_t suite, uint32_t test_case,
                                    etrt_method *method);

/* Compares an output (host memory) with an expected value. Floating-point elements
 * pass when |actual - expected| <= atol + rtol * (largest |expected| of the tensor);
 * integers and bools must be equal; NaN matches NaN only. *worst gets the largest
 * absolute difference (infinity for a NaN mismatch), *passed whether all passed.
 * A dtype or shape that differs fails the comparison (not the call), *worst set to
 * infinity. */
etrt_status etrt_bundled_compare(const etrt_bundled_value *expected, const etrt_tensor_view *actual,
                                 double rtol, double atol, double *worst, int *passed);

#ifdef __cplusplus
}
#endif
#endif
