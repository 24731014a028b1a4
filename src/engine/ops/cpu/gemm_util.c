#include "engine/ops/cpu/gemm_util.h"

#include <stdatomic.h>
#include <string.h>

#include "base/thread_pool.h"
#include "engine/ops/cpu/vector_math.h"

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
#ifndef ETRT_GEMM_X86
ETRT_GEMM_MICRO_PORTABLE(etrt_gemm_micro_portable_f32, float, 4, 16)
#endif
ETRT_GEMM_MICRO_PORTABLE(etrt_gemm_micro_portable_f64, double, 4, 8)

#ifdef ETRT_GEMM_X86
/* The x86 micro-kernels: MR rows of two vectors each, accumulated in named registers
 * (arrays of vectors make compilers keep a copy in memory). ROWS(X) expands X once
 * per row; V is the vector type, and LOAD/STORE/ZERO/BCAST/MADD its operations. */
#define ETRT_GEMM_X86_DECLARE(r) V acc##r##a, acc##r##b;
#define ETRT_GEMM_X86_INIT(r)                    \
  acc##r##a = load ? LOAD(c + (r)*ldc) : ZERO(); \
  acc##r##b = load ? LOAD(c + (r)*ldc + LANES) : ZERO();
#define ETRT_GEMM_X86_STEP(r)            \
  {                                      \
    V a_ = BCAST(ap + k * MR + (r));     \
    acc##r##a = MADD(a_, b0, acc##r##a); \
    acc##r##b = MADD(a_, b1, acc##r##b); \
  }
#define ETRT_GEMM_X86_STORE(r)   \
  STORE(c + (r)*ldc, acc##r##a); \
  STORE(c + (r)*ldc + LANES, acc##r##b);
#define ETRT_GEMM_X86_BODY                                                  \
  ROWS(ETRT_GEMM_X86_DECLARE)                                               \
  ROWS(ETRT_GEMM_X86_INIT)                                                  \
  for (int64_t k = 0; k < kc; ++k) {                                        \
    V b0 = LOAD(bp + k * 2 * LANES), b1 = LOAD(bp + k * 2 * LANES + LANES); \
    ROWS(ETRT_GEMM_X86_STEP)                                                \
  }                                                                         \
  ROWS(ETRT_GEMM_X86_STORE)

/* 6 x 8 with SSE2 (the x86-64 baseline): twelve xmm accumulators, multiply then add. */
#define V __m128
#define LANES 4
#define MR 6
#define LOAD _mm_loadu_ps
#define STORE _mm_storeu_ps
#define ZERO _mm_setzero_ps
#define BCAST _mm_load1_ps
#define MADD(a, b, c) _mm_add_ps(_mm_mul_ps(a, b), c)
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
static void etrt_gemm_micro_sse2(int64_t kc, const float *ap, const float *bp, float *c,
                                 int64_t ldc, int load) {
  ETRT_GEMM_X86_BODY
}
#undef V
#undef LANES
#undef LOAD
#undef STORE
#undef ZERO
#undef BCAST
#undef MADD

/* 6 x 16 with AVX2: twelve ymm accumulators, fused multiply-add. */
#define V __m256
#define LANES 8
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#define ZERO _mm256_setzero_ps
#define BCAST _mm256_broadcast_ss
#define MADD _mm256_fmadd_ps
__attribute__((target("avx2,fma"))) static void etrt_gemm_micro_avx2(int64_t kc, const float *ap,
                                                                     const float *bp, float *c,
                                                                     int64_t ldc, int load) {
  ETRT_GEMM_X86_BODY
}
#undef V
#undef LANES
#undef MR
#undef LOAD
#undef STORE
#undef ZERO
#undef BCAST
#undef MADD
#undef ROWS

/* 8 x 32 with AVX-512: sixteen zmm accumulators, fused multiply-add. */
#define V __m512
#define LANES 16
#define MR 8
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#define ZERO _mm512_setzero_ps
#define BCAST(p) _mm512_set1_ps(*(p))
#define MADD _mm512_fmadd_ps
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
__attribute__((target("avx512f"))) static void etrt_gemm_micro_avx512(int64_t kc, const float *ap,
                                                                      const float *bp, float *c,
                                                                      int64_t ldc, int load) {
  ETRT_GEMM_X86_BODY
}
#undef V
#undef LANES
#undef MR
#undef LOAD
#undef STORE
#undef ZERO
#undef BCAST
#undef MADD
#undef ROWS
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
    default:
      return (etrt_gemm_kernel_f32){6, 8, etrt_gemm_micro_sse2};
#else
    default:
      return (etrt_gemm_kernel_f32){4, 16, etrt_gemm_micro_portable_f32};
#endif
  }
}

static etrt_gemm_kernel_f64 etrt_gemm_kernel_for_f64(void) {
  return (etrt_gemm_kernel_f64){4, 8, etrt_gemm_micro_portable_f64};
}

/* Products with at most this many rows of A (and fewer than the micro-kernel's) skip
 * the packing. */
#define ETRT_GEMM_ROWS_UNPACKED 4

/* A few rows of A times a B whose columns are contiguous (B stored transposed, [n][k]:
 * a classifier's Gemm with transB, at batch 1): each element of C is one dot product
 * of two contiguous rows, where packing B would cost as much as the products (1.7 ms
 * for a 1280 x 1000 head, against 0.1 as dot products). Columns are split over the
 * pool; each element is computed the same way whatever the split. */
typedef struct etrt_gemm_dots_job {
  int64_t m, k_count;
  float alpha;
  const float *a, *b;
  int64_t a_row, b_col;
  float *c;
  int64_t ldc;
  int accumulate;
} etrt_gemm_dots_job;

static void etrt_gemm_dots_columns(void *ctx, int64_t begin, int64_t end) {
  const etrt_gemm_dots_job *g = ctx;
  for (int64_t i = 0; i < g->m; ++i)
    for (int64_t j = begin; j < end; ++j) {
      float dot = 0.0f;
      etrt_cpu_dot_f32(g->a + i * g->a_row, g->b + j * g->b_col, g->k_count, &dot);
      float *cij = g->c + i * g->ldc + j;
      *cij = g->alpha * dot + (g->accumulate ? *cij : 0.0f);
    }
}

static int etrt_gemm_dots_f32(int64_t m, int64_t n, int64_t k_count, float alpha, const float *a,
                              int64_t a_row, int64_t a_col, const float *b, int64_t b_row,
                              int64_t b_col, float *c, int64_t ldc, int accumulate) {
  if (a_col != 1 || b_row != 1) return 0;
  etrt_gemm_dots_job g = {.m = m,
                          .k_count = k_count,
                          .alpha = alpha,
                          .a = a,
                          .b = b,
                          .a_row = a_row,
                          .b_col = b_col,
                          .c = c,
                          .ldc = ldc,
                          .accumulate = accumulate};
  etrt_parallel_for(n, 1 + 65536 / (m * k_count + 1), etrt_gemm_dots_columns, &g);
  return 1;
}

/* The double GEMM has no such path: its products always take the blocked one. */
#define etrt_gemm_dots_f64(...) 0

#define ETRT_GEMM_DEFINE(NAME, T, KC)                                                              \
  typedef struct etrt_gemm_job_##NAME {                                                            \
    etrt_gemm_kernel_##NAME kernel;                                                                \
    int64_t m, n, k_count;                                                                         \
    T alpha;                                                                                       \
    const T *a;                                                                                    \
    int64_t a_row, a_col;                                                                          \
    const T *b;                                                                                    \
    int64_t b_row, b_col;                                                                          \
    T *c;                                                                                          \
    int64_t ldc;                                                                                   \
    int accumulate;                                                                                \
    int64_t col_blocks, task_rows;                                                                 \
    const T *packed_b; /* B packed ahead (etrt_cpu_gemm_pack_b), or NULL */                        \
    int64_t task_cols; /* columns of C per task: NC, or several blocks of packed B */              \
  } etrt_gemm_job_##NAME;                                                                          \
                                                                                                   \
  /* Columns [j0, j1) of B's rows [k0, k0 + kc) as the micro-kernel reads them: panels of nr       \
   * columns (zeros past j1), each kc rows of nr. */                                               \
  static void etrt_gemm_pack_panel_##NAME(const T *b, int64_t b_row, int64_t b_col, int64_t k0,    \
                                          int64_t kc, int64_t j0, int64_t j1, int nr, T *out) {    \
    for (int64_t js = j0; js < j1; js += nr) {                                                     \
      T *bs = out + (js - j0) * kc;                                                                \
      int64_t cols = j1 - js < nr ? j1 - js : nr;                                                  \
      for (int64_t k = 0; k < kc; ++k) {                                                           \
        const T *brow = b + (k0 + k) * b_row + js * b_col;                                         \
        T *dst = bs + k * nr;                                                                      \
        int64_t j = 0;                                                                             \
        if (b_col == 1)                                                                            \
          for (; j < cols; ++j) dst[j] = brow[j];                                                  \
        else                                                                                       \
          for (; j < cols; ++j) dst[j] = brow[j * b_col];                                          \
        for (; j < nr; ++j) dst[j] = 0;                                                            \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* Where B packed ahead holds column block j0 / NC's slice of rows from k0 (a multiple of        \
   * KC): the blocks one after another, each its slices one after another, each slice kc           \
   * rows of the block's width rounded up to nr. */                                                \
  static int64_t etrt_gemm_packed_at_##NAME(int64_t n, int64_t k_count, int nr, int64_t j0,        \
                                            int64_t k0) {                                          \
    int64_t width = n - j0 < ETRT_GEMM_NC ? n - j0 : ETRT_GEMM_NC;                                 \
    return j0 * k_count + k0 * ((width + nr - 1) / nr * nr);                                       \
  }                                                                                                \
                                                                                                   \
  /* C rows [i0, i1) by columns [j0, j1). */                                                       \
  static void etrt_gemm_block_##NAME(const etrt_gemm_job_##NAME *g, int64_t i0, int64_t i1,        \
                                     int64_t j0, int64_t j1) {                                     \
    const int mr = g->kernel.mr, nr = g->kernel.nr;                                                \
    T apack[ETRT_GEMM_MC * KC], bpack[KC * ETRT_GEMM_NC];                                          \
    T tile[ETRT_GEMM_MAX_MR * ETRT_GEMM_MAX_NR];                                                   \
    for (int64_t k0 = 0; k0 < g->k_count; k0 += KC) {                                              \
      int64_t kc = g->k_count - k0 < KC ? g->k_count - k0 : KC;                                    \
      int load = g->accumulate || k0 > 0;                                                          \
      if (g->packed_b == NULL)                                                                     \
        etrt_gemm_pack_panel_##NAME(g->b, g->b_row, g->b_col, k0, kc, j0, j1, nr, bpack);          \
      for (int64_t ii = i0; ii < i1; ii += ETRT_GEMM_MC) {                                         \
        int64_t mc = i1 - ii < ETRT_GEMM_MC ? i1 - ii : ETRT_GEMM_MC;                              \
        for (int64_t is = 0; is < mc; is += mr) {                                                  \
          T *as = apack + is * kc;                                                                 \
          int64_t rows = mc - is < mr ? mc - is : mr;                                              \
          for (int64_t r = 0; r < mr; ++r) {                                                       \
            const T *arow = g->a + (ii + is + r) * g->a_row + k0 * g->a_col;                       \
            if (r < rows)                                                                          \
              for (int64_t k = 0; k < kc; ++k) as[k * mr + r] = g->alpha * arow[k * g->a_col];     \
            else                                                                                   \
              for (int64_t k = 0; k < kc; ++k) as[k * mr + r] = 0;                                 \
          }                                                                                        \
        }                                                                                          \
        for (int64_t js = j0; js < j1; js += nr) {                                                 \
          const T *bs = bpack + (js - j0) * kc;                                                    \
          if (g->packed_b != NULL) {                                                               \
            int64_t jb = js / ETRT_GEMM_NC * ETRT_GEMM_NC;                                         \
            bs = g->packed_b + etrt_gemm_packed_at_##NAME(g->n, g->k_count, nr, jb, k0) +          \
                 (js - jb) * kc;                                                                   \
          }                                                                                        \
          int64_t cols = j1 - js < nr ? j1 - js : nr;                                              \
          for (int64_t is = 0; is < mc; is += mr) {                                                \
            int64_t rows = mc - is < mr ? mc - is : mr;                                            \
            T *ct = g->c + (ii + is) * g->ldc + js;                                                \
            if (rows == mr && cols == nr) {                                                        \
              g->kernel.run(kc, apack + is * kc, bs, ct, g->ldc, load);                            \
              continue;                                                                            \
            }                                                                                      \
            for (int64_t r = 0; r < rows && load; ++r)                                             \
              memcpy(tile + r * nr, ct + r * g->ldc, (size_t)cols * sizeof(T));                    \
            g->kernel.run(kc, apack + is * kc, bs, tile, nr, load);                                \
            for (int64_t r = 0; r < rows; ++r)                                                     \
              memcpy(ct + r * g->ldc, tile + r * nr, (size_t)cols * sizeof(T));                    \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* A few rows (a recurrent step of one sequence, a batch-1 classifier): each row of B            \
   * is read once per row of A, where packing B would cost as much as the products and             \
   * the micro-kernel would compute mr - m rows of zeros. Same order of k per element. */          \
  static void etrt_gemm_rows_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a,    \
                                    int64_t a_row, int64_t a_col, const T *b, int64_t ldb, T *c,   \
                                    int64_t ldc, int accumulate) {                                 \
    for (int64_t i = 0; i < m; ++i) {                                                              \
      T *restrict ci = c + i * ldc;                                                                \
      if (!accumulate) memset(ci, 0, (size_t)n * sizeof(T));                                       \
      for (int64_t k = 0; k < k_count; ++k) {                                                      \
        T av = alpha * a[i * a_row + k * a_col];                                                   \
        const T *restrict bk = b + k * ldb;                                                        \
        for (int64_t j = 0; j < n; ++j) ci[j] += av * bk[j];                                       \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  static void etrt_gemm_tasks_##NAME(void *ctx, int64_t begin, int64_t end) {                      \
    const etrt_gemm_job_##NAME *g = ctx;                                                           \
    for (int64_t t = begin; t < end; ++t) {                                                        \
      int64_t i0 = t / g->col_blocks * g->task_rows, j0 = t % g->col_blocks * g->task_cols;        \
      int64_t i1 = g->m - i0 < g->task_rows ? g->m : i0 + g->task_rows;                            \
      int64_t j1 = g->n - j0 < g->task_cols ? g->n : j0 + g->task_cols;                            \
      etrt_gemm_block_##NAME(g, i0, i1, j0, j1);                                                   \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* The tasks over the thread pool: a task takes as many row blocks as the split allows,          \
   * so that its packed B panel serves more rows. */                                               \
  static void etrt_gemm_split_##NAME(etrt_gemm_job_##NAME *g) {                                    \
    int64_t m = g->m, row_blocks = (m + ETRT_GEMM_MC - 1) / ETRT_GEMM_MC;                          \
    int64_t width = m * g->n * g->k_count < ETRT_GEMM_PARALLEL_MIN ? 1 : etrt_thread_pool_width(); \
    if (g->packed_b != NULL) {                                                                     \
      /* No B panel to pack per task: a task takes several column blocks (as many as leave         \
       * four tasks per thread), so that each A panel it packs serves all of them. */              \
      int64_t per_task = g->col_blocks / (4 * width);                                              \
      if (per_task > 1) {                                                                          \
        g->task_cols = per_task * ETRT_GEMM_NC;                                                    \
        g->col_blocks = (g->n + g->task_cols - 1) / g->task_cols;                                  \
      }                                                                                            \
    }                                                                                              \
    int64_t row_tasks = width == 1 ? 1 : (4 * width + g->col_blocks - 1) / g->col_blocks;          \
    if (row_tasks > row_blocks) row_tasks = row_blocks;                                            \
    g->task_rows = (row_blocks + row_tasks - 1) / row_tasks * ETRT_GEMM_MC;                        \
    int64_t tasks = (m + g->task_rows - 1) / g->task_rows * g->col_blocks;                         \
    if (tasks == 1 || width == 1)                                                                  \
      etrt_gemm_tasks_##NAME(g, 0, tasks);                                                         \
    else                                                                                           \
      etrt_parallel_for(tasks, 1, etrt_gemm_tasks_##NAME, g);                                      \
  }                                                                                                \
                                                                                                   \
  /* The product's job (B as stored, or packed ahead), split over the pool. */                     \
  static void etrt_gemm_start_##NAME(etrt_gemm_kernel_##NAME kernel, int64_t m, int64_t n,         \
                                     int64_t k_count, T alpha, const T *a, int64_t a_row,          \
                                     int64_t a_col, const T *b, int64_t b_row, int64_t b_col,      \
                                     const T *packed_b, T *c, int64_t ldc, int accumulate) {       \
    etrt_gemm_job_##NAME g = {.kernel = kernel,                                                    \
                              .m = m,                                                              \
                              .n = n,                                                              \
                              .k_count = k_count,                                                  \
                              .alpha = alpha,                                                      \
                              .a = a,                                                              \
                              .a_row = a_row,                                                      \
                              .a_col = a_col,                                                      \
                              .b = b,                                                              \
                              .b_row = b_row,                                                      \
                              .b_col = b_col,                                                      \
                              .c = c,                                                              \
                              .ldc = ldc,                                                          \
                              .accumulate = accumulate,                                            \
                              .col_blocks = (n + ETRT_GEMM_NC - 1) / ETRT_GEMM_NC,                 \
                              .task_rows = ETRT_GEMM_MC,                                           \
                              .packed_b = packed_b,                                                \
                              .task_cols = ETRT_GEMM_NC};                                          \
    etrt_gemm_split_##NAME(&g);                                                                    \
  }                                                                                                \
                                                                                                   \
  void etrt_cpu_gemm_strided_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a,    \
                                    int64_t a_row, int64_t a_col, const T *b, int64_t b_row,       \
                                    int64_t b_col, T *c, int64_t ldc, int accumulate) {            \
    if (m <= 0 || n <= 0) return;                                                                  \
    if (k_count <= 0) { /* no products: C becomes 0, or stays */                                   \
      for (int64_t i = 0; i < m && !accumulate; ++i)                                               \
        memset(c + i * ldc, 0, (size_t)n * sizeof(T));                                             \
      return;                                                                                      \
    }                                                                                              \
    etrt_gemm_kernel_##NAME kernel = etrt_gemm_kernel_for_##NAME();                                \
    if (m < kernel.mr && m <= ETRT_GEMM_ROWS_UNPACKED && b_col == 1) {                             \
      etrt_gemm_rows_##NAME(m, n, k_count, alpha, a, a_row, a_col, b, b_row, c, ldc, accumulate);  \
      return;                                                                                      \
    }                                                                                              \
    if (m < kernel.mr && m <= ETRT_GEMM_ROWS_UNPACKED &&                                           \
        etrt_gemm_dots_##NAME(m, n, k_count, alpha, a, a_row, a_col, b, b_row, b_col, c, ldc,      \
                              accumulate))                                                         \
      return;                                                                                      \
    etrt_gemm_start_##NAME(kernel, m, n, k_count, alpha, a, a_row, a_col, b, b_row, b_col, NULL,   \
                           c, ldc, accumulate);                                                    \
  }                                                                                                \
                                                                                                   \
  size_t etrt_cpu_gemm_packed_b_count_##NAME(int64_t k_count, int64_t n) {                         \
    int nr = etrt_gemm_kernel_for_##NAME().nr;                                                     \
    return (size_t)(k_count * ((n + nr - 1) / nr * nr));                                           \
  }                                                                                                \
                                                                                                   \
  int etrt_cpu_gemm_pack_b_##NAME(int64_t k_count, int64_t n, const T *b, int64_t ldb, T *out) {   \
    int nr = etrt_gemm_kernel_for_##NAME().nr;                                                     \
    for (int64_t j0 = 0; j0 < n; j0 += ETRT_GEMM_NC) {                                             \
      int64_t j1 = n - j0 < ETRT_GEMM_NC ? n : j0 + ETRT_GEMM_NC;                                  \
      for (int64_t k0 = 0; k0 < k_count; k0 += KC) {                                               \
        int64_t kc = k_count - k0 < KC ? k_count - k0 : KC;                                        \
        etrt_gemm_pack_panel_##NAME(b, ldb, 1, k0, kc, j0, j1, nr,                                 \
                                    out + etrt_gemm_packed_at_##NAME(n, k_count, nr, j0, k0));     \
      }                                                                                            \
    }                                                                                              \
    return nr;                                                                                     \
  }                                                                                                \
                                                                                                   \
  int etrt_cpu_gemm_packed_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a,      \
                                  int64_t a_row, int64_t a_col, const T *packed_b, int packed_nr,  \
                                  T *c, int64_t ldc, int accumulate) {                             \
    etrt_gemm_kernel_##NAME kernel = etrt_gemm_kernel_for_##NAME();                                \
    if (kernel.nr != packed_nr) return 0;                                                          \
    if (m <= 0 || n <= 0 || k_count <= 0) {                                                        \
      etrt_cpu_gemm_strided_##NAME(m, n, k_count, alpha, a, a_row, a_col, NULL, 0, 1, c, ldc,      \
                                   accumulate);                                                    \
      return 1;                                                                                    \
    }                                                                                              \
    etrt_gemm_start_##NAME(kernel, m, n, k_count, alpha, a, a_row, a_col, NULL, 0, 1, packed_b, c, \
                           ldc, accumulate);                                                       \
    return 1;                                                                                      \
  }                                                                                                \
                                                                                                   \
  void etrt_cpu_gemm_##NAME(int64_t m, int64_t n, int64_t k_count, T alpha, const T *a,            \
                            int64_t a_row, int64_t a_col, const T *b, int64_t ldb, T *c,           \
                            int64_t ldc, int accumulate) {                                         \
    etrt_cpu_gemm_strided_##NAME(m, n, k_count, alpha, a, a_row, a_col, b, ldb, 1, c, ldc,         \
                                 accumulate);                                                      \
  }

ETRT_GEMM_DEFINE(f32, float, 256)
ETRT_GEMM_DEFINE(f64, double, 128)

void etrt_cpu_gemm_add_bias_f32(float *c, const float *bias, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) c[r * n + j] += bias[j];
}
