/* CPU kernels of the indexing operators. Every index is range-checked before use. */
#include "engine/ops/gather.h"

#include <math.h>
#include <string.h>

#include "engine/ops/cpu/copy_util.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

/* Index `i` of `indices` mapped into [0, size), or a refusal naming the op. */
static etrt_status etrt_gather_resolve(const etrt_node *node, const etrt_tensor *indices, int64_t i,
                                       int64_t size, int32_t axis, int64_t *out) {
  int64_t v = etrt_gather_index(indices->data, indices->dtype, i);
  int64_t r = v < 0 ? v + size : v;
  if (r < 0 || r >= size)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "index %lld is out of range for axis %d of size %lld", (long long)v,
                         (int)axis, (long long)size);
  *out = r;
  return ETRT_OK;
}

etrt_status etrt_cpu_gather(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &axis));
  size_t element = etrt_dtype_size(data->dtype);
  int64_t outer = etrt_shape_numel(axis, data->dims), size = data->dims[axis];
  size_t block =
      (size_t)etrt_shape_numel(data->rank - (axis + 1), data->dims + (axis + 1)) * element;
  int64_t count = etrt_tensor_numel(indices);
  const uint8_t *src = data->data;
  uint8_t *dst = outputs[0].data;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i, dst += block) {
      int64_t at = 0;
      ETRT_RETURN_IF_ERROR(etrt_gather_resolve(node, indices, i, size, axis, &at));
      memcpy(dst, src + (size_t)(o * size + at) * block, block);
    }
  }
  return ETRT_OK;
}

/* GatherElements and ScatterElements walk the indices in order: element i stands for
 * the data element at its own coordinates, except along `axis`, where its value is
 * the coordinate. */
typedef struct etrt_elements_walk {
  int32_t axis;
  int64_t strides[ETRT_MAX_RANK];
  int64_t coords[ETRT_MAX_RANK]; /* of the next indices element */
} etrt_elements_walk;

static etrt_status etrt_elements_walk_init(const etrt_node *node, const etrt_tensor *data,
                                           etrt_elements_walk *w) {
  memset(w, 0, sizeof *w);
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, 0, data->rank, &w->axis));
  etrt_shape_strides(data->rank, data->dims, w->strides);
  return ETRT_OK;
}

/* The data offset (in elements) of indices element i, the next in the walk. */
static etrt_status etrt_elements_walk_next(const etrt_node *node, const etrt_tensor *data,
                                           const etrt_tensor *indices, etrt_elements_walk *w,
                                           int64_t i, int64_t *offset) {
  int64_t at = 0;
  ETRT_RETURN_IF_ERROR(etrt_gather_resolve(node, indices, i, data->dims[w->axis], w->axis, &at));
  *offset = 0;
  for (int32_t a = 0; a < data->rank; ++a)
    *offset += (a == w->axis ? at : w->coords[a]) * w->strides[a];
  for (int32_t a = indices->rank - 1; a >= 0; --a) {
    if (++w->coords[a] < indices->dims[a]) break;
    w->coords[a] = 0;
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_gather_elements(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  etrt_elements_walk walk;
  ETRT_RETURN_IF_ERROR(etrt_elements_walk_init(node, data, &walk));
  size_t element = etrt_dtype_size(data->dtype);
  int64_t count = etrt_tensor_numel(indices);
  const uint8_t *src = data->data;
  uint8_t *dst = outputs[0].data;
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset;
    ETRT_RETURN_IF_ERROR(etrt_elements_walk_next(node, data, indices, &walk, i, &offset));
    etrt_cpu_copy_element(dst + (size_t)i * element, src + (size_t)offset * element, element);
  }
  return ETRT_OK;
}

etrt_status etrt_cpu_gather_nd(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_tensor *outputs) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1];
  int32_t b = (int32_t)etrt_node_attribute_int(node, "batch_dims", 0);
  int32_t m = (int32_t)indices->dims[indices->rank - 1];
  size_t element = etrt_dtype_size(data->dtype);
  int64_t strides[ETRT_MAX_RANK];
  etrt_shape_strides(data->rank, data->dims, strides);
  int64_t batches = etrt_shape_numel(b, data->dims);
  int64_t per_batch = etrt_shape_numel(indices->rank - 1 - b, indices->dims + b);
  size_t slice = (size_t)etrt_shape_numel(data->rank - (b + m), data->dims + (b + m)) * element;
  int64_t batch_stride = b > 0 ? strides[b - 1] : 0;
  const uint8_t *src = data->data;
  uint8_t *dst = outputs[0].data;
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t t = 0; t < per_batch; ++t, dst += slice) {
      int64_t offset = n * batch_stride;
      int64_t first = (n * per_batch + t) * m;
      for (int32_t k = 0; k < m; ++k) {
        int64_t at = 0;
        ETRT_RETURN_IF_ERROR(
            etrt_gather_resolve(node, indices, first + k, data->dims[b + k], b + k, &at));
        offset += at * strides[b + k];
      }
      memcpy(dst, src + (size_t)offset * element, slice);
    }
  }
  return ETRT_OK;
}

#define ETRT_SCATTER_APPLY(T)     \
  do {                            \
    T *d = (T *)target, u;        \
    memcpy(&u, update, sizeof u); \
    switch (reduction) {          \
      case ETRT_SCATTER_ADD:      \
        *d = (T)(*d + u);         \
        break;                    \
      case ETRT_SCATTER_MUL:      \
        *d = (T)(*d * u);         \
        break;                    \
      case ETRT_SCATTER_MAX:      \
        if (u > *d) *d = u;       \
        break;                    \
      case ETRT_SCATTER_MIN:      \
        if (u < *d) *d = u;       \
        break;                    \
      default:                    \
        *d = u;                   \
        break;                    \
    }                             \
  } while (0)

/* Integers add and multiply wrapping (in the unsigned type U), as the reference's
 * fixed-width types, and compare signed (S). */
#define ETRT_SCATTER_APPLY_INT(U, S)           \
  do {                                         \
    U *d = target, u;                          \
    S s, t;                                    \
    memcpy(&u, update, sizeof u);              \
    memcpy(&s, update, sizeof s);              \
    memcpy(&t, target, sizeof t);              \
    if (reduction == ETRT_SCATTER_ADD)         \
      *d += u;                                 \
    else if (reduction == ETRT_SCATTER_MUL)    \
      *d *= u;                                 \
    else if (reduction == ETRT_SCATTER_MAX) {  \
      if (s > t) memcpy(target, &s, sizeof s); \
    } else if (s < t)                          \
      memcpy(target, &s, sizeof s);            \
  } while (0)

static void etrt_scatter_combine(etrt_scatter_reduction reduction, etrt_dtype dtype, void *target,
                                 const void *update, size_t element) {
  if (reduction == ETRT_SCATTER_NONE) {
    etrt_cpu_copy_element(target, update, element);
    return;
  }
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      ETRT_SCATTER_APPLY(float);
      break;
    case ETRT_DTYPE_FLOAT64:
      ETRT_SCATTER_APPLY(double);
      break;
    case ETRT_DTYPE_INT32:
      ETRT_SCATTER_APPLY_INT(uint32_t, int32_t);
      break;
    default:
      ETRT_SCATTER_APPLY_INT(uint64_t, int64_t);
      break;
  }
}

etrt_status etrt_cpu_scatter_elements(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1], *updates = &inputs[2];
  etrt_elements_walk walk;
  ETRT_RETURN_IF_ERROR(etrt_elements_walk_init(node, data, &walk));
  etrt_scatter_reduction reduction;
  ETRT_RETURN_IF_ERROR(etrt_scatter_reduction_parse(node, &reduction));
  size_t element = etrt_dtype_size(data->dtype);
  size_t bytes = (size_t)etrt_tensor_numel(data) * element;
  if (bytes > 0 && outputs[0].data != data->data) memmove(outputs[0].data, data->data, bytes);
  int64_t count = etrt_tensor_numel(indices);
  uint8_t *dst = outputs[0].data;
  const uint8_t *src = updates->data;
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset;
    ETRT_RETURN_IF_ERROR(etrt_elements_walk_next(node, data, indices, &walk, i, &offset));
    etrt_scatter_combine(reduction, data->dtype, dst + (size_t)offset * element,
                         src + (size_t)i * element, element);
  }
  return ETRT_OK;
}

/* ScatterND: each index tuple (range-checked) names a slice of data's trailing
 * dims, combined element by element with the tuple's updates, in tuple order. */
static etrt_status etrt_cpu_scatter_nd(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  const etrt_tensor *data = &inputs[0], *indices = &inputs[1], *updates = &inputs[2];
  etrt_scatter_reduction reduction;
  ETRT_RETURN_IF_ERROR(etrt_scatter_reduction_parse(node, &reduction));
  size_t element = etrt_dtype_size(data->dtype);
  size_t bytes = (size_t)etrt_tensor_numel(data) * element;
  if (bytes > 0 && outputs[0].data != data->data) memmove(outputs[0].data, data->data, bytes);
  int32_t k = (int32_t)indices->dims[indices->rank - 1];
  int64_t strides[ETRT_MAX_RANK];
  etrt_shape_strides(data->rank, data->dims, strides);
  int64_t slice = etrt_shape_numel(data->rank - k, data->dims + k);
  int64_t tuples = etrt_shape_numel(indices->rank - 1, indices->dims);
  uint8_t *dst = outputs[0].data;
  const uint8_t *src = updates->data;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int32_t a = 0; a < k; ++a) {
      int64_t at = 0;
      ETRT_RETURN_IF_ERROR(etrt_gather_resolve(node, indices, t * k + a, data->dims[a], a, &at));
      offset += at * strides[a];
    }
    for (int64_t e = 0; e < slice; ++e)
      etrt_scatter_combine(reduction, data->dtype, dst + (size_t)(offset + e) * element,
                           src + (size_t)(t * slice + e) * element, element);
  }
  return ETRT_OK;
}

/* Index i of a OneHot indices tensor (floats are truncated toward zero, as the
 * reference's cast to int64). Returns 0 with *ok = 0 for a non-finite value. */
static int64_t etrt_one_hot_index(const etrt_tensor *t, int64_t i, int *ok) {
  *ok = 1;
  switch (t->dtype) {
    case ETRT_DTYPE_FLOAT32:
    case ETRT_DTYPE_FLOAT64: {
      double v = t->dtype == ETRT_DTYPE_FLOAT32 ? ((const float *)t->data)[i]
                                                : ((const double *)t->data)[i];
      if (!(fabs(v) < 9.0e15)) {
        *ok = 0;
        return 0;
      }
      return (int64_t)v;
    }
    default:
      return etrt_gather_index(t->data, t->dtype, i);
  }
}

etrt_status etrt_cpu_one_hot(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs) {
  const etrt_tensor *indices = &inputs[0], *y = &outputs[0];
  int32_t axis;
  ETRT_RETURN_IF_ERROR(etrt_shape_axis_attribute(node, -1, y->rank, &axis));
  size_t element = etrt_dtype_size(y->dtype);
  const uint8_t *values = inputs[2].data;
  int64_t depth = y->dims[axis];
  int64_t outer = etrt_shape_numel(axis, y->dims);
  int64_t inner = etrt_shape_numel(y->rank - (axis + 1), y->dims + (axis + 1));
  uint8_t *dst = y->data;
  int64_t total = etrt_tensor_numel(y);
  for (int64_t i = 0; i < total; ++i)
    etrt_cpu_copy_element(dst + (size_t)i * element, values, element);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      int ok;
      int64_t v = etrt_one_hot_index(indices, o * inner + j, &ok);
      if (!ok) continue;
      if (v < 0) v += depth;
      if (v < 0 || v >= depth) continue; /* out of range: all "off", as ONNX says */
      etrt_cpu_copy_element(dst + (size_t)((o * depth + v) * inner + j) * element, values + element,
                            element);
    }
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_gather[] = {
    {"Gather", etrt_cpu_gather},
    {"GatherElements", etrt_cpu_gather_elements},
    {"GatherND", etrt_cpu_gather_nd},
    {"ScatterElements", etrt_cpu_scatter_elements},
    {"Scatter", etrt_cpu_scatter_elements},
    {"ScatterND", etrt_cpu_scatter_nd},
    {"OneHot", etrt_cpu_one_hot},
    {NULL, NULL},
};
