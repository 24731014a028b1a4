/* Programs the runtime and contract tests share: MLPs built with the network API,
 * loaded as a method, and the staging-log counter of the contract tests. */
#ifndef ETRT_TEST_PROGRAMS_H
#define ETRT_TEST_PROGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/method.h"
#include "etrt/network.h"
#include "etrt/program.h"

/* An MLP in -> hidden -> out (Gemm + Relu, Gemm), batch between min_batch and
 * max_batch, weights from `seed`; the plan is built for `device`. */
typedef struct etrt_test_mlp {
  int64_t in, hidden, out;
  float *w1, *b1, *w2, *b2;
} etrt_test_mlp;

etrt_status etrt_test_mlp_plan(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out,
                               int64_t min_batch, int64_t max_batch, uint32_t seed,
                               etrt_device device, const char *name, uint8_t **plan,
                               size_t *plan_size);
/* The same MLP as a fully delegated program (host-planned I/O). */
etrt_status etrt_test_mlp_program(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out,
                                  int64_t min_batch, int64_t max_batch, uint32_t seed,
                                  etrt_device device, const char *name, uint8_t **pte,
                                  size_t *pte_size);
/* The reference answer for `batch` rows of x. */
void etrt_test_mlp_reference(const etrt_test_mlp *mlp, const float *x, int64_t batch, float *y);
void etrt_test_mlp_free(etrt_test_mlp *mlp);

/* An MLP program (batch 0 to max_batch) loaded with its "forward" method. */
typedef struct etrt_test_mlp_fixture {
  etrt_test_mlp mlp;
  uint8_t *pte;
  size_t size;
  etrt_program *program;
  etrt_method *method;
} etrt_test_mlp_fixture;

/* Builds the program for `device`, loads it and creates the method; 0 (after
 * printing the last error) on failure. */
int etrt_test_mlp_fixture_open(etrt_test_mlp_fixture *f, int64_t in, int64_t hidden, int64_t out,
                               int64_t max_batch, etrt_device device, const char *name,
                               uint32_t seed);
void etrt_test_mlp_fixture_close(etrt_test_mlp_fixture *f);
/* Two threads execute the method `runs` times each on the same 2-row input (rule 8:
 * calls on one method instance serialize); returns how many outputs were further
 * than `tolerance` from the reference, or -1 when the input cannot be set. */
int etrt_test_mlp_fixture_race(etrt_test_mlp_fixture *f, int runs, double tolerance);

/* `batch` rows of `in` inputs in [-1, 1), varied by `salt`. */
void etrt_test_mlp_fill_input(float *x, int64_t batch, int64_t in, int salt);

/* Counts the Info log lines that announce host staging (DESIGN.md rule 4) between
 * start and stop, keeping the last one. */
void etrt_test_staging_log_start(void);
void etrt_test_staging_log_stop(void);
int etrt_test_staging_log_count(void);
const char *etrt_test_staging_log_last(void);

/* Programs of KernelCall instructions (the portable operators), written with the
 * repository's .pte writer: values are added one by one (tensors planned in the host
 * arena, or constants), then instructions naming operators "name.overload". */
#define ETRT_TEST_KP_MAX_VALUES 96
#define ETRT_TEST_KP_MAX_CALLS 16
typedef struct etrt_test_kp {
  struct etrt_pte_builder *b;
  struct etrt_pte_value *values; /* ETRT_TEST_KP_MAX_VALUES */
  uint32_t num_values;
  int64_t arena;
  const char *ops[ETRT_TEST_KP_MAX_CALLS];
  uint32_t num_ops;
  int32_t call_op[ETRT_TEST_KP_MAX_CALLS];
  int32_t call_args[ETRT_TEST_KP_MAX_CALLS][16];
  uint32_t call_num_args[ETRT_TEST_KP_MAX_CALLS];
  uint32_t num_calls;
} etrt_test_kp;

void etrt_test_kp_init(etrt_test_kp *p);
/* A tensor of `dtype` (constant: its bytes; NULL: planned); returns its value index. */
int32_t etrt_test_kp_tensor(etrt_test_kp *p, etrt_dtype dtype, int32_t rank, const int32_t *sizes,
                            const void *constant, int dynamic);
/* Gives tensor `value` the dim order `order` (rank entries), e.g. channels-last. */
void etrt_test_kp_dim_order(etrt_test_kp *p, int32_t value, const uint8_t *order);
int32_t etrt_test_kp_int(etrt_test_kp *p, int64_t value);
int32_t etrt_test_kp_double(etrt_test_kp *p, double value);
int32_t etrt_test_kp_bool(etrt_test_kp *p, int value);
int32_t etrt_test_kp_none(etrt_test_kp *p);
int32_t etrt_test_kp_string(etrt_test_kp *p, const char *text);
/* An int[] (ExecuTorch lists name Int values). */
int32_t etrt_test_kp_ints(etrt_test_kp *p, const int64_t *items, uint32_t count);
/* An int[] of existing Int values (SymInts that instructions compute). */
int32_t etrt_test_kp_int_list(etrt_test_kp *p, const int32_t *int_values, uint32_t count);
/* A float[] value. */
int32_t etrt_test_kp_doubles(etrt_test_kp *p, const double *items, uint32_t count);
/* A Tensor?[] (index.Tensor's indices): value indices, -1 for None. */
int32_t etrt_test_kp_optional_tensor_list(etrt_test_kp *p, const int32_t *items, uint32_t count);
/* A TensorList (the return value of an operator with several out tensors). */
int32_t etrt_test_kp_tensor_list(etrt_test_kp *p, const int32_t *items, uint32_t count);
void etrt_test_kp_call(etrt_test_kp *p, const char *op, const int32_t *args, uint32_t num_args);
/* The program's bytes (free them); releases the builder. */
uint8_t *etrt_test_kp_write(etrt_test_kp *p, const int32_t *inputs, uint32_t num_inputs,
                            const int32_t *outputs, uint32_t num_outputs, size_t *size);
/* Loads the program, creates "forward", sets the inputs and executes; the program
 * and method are returned (destroy them) whenever they were created. */
etrt_status etrt_test_kp_execute(const uint8_t *pte, size_t size, const etrt_tensor_view *inputs,
                                 uint32_t num_inputs, etrt_program **program, etrt_method **method);

/* Executes as etrt_test_kp_execute, copies `out_bytes` of output 0 into `out`, gives
 * its view (the data pointer is then stale) and destroys the method and program. */
etrt_status etrt_test_kp_run(const uint8_t *pte, size_t size, const etrt_tensor_view *inputs,
                             uint32_t num_inputs, void *out, size_t out_bytes,
                             etrt_tensor_view *view);

/* Largest |a - b| over n floats. */
double etrt_test_max_diff(const float *a, const float *b, size_t n);

#endif
