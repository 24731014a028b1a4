/* Image operators: GridSample (sampling an image at given points), RoiAlign
 * (average or max pooling of regions of interest), and the local normalizations of
 * image models, LRN (across channels) and MeanVarianceNormalization. Each output
 * element is a function of the plan and the inputs, evaluated by the same inline
 * functions on both executors (cpu/vision.c, cuda/vision.cu), in double: the
 * tensors are float32 or float64. */
#ifndef ETRT_ENGINE_OPS_VISION_H
#define ETRT_ENGINE_OPS_VISION_H

#include <math.h>
#include <stdint.h>

#include "engine/op.h"

#ifdef __CUDACC__
#define ETRT_VISION_FN __host__ __device__ static inline
#else
#define ETRT_VISION_FN static inline
#endif

/* Element i of a float32 (f64 = 0) or float64 tensor. */
ETRT_VISION_FN double etrt_vision_load(const void *x, int32_t f64, int64_t i) {
  return f64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/* ---- GridSample ------------------------------------------------------------------- */

enum { ETRT_GRID_LINEAR = 0, ETRT_GRID_NEAREST = 1, ETRT_GRID_CUBIC = 2 };
enum { ETRT_GRID_ZEROS = 0, ETRT_GRID_BORDER = 1, ETRT_GRID_REFLECTION = 2 };

typedef struct etrt_grid_sample_plan {
  int32_t mode, padding, align_corners, f64;
  int64_t channels, h_in, w_in, h_out, w_out;
} etrt_grid_sample_plan;

/* X [N, C, H, W], grid [N, H_out, W_out, 2] (x then y, in [-1, 1]) -> [N, C, H_out, W_out]. */
etrt_status etrt_grid_sample_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_grid_sample_plan *plan);

/* A normalized coordinate in [-1, 1] as a pixel coordinate: the centres of the corner
 * pixels with align_corners, else their outer edges. */
ETRT_VISION_FN double etrt_grid_unnormalize(double v, int64_t size, int32_t align_corners) {
  return align_corners ? (v + 1.0) / 2.0 * (double)(size - 1)
                       : ((v + 1.0) * (double)size - 1.0) / 2.0;
}

/* v folded back into [lo, hi] by reflecting at the bounds as often as needed. */
ETRT_VISION_FN double etrt_grid_reflect(double v, double lo, double hi) {
  double range = hi - lo;
  if (!(range > 0.0)) return lo;
  if (v < lo || v > hi) {
    double d = v < lo ? lo - v : v - hi;
    double turns = floor(d / range);
    double r = d - turns * range;
    int even = fmod(turns, 2.0) == 0.0;
    v = (v < lo) == even ? lo + r : hi - r;
  }
  return v;
}

/* The pixel (r, c) of one image plane, by the padding mode for positions outside it. */
ETRT_VISION_FN double etrt_grid_pixel(const etrt_grid_sample_plan *p, const void *x, int64_t base,
                                      int64_t r, int64_t c) {
  if (p->padding == ETRT_GRID_ZEROS) {
    if (r < 0 || r >= p->h_in || c < 0 || c >= p->w_in) return 0.0;
  } else if (p->padding == ETRT_GRID_REFLECTION) {
    double lo = p->align_corners ? 0.0 : -0.5;
    r = (int64_t)etrt_grid_reflect((double)r, lo, (double)(p->h_in - 1) - lo);
    c = (int64_t)etrt_grid_reflect((double)c, lo, (double)(p->w_in - 1) - lo);
  }
  /* border, and reflection's rounding: never outside the plane */
  r = r < 0 ? 0 : r >= p->h_in ? p->h_in - 1 : r;
  c = c < 0 ? 0 : c >= p->w_in ? p->w_in - 1 : c;
  return etrt_vision_load(x, p->f64, base + r * p->w_in + c);
}

/* The cubic convolution weights (A = -0.75) of the four taps around offset t in [0, 1). */
ETRT_VISION_FN void etrt_grid_cubic_weights(double t, double *w) {
  const double a = -0.75;
  double t1 = t + 1.0, t2 = 1.0 - t, t3 = 2.0 - t;
  w[0] = ((a * t1 - 5.0 * a) * t1 + 8.0 * a) * t1 - 4.0 * a;
  w[1] = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  w[2] = ((a + 2.0) * t2 - (a + 3.0)) * t2 * t2 + 1.0;
  w[3] = ((a * t3 - 5.0 * a) * t3 + 8.0 * a) * t3 - 4.0 * a;
}

/* Output element o of GridSample. */
ETRT_VISION_FN double etrt_grid_sample_element(const etrt_grid_sample_plan *p, const void *x,
                                               const void *grid, int64_t o) {
  int64_t wo = o % p->w_out, rest = o / p->w_out;
  int64_t ho = rest % p->h_out;
  rest /= p->h_out;
  int64_t n = rest / p->channels;
  int64_t g = ((n * p->h_out + ho) * p->w_out + wo) * 2;
  double gx = etrt_vision_load(grid, p->f64, g), gy = etrt_vision_load(grid, p->f64, g + 1);
  double fx = etrt_grid_unnormalize(gx, p->w_in, p->align_corners);
  double fy = etrt_grid_unnormalize(gy, p->h_in, p->align_corners);
  if (fx != fx || fy != fy) return fx + fy; /* NaN in, NaN out */
  if (p->mode == ETRT_GRID_NEAREST) {
    fx = nearbyint(fx);
    fy = nearbyint(fy);
  }
  /* a point outside the image moves inside it first, for border and reflection */
  double lo = p->align_corners ? 0.0 : -0.5;
  double x_hi = (double)(p->w_in - 1) - lo, y_hi = (double)(p->h_in - 1) - lo;
  if (fx < lo || fx > x_hi || fy < lo || fy > y_hi) {
    if (p->padding == ETRT_GRID_BORDER) {
      fx = fx < 0.0 ? 0.0 : fx > (double)(p->w_in - 1) ? (double)(p->w_in - 1) : fx;
      fy = fy < 0.0 ? 0.0 : fy > (double)(p->h_in - 1) ? (double)(p->h_in - 1) : fy;
    } else if (p->padding == ETRT_GRID_REFLECTION) {
      fx = etrt_grid_reflect(fx, lo, x_hi);
      fy = etrt_grid_reflect(fy, lo, y_hi);
    }
  }
  /* far outside, zeros padding: every tap is outside; keep the indices in range */
  double limit = (double)(p->h_in + p->w_in + 4);
  fx = fx < -limit ? -limit : fx > limit ? limit : fx;
  fy = fy < -limit ? -limit : fy > limit ? limit : fy;
  int64_t base = (o / (p->h_out * p->w_out)) * p->h_in * p->w_in;
  if (p->mode == ETRT_GRID_NEAREST) return etrt_grid_pixel(p, x, base, (int64_t)fy, (int64_t)fx);
  double x0 = floor(fx), y0 = floor(fy);
  int64_t c0 = (int64_t)x0, r0 = (int64_t)y0;
  double tx = fx - x0, ty = fy - y0;
  if (p->mode == ETRT_GRID_LINEAR) {
    double top = (1.0 - tx) * etrt_grid_pixel(p, x, base, r0, c0) +
                 tx * etrt_grid_pixel(p, x, base, r0, c0 + 1);
    double bottom = (1.0 - tx) * etrt_grid_pixel(p, x, base, r0 + 1, c0) +
                    tx * etrt_grid_pixel(p, x, base, r0 + 1, c0 + 1);
    return (1.0 - ty) * top + ty * bottom;
  }
  double wx[4], wy[4], sum = 0.0;
  etrt_grid_cubic_weights(tx, wx);
  etrt_grid_cubic_weights(ty, wy);
  for (int i = 0; i < 4; ++i) {
    double row = 0.0;
    for (int j = 0; j < 4; ++j) row += wx[j] * etrt_grid_pixel(p, x, base, r0 - 1 + i, c0 - 1 + j);
    sum += wy[i] * row;
  }
  return sum;
}

/* ---- RoiAlign --------------------------------------------------------------------- */

typedef struct etrt_roi_align_plan {
  int32_t max_mode, half_pixel, f64, batch_i64;
  int64_t batch, channels, height, width, rois, out_h, out_w, sampling_ratio;
  double spatial_scale;
} etrt_roi_align_plan;

/* X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> [R, C, out_h, out_w]. */
etrt_status etrt_roi_align_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_roi_align_plan *plan);

/* The batch index of region r (int64 or int32 batch_indices). */
ETRT_VISION_FN int64_t etrt_roi_align_batch(const etrt_roi_align_plan *p, const void *indices,
                                            int64_t r) {
  return p->batch_i64 ? ((const int64_t *)indices)[r] : (int64_t)((const int32_t *)indices)[r];
}

/* Output element o of RoiAlign, whose region lies in image b (0 <= b < batch, checked
 * by the caller). Each bin averages (or takes the largest of) a grid of bilinear
 * samples; a sample more than one pixel outside the image counts as 0. */
ETRT_VISION_FN double etrt_roi_align_element(const etrt_roi_align_plan *p, const void *x,
                                             const void *rois, int64_t b, int64_t o) {
  int64_t pw = o % p->out_w, rest = o / p->out_w;
  int64_t ph = rest % p->out_h;
  rest /= p->out_h;
  int64_t c = rest % p->channels, r = rest / p->channels;
  double offset = p->half_pixel ? 0.5 : 0.0;
  double x1 = etrt_vision_load(rois, p->f64, r * 4) * p->spatial_scale - offset;
  double y1 = etrt_vision_load(rois, p->f64, r * 4 + 1) * p->spatial_scale - offset;
  double x2 = etrt_vision_load(rois, p->f64, r * 4 + 2) * p->spatial_scale - offset;
  double y2 = etrt_vision_load(rois, p->f64, r * 4 + 3) * p->spatial_scale - offset;
  double roi_w = x2 - x1, roi_h = y2 - y1;
  if (!p->half_pixel) {
    roi_w = roi_w > 1.0 ? roi_w : 1.0;
    roi_h = roi_h > 1.0 ? roi_h : 1.0;
  }
  double bin_w = roi_w / (double)p->out_w, bin_h = roi_h / (double)p->out_h;
  int64_t grid_h = p->sampling_ratio > 0 ? p->sampling_ratio : (int64_t)ceil(bin_h);
  int64_t grid_w = p->sampling_ratio > 0 ? p->sampling_ratio : (int64_t)ceil(bin_w);
  /* a region of NaN or huge coordinates must not spin: cap the samples per bin */
  grid_h = grid_h < 0 ? 0 : grid_h > 4096 ? 4096 : grid_h;
  grid_w = grid_w < 0 ? 0 : grid_w > 4096 ? 4096 : grid_w;
  int64_t count = grid_h * grid_w > 1 ? grid_h * grid_w : 1;
  int64_t plane = (b * p->channels + c) * p->height * p->width;
  double acc = 0.0;
  int have = 0;
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    double y = y1 + (double)ph * bin_h + ((double)iy + 0.5) * bin_h / (double)grid_h;
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      double xx = x1 + (double)pw * bin_w + ((double)ix + 0.5) * bin_w / (double)grid_w;
      double yy = y, v[4] = {0.0, 0.0, 0.0, 0.0};
      if (!(yy < -1.0 || yy > (double)p->height || xx < -1.0 || xx > (double)p->width)) {
        yy = yy > 0.0 ? yy : 0.0;
        xx = xx > 0.0 ? xx : 0.0;
        int64_t y_lo = (int64_t)yy, x_lo = (int64_t)xx, y_hi, x_hi;
        if (y_lo >= p->height - 1) {
          y_hi = y_lo = p->height - 1;
          yy = (double)y_lo;
        } else {
          y_hi = y_lo + 1;
        }
        if (x_lo >= p->width - 1) {
          x_hi = x_lo = p->width - 1;
          xx = (double)x_lo;
        } else {
          x_hi = x_lo + 1;
        }
        double ly = yy - (double)y_lo, lx = xx - (double)x_lo, hy = 1.0 - ly, hx = 1.0 - lx;
        v[0] = hy * hx * etrt_vision_load(x, p->f64, plane + y_lo * p->width + x_lo);
        v[1] = hy * lx * etrt_vision_load(x, p->f64, plane + y_lo * p->width + x_hi);
        v[2] = ly * hx * etrt_vision_load(x, p->f64, plane + y_hi * p->width + x_lo);
        v[3] = ly * lx * etrt_vision_load(x, p->f64, plane + y_hi * p->width + x_hi);
      }
      if (p->max_mode) {
        /* the largest weighted corner of each sample, as the reference does */
        double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
        acc = have ? fmax(acc, m) : m;
        have = 1;
      } else {
        acc += v[0] + v[1] + v[2] + v[3];
      }
    }
  }
  return p->max_mode ? acc : acc / (double)count;
}

/* ---- LRN and MeanVarianceNormalization -------------------------------------------- */

typedef struct etrt_lrn_plan {
  int32_t f64;
  int64_t channels, inner, before, after; /* window [c - before, c + after] */
  double scale, beta, bias;               /* scale = alpha / size */
} etrt_lrn_plan;

etrt_status etrt_lrn_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_lrn_plan *plan);

/* Output element o of LRN: x / (bias + alpha / size * sum of squares over the channel
 * window) ^ beta. */
ETRT_VISION_FN double etrt_lrn_element(const etrt_lrn_plan *p, const void *x, int64_t o) {
  int64_t c = (o / p->inner) % p->channels;
  int64_t start = o - c * p->inner;
  int64_t lo = c - p->before < 0 ? 0 : c - p->before;
  int64_t hi = c + p->after >= p->channels ? p->channels - 1 : c + p->after;
  double sum = 0.0;
  for (int64_t j = lo; j <= hi; ++j) {
    double v = etrt_vision_load(x, p->f64, start + j * p->inner);
    sum += v * v;
  }
  return etrt_vision_load(x, p->f64, o) / pow(p->bias + p->scale * sum, p->beta);
}

/* MeanVarianceNormalization over `axes`: the input's dims are split into the reduced
 * ones and the kept ones; a group is one combination of kept indices. */
typedef struct etrt_mvn_plan {
  int32_t f64, rank;
  int64_t groups, members;
  int64_t dims[ETRT_MAX_RANK];
  uint32_t reduced; /* bit d: dim d is reduced */
} etrt_mvn_plan;

etrt_status etrt_mvn_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_mvn_plan *plan);

/* The offset of member m of group g. */
ETRT_VISION_FN int64_t etrt_mvn_offset(const etrt_mvn_plan *p, int64_t g, int64_t m) {
  int64_t off = 0, scale = 1;
  for (int32_t d = p->rank - 1; d >= 0; --d) {
    int64_t i;
    if (p->reduced & (1u << d)) {
      i = m % p->dims[d];
      m /= p->dims[d];
    } else {
      i = g % p->dims[d];
      g /= p->dims[d];
    }
    off += i * scale;
    scale *= p->dims[d];
  }
  return off;
}

/* The mean and standard deviation of group g. */
ETRT_VISION_FN void etrt_mvn_moments(const etrt_mvn_plan *p, const void *x, int64_t g, double *mean,
                                     double *std) {
  double sum = 0.0, sq = 0.0;
  for (int64_t m = 0; m < p->members; ++m)
    sum += etrt_vision_load(x, p->f64, etrt_mvn_offset(p, g, m));
  *mean = p->members > 0 ? sum / (double)p->members : 0.0;
  for (int64_t m = 0; m < p->members; ++m) {
    double d = etrt_vision_load(x, p->f64, etrt_mvn_offset(p, g, m)) - *mean;
    sq += d * d;
  }
  *std = p->members > 0 ? sqrt(sq / (double)p->members) : 0.0;
}

/* The epsilon MeanVarianceNormalization adds to the standard deviation. */
#define ETRT_MVN_EPSILON 1e-9

#endif
