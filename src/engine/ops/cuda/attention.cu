/* EtrtAttention on the GPU (ops/attention.h), two kernels over one geometry:
 *
 * - float16 and bfloat16 heads of 16 to 128 (a multiple of 16): flash-attention style on
 *   the tensor cores. A block of four warps takes 64 query rows of one (batch, head);
 *   key and value tiles of 64 rows pass through shared memory; each warp computes its 16
 *   rows of Q.K^T with nvcuda::wmma (float32 sums), updates the running maximum and sum
 *   of its rows (float32), writes the probabilities in the input type and adds P.V to
 *   its rows of a float32 accumulator, rescaled as the maximum grows. Nothing but the
 *   output is written to global memory.
 * - every other case (float32, other head sizes up to 256): a warp per query row, the
 *   row and its accumulator in registers, the same online softmax key by key.
 *
 * The tensor-core kernel needs more than the default 48 KiB of shared memory: the
 * node's setup, run when a context is created, raises the kernel's limit; a launch
 * without that state takes the warp kernel. */
#include <mma.h>

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

/* Row pitches in shared memory, padded past a multiple of 128 bytes so that the rows a
 * wmma load or store touches fall in different banks (and still start on the 32-byte
 * boundaries wmma needs): head rows and probability rows in T, score and accumulator
 * rows in float32. */
#define ETRT_ATTENTION_HEAD_PITCH(d) ((d) + 8)
#define ETRT_ATTENTION_P_PITCH (ETRT_ATTENTION_KEYS + 8)
#define ETRT_ATTENTION_S_PITCH (ETRT_ATTENTION_KEYS + 4)
#define ETRT_ATTENTION_O_PITCH(d) ((d) + 4)

/* Shared memory of the tensor-core kernel for head size d: Q, K and V tiles and the
 * probabilities in T; scores, the output accumulator and each row's maximum and sum in
 * float32. */
template <typename T>
static size_t etrt_attention_tc_smem(int d) {
  return (size_t)((ETRT_ATTENTION_ROWS + 2 * ETRT_ATTENTION_KEYS) * ETRT_ATTENTION_HEAD_PITCH(d) +
                  ETRT_ATTENTION_ROWS * ETRT_ATTENTION_P_PITCH) *
             sizeof(T) +
         (size_t)(ETRT_ATTENTION_ROWS * (ETRT_ATTENTION_S_PITCH + ETRT_ATTENTION_O_PITCH(d)) +
                  2 * ETRT_ATTENTION_ROWS) *
             sizeof(float);
}

/* Rows [first, first + ROWS) of a head (row r at src + r * stride, d_size elements)
 * into dst (rows `pitch` apart), zeros past `count` rows. With `wide` (rows, strides and
 * pointers 16-byte aligned) every thread first issues all its 16-byte loads, then
 * stores them: the loads of a tile are in flight together instead of one after another. */
template <typename T, int ROWS>
__device__ __forceinline__ void etrt_attention_load_rows(T *dst, int pitch, const T *src,
                                                         int64_t stride, int64_t first,
                                                         int64_t count, int d_size, bool wide) {
  if (wide) {
    constexpr int PER = 8; /* elements of a 16-byte load */
    constexpr int MOST = ROWS * ETRT_ATTENTION_TC_MAX_HEAD / PER / ETRT_ATTENTION_THREADS;
    const int per_row = d_size / PER, total = ROWS * per_row;
    uint4 held[MOST];
#pragma unroll
    for (int t = 0; t < MOST; ++t) {
      const int e = threadIdx.x + t * ETRT_ATTENTION_THREADS;
      const int64_t j = first + e / per_row;
      held[t] = make_uint4(0, 0, 0, 0);
      if (e < total && j < count)
        held[t] = *(const uint4 *)(src + j * stride + (e % per_row) * PER);
    }
#pragma unroll
    for (int t = 0; t < MOST; ++t) {
      const int e = threadIdx.x + t * ETRT_ATTENTION_THREADS;
      if (e < total) *(uint4 *)(dst + (e / per_row) * pitch + (e % per_row) * PER) = held[t];
    }
    return;
  }
  const T zero = etrt_cvt<T>(0.0f);
  for (int e = threadIdx.x; e < ROWS * d_size; e += ETRT_ATTENTION_THREADS) {
    const int64_t j = first + e / d_size;
    dst[(e / d_size) * pitch + e % d_size] = j < count ? src[j * stride + e % d_size] : zero;
  }
}

template <typename T>
__global__ void __launch_bounds__(ETRT_ATTENTION_THREADS)
    etrt_attention_tc_kernel(const T *q, const T *k, const T *v, const T *mask, T *out,
                             etrt_attention_geometry g, bool wide) {
  using namespace nvcuda;
  constexpr int BQ = ETRT_ATTENTION_ROWS, BK = ETRT_ATTENTION_KEYS;
  constexpr int PP = ETRT_ATTENTION_P_PITCH, SP = ETRT_ATTENTION_S_PITCH;
  extern __shared__ __align__(32) unsigned char etrt_attention_smem[];
  const int d_size = (int)g.head_size;
  const int hp = ETRT_ATTENTION_HEAD_PITCH(d_size), op = ETRT_ATTENTION_O_PITCH(d_size);
  T *qs = (T *)etrt_attention_smem;
  T *ks = qs + BQ * hp;
  T *vs = ks + BK * hp;
  T *ps = vs + BK * hp;
  float *sf = (float *)(ps + BQ * PP);
  float *of = sf + BQ * SP;
  float *row_max = of + BQ * op;
  float *row_sum = row_max + BQ;

  const int64_t tiles = (g.q_len + BQ - 1) / BQ;
  const int64_t tile = blockIdx.x % tiles, bh = blockIdx.x / tiles;
  const int64_t h = bh % g.heads, b = bh / g.heads;
  const int64_t q0 = tile * BQ;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const T *q_base = q + b * g.q_batch + g.offsets[0] + h * d_size;
  const T *k_base = k + b * g.k_batch + g.offsets[1] + h * d_size;
  const T *v_base = v + b * g.v_batch + g.offsets[2] + h * d_size;

  etrt_attention_load_rows<T, BQ>(qs, hp, q_base, g.q_row, q0, g.q_len, d_size, wide);
  for (int e = threadIdx.x; e < BQ * op; e += ETRT_ATTENTION_THREADS) of[e] = 0.0f;
  for (int r = threadIdx.x; r < BQ; r += ETRT_ATTENTION_THREADS) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.0f;
  }

  const int own = warp * 16; /* this warp's first row in the tile */
  /* In the softmax each of the warp's rows has two lanes, each with half the keys. */
  const int my_row = own + (lane >> 1), half = lane & 1;
  for (int64_t k0 = 0; k0 < g.kv_len; k0 += BK) {
    __syncthreads(); /* the previous tile's K and V are no longer read */
    etrt_attention_load_rows<T, BK>(ks, hp, k_base, g.k_row, k0, g.kv_len, d_size, wide);
    etrt_attention_load_rows<T, BK>(vs, hp, v_base, g.v_row, k0, g.kv_len, d_size, wide);
    __syncthreads();
    /* The warp's 16 rows of Q.K^T: K's rows are the columns of the product, so the tile
     * read column-major is K^T. */
    for (int cb = 0; cb < BK / 16; ++cb) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < d_size; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, qs + own * hp + kk, hp);
        wmma::load_matrix_sync(fb, ks + cb * 16 * hp + kk, hp);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(sf + own * SP + cb * 16, acc, SP, wmma::mem_row_major);
    }
    /* The mask tile of the warp's rows goes where the probabilities will be, read with
     * the lanes along the keys: the softmax below has its lanes along the rows, which
     * would read a different mask row (a sector for two bytes) per lane. Each lane then
     * reads the mask entries it replaces with probabilities. */
    if (mask != NULL) {
      for (int rr = 0; rr < 16; ++rr) {
        const int64_t i = q0 + own + rr;
        for (int c = lane; c < BK; c += 32) {
          const int64_t j = k0 + c;
          ps[(own + rr) * PP + c] = etrt_cvt<T>(
              i < g.q_len && j < g.kv_len ? etrt_attention_mask(mask, g, b, h, i, j) : 0.0f);
        }
      }
    }
    __syncwarp();
    /* Online softmax: the row's maximum and sum over both lanes' keys. */
    {
      constexpr int HALF = BK / 2;
      float s[HALF];
      float top = -INFINITY;
#pragma unroll
      for (int t = 0; t < HALF; ++t) {
        const int c = 2 * t + half;
        const int64_t j = k0 + c;
        float x = -INFINITY;
        if (j < g.kv_len) {
          x = sf[my_row * SP + c] * g.scale;
          if (mask != NULL) x += etrt_cvt<float>(ps[my_row * PP + c]);
        }
        s[t] = x;
        top = fmaxf(top, x);
      }
      top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, 1));
      const float old_max = row_max[my_row];
      const float new_max = fmaxf(old_max, top);
      float sum = 0.0f;
#pragma unroll
      for (int t = 0; t < HALF; ++t) {
        const float p = new_max == -INFINITY ? 0.0f : __expf(s[t] - new_max);
        sum += p;
        ps[my_row * PP + 2 * t + half] = etrt_cvt<T>(p);
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      const float alpha = new_max == -INFINITY ? 1.0f : __expf(old_max - new_max);
      for (int c = half; c < d_size; c += 2) of[my_row * op + c] *= alpha;
      __syncwarp(); /* both lanes have read the row's old maximum */
      if (half == 0) {
        row_max[my_row] = new_max;
        row_sum[my_row] = row_sum[my_row] * alpha + sum;
      }
    }
    __syncwarp();
    /* The warp's rows of the accumulator += P.V. */
    for (int cb = 0; cb < d_size / 16; ++cb) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, of + own * op + cb * 16, op, wmma::mem_row_major);
      for (int kk = 0; kk < BK; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, ps + own * PP + kk, PP);
        wmma::load_matrix_sync(fb, vs + kk * hp + cb * 16, hp);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(of + own * op + cb * 16, acc, op, wmma::mem_row_major);
    }
  }
  __syncthreads();
  const int64_t width = g.heads * d_size;
  for (int e = threadIdx.x; e < BQ * d_size; e += ETRT_ATTENTION_THREADS) {
    const int r = e / d_size;
    const int64_t i = q0 + r;
    if (i < g.q_len)
      out[(b * g.q_len + i) * width + h * d_size + e % d_size] =
          etrt_cvt<T>(of[r * op + e % d_size] / row_sum[r]);
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

/* Whether the tensor-core kernel takes these heads. */
static bool etrt_attention_tc_fits(etrt_dtype dtype, int64_t head_size) {
  return (dtype == ETRT_DTYPE_FLOAT16 || dtype == ETRT_DTYPE_BFLOAT16) && head_size % 16 == 0 &&
         head_size <= ETRT_ATTENTION_TC_MAX_HEAD;
}

/* The state of a node whose context raised the tensor-core kernel's shared-memory
 * limit (setup below); nothing to free. */
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
      etrt_attention_tc_kernel<__half>
          <<<(unsigned)blocks, ETRT_ATTENTION_THREADS,
             etrt_attention_tc_smem<__half>((int)g.head_size), stream>>>(
              (const __half *)inputs[0].data, (const __half *)inputs[1].data,
              (const __half *)inputs[2].data, (const __half *)mask, (__half *)outputs[0].data, g,
              wide);
    else
      etrt_attention_tc_kernel<__nv_bfloat16>
          <<<(unsigned)blocks, ETRT_ATTENTION_THREADS,
             etrt_attention_tc_smem<__nv_bfloat16>((int)g.head_size), stream>>>(
              (const __nv_bfloat16 *)inputs[0].data, (const __nv_bfloat16 *)inputs[1].data,
              (const __nv_bfloat16 *)inputs[2].data, (const __nv_bfloat16 *)mask,
              (__nv_bfloat16 *)outputs[0].data, g, wide);
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

/* Raises the tensor-core kernel's shared-memory limit for these heads, once per context
 * (a function attribute, outside any launch or capture). ETRT_CUDA_ATTENTION_TC=0 keeps
 * the warp kernel, to compare the two. */
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
  cudaError_t e;
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT16)
    e = cudaFuncSetAttribute(etrt_attention_tc_kernel<__half>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)etrt_attention_tc_smem<__half>(ETRT_ATTENTION_TC_MAX_HEAD));
  else
    e = cudaFuncSetAttribute(
        etrt_attention_tc_kernel<__nv_bfloat16>, cudaFuncAttributeMaxDynamicSharedMemorySize,
        (int)etrt_attention_tc_smem<__nv_bfloat16>(ETRT_ATTENTION_TC_MAX_HEAD));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return ETRT_OK; /* the warp kernel runs it */
  }
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
