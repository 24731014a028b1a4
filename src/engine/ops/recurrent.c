/* RNN, GRU and LSTM: X [seq, batch, input] (layout 1: [batch, seq, input]), W
 * [dirs, gates * hidden, input], R [dirs, gates * hidden, hidden], optional B
 * [dirs, 2 * gates * hidden], sequence_lens [batch] (int32), initial_h (and LSTM
 * initial_c) [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]) and LSTM
 * peepholes P [dirs, 3 * hidden]; outputs Y, Y_h (and LSTM Y_c), each optional.
 * The activations attribute (ONNX's list of strings) is read as one string of
 * names separated by commas; activation_alpha and activation_beta are consumed in
 * order by the activations that take them. */
#include "engine/ops/recurrent.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine/ops/op_check.h"

static const struct {
  const char *name;
  int32_t kind;
  int alpha, beta; /* takes them */
  float alpha_default, beta_default;
} etrt_rnn_act_names[] = {
    {"Sigmoid", ETRT_RNN_ACT_SIGMOID, 0, 0, 0.0f, 0.0f},
    {"Tanh", ETRT_RNN_ACT_TANH, 0, 0, 0.0f, 0.0f},
    {"Relu", ETRT_RNN_ACT_RELU, 0, 0, 0.0f, 0.0f},
    {"Affine", ETRT_RNN_ACT_AFFINE, 1, 1, 1.0f, 0.0f},
    {"LeakyRelu", ETRT_RNN_ACT_LEAKY_RELU, 1, 0, 0.01f, 0.0f},
    {"ThresholdedRelu", ETRT_RNN_ACT_THRESHOLDED_RELU, 1, 0, 1.0f, 0.0f},
    {"ScaledTanh", ETRT_RNN_ACT_SCALED_TANH, 1, 1, 1.0f, 1.0f},
    {"HardSigmoid", ETRT_RNN_ACT_HARD_SIGMOID, 1, 1, 0.2f, 0.5f},
    {"Elu", ETRT_RNN_ACT_ELU, 1, 0, 1.0f, 0.0f},
    {"Softsign", ETRT_RNN_ACT_SOFTSIGN, 0, 0, 0.0f, 0.0f},
    {"Softplus", ETRT_RNN_ACT_SOFTPLUS, 0, 0, 0.0f, 0.0f},
};

/* Parses the activations of every direction into s->acts. */
static etrt_status etrt_rnn_parse_acts(const etrt_node *node, etrt_rnn_state *s, int count) {
  static const int32_t defaults[3][ETRT_RNN_MAX_ACTS] = {
      {ETRT_RNN_ACT_TANH}, /* RNN: f */
      {ETRT_RNN_ACT_SIGMOID, ETRT_RNN_ACT_TANH},
      {ETRT_RNN_ACT_SIGMOID, ETRT_RNN_ACT_TANH, ETRT_RNN_ACT_TANH}};
  const char *list = etrt_node_attribute_string(node, "activations", NULL);
  const etrt_attribute *alphas = etrt_node_attribute(node, "activation_alpha");
  const etrt_attribute *betas = etrt_node_attribute(node, "activation_beta");
  int64_t next_alpha = 0, next_beta = 0;
  const char *at = list;
  for (int32_t dir = 0; dir < s->directions; ++dir) {
    for (int k = 0; k < count; ++k) {
      etrt_rnn_act *a = &s->acts[dir][k];
      a->kind = defaults[s->cell][k];
      a->alpha = a->beta = 0.0f;
      if (list == NULL) continue;
      while (*at == ',' || *at == ' ') ++at;
      size_t len = strcspn(at, ", ");
      if (len == 0)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "activations '%s' names fewer than the %d the cell needs for %d "
                             "direction(s)",
                             list, count * s->directions, s->directions);
      size_t e = 0, names = sizeof etrt_rnn_act_names / sizeof etrt_rnn_act_names[0];
      while (e < names && !(strlen(etrt_rnn_act_names[e].name) == len &&
                            strncasecmp(etrt_rnn_act_names[e].name, at, len) == 0))
        ++e;
      if (e == names)
        return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "activation '%.*s' is not supported",
                             (int)len, at);
      at += len;
      a->kind = etrt_rnn_act_names[e].kind;
      a->alpha = etrt_rnn_act_names[e].alpha_default;
      a->beta = etrt_rnn_act_names[e].beta_default;
      if (etrt_rnn_act_names[e].alpha && alphas != NULL && alphas->kind == ETRT_ATTRIBUTE_FLOATS &&
          next_alpha < alphas->count)
        a->alpha = alphas->floats[next_alpha++];
      if (etrt_rnn_act_names[e].beta && betas != NULL && betas->kind == ETRT_ATTRIBUTE_FLOATS &&
          next_beta < betas->count)
        a->beta = betas->floats[next_beta++];
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_rnn_prepare_cell(const etrt_node *node, void *state, int32_t cell) {
  static const int32_t gates[3] = {1, 3, 4}, act_count[3] = {1, 2, 3};
  etrt_rnn_state *s = state;
  memset(s, 0, sizeof *s);
  s->cell = cell;
  s->gates = gates[cell];
  s->hidden = etrt_node_attribute_int(node, "hidden_size", 0);
  if (s->hidden <= 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "hidden_size must be given and positive, got %lld", (long long)s->hidden);
  const char *direction = etrt_node_attribute_string(node, "direction", "forward");
  if (strcmp(direction, "forward") == 0) {
    s->directions = 1;
  } else if (strcmp(direction, "reverse") == 0) {
    s->directions = 1;
    s->reverse = 1;
  } else if (strcmp(direction, "bidirectional") == 0) {
    s->directions = 2;
  } else {
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "direction '%s' is not forward, reverse or bidirectional", direction);
  }
  int64_t layout = etrt_node_attribute_int(node, "layout", 0);
  if (layout != 0 && layout != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "layout must be 0 or 1, got %lld",
                         (long long)layout);
  s->layout = (int32_t)layout;
  s->linear_before_reset = etrt_node_attribute_int(node, "linear_before_reset", 0) != 0;
  if (etrt_node_attribute_int(node, "input_forget", 0) != 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "input_forget 1 is not supported");
  s->clip = etrt_node_attribute_float(node, "clip", 0.0f);
  if (s->clip < 0.0f)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "clip must be positive, got %g",
                         (double)s->clip);
  return etrt_rnn_parse_acts(node, s, act_count[cell]);
}

static etrt_status etrt_rnn_prepare(const etrt_node *node, void *state) {
  return etrt_rnn_prepare_cell(node, state, ETRT_RNN_CELL_RNN);
}
static etrt_status etrt_gru_prepare(const etrt_node *node, void *state) {
  return etrt_rnn_prepare_cell(node, state, ETRT_RNN_CELL_GRU);
}
static etrt_status etrt_lstm_prepare(const etrt_node *node, void *state) {
  return etrt_rnn_prepare_cell(node, state, ETRT_RNN_CELL_LSTM);
}

void etrt_rnn_dims_of(const etrt_node *node, const etrt_tensor *inputs, etrt_rnn_dims *d) {
  const etrt_rnn_state *s = node->state;
  const etrt_tensor *x = &inputs[ETRT_RNN_IN_X];
  d->seq = x->dims[s->layout ? 1 : 0];
  d->batch = x->dims[s->layout ? 0 : 1];
  d->input = x->dims[2];
  d->hidden = s->hidden;
  d->directions = s->directions;
  d->gates = s->gates;
}

void etrt_rnn_cell_of(const etrt_rnn_state *s, int32_t dir, int64_t hidden, const float *b,
                      const float *p, etrt_rnn_cell *out) {
  memset(out, 0, sizeof *out);
  out->kind = s->cell;
  out->linear_before_reset = s->linear_before_reset;
  out->hidden = hidden;
  out->clip = s->clip;
  out->f = s->acts[dir][0];
  out->g = s->acts[dir][1];
  out->h = s->acts[dir][2];
  if (b != NULL) {
    out->wb = b + (int64_t)dir * 2 * s->gates * hidden;
    out->rb = out->wb + s->gates * hidden;
  }
  if (p != NULL) out->p = p + (int64_t)dir * 3 * hidden;
}

/* Input `index`, when present, must be float32 of rank `rank` with these dims. */
static etrt_status etrt_rnn_check_input(const etrt_node *node, const etrt_tensor *inputs,
                                        uint32_t index, const char *name, etrt_dtype dtype,
                                        int32_t rank, const int64_t *dims) {
  if (!etrt_op_has_input(node, inputs, index)) return ETRT_OK;
  const etrt_tensor *t = &inputs[index];
  int same = t->dtype == dtype && t->rank == rank;
  for (int32_t a = 0; same && a < rank; ++a) same = t->dims[a] == dims[a];
  if (same) return ETRT_OK;
  char want[96];
  int at = snprintf(want, sizeof want, "[");
  for (int32_t a = 0; a < rank && at < (int)sizeof want; ++a)
    at +=
        snprintf(want + at, sizeof want - (size_t)at, "%s%lld", a ? ", " : "", (long long)dims[a]);
  return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u (%s) must be %s of shape %s]",
                       index, name, dtype == ETRT_DTYPE_INT32 ? "int32" : "float32", want);
}

static etrt_status etrt_rnn_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  const etrt_rnn_state *s = node->state;
  uint32_t max_in = s->cell == ETRT_RNN_CELL_LSTM ? 8 : 6;
  uint32_t max_out = s->cell == ETRT_RNN_CELL_LSTM ? 3 : 2;
  if (node->num_inputs < 3 || node->num_inputs > max_in || node->num_outputs > max_out)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 3 to %u inputs and up to %u outputs, got %u and %u", max_in,
                         max_out, node->num_inputs, node->num_outputs);
  const etrt_tensor *x = &inputs[ETRT_RNN_IN_X];
  if (x->rank != 3 || x->dtype != ETRT_DTYPE_FLOAT32)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "input 0 (X) must be float32 of rank 3 (got rank %d)", (int)x->rank);
  etrt_rnn_dims d;
  etrt_rnn_dims_of(node, inputs, &d);
  int64_t gh = d.gates * d.hidden;
  const int64_t w[3] = {d.directions, gh, d.input}, r[3] = {d.directions, gh, d.hidden};
  const int64_t b[2] = {d.directions, 2 * gh}, lens[1] = {d.batch};
  const int64_t p[2] = {d.directions, 3 * d.hidden};
  const int64_t st[3] = {s->layout ? d.batch : d.directions, s->layout ? d.directions : d.batch,
                         d.hidden};
  for (uint32_t i = 1; i < 3; ++i)
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u (%s) is required", i,
                           i == 1 ? "W" : "R");
  ETRT_RETURN_IF_ERROR(etrt_rnn_check_input(node, inputs, 1, "W", ETRT_DTYPE_FLOAT32, 3, w));
  ETRT_RETURN_IF_ERROR(etrt_rnn_check_input(node, inputs, 2, "R", ETRT_DTYPE_FLOAT32, 3, r));
  ETRT_RETURN_IF_ERROR(etrt_rnn_check_input(node, inputs, 3, "B", ETRT_DTYPE_FLOAT32, 2, b));
  ETRT_RETURN_IF_ERROR(
      etrt_rnn_check_input(node, inputs, 4, "sequence_lens", ETRT_DTYPE_INT32, 1, lens));
  ETRT_RETURN_IF_ERROR(
      etrt_rnn_check_input(node, inputs, 5, "initial_h", ETRT_DTYPE_FLOAT32, 3, st));
  ETRT_RETURN_IF_ERROR(
      etrt_rnn_check_input(node, inputs, 6, "initial_c", ETRT_DTYPE_FLOAT32, 3, st));
  ETRT_RETURN_IF_ERROR(etrt_rnn_check_input(node, inputs, 7, "P", ETRT_DTYPE_FLOAT32, 2, p));
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    outputs[o].dtype = ETRT_DTYPE_FLOAT32;
    if (o == ETRT_RNN_OUT_Y) {
      outputs[o].rank = 4;
      const int64_t y0[4] = {d.seq, d.directions, d.batch, d.hidden};
      const int64_t y1[4] = {d.batch, d.seq, d.directions, d.hidden};
      memcpy(outputs[o].dims, s->layout ? y1 : y0, sizeof y0);
    } else {
      outputs[o].rank = 3;
      memcpy(outputs[o].dims, st, sizeof st);
    }
  }
  return ETRT_OK;
}

#define ETRT_RNN_DEF(type, prep)                                                       \
  {                                                                                    \
    .op_type = type, .state_size = sizeof(etrt_rnn_state), .prepare = prep,            \
    .infer = etrt_rnn_infer, .cuda_supports = etrt_op_supports_all, .value_inputs = 0u \
  }

static const etrt_op_def etrt_op_def_rnn = ETRT_RNN_DEF("RNN", etrt_rnn_prepare);
static const etrt_op_def etrt_op_def_gru = ETRT_RNN_DEF("GRU", etrt_gru_prepare);
static const etrt_op_def etrt_op_def_lstm = ETRT_RNN_DEF("LSTM", etrt_lstm_prepare);

const etrt_op_def *const etrt_ops_recurrent[] = {&etrt_op_def_rnn, &etrt_op_def_gru,
                                                 &etrt_op_def_lstm, NULL};
