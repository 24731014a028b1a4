/* CPU kernels of the pools. Windows are walked with coordinate odometers over any
 * number of spatial axes; accumulation is in double for the averaging pools. */
#include "engine/ops/pool.h"

#include <math.h>
#include <string.h>

#include "base/thread_pool.h"
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

static void etrt_pool_planes(void *ctx, int64_t first, int64_t end) {
  const etrt_pool_job *j = ctx;
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

etrt_status etrt_cpu_pool(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
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
  etrt_parallel_for(planes, 1 + 32768 / (work + 1), etrt_pool_planes, &job);
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

static void etrt_pool_global_planes(void *ctx, int64_t first, int64_t end) {
  const etrt_pool_job *j = ctx;
  switch (j->dtype) {
    case ETRT_DTYPE_FLOAT32:
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

etrt_status etrt_cpu_global_pool(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  if (etrt_cpu_widen_needed(node, inputs, outputs))
    return etrt_cpu_widen_run(node, inputs, outputs, etrt_cpu_global_pool);
  const etrt_tensor *x = &inputs[0];
  etrt_pool_job job = {
      .state = node->state, .dtype = x->dtype, .x = x->data, .y = outputs[0].data, .size = 1};
  int64_t planes = x->dims[0] * x->dims[1];
  for (int32_t i = 2; i < x->rank; ++i) job.size *= x->dims[i];
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
