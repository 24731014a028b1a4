/* The signal operators: shape inference and the plans (signal.h). */
#include "engine/ops/signal.h"

#include "base/dtype.h"
#include "engine/ops/op_check.h"
#include "engine/ops/value_bound.h"

static const etrt_dtype etrt_signal_floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                                                ETRT_DTYPE_INVALID};

/* A 0-D or one-element int32/int64 value input. */
static etrt_status etrt_signal_scalar(const etrt_node *node, const etrt_tensor *inputs,
                                      uint32_t index, const char *what, int64_t *value) {
  int64_t count = 0;
  ETRT_RETURN_IF_ERROR(etrt_op_input_ints(node, inputs, index, what, value, 1, &count));
  if (count != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u (%s) must be one value",
                         index, what);
  return ETRT_OK;
}

/* A 0/1 INT attribute. */
static etrt_status etrt_signal_flag(const etrt_node *node, const char *name, int64_t fallback,
                                    int *out) {
  int64_t v = etrt_node_attribute_int(node, name, fallback);
  if (v != 0 && v != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s must be 0 or 1, not %lld", name,
                         (long long)v);
  *out = (int)v;
  return ETRT_OK;
}

/* The output_datatype attribute of the generators: float32 by default. */
static etrt_status etrt_signal_output_dtype(const etrt_node *node, etrt_dtype *out) {
  int64_t code = etrt_node_attribute_int(node, "output_datatype", 1);
  etrt_dtype d = etrt_dtype_from_onnx(code);
  if (d != ETRT_DTYPE_FLOAT32 && d != ETRT_DTYPE_FLOAT64)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "output_datatype %lld is not supported (float32 or float64)",
                         (long long)code);
  *out = d;
  return ETRT_OK;
}

/* The last dim of a signal: 1 (real) or 2 (complex). */
static etrt_status etrt_signal_channels(const etrt_node *node, const etrt_tensor *x, int32_t rank,
                                        const char *shape) {
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", x->dtype, etrt_signal_floats));
  if (x->rank < rank || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input must be %s with a last dim of 1 (real) or 2 (complex)", shape);
  return ETRT_OK;
}

/* ---- DFT ---------------------------------------------------------------------------- */

etrt_status etrt_dft_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_dft_plan *plan) {
  if (node->num_inputs < 1 || node->num_inputs > 3 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 1 to 3 inputs and 1 output");
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_signal_channels(node, x, 2, "[..., n, ..., 1|2]"));
  int onesided = 0;
  ETRT_RETURN_IF_ERROR(etrt_signal_flag(node, "inverse", 0, &plan->inverse));
  ETRT_RETURN_IF_ERROR(etrt_signal_flag(node, "onesided", 0, &onesided));
  plan->real_output = onesided && plan->inverse;
  if (plan->real_output && x->dims[x->rank - 1] != 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "an inverse onesided transform needs a complex input (last dim 2)");
  if (onesided && !plan->inverse && x->dims[x->rank - 1] != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "onesided needs a real input (last dim 1)");
  int64_t axis = -2;
  if (etrt_op_has_input(node, inputs, 2))
    ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 2, "axis", &axis));
  /* The last dim holds the real and imaginary parts: it is never the signal's axis. */
  if (axis < -x->rank || axis > x->rank - 2 || axis == -1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "axis %lld is out of range for rank %d (the last dim is not an axis)",
                         (long long)axis, (int)x->rank);
  if (axis < 0) axis += x->rank;
  plan->axis = (int32_t)axis;
  plan->outer = plan->inner = 1;
  for (int32_t a = 0; a < plan->axis; ++a) plan->outer *= x->dims[a];
  for (int32_t a = plan->axis + 1; a < x->rank - 1; ++a) plan->inner *= x->dims[a];
  plan->n = x->dims[plan->axis];
  plan->channels = x->dims[x->rank - 1];
  /* A one-sided spectrum of n bins comes from an even signal of 2 (n - 1) samples. */
  plan->length = plan->real_output ? 2 * (plan->n - 1) : plan->n;
  if (etrt_op_has_input(node, inputs, 1))
    ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 1, "dft_length", &plan->length));
  if (plan->length < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "dft_length must be positive, not %lld",
                         (long long)plan->length);
  plan->bins = onesided && !plan->inverse ? plan->length / 2 + 1 : plan->length;
  return ETRT_OK;
}

static etrt_status etrt_dft_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_dft_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_dft_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  for (int32_t a = 0; a < inputs[0].rank; ++a) outputs[0].dims[a] = inputs[0].dims[a];
  outputs[0].dims[plan.axis] = plan.bins;
  outputs[0].dims[inputs[0].rank - 1] = plan.real_output ? 1 : 2;
  return ETRT_OK;
}

/* ---- STFT --------------------------------------------------------------------------- */

etrt_status etrt_stft_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_stft_plan *plan) {
  if (node->num_inputs < 2 || node->num_inputs > 4 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0) || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 to 4 inputs and 1 output");
  const etrt_tensor *x = &inputs[0];
  if (x->rank != 3)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "signal must be [batch, length, 1|2]");
  ETRT_RETURN_IF_ERROR(etrt_signal_channels(node, x, 3, "[batch, length, 1|2]"));
  int onesided = 1;
  ETRT_RETURN_IF_ERROR(etrt_signal_flag(node, "onesided", 1, &onesided));
  if (onesided && x->dims[2] != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "onesided needs a real signal (last dim 1)");
  plan->batch = x->dims[0];
  plan->length = x->dims[1];
  plan->channels = x->dims[2];
  ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 1, "frame_step", &plan->step));
  plan->has_window = etrt_op_has_input(node, inputs, 2);
  plan->frame = -1;
  if (plan->has_window) {
    const etrt_tensor *w = &inputs[2];
    if (w->dtype != x->dtype || w->rank != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "window must be 1-D of the signal's dtype (%s)",
                           etrt_dtype_name(x->dtype));
    plan->frame = w->dims[0];
  }
  if (etrt_op_has_input(node, inputs, 3)) {
    int64_t frame;
    ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 3, "frame_length", &frame));
    if (plan->has_window && frame != plan->frame)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "frame_length %lld differs from the window's length %lld",
                           (long long)frame, (long long)plan->frame);
    plan->frame = frame;
  }
  if (plan->frame < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "needs a window or a frame_length");
  if (plan->step < 1 || plan->frame < 1 || plan->frame > plan->length)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "frame_step %lld and frame_length %lld must be positive, the frame no "
                         "longer than the signal (%lld)",
                         (long long)plan->step, (long long)plan->frame, (long long)plan->length);
  plan->frames = (plan->length - plan->frame) / plan->step + 1;
  plan->bins = onesided ? plan->frame / 2 + 1 : plan->frame;
  return ETRT_OK;
}

static etrt_status etrt_stft_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  etrt_stft_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_stft_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 4;
  outputs[0].dims[0] = plan.batch;
  outputs[0].dims[1] = plan.frames;
  outputs[0].dims[2] = plan.bins;
  outputs[0].dims[3] = 2;
  return ETRT_OK;
}

/* ---- windows ------------------------------------------------------------------------ */

static etrt_status etrt_window_prepare(const etrt_node *node, etrt_window_state *s, double a0,
                                       double a1, double a2) {
  s->a0 = a0;
  s->a1 = a1;
  s->a2 = a2;
  ETRT_RETURN_IF_ERROR(etrt_signal_flag(node, "periodic", 1, &s->periodic));
  return etrt_signal_output_dtype(node, &s->dtype);
}

static etrt_status etrt_hann_prepare(const etrt_node *node, void *state) {
  return etrt_window_prepare(node, state, 0.5, 0.5, 0.0);
}

static etrt_status etrt_hamming_prepare(const etrt_node *node, void *state) {
  return etrt_window_prepare(node, state, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

static etrt_status etrt_blackman_prepare(const etrt_node *node, void *state) {
  return etrt_window_prepare(node, state, 0.42, 0.5, 0.08);
}

static etrt_status etrt_window_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  if (node->num_inputs != 1 || node->num_outputs != 1 || !etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 1 input and 1 output");
  const etrt_window_state *s = node->state;
  int64_t size;
  ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 0, "size", &size));
  if (size < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "size must not be negative (%lld)",
                         (long long)size);
  outputs[0].dtype = s->dtype;
  outputs[0].rank = 1;
  outputs[0].dims[0] = size;
  return ETRT_OK;
}

/* ---- MelWeightMatrix ---------------------------------------------------------------- */

etrt_status etrt_mel_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_mel_plan *plan) {
  if (node->num_inputs != 5 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 5 inputs and 1 output");
  for (uint32_t i = 0; i < 5; ++i)
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is missing", i);
  ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 0, "num_mel_bins", &plan->mel_bins));
  ETRT_RETURN_IF_ERROR(etrt_signal_scalar(node, inputs, 1, "dft_length", &plan->dft_length));
  if (plan->mel_bins < 1 || plan->dft_length < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "num_mel_bins (%lld) and dft_length (%lld) must be positive",
                         (long long)plan->mel_bins, (long long)plan->dft_length);
  const etrt_tensor *rate = &inputs[2], *lower = &inputs[3], *upper = &inputs[4];
  if ((rate->dtype != ETRT_DTYPE_INT32 && rate->dtype != ETRT_DTYPE_INT64) ||
      etrt_tensor_numel(rate) != 1 || rate->rank > 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "sample_rate must be one int32 or int64 value");
  if ((lower->dtype != ETRT_DTYPE_FLOAT32 && lower->dtype != ETRT_DTYPE_FLOAT64) ||
      upper->dtype != lower->dtype || etrt_tensor_numel(lower) != 1 ||
      etrt_tensor_numel(upper) != 1 || lower->rank > 1 || upper->rank > 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "lower_edge_hertz and upper_edge_hertz must be one float32 or float64 "
                         "value each, of one dtype");
  plan->spectrum_bins = plan->dft_length / 2 + 1;
  return ETRT_OK;
}

static etrt_status etrt_mel_prepare(const etrt_node *node, void *state) {
  return etrt_signal_output_dtype(node, state);
}

static etrt_status etrt_mel_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_mel_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_mel_plan_make(node, inputs, &plan));
  outputs[0].dtype = *(const etrt_dtype *)node->state;
  outputs[0].rank = 2;
  outputs[0].dims[0] = plan.spectrum_bins;
  outputs[0].dims[1] = plan.mel_bins;
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_dft = {.op_type = "DFT",
                                            .infer = etrt_dft_infer,
                                            .cuda_supports = etrt_op_supports_all,
                                            .value_inputs = (1u << 1) | (1u << 2)};
static const etrt_op_def etrt_op_def_stft = {.op_type = "STFT",
                                             .infer = etrt_stft_infer,
                                             .bound = etrt_value_bound_open_probe,
                                             .cuda_supports = etrt_op_supports_all,
                                             .value_inputs = (1u << 1) | (1u << 3)};
#define ETRT_WINDOW_DEF(var, name, prep)                                   \
  static const etrt_op_def var = {.op_type = name,                         \
                                  .state_size = sizeof(etrt_window_state), \
                                  .prepare = prep,                         \
                                  .infer = etrt_window_infer,              \
                                  .bound = etrt_value_bound_open_probe,    \
                                  .cuda_supports = etrt_op_supports_all,   \
                                  .value_inputs = 1u}
ETRT_WINDOW_DEF(etrt_op_def_hann, "HannWindow", etrt_hann_prepare);
ETRT_WINDOW_DEF(etrt_op_def_hamming, "HammingWindow", etrt_hamming_prepare);
ETRT_WINDOW_DEF(etrt_op_def_blackman, "BlackmanWindow", etrt_blackman_prepare);
static const etrt_op_def etrt_op_def_mel = {.op_type = "MelWeightMatrix",
                                            .state_size = sizeof(etrt_dtype),
                                            .prepare = etrt_mel_prepare,
                                            .infer = etrt_mel_infer,
                                            .bound = etrt_value_bound_open_probe,
                                            .cuda_supports = etrt_op_supports_all,
                                            .value_inputs = 3u};

const etrt_op_def *const etrt_ops_signal[] = {
    &etrt_op_def_dft,
    &etrt_op_def_stft,
    &etrt_op_def_hann,
    &etrt_op_def_hamming,
    &etrt_op_def_blackman,
    &etrt_op_def_mel,
    NULL,
};
