/* grid_sampler_2d.out(input, grid, int interpolation_mode, int padding_mode, bool
 * align_corners, *, out): out[n, c, h, w] samples input[n, c] at the point
 * grid[n, h, w] = (x, y) in [-1, 1], as ATen's CPU kernel does (GridSampler.h):
 * interpolation 0 bilinear, 1 nearest (half to even), 2 bicubic (A = -0.75); padding
 * 0 zeros, 1 border, 2 reflection. Every float dtype is read as doubles at the
 * positions its strides give (any dim order) and rounded once into out. */
#include <math.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

enum { ETRT_GRID_BILINEAR, ETRT_GRID_NEAREST, ETRT_GRID_BICUBIC };
enum { ETRT_GRID_ZEROS, ETRT_GRID_BORDER, ETRT_GRID_REFLECTION };

static etrt_status etrt_portable_grid_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *input = NULL, *grid = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &input));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &grid));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 5, &out));
  if (input->rank != 4 || grid->rank != 4 || out->rank != 4 ||
      !etrt_portable_dtype_is_float(input->dtype) || grid->dtype != input->dtype ||
      out->dtype != input->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "grid_sampler_2d takes a rank-4 floating-point input, a rank-4 grid and an "
                      "out tensor of its dtype (input %s rank %d, grid %s rank %d, out %s)",
                      etrt_dtype_name(input->dtype), input->rank, etrt_dtype_name(grid->dtype),
                      grid->rank, etrt_dtype_name(out->dtype));
  int64_t mode = 0, padding = 0, align = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &mode));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &padding));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 4, &align));
  if (mode < ETRT_GRID_BILINEAR || mode > ETRT_GRID_BICUBIC)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 2 (interpolation_mode) is %lld; 0, 1 or 2 is known",
                      (long long)mode);
  if (padding < ETRT_GRID_ZEROS || padding > ETRT_GRID_REFLECTION)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 3 (padding_mode) is %lld; 0, 1 or 2 is known", (long long)padding);
  call->scalars[0] = (double)mode;
  call->scalars[1] = (double)padding;
  call->scalars[2] = (double)(align != 0);
  return ETRT_OK;
}

/* A coordinate reflected into [twice_low / 2, twice_high / 2]. */
static double etrt_grid_reflect(double in, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  const double min = (double)twice_low / 2, span = (double)(twice_high - twice_low) / 2;
  in = fabs(in - min);
  const double extra = fmod(in, span);
  const int flips = (int)fmod(floor(in / span), 2.0);
  return flips == 0 ? extra + min : span - extra + min;
}

static double etrt_grid_clip(double in, int64_t size) {
  return fmin((double)(size - 1), fmax(in, 0.0));
}

/* The position in pixels of a normalized coordinate, before padding. */
static double etrt_grid_unnormalize(double coord, int64_t size, int align) {
  return align ? (coord + 1) / 2 * (double)(size - 1) : ((coord + 1) * (double)size - 1) / 2;
}

/* The padding mode applied to a position in pixels. */
static double etrt_grid_pad(double at, int64_t size, int padding, int align) {
  if (padding == ETRT_GRID_BORDER) return etrt_grid_clip(at, size);
  if (padding == ETRT_GRID_REFLECTION) {
    at = align ? etrt_grid_reflect(at, 0, 2 * (size - 1)) : etrt_grid_reflect(at, -1, 2 * size - 1);
    return etrt_grid_clip(at, size);
  }
  return at;
}

static double etrt_grid_cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
static double etrt_grid_cubic2(double x, double a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* The input elements one output point reads (offsets in a [H, W] plane by the input's
 * strides) and their weights: 1 (nearest), 4 (bilinear) or 16 (bicubic); taps outside
 * the plane (zeros padding) are left out. Found once per point, used for every
 * channel. */
typedef struct etrt_grid_taps {
  int count;
  int64_t offset[16];
  double weight[16];
} etrt_grid_taps;

typedef struct etrt_grid_geometry {
  int64_t height, width, h_stride, w_stride;
  int mode, padding, align;
} etrt_grid_geometry;

static void etrt_grid_tap(const etrt_grid_geometry *g, etrt_grid_taps *t, double y, double x,
                          double weight) {
  /* NaN and infinite positions, and those past int64, read nothing. */
  if (!(fabs(y) < 9e18) || !(fabs(x) < 9e18)) return;
  const int64_t yi = (int64_t)y, xi = (int64_t)x;
  if (yi < 0 || yi >= g->height || xi < 0 || xi >= g->width) return;
  t->offset[t->count] = yi * g->h_stride + xi * g->w_stride;
  t->weight[t->count++] = weight;
}

static void etrt_grid_cubic_weights(double t, double w[4]) {
  const double a = -0.75;
  w[0] = etrt_grid_cubic2(t + 1, a);
  w[1] = etrt_grid_cubic1(t, a);
  w[2] = etrt_grid_cubic1(1 - t, a);
  w[3] = etrt_grid_cubic2(2 - t, a);
}

static void etrt_grid_taps_at(const etrt_grid_geometry *g, double gx, double gy,
                              etrt_grid_taps *t) {
  t->count = 0;
  if (g->mode == ETRT_GRID_BICUBIC) {
    /* Bicubic pads each of its sixteen taps, not the sampling point. */
    const double ix = etrt_grid_unnormalize(gx, g->width, g->align);
    const double iy = etrt_grid_unnormalize(gy, g->height, g->align);
    const double x0 = floor(ix), y0 = floor(iy);
    double wx[4], wy[4];
    etrt_grid_cubic_weights(ix - x0, wx);
    etrt_grid_cubic_weights(iy - y0, wy);
    for (int i = 0; i < 4; ++i) {
      const double y = etrt_grid_pad(y0 - 1 + i, g->height, g->padding, g->align);
      for (int j = 0; j < 4; ++j)
        etrt_grid_tap(g, t, y, etrt_grid_pad(x0 - 1 + j, g->width, g->padding, g->align),
                      wy[i] * wx[j]);
    }
    return;
  }
  const double ix =
      etrt_grid_pad(etrt_grid_unnormalize(gx, g->width, g->align), g->width, g->padding, g->align);
  const double iy = etrt_grid_pad(etrt_grid_unnormalize(gy, g->height, g->align), g->height,
                                  g->padding, g->align);
  if (!(fabs(ix) < 9e18) || !(fabs(iy) < 9e18)) return;
  if (g->mode == ETRT_GRID_NEAREST) {
    etrt_grid_tap(g, t, nearbyint(iy), nearbyint(ix), 1);
    return;
  }
  const double x0 = floor(ix), y0 = floor(iy), tx = ix - x0, ty = iy - y0;
  etrt_grid_tap(g, t, y0, x0, (1 - tx) * (1 - ty));
  etrt_grid_tap(g, t, y0, x0 + 1, tx * (1 - ty));
  etrt_grid_tap(g, t, y0 + 1, x0, (1 - tx) * ty);
  etrt_grid_tap(g, t, y0 + 1, x0 + 1, tx * ty);
}

static etrt_status etrt_portable_grid_run(etrt_kernel_call *call, etrt_value *values,
                                          etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *input = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *grid = &values[call->args[1]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[5]].u.tensor;
  if (grid->sizes[0] != input->sizes[0] || grid->sizes[3] != 2)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the grid must be [%lld, H, W, 2], not [%lld, %lld, "
                      "%lld, %lld]",
                      call->def->name, call->instruction, (long long)input->sizes[0],
                      (long long)grid->sizes[0], (long long)grid->sizes[1],
                      (long long)grid->sizes[2], (long long)grid->sizes[3]);
  const int64_t dims[4] = {input->sizes[0], input->sizes[1], grid->sizes[1], grid->sizes[2]};
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, 4, dims));
  int64_t xs[4], gs[4], ys[4];
  etrt_portable_strides(input, xs);
  etrt_portable_strides(grid, gs);
  etrt_portable_strides(out, ys);
  const etrt_grid_geometry geometry = {
      input->sizes[2],       input->sizes[3],      xs[2], xs[3], (int)call->scalars[0],
      (int)call->scalars[1], call->scalars[2] != 0};
  const size_t gi = etrt_dtype_size(grid->dtype), xi = etrt_dtype_size(input->dtype);
  const size_t yi = etrt_dtype_size(out->dtype);
  const int f32 = input->dtype == ETRT_DTYPE_FLOAT32; /* out and grid share it */
  etrt_grid_taps taps;
  for (int64_t n = 0; n < dims[0]; ++n)
    for (int64_t h = 0; h < dims[2]; ++h)
      for (int64_t w = 0; w < dims[3]; ++w) {
        const uint8_t *g =
            (const uint8_t *)grid->data + (size_t)(n * gs[0] + h * gs[1] + w * gs[2]) * gi;
        etrt_grid_taps_at(&geometry, etrt_portable_scalar_load(grid->dtype, g),
                          etrt_portable_scalar_load(grid->dtype, g + (size_t)gs[3] * gi), &taps);
        for (int64_t c = 0; c < dims[1]; ++c) {
          const int64_t base = n * xs[0] + c * xs[1];
          const int64_t at = n * ys[0] + c * ys[1] + h * ys[2] + w * ys[3];
          double sum = 0;
          if (f32) {
            const float *plane = (const float *)input->data + base;
            for (int k = 0; k < taps.count; ++k) sum += taps.weight[k] * plane[taps.offset[k]];
            ((float *)out->data)[at] = (float)sum;
            continue;
          }
          const uint8_t *plane = (const uint8_t *)input->data + (size_t)base * xi;
          for (int k = 0; k < taps.count; ++k)
            sum += taps.weight[k] *
                   etrt_portable_scalar_load(input->dtype, plane + (size_t)taps.offset[k] * xi);
          etrt_portable_scalar_store(sum, out->dtype, (uint8_t *)out->data + (size_t)at * yi);
        }
      }
  return ETRT_OK;
}

static const etrt_kernel_def grid_sampler = {"aten::grid_sampler_2d.out", 7,
                                             etrt_portable_grid_prepare, etrt_portable_grid_run};

const etrt_kernel_def *const etrt_portable_grid_sample[] = {&grid_sampler, NULL};
