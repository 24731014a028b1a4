/* CPU kernels of ArgMax/ArgMin and TopK, per element type. */
#include "engine/ops/selection.h"

#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

typedef struct etrt_selection_dims {
  int64_t outer, size, inner;
} etrt_selection_dims;

static etrt_selection_dims etrt_selection_split(const etrt_tensor *x, int32_t axis) {
  etrt_selection_dims d = {1, x->dims[axis], 1};
  for (int32_t i = 0; i < axis; ++i) d.outer *= x->dims[i];
  for (int32_t i = axis + 1; i < x->rank; ++i) d.inner *= x->dims[i];
  return d;
}

/* `better(a, b)`: a replaces the current pick b. */
#define ETRT_ARG_KERNEL(T, name)                                                            \
  static void name(const T *x, int64_t *y, etrt_selection_dims d, int want_max, int last) { \
    for (int64_t o = 0; o < d.outer; ++o) {                                                 \
      for (int64_t j = 0; j < d.inner; ++j) {                                               \
        const T *row = x + o * d.size * d.inner + j;                                        \
        int64_t best = 0;                                                                   \
        for (int64_t i = 1; i < d.size; ++i) {                                              \
          T v = row[i * d.inner], b = row[best * d.inner];                                  \
          int better = want_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);        \
          if (better) best = i;                                                             \
        }                                                                                   \
        y[o * d.inner + j] = best;                                                          \
      }                                                                                     \
    }                                                                                       \
  }

ETRT_ARG_KERNEL(float, etrt_arg_f32)
ETRT_ARG_KERNEL(double, etrt_arg_f64)
ETRT_ARG_KERNEL(int8_t, etrt_arg_i8)
ETRT_ARG_KERNEL(uint8_t, etrt_arg_u8)
ETRT_ARG_KERNEL(int16_t, etrt_arg_i16)
ETRT_ARG_KERNEL(int32_t, etrt_arg_i32)
ETRT_ARG_KERNEL(int64_t, etrt_arg_i64)

etrt_status etrt_cpu_arg_extreme(const etrt_node *node, const etrt_tensor *inputs,
                                 etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, x->rank, &axis));
  etrt_selection_dims d = etrt_selection_split(x, axis);
  int want_max = strcmp(node->op_type, "ArgMax") == 0;
  int last = etrt_node_attribute_int(node, "select_last_index", 0) != 0;
  int64_t *y = outputs[0].data;
  switch (x->dtype) {
    case ETRT_DTYPE_FLOAT32:
      etrt_arg_f32(x->data, y, d, want_max, last);
      break;
    case ETRT_DTYPE_FLOAT64:
      etrt_arg_f64(x->data, y, d, want_max, last);
      break;
    case ETRT_DTYPE_INT8:
      etrt_arg_i8(x->data, y, d, want_max, last);
      break;
    case ETRT_DTYPE_UINT8:
      etrt_arg_u8(x->data, y, d, want_max, last);
      break;
    case ETRT_DTYPE_INT16:
      etrt_arg_i16(x->data, y, d, want_max, last);
      break;
    case ETRT_DTYPE_INT32:
      etrt_arg_i32(x->data, y, d, want_max, last);
      break;
    default:
      etrt_arg_i64(x->data, y, d, want_max, last);
      break;
  }
  return ETRT_OK;
}

/* Insertion into the k best kept in the outputs (strided by `inner`): O(n k), no
 * scratch memory. Equal values keep the lower index first, as ONNX requires. */
#define ETRT_TOP_K_KERNEL(T, name)                                                            \
  static void name(const T *x, T *values, int64_t *indices, etrt_selection_dims d, int64_t k, \
                   int largest) {                                                             \
    for (int64_t o = 0; o < d.outer; ++o) {                                                   \
      for (int64_t j = 0; j < d.inner; ++j) {                                                 \
        const T *row = x + o * d.size * d.inner + j;                                          \
        T *vals = values + o * k * d.inner + j;                                               \
        int64_t *idx = indices + o * k * d.inner + j;                                         \
        int64_t kept = 0;                                                                     \
        for (int64_t i = 0; i < d.size; ++i) {                                                \
          T v = row[i * d.inner];                                                             \
          int64_t at = kept;                                                                  \
          while (at > 0 &&                                                                    \
                 (largest ? v > vals[(at - 1) * d.inner] : v < vals[(at - 1) * d.inner]))     \
            --at;                                                                             \
          if (at >= k) continue;                                                              \
          int64_t end = kept < k ? kept : k - 1;                                              \
          for (int64_t m = end; m > at; --m) {                                                \
            vals[m * d.inner] = vals[(m - 1) * d.inner];                                      \
            idx[m * d.inner] = idx[(m - 1) * d.inner];                                        \
          }                                                                                   \
          vals[at * d.inner] = v;                                                             \
          idx[at * d.inner] = i;                                                              \
          if (kept < k) ++kept;                                                               \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }

ETRT_TOP_K_KERNEL(float, etrt_top_k_f32)
ETRT_TOP_K_KERNEL(double, etrt_top_k_f64)
ETRT_TOP_K_KERNEL(int8_t, etrt_top_k_i8)
ETRT_TOP_K_KERNEL(uint8_t, etrt_top_k_u8)
ETRT_TOP_K_KERNEL(int16_t, etrt_top_k_i16)
ETRT_TOP_K_KERNEL(int32_t, etrt_top_k_i32)
ETRT_TOP_K_KERNEL(int64_t, etrt_top_k_i64)

etrt_status etrt_cpu_top_k(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  const etrt_tensor *x = &inputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, -1, x->rank, &axis));
  etrt_selection_dims d = etrt_selection_split(x, axis);
  int64_t k = outputs[0].dims[axis];
  if (k == 0) return ETRT_OK;
  int largest = etrt_node_attribute_int(node, "largest", 1) != 0;
  void *v = outputs[0].data;
  int64_t *i = outputs[1].data;
  switch (x->dtype) {
    case ETRT_DTYPE_FLOAT32:
      etrt_top_k_f32(x->data, v, i, d, k, largest);
      break;
    case ETRT_DTYPE_FLOAT64:
      etrt_top_k_f64(x->data, v, i, d, k, largest);
      break;
    case ETRT_DTYPE_INT8:
      etrt_top_k_i8(x->data, v, i, d, k, largest);
      break;
    case ETRT_DTYPE_UINT8:
      etrt_top_k_u8(x->data, v, i, d, k, largest);
      break;
    case ETRT_DTYPE_INT16:
      etrt_top_k_i16(x->data, v, i, d, k, largest);
      break;
    case ETRT_DTYPE_INT32:
      etrt_top_k_i32(x->data, v, i, d, k, largest);
      break;
    default:
      etrt_top_k_i64(x->data, v, i, d, k, largest);
      break;
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_selection[] = {
    {"ArgMax", etrt_cpu_arg_extreme},
    {"ArgMin", etrt_cpu_arg_extreme},
    {"TopK", etrt_cpu_top_k},
    {NULL, NULL},
};
