/* RNN, GRU and LSTM on the GPU (ops/recurrent.h): per direction, the input
 * projection of every step with one cuBLASLt GEMM, then per step the recurrent
 * GEMM(s) and one fused kernel for the gates (the cell update shared with the CPU
 * kernel), all on the stream: no host round trip between steps. A sequence_lens
 * value outside [0, seq] is recorded as the node's fault (the run fails, as on the
 * CPU) and clamped. Workspace: the GEMM's scratch, then the input projections
 * [seq * batch, gates * hidden], the recurrent ones [batch, gates * hidden] and the
 * state H, C and r . H [batch, hidden] each. */
#include "engine/ops/cuda/gemm.h"

extern "C" {
#include "engine/ops/op_check.h"
#include "engine/ops/recurrent.h"
}

/* The workspace's parts, each aligned for any element type. */
typedef struct etrt_rnn_parts {
  size_t xp, hp, h, c, rh, total;
} etrt_rnn_parts;

static size_t etrt_rnn_align(size_t v) { return (v + 255) & ~(size_t)255; }

static void etrt_rnn_parts_of(const etrt_rnn_dims *d, etrt_rnn_parts *p) {
  size_t gh = (size_t)(d->gates * d->hidden), state = (size_t)(d->batch * d->hidden) * 4;
  p->xp = etrt_rnn_align(ETRT_CUDA_GEMM_WORKSPACE);
  p->hp = p->xp + etrt_rnn_align((size_t)(d->seq * d->batch) * gh * 4);
  p->h = p->hp + etrt_rnn_align((size_t)d->batch * gh * 4);
  p->c = p->h + etrt_rnn_align(state);
  p->rh = p->c + etrt_rnn_align(state);
  p->total = p->rh + etrt_rnn_align(state);
}

/* Length of batch entry b's sequence, clamped; a bad one is the node's fault. */
__device__ __forceinline__ int64_t etrt_rnn_len(const int32_t *lens, int64_t b, int64_t seq,
                                                uint32_t *fault, uint32_t node) {
  if (lens == NULL) return seq;
  int64_t len = lens[b];
  if (len < 0 || len > seq) {
    etrt_cuda_fault(fault, node);
    len = len < 0 ? 0 : seq;
  }
  return len;
}

/* h, c = the direction's initial state (zeros when not given). */
__global__ void etrt_rnn_init_kernel(const float *h0, const float *c0, float *h, float *c,
                                     etrt_rnn_dims d, int32_t layout, int32_t dir) {
  ETRT_CUDA_LOOP(e, d.batch * d.hidden) {
    int64_t b = e / d.hidden, j = e % d.hidden;
    int64_t at = etrt_rnn_state_at(layout, &d, dir, b) + j;
    h[e] = h0 != NULL ? h0[at] : 0.0f;
    c[e] = c0 != NULL ? c0[at] : 0.0f;
  }
}

/* Y_h, Y_c = the direction's final state. */
__global__ void etrt_rnn_final_kernel(const float *h, const float *c, float *yh, float *yc,
                                      etrt_rnn_dims d, int32_t layout, int32_t dir) {
  ETRT_CUDA_LOOP(e, d.batch * d.hidden) {
    int64_t b = e / d.hidden, j = e % d.hidden;
    int64_t at = etrt_rnn_state_at(layout, &d, dir, b) + j;
    if (yh != NULL) yh[at] = h[e];
    if (yc != NULL) yc[at] = c[e];
  }
}

/* The step's bookkeeping: which X row and Y step batch entry b is at. */
typedef struct etrt_rnn_step {
  etrt_rnn_dims d;
  int32_t layout, dir, reverse;
  int64_t step;
  const int32_t *lens;
  uint32_t *fault;
  uint32_t node;
} etrt_rnn_step;

/* GRU without linear_before_reset: rh = r . H_prev. */
__global__ void etrt_rnn_reset_kernel(etrt_rnn_cell cell, etrt_rnn_step s, const float *xp,
                                      const float *hp, const float *h, float *rh) {
  int64_t n = s.d.hidden, gh = s.d.gates * n;
  ETRT_CUDA_LOOP(e, s.d.batch * n) {
    int64_t b = e / n, j = e % n;
    int64_t len = etrt_rnn_len(s.lens, b, s.d.seq, s.fault, s.node);
    if (s.step >= len) {
      rh[e] = 0.0f;
      continue;
    }
    int64_t t = s.reverse ? len - 1 - s.step : s.step;
    const float *x = xp + etrt_rnn_x_row(s.layout, s.d.seq, s.d.batch, t, b) * gh;
    rh[e] = etrt_rnn_gru_reset(&cell, x, hp + b * gh, j, h[e]);
  }
}

__global__ void etrt_rnn_cell_kernel(etrt_rnn_cell cell, etrt_rnn_step s, const float *xp,
                                     const float *hp, float *h, float *c, float *y) {
  int64_t n = s.d.hidden, gh = s.d.gates * n;
  ETRT_CUDA_LOOP(e, s.d.batch * n) {
    int64_t b = e / n, j = e % n;
    int64_t len = etrt_rnn_len(s.lens, b, s.d.seq, s.fault, s.node);
    if (s.step >= len) continue;
    int64_t t = s.reverse ? len - 1 - s.step : s.step;
    const float *x = xp + etrt_rnn_x_row(s.layout, s.d.seq, s.d.batch, t, b) * gh;
    etrt_rnn_cell_update(&cell, x, hp + b * gh, j, &h[e], &c[e]);
    if (y != NULL) y[etrt_rnn_y_at(s.layout, &s.d, t, s.dir, b) + j] = h[e];
  }
}

static etrt_cuda_gemm_args etrt_rnn_gemm(int64_t m, int64_t n, int64_t k, const float *a,
                                         int64_t lda, const float *b, int64_t ldb, float *y,
                                         int64_t ldy) {
  etrt_cuda_gemm_args g;
  memset(&g, 0, sizeof g);
  g.dtype = ETRT_DTYPE_FLOAT32;
  g.trans_b = 1; /* W and R are stored [gates * hidden][k] */
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = 1;
  g.a = a;
  g.lda = lda;
  g.b = b;
  g.ldb = ldb;
  g.y = y;
  g.ldy = ldy;
  g.alpha = 1.0f;
  g.beta = 0.0f;
  return g;
}

static const void *etrt_rnn_optional(const etrt_node *node, const etrt_tensor *inputs, uint32_t i) {
  return etrt_op_has_input(node, inputs, i) ? inputs[i].data : NULL;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_recurrent) {
  const etrt_rnn_state *st = (const etrt_rnn_state *)node->state;
  etrt_rnn_dims d;
  etrt_rnn_dims_of(node, inputs, &d);
  etrt_rnn_parts parts;
  etrt_rnn_parts_of(&d, &parts);
  cudaStream_t stream = etrt_cuda_stream(launch);
  float *y = node->num_outputs > ETRT_RNN_OUT_Y ? (float *)outputs[ETRT_RNN_OUT_Y].data : NULL;
  float *yh = node->num_outputs > ETRT_RNN_OUT_H ? (float *)outputs[ETRT_RNN_OUT_H].data : NULL;
  float *yc = node->num_outputs > ETRT_RNN_OUT_C ? (float *)outputs[ETRT_RNN_OUT_C].data : NULL;
  if (y != NULL) {
    cudaMemsetAsync(y, 0, (size_t)etrt_tensor_numel(&outputs[ETRT_RNN_OUT_Y]) * sizeof *y, stream);
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "recurrent zero"));
  }
  int64_t cells = d.batch * d.hidden;
  if (cells == 0) return ETRT_OK;
  uint8_t *ws = (uint8_t *)launch->workspace;
  float *xp = (float *)(ws + parts.xp), *hp = (float *)(ws + parts.hp);
  float *h = (float *)(ws + parts.h), *c = (float *)(ws + parts.c), *rh = (float *)(ws + parts.rh);
  int64_t n = d.hidden, gh = d.gates * n;
  int two_products = st->cell == ETRT_RNN_CELL_GRU && !st->linear_before_reset;
  unsigned blocks = etrt_cuda_blocks(cells, ETRT_CUDA_THREADS);
  for (int32_t dir = 0; dir < d.directions; ++dir) {
    const float *w = (const float *)inputs[ETRT_RNN_IN_W].data + dir * gh * d.input;
    const float *r = (const float *)inputs[ETRT_RNN_IN_R].data + dir * gh * n;
    etrt_rnn_cell cell;
    etrt_rnn_cell_of(st, dir, n, (const float *)etrt_rnn_optional(node, inputs, ETRT_RNN_IN_B),
                     (const float *)etrt_rnn_optional(node, inputs, ETRT_RNN_IN_P), &cell);
    etrt_rnn_init_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        (const float *)etrt_rnn_optional(node, inputs, ETRT_RNN_IN_H0),
        (const float *)etrt_rnn_optional(node, inputs, ETRT_RNN_IN_C0), h, c, d, st->layout, dir);
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "recurrent init"));
    if (d.seq > 0) {
      etrt_cuda_gemm_args g =
          etrt_rnn_gemm(d.seq * d.batch, gh, d.input, (const float *)inputs[ETRT_RNN_IN_X].data,
                        d.input, w, d.input, xp, gh);
      ETRT_RETURN_IF_ERROR(etrt_cuda_gemm_run(node, &g, launch, ws, ETRT_CUDA_GEMM_WORKSPACE));
    }
    etrt_rnn_step s;
    memset(&s, 0, sizeof s);
    s.d = d;
    s.layout = st->layout;
    s.dir = dir;
    s.reverse = st->reverse || dir == 1;
    s.lens = (const int32_t *)etrt_rnn_optional(node, inputs, ETRT_RNN_IN_LENS);
    s.fault = launch->fault;
    s.node = launch->node;
    for (int64_t step = 0; step < d.seq; ++step) {
      s.step = step;
      etrt_cuda_gemm_args g =
          etrt_rnn_gemm(d.batch, two_products ? 2 * n : gh, n, h, n, r, n, hp, gh);
      ETRT_RETURN_IF_ERROR(etrt_cuda_gemm_run(node, &g, launch, ws, ETRT_CUDA_GEMM_WORKSPACE));
      if (two_products) {
        etrt_rnn_reset_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(cell, s, xp, hp, h, rh);
        ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "gru reset"));
        g = etrt_rnn_gemm(d.batch, n, n, rh, n, r + 2 * n * n, n, hp + 2 * n, gh);
        ETRT_RETURN_IF_ERROR(etrt_cuda_gemm_run(node, &g, launch, ws, ETRT_CUDA_GEMM_WORKSPACE));
      }
      etrt_rnn_cell_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(cell, s, xp, hp, h, c, y);
      ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "recurrent cell"));
    }
    if (yh != NULL || yc != NULL) {
      etrt_rnn_final_kernel<<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(h, c, yh, yc, d, st->layout,
                                                                      dir);
      ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "recurrent state"));
    }
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_recurrent_workspace) {
  (void)outputs;
  etrt_rnn_dims d;
  etrt_rnn_dims_of(node, inputs, &d);
  etrt_rnn_parts parts;
  etrt_rnn_parts_of(&d, &parts);
  return parts.total;
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_recurrent[] = {
    {"RNN", etrt_cuda_recurrent, etrt_cuda_recurrent_workspace},
    {"GRU", etrt_cuda_recurrent, etrt_cuda_recurrent_workspace},
    {"LSTM", etrt_cuda_recurrent, etrt_cuda_recurrent_workspace},
    {NULL, NULL, NULL},
};
