/* The blocked GEMM of the CPU kernels: every micro-kernel the processor has (the
 * portable one, AVX2 and AVX-512 where present) against a double-precision reference
 * over shapes that cross every blocking edge, with transposed operands, alpha and
 * accumulation, and the few-row products that skip the packing (B's rows contiguous, or
 * its columns: dot products); and the same bits with one thread and with several. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread_pool.h"
#include "engine/ops/cpu/gemm_util.h"
#include "test_util.h"

typedef struct shape {
  int64_t m, n, k;
  int trans_a, trans_b, accumulate;
  float alpha;
} shape;

static const shape shapes[] = {
    {1, 1, 1, 0, 0, 0, 1.0f},
    {5, 7, 3, 0, 0, 0, 1.0f},
    {8, 32, 16, 0, 0, 1, 0.5f},
    {49, 129, 257, 0, 0, 0, 1.0f},
    {50, 130, 300, 1, 0, 1, -2.0f},
    {97, 33, 513, 0, 1, 0, 1.0f},
    {13, 300, 70, 1, 1, 1, 0.25f},
    {128, 256, 64, 0, 0, 0, 1.0f},
    {3, 1000, 27, 0, 0, 0, 1.0f},
    {200, 5, 600, 0, 1, 1, 1.5f},
    /* A few rows, which skip the packing where B's rows are contiguous. */
    {1, 2048, 512, 0, 0, 1, 0.5f},
    {2, 77, 300, 1, 0, 0, 1.0f},
    {1, 40, 33, 0, 1, 0, 1.0f},
    /* B stored transposed: dot products of contiguous rows, columns over the pool */
    {1, 1000, 1280, 0, 1, 1, 0.5f},
    {3, 70, 37, 0, 1, 0, -1.0f},
};

static float *random_floats(size_t n, unsigned seed) {
  float *p = malloc(n * sizeof *p + 1);
  srand(seed);
  for (size_t i = 0; i < n; ++i) p[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
  return p;
}

/* Runs shape s; returns C (caller frees) and checks it against the reference. */
static float *run_f32(const shape *s) {
  float *a = random_floats((size_t)(s->m * s->k), 1), *b = random_floats((size_t)(s->k * s->n), 2);
  float *c = random_floats((size_t)(s->m * s->n), 3);
  double *want = malloc((size_t)(s->m * s->n) * sizeof *want + 1);
  int64_t a_row = s->trans_a ? 1 : s->k, a_col = s->trans_a ? s->m : 1;
  int64_t b_row = s->trans_b ? 1 : s->n, b_col = s->trans_b ? s->k : 1;
  for (int64_t i = 0; i < s->m; ++i)
    for (int64_t j = 0; j < s->n; ++j) {
      double acc = s->accumulate ? c[i * s->n + j] : 0.0;
      for (int64_t k = 0; k < s->k; ++k)
        acc += (double)s->alpha * a[i * a_row + k * a_col] * b[k * b_row + j * b_col];
      want[i * s->n + j] = acc;
    }
  etrt_cpu_gemm_strided_f32(s->m, s->n, s->k, s->alpha, a, a_row, a_col, b, b_row, b_col, c, s->n,
                            s->accumulate);
  int bad = 0;
  for (int64_t i = 0; i < s->m * s->n; ++i)
    bad += !(fabs(c[i] - want[i]) <= 1e-5 * (double)s->k * 4 + 1e-5 * fabs(want[i]));
  if (bad)
    fprintf(stderr, "isa %d, %lldx%lldx%lld: %d elements off\n", (int)etrt_cpu_gemm_isa(),
            (long long)s->m, (long long)s->n, (long long)s->k, bad);
  CHECK_EQ_INT(bad, 0);
  free(a);
  free(b);
  free(want);
  return c;
}

static void test_every_micro_kernel(void) {
  for (int isa = ETRT_CPU_ISA_PORTABLE; isa <= ETRT_CPU_ISA_AVX512; ++isa) {
    etrt_cpu_gemm_isa_limit((etrt_cpu_isa)isa);
    if ((int)etrt_cpu_gemm_isa() != isa) continue; /* the processor lacks it */
    printf("  micro-kernel %d\n", isa);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) free(run_f32(&shapes[s]));
  }
  etrt_cpu_gemm_isa_limit(ETRT_CPU_ISA_AVX512);
}

static void test_threads_give_the_same_bits(void) {
  CHECK_OK(etrt_thread_pool_acquire(4));
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) {
    etrt_thread_pool_limit_set(1);
    float *one = run_f32(&shapes[s]);
    etrt_thread_pool_limit_set(4);
    float *four = run_f32(&shapes[s]);
    CHECK(memcmp(one, four, (size_t)(shapes[s].m * shapes[s].n) * sizeof(float)) == 0);
    free(one);
    free(four);
  }
  etrt_thread_pool_limit_set(0);
  etrt_thread_pool_release();
}

static void test_f64_and_empty(void) {
  enum { M = 37, N = 21, K = 300 };
  double *a = malloc(M * K * sizeof *a), *b = malloc(K * N * sizeof *b),
         *c = malloc(M * N * sizeof *c);
  for (int i = 0; i < M * K; ++i) a[i] = (i % 17) * 0.125 - 1.0;
  for (int i = 0; i < K * N; ++i) b[i] = (i % 13) * 0.25 - 1.5;
  etrt_cpu_gemm_f64(M, N, K, 2.0, a, K, 1, b, N, c, N, 0);
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += 2.0 * a[i * K + k] * b[k * N + j];
      bad += fabs(c[i * N + j] - want) > 1e-9;
    }
  CHECK_EQ_INT(bad, 0);
  /* No products: C is cleared, or kept when accumulating. */
  c[0] = 5.0;
  etrt_cpu_gemm_f64(M, N, 0, 1.0, a, K, 1, b, N, c, N, 1);
  CHECK(c[0] == 5.0);
  etrt_cpu_gemm_f64(M, N, 0, 1.0, a, K, 1, b, N, c, N, 0);
  CHECK(c[0] == 0.0 && c[M * N - 1] == 0.0);
  free(a);
  free(b);
  free(c);
}

int main(void) {
  RUN_TEST(test_every_micro_kernel);
  RUN_TEST(test_threads_give_the_same_bits);
  RUN_TEST(test_f64_and_empty);
  return TEST_EXIT();
}
