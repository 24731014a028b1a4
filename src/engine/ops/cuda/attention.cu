/* EtrtAttention on the GPU (ops/attention.h), two kernels over one geometry:
 *
 * - float16 and bfloat16 heads of 16 to 128 (a multiple of 16): flash-attention style on
 *   the tensor cores (mma.sync). A block of four warps takes 64 query rows of one
 *   (batch, head); key and value tiles of 64 rows are copied into shared memory
 *   asynchronously (cp.async), the next tile's while this one is computed; each warp
 *   keeps its 16 rows' scores, running maxima and sums and output accumulator in
 *   registers, in float32. Nothing but the output is written to global memory.
 *   (Blocks of one or two warps, for grids smaller than the GPU, measured slower on BERT
 *   at batch 1: 0.577 and 0.560 ms against 0.54; docs/gpu-performance.md.)
 * - every other case (float32, other head sizes up to 256): a warp per query row, the
 *   row and its accumulator in registers, the same online softmax key by key.
 *
 * The node's setup, run when a context is created, chooses the kernel; a launch without
 * that state takes the warp kernel. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/attention.h"
}

#define ETRT_ATTENTION_ROWS 64 /* query rows of a block, 16 per warp */
#define ETRT_ATTENTION_KEYS 64 /* keys of a tile */
#define ETRT_ATTENTION_THREADS 128

/* The float value of mask element (b, h, i, j), 0 without a mask. */
template <typename T>
__device__ __forceinline__ float etrt_attention_mask(const T *mask,
                                                     const etrt_attention_geometry &g, int64_t b,
                                                     int64_t h, int64_t i, int64_t j) {
  if (mask == NULL) return 0.0f;
  return etrt_cvt<float>(mask[b * g.mask_stride[0] + h * g.mask_stride[1] + i * g.mask_stride[2] +
                              j * g.mask_stride[3]]);
}

/* Key and value rows in shared memory are padded by 16 bytes: the eight rows one
 * fragment load touches then start in different banks. */
#define ETRT_ATTENTION_PITCH(D) ((D) + 8)

/* cp.async (sm_80 and later): a 16-byte copy from global to shared memory that does not
 * hold a register while in flight; `bytes` 0 writes zeros and reads nothing. */
__device__ __forceinline__ void etrt_attention_copy16(void *dst, const void *src, int bytes) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(src),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void etrt_attention_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/* Waits until at most N of this thread's committed groups are still in flight. */
template <int N>
__device__ __forceinline__ void etrt_attention_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Starts copying rows [first, first + ETRT_ATTENTION_KEYS) of a head (row r at
 * src + r * stride, d_size elements, D at most) into dst (rows `pitch` apart), zeros past
 * `count` rows, and commits them as one group. With `wide` (rows, strides and pointers
 * 16-byte aligned) the copies are asynchronous; otherwise they are plain loads and
 * stores, done on return, and the group is empty. */
template <typename T, int D>
__device__ __forceinline__ void etrt_attention_load_rows(T *dst, int pitch, const T *src,
                                                         int64_t stride, int64_t first,
                                                         int64_t count, int d_size, bool wide) {
  constexpr int ROWS = ETRT_ATTENTION_KEYS;
  const int64_t left = count - first; /* at least one row */
  if (wide) {
    constexpr int CHUNKS = D / 8; /* 16-byte copies of a row */
#pragma unroll
    for (int t = 0; t < ROWS * CHUNKS / ETRT_ATTENTION_THREADS; ++t) {
      const int e = threadIdx.x + t * ETRT_ATTENTION_THREADS, r = e / CHUNKS, c = (e % CHUNKS) * 8;
      /* A row past the end copies nothing, from an address that is still the head's. */
      if (c < d_size)
        etrt_attention_copy16(dst + r * pitch + c, src + (first + (r < left ? r : 0)) * stride + c,
                              r < left ? 16 : 0);
    }
  } else {
    const T zero = etrt_cvt<T>(0.0f);
    for (int e = threadIdx.x; e < ROWS * d_size; e += ETRT_ATTENTION_THREADS) {
      const int r = e / d_size;
      dst[r * pitch + e % d_size] = r < left ? src[(first + r) * stride + e % d_size] : zero;
    }
  }
  etrt_attention_commit();
}

/* 2^x in one instruction (MUFU.EX2); 2^-inf is 0. */
__device__ __forceinline__ float etrt_attention_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/* Two values of T in one 32-bit register, the first in the low half (the order of
 * columns in an mma fragment). */
template <typename T>
__device__ __forceinline__ uint32_t etrt_attention_pack(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t etrt_attention_pack<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *(uint32_t *)&v;
}
template <>
__device__ __forceinline__ uint32_t etrt_attention_pack<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *(uint32_t *)&v;
}

/* c += a.b on a 16x8x16 tile: a row-major 16x16 (4 registers), b column-major 16x8 (2),
 * c 16x8 float32 (4); PTX ISA "mma.sync m16n8k16" gives each lane's elements. */
template <typename T>
__device__ __forceinline__ void etrt_attention_mma(float *c, const uint32_t *a, uint32_t b0,
                                                   uint32_t b1);
template <>
__device__ __forceinline__ void etrt_attention_mma<__half>(float *c, const uint32_t *a, uint32_t b0,
                                                           uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void etrt_attention_mma<__nv_bfloat16>(float *c, const uint32_t *a,
                                                                  uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The b fragments of two adjacent 8-column tiles of a row-major 16-row tile in shared
 * memory (rows `pitch` elements apart), transposed on the way: for P.V, where V's rows
 * are the product's k. */
__device__ __forceinline__ void etrt_attention_ldmatrix_t(uint32_t *b, const void *tile,
                                                          int pitch_bytes, int lane) {
  const char *row =
      (const char *)tile + ((lane & 7) + ((lane >> 3) & 1) * 8) * pitch_bytes + (lane >> 4) * 16;
  const unsigned address = (unsigned)__cvta_generic_to_shared(row);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(address));
}

#define ETRT_ATTENTION_LOG2E 1.4426950408889634f

/* A key tile's scores in place, times scale2 (the node's scale times log2 e) plus the
 * mask times log2 e, and max0/max1 raised to the largest of rows g and g + 8. CHECKED:
 * keys past `keys` become -inf and the rows' masks are added (mask0/mask1, the tile's
 * first key at mask_first, keys mask_step apart; NULL: none); unchecked, neither
 * exists. */
template <typename T, bool CHECKED>
__device__ __forceinline__ void etrt_attention_scores(float (*sc)[4], float scale2, int keys,
                                                      const T *mask0, const T *mask1,
                                                      int64_t mask_first, int64_t mask_step, int tc,
                                                      float *max0, float *max1) {
#pragma unroll
  for (int n = 0; n < ETRT_ATTENTION_KEYS / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = sc[n][e] * scale2;
      if (CHECKED) {
        const int j = n * 8 + 2 * tc + (e & 1);
        const T *m = e < 2 ? mask0 : mask1;
        if (j >= keys)
          x = -INFINITY;
        else if (m != NULL)
          x += etrt_cvt<float>(m[(mask_first + j) * mask_step]) * ETRT_ATTENTION_LOG2E;
      }
      sc[n][e] = x;
      if (e < 2)
        *max0 = fmaxf(*max0, x);
      else
        *max1 = fmaxf(*max1, x);
    }
}

/* Flash attention on the tensor cores with everything of a row in registers. Lane
 * (g, t) = (lane / 4, lane % 4) of a warp holds, for the warp's 16 query rows, rows g
 * and g + 8 of the fragments: Q as the a operand, the key tile's scores, and the
 * float32 output accumulator; the scores become P's a fragments without leaving the
 * registers. Each row's running maximum and (per-lane partial) sum live beside them;
 * a row's four lanes agree on its maximum through two shuffles. */
template <typename T, int D>
__global__ void __launch_bounds__(ETRT_ATTENTION_THREADS)
    etrt_attention_tc_kernel(const T *q, const T *k, const T *v, const T *mask, T *out,
                             etrt_attention_geometry g, bool wide) {
  constexpr int BQ = ETRT_ATTENTION_ROWS, BK = ETRT_ATTENTION_KEYS, P = ETRT_ATTENTION_PITCH(D);
  /* Two stages (the tile computed and the next one arriving) where they fit in the 48 KB
   * of static shared memory: heads up to 64; heads of 128 copy a tile at a time. */
  constexpr int STAGES = D <= 64 ? 2 : 1;
  __shared__ __align__(16) T ks[STAGES][BK * P];
  __shared__ __align__(16) T vs[STAGES][BK * P];
  const int d_size = (int)g.head_size;
  const int64_t tiles = (g.q_len + BQ - 1) / BQ;
  const int64_t tile = blockIdx.x % tiles, bh = blockIdx.x / tiles;
  const int64_t h = bh % g.heads, b = bh / g.heads;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gr = lane >> 2, tc = lane & 3;
  const int64_t row0 = tile * BQ + warp * 16 + gr, row1 = row0 + 8; /* this lane's rows */
  const T *q_base = q + b * g.q_batch + g.offsets[0] + h * d_size;
  const T *k_base = k + b * g.k_batch + g.offsets[1] + h * d_size;
  const T *v_base = v + b * g.v_batch + g.offsets[2] + h * d_size;
  /* Each tile's keys and values are two copy groups: the scores need only the keys, so
   * they are computed while the values may still be arriving. The first tile's copies
   * start before Q is read. */
  const int64_t key_tiles = (g.kv_len + BK - 1) / BK;
  etrt_attention_load_rows<T, D>(ks[0], P, k_base, g.k_row, 0, g.kv_len, d_size, wide);
  etrt_attention_load_rows<T, D>(vs[0], P, v_base, g.v_row, 0, g.kv_len, d_size, wide);

  /* Q's a fragments, zero past the head and past the last row. */
  uint32_t qa[D / 16][4];
#pragma unroll
  for (int kc = 0; kc < D / 16; ++kc)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int64_t i = (r & 1) ? row1 : row0;
      const int col = kc * 16 + 2 * tc + (r >> 1) * 8;
      qa[kc][r] = 0;
      if (i >= g.q_len || col >= d_size) continue;
      if (wide) { /* the pair is 4-byte aligned and already in fragment order */
        qa[kc][r] = *(const uint32_t *)(q_base + i * g.q_row + col);
      } else {
        qa[kc][r] = etrt_attention_pack<T>(etrt_cvt<float>(q_base[i * g.q_row + col]),
                                           etrt_cvt<float>(q_base[i * g.q_row + col + 1]));
      }
    }
  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float top0 = -INFINITY, top1 = -INFINITY, sum0 = 0.0f, sum1 = 0.0f;
  /* The mask rows of this lane's two query rows: a key then costs one multiply. */
  const T *mask0 = NULL, *mask1 = NULL;
  if (mask != NULL) {
    const T *mb = mask + b * g.mask_stride[0] + h * g.mask_stride[1];
    mask0 = mb + (row0 < g.q_len ? row0 : 0) * g.mask_stride[2];
    mask1 = mb + (row1 < g.q_len ? row1 : 0) * g.mask_stride[2];
  }
  const int64_t mask_step = g.mask_stride[3];
  const float scale2 = g.scale * ETRT_ATTENTION_LOG2E;

  for (int64_t t = 0; t < key_tiles; ++t) {
    const int64_t k0 = t * BK;
    const int s = (int)(t % STAGES), s_next = (int)((t + 1) % STAGES);
    const bool next = t + 1 < key_tiles;
    /* The stage written now was last read by the previous tile, which every warp has
     * finished (the barrier at the end of the loop). One stage: this tile's copies start
     * only now; two: the next tile's start before this one is computed. */
    const int64_t load = STAGES == 1 ? k0 : k0 + BK;
    if (STAGES == 1 ? t > 0 : next) {
      etrt_attention_load_rows<T, D>(ks[s_next], P, k_base, g.k_row, load, g.kv_len, d_size, wide);
      etrt_attention_load_rows<T, D>(vs[s_next], P, v_base, g.v_row, load, g.kv_len, d_size, wide);
    }
    /* In flight behind this tile's keys: its values, and the next tile's two groups. */
    if (STAGES == 2 && next)
      etrt_attention_wait<3>();
    else
      etrt_attention_wait<1>();
    __syncthreads();
    /* Scores of the warp's rows against the tile's keys: K's rows are the columns of
     * the product, so its row-major tile is the column-major b operand. */
    float sc[BK / 8][4];
#pragma unroll
    for (int n = 0; n < BK / 8; ++n) {
      sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0f;
      const T *key = ks[s] + (n * 8 + gr) * P + 2 * tc;
#pragma unroll
      for (int kc = 0; kc < D / 16; ++kc)
        if (kc * 16 < d_size)
          etrt_attention_mma<T>(sc[n], qa[kc], *(const uint32_t *)(key + kc * 16),
                                *(const uint32_t *)(key + kc * 16 + 8));
    }
    /* Scaled to base 2 (the exponentials are then one instruction each), masked, and
     * the rows' new maxima. Keys past the end and masks exist only where checked. */
    const int keys = g.kv_len - k0 < BK ? (int)(g.kv_len - k0) : BK;
    float m0 = top0, m1 = top1;
    if (keys == BK && mask == NULL)
      etrt_attention_scores<T, false>(sc, scale2, keys, NULL, NULL, 0, 0, tc, &m0, &m1);
    else
      etrt_attention_scores<T, true>(sc, scale2, keys, row0 < g.q_len ? mask0 : NULL,
                                     row1 < g.q_len ? mask1 : NULL, k0, mask_step, tc, &m0, &m1);
    m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 1));
    m0 = fmaxf(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
    m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 1));
    m1 = fmaxf(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
    /* A row with no finite score yet subtracts 0: its probabilities stay 0, not NaN. */
    const float base0 = m0 == -INFINITY ? 0.0f : m0, base1 = m1 == -INFINITY ? 0.0f : m1;
    const float alpha0 = etrt_attention_exp2(top0 - base0),
                alpha1 = etrt_attention_exp2(top1 - base1);
    top0 = m0;
    top1 = m1;
    sum0 *= alpha0;
    sum1 *= alpha1;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      o[n][0] *= alpha0;
      o[n][1] *= alpha0;
      o[n][2] *= alpha1;
      o[n][3] *= alpha1;
    }
    if (STAGES == 2 && next)
      etrt_attention_wait<2>();
    else
      etrt_attention_wait<0>();
    __syncthreads();
    /* P in T as a fragments (two score tiles make one 16-key a tile), then O += P.V. */
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      float p[8];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        p[e] = etrt_attention_exp2(sc[2 * kk][e] - (e < 2 ? base0 : base1));
        p[4 + e] = etrt_attention_exp2(sc[2 * kk + 1][e] - (e < 2 ? base0 : base1));
      }
      sum0 += p[0] + p[1] + p[4] + p[5];
      sum1 += p[2] + p[3] + p[6] + p[7];
      const uint32_t pa[4] = {
          etrt_attention_pack<T>(p[0], p[1]), etrt_attention_pack<T>(p[2], p[3]),
          etrt_attention_pack<T>(p[4], p[5]), etrt_attention_pack<T>(p[6], p[7])};
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        if (n * 8 >= d_size) break;
        uint32_t vb[4];
        etrt_attention_ldmatrix_t(vb, vs[s] + kk * 16 * P + n * 8, P * (int)sizeof(T), lane);
        etrt_attention_mma<T>(o[n], pa, vb[0], vb[1]);
        etrt_attention_mma<T>(o[n + 1], pa, vb[2], vb[3]);
      }
    }
    __syncthreads(); /* this stage may be written again */
  }
  /* Each lane summed its own columns: the row's sum is its four lanes'. */
  sum0 += __shfl_xor_sync(0xffffffffu, sum0, 1);
  sum0 += __shfl_xor_sync(0xffffffffu, sum0, 2);
  sum1 += __shfl_xor_sync(0xffffffffu, sum1, 1);
  sum1 += __shfl_xor_sync(0xffffffffu, sum1, 2);
  const int64_t width = g.heads * d_size;
  T *o0 = out + (b * g.q_len + row0) * width + h * d_size;
  T *o1 = out + (b * g.q_len + row1) * width + h * d_size;
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const int col = n * 8 + 2 * tc;
    if (col >= d_size) break;
    if (row0 < g.q_len)
      *(uint32_t *)(o0 + col) = etrt_attention_pack<T>(o[n][0] / sum0, o[n][1] / sum0);
    if (row1 < g.q_len)
      *(uint32_t *)(o1 + col) = etrt_attention_pack<T>(o[n][2] / sum1, o[n][3] / sum1);
  }
}

/* A warp per query row; PER head elements per lane (the head is at most 32 * PER). */
template <typename T, int PER>
__global__ void etrt_attention_row_kernel(const T *q, const T *k, const T *v, const T *mask, T *out,
                                          etrt_attention_geometry g) {
  int lane;
  const int64_t row = etrt_cuda_warp_row(&lane);
  if (row >= g.batch * g.heads * g.q_len) return;
  const int64_t i = row % g.q_len, h = row / g.q_len % g.heads, b = row / (g.q_len * g.heads);
  const int d_size = (int)g.head_size;
  const T *q_row = q + b * g.q_batch + i * g.q_row + g.offsets[0] + h * d_size;
  const T *k_base = k + b * g.k_batch + g.offsets[1] + h * d_size;
  const T *v_base = v + b * g.v_batch + g.offsets[2] + h * d_size;
  float qv[PER], acc[PER];
#pragma unroll
  for (int t = 0; t < PER; ++t) {
    const int d = lane + 32 * t;
    qv[t] = d < d_size ? etrt_cvt<float>(q_row[d]) : 0.0f;
    acc[t] = 0.0f;
  }
  float top = -INFINITY, sum = 0.0f;
  for (int64_t j = 0; j < g.kv_len; ++j) {
    const T *k_row = k_base + j * g.k_row;
    float part = 0.0f;
#pragma unroll
    for (int t = 0; t < PER; ++t) {
      const int d = lane + 32 * t;
      if (d < d_size) part += qv[t] * etrt_cvt<float>(k_row[d]);
    }
    const float s = etrt_cuda_warp_reduce(part, etrt_cuda_sum_op()) * g.scale +
                    etrt_attention_mask(mask, g, b, h, i, j);
    const float new_max = fmaxf(top, s);
    const float alpha = new_max == -INFINITY ? 1.0f : expf(top - new_max);
    const float p = new_max == -INFINITY ? 0.0f : expf(s - new_max);
    sum = sum * alpha + p;
    const T *v_row = v_base + j * g.v_row;
#pragma unroll
    for (int t = 0; t < PER; ++t) {
      const int d = lane + 32 * t;
      acc[t] = acc[t] * alpha + (d < d_size ? p * etrt_cvt<float>(v_row[d]) : 0.0f);
    }
    top = new_max;
  }
  T *o = out + (b * g.q_len + i) * g.heads * d_size + h * d_size;
#pragma unroll
  for (int t = 0; t < PER; ++t) {
    const int d = lane + 32 * t;
    if (d < d_size) o[d] = etrt_cvt<T>(acc[t] / sum);
  }
}

template <typename T>
static void etrt_attention_rows_start(const T *q, const T *k, const T *v, const T *mask, T *out,
                                      const etrt_attention_geometry &g, cudaStream_t stream) {
  const int64_t rows = g.batch * g.heads * g.q_len;
  const unsigned blocks = etrt_cuda_row_blocks(rows);
  const int per = (int)((g.head_size + 31) / 32);
  if (per <= 1)
    etrt_attention_row_kernel<T, 1>
        <<<blocks, ETRT_CUDA_ROW_THREADS, 0, stream>>>(q, k, v, mask, out, g);
  else if (per <= 2)
    etrt_attention_row_kernel<T, 2>
        <<<blocks, ETRT_CUDA_ROW_THREADS, 0, stream>>>(q, k, v, mask, out, g);
  else if (per <= 4)
    etrt_attention_row_kernel<T, 4>
        <<<blocks, ETRT_CUDA_ROW_THREADS, 0, stream>>>(q, k, v, mask, out, g);
  else
    etrt_attention_row_kernel<T, 8>
        <<<blocks, ETRT_CUDA_ROW_THREADS, 0, stream>>>(q, k, v, mask, out, g);
}

/* The tensor-core kernel for the smallest padded head size that holds these heads. */
template <typename T>
static void etrt_attention_tc_start(const etrt_tensor *inputs, const void *mask,
                                    etrt_tensor *outputs, const etrt_attention_geometry &g,
                                    bool wide, unsigned blocks, cudaStream_t stream) {
  const T *q = (const T *)inputs[0].data, *k = (const T *)inputs[1].data,
          *v = (const T *)inputs[2].data;
  if (g.head_size <= 32)
    etrt_attention_tc_kernel<T, 32><<<blocks, ETRT_ATTENTION_THREADS, 0, stream>>>(
        q, k, v, (const T *)mask, (T *)outputs[0].data, g, wide);
  else if (g.head_size <= 64)
    etrt_attention_tc_kernel<T, 64><<<blocks, ETRT_ATTENTION_THREADS, 0, stream>>>(
        q, k, v, (const T *)mask, (T *)outputs[0].data, g, wide);
  else
    etrt_attention_tc_kernel<T, 128><<<blocks, ETRT_ATTENTION_THREADS, 0, stream>>>(
        q, k, v, (const T *)mask, (T *)outputs[0].data, g, wide);
}

/* Whether the tensor-core kernel takes these heads. */
static bool etrt_attention_tc_fits(etrt_dtype dtype, int64_t head_size) {
  return (dtype == ETRT_DTYPE_FLOAT16 || dtype == ETRT_DTYPE_BFLOAT16) && head_size % 16 == 0 &&
         head_size <= ETRT_ATTENTION_TC_MAX_HEAD;
}

/* The state of a node the tensor-core kernel runs (setup below); nothing to free. */
static int etrt_attention_tc_ready;

extern "C" ETRT_CUDA_RUN(etrt_cuda_attention) {
  etrt_attention_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_attention_geometry_of(node, inputs, &g));
  if (g.batch * g.heads * g.q_len == 0) return ETRT_OK;
  if (g.kv_len == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "EtrtAttention node '%s': no keys (softmax over nothing)",
                      etrt_cuda_name(node));
  const void *mask = g.has_mask ? inputs[3].data : NULL;
  cudaStream_t stream = etrt_cuda_stream(launch);
  const bool tc = launch->node_state != NULL && launch->node_state[launch->node] != NULL &&
                  etrt_attention_tc_fits(inputs[0].dtype, g.head_size);
  if (tc) {
    const int64_t blocks =
        g.batch * g.heads * ((g.q_len + ETRT_ATTENTION_ROWS - 1) / ETRT_ATTENTION_ROWS);
    if (blocks > INT32_MAX)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "EtrtAttention node '%s': %lld blocks",
                        etrt_cuda_name(node), (long long)blocks);
    /* 16-byte loads where every head row starts on a 16-byte boundary. */
    bool wide = true;
    for (int k = 0; k < 3; ++k) {
      const int64_t stride = k == 0 ? g.q_row : k == 1 ? g.k_row : g.v_row;
      wide =
          wide && stride % 8 == 0 && g.offsets[k] % 8 == 0 && (uintptr_t)inputs[k].data % 16 == 0;
    }
    if (inputs[0].dtype == ETRT_DTYPE_FLOAT16)
      etrt_attention_tc_start<__half>(inputs, mask, outputs, g, wide, (unsigned)blocks, stream);
    else
      etrt_attention_tc_start<__nv_bfloat16>(inputs, mask, outputs, g, wide, (unsigned)blocks,
                                             stream);
    return etrt_cuda_check(node, "attention_tc");
  }
  switch (inputs[0].dtype) {
    case ETRT_DTYPE_FLOAT32:
      etrt_attention_rows_start<float>((const float *)inputs[0].data, (const float *)inputs[1].data,
                                       (const float *)inputs[2].data, (const float *)mask,
                                       (float *)outputs[0].data, g, stream);
      break;
    case ETRT_DTYPE_FLOAT16:
      etrt_attention_rows_start<__half>((const __half *)inputs[0].data,
                                        (const __half *)inputs[1].data,
                                        (const __half *)inputs[2].data, (const __half *)mask,
                                        (__half *)outputs[0].data, g, stream);
      break;
    case ETRT_DTYPE_BFLOAT16:
      etrt_attention_rows_start<__nv_bfloat16>(
          (const __nv_bfloat16 *)inputs[0].data, (const __nv_bfloat16 *)inputs[1].data,
          (const __nv_bfloat16 *)inputs[2].data, (const __nv_bfloat16 *)mask,
          (__nv_bfloat16 *)outputs[0].data, g, stream);
      break;
    default:
      return etrt_cuda_no_kernel(node, inputs[0].dtype);
  }
  return etrt_cuda_check(node, "attention_rows");
}

/* Marks the node for the tensor-core kernel where it fits; ETRT_CUDA_ATTENTION_TC=0
 * keeps the warp kernel, to compare the two. Read once per context, not per run. */
static etrt_status etrt_attention_setup(const etrt_node *node, const etrt_tensor *inputs,
                                        const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                        void **state) {
  (void)outputs;
  (void)launch;
  *state = NULL;
  const char *env = getenv("ETRT_CUDA_ATTENTION_TC");
  const etrt_attention_params *p = (const etrt_attention_params *)node->state;
  if ((env != NULL && strcmp(env, "0") == 0) ||
      !etrt_attention_tc_fits(inputs[0].dtype, p->head_size))
    return ETRT_OK;
  *state = &etrt_attention_tc_ready;
  return ETRT_OK;
}

static void etrt_attention_release(void *state) { (void)state; }

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_attention[] = {
    {"EtrtAttention", etrt_cuda_attention, NULL},
    {NULL, NULL, NULL},
};

extern "C" const etrt_op_cuda_setup_row etrt_cuda_setups_attention[] = {
    {"EtrtAttention", etrt_attention_setup, etrt_attention_release},
    {NULL, NULL, NULL},
};
