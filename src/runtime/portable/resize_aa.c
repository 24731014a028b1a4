/* _upsample_bilinear2d_aa.out(input, SymInt[2] output_size, bool align_corners,
 * float? scales_h, float? scales_w, *, out): bilinear resizing with antialiasing, as
 * ATen computes it (what F.interpolate(antialias=True) and torchvision's Resize
 * export to). Each output position averages the inputs under a triangle filter whose
 * support widens by the scale when shrinking; the weights are normalized to sum to 1.
 * The two directions are separable: out = sum_i sum_j wy[i] wx[j] in[y0 + i, x0 + j].
 * Computed in double from every float dtype at the positions the strides give. */
#include <math.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

/* Taps of one output position along one dim. ATen's windows are at most
 * ceil(support) * 2 + 1 wide; shrinking by more than this is refused. */
#define ETRT_AA_MAX_TAPS 64

typedef struct etrt_aa_axis {
  int64_t in, out;
  double scale, support, invscale;
} etrt_aa_axis;

static etrt_status etrt_portable_aa_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 5, &out));
  if (self->rank != 4 || out->dtype != self->dtype || !etrt_portable_dtype_is_float(self->dtype))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "_upsample_bilinear2d_aa takes a rank-4 floating-point input (%s, rank %d) "
                      "and an out tensor of its dtype (%s)",
                      etrt_dtype_name(self->dtype), self->rank, etrt_dtype_name(out->dtype));
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 1, call->ints[0], 2, &count));
  if (count != 2 || call->ints[0][0] < 1 || call->ints[0][1] < 1)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 1 (output_size) must be two sizes of 1 or more");
  int64_t align = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &align));
  call->scalars[0] = (double)(align != 0);
  for (uint32_t k = 0; k < 2; ++k) {
    call->scalars[1 + k] = 0; /* none: from the sizes */
    if (values[call->args[3 + k]].tag != ETRT_VALUE_NONE)
      ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 3 + k, &call->scalars[1 + k]));
  }
  return ETRT_OK;
}

/* ATen's area_pixel_compute_scale, then the filter's reach. */
static void etrt_aa_axis_init(etrt_aa_axis *a, int64_t in, int64_t out, int align, double given) {
  a->in = in;
  a->out = out;
  if (align)
    a->scale = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
  else
    a->scale = given > 0 ? 1.0 / given : (double)in / (double)out;
  a->support = a->scale >= 1.0 ? a->scale : 1.0; /* interp_size 2, halved, times the scale */
  a->invscale = a->scale >= 1.0 ? 1.0 / a->scale : 1.0;
}

/* The first tap and the normalized weights of output position i; returns the count. */
static int64_t etrt_aa_weights(const etrt_aa_axis *a, int64_t i, int64_t *first, double *w) {
  const double center = a->scale * ((double)i + 0.5);
  int64_t lo = (int64_t)(center - a->support + 0.5), hi = (int64_t)(center + a->support + 0.5);
  if (lo < 0) lo = 0;
  if (hi > a->in) hi = a->in;
  int64_t n = hi - lo;
  if (n > ETRT_AA_MAX_TAPS) n = ETRT_AA_MAX_TAPS;
  double total = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double x = fabs(((double)(j + lo) - center + 0.5) * a->invscale);
    w[j] = x < 1 ? 1 - x : 0;
    total += w[j];
  }
  for (int64_t j = 0; j < n && total != 0; ++j) w[j] /= total;
  *first = lo;
  return n;
}

static etrt_status etrt_portable_aa_run(etrt_kernel_call *call, etrt_value *values,
                                        etrt_run_context *context) {
  (void)context;
  ETRT_RETURN_IF_ERROR(etrt_portable_aa_prepare(call, values)); /* sizes may be SymInts */
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[5]].u.tensor;
  const int align = call->scalars[0] != 0;
  etrt_aa_axis ax[2];
  for (int k = 0; k < 2; ++k) {
    etrt_aa_axis_init(&ax[k], self->sizes[2 + k], call->ints[0][k], align, call->scalars[1 + k]);
    if (ax[k].in < 1 || ceil(ax[k].support) * 2 + 1 > ETRT_AA_MAX_TAPS)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s (instruction %u): resizing dim %d from %lld to %lld needs more than "
                        "%d taps",
                        call->def->name, call->instruction, 2 + k, (long long)ax[k].in,
                        (long long)ax[k].out, ETRT_AA_MAX_TAPS);
  }
  const int64_t dims[4] = {self->sizes[0], self->sizes[1], ax[0].out, ax[1].out};
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, 4, dims));
  int64_t xs[4], ys[4];
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  const size_t xi = etrt_dtype_size(self->dtype), yi = etrt_dtype_size(out->dtype);
  double wy[ETRT_AA_MAX_TAPS], wx[ETRT_AA_MAX_TAPS];
  for (int64_t oh = 0; oh < dims[2]; ++oh) {
    int64_t y0 = 0, x0 = 0;
    const int64_t ny = etrt_aa_weights(&ax[0], oh, &y0, wy);
    for (int64_t ow = 0; ow < dims[3]; ++ow) {
      const int64_t nx = etrt_aa_weights(&ax[1], ow, &x0, wx);
      for (int64_t n = 0; n < dims[0]; ++n)
        for (int64_t c = 0; c < dims[1]; ++c) {
          const uint8_t *plane = (const uint8_t *)self->data + (size_t)(n * xs[0] + c * xs[1]) * xi;
          double sum = 0;
          for (int64_t i = 0; i < ny; ++i) {
            double row = 0;
            for (int64_t j = 0; j < nx; ++j)
              row += wx[j] *
                     etrt_portable_scalar_load(
                         self->dtype, plane + (size_t)((y0 + i) * xs[2] + (x0 + j) * xs[3]) * xi);
            sum += wy[i] * row;
          }
          etrt_portable_scalar_store(
              sum, out->dtype,
              (uint8_t *)out->data +
                  (size_t)(n * ys[0] + c * ys[1] + oh * ys[2] + ow * ys[3]) * yi);
        }
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def upsample_aa = {"aten::_upsample_bilinear2d_aa.out", 7,
                                            etrt_portable_aa_prepare, etrt_portable_aa_run};

const etrt_kernel_def *const etrt_portable_resize_aa[] = {&upsample_aa, NULL};
