/* Programs the runtime and contract tests share: MLPs built with the network API. */
#ifndef ETRT_TEST_PROGRAMS_H
#define ETRT_TEST_PROGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/network.h"

/* An MLP in -> hidden -> out (Gemm + Relu, Gemm), batch between min_batch and
 * max_batch, weights from `seed`; the plan is built for `device`. */
typedef struct etrt_test_mlp {
  int64_t in, hidden, out;
  float *w1, *b1, *w2, *b2;
} etrt_test_mlp;

etrt_status etrt_test_mlp_plan(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out, int64_t min_batch,
                               int64_t max_batch, uint32_t seed, etrt_device device, const char *name,
                               uint8_t **plan, size_t *plan_size);
/* The same MLP as a fully delegated program (host-planned I/O). */
etrt_status etrt_test_mlp_program(etrt_test_mlp *mlp, int64_t in, int64_t hidden, int64_t out, int64_t min_batch,
                                  int64_t max_batch, uint32_t seed, etrt_device device, const char *name,
                                  uint8_t **pte, size_t *pte_size);
/* The reference answer for `batch` rows of x. */
void etrt_test_mlp_reference(const etrt_test_mlp *mlp, const float *x, int64_t batch, float *y);
void etrt_test_mlp_free(etrt_test_mlp *mlp);

/* Largest |a - b| over n floats. */
double etrt_test_max_diff(const float *a, const float *b, size_t n);

#endif
