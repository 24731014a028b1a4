/* RNN, GRU and LSTM (ONNX semantics): the attributes parsed once, the geometry of a
 * node, and the cell arithmetic of one (batch, hidden) element at one step, shared
 * by the CPU kernel (cpu/recurrent.c) and the CUDA kernel (cuda/recurrent.cu).
 *
 * Both kernels run a direction the same way: the input projection of every timestep
 * at once (X * W^T, one GEMM), then per step the recurrent projection (H * R^T, one
 * GEMM; a GRU without linear_before_reset makes a second one of (r . H) * R_h^T)
 * and the element-wise cell update, which writes Y and carries H (and C). A batch
 * entry past its sequence_lens length stops: its Y steps stay zero and its state is
 * the one of its last step. Float32 only. */
#ifndef ETRT_ENGINE_OPS_RECURRENT_H
#define ETRT_ENGINE_OPS_RECURRENT_H

#include <math.h>
#include <stdint.h>

#include "engine/op.h"

#ifdef __CUDACC__
#define ETRT_RNN_FN __host__ __device__ static inline
#else
#define ETRT_RNN_FN static inline
#endif

typedef enum etrt_rnn_cell_kind {
  ETRT_RNN_CELL_RNN = 0, /* gate i */
  ETRT_RNN_CELL_GRU = 1, /* gates z, r, h */
  ETRT_RNN_CELL_LSTM = 2 /* gates i, o, f, c */
} etrt_rnn_cell_kind;

typedef enum etrt_rnn_act_kind {
  ETRT_RNN_ACT_SIGMOID = 0,
  ETRT_RNN_ACT_TANH,
  ETRT_RNN_ACT_RELU,
  ETRT_RNN_ACT_AFFINE,
  ETRT_RNN_ACT_LEAKY_RELU,
  ETRT_RNN_ACT_THRESHOLDED_RELU,
  ETRT_RNN_ACT_SCALED_TANH,
  ETRT_RNN_ACT_HARD_SIGMOID,
  ETRT_RNN_ACT_ELU,
  ETRT_RNN_ACT_SOFTSIGN,
  ETRT_RNN_ACT_SOFTPLUS
} etrt_rnn_act_kind;

typedef struct etrt_rnn_act {
  int32_t kind;
  float alpha, beta;
} etrt_rnn_act;

/* A cell's activations per direction: RNN f; GRU f, g; LSTM f, g, h. */
#define ETRT_RNN_MAX_ACTS 3

typedef struct etrt_rnn_state {
  int32_t cell;       /* etrt_rnn_cell_kind */
  int32_t gates;      /* 1, 3 or 4 */
  int32_t directions; /* 1 or 2 */
  int32_t reverse;    /* direction "reverse" (one direction, run backwards) */
  int32_t layout;     /* 0: [seq, batch, ...]; 1: [batch, seq, ...] */
  int32_t linear_before_reset;
  int64_t hidden;
  float clip; /* 0: none */
  etrt_rnn_act acts[2][ETRT_RNN_MAX_ACTS];
} etrt_rnn_state;

/* A node's sizes, from its inputs (checked by the shape inference). */
typedef struct etrt_rnn_dims {
  int64_t seq, batch, input, hidden;
  int32_t directions, gates;
} etrt_rnn_dims;

void etrt_rnn_dims_of(const etrt_node *node, const etrt_tensor *inputs, etrt_rnn_dims *d);

/* Input and output positions. */
enum {
  ETRT_RNN_IN_X = 0,
  ETRT_RNN_IN_W = 1,
  ETRT_RNN_IN_R = 2,
  ETRT_RNN_IN_B = 3,
  ETRT_RNN_IN_LENS = 4,
  ETRT_RNN_IN_H0 = 5,
  ETRT_RNN_IN_C0 = 6,
  ETRT_RNN_IN_P = 7
};
enum { ETRT_RNN_OUT_Y = 0, ETRT_RNN_OUT_H = 1, ETRT_RNN_OUT_C = 2 };

/* Row of X (and of the input projection) for step t of batch entry b. */
ETRT_RNN_FN int64_t etrt_rnn_x_row(int32_t layout, int64_t seq, int64_t batch, int64_t t,
                                   int64_t b) {
  return layout ? b * seq + t : t * batch + b;
}

/* Offset of Y[t, dir, b, 0] (layout 0: [seq, dirs, batch, hidden]; 1: [batch, seq,
 * dirs, hidden]). */
ETRT_RNN_FN int64_t etrt_rnn_y_at(int32_t layout, const etrt_rnn_dims *d, int64_t t, int32_t dir,
                                  int64_t b) {
  return layout ? ((b * d->seq + t) * d->directions + dir) * d->hidden
                : ((t * d->directions + dir) * d->batch + b) * d->hidden;
}

/* Offset of a state's [dir, b, 0] (initial_h, Y_h...; layout 1: [batch, dirs, hidden]). */
ETRT_RNN_FN int64_t etrt_rnn_state_at(int32_t layout, const etrt_rnn_dims *d, int32_t dir,
                                      int64_t b) {
  return layout ? (b * d->directions + dir) * d->hidden : (dir * d->batch + b) * d->hidden;
}

ETRT_RNN_FN float etrt_rnn_activate(etrt_rnn_act a, float x) {
  switch (a.kind) {
    case ETRT_RNN_ACT_SIGMOID:
      return 1.0f / (1.0f + expf(-x));
    case ETRT_RNN_ACT_TANH:
      return tanhf(x);
    case ETRT_RNN_ACT_RELU:
      return x > 0.0f ? x : 0.0f;
    case ETRT_RNN_ACT_AFFINE:
      return a.alpha * x + a.beta;
    case ETRT_RNN_ACT_LEAKY_RELU:
      return x >= 0.0f ? x : a.alpha * x;
    case ETRT_RNN_ACT_THRESHOLDED_RELU:
      return x > a.alpha ? x : 0.0f;
    case ETRT_RNN_ACT_SCALED_TANH:
      return a.alpha * tanhf(a.beta * x);
    case ETRT_RNN_ACT_HARD_SIGMOID: {
      float v = a.alpha * x + a.beta;
      return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    case ETRT_RNN_ACT_ELU:
      return x >= 0.0f ? x : a.alpha * (expf(x) - 1.0f);
    case ETRT_RNN_ACT_SOFTSIGN:
      return x / (1.0f + fabsf(x));
    default: /* softplus */
      return logf(1.0f + expf(x));
  }
}

/* The per-direction constants of a cell update. */
typedef struct etrt_rnn_cell {
  int32_t kind, linear_before_reset;
  int64_t hidden;
  float clip;
  etrt_rnn_act f, g, h;
  const float *wb, *rb; /* the direction's W and R biases ([gates * hidden] each) or NULL */
  const float *p;       /* LSTM peepholes [3 * hidden] (i, o, f) or NULL */
} etrt_rnn_cell;

ETRT_RNN_FN float etrt_rnn_clip(const etrt_rnn_cell *c, float x) {
  if (c->clip > 0.0f) return x < -c->clip ? -c->clip : x > c->clip ? c->clip : x;
  return x;
}

/* Gate q's pre-activation of element j: projections plus both biases. */
ETRT_RNN_FN float etrt_rnn_gate(const etrt_rnn_cell *c, const float *xp, const float *hp, int q,
                                int64_t j) {
  int64_t at = q * c->hidden + j;
  float v = xp[at] + hp[at];
  if (c->wb != NULL) v += c->wb[at] + c->rb[at];
  return v;
}

/* GRU without linear_before_reset, first half: r . H_prev[j], the operand of the
 * second recurrent product. */
ETRT_RNN_FN float etrt_rnn_gru_reset(const etrt_rnn_cell *c, const float *xp, const float *hp,
                                     int64_t j, float h_prev) {
  return etrt_rnn_activate(c->f, etrt_rnn_clip(c, etrt_rnn_gate(c, xp, hp, 1, j))) * h_prev;
}

/* The update of element j: xp and hp are the step's input and recurrent projections
 * of this batch entry ([gates * hidden]; for a GRU without linear_before_reset,
 * hp's h part holds (r . H_prev) * R_h^T); *h and *c (LSTM) are updated in place. */
ETRT_RNN_FN void etrt_rnn_cell_update(const etrt_rnn_cell *c, const float *xp, const float *hp,
                                      int64_t j, float *h, float *cs) {
  int64_t n = c->hidden;
  if (c->kind == ETRT_RNN_CELL_RNN) {
    *h = etrt_rnn_activate(c->f, etrt_rnn_clip(c, etrt_rnn_gate(c, xp, hp, 0, j)));
  } else if (c->kind == ETRT_RNN_CELL_GRU) {
    float z = etrt_rnn_activate(c->f, etrt_rnn_clip(c, etrt_rnn_gate(c, xp, hp, 0, j)));
    float hh;
    if (c->linear_before_reset) {
      float r = etrt_rnn_activate(c->f, etrt_rnn_clip(c, etrt_rnn_gate(c, xp, hp, 1, j)));
      float rec = hp[2 * n + j] + (c->rb != NULL ? c->rb[2 * n + j] : 0.0f);
      hh = xp[2 * n + j] + (c->wb != NULL ? c->wb[2 * n + j] : 0.0f) + r * rec;
    } else {
      hh = etrt_rnn_gate(c, xp, hp, 2, j);
    }
    hh = etrt_rnn_activate(c->g, etrt_rnn_clip(c, hh));
    *h = (1.0f - z) * hh + z * *h;
  } else {
    float c_prev = *cs;
    float gi = etrt_rnn_gate(c, xp, hp, 0, j), go = etrt_rnn_gate(c, xp, hp, 1, j);
    float gf = etrt_rnn_gate(c, xp, hp, 2, j), gc = etrt_rnn_gate(c, xp, hp, 3, j);
    if (c->p != NULL) {
      gi += c->p[j] * c_prev;
      gf += c->p[2 * n + j] * c_prev;
    }
    float i = etrt_rnn_activate(c->f, etrt_rnn_clip(c, gi));
    float f = etrt_rnn_activate(c->f, etrt_rnn_clip(c, gf));
    float ct = etrt_rnn_activate(c->g, etrt_rnn_clip(c, gc));
    float c_new = f * c_prev + i * ct;
    if (c->p != NULL) go += c->p[n + j] * c_new;
    float o = etrt_rnn_activate(c->f, etrt_rnn_clip(c, go));
    *cs = c_new;
    *h = o * etrt_rnn_activate(c->h, c_new);
  }
}

/* Direction dir's cell constants; biases and peepholes from the node's inputs at
 * `b` and `p` (NULL when omitted), on whichever memory the kernel uses. */
void etrt_rnn_cell_of(const etrt_rnn_state *s, int32_t dir, int64_t hidden, const float *b,
                      const float *p, etrt_rnn_cell *out);

#endif
