#include "engine/ops/shape_util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"
#include "engine/ops/op_check.h"

int64_t etrt_shape_numel(int32_t rank, const int64_t *dims) {
  if (rank < 0 || rank > ETRT_MAX_RANK) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0 || etrt_mul_overflow_i64(n, dims[i], &n)) return -1;
  }
  return n;
}

int etrt_shape_equal(int32_t rank_a, const int64_t *a, int32_t rank_b, const int64_t *b) {
  if (rank_a != rank_b) return 0;
  for (int32_t i = 0; i < rank_a; ++i) {
    if (a[i] != b[i]) return 0;
  }
  return 1;
}

etrt_status etrt_shape_axis(const etrt_node *node, const char *what, int64_t axis, int32_t rank,
                            int32_t *out) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%s %lld is outside [%d, %d)", what,
                         (long long)axis, -(int)rank, (int)rank);
  *out = (int32_t)(axis < 0 ? axis + rank : axis);
  return ETRT_OK;
}

etrt_status etrt_shape_axis_attribute(const etrt_node *node, int64_t fallback, int32_t rank,
                                      int32_t *out) {
  return etrt_shape_axis(node, "axis", etrt_node_attribute_int(node, "axis", fallback), rank, out);
}

static void etrt_shape_format(int32_t rank, const int64_t *dims, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

etrt_status etrt_shape_broadcast(const etrt_node *node, uint32_t count, const etrt_tensor *tensors,
                                 int32_t *rank, int64_t *dims) {
  int32_t r = 0;
  for (uint32_t k = 0; k < count; ++k) {
    if (tensors[k].rank > ETRT_MAX_RANK)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u has rank %d", k,
                           (int)tensors[k].rank);
    if (tensors[k].rank > r) r = tensors[k].rank;
  }
  int64_t out[ETRT_MAX_RANK];
  int32_t from[ETRT_MAX_RANK]; /* which input set each axis, for the message */
  for (int32_t a = 0; a < r; ++a) {
    out[a] = 1;
    from[a] = -1;
  }
  for (uint32_t k = 0; k < count; ++k) {
    const etrt_tensor *t = &tensors[k];
    if (t->rank < 0) continue;
    for (int32_t i = 0; i < t->rank; ++i) {
      int32_t a = r - t->rank + i;
      int64_t d = t->dims[i];
      if (d < 0)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u has size %lld on axis %d",
                             k, (long long)d, (int)i);
      if (d == out[a] || d == 1) continue;
      if (out[a] == 1) {
        out[a] = d;
        from[a] = (int32_t)k;
        continue;
      }
      char sa[128], sb[128];
      etrt_shape_format(tensors[from[a]].rank, tensors[from[a]].dims, sa, sizeof sa);
      etrt_shape_format(t->rank, t->dims, sb, sizeof sb);
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "inputs %d %s and %u %s do not broadcast: axis %d has sizes %lld and "
                           "%lld",
                           (int)from[a], sa, k, sb, (int)a, (long long)out[a], (long long)d);
    }
  }
  *rank = r;
  memcpy(dims, out, (size_t)r * sizeof *dims);
  return ETRT_OK;
}

int etrt_shape_broadcastable_to(int32_t rank_from, const int64_t *from, int32_t rank_to,
                                const int64_t *to) {
  if (rank_from < 0 || rank_from > rank_to) return 0;
  for (int32_t i = 0; i < rank_from; ++i) {
    int64_t d = from[i], t = to[rank_to - rank_from + i];
    if (d != t && d != 1) return 0;
  }
  return 1;
}

void etrt_shape_strides(int32_t rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i];
  }
}

void etrt_shape_broadcast_strides(int32_t rank, const int64_t *dims, int32_t out_rank,
                                  const int64_t *out_dims, int64_t *strides) {
  int64_t own[ETRT_MAX_RANK];
  etrt_shape_strides(rank, dims, own);
  for (int32_t a = 0; a < out_rank; ++a) {
    int32_t i = a - (out_rank - rank);
    strides[a] = (i < 0 || dims[i] == 1 || out_dims[a] == 1) ? 0 : own[i];
  }
}

etrt_status etrt_broadcast_iter_init(etrt_broadcast_iter *it, const etrt_tensor *output,
                                     uint32_t count, const etrt_tensor *const *operands) {
  if (count > ETRT_BROADCAST_MAX_OPERANDS)
    return etrt_error(ETRT_ERROR_INTERNAL, "broadcast: %u operands, at most %d", count,
                      ETRT_BROADCAST_MAX_OPERANDS);
  int64_t strides[ETRT_BROADCAST_MAX_OPERANDS][ETRT_MAX_RANK];
  for (uint32_t k = 0; k < count; ++k) {
    if (!etrt_shape_broadcastable_to(operands[k]->rank, operands[k]->dims, output->rank,
                                     output->dims))
      return etrt_error(ETRT_ERROR_INTERNAL,
                        "broadcast: operand %u does not broadcast to the output", k);
    etrt_shape_broadcast_strides(operands[k]->rank, operands[k]->dims, output->rank, output->dims,
                                 strides[k]);
  }
  etrt_broadcast_iter_compact(it, output->rank, output->dims, count,
                              (const int64_t(*)[ETRT_MAX_RANK])strides);
  return ETRT_OK;
}

void etrt_broadcast_iter_compact(etrt_broadcast_iter *it, int32_t rank, const int64_t *dims,
                                 uint32_t count, const int64_t (*strides)[ETRT_MAX_RANK]) {
  it->count = count;
  it->numel = etrt_shape_numel(rank, dims);
  /* Drop size-1 axes (their strides never matter), then merge axis a into the axis
   * kept before it when every operand continues contiguously across the boundary. */
  int32_t r = 0;
  for (int32_t a = 0; a < rank; ++a) {
    int64_t d = dims[a];
    if (d == 1) continue;
    int merge = r > 0;
    for (uint32_t k = 0; k < count && merge; ++k)
      merge = it->strides[k][r - 1] == strides[k][a] * d;
    if (merge) {
      it->dims[r - 1] *= d;
      for (uint32_t k = 0; k < count; ++k) it->strides[k][r - 1] = strides[k][a];
    } else {
      it->dims[r] = d;
      for (uint32_t k = 0; k < count; ++k) it->strides[k][r] = strides[k][a];
      ++r;
    }
  }
  if (r == 0) {
    it->dims[0] = 1;
    for (uint32_t k = 0; k < count; ++k) it->strides[k][0] = 0;
    r = 1;
  }
  it->rank = r;
}

static int etrt_aligned(const void *p, uint64_t bytes) {
  return bytes == 0 || (uint64_t)(uintptr_t)p % bytes == 0;
}

int etrt_broadcast_iter_runs_of(const etrt_broadcast_iter *it, int64_t width,
                                const void *const *bases, const size_t *elem_sizes,
                                const void *output, size_t output_elem_size) {
  if (width <= 1 || it->rank < 1) return width == 1;
  int32_t inner = it->rank - 1;
  if (it->dims[inner] % width != 0) return 0;
  if (!etrt_aligned(output, (uint64_t)width * output_elem_size)) return 0;
  for (uint32_t k = 0; k < it->count; ++k) {
    int64_t step = it->strides[k][inner];
    if (step == 0) continue;
    if (step != 1 || !etrt_aligned(bases[k], (uint64_t)width * elem_sizes[k])) return 0;
    for (int32_t d = 0; d < inner; ++d)
      if (it->strides[k][d] % width != 0) return 0;
  }
  return 1;
}

int etrt_broadcast_iter_fits_int32(const etrt_broadcast_iter *it) {
  if (it->numel < 0 || it->numel > ((int64_t)1 << 30)) return 0;
  for (uint32_t k = 0; k < it->count; ++k) {
    uint64_t far = 0;
    for (int32_t d = 0; d < it->rank; ++d) {
      int64_t step = it->strides[k][d];
      uint64_t magnitude = step < 0 ? (uint64_t)0 - (uint64_t)step : (uint64_t)step;
      if (it->dims[d] <= 1 || magnitude == 0) continue;
      if (magnitude > INT32_MAX || it->dims[d] > INT32_MAX) return 0;
      far += (uint64_t)(it->dims[d] - 1) * magnitude;
      if (far > INT32_MAX) return 0;
    }
  }
  return 1;
}
