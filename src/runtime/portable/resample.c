/* Kernels that move elements to new positions: flip, roll, the reflection and
 * replication pads, nearest and bilinear upsampling, pixel_unshuffle, and
 * max_pool2d_with_indices (values and ATen's indices). Positions come from each
 * tensor's strides, so any dim order (channels-last included) is read and written
 * as it is; elements are copied as bytes (every dtype) or, where they are combined,
 * read as doubles. */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

typedef enum etrt_portable_remap_kind {
  ETRT_REMAP_FLIP,      /* (self, int[] dims, *, out) */
  ETRT_REMAP_ROLL,      /* (self, int[1] shifts, int[1] dims, *, out) */
  ETRT_REMAP_REFLECT,   /* (self, int[2k] padding, *, out): the last k dims */
  ETRT_REMAP_REPLICATE, /* likewise */
  ETRT_REMAP_NEAREST,   /* upsample_nearest2d.vec(input, int[]? size, float[]? scales, *, out) */
  ETRT_REMAP_UNSHUFFLE  /* pixel_unshuffle(self, int downscale_factor, *, out) */
} etrt_portable_remap_kind;

typedef struct etrt_portable_remap_spec {
  etrt_kernel_def def;
  etrt_portable_remap_kind kind;
  int8_t spatial; /* the pads' number of dims */
  int8_t out;
} etrt_portable_remap_spec;

static const etrt_portable_remap_spec *etrt_portable_remap_of(const etrt_kernel_call *call) {
  return (const etrt_portable_remap_spec *)call->def;
}

/* call->ints[0]: dims / padding / sizes, ints[1]: shifts, scalars[0]: their counts,
 * scalars[1..2]: scale factors (nearest). */
static etrt_status etrt_portable_remap_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_remap_spec *spec = etrt_portable_remap_of(call);
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &out));
  if (out->dtype != self->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor is %s, the input %s",
                      etrt_dtype_name(out->dtype), etrt_dtype_name(self->dtype));
  uint32_t count = 0, shifts = 0;
  switch (spec->kind) {
    case ETRT_REMAP_ROLL:
      ETRT_RETURN_IF_ERROR(
          etrt_portable_ints_arg(call, values, 1, call->ints[1], ETRT_MAX_RANK, &shifts));
      ETRT_RETURN_IF_ERROR(
          etrt_portable_ints_arg(call, values, 2, call->ints[0], ETRT_MAX_RANK, &count));
      if (shifts == 0 || (count != 0 && count != shifts) || (count == 0 && shifts != 1))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "roll: %u shifts for %u dims (one shift without dims flattens)", shifts,
                          count);
      break;
    case ETRT_REMAP_UNSHUFFLE:
      ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &call->ints[0][0]));
      if (call->ints[0][0] < 1)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 1 (downscale_factor) is %lld",
                          (long long)call->ints[0][0]);
      if (self->rank < 3)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the input must have rank 3 or more");
      break;
    case ETRT_REMAP_NEAREST: {
      ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 1, call->ints[0], 2, &count));
      const etrt_value *scales = &values[call->args[2]];
      if (count == 0) {
        if (scales->tag != ETRT_VALUE_DOUBLE_LIST || scales->u.doubles.count != 2)
          return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                            "upsample: neither an output size nor two scale factors");
        call->scalars[1] = scales->u.doubles.items[0];
        call->scalars[2] = scales->u.doubles.items[1];
        if (!(call->scalars[1] > 0) || !(call->scalars[2] > 0))
          return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "upsample: scale factors must be > 0");
      } else if (count != 2) {
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "upsample: the output size has %u items",
                          count);
      }
      if (self->rank != 4)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "upsample: the input must have rank 4");
      break;
    }
    default:
      ETRT_RETURN_IF_ERROR(
          etrt_portable_ints_arg(call, values, 1, call->ints[0], ETRT_MAX_RANK, &count));
      if (spec->kind != ETRT_REMAP_FLIP &&
          (count != 2u * (uint32_t)spec->spatial || self->rank < spec->spatial))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "padding has %u items for %d dims (input rank %d)", count, spec->spatial,
                          self->rank);
      break;
  }
  call->scalars[0] = count;
  return ETRT_OK;
}

static int64_t etrt_portable_wrap(int64_t v, int64_t n) {
  v %= n;
  return v < 0 ? v + n : v;
}

/* The source position along dim d of output position i (-1: none), with `dims` the
 * input sizes; `pad` the padding before dim d (pads). */
static etrt_status etrt_portable_remap_run(etrt_kernel_call *call, etrt_value *values,
                                           etrt_run_context *context) {
  (void)context;
  const etrt_portable_remap_spec *spec = etrt_portable_remap_of(call);
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  const int32_t rank = self->rank;
  const uint32_t count = (uint32_t)call->scalars[0];
  int64_t dims[ETRT_MAX_RANK], before[ETRT_MAX_RANK] = {0}, shift[ETRT_MAX_RANK] = {0};
  int flip[ETRT_MAX_RANK] = {0};
  double scale[ETRT_MAX_RANK] = {0};
  memcpy(dims, self->sizes, sizeof dims);
  const char *name = call->def->name;
  int flat_roll = 0;
  if (spec->kind == ETRT_REMAP_FLIP || spec->kind == ETRT_REMAP_ROLL) {
    flat_roll = spec->kind == ETRT_REMAP_ROLL && count == 0;
    for (uint32_t i = 0; i < count; ++i) {
      int64_t d = call->ints[0][i] < 0 ? call->ints[0][i] + rank : call->ints[0][i];
      if (d < 0 || d >= rank)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): dim %lld is out of range for rank %d", name,
                          call->instruction, (long long)call->ints[0][i], rank);
      if (spec->kind == ETRT_REMAP_FLIP)
        flip[d] ^= 1;
      else
        shift[d] += call->ints[1][i];
    }
  } else if (spec->kind == ETRT_REMAP_REFLECT || spec->kind == ETRT_REMAP_REPLICATE) {
    for (int32_t k = 0; k < spec->spatial; ++k) {
      int32_t d = rank - 1 - k;
      int64_t lo = call->ints[0][2 * k], hi = call->ints[0][2 * k + 1];
      if (spec->kind == ETRT_REMAP_REFLECT && (lo >= self->sizes[d] || hi >= self->sizes[d]))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): padding %lld, %lld must be below the dim's size "
                          "%lld",
                          name, call->instruction, (long long)lo, (long long)hi,
                          (long long)self->sizes[d]);
      before[d] = lo;
      dims[d] = self->sizes[d] + lo + hi;
      if (dims[d] < 0 || (spec->kind == ETRT_REMAP_REPLICATE && self->sizes[d] == 0 && dims[d]))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): padding gives dim %d size %lld", name,
                          call->instruction, d, (long long)dims[d]);
    }
  } else if (spec->kind == ETRT_REMAP_NEAREST) {
    for (int k = 0; k < 2; ++k) {
      int32_t d = 2 + k;
      if (count == 2) {
        dims[d] = call->ints[0][k];
        scale[d] = dims[d] > 0 ? (double)self->sizes[d] / (double)dims[d] : 0;
      } else {
        dims[d] = (int64_t)floor((double)self->sizes[d] * call->scalars[1 + k]);
        scale[d] = 1.0 / call->scalars[1 + k];
      }
      if (dims[d] < 0 || (dims[d] > 0 && self->sizes[d] == 0))
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): output size %lld",
                          name, call->instruction, (long long)dims[d]);
    }
  } else { /* unshuffle */
    const int64_t r = call->ints[0][0];
    if (self->sizes[rank - 1] % r || self->sizes[rank - 2] % r)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the spatial dims are not multiples of %lld", name,
                        call->instruction, (long long)r);
    dims[rank - 3] *= r * r;
    dims[rank - 2] /= r;
    dims[rank - 1] /= r;
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, dims));
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], index[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(out);
  const uint8_t *x = self->data;
  uint8_t *y = out->data;
  for (int64_t e = 0; e < numel; ++e) {
    int64_t src = 0, dst = 0;
    if (flat_roll) {
      /* The logical (row-major) element e - shift, wherever its dim order puts it. */
      int64_t from = etrt_portable_wrap(e - call->ints[1][0], numel);
      for (int32_t d = rank - 1; d >= 0; --d) {
        src += (from % self->sizes[d]) * xs[d];
        from /= self->sizes[d];
      }
    }
    for (int32_t d = 0; d < rank; ++d) {
      int64_t i = index[d], j = i;
      dst += i * ys[d];
      if (flat_roll) continue;
      switch (spec->kind) {
        case ETRT_REMAP_FLIP:
          j = flip[d] ? self->sizes[d] - 1 - i : i;
          break;
        case ETRT_REMAP_ROLL:
          j = shift[d] ? etrt_portable_wrap(i - shift[d], self->sizes[d]) : i;
          break;
        case ETRT_REMAP_REFLECT:
          j = i - before[d];
          if (j < 0) j = -j;
          if (j >= self->sizes[d]) j = 2 * (self->sizes[d] - 1) - j;
          break;
        case ETRT_REMAP_REPLICATE:
          j = i - before[d];
          j = j < 0 ? 0 : j >= self->sizes[d] ? self->sizes[d] - 1 : j;
          break;
        case ETRT_REMAP_NEAREST:
          if (scale[d] != 0) {
            j = (int64_t)floor((double)i * scale[d]);
            if (j > self->sizes[d] - 1) j = self->sizes[d] - 1;
          }
          break;
        default: { /* unshuffle: out[.., c*r*r + a*r + b, h, w] = in[.., c, h*r + a, w*r + b] */
          const int64_t r = call->ints[0][0];
          if (d == rank - 3) j = i / (r * r);
          if (d == rank - 2) j = i * r + (index[rank - 3] % (r * r)) / r;
          if (d == rank - 1) j = i * r + index[rank - 3] % r;
          break;
        }
      }
      src += j * xs[d];
    }
    memcpy(y + (size_t)dst * item, x + (size_t)src * item, item);
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return ETRT_OK;
}

#define REMAP(var, name, nargs, kind, spatial, out) \
  static const etrt_portable_remap_spec var = {     \
      {name, nargs, etrt_portable_remap_prepare, etrt_portable_remap_run}, kind, spatial, out}
REMAP(flip, "aten::flip.out", 4, ETRT_REMAP_FLIP, 0, 2);
REMAP(roll, "aten::roll.out", 5, ETRT_REMAP_ROLL, 0, 3);
REMAP(reflect1, "aten::reflection_pad1d.out", 4, ETRT_REMAP_REFLECT, 1, 2);
REMAP(reflect2, "aten::reflection_pad2d.out", 4, ETRT_REMAP_REFLECT, 2, 2);
REMAP(reflect3, "aten::reflection_pad3d.out", 4, ETRT_REMAP_REFLECT, 3, 2);
REMAP(replicate1, "aten::replication_pad1d.out", 4, ETRT_REMAP_REPLICATE, 1, 2);
REMAP(replicate2, "aten::replication_pad2d.out", 4, ETRT_REMAP_REPLICATE, 2, 2);
REMAP(replicate3, "aten::replication_pad3d.out", 4, ETRT_REMAP_REPLICATE, 3, 2);
REMAP(nearest, "aten::upsample_nearest2d.vec_out", 5, ETRT_REMAP_NEAREST, 2, 3);
REMAP(unshuffle, "aten::pixel_unshuffle.out", 4, ETRT_REMAP_UNSHUFFLE, 2, 2);

/* upsample_bilinear2d.vec_out(input, int[]? output_size, bool align_corners, float[]?
 * scale_factors, *, out): ATen's source positions (area_pixel_compute_source_index),
 * computed in double for every float dtype. scalars: [0] align_corners, [1..2] the
 * scale factors (0: from the output size). */
static etrt_status etrt_portable_bilinear_prepare(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 4, &out));
  if (self->rank != 4 || out->dtype != self->dtype || !etrt_portable_dtype_is_float(self->dtype))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "upsample_bilinear2d takes a rank-4 floating-point input and an out "
                      "tensor of its dtype");
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 1, call->ints[0], 2, &count));
  int64_t align = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &align));
  call->scalars[0] = (double)align;
  call->scalars[1] = call->scalars[2] = 0;
  const etrt_value *scales = &values[call->args[3]];
  if (scales->tag == ETRT_VALUE_DOUBLE_LIST && scales->u.doubles.count == 2) {
    call->scalars[1] = scales->u.doubles.items[0];
    call->scalars[2] = scales->u.doubles.items[1];
    if (!(call->scalars[1] > 0) || !(call->scalars[2] > 0))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "upsample: scale factors must be > 0");
  } else if (count != 2) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "upsample: neither an output size nor two scale factors");
  }
  call->scalars[3] = count;
  return ETRT_OK;
}

static etrt_status etrt_portable_bilinear_run(etrt_kernel_call *call, etrt_value *values,
                                              etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[4]].u.tensor;
  const int align = call->scalars[0] != 0;
  int64_t dims[4] = {self->sizes[0], self->sizes[1], 0, 0};
  double scale[2];
  for (int k = 0; k < 2; ++k) {
    const int64_t in = self->sizes[2 + k];
    dims[2 + k] = call->scalars[3] == 2 ? call->ints[0][k]
                                        : (int64_t)floor((double)in * call->scalars[1 + k]);
    const int64_t o = dims[2 + k];
    if (o < 0 || (o > 0 && in == 0))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): output size %lld",
                        call->def->name, call->instruction, (long long)o);
    if (align)
      scale[k] = o > 1 ? (double)(in - 1) / (double)(o - 1) : 0;
    else
      scale[k] = call->scalars[1 + k] > 0 && call->scalars[3] != 2 ? 1.0 / call->scalars[1 + k]
                 : o > 0                                           ? (double)in / (double)o
                                                                   : 0;
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, 4, dims));
  int64_t xs[4], ys[4];
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  const size_t item = etrt_dtype_size(self->dtype);
  const uint8_t *x = self->data;
  for (int64_t oh = 0; oh < dims[2]; ++oh) {
    int64_t h[2];
    double lh;
    {
      double s = align ? scale[0] * (double)oh : fmax(0.0, scale[0] * ((double)oh + 0.5) - 0.5);
      h[0] = (int64_t)s;
      if (h[0] > self->sizes[2] - 1) h[0] = self->sizes[2] - 1;
      h[1] = h[0] + (h[0] < self->sizes[2] - 1);
      lh = fmin(s - (double)h[0], 1.0);
    }
    for (int64_t ow = 0; ow < dims[3]; ++ow) {
      double s = align ? scale[1] * (double)ow : fmax(0.0, scale[1] * ((double)ow + 0.5) - 0.5);
      int64_t w[2];
      w[0] = (int64_t)s;
      if (w[0] > self->sizes[3] - 1) w[0] = self->sizes[3] - 1;
      w[1] = w[0] + (w[0] < self->sizes[3] - 1);
      double lw = fmin(s - (double)w[0], 1.0);
      if (self->dtype == ETRT_DTYPE_FLOAT32 && out->dtype == ETRT_DTYPE_FLOAT32) {
        /* float32 (what most programs hold) read and written directly, in float as ATen
         * computes it. */
        const float *xf = (const float *)x;
        float *yf = (float *)out->data;
        const float fh = (float)lh, fw = (float)lw;
        const int64_t o00 = h[0] * xs[2] + w[0] * xs[3], o01 = h[0] * xs[2] + w[1] * xs[3];
        const int64_t o10 = h[1] * xs[2] + w[0] * xs[3], o11 = h[1] * xs[2] + w[1] * xs[3];
        for (int64_t n = 0; n < dims[0]; ++n)
          for (int64_t c = 0; c < dims[1]; ++c) {
            const float *b = xf + n * xs[0] + c * xs[1];
            yf[n * ys[0] + c * ys[1] + oh * ys[2] + ow * ys[3]] =
                (1 - fh) * ((1 - fw) * b[o00] + fw * b[o01]) +
                fh * ((1 - fw) * b[o10] + fw * b[o11]);
          }
        continue;
      }
      for (int64_t n = 0; n < dims[0]; ++n)
        for (int64_t c = 0; c < dims[1]; ++c) {
          const int64_t base = n * xs[0] + c * xs[1];
          double v[2][2];
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
              v[a][b] = etrt_portable_scalar_load(
                  self->dtype, x + (size_t)(base + h[a] * xs[2] + w[b] * xs[3]) * item);
          double r = (1 - lh) * ((1 - lw) * v[0][0] + lw * v[0][1]) +
                     lh * ((1 - lw) * v[1][0] + lw * v[1][1]);
          etrt_portable_scalar_store(
              r, out->dtype,
              (uint8_t *)out->data +
                  (size_t)(n * ys[0] + c * ys[1] + oh * ys[2] + ow * ys[3]) * item);
        }
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def bilinear = {"aten::upsample_bilinear2d.vec_out", 6,
                                         etrt_portable_bilinear_prepare,
                                         etrt_portable_bilinear_run};

/* max_pool2d_with_indices.out(self, kernel_size, stride, padding, dilation, ceil_mode,
 * *, out, indices): the values and, per (n, c) plane, the flat index h * W + w of
 * each maximum, as ATen returns them (max_unpool reads them). A NaN wins (the last one), as in
 * ATen. ints[0..3]: kernel, stride, padding, dilation (two each); scalars[0]: ceil_mode. */
static etrt_status etrt_portable_pool_ints(etrt_kernel_call *call, const etrt_value *values,
                                           uint32_t arg, int slot, int64_t fallback) {
  uint32_t count = 0;
  int64_t *items = call->ints[slot];
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, arg, items, 2, &count));
  if (count == 0) items[0] = items[1] = fallback;
  if (count == 1) items[1] = items[0];
  if (count == 0 && fallback < 0) { /* stride [] means the kernel size */
    items[0] = call->ints[0][0];
    items[1] = call->ints[0][1];
  }
  for (int k = 0; k < 2; ++k)
    if (items[k] < (slot == 2 ? 0 : 1))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %u has item %lld", arg,
                        (long long)items[k]);
  return ETRT_OK;
}

static etrt_status etrt_portable_max_pool_prepare(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL, *indices = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 6, &out));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 7, &indices));
  if (self->rank != 3 && self->rank != 4)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the input must have rank 3 or 4, not %d",
                      self->rank);
  if (out->dtype != self->dtype || indices->dtype != ETRT_DTYPE_INT64)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the out tensor must be %s and the indices int64 (they are %s and %s)",
                      etrt_dtype_name(self->dtype), etrt_dtype_name(out->dtype),
                      etrt_dtype_name(indices->dtype));
  ETRT_RETURN_IF_ERROR(etrt_portable_pool_ints(call, values, 1, 0, 0));
  ETRT_RETURN_IF_ERROR(etrt_portable_pool_ints(call, values, 2, 1, -1));
  ETRT_RETURN_IF_ERROR(etrt_portable_pool_ints(call, values, 3, 2, 0));
  ETRT_RETURN_IF_ERROR(etrt_portable_pool_ints(call, values, 4, 3, 1));
  for (int k = 0; k < 2; ++k)
    if (call->ints[2][k] > call->ints[0][k] / 2)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "padding %lld is more than half the kernel size %lld",
                        (long long)call->ints[2][k], (long long)call->ints[0][k]);
  int64_t ceil_mode = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 5, &ceil_mode));
  call->scalars[0] = (double)ceil_mode;
  return ETRT_OK;
}

/* ATen's pooling_output_shape. */
static int64_t etrt_portable_pool_size(int64_t in, int64_t k, int64_t pad, int64_t stride,
                                       int64_t dilation, int ceil_mode) {
  int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t o = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (o - 1) * stride >= in + pad) --o;
  return o;
}

static etrt_status etrt_portable_max_pool_run(etrt_kernel_call *call, etrt_value *values,
                                              etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[6]].u.tensor;
  etrt_runtime_tensor *indices = &values[call->args[7]].u.tensor;
  const int32_t rank = self->rank, hd = rank - 2, wd = rank - 1;
  const int64_t *k = call->ints[0], *s = call->ints[1], *p = call->ints[2], *d = call->ints[3];
  int64_t dims[4];
  memcpy(dims, self->sizes, (size_t)rank * sizeof *dims);
  for (int a = 0; a < 2; ++a) {
    dims[hd + a] =
        etrt_portable_pool_size(self->sizes[hd + a], k[a], p[a], s[a], d[a], call->scalars[0] != 0);
    if (dims[hd + a] <= 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the output would have size %lld along dim %d",
                        call->def->name, call->instruction, (long long)dims[hd + a], hd + a);
  }
  etrt_runtime_tensor check = *indices;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, ETRT_DTYPE_INT64, rank, dims));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, dims));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, indices, ETRT_DTYPE_INT64, rank, dims));
  int64_t xs[4], ys[4], is[4];
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  etrt_portable_strides(indices, is);
  const int64_t planes_n = rank == 4 ? dims[0] : 1, channels = dims[rank - 3];
  const int64_t H = self->sizes[hd], W = self->sizes[wd];
  const size_t item = etrt_dtype_size(self->dtype);
  const uint8_t *x = self->data;
  for (int64_t n = 0; n < planes_n; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t xb = (rank == 4 ? n * xs[0] : 0) + c * xs[rank - 3];
      const int64_t yb = (rank == 4 ? n * ys[0] : 0) + c * ys[rank - 3];
      const int64_t ib = (rank == 4 ? n * is[0] : 0) + c * is[rank - 3];
      for (int64_t oh = 0; oh < dims[hd]; ++oh)
        for (int64_t ow = 0; ow < dims[wd]; ++ow) {
          int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
          double best = -INFINITY;
          int64_t best_index = -1;
          for (int64_t kh = 0; kh < k[0]; ++kh) {
            const int64_t h = h0 + kh * d[0];
            if (h < 0 || h >= H) continue;
            for (int64_t kw = 0; kw < k[1]; ++kw) {
              const int64_t w = w0 + kw * d[1];
              if (w < 0 || w >= W) continue;
              double v = etrt_portable_scalar_load(
                  self->dtype, x + (size_t)(xb + h * xs[hd] + w * xs[wd]) * item);
              if (best_index < 0 || v > best || isnan(v)) {
                best = v;
                best_index = h * W + w;
              }
            }
          }
          /* The window always holds an element (padding is at most half the kernel),
           * so the copy keeps the value's exact bits. */
          const int64_t bh = best_index / W, bw = best_index % W;
          memcpy((uint8_t *)out->data + (size_t)(yb + oh * ys[hd] + ow * ys[wd]) * item,
                 x + (size_t)(xb + bh * xs[hd] + bw * xs[wd]) * item, item);
          ((int64_t *)indices->data)[ib + oh * is[hd] + ow * is[wd]] = best_index;
        }
    }
  return ETRT_OK;
}
static const etrt_kernel_def max_pool = {"aten::max_pool2d_with_indices.out", 9,
                                         etrt_portable_max_pool_prepare,
                                         etrt_portable_max_pool_run};

/* diagonal_copy.out(self, int offset, int dim1, int dim2, *, out): self's other dims
 * in order, then the diagonal of (dim1, dim2) shifted by offset (above the main one
 * for offset > 0). */
static etrt_status etrt_portable_diagonal_prepare(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 4, &out));
  int64_t d1 = 0, d2 = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &call->ints[0][0]));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &d1));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &d2));
  if (d1 < 0) d1 += self->rank;
  if (d2 < 0) d2 += self->rank;
  if (self->rank < 2 || d1 < 0 || d1 >= self->rank || d2 < 0 || d2 >= self->rank || d1 == d2 ||
      out->dtype != self->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "diagonal takes two different dims of a tensor of rank 2 or more and an "
                      "out tensor of its dtype");
  call->ints[0][1] = d1;
  call->ints[0][2] = d2;
  return ETRT_OK;
}

static etrt_status etrt_portable_diagonal_run(etrt_kernel_call *call, etrt_value *values,
                                              etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[4]].u.tensor;
  const int64_t offset = call->ints[0][0], d1 = call->ints[0][1], d2 = call->ints[0][2];
  const int64_t s1 = self->sizes[d1], s2 = self->sizes[d2];
  int64_t length =
      offset >= 0 ? (s1 < s2 - offset ? s1 : s2 - offset) : (s1 + offset < s2 ? s1 + offset : s2);
  if (length < 0) length = 0;
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], dims[ETRT_MAX_RANK], map[ETRT_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < self->rank; ++d)
    if (d != d1 && d != d2) {
      map[rank] = d;
      dims[rank++] = self->sizes[d];
    }
  dims[rank++] = length;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, dims));
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(out);
  const int64_t base = offset >= 0 ? offset * xs[d2] : -offset * xs[d1];
  int64_t pos[ETRT_MAX_RANK] = {0};
  for (int64_t e = 0; e < numel; ++e) {
    int64_t a = base + pos[rank - 1] * (xs[d1] + xs[d2]), b = 0;
    for (int32_t k = 0; k < rank; ++k) {
      if (k < rank - 1) a += pos[k] * xs[map[k]];
      b += pos[k] * ys[k];
    }
    memcpy((uint8_t *)out->data + (size_t)b * item, (const uint8_t *)self->data + (size_t)a * item,
           item);
    for (int32_t k = rank - 1; k >= 0; --k) {
      if (++pos[k] < dims[k]) break;
      pos[k] = 0;
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def diagonal = {
    "aten::diagonal_copy.out", 6, etrt_portable_diagonal_prepare, etrt_portable_diagonal_run};

const etrt_kernel_def *const etrt_portable_resample[] = {
    &diagonal,       &flip.def,     &roll.def,       &reflect1.def,
    &reflect2.def,   &reflect3.def, &replicate1.def, &replicate2.def,
    &replicate3.def, &nearest.def,  &unshuffle.def,  &bilinear,
    &max_pool,       NULL,
};
