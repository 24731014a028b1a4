/* CPU kernels of the pools. Windows are walked with coordinate odometers over any
 * number of spatial axes; accumulation is in double for the averaging pools. */
#include "engine/ops/pool.h"

#include <math.h>
#include <string.h>

#include "base/thread_pool.h"
#include "engine/ops/cpu/scalar.h"
#include "engine/ops/cpu/vector_math.h"
#include "engine/ops/cpu/widen.h"

static int etrt_pool_advance(int64_t *coords, const int64_t *sizes, int32_t n) {
  for (int32_t s = n - 1; s >= 0; --s) {
    if (++coords[s] < sizes[s]) return 1;
    coords[s] = 0;
  }
  return 0;
}

/* The input element under kernel position `k` of the window at `origin`: its
 * row-major index (and column-major index for MaxPool's storage_order 1). 0 when
 * the position falls in the padding. */
static int etrt_pool_window_index(const etrt_conv_geometry *g, const int64_t *origin,
                                  const int64_t *k, int64_t *index, int64_t *column_index) {
  int64_t row = 0, column = 0, scale = 1;
  for (int32_t s = 0; s < g->spatial; ++s) {
    int64_t c = origin[s] + k[s] * g->dilation[s];
    if (c < 0 || c >= g->in[s]) return 0;
    row = row * g->in[s] + c;
    column += c * scale;
    scale *= g->in[s];
  }
  *index = row;
  *column_index = column;
  return 1;
}

/* Window positions that lie inside the explicitly padded input (ceil_mode's
 * overhang excluded): AveragePool's divisor under count_include_pad. */
static int64_t etrt_pool_padded_count(const etrt_conv_geometry *g, const int64_t *origin) {
  int64_t count = 1;
  for (int32_t s = 0; s < g->spatial; ++s) {
    int64_t inside = 0;
    for (int64_t k = 0; k < g->kernel[s]; ++k) {
      int64_t c = origin[s] + k * g->dilation[s];
      if (c >= -g->pad_begin[s] && c < g->in[s] + g->pad_end[s]) ++inside;
    }
    count *= inside;
  }
  return count;
}

static void etrt_pool_origin(const etrt_conv_geometry *g, const int64_t *out, int64_t *origin) {
  for (int32_t s = 0; s < g->spatial; ++s) origin[s] = out[s] * g->stride[s] - g->pad_begin[s];
}

#define ETRT_POOL_MAX_KERNEL(T, name)                                                              \
  static void name(const etrt_conv_geometry *g, int64_t first, int64_t planes, int column_major,   \
                   const T *x, T *y, int64_t *indices) {                                           \
    int64_t in_count = etrt_conv_geometry_in_count(g);                                             \
    int64_t out_count = etrt_conv_geometry_out_count(g);                                           \
    for (int64_t plane = first; plane < planes; ++plane) {                                         \
      const T *xp = x + plane * in_count;                                                          \
      int64_t out[ETRT_CONV_MAX_SPATIAL] = {0}, origin[ETRT_CONV_MAX_SPATIAL];                     \
      for (int64_t o = 0; o < out_count; ++o) {                                                    \
        etrt_pool_origin(g, out, origin);                                                          \
        int64_t k[ETRT_CONV_MAX_SPATIAL] = {0}, best_index = -1, best_column = 0;                  \
        T best = 0;                                                                                \
        do {                                                                                       \
          int64_t index, column;                                                                   \
          if (etrt_pool_window_index(g, origin, k, &index, &column) &&                             \
              (best_index < 0 || xp[index] > best)) {                                              \
            best = xp[index];                                                                      \
            best_index = index;                                                                    \
            best_column = column;                                                                  \
          }                                                                                        \
        } while (etrt_pool_advance(k, g->kernel, g->spatial));                                     \
        y[plane * out_count + o] = best;                                                           \
        if (indices != NULL)                                                                       \
          indices[plane * out_count + o] =                                                         \
              plane * in_count + (column_major ? best_column : (best_index < 0 ? 0 : best_index)); \
        etrt_pool_advance(out, g->out, g->spatial);                                                \
      }                                                                                            \
    }                                                                                              \
  }

ETRT_POOL_MAX_KERNEL(float, etrt_pool_max_f32)
ETRT_POOL_MAX_KERNEL(double, etrt_pool_max_f64)
ETRT_POOL_MAX_KERNEL(int8_t, etrt_pool_max_i8)
ETRT_POOL_MAX_KERNEL(uint8_t, etrt_pool_max_u8)

/* AveragePool and LpPool, reading and writing through double. */
#define ETRT_POOL_SUM_KERNEL(T, name)                                                        \
  static void name(const etrt_conv_geometry *g, const etrt_pool_state *state, int64_t first, \
                   int64_t planes, const T *x, T *y) {                                       \
    int64_t in_count = etrt_conv_geometry_in_count(g);                                       \
    int64_t out_count = etrt_conv_geometry_out_count(g);                                     \
    double p = (double)state->params.lp_p;                                                   \
    for (int64_t plane = first; plane < planes; ++plane) {                                   \
      const T *xp = x + plane * in_count;                                                    \
      int64_t out[ETRT_CONV_MAX_SPATIAL] = {0}, origin[ETRT_CONV_MAX_SPATIAL];               \
      for (int64_t o = 0; o < out_count; ++o) {                                              \
        etrt_pool_origin(g, out, origin);                                                    \
        int64_t k[ETRT_CONV_MAX_SPATIAL] = {0}, count = 0;                                   \
        double sum = 0.0;                                                                    \
        do {                                                                                 \
          int64_t index, column;                                                             \
          if (etrt_pool_window_index(g, origin, k, &index, &column)) {                       \
            double v = (double)xp[index];                                                    \
            sum += state->kind == ETRT_POOL_LP ? pow(fabs(v), p) : v;                        \
            ++count;                                                                         \
          }                                                                                  \
        } while (etrt_pool_advance(k, g->kernel, g->spatial));                               \
        double result;                                                                       \
        if (state->kind == ETRT_POOL_LP) {                                                   \
          result = pow(sum, 1.0 / p);                                                        \
        } else {                                                                             \
          if (state->params.count_include_pad) count = etrt_pool_padded_count(g, origin);    \
          result = count > 0 ? sum / (double)count : 0.0;                                    \
        }                                                                                    \
        y[plane * out_count + o] = (T)result;                                                \
        etrt_pool_advance(out, g->out, g->spatial);                                          \
      }                                                                                      \
    }                                                                                        \
  }

ETRT_POOL_SUM_KERNEL(float, etrt_pool_sum_f32)
ETRT_POOL_SUM_KERNEL(double, etrt_pool_sum_f64)

/* The planes (batch * channels) of a pooling, split over the thread pool: each plane
 * is computed alone, so the split does not change the result. */
typedef struct etrt_pool_job {
  const etrt_pool_state *state;
  const etrt_conv_geometry *g;
  etrt_dtype dtype;
  const void *x;
  void *y;
  int64_t *indices;
  int64_t size; /* global pooling: elements per plane */
} etrt_pool_job;

/* MaxPool of float32 planes with two spatial axes, no dilation and no indices: the
 * general loop's comparisons in its order (the first position inside the input starts
 * the maximum, a later one replaces it only when greater; a window wholly in the padding
 * gives 0), with each window's rows and columns clipped to the input once instead of an
 * odometer and a bounds test per position: ResNet-50's MaxPool took a tenth of its run. */
static void etrt_pool_max_2d_f32(const etrt_conv_geometry *g, int64_t first, int64_t planes,
                                 const float *x, float *y) {
  const int64_t h = g->in[0], w = g->in[1], oh_count = g->out[0], ow_count = g->out[1];
  for (int64_t plane = first; plane < planes; ++plane) {
    const float *xp = x + plane * h * w;
    float *yp = y + plane * oh_count * ow_count;
    for (int64_t oh = 0; oh < oh_count; ++oh) {
      int64_t r0 = oh * g->stride[0] - g->pad_begin[0], r1 = r0 + g->kernel[0];
      if (r0 < 0) r0 = 0;
      if (r1 > h) r1 = h;
      for (int64_t ow = 0; ow < ow_count; ++ow) {
        int64_t c0 = ow * g->stride[1] - g->pad_begin[1], c1 = c0 + g->kernel[1];
        if (c0 < 0) c0 = 0;
        if (c1 > w) c1 = w;
        float best = 0.0f;
        if (r0 < r1 && c0 < c1) {
          best = xp[r0 * w + c0];
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t c = (r == r0 ? c0 + 1 : c0); c < c1; ++c)
              if (xp[r * w + c] > best) best = xp[r * w + c];
        }
        yp[oh * ow_count + ow] = best;
      }
    }
  }
}

static void etrt_pool_planes(void *ctx, int64_t first, int64_t end) {
  const etrt_pool_job *j = ctx;
  if (j->state->kind == ETRT_POOL_MAX && j->dtype == ETRT_DTYPE_FLOAT32 && j->indices == NULL &&
      j->g->spatial == 2 && j->g->dilation[0] == 1 && j->g->dilation[1] == 1) {
    etrt_pool_max_2d_f32(j->g, first, end, j->x, j->y);
    return;
  }
  if (j->state->kind == ETRT_POOL_MAX) {
    int column_major = j->state->params.storage_order == 1;
    switch (j->dtype) {
      case ETRT_DTYPE_FLOAT32:
        etrt_pool_max_f32(j->g, first, end, column_major, j->x, j->y, j->indices);
        break;
      case ETRT_DTYPE_FLOAT64:
        etrt_pool_max_f64(j->g, first, end, column_major, j->x, j->y, j->indices);
        break;
      case ETRT_DTYPE_INT8:
        etrt_pool_max_i8(j->g, first, end, column_major, j->x, j->y, j->indices);
        break;
      default:
        etrt_pool_max_u8(j->g, first, end, column_major, j->x, j->y, j->indices);
        break;
    }
  } else if (j->dtype == ETRT_DTYPE_FLOAT64) {
    etrt_pool_sum_f64(j->g, j->state, first, end, j->x, j->y);
  } else {
    etrt_pool_sum_f32(j->g, j->state, first, end, j->x, j->y);
  }
}

/* ---- channels_last ------------------------------------------------------------------
 * X [N, spatial..., C] -> Y [N, out..., C], element by element in the tensors' own types
 * (double sums), with the same window rules as the loops above. They serve the simulated
 * GPUs' runs of channels-last GPU plans: plain, and allocation-free for half types too. */

typedef struct etrt_pool_nhwc_job {
  const etrt_pool_state *state;
  const etrt_conv_geometry *g;
  const etrt_tensor *x;
  etrt_tensor *y;
  int64_t channels, in_count, out_count;
} etrt_pool_nhwc_job;

/* Rows [begin, end) of Y (row: image * positions + position). */
static void etrt_pool_nhwc_rows(void *ctx, int64_t begin, int64_t end) {
  const etrt_pool_nhwc_job *j = ctx;
  const etrt_conv_geometry *g = j->g;
  double p = (double)j->state->params.lp_p;
  for (int64_t r = begin; r < end; ++r) {
    int64_t n = r / j->out_count, out[ETRT_CONV_MAX_SPATIAL], origin[ETRT_CONV_MAX_SPATIAL];
    int64_t rest = r % j->out_count;
    for (int32_t s = g->spatial - 1; s >= 0; --s) {
      out[s] = rest % g->out[s];
      rest /= g->out[s];
    }
    etrt_pool_origin(g, out, origin);
    for (int64_t c = 0; c < j->channels; ++c) {
      int64_t k[ETRT_CONV_MAX_SPATIAL] = {0}, count = 0;
      double best = 0.0, sum = 0.0;
      do {
        int64_t index, column;
        if (!etrt_pool_window_index(g, origin, k, &index, &column)) continue;
        double v =
            etrt_scalar_load(j->x->data, j->x->dtype, (n * j->in_count + index) * j->channels + c);
        if (j->state->kind == ETRT_POOL_MAX) {
          if (count == 0 || v > best) best = v;
        } else {
          sum += j->state->kind == ETRT_POOL_LP ? pow(fabs(v), p) : v;
        }
        ++count;
      } while (etrt_pool_advance(k, g->kernel, g->spatial));
      double result = best;
      if (j->state->kind == ETRT_POOL_LP) {
        result = pow(sum, 1.0 / p);
      } else if (j->state->kind == ETRT_POOL_AVERAGE) {
        if (j->state->params.count_include_pad) count = etrt_pool_padded_count(g, origin);
        result = count > 0 ? sum / (double)count : 0.0;
      }
      etrt_scalar_store(j->y->data, j->y->dtype, r * j->channels + c, result);
    }
  }
}

static etrt_status etrt_cpu_pool_nhwc(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  const etrt_pool_state *state = node->state;
  etrt_tensor x = etrt_conv_nchw_view(&inputs[0]);
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_pool(node, &state->params, &x, &g));
  etrt_pool_nhwc_job j = {.state = state,
                          .g = &g,
                          .x = &inputs[0],
                          .y = &outputs[0],
                          .channels = x.dims[1],
                          .in_count = etrt_conv_geometry_in_count(&g),
                          .out_count = etrt_conv_geometry_out_count(&g)};
  int64_t rows = x.dims[0] * j.out_count;
  if (rows == 0 || j.channels == 0) return ETRT_OK;
  int64_t work = j.channels * etrt_conv_geometry_kernel_count(&g) + 1;
  etrt_parallel_for(rows, 1 + 131072 / work, etrt_pool_nhwc_rows, &j);
  return ETRT_OK;
}

etrt_status etrt_cpu_pool(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  if (((const etrt_pool_state *)node->state)->params.channels_last)
    return etrt_cpu_pool_nhwc(node, inputs, outputs);
  if (etrt_cpu_widen_needed(node, inputs, outputs))
    return etrt_cpu_widen_run(node, inputs, outputs, etrt_cpu_pool);
  const etrt_pool_state *state = node->state;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_pool(node, &state->params, &inputs[0], &g));
  int64_t planes = inputs[0].dims[0] * inputs[0].dims[1];
  int64_t out_count = etrt_conv_geometry_out_count(&g);
  if (planes == 0 || out_count == 0) return ETRT_OK;
  etrt_pool_job job = {
      .state = state,
      .g = &g,
      .dtype = inputs[0].dtype,
      .x = inputs[0].data,
      .y = outputs[0].data,
      .indices = state->kind == ETRT_POOL_MAX && node->num_outputs > 1 ? outputs[1].data : NULL};
  int64_t work = out_count * etrt_conv_geometry_kernel_count(&g);
  etrt_parallel_for(planes, 1 + 131072 / (work + 1), etrt_pool_planes, &job);
  return ETRT_OK;
}

#define ETRT_POOL_GLOBAL_KERNEL(T, name)                                                      \
  static void name(const etrt_pool_state *state, int64_t first, int64_t planes, int64_t size, \
                   const T *x, T *y) {                                                        \
    double p = (double)state->params.lp_p;                                                    \
    for (int64_t plane = first; plane < planes; ++plane) {                                    \
      const T *xp = x + plane * size;                                                         \
      if (state->kind == ETRT_POOL_MAX) {                                                     \
        T best = size > 0 ? xp[0] : 0;                                                        \
        for (int64_t i = 1; i < size; ++i)                                                    \
          if (xp[i] > best) best = xp[i];                                                     \
        y[plane] = best;                                                                      \
        continue;                                                                             \
      }                                                                                       \
      double sum = 0.0;                                                                       \
      for (int64_t i = 0; i < size; ++i)                                                      \
        sum += state->kind == ETRT_POOL_LP ? pow(fabs((double)xp[i]), p) : (double)xp[i];     \
      y[plane] = (T)(state->kind == ETRT_POOL_LP ? pow(sum, 1.0 / p)                          \
                                                 : (size > 0 ? sum / (double)size : 0.0));    \
    }                                                                                         \
  }

ETRT_POOL_GLOBAL_KERNEL(float, etrt_pool_global_f32)
ETRT_POOL_GLOBAL_KERNEL(double, etrt_pool_global_f64)
ETRT_POOL_GLOBAL_KERNEL(int8_t, etrt_pool_global_i8)
ETRT_POOL_GLOBAL_KERNEL(uint8_t, etrt_pool_global_u8)

/* Global average pools of float32 planes: the vectorised sum. */
static void etrt_pool_global_average_f32(int64_t first, int64_t planes, int64_t size,
                                         const float *x, float *y) {
  for (int64_t plane = first; plane < planes; ++plane) {
    double sum = 0.0;
    etrt_cpu_sum_f32(x + plane * size, size, &sum);
    y[plane] = size > 0 ? (float)(sum / (double)size) : 0.0f;
  }
}

static void etrt_pool_global_planes(void *ctx, int64_t first, int64_t end) {
  const etrt_pool_job *j = ctx;
  switch (j->dtype) {
    case ETRT_DTYPE_FLOAT32:
      if (j->state->kind == ETRT_POOL_AVERAGE)
        etrt_pool_global_average_f32(first, end, j->size, j->x, j->y);
      else
        etrt_pool_global_f32(j->state, first, end, j->size, j->x, j->y);
      break;
    case ETRT_DTYPE_FLOAT64:
      etrt_pool_global_f64(j->state, first, end, j->size, j->x, j->y);
      break;
    case ETRT_DTYPE_INT8:
      etrt_pool_global_i8(j->state, first, end, j->size, j->x, j->y);
      break;
    default:
      etrt_pool_global_u8(j->state, first, end, j->size, j->x, j->y);
      break;
  }
}

/* Global pools of X [N, spatial..., C]: Y [N, 1..., C], each channel over its positions. */
static void etrt_cpu_global_pool_nhwc(const etrt_pool_state *state, const etrt_tensor *x,
                                      etrt_tensor *y) {
  int64_t batch = x->dims[0], channels = x->dims[x->rank - 1], size = 1;
  for (int32_t a = 1; a + 1 < x->rank; ++a) size *= x->dims[a];
  double p = (double)state->params.lp_p;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      double acc = 0.0;
      for (int64_t i = 0; i < size; ++i) {
        double v = etrt_scalar_load(x->data, x->dtype, (n * size + i) * channels + c);
        if (state->kind == ETRT_POOL_MAX)
          acc = i == 0 || v > acc ? v : acc;
        else
          acc += state->kind == ETRT_POOL_LP ? pow(fabs(v), p) : v;
      }
      if (state->kind == ETRT_POOL_LP) acc = pow(acc, 1.0 / p);
      if (state->kind == ETRT_POOL_AVERAGE) acc = size > 0 ? acc / (double)size : 0.0;
      etrt_scalar_store(y->data, y->dtype, n * channels + c, acc);
    }
  }
}

etrt_status etrt_cpu_global_pool(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  const etrt_pool_state *state = node->state;
  if (state->params.channels_last) {
    etrt_cpu_global_pool_nhwc(state, &inputs[0], &outputs[0]);
    return ETRT_OK;
  }
  if (etrt_cpu_widen_needed(node, inputs, outputs))
    return etrt_cpu_widen_run(node, inputs, outputs, etrt_cpu_global_pool);
  const etrt_tensor *x = &inputs[0];
  etrt_pool_job job = {
      .state = node->state, .dtype = x->dtype, .x = x->data, .y = outputs[0].data, .size = 1};
  int64_t planes = x->dims[0] * x->dims[1];
  for (int32_t i = 2; i < x->rank; ++i) job.size *= x->dims[i];
  /* Finer than the windowed pools' chunks: a squeeze-and-excitation block's pool reads
   * an output the convolution before it left in every core's cache (MobileNet v3 at 16
   * threads: 38 us a node on one thread). */
  etrt_parallel_for(planes, 1 + 32768 / (job.size + 1), etrt_pool_global_planes, &job);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_pool[] = {
    {"MaxPool", etrt_cpu_pool},
    {"AveragePool", etrt_cpu_pool},
    {"LpPool", etrt_cpu_pool},
    {"GlobalMaxPool", etrt_cpu_global_pool},
    {"GlobalAveragePool", etrt_cpu_global_pool},
    {"GlobalLpPool", etrt_cpu_global_pool},
    {NULL, NULL},
};
