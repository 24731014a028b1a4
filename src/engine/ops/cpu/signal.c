/* CPU kernels of the signal operators (signal.h). */
#include "engine/op.h"
#include "engine/ops/op_check.h"
#include "engine/ops/signal.h"

/* Writes a complex value (or any double) to element i of a float32/float64 output. */
static void etrt_cpu_signal_store(etrt_tensor *out, int64_t i, double v) {
  if (out->dtype == ETRT_DTYPE_FLOAT64)
    ((double *)out->data)[i] = v;
  else
    ((float *)out->data)[i] = (float)v;
}

static etrt_status etrt_cpu_dft(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  etrt_dft_plan p;
  ETRT_RETURN_IF_ERROR(etrt_dft_plan_make(node, inputs, &p));
  int is_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  int64_t count = p.outer * p.bins * p.inner, channels = p.real_output ? 1 : 2;
  for (int64_t e = 0; e < count; ++e) {
    double re, im;
    etrt_dft_element(&p, inputs[0].data, is_double, e, &re, &im);
    etrt_cpu_signal_store(&outputs[0], channels * e, re);
    if (channels == 2) etrt_cpu_signal_store(&outputs[0], 2 * e + 1, im);
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_stft(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  etrt_stft_plan p;
  ETRT_RETURN_IF_ERROR(etrt_stft_plan_make(node, inputs, &p));
  int is_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  const void *w = p.has_window ? inputs[2].data : NULL;
  int64_t count = p.batch * p.frames * p.bins;
  for (int64_t e = 0; e < count; ++e) {
    double re, im;
    etrt_stft_element(&p, inputs[0].data, w, is_double, e, &re, &im);
    etrt_cpu_signal_store(&outputs[0], 2 * e, re);
    etrt_cpu_signal_store(&outputs[0], 2 * e + 1, im);
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_window(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  (void)inputs;
  const etrt_window_state *s = node->state;
  int64_t size = outputs[0].dims[0];
  for (int64_t i = 0; i < size; ++i)
    etrt_cpu_signal_store(&outputs[0], i, etrt_window_element(s, size, i));
  return ETRT_OK;
}

/* Element 0 of a float32/float64 or int32/int64 scalar tensor, as double. */
static double etrt_cpu_signal_scalar(const etrt_tensor *t) {
  switch (t->dtype) {
    case ETRT_DTYPE_INT32:
      return ((const int32_t *)t->data)[0];
    case ETRT_DTYPE_INT64:
      return (double)((const int64_t *)t->data)[0];
    case ETRT_DTYPE_FLOAT32:
      return ((const float *)t->data)[0];
    default:
      return ((const double *)t->data)[0];
  }
}

static etrt_status etrt_cpu_mel_weight_matrix(const etrt_node *node, const etrt_tensor *inputs,
                                              etrt_tensor *outputs) {
  etrt_mel_plan p;
  ETRT_RETURN_IF_ERROR(etrt_mel_plan_make(node, inputs, &p));
  double rate = etrt_cpu_signal_scalar(&inputs[2]);
  double lower = etrt_cpu_signal_scalar(&inputs[3]), upper = etrt_cpu_signal_scalar(&inputs[4]);
  int64_t count = p.spectrum_bins * p.mel_bins;
  for (int64_t e = 0; e < count; ++e) {
    int bad = 0;
    double v = etrt_mel_element(&p, rate, lower, upper, e, &bad);
    if (bad)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "sample_rate %g and edges %g..%g Hz do not give ascending bins of "
                           "the %lld-bin spectrum",
                           rate, lower, upper, (long long)p.spectrum_bins);
    etrt_cpu_signal_store(&outputs[0], e, v);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_signal[] = {
    {"DFT", etrt_cpu_dft},
    {"STFT", etrt_cpu_stft},
    {"HannWindow", etrt_cpu_window},
    {"HammingWindow", etrt_cpu_window},
    {"BlackmanWindow", etrt_cpu_window},
    {"MelWeightMatrix", etrt_cpu_mel_weight_matrix},
    {NULL, NULL},
};
