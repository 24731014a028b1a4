#include "engine/ops/cpu/gemm_util.h"

#include <stdatomic.h>
#include <string.h>

#include "base/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ETRT_GEMM_X86 1
#endif

/* GotoBLAS-style blocking. A task owns a block of C (ETRT_GEMM_MC rows by
 * ETRT_GEMM_NC columns); for each slice of ETRT_GEMM_KC products it packs its B
 * panel (slivers of NR columns, k-major) and its A panel (slivers of MR rows, k-major,
 * alpha folded in) on the stack, then runs the micro-kernel over MR x NR tiles that
 * stay in registers. Tiles at the edges run the same micro-kernel on zero-padded
 * panels through a scratch tile, so every C element sees the same operations in the
 * same order of k, whatever the task split. */
#define ETRT_GEMM_MC 48  /* a multiple of every MR */
#define ETRT_GEMM_NC 128 /* a multiple of every NR */
#define ETRT_GEMM_MAX_MR 8
#define ETRT_GEMM_MAX_NR 32
/* Products below this many multiply-adds run on the calling thread. */
#define ETRT_GEMM_PARALLEL_MIN (1 << 17)

#define ETRT_GEMM_KERNEL_TYPE(T, NAME)                                                            \
  typedef void (*etrt_gemm_micro_##NAME)(int64_t kc, const T *ap, const T *bp, T *c, int64_t ldc, \
                                         int load);                                               \
  typedef struct etrt_gemm_kernel_##NAME {                                                        \
    int mr, nr;                                                                                   \
    etrt_gemm_micro_##NAME run;                                                                   \
  } etrt_gemm_kernel_##NAME;
ETRT_GEMM_KERNEL_TYPE(float, f32)
ETRT_GEMM_KERNEL_TYPE(double, f64)

/* The portable micro-kernel: fixed-size loops the compiler unrolls and vectorises
 * for the baseline instruction set. */
#define ETRT_GEMM_MICRO_PORTABLE(NAME, T, MR, NR)                                       \
  static void NAME(int64_t kc, const T *ap, const T *bp, T *c, int64_t ldc, int load) { \
    T acc[MR][NR];                                                                      \
    for (int r = 0; r < MR; ++r)                                                        \
      for (int j = 0; j < NR; ++j) acc[r][j] = load ? c[r * ldc + j] : (T)0;            \
    for (int64_t k = 0; k < kc; ++k) {                                                  \
      const T *a = ap + k * MR, *b = bp + k * NR;                                       \
      for (int r = 0; r < MR; ++r)                                                      \
        for (int j = 0; j < NR; ++j) acc[r][j] += a[r] * b[j];                          \
    }                                                                                   \
    for (int r = 0; r < MR; ++r)                                                        \
      for (int j = 0; j < NR; ++j) c[r * ldc + j] = acc[r][j];                          \
  }
ETRT_GEMM_MICRO_PORTABLE(etrt_gemm_micro_portable_f32, float, 4, 16)
ETRT_GEMM_MICRO_PORTABLE(etrt_gemm_micro_portable_f64, double, 4, 8)

#ifdef ETRT_GEMM_X86
/* 6 x 16 tile: twelve ymm accumulators, fused multiply-add. */
__attribute__((target("avx2,fma"))) static void etrt_gemm_micro_avx2(int64_t kc, const float *ap,
                                                                     const float *bp, float *c,
                                                                     int64_t ldc, int load) {
  __m256 acc[6][2];
  for (int r = 0; r < 6; ++r)
    for (int h = 0; h < 2; ++h)
      acc[r][h] = load ? _mm256_loadu_ps(c + r * ldc + 8 * h) : _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m256 b0 = _mm256_loadu_ps(bp + k * 16), b1 = _mm256_loadu_ps(bp + k * 16 + 8);
    for (int r = 0; r < 6; ++r) {
      __m256 a = _mm256_broadcast_ss(ap + k * 6 + r);
      acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < 6; ++r)
    for (int h = 0; h < 2; ++h) _mm256_storeu_ps(c + r * ldc + 8 * h, acc[r][h]);
}

/* 8 x 32 tile: sixteen zmm accumulators, fused multiply-add. */
__attribute__((target("avx512f"))) static void etrt_gemm_micro_avx512(int64_t kc, const float *ap,
                                                                      const float *bp, float *c,
                                                                      int64_t ldc, int load) {
  __m512 acc[8][2];
  for (int r = 0; r < 8; ++r)
    for (int h = 0; h < 2; ++h)
      acc[r][h] = load ? _mm512_loadu_ps(c + r * ldc + 16 * h) : _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b0 = _mm512_loadu_ps(bp + k * 32), b1 = _mm512_loadu_ps(bp + k * 32 + 16);
    for (int r = 0; r < 8; ++r) {
      __m512 a = _mm512_set1_ps(ap[k * 8 + r]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < 8; ++r)
    for (int h = 0; h < 2; ++h) _mm512_storeu_ps(c + r * ldc + 16 * h, acc[r][h]);
}
#endif

static atomic_int etrt_gemm_isa_cap = ETRT_CPU_ISA_AVX512;

void etrt_cpu_gemm_isa_limit(etrt_cpu_isa limit) {
  atomic_store_explicit(&etrt_gemm_isa_cap, (int)limit, memory_order_relaxed);
}

etrt_cpu_isa etrt_cpu_gemm_isa(void) {
  int cap = atomic_load_explicit(&etrt_gemm_isa_cap, memory_order_relaxed);
#ifdef ETRT_GEMM_X86
  if (cap >= ETRT_CPU_ISA_AVX512 && __builtin_cpu_supports("avx512f")) return ETRT_CPU_ISA_AVX512;
  if (cap >= ETRT_CPU_ISA_AVX2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return ETRT_CPU_ISA_AVX2;
#else
  (void)cap;
#endif
  return ETRT_CPU_ISA_PORTABLE;
}

static etrt_gemm_kernel_f32 etrt_gemm_kernel_for_f32(void) {
  switch (etrt_cpu_gemm_isa()) {
#ifdef ETRT_GEMM_X86
    case ETRT_CPU_ISA_AVX512:
      return (etrt_gemm_kernel_f32){8, 32, etrt_gemm_micro_avx512};
    case ETRT_CPU_ISA_AVX2:
      return (etrt_gemm_kernel_f32){6, 16, etrt_gemm_micro_avx2};
#endif
    default:
      return (etrt_gemm_kernel_f32){4, 16, etrt_gemm_micro_portable_f32};
  }
}

static etrt_gemm_kernel_f64 etrt_gemm_kernel_for_f64(void) {
  return (etrt_gemm_kernel_f64){4, 8, etrt_gemm_micro_portable_f64};
}

#define ETRT_GEMM_DEFINE(NAME, T, KC)                                                           \
  typedef struct etrt_gemm_job_##NAME {                                                         \
    etrt_gemm_kernel_##NAME kernel;                                                             \
    int64_t m, n, k_count;                                                                      \
    T alpha;                                                                                    \
    const T *a;                                                                                 \
    int64_t a_row, a_col;                                                                       \
    const T *b;                                                                                 \
    int64_t b_row, b_col;                                                                       \
    T *c;                                                                                       \
    int64_t ldc;                                                                                \
    int accumulate;                                                                             \
    int64_t col_blocks;                                                                         \
  } etrt_gemm_job_##NAME;                                                                       \
                                                                                                \
  /* C rows [i0, i1) by columns [j0, j1). */                                                    \
  static void etrt_gemm_block_##NAME(const etrt_gemm_job_##NAME *g, int64_t i0, int64_t i1,     \
                                     int64_t j0, int64_t j1) {                                  \
    const int mr = g->kernel.mr, nr = g->kernel.nr;                                             \
    T apack[ETRT_GEMM_MC * KC], bpack[KC * ETRT_GEMM_NC];                                       \
    T tile[ETRT_GEMM_MAX_MR * ETRT_GEMM_MAX_NR];                                                \
    for (int64_t k0 = 0; k0 < g->k_count; k0 += KC) {                                           \
      int64_t kc = g->k_count - k0 < KC ? g->k_count - k0 : KC;                                 \
      int load = g->accumulate || k0 > 0;                                                       \
      for (int64_t js = j0; js < j1; js += nr) {                                                \
        T *bs = bpack + (js - j0) * kc;                                                         \
        int64_t cols = j1 - js < nr ? j1 - js : nr;                                             \
        for (int64_t k = 0; k < kc; ++k) {                                                      \
          const T *brow = g->b + (k0 + k) * g->b_row + js * g->b_col;                           \
          T *dst = bs + k * nr;                                                                 \
          int64_t j = 0;                                                                        \
          if (g->b_col == 1)                                                                    \
            for (; j < cols; ++j) dst[j] = brow[j];                                             \
          else                                                                                  \
            for (; j < cols; ++j) dst[j] = brow[j * g->b_col];                                  \
          for (; j < nr; ++j) dst[j] = 0;                                                       \
        }                                                                                       \
      }                                                                                         \
      for (int64_t ii = i0; ii < i1; ii += ETRT_GEMM_MC) {                                      \
        int64_t mc = i1 - ii < ETRT_GEMM_MC ? i1 - ii : ETRT_GEMM_MC;                           \
        for (int64_t is = 0; is < mc; is += mr) {                                               \
          T *as = apack + is * kc;                                                              \
          int64_t rows = mc - is < mr ? mc - is : mr;                                           \
          for (int64_t r = 0; r < mr; ++r) {                                                    \
            const T *arow = g->a + (ii + is + r) * g->a_row + k0 * g->a_col;                    \
            if (r < rows)                                                                       \
              for (int64_t k = 0; k < kc; ++k) as[k * mr + r] = g->alpha * arow[k * g->a_col];  \
            else                                                                                \
              for (int64_t k = 0; k < kc; ++k) as[k * mr + r] = 0;                              \
          }                                                                                     \
        }                                                                                       \
        for (int64_t js = j0; js < j1; js += nr) {                                              \
          const T *bs = bpack + (js - j0) * kc;                                                 \
          int64_t cols = j1 - js < nr ? j1 - js : nr;                                           \
          for (int64_t is = 0; is < mc; is += mr) {                                             \
            int64_t rows = mc - is < mr ? mc - is : mr;                                         \
            T *ct = g->c + (ii + is) * g->ldc + js;                                             \
            if (rows == mr && cols == nr) {                                                     \
              g->kernel.run(kc, apack + is * kc, bs, ct, g->ldc, load);                         \
              continue;                                                                         \
            }                                                                                   \
            for (int64_t r = 0; r < rows && load; ++r)                                          \
              memcpy(tile + r * nr, ct + r * g->ldc, (size_t)cols * sizeof(T));                 \
            g->kernel.run(kc, apack + is * kc, bs, tile, nr, load);                             \
            for (int64_t r = 0; r < rows; ++r)                                                  \
              memcpy(ct + r * g->ldc, tile + r * nr, (size_t)cols * sizeof(T));                 \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  static void etrt_gemm_tasks_##NAME(void *ctx, int64_t begin, int64_t end) {                   \
    const etrt_gemm_job_##NAME *g = ctx;                                                        \
    for (int64_t t = begin; t < end; ++t) {                                                     \
      int64_t i0 = t / g->col_blocks * ETRT_GEMM_MC, j0 = t % g->col_blocks * ETRT_GEMM_NC;     \
      int64_t i1 = g->m - i0 < ETRT_GEMM_MC ? g->m : i0 + ETRT_GEMM_MC;                         \
      int64_t j1 = g->n - j0 < ETRT_GEMM_NC ? g->n : j0 + ETRT_GEMM_NC;                         \
      etrt_gemm_block_##NAME(g, i0, i1, j0, j1);                                                \
    }                                                                                           \
  }                                                                                             \
                                                                                                \
  void etrt_cpu_gemm_strided_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a, \
                                    int64_t a_row, int64_t a_col, const T *b, int64_t b_row,    \
                                    int64_t b_col, T *c, int64_t ldc, int accumulate) {         \
    if (m <= 0 || n <= 0) return;                                                               \
    if (k_count <= 0) { /* no products: C becomes 0, or stays */                                \
      for (int64_t i = 0; i < m && !accumulate; ++i)                                            \
        memset(c + i * ldc, 0, (size_t)n * sizeof(T));                                          \
      return;                                                                                   \
    }                                                                                           \
    etrt_gemm_job_##NAME g = {etrt_gemm_kernel_for_##NAME(),                                    \
                              m,                                                                \
                              n,                                                                \
                              k_count,                                                          \
                              alpha,                                                            \
                              a,                                                                \
                              a_row,                                                            \
                              a_col,                                                            \
                              b,                                                                \
                              b_row,                                                            \
                              b_col,                                                            \
                              c,                                                                \
                              ldc,                                                              \
                              accumulate,                                                       \
                              (n + ETRT_GEMM_NC - 1) / ETRT_GEMM_NC};                           \
    int64_t tasks = (m + ETRT_GEMM_MC - 1) / ETRT_GEMM_MC * g.col_blocks;                       \
    if (tasks == 1 || m * n * k_count < ETRT_GEMM_PARALLEL_MIN)                                 \
      etrt_gemm_tasks_##NAME(&g, 0, tasks);                                                     \
    else                                                                                        \
      etrt_parallel_for(tasks, 1, etrt_gemm_tasks_##NAME, &g);                                  \
  }                                                                                             \
                                                                                                \
  void etrt_cpu_gemm_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a,         \
                            int64_t a_row, int64_t a_col, const T *b, int64_t ldb, T *c,        \
                            int64_t ldc, int accumulate) {                                      \
    etrt_cpu_gemm_strided_##NAME(m, n, k_count, alpha, a, a_row, a_col, b, ldb, 1, c, ldc,      \
                                 accumulate);                                                   \
  }

ETRT_GEMM_DEFINE(f32, float, 256)
ETRT_GEMM_DEFINE(f64, double, 128)
