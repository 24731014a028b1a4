/* CPU kernels of Conv and ConvTranspose (float32). Conv packs tiles of the im2col
 * matrix on the stack and multiplies them with the blocked GEMM; ConvTranspose
 * multiplies tiles of W^T * X and scatters them into the output (col2im). Neither
 * allocates. */
#include "engine/ops/conv.h"

#include <string.h>

#include "engine/ops/cpu/gemm_util.h"

/* Tile sizes: the packed tile is TILE_K x TILE_N floats (32 KiB). */
#define ETRT_CONV_TILE_N 64
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

static int etrt_conv_is_pointwise(const etrt_conv_geometry *g) {
  for (int32_t s = 0; s < g->spatial; ++s) {
    if (g->kernel[s] != 1 || g->stride[s] != 1 || g->pad_begin[s] != 0 || g->pad_end[s] != 0)
      return 0;
  }
  return 1;
}

static void etrt_conv_add_bias(const etrt_tensor *bias, const etrt_conv_dims *d, float *y) {
  if (bias == NULL) return;
  const float *b = bias->data;
  for (int64_t n = 0; n < d->batch; ++n) {
    for (int64_t m = 0; m < d->maps; ++m) {
      float *ym = y + (n * d->maps + m) * d->out_count;
      for (int64_t p = 0; p < d->out_count; ++p) ym[p] += b[m];
    }
  }
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

etrt_status etrt_cpu_conv(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_conv_params *params = node->state;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_conv(node, params, &inputs[0], &inputs[1], &g));
  etrt_conv_dims d = etrt_conv_dims_of(&g, &inputs[0], inputs[1].dims[0], params->group);
  const float *x = inputs[0].data, *w = inputs[1].data;
  float *y = outputs[0].data;
  int64_t k_total = d.channels_per_group * d.kernel_count;
  int pointwise = etrt_conv_is_pointwise(&g);
  if (k_total == 0 && d.batch * d.maps * d.out_count > 0) /* no input channels: bias only */
    memset(y, 0, (size_t)(d.batch * d.maps * d.out_count) * sizeof(float));
  float packed[ETRT_CONV_TILE_K * ETRT_CONV_TILE_N];
  int64_t origin[ETRT_CONV_MAX_SPATIAL][ETRT_CONV_TILE_N];
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t grp = 0; grp < d.group; ++grp) {
      const float *xg = x + (n * d.channels + grp * d.channels_per_group) * d.in_count;
      const float *wg = w + grp * d.maps_per_group * k_total;
      float *yg = y + (n * d.maps + grp * d.maps_per_group) * d.out_count;
      if (pointwise) {
        etrt_cpu_gemm_f32(d.maps_per_group, d.out_count, k_total, 1.0f, wg, k_total, 1, xg,
                          d.in_count, yg, d.out_count, 0);
        continue;
      }
      for (int64_t p0 = 0; p0 < d.out_count; p0 += ETRT_CONV_TILE_N) {
        int64_t nt = d.out_count - p0 < ETRT_CONV_TILE_N ? d.out_count - p0 : ETRT_CONV_TILE_N;
        etrt_conv_tile_origins(&g, g.out, p0, nt, origin);
        for (int64_t k0 = 0; k0 < k_total; k0 += ETRT_CONV_TILE_K) {
          int64_t kt = k_total - k0 < ETRT_CONV_TILE_K ? k_total - k0 : ETRT_CONV_TILE_K;
          etrt_conv_pack(&g, xg, d.kernel_count, k0, kt, nt, origin, packed);
          etrt_cpu_gemm_f32(d.maps_per_group, nt, kt, 1.0f, wg + k0, k_total, 1, packed, nt,
                            yg + p0, d.out_count, k0 > 0);
        }
      }
    }
  }
  etrt_conv_add_bias(node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL, &d, y);
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

etrt_status etrt_cpu_conv_transpose(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  const etrt_conv_params *params = node->state;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_transpose(node, params, &inputs[0], &inputs[1], &g));
  etrt_conv_dims d =
      etrt_conv_dims_of(&g, &inputs[0], inputs[1].dims[1] * params->group, params->group);
  const float *x = inputs[0].data, *w = inputs[1].data;
  float *y = outputs[0].data;
  int64_t rows = d.maps_per_group * d.kernel_count; /* columns of W per input channel */
  if (d.batch * d.maps * d.out_count > 0)
    memset(y, 0, (size_t)(d.batch * d.maps * d.out_count) * sizeof(float));
  float cols[ETRT_CONV_TILE_K * ETRT_CONV_TILE_N];
  int64_t origin[ETRT_CONV_MAX_SPATIAL][ETRT_CONV_TILE_N];
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t grp = 0; grp < d.group; ++grp) {
      const float *xg = x + (n * d.channels + grp * d.channels_per_group) * d.in_count;
      const float *wg = w + grp * d.channels_per_group * rows;
      float *yg = y + (n * d.maps + grp * d.maps_per_group) * d.out_count;
      for (int64_t p0 = 0; p0 < d.in_count; p0 += ETRT_CONV_TILE_N) {
        int64_t nt = d.in_count - p0 < ETRT_CONV_TILE_N ? d.in_count - p0 : ETRT_CONV_TILE_N;
        etrt_conv_tile_origins(&g, g.in, p0, nt, origin);
        for (int64_t m0 = 0; m0 < rows; m0 += ETRT_CONV_TILE_K) {
          int64_t mt = rows - m0 < ETRT_CONV_TILE_K ? rows - m0 : ETRT_CONV_TILE_K;
          etrt_cpu_gemm_f32(mt, nt, d.channels_per_group, 1.0f, wg + m0, 1, rows, xg + p0,
                            d.in_count, cols, nt, 0);
          etrt_conv_scatter(&g, cols, m0, mt, nt, d.kernel_count, d.out_count, origin, yg);
        }
      }
    }
  }
  etrt_conv_add_bias(node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL, &d, y);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_conv[] = {
    {"Conv", etrt_cpu_conv},
    {"ConvTranspose", etrt_cpu_conv_transpose},
    {NULL, NULL},
};
