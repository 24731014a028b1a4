/* The signal operators: DFT, STFT, the Hann, Hamming and Blackman windows and
 * MelWeightMatrix. Each output element is computed on its own, by a direct sum in
 * double precision (exact to the dtype for the frame sizes these operators meet;
 * an FFT would reorder the rounding, not the result), so the CPU kernels
 * (cpu/signal.c) and the CUDA kernels (cuda/signal.cu) evaluate the same functions
 * below and agree to the last bits of float32.
 *
 * Complex tensors are real tensors with a last dim of 2 (real, imaginary); a last
 * dim of 1 is a real signal. */
#ifndef ETRT_ENGINE_OPS_SIGNAL_H
#define ETRT_ENGINE_OPS_SIGNAL_H

#include <math.h>
#include <stdint.h>

#include "engine/op.h"

/* DFT(input [..., n, ..., 1|2], dft_length?, axis?) as opset 20 defines it (the
 * importer moves opset 17's axis attribute to input 2). Input viewed as
 * [outer, n, inner, channels]; output [outer, bins, inner, 2], or [outer, length,
 * inner, 1] for the inverse of a one-sided spectrum (a real signal). */
typedef struct etrt_dft_plan {
  int64_t outer, n, inner, channels;
  int64_t length; /* dft_length: the signal's length, input truncated or zero-padded */
  int64_t bins;   /* output length along the axis: length, or length / 2 + 1 onesided */
  int32_t axis;
  int inverse;
  int real_output; /* inverse and onesided: input n holds bins 0 .. length / 2 */
} etrt_dft_plan;

etrt_status etrt_dft_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_dft_plan *plan);

/* STFT(signal [batch, length, 1|2], frame_step, window?, frame_length?) ->
 * [batch, frames, bins, 2]. */
typedef struct etrt_stft_plan {
  int64_t batch, length, channels;
  int64_t step, frame; /* frame_length: the window's length where there is one */
  int64_t frames, bins;
  int has_window;
} etrt_stft_plan;

etrt_status etrt_stft_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_stft_plan *plan);

/* The generalized cosine windows: w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N),
 * N = size (periodic) or size - 1 (symmetric). */
typedef struct etrt_window_state {
  double a0, a1, a2;
  int periodic;
  etrt_dtype dtype;
} etrt_window_state;

/* MelWeightMatrix: output [dft_length / 2 + 1, num_mel_bins]. */
typedef struct etrt_mel_plan {
  int64_t mel_bins, dft_length, spectrum_bins;
} etrt_mel_plan;

etrt_status etrt_mel_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_mel_plan *plan);

#ifdef __CUDACC__
#define ETRT_SIGNAL_FN __host__ __device__ static inline
#else
#define ETRT_SIGNAL_FN static inline
#endif

#define ETRT_SIGNAL_PI 3.14159265358979323846

/* Element i of a float32 (is_double 0) or float64 tensor. */
ETRT_SIGNAL_FN double etrt_signal_at(const void *x, int is_double, int64_t i) {
  return is_double ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/* exp(sign * 2 pi i * j * k / n): j * k is reduced modulo n first, so that the angle
 * keeps its precision for long transforms. */
ETRT_SIGNAL_FN void etrt_signal_twiddle(int64_t j, int64_t k, int64_t n, double sign, double *c,
                                        double *s) {
  double angle = sign * 2.0 * ETRT_SIGNAL_PI * (double)((j * k) % n) / (double)n;
  *c = cos(angle);
  *s = sin(angle);
}

/* Sample t of the real signal whose one-sided spectrum is row (o, i) of x: the
 * spectrum's other half is the conjugate mirror, so each bin but the first (and the
 * middle one of an even length) counts twice, and imaginary parts cancel. */
ETRT_SIGNAL_FN double etrt_dft_real_inverse(const etrt_dft_plan *p, const void *x, int is_double,
                                            int64_t o, int64_t t, int64_t i) {
  int64_t half = p->length / 2, used = p->n < half + 1 ? p->n : half + 1;
  double sum = 0.0;
  for (int64_t k = 0; k < used; ++k) {
    int64_t at = ((o * p->n + k) * p->inner + i) * 2;
    double c, s;
    etrt_signal_twiddle(k, t, p->length, 1.0, &c, &s);
    double term = etrt_signal_at(x, is_double, at) * c - etrt_signal_at(x, is_double, at + 1) * s;
    sum += (k == 0 || 2 * k == p->length) ? term : 2.0 * term;
  }
  return sum / (double)p->length;
}

/* Output element e (a value of [outer, bins, inner]: complex, or real where
 * real_output, then *im is 0) of the DFT. */
ETRT_SIGNAL_FN void etrt_dft_element(const etrt_dft_plan *p, const void *x, int is_double,
                                     int64_t e, double *re, double *im) {
  int64_t i = e % p->inner, k = (e / p->inner) % p->bins, o = e / (p->inner * p->bins);
  if (p->real_output) {
    *re = etrt_dft_real_inverse(p, x, is_double, o, k, i);
    *im = 0.0;
    return;
  }
  int64_t used = p->n < p->length ? p->n : p->length;
  double sign = p->inverse ? 1.0 : -1.0, sum_re = 0.0, sum_im = 0.0;
  for (int64_t j = 0; j < used; ++j) {
    int64_t at = ((o * p->n + j) * p->inner + i) * p->channels;
    double a = etrt_signal_at(x, is_double, at);
    double b = p->channels == 2 ? etrt_signal_at(x, is_double, at + 1) : 0.0;
    double c, s;
    etrt_signal_twiddle(j, k, p->length, sign, &c, &s);
    sum_re += a * c - b * s;
    sum_im += a * s + b * c;
  }
  if (p->inverse) {
    sum_re /= (double)p->length;
    sum_im /= (double)p->length;
  }
  *re = sum_re;
  *im = sum_im;
}

/* Output element e (a complex value of [batch, frames, bins]) of the STFT; `w` is
 * the window (NULL: none, all ones), of the signal's dtype. */
ETRT_SIGNAL_FN void etrt_stft_element(const etrt_stft_plan *p, const void *x, const void *w,
                                      int is_double, int64_t e, double *re, double *im) {
  int64_t k = e % p->bins, f = (e / p->bins) % p->frames, b = e / (p->bins * p->frames);
  double sum_re = 0.0, sum_im = 0.0;
  for (int64_t j = 0; j < p->frame; ++j) {
    int64_t at = (b * p->length + f * p->step + j) * p->channels;
    double scale = w != NULL ? etrt_signal_at(w, is_double, j) : 1.0;
    double a = etrt_signal_at(x, is_double, at) * scale;
    double bi = p->channels == 2 ? etrt_signal_at(x, is_double, at + 1) * scale : 0.0;
    double c, s;
    etrt_signal_twiddle(j, k, p->frame, -1.0, &c, &s);
    sum_re += a * c - bi * s;
    sum_im += a * s + bi * c;
  }
  *re = sum_re;
  *im = sum_im;
}

ETRT_SIGNAL_FN double etrt_window_element(const etrt_window_state *w, int64_t size, int64_t i) {
  int64_t n = w->periodic ? size : size - 1;
  if (n <= 0) return 1.0; /* a symmetric window of one point */
  double t = 2.0 * ETRT_SIGNAL_PI * (double)i / (double)n;
  return w->a0 - w->a1 * cos(t) + w->a2 * cos(2.0 * t);
}

/* The FFT bin of mel band edge m (0 .. mel_bins + 1): the edges are spaced evenly
 * in mel between the two edge frequencies, mel(f) = 2595 log10(1 + f / 700). */
ETRT_SIGNAL_FN int64_t etrt_mel_edge_bin(const etrt_mel_plan *p, double sample_rate, double lower,
                                         double upper, int64_t m) {
  double low = 2595.0 * log10(1.0 + lower / 700.0);
  double high = 2595.0 * log10(1.0 + upper / 700.0);
  double mel = low + (double)m * (high - low) / (double)(p->mel_bins + 2);
  double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
  return (int64_t)floor((double)(p->dft_length + 1) * hz / sample_rate);
}

/* Element [bin, band] of the mel matrix; sets *bad when the band's edges are not
 * ascending bins of the spectrum (edge frequencies beyond sample_rate / 2, or a
 * sample_rate that is not positive). */
ETRT_SIGNAL_FN double etrt_mel_element(const etrt_mel_plan *p, double sample_rate, double lower,
                                       double upper, int64_t e, int *bad) {
  int64_t band = e % p->mel_bins, bin = e / p->mel_bins;
  if (!(sample_rate > 0.0) || !(lower >= 0.0) || !(upper >= lower)) {
    *bad = 1;
    return 0.0;
  }
  int64_t left = etrt_mel_edge_bin(p, sample_rate, lower, upper, band);
  int64_t center = etrt_mel_edge_bin(p, sample_rate, lower, upper, band + 1);
  int64_t right = etrt_mel_edge_bin(p, sample_rate, lower, upper, band + 2);
  if (left < 0 || center < left || right < center || center >= p->spectrum_bins ||
      right > p->spectrum_bins) {
    *bad = 1;
    return 0.0;
  }
  /* The falling edge is written after the rising one, so it wins at the center. */
  if (right > center && bin >= center && bin < right)
    return (double)(right - bin) / (double)(right - center);
  if (center == left) return bin == center ? 1.0 : 0.0;
  if (bin >= left && bin <= center) return (double)(bin - left) / (double)(center - left);
  return 0.0;
}

#endif
