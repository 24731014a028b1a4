/* CPU kernels of RNN, GRU and LSTM (ops/recurrent.h): per direction, the input
 * projection of every step with one GEMM, then per step the recurrent GEMM(s) and
 * the shared cell update. The CPU executor gives kernels no scratch memory, so the
 * projections and transposed weights live in one block allocated per run. */
#include <stdlib.h>
#include <string.h>

#include "engine/ops/cpu/gemm_util.h"
#include "engine/ops/op_check.h"
#include "engine/ops/recurrent.h"

/* out[k * rows + r] = in[r * cols + k]: the GEMM reads B with unit column stride. */
static void etrt_rnn_transpose(const float *in, int64_t rows, int64_t cols, float *out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) out[k * rows + r] = in[r * cols + k];
}

typedef struct etrt_rnn_work {
  float *wt, *rt, *xp, *hp, *h, *c, *rh;
} etrt_rnn_work;

/* One direction: h and c hold the initial state and end as the final one. */
static void etrt_rnn_direction(const etrt_node *node, const etrt_tensor *inputs,
                               const etrt_rnn_dims *d, int32_t dir, const int32_t *lens, float *y,
                               etrt_rnn_work *w) {
  const etrt_rnn_state *s = node->state;
  int64_t gh = d->gates * d->hidden, n = d->hidden;
  const float *x = inputs[ETRT_RNN_IN_X].data;
  const float *wd = (const float *)inputs[ETRT_RNN_IN_W].data + dir * gh * d->input;
  const float *rd = (const float *)inputs[ETRT_RNN_IN_R].data + dir * gh * n;
  etrt_rnn_cell cell;
  etrt_rnn_cell_of(
      s, dir, n, etrt_op_has_input(node, inputs, ETRT_RNN_IN_B) ? inputs[ETRT_RNN_IN_B].data : NULL,
      etrt_op_has_input(node, inputs, ETRT_RNN_IN_P) ? inputs[ETRT_RNN_IN_P].data : NULL, &cell);
  etrt_rnn_transpose(wd, gh, d->input, w->wt);
  etrt_rnn_transpose(rd, gh, n, w->rt);
  /* Rows of X in memory order: layout only changes which row is step t of entry b. */
  etrt_cpu_gemm_f32(d->seq * d->batch, gh, d->input, 1.0f, x, d->input, 1, w->wt, gh, w->xp, gh, 0);
  int reverse = s->reverse || dir == 1;
  int two_products = s->cell == ETRT_RNN_CELL_GRU && !s->linear_before_reset;
  for (int64_t step = 0; step < d->seq; ++step) {
    etrt_cpu_gemm_f32(d->batch, two_products ? 2 * n : gh, n, 1.0f, w->h, n, 1, w->rt, gh, w->hp,
                      gh, 0);
    if (two_products) {
      for (int64_t b = 0; b < d->batch; ++b) {
        int64_t len = lens != NULL ? lens[b] : d->seq;
        int64_t t = reverse ? len - 1 - step : step;
        const float *xp = w->xp + etrt_rnn_x_row(s->layout, d->seq, d->batch, t, b) * gh;
        for (int64_t j = 0; j < n; ++j)
          w->rh[b * n + j] =
              step < len ? etrt_rnn_gru_reset(&cell, xp, w->hp + b * gh, j, w->h[b * n + j]) : 0.0f;
      }
      etrt_cpu_gemm_f32(d->batch, n, n, 1.0f, w->rh, n, 1, w->rt + 2 * n, gh, w->hp + 2 * n, gh, 0);
    }
    for (int64_t b = 0; b < d->batch; ++b) {
      int64_t len = lens != NULL ? lens[b] : d->seq;
      if (step >= len) continue;
      int64_t t = reverse ? len - 1 - step : step;
      const float *xp = w->xp + etrt_rnn_x_row(s->layout, d->seq, d->batch, t, b) * gh;
      float *yt = y != NULL ? y + etrt_rnn_y_at(s->layout, d, t, dir, b) : NULL;
      for (int64_t j = 0; j < n; ++j) {
        etrt_rnn_cell_update(&cell, xp, w->hp + b * gh, j, &w->h[b * n + j], &w->c[b * n + j]);
        if (yt != NULL) yt[j] = w->h[b * n + j];
      }
    }
  }
}

/* Copies a state between [batch, hidden] and its place in a [dirs, batch, hidden]
 * (or layout 1) tensor; to_tensor picks the direction of the copy. */
static void etrt_rnn_state_copy(const etrt_rnn_state *s, const etrt_rnn_dims *d, int32_t dir,
                                float *tensor, float *state, int to_tensor) {
  for (int64_t b = 0; b < d->batch; ++b) {
    float *t = tensor + etrt_rnn_state_at(s->layout, d, dir, b);
    if (to_tensor)
      memcpy(t, state + b * d->hidden, (size_t)d->hidden * sizeof *t);
    else
      memcpy(state + b * d->hidden, t, (size_t)d->hidden * sizeof *t);
  }
}

static etrt_status etrt_cpu_recurrent(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  const etrt_rnn_state *s = node->state;
  etrt_rnn_dims d;
  etrt_rnn_dims_of(node, inputs, &d);
  int64_t gh = d.gates * d.hidden, n = d.hidden;
  const int32_t *lens = NULL;
  if (etrt_op_has_input(node, inputs, ETRT_RNN_IN_LENS)) {
    lens = inputs[ETRT_RNN_IN_LENS].data;
    for (int64_t b = 0; b < d.batch; ++b)
      if (lens[b] < 0 || lens[b] > d.seq)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "sequence_lens[%lld] is %d, outside [0, %lld]", (long long)b,
                             (int)lens[b], (long long)d.seq);
  }
  float *y = node->num_outputs > ETRT_RNN_OUT_Y && outputs[ETRT_RNN_OUT_Y].data != NULL
                 ? outputs[ETRT_RNN_OUT_Y].data
                 : NULL;
  if (y != NULL) memset(y, 0, (size_t)etrt_tensor_numel(&outputs[ETRT_RNN_OUT_Y]) * sizeof *y);
  if (d.seq * d.batch == 0) return ETRT_OK;
  size_t floats =
      (size_t)(d.input * gh + n * gh + d.seq * d.batch * gh + d.batch * gh + 3 * d.batch * n);
  float *block = malloc(floats * sizeof *block);
  if (block == NULL)
    return etrt_op_error(node, ETRT_ERROR_OUT_OF_MEMORY, "out of memory for %zu floats", floats);
  etrt_rnn_work w;
  w.wt = block;
  w.rt = w.wt + d.input * gh;
  w.xp = w.rt + n * gh;
  w.hp = w.xp + d.seq * d.batch * gh;
  w.h = w.hp + d.batch * gh;
  w.c = w.h + d.batch * n;
  w.rh = w.c + d.batch * n;
  for (int32_t dir = 0; dir < d.directions; ++dir) {
    memset(w.h, 0, (size_t)(2 * d.batch * n) * sizeof *w.h);
    if (etrt_op_has_input(node, inputs, ETRT_RNN_IN_H0))
      etrt_rnn_state_copy(s, &d, dir, inputs[ETRT_RNN_IN_H0].data, w.h, 0);
    if (etrt_op_has_input(node, inputs, ETRT_RNN_IN_C0))
      etrt_rnn_state_copy(s, &d, dir, inputs[ETRT_RNN_IN_C0].data, w.c, 0);
    etrt_rnn_direction(node, inputs, &d, dir, lens, y, &w);
    if (node->num_outputs > ETRT_RNN_OUT_H && outputs[ETRT_RNN_OUT_H].data != NULL)
      etrt_rnn_state_copy(s, &d, dir, outputs[ETRT_RNN_OUT_H].data, w.h, 1);
    if (node->num_outputs > ETRT_RNN_OUT_C && outputs[ETRT_RNN_OUT_C].data != NULL)
      etrt_rnn_state_copy(s, &d, dir, outputs[ETRT_RNN_OUT_C].data, w.c, 1);
  }
  free(block);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_recurrent[] = {
    {"RNN", etrt_cpu_recurrent},
    {"GRU", etrt_cpu_recurrent},
    {"LSTM", etrt_cpu_recurrent},
    {NULL, NULL},
};
