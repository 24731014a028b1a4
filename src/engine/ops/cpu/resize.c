/* CPU kernel of Resize/Upsample: each output element is the weighted sum over the
 * product of its per-axis neighbours (zero weights dropped, so axes that keep
 * their size cost nothing). The output is walked row by row (every axis but the
 * last), rows split over the thread pool. The neighbours of the last axis are found
 * once per chunk of columns, those of the axis before it once per call where it has
 * at most ETRT_RESIZE_CHUNK positions, and outer axes that map every position to
 * itself (batch and channels, usually) are found to do so once per call: the per-row
 * work is then a table lookup, and the per-element work a gather and a few
 * multiply-adds. The sums run in the same order for every split, so the result does
 * not depend on the thread count. */
#include "engine/ops/resize.h"

#include <string.h>

#include "base/thread_pool.h"
#include "engine/ops/cpu/copy_util.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

/* Columns whose last-axis neighbours are found together (a table on the stack). */
#define ETRT_RESIZE_CHUNK 256
/* Most neighbour combinations of the outer axes of one row (4 per axis of a cubic). */
#define ETRT_RESIZE_MAX_COMBOS 64

typedef struct etrt_resize_taps {
  int count; /* 0: outside the crop box */
  int64_t index[4];
  double weight[4];
} etrt_resize_taps;

typedef struct etrt_resize_job {
  const etrt_resize_params *p;
  const etrt_resize_geometry *g;
  const etrt_tensor *x;
  etrt_tensor *y;
  const int64_t *strides;
  size_t element;
  const etrt_resize_taps *columns; /* of columns [first_column, first_column + column_count) */
  int64_t first_column, column_count;
  /* bit a: outer axis a takes position p from position p alone, with weight 1 */
  uint32_t identity_axes;
  /* the neighbours of the axis before the last at each of its positions, or NULL */
  const etrt_resize_taps *penultimate;
  /* nearest, every column inside the crop box: the offset of each column's source */
  const int64_t *nearest;
} etrt_resize_job;

/* One row of a nearest resize whose columns are all inside: a gather of `count`
 * elements by offset. */
#define ETRT_RESIZE_GATHER(T)                                                        \
  do {                                                                               \
    T *out = (T *)dst;                                                               \
    const T *in = (const T *)src;                                                    \
    for (int64_t c = 0; c < count; ++c) memcpy(&out[c], &in[offsets[c]], sizeof(T)); \
  } while (0)

static void etrt_resize_gather_row(uint8_t *dst, const uint8_t *src, const int64_t *offsets,
                                   int64_t count, size_t element) {
  switch (element) {
    case 1:
      ETRT_RESIZE_GATHER(uint8_t);
      break;
    case 2:
      ETRT_RESIZE_GATHER(uint16_t);
      break;
    case 4:
      ETRT_RESIZE_GATHER(uint32_t);
      break;
    default:
      for (int64_t c = 0; c < count; ++c)
        etrt_cpu_copy_element(dst + c * element, src + offsets[c] * element, element);
      break;
  }
}

/* The neighbour combinations of the outer axes of output row `row`: offsets into x and
 * the product of their weights, in the order the axes' picks advance (last axis
 * fastest). Returns how many, 0 when the row lies outside the crop box, -1 when there
 * are more than ETRT_RESIZE_MAX_COMBOS. */
static int etrt_resize_row_combos(const etrt_resize_job *j, int64_t row, int64_t *offsets,
                                  double *weights) {
  int32_t outer = j->x->rank - 1;
  int64_t index[ETRT_MAX_RANK][4], position[ETRT_MAX_RANK];
  double weight[ETRT_MAX_RANK][4];
  int count[ETRT_MAX_RANK], pick[ETRT_MAX_RANK] = {0};
  for (int32_t a = outer - 1; a >= 0; --a) {
    position[a] = row % j->y->dims[a];
    row /= j->y->dims[a];
  }
  int total = 1;
  for (int32_t a = 0; a < outer; ++a) {
    if (j->identity_axes & (1u << a)) {
      count[a] = 1;
      index[a][0] = position[a];
      weight[a][0] = 1.0;
    } else if (a == outer - 1 && j->penultimate != NULL) {
      const etrt_resize_taps *t = &j->penultimate[position[a]];
      count[a] = t->count;
      memcpy(index[a], t->index, sizeof t->index);
      memcpy(weight[a], t->weight, sizeof t->weight);
    } else {
      count[a] = etrt_resize_neighbours(j->p, j->g, a, position[a], index[a], weight[a]);
    }
    if (count[a] == 0) return 0;
    total *= count[a];
    if (total > ETRT_RESIZE_MAX_COMBOS) return -1;
  }
  for (int c = 0; c < total; ++c) {
    int64_t offset = 0;
    double w = 1.0;
    for (int32_t a = 0; a < outer; ++a) {
      offset += index[a][pick[a]] * j->strides[a];
      w *= weight[a][pick[a]];
    }
    offsets[c] = offset;
    weights[c] = w;
    for (int32_t a = outer - 1; a >= 0; --a) {
      if (++pick[a] < count[a]) break;
      pick[a] = 0;
    }
  }
  return total;
}

static void etrt_resize_rows(void *ctx, int64_t first, int64_t end) {
  const etrt_resize_job *j = ctx;
  const etrt_resize_params *p = j->p;
  int32_t last = j->x->rank - 1;
  int64_t width = j->y->dims[last], last_stride = j->strides[last];
  int is_double = j->x->dtype == ETRT_DTYPE_FLOAT64;
  int is_float = is_double || j->x->dtype == ETRT_DTYPE_FLOAT32;
  int64_t offsets[ETRT_RESIZE_MAX_COMBOS];
  double weights[ETRT_RESIZE_MAX_COMBOS];
  for (int64_t row = first; row < end; ++row) {
    int combos = etrt_resize_row_combos(j, row, offsets, weights);
    uint8_t *dst = (uint8_t *)j->y->data + (size_t)(row * width + j->first_column) * j->element;
    if (j->nearest != NULL && combos > 0) {
      etrt_resize_gather_row(dst, (const uint8_t *)j->x->data + (size_t)offsets[0] * j->element,
                             j->nearest, j->column_count, j->element);
      continue;
    }
    for (int64_t c = 0; c < j->column_count; ++c, dst += j->element) {
      const etrt_resize_taps *t = &j->columns[c];
      int outside = combos == 0 || t->count == 0;
      if (p->mode == ETRT_RESIZE_NEAREST && !outside) {
        int64_t offset = offsets[0] + t->index[0] * last_stride;
        etrt_cpu_copy_element(dst, (const uint8_t *)j->x->data + (size_t)offset * j->element,
                              j->element);
        continue;
      }
      if (!is_float) {
        memset(dst, 0, j->element); /* nearest outside the crop box, for a non-float type */
        continue;
      }
      double sum = p->extrapolation_value;
      if (!outside) {
        sum = 0.0;
        for (int k = 0; k < combos; ++k)
          for (int i = 0; i < t->count; ++i) {
            int64_t offset = offsets[k] + t->index[i] * last_stride;
            double v = is_double ? ((const double *)j->x->data)[offset]
                                 : (double)((const float *)j->x->data)[offset];
            sum += weights[k] * t->weight[i] * v;
          }
      }
      if (is_double) {
        memcpy(dst, &sum, sizeof sum);
      } else {
        float f = (float)sum;
        memcpy(dst, &f, sizeof f);
      }
    }
  }
}

etrt_status etrt_cpu_resize(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  const etrt_resize_params *p = node->state;
  etrt_resize_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_resize_geometry_compute(node, p, inputs, &g));
  const etrt_tensor *x = &inputs[0];
  etrt_tensor *y = &outputs[0];
  if (etrt_tensor_numel(y) == 0) return ETRT_OK;
  int64_t strides[ETRT_MAX_RANK];
  etrt_shape_strides(x->rank, x->dims, strides);
  int32_t last = x->rank - 1;
  int64_t rows = 1;
  for (int32_t a = 0; a < last; ++a) rows *= y->dims[a];
  int64_t offsets[ETRT_RESIZE_MAX_COMBOS];
  double weights[ETRT_RESIZE_MAX_COMBOS];
  etrt_resize_job job = {
      .p = p, .g = &g, .x = x, .y = y, .strides = strides, .element = etrt_dtype_size(x->dtype)};
  etrt_resize_taps columns[ETRT_RESIZE_CHUNK], penultimate[ETRT_RESIZE_CHUNK];
  for (int32_t a = 0; a < last && a < 32; ++a) {
    int identity = 1;
    for (int64_t at = 0; at < y->dims[a] && identity; ++at) {
      etrt_resize_taps t;
      t.count = etrt_resize_neighbours(p, &g, a, at, t.index, t.weight);
      identity = t.count == 1 && t.index[0] == at && t.weight[0] == 1.0;
    }
    if (identity) job.identity_axes |= 1u << a;
  }
  if (last >= 1 && !(job.identity_axes & (1u << (last - 1))) &&
      y->dims[last - 1] <= ETRT_RESIZE_CHUNK) {
    for (int64_t at = 0; at < y->dims[last - 1]; ++at)
      penultimate[at].count = etrt_resize_neighbours(p, &g, last - 1, at, penultimate[at].index,
                                                     penultimate[at].weight);
    job.penultimate = penultimate;
  }
  /* Every row has the same number of combinations (per-axis counts do not depend on
   * the position, but for rows outside a crop box): refuse more than the table holds. */
  for (int64_t row = 0; row < rows; ++row) {
    int combos = etrt_resize_row_combos(&job, row, offsets, weights);
    if (combos < 0)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                           "resizes more than %d neighbour combinations across its outer axes",
                           ETRT_RESIZE_MAX_COMBOS);
    if (combos > 0) break;
  }
  int64_t width = y->dims[last], nearest[ETRT_RESIZE_CHUNK];
  for (int64_t first = 0; first < width; first += ETRT_RESIZE_CHUNK) {
    job.first_column = first;
    job.column_count = width - first < ETRT_RESIZE_CHUNK ? width - first : ETRT_RESIZE_CHUNK;
    int inside = p->mode == ETRT_RESIZE_NEAREST;
    for (int64_t c = 0; c < job.column_count; ++c) {
      columns[c].count =
          etrt_resize_neighbours(p, &g, last, first + c, columns[c].index, columns[c].weight);
      nearest[c] = columns[c].index[0] * strides[last];
      inside = inside && columns[c].count > 0;
    }
    job.columns = columns;
    job.nearest = inside ? nearest : NULL;
    etrt_parallel_for(rows, 1 + 16384 / (job.column_count + 1), etrt_resize_rows, &job);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_resize[] = {
    {"Resize", etrt_cpu_resize},
    {"Upsample", etrt_cpu_resize},
    {NULL, NULL},
};
