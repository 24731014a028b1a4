/* CPU kernels of Conv, ConvTranspose and EtrtFusedConv (float32; float16 and bfloat16
 * through float32 copies, cpu/widen.h). Conv packs tiles of the im2col
 * matrix on the stack and multiplies them with the blocked GEMM; depthwise 2-D
 * convolutions (one input channel per group) run a direct kernel per plane instead;
 * ConvTranspose multiplies tiles of W^T * X and scatters them into the output
 * (col2im). None allocates. Work is split over the thread pool by output tiles or
 * planes (or, when there are too few, inside the GEMM); each output element is
 * computed the same way whatever the split. */
#include "engine/ops/conv.h"

#include <string.h>

#include "base/thread_pool.h"
#include "engine/ops/cpu/gemm_util.h"
#include "engine/ops/cpu/scalar.h"
#include "engine/ops/cpu/vector_math.h"
#include "engine/ops/cpu/widen.h"

/* Tile sizes: the packed tile is TILE_K x TILE_N floats (64 KiB). */
#define ETRT_CONV_TILE_N 128
#define ETRT_CONV_TILE_K 128

typedef struct etrt_conv_dims {
  int64_t batch, channels, maps, group, channels_per_group, maps_per_group;
  int64_t in_count, out_count, kernel_count;
} etrt_conv_dims;

/* Splits a flat index over `sizes` (row-major) into coordinates. */
static void etrt_conv_unflatten(int64_t index, const int64_t *sizes, int32_t n, int64_t *coords) {
  for (int32_t s = n - 1; s >= 0; --s) {
    coords[s] = index % sizes[s];
    index /= sizes[s];
  }
}

/* origin[s][j]: the first input coordinate of output position first + j. */
static void etrt_conv_tile_origins(const etrt_conv_geometry *g, const int64_t *sizes, int64_t first,
                                   int64_t count, int64_t origin[][ETRT_CONV_TILE_N]) {
  int64_t coords[ETRT_CONV_MAX_SPATIAL];
  etrt_conv_unflatten(first, sizes, g->spatial, coords);
  for (int64_t j = 0; j < count; ++j) {
    for (int32_t s = 0; s < g->spatial; ++s)
      origin[s][j] = coords[s] * g->stride[s] - g->pad_begin[s];
    for (int32_t s = g->spatial - 1; s >= 0; --s) {
      if (++coords[s] < sizes[s]) break;
      coords[s] = 0;
    }
  }
}

/* The spatial offset, in input steps (dilated), of flat kernel position `flat`. */
static void etrt_conv_kernel_offset(const etrt_conv_geometry *g, int64_t flat, int64_t *offset) {
  etrt_conv_unflatten(flat, g->kernel, g->spatial, offset);
  for (int32_t s = 0; s < g->spatial; ++s) offset[s] *= g->dilation[s];
}

/* The flat index, in a grid of `sizes`, of tile position j moved by `offset`; -1
 * where that lands in the padding. */
static inline int64_t etrt_conv_window_index(const etrt_conv_geometry *g, const int64_t *sizes,
                                             int64_t origin[][ETRT_CONV_TILE_N], int64_t j,
                                             const int64_t *offset) {
  int64_t index = 0;
  for (int32_t s = 0; s < g->spatial; ++s) {
    int64_t c = origin[s][j] + offset[s];
    if (c < 0 || c >= sizes[s]) return -1;
    index = index * sizes[s] + c;
  }
  return index;
}

/* Packs rows [k0, k0 + kt) of the im2col matrix for output positions of the tile:
 * row k is (channel, kernel offset); zero where the window reads padding. */
static void etrt_conv_pack(const etrt_conv_geometry *g, const float *x, int64_t kernel_count,
                           int64_t k0, int64_t kt, int64_t nt, int64_t origin[][ETRT_CONV_TILE_N],
                           float *packed) {
  int64_t in_count = etrt_conv_geometry_in_count(g);
  for (int64_t k = 0; k < kt; ++k) {
    int64_t channel = (k0 + k) / kernel_count;
    int64_t offset[ETRT_CONV_MAX_SPATIAL];
    etrt_conv_kernel_offset(g, (k0 + k) % kernel_count, offset);
    const float *xc = x + channel * in_count;
    float *row = packed + k * nt;
    for (int64_t j = 0; j < nt; ++j) {
      int64_t index = etrt_conv_window_index(g, g->in, origin, j, offset);
      row[j] = index >= 0 ? xc[index] : 0.0f;
    }
  }
}

/* The same for two spatial axes, by runs of outputs along one output row: a run
 * reads one input row, so it is zero padding, then a copy (strided by the column
 * stride), then padding again, with no per-element index arithmetic. */
static void etrt_conv_pack_2d(const etrt_conv_geometry *g, const float *x, int64_t kernel_count,
                              int64_t k0, int64_t kt, int64_t p0, int64_t nt, float *packed) {
  const int64_t ih_count = g->in[0], iw_count = g->in[1], ow_count = g->out[1];
  const int64_t kw_count = g->kernel[1], sh = g->stride[0], sw = g->stride[1];
  for (int64_t k = 0; k < kt; ++k) {
    int64_t channel = (k0 + k) / kernel_count, tap = (k0 + k) % kernel_count;
    int64_t kh = tap / kw_count, kw = tap % kw_count;
    const float *xc = x + channel * ih_count * iw_count;
    int64_t offset = kw * g->dilation[1] - g->pad_begin[1]; /* iw = ow * sw + offset */
    float *row = packed + k * nt;
    for (int64_t j = 0; j < nt;) {
      int64_t oh = (p0 + j) / ow_count, ow0 = (p0 + j) % ow_count;
      int64_t run = ow_count - ow0 < nt - j ? ow_count - ow0 : nt - j;
      int64_t ih = oh * sh - g->pad_begin[0] + kh * g->dilation[0];
      float *dst = row + j; /* dst[ow - ow0] */
      if (ih < 0 || ih >= ih_count) {
        memset(dst, 0, (size_t)run * sizeof(float));
      } else {
        const float *xr = xc + ih * iw_count;
        int64_t end = ow0 + run;
        int64_t lo = offset >= 0 ? 0 : (-offset + sw - 1) / sw;
        int64_t hi = iw_count - offset <= 0 ? 0 : (iw_count - offset + sw - 1) / sw;
        lo = lo < ow0 ? ow0 : lo > end ? end : lo;
        hi = hi > end ? end : hi < lo ? lo : hi;
        for (int64_t ow = ow0; ow < lo; ++ow) dst[ow - ow0] = 0.0f;
        if (sw == 1) {
          if (hi > lo)
            memcpy(dst + (lo - ow0), xr + lo + offset, (size_t)(hi - lo) * sizeof(float));
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow - ow0] = xr[ow * sw + offset];
        }
        for (int64_t ow = hi; ow < end; ++ow) dst[ow - ow0] = 0.0f;
      }
      j += run;
    }
  }
}

static int etrt_conv_is_pointwise(const etrt_conv_geometry *g) {
  for (int32_t s = 0; s < g->spatial; ++s) {
    if (g->kernel[s] != 1 || g->stride[s] != 1 || g->pad_begin[s] != 0 || g->pad_end[s] != 0)
      return 0;
  }
  return 1;
}

typedef struct etrt_conv_job {
  const etrt_conv_geometry *g;
  etrt_conv_dims d;
  const float *x, *w, *bias;
  float *y;
  int64_t k_total, tiles; /* tiles: output tiles per (batch, group) */
  /* EtrtFusedConv's epilogue: the residual (NULL: none), the activation and affine. */
  const float *z;
  const etrt_fused_conv_params *fused; /* NULL: a Conv */
} etrt_conv_job;

/* y = act(y + z) over n values, in the order and with the arithmetic of the separate
 * Add and activation operators, so fused and unfused plans give the same bits. */
void etrt_cpu_conv_activate(float *y, const float *z, int64_t n, const etrt_fused_conv_params *p) {
  if (z != NULL) etrt_cpu_add_f32(y, z, y, n);
  if (p == NULL) return;
  switch (p->activation) {
    case ETRT_CONV_ACT_NONE:
      break;
    case ETRT_CONV_ACT_RELU:
      etrt_cpu_relu_f32(y, y, n);
      break;
    case ETRT_CONV_ACT_CLIP:
      etrt_cpu_clip_f32(y, y, n, p->min, p->max);
      break;
    case ETRT_CONV_ACT_HARD_SWISH:
      etrt_cpu_hard_swish_f32(y, y, n);
      break;
    case ETRT_CONV_ACT_SIGMOID:
      etrt_cpu_sigmoid_f32(y, y, n);
      break;
    case ETRT_CONV_ACT_SILU: {
      float s[256];
      for (int64_t i0 = 0; i0 < n; i0 += 256) {
        int64_t m = n - i0 < 256 ? n - i0 : 256;
        etrt_cpu_sigmoid_f32(y + i0, s, m);
        for (int64_t i = 0; i < m; ++i) y[i0 + i] *= s[i];
      }
      break;
    }
  }
  /* the Mul and then the Add the builder folded, each rounded as they were */
  if (p->scale != 1.0f)
    for (int64_t i = 0; i < n; ++i) y[i] *= p->scale;
  if (p->shift != 0.0f)
    for (int64_t i = 0; i < n; ++i) y[i] += p->shift;
}

typedef struct etrt_conv_epilogue_job {
  float *y;
  const float *bias, *z;
  const etrt_fused_conv_params *p;
  int64_t maps, plane_size;
} etrt_conv_epilogue_job;

/* Adds the bias, then applies the epilogue, to planes [begin, end) of the output. */
static void etrt_conv_epilogue_planes(void *ctx, int64_t begin, int64_t end) {
  const etrt_conv_epilogue_job *j = ctx;
  for (int64_t plane = begin; plane < end; ++plane) {
    float *yp = j->y + plane * j->plane_size;
    if (j->bias != NULL) {
      float b = j->bias[plane % j->maps];
      for (int64_t i = 0; i < j->plane_size; ++i) yp[i] += b;
    }
    etrt_cpu_conv_activate(yp, j->z != NULL ? j->z + plane * j->plane_size : NULL, j->plane_size,
                           j->p);
  }
}

void etrt_cpu_conv_epilogue(float *y, const float *bias, const float *z,
                            const etrt_fused_conv_params *p, int64_t planes, int64_t maps,
                            int64_t plane_size) {
  if (bias == NULL && z == NULL && p == NULL) return;
  etrt_conv_epilogue_job j = {
      .y = y, .bias = bias, .z = z, .p = p, .maps = maps, .plane_size = plane_size};
  etrt_parallel_for(planes, 1 + 65536 / (plane_size + 1), etrt_conv_epilogue_planes, &j);
}

static void etrt_conv_add_bias(const etrt_conv_job *c) {
  etrt_cpu_conv_epilogue(c->y, c->bias, c->z, c->fused, c->d.batch * c->d.maps, c->d.maps,
                         c->d.out_count);
}

static etrt_conv_dims etrt_conv_dims_of(const etrt_conv_geometry *g, const etrt_tensor *x,
                                        int64_t maps, int64_t group) {
  etrt_conv_dims d = {.batch = x->dims[0],
                      .channels = x->dims[1],
                      .maps = maps,
                      .group = group,
                      .channels_per_group = x->dims[1] / group,
                      .maps_per_group = maps / group,
                      .in_count = etrt_conv_geometry_in_count(g),
                      .out_count = etrt_conv_geometry_out_count(g),
                      .kernel_count = etrt_conv_geometry_kernel_count(g)};
  return d;
}

/* Tasks [begin, end): task = ((batch * group) + grp) * tiles + tile. */
static void etrt_conv_tiles(void *ctx, int64_t begin, int64_t end) {
  const etrt_conv_job *c = ctx;
  const etrt_conv_dims *d = &c->d;
  float packed[ETRT_CONV_TILE_K * ETRT_CONV_TILE_N];
  int64_t origin[ETRT_CONV_MAX_SPATIAL][ETRT_CONV_TILE_N];
  for (int64_t t = begin; t < end; ++t) {
    int64_t tile = t % c->tiles, grp = t / c->tiles % d->group, n = t / c->tiles / d->group;
    const float *xg = c->x + (n * d->channels + grp * d->channels_per_group) * d->in_count;
    const float *wg = c->w + grp * d->maps_per_group * c->k_total;
    float *yg = c->y + (n * d->maps + grp * d->maps_per_group) * d->out_count;
    int64_t p0 = tile * ETRT_CONV_TILE_N;
    int64_t nt = d->out_count - p0 < ETRT_CONV_TILE_N ? d->out_count - p0 : ETRT_CONV_TILE_N;
    etrt_conv_tile_origins(c->g, c->g->out, p0, nt, origin);
    for (int64_t k0 = 0; k0 < c->k_total; k0 += ETRT_CONV_TILE_K) {
      int64_t kt = c->k_total - k0 < ETRT_CONV_TILE_K ? c->k_total - k0 : ETRT_CONV_TILE_K;
      if (c->g->spatial == 2)
        etrt_conv_pack_2d(c->g, xg, d->kernel_count, k0, kt, p0, nt, packed);
      else
        etrt_conv_pack(c->g, xg, d->kernel_count, k0, kt, nt, origin, packed);
      etrt_cpu_gemm_f32(d->maps_per_group, nt, kt, 1.0f, wg + k0, c->k_total, 1, packed, nt,
                        yg + p0, d->out_count, k0 > 0);
    }
  }
}

/* Depthwise 2-D planes [begin, end) (plane: batch * maps + map), bias included: a
 * direct sum over the window in order of kernel row, then column, each kernel tap
 * applied to a run of outputs whose window lies inside the input. */
static void etrt_conv_depthwise_planes(void *ctx, int64_t begin, int64_t end) {
  const etrt_conv_job *c = ctx;
  const etrt_conv_geometry *g = c->g;
  const int64_t ih_count = g->in[0], iw_count = g->in[1], oh_count = g->out[0],
                ow_count = g->out[1], kh_count = g->kernel[0], kw_count = g->kernel[1];
  const int64_t sh = g->stride[0], sw = g->stride[1];
  for (int64_t plane = begin; plane < end; ++plane) {
    int64_t n = plane / c->d.maps, map = plane % c->d.maps;
    const float *xc = c->x + (n * c->d.channels + map / c->d.maps_per_group) * c->d.in_count;
    const float *wm = c->w + map * c->d.kernel_count;
    float *ym = c->y + plane * c->d.out_count;
    for (int64_t oh = 0; oh < oh_count; ++oh) {
      float *restrict yr = ym + oh * ow_count;
      for (int64_t ow = 0; ow < ow_count; ++ow) yr[ow] = 0.0f;
      for (int64_t kh = 0; kh < kh_count; ++kh) {
        int64_t ih = oh * sh - g->pad_begin[0] + kh * g->dilation[0];
        if (ih < 0 || ih >= ih_count) continue;
        const float *restrict xr = xc + ih * iw_count;
        for (int64_t kw = 0; kw < kw_count; ++kw) {
          float wv = wm[kh * kw_count + kw];
          int64_t offset = kw * g->dilation[1] - g->pad_begin[1]; /* iw = ow * sw + offset */
          int64_t lo = offset >= 0 ? 0 : (-offset + sw - 1) / sw;
          int64_t hi = iw_count - offset <= 0 ? 0 : (iw_count - offset + sw - 1) / sw;
          if (hi > ow_count) hi = ow_count;
          if (sw == 1) {
            for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xr[ow + offset];
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += wv * xr[ow * sw + offset];
          }
        }
      }
      if (c->bias != NULL) {
        float b = c->bias[map];
        for (int64_t ow = 0; ow < ow_count; ++ow) yr[ow] += b;
      }
    }
  }
}

/* Depthwise 2-D with unit strides, planes [begin, end): bands of output rows are
 * computed in a row pitch that has room for every tap (Wp = out width + the kernel's
 * reach), from a zero-padded copy of the band's input rows, so each tap is one pass
 * over the whole band at a constant offset instead of one short pass per row. The
 * sum runs in order of kernel row, then column, padding included as zeros. */
#define ETRT_DW_BAND_FLOATS 8192 /* both band buffers together: 32 KiB on the stack */

static int etrt_conv_depthwise_s1_fits(const etrt_conv_geometry *g) {
  int64_t pitch = g->out[1] + (g->kernel[1] - 1) * g->dilation[1];
  int64_t reach = (g->kernel[0] - 1) * g->dilation[0];
  return g->stride[0] == 1 && g->stride[1] == 1 && pitch * (reach + 2) <= ETRT_DW_BAND_FLOATS;
}

static void etrt_conv_depthwise_s1_planes(void *ctx, int64_t begin, int64_t end) {
  const etrt_conv_job *c = ctx;
  const etrt_conv_geometry *g = c->g;
  const int64_t ih_count = g->in[0], iw_count = g->in[1], oh_count = g->out[0],
                ow_count = g->out[1], kh_count = g->kernel[0], kw_count = g->kernel[1];
  const int64_t dh = g->dilation[0], dw = g->dilation[1], pt = g->pad_begin[0],
                pl = g->pad_begin[1];
  const int64_t pitch = ow_count + (kw_count - 1) * dw, reach = (kh_count - 1) * dh;
  int64_t band = ETRT_DW_BAND_FLOATS / pitch - reach; /* rows in + rows out fit */
  band = band / 2 > 0 ? band / 2 : 1;
  float xp[ETRT_DW_BAND_FLOATS], yp[ETRT_DW_BAND_FLOATS];
  for (int64_t plane = begin; plane < end; ++plane) {
    int64_t n = plane / c->d.maps, map = plane % c->d.maps;
    const float *xc = c->x + (n * c->d.channels + map / c->d.maps_per_group) * c->d.in_count;
    const float *wm = c->w + map * c->d.kernel_count;
    float *ym = c->y + plane * c->d.out_count;
    for (int64_t oh0 = 0; oh0 < oh_count; oh0 += band) {
      int64_t rows = oh_count - oh0 < band ? oh_count - oh0 : band;
      for (int64_t r = 0; r < rows + reach; ++r) { /* padded input rows of the band */
        float *dst = xp + r * pitch;
        int64_t ih = oh0 + r - pt;
        if (ih < 0 || ih >= ih_count) {
          memset(dst, 0, (size_t)pitch * sizeof(float));
          continue;
        }
        const float *src = xc + ih * iw_count;
        if (pl >= 0 && pl + iw_count <= pitch) { /* padding, the row, padding */
          memset(dst, 0, (size_t)pl * sizeof(float));
          memcpy(dst + pl, src, (size_t)iw_count * sizeof(float));
          memset(dst + pl + iw_count, 0, (size_t)(pitch - pl - iw_count) * sizeof(float));
          continue;
        }
        for (int64_t col = 0; col < pitch; ++col) {
          int64_t iw = col - pl;
          dst[col] = iw >= 0 && iw < iw_count ? src[iw] : 0.0f;
        }
      }
      /* The last (kw_count - 1) * dw columns of the last row would read past the
       * band; they are outside the output. */
      int64_t span = rows * pitch - (kw_count - 1) * dw;
      memset(yp, 0, (size_t)(rows * pitch) * sizeof(float));
      for (int64_t kh = 0; kh < kh_count; ++kh)
        for (int64_t kw = 0; kw < kw_count; ++kw) {
          etrt_cpu_axpy_f32(yp, xp + kh * dh * pitch + kw * dw, wm[kh * kw_count + kw], span);
        }
      float b = c->bias != NULL ? c->bias[map] : 0.0f;
      for (int64_t r = 0; r < rows; ++r) {
        float *yr = ym + (oh0 + r) * ow_count;
        const float *src = yp + r * pitch;
        if (c->bias != NULL) {
          for (int64_t ow = 0; ow < ow_count; ++ow) yr[ow] = src[ow] + b;
        } else {
          memcpy(yr, src, (size_t)ow_count * sizeof(float));
        }
      }
    }
  }
}

/* ---- channels_last ------------------------------------------------------------------
 * A direct loop over NHWC X and [M, kernel..., C/group] W, reading and writing each element
 * in its own type and accumulating in float32. It serves the simulated GPUs' runs of the
 * builder's channels-last GPU plans (the CPU builder never makes such nodes), so it is
 * written to be plainly right, not fast; it allocates nothing, half types included. */

typedef struct etrt_conv_nhwc_job {
  const etrt_conv_geometry *g;
  const etrt_fused_conv_params *fused; /* NULL: a Conv */
  const etrt_tensor *x, *w, *bias, *z; /* bias, z: NULL when absent */
  etrt_tensor *y;
  int64_t channels, maps, group, in_count, out_count, kernel_count;
} etrt_conv_nhwc_job;

/* The input position (flat over the spatial axes) that output position `p` reads through
 * kernel position `k`, or -1 in the padding. */
static int64_t etrt_conv_nhwc_at(const etrt_conv_geometry *g, int64_t p, int64_t k) {
  int64_t at = 0, scale = 1;
  for (int32_t s = g->spatial - 1; s >= 0; --s) {
    int64_t o = p % g->out[s], kk = k % g->kernel[s];
    p /= g->out[s];
    k /= g->kernel[s];
    int64_t i = o * g->stride[s] - g->pad_begin[s] + kk * g->dilation[s];
    if (i < 0 || i >= g->in[s]) return -1;
    at += i * scale;
    scale *= g->in[s];
  }
  return at;
}

/* Output rows [begin, end) (row: image * positions + position; a row holds every map). */
static void etrt_conv_nhwc_rows(void *ctx, int64_t begin, int64_t end) {
  const etrt_conv_nhwc_job *j = ctx;
  int64_t cg = j->channels / j->group, mg = j->maps / j->group;
  etrt_dtype xt = j->x->dtype, wt = j->w->dtype, yt = j->y->dtype;
  for (int64_t r = begin; r < end; ++r) {
    int64_t n = r / j->out_count, p = r % j->out_count;
    for (int64_t m = 0; m < j->maps; ++m) {
      int64_t first = (m / mg) * cg;
      float acc = 0.0f;
      for (int64_t k = 0; k < j->kernel_count; ++k) {
        int64_t at = etrt_conv_nhwc_at(j->g, p, k);
        if (at < 0) continue;
        int64_t xs = (n * j->in_count + at) * j->channels + first,
                ws = (m * j->kernel_count + k) * cg;
        for (int64_t c = 0; c < cg; ++c)
          acc += (float)etrt_scalar_load(j->x->data, xt, xs + c) *
                 (float)etrt_scalar_load(j->w->data, wt, ws + c);
      }
      if (j->bias != NULL) acc += (float)etrt_scalar_load(j->bias->data, j->bias->dtype, m);
      int64_t at = r * j->maps + m;
      if (j->fused != NULL) {
        float z = j->z != NULL ? (float)etrt_scalar_load(j->z->data, j->z->dtype, at) : 0.0f;
        etrt_cpu_conv_activate(&acc, j->z != NULL ? &z : NULL, 1, j->fused);
      }
      etrt_scalar_store(j->y->data, yt, at, acc);
    }
  }
}

static etrt_status etrt_cpu_conv_nhwc(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  const etrt_conv_params *params = node->state;
  etrt_tensor x = etrt_conv_nchw_view(&inputs[0]), w = etrt_conv_nchw_view(&inputs[1]);
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_conv(node, params, &x, &w, &g));
  etrt_conv_nhwc_job j = {.g = &g,
                          .fused = strcmp(node->op_type, "EtrtFusedConv") == 0 ? node->state : NULL,
                          .x = &inputs[0],
                          .w = &inputs[1],
                          .bias = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL,
                          .z = node->num_inputs > 3 && inputs[3].rank >= 0 ? &inputs[3] : NULL,
                          .y = &outputs[0],
                          .channels = x.dims[1],
                          .maps = w.dims[0],
                          .group = params->group,
                          .in_count = etrt_conv_geometry_in_count(&g),
                          .out_count = etrt_conv_geometry_out_count(&g),
                          .kernel_count = etrt_conv_geometry_kernel_count(&g)};
  int64_t rows = x.dims[0] * j.out_count;
  if (rows == 0 || j.maps == 0) return ETRT_OK;
  int64_t work = j.maps * j.kernel_count * (j.channels / j.group) + 1;
  etrt_parallel_for(rows, 1 + 65536 / work, etrt_conv_nhwc_rows, &j);
  return ETRT_OK;
}

etrt_status etrt_cpu_conv(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  if (((const etrt_conv_params *)node->state)->channels_last)
    return etrt_cpu_conv_nhwc(node, inputs, outputs);
  if (etrt_cpu_widen_needed(node, inputs, outputs))
    return etrt_cpu_widen_run(node, inputs, outputs, etrt_cpu_conv);
  const etrt_conv_params *params = node->state;
  /* Only a EtrtFusedConv's state is an etrt_fused_conv_params. */
  const etrt_fused_conv_params *fused = strcmp(node->op_type, "EtrtFusedConv") == 0
                                            ? (const etrt_fused_conv_params *)node->state
                                            : NULL;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_conv(node, params, &inputs[0], &inputs[1], &g));
  etrt_conv_job c = {.g = &g,
                     .d = etrt_conv_dims_of(&g, &inputs[0], inputs[1].dims[0], params->group),
                     .x = inputs[0].data,
                     .w = inputs[1].data,
                     .bias = node->num_inputs > 2 && inputs[2].rank >= 0 ? inputs[2].data : NULL,
                     .y = outputs[0].data};
  if (fused != NULL) {
    c.z = node->num_inputs > 3 && inputs[3].rank >= 0 ? inputs[3].data : NULL;
    c.fused = fused;
  }
  const etrt_conv_dims *d = &c.d;
  c.k_total = d->channels_per_group * d->kernel_count;
  int64_t planes = d->batch * d->maps;
  if (c.k_total == 0 && planes * d->out_count > 0) /* no input channels: bias only */
    memset(c.y, 0, (size_t)(planes * d->out_count) * sizeof(float));
  if (c.k_total > 0 && d->channels_per_group == 1 && g.spatial == 2) {
    etrt_parallel_for(planes, 1 + 4096 / (d->out_count * d->kernel_count + 1),
                      etrt_conv_depthwise_s1_fits(&g) ? etrt_conv_depthwise_s1_planes
                                                      : etrt_conv_depthwise_planes,
                      &c);
    c.bias = NULL; /* added by the planes */
    etrt_conv_add_bias(&c);
    return ETRT_OK;
  }
  if (c.k_total > 0 && etrt_conv_is_pointwise(&g)) {
    for (int64_t n = 0; n < d->batch; ++n) {
      for (int64_t grp = 0; grp < d->group; ++grp) {
        etrt_cpu_gemm_f32(d->maps_per_group, d->out_count, c.k_total, 1.0f,
                          c.w + grp * d->maps_per_group * c.k_total, c.k_total, 1,
                          c.x + (n * d->channels + grp * d->channels_per_group) * d->in_count,
                          d->in_count, c.y + (n * d->maps + grp * d->maps_per_group) * d->out_count,
                          d->out_count, 0);
      }
    }
  } else if (c.k_total > 0) {
    c.tiles = (d->out_count + ETRT_CONV_TILE_N - 1) / ETRT_CONV_TILE_N;
    int64_t tasks = d->batch * d->group * c.tiles;
    /* Too few tiles to keep every thread busy: let the GEMM split each one instead. */
    if (tasks >= 2 * (int64_t)etrt_thread_pool_width())
      etrt_parallel_for(tasks, 1, etrt_conv_tiles, &c);
    else
      etrt_conv_tiles(&c, 0, tasks);
  }
  etrt_conv_add_bias(&c);
  return ETRT_OK;
}

/* Adds a tile of columns (rows m0.., for input positions of the tile) into the
 * output: column row m is (output map, kernel offset). */
static void etrt_conv_scatter(const etrt_conv_geometry *g, const float *cols, int64_t m0,
                              int64_t mt, int64_t nt, int64_t kernel_count, int64_t out_count,
                              int64_t origin[][ETRT_CONV_TILE_N], float *y) {
  for (int64_t m = 0; m < mt; ++m) {
    int64_t map = (m0 + m) / kernel_count;
    int64_t offset[ETRT_CONV_MAX_SPATIAL];
    etrt_conv_kernel_offset(g, (m0 + m) % kernel_count, offset);
    float *ym = y + map * out_count;
    const float *row = cols + m * nt;
    for (int64_t j = 0; j < nt; ++j) {
      int64_t index = etrt_conv_window_index(g, g->out, origin, j, offset);
      if (index >= 0) ym[index] += row[j];
    }
  }
}

/* ConvTranspose's tasks: per (image, group), a block of output maps (rows of W^T of
 * whole maps, so no two blocks add into the same output), and where no two input
 * positions reach the same output (strides at least the dilated kernel, as in 2x2
 * stride-2 upsampling) a tile of input positions too. Blocks and tiles follow the shapes
 * alone, so every output sums its terms in one order whatever the thread count. */
typedef struct etrt_conv_transpose_job {
  const etrt_conv_geometry *g;
  etrt_conv_dims d;
  const float *x, *w;
  float *y;
  int64_t maps_per_block, map_blocks, position_tasks;
} etrt_conv_transpose_job;

static void etrt_conv_transpose_tasks(void *ctx, int64_t begin, int64_t end) {
  const etrt_conv_transpose_job *t = ctx;
  const etrt_conv_dims *d = &t->d;
  int64_t rows = d->maps_per_group * d->kernel_count; /* columns of W per input channel */
  int64_t tiles = (d->in_count + ETRT_CONV_TILE_N - 1) / ETRT_CONV_TILE_N;
  int64_t tiles_per_task = (tiles + t->position_tasks - 1) / t->position_tasks;
  float cols[ETRT_CONV_TILE_K * ETRT_CONV_TILE_N];
  int64_t origin[ETRT_CONV_MAX_SPATIAL][ETRT_CONV_TILE_N];
  for (int64_t task = begin; task < end; ++task) {
    int64_t position = task % t->position_tasks, rest = task / t->position_tasks;
    int64_t block = rest % t->map_blocks, image_group = rest / t->map_blocks;
    int64_t n = image_group / d->group, grp = image_group % d->group;
    const float *xg = t->x + (n * d->channels + grp * d->channels_per_group) * d->in_count;
    const float *wg = t->w + grp * d->channels_per_group * rows;
    float *yg = t->y + (n * d->maps + grp * d->maps_per_group) * d->out_count;
    int64_t r0 = block * t->maps_per_block * d->kernel_count;
    int64_t r1 = r0 + t->maps_per_block * d->kernel_count < rows
                     ? r0 + t->maps_per_block * d->kernel_count
                     : rows;
    int64_t tile_end =
        (position + 1) * tiles_per_task < tiles ? (position + 1) * tiles_per_task : tiles;
    for (int64_t tile = position * tiles_per_task; tile < tile_end; ++tile) {
      int64_t p0 = tile * ETRT_CONV_TILE_N;
      int64_t nt = d->in_count - p0 < ETRT_CONV_TILE_N ? d->in_count - p0 : ETRT_CONV_TILE_N;
      etrt_conv_tile_origins(t->g, t->g->in, p0, nt, origin);
      for (int64_t m0 = r0; m0 < r1; m0 += ETRT_CONV_TILE_K) {
        int64_t mt = r1 - m0 < ETRT_CONV_TILE_K ? r1 - m0 : ETRT_CONV_TILE_K;
        etrt_cpu_gemm_f32(mt, nt, d->channels_per_group, 1.0f, wg + m0, 1, rows, xg + p0,
                          d->in_count, cols, nt, 0);
        etrt_conv_scatter(t->g, cols, m0, mt, nt, d->kernel_count, d->out_count, origin, yg);
      }
    }
  }
}

etrt_status etrt_cpu_conv_transpose(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  if (etrt_cpu_widen_needed(node, inputs, outputs))
    return etrt_cpu_widen_run(node, inputs, outputs, etrt_cpu_conv_transpose);
  const etrt_conv_params *params = node->state;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_transpose(node, params, &inputs[0], &inputs[1], &g));
  etrt_conv_transpose_job t = {
      .g = &g,
      .d = etrt_conv_dims_of(&g, &inputs[0], inputs[1].dims[1] * params->group, params->group),
      .x = inputs[0].data,
      .w = inputs[1].data,
      .y = outputs[0].data};
  const etrt_conv_dims *d = &t.d;
  if (d->batch * d->maps * d->out_count > 0)
    memset(t.y, 0, (size_t)(d->batch * d->maps * d->out_count) * sizeof(float));
  /* About 32 blocks of maps, each at most a tile of W's columns. */
  t.maps_per_block = ETRT_CONV_TILE_K / (d->kernel_count > 0 ? d->kernel_count : 1);
  if (t.maps_per_block > d->maps_per_group / 32) t.maps_per_block = d->maps_per_group / 32;
  if (t.maps_per_block < 1) t.maps_per_block = 1;
  t.map_blocks = (d->maps_per_group + t.maps_per_block - 1) / t.maps_per_block;
  int disjoint = 1;
  for (int32_t i = 0; i < g.spatial; ++i)
    disjoint = disjoint && g.stride[i] >= (g.kernel[i] - 1) * g.dilation[i] + 1;
  int64_t tiles = (d->in_count + ETRT_CONV_TILE_N - 1) / ETRT_CONV_TILE_N;
  t.position_tasks = disjoint && tiles > 1 ? (tiles < 64 ? tiles : 64) : 1;
  int64_t tasks = d->batch * d->group * t.map_blocks * t.position_tasks;
  if (tasks > 0 && d->channels_per_group > 0 && d->kernel_count > 0)
    etrt_parallel_for(tasks, 1, etrt_conv_transpose_tasks, &t);
  etrt_cpu_conv_epilogue(t.y, node->num_inputs > 2 && inputs[2].rank >= 0 ? inputs[2].data : NULL,
                         NULL, NULL, d->batch * d->maps, d->maps, d->out_count);
  return ETRT_OK;
}

/* EtrtFusedConv runs the unfused math: the convolution, then the residual and the
 * activation in one pass over Y. */
/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_conv[] = {
    {"Conv", etrt_cpu_conv},
    {"ConvTranspose", etrt_cpu_conv_transpose},
    {"EtrtFusedConv", etrt_cpu_conv},
    {NULL, NULL},
};
