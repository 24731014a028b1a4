/* Joining and splitting along one dim: cat, stack, split_with_sizes_copy,
 * unbind_copy, slice_copy. Where every tensor has one dim order (cat, split and slice;
 * stack and unbind, which change the rank, when all are contiguous), each is viewed as
 * [outer, size along dim, inner] in memory order and moved in contiguous blocks of
 * `inner` elements; otherwise (channels-last beside contiguous, a channels-last stack)
 * elements move one by one to the positions each tensor's strides give. */
#include <string.h>

#include "runtime/portable/portable.h"

typedef enum etrt_portable_join_kind {
  ETRT_JOIN_CAT,         /* (Tensor[] tensors, int dim, *, out) */
  ETRT_JOIN_STACK,       /* (Tensor[] tensors, int dim, *, out) */
  ETRT_JOIN_SPLIT,       /* (self, SymInt[] split_sizes, int dim, *, Tensor[] out) */
  ETRT_JOIN_SPLIT_EQUAL, /* split_copy.Tensor(self, SymInt split_size, int dim, *, Tensor[] out):
                            parts of split_size, the last one what remains */
  ETRT_JOIN_UNBIND,      /* (self, int dim, *, Tensor[] out) */
  ETRT_JOIN_SLICE        /* (self, int dim, SymInt? start, SymInt? end, SymInt step, *, out) */
} etrt_portable_join_kind;

typedef struct etrt_portable_join_spec {
  etrt_kernel_def def;
  etrt_portable_join_kind kind;
  int8_t list;  /* the Tensor[] argument (inputs for cat/stack, outs for split/unbind) */
  int8_t dim;   /* the int dim argument */
  int8_t out;   /* the out tensor (cat, stack, slice), else -1 */
  int8_t sizes; /* split_sizes, else -1 */
} etrt_portable_join_spec;

static const etrt_portable_join_spec *etrt_portable_join_of(const etrt_kernel_call *call) {
  return (const etrt_portable_join_spec *)call->def;
}

static etrt_status etrt_portable_join_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_join_spec *spec = etrt_portable_join_of(call);
  const etrt_runtime_tensor *t = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, (uint32_t)spec->dim, &call->ints[0][0]));
  if (spec->list >= 0) {
    const etrt_value *list = &values[call->args[spec->list]];
    if (list->tag != ETRT_VALUE_TENSOR_LIST)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %d must be a list of tensors",
                        spec->list);
    if (list->u.tensor_list.count == 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument %d is an empty list", spec->list);
    for (uint32_t i = 0; i < list->u.tensor_list.count; ++i) {
      const etrt_value *v = &values[list->u.tensor_list.items[i]];
      if (v->tag != ETRT_VALUE_TENSOR || v->u.tensor.device.type != ETRT_DEVICE_CPU)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                          "argument %d: item %u must be a tensor planned on the CPU", spec->list,
                          i);
    }
  }
  /* Any dim order is taken: tensors that all share the out tensor's order (split and
   * slice: self's) move in blocks, the others element by element (etrt_join_box). */
  if (spec->kind == ETRT_JOIN_SPLIT || spec->kind == ETRT_JOIN_SPLIT_EQUAL ||
      spec->kind == ETRT_JOIN_UNBIND || spec->kind == ETRT_JOIN_SLICE)
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
  if (spec->out >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &t));
  if (spec->kind == ETRT_JOIN_SPLIT) {
    uint32_t count = 0;
    ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, (uint32_t)spec->sizes, call->ints[1],
                                                2 * ETRT_MAX_RANK, &count));
    if (count != values[call->args[spec->list]].u.tensor_list.count)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%u split sizes for %u out tensors", count,
                        values[call->args[spec->list]].u.tensor_list.count);
  }
  if (spec->kind == ETRT_JOIN_SPLIT_EQUAL) {
    const uint32_t n = values[call->args[spec->list]].u.tensor_list.count;
    int64_t split = 0, dim = call->ints[0][0];
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, (uint32_t)spec->sizes, &split));
    if (dim < 0) dim += t->rank;
    if (dim < 0 || dim >= t->rank || split <= 0 || n > 2 * ETRT_MAX_RANK)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "split_size %lld along dim %lld of a rank-%d tensor into %u parts",
                        (long long)split, (long long)call->ints[0][0], t->rank, n);
    const int64_t size = t->sizes[dim], parts = size == 0 ? 1 : (size + split - 1) / split;
    if (parts != (int64_t)n)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "dim %lld of size %lld splits into %lld parts of %lld, not %u",
                        (long long)dim, (long long)size, (long long)parts, (long long)split, n);
    for (uint32_t i = 0; i < n; ++i) {
      int64_t left = size - (int64_t)i * split;
      call->ints[1][i] = left < split ? left : split;
    }
  }
  if (spec->kind == ETRT_JOIN_SLICE) {
    /* start, end (None: the ends), step. */
    for (uint32_t k = 0; k < 2; ++k) {
      const etrt_value *v = &values[call->args[2 + k]];
      call->ints[1][k] = k == 0 ? 0 : INT64_MAX;
      if (v->tag != ETRT_VALUE_NONE)
        ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2 + k, &call->ints[1][k]));
    }
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 4, &call->ints[1][2]));
    if (call->ints[1][2] <= 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 4 (step) must be positive, not %lld",
                        (long long)call->ints[1][2]);
  }
  return ETRT_OK;
}

static etrt_status etrt_portable_dim(const etrt_kernel_call *call, int64_t dim, int32_t rank,
                                     int32_t *out) {
  int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): dim %lld is out of range for rank %d", call->def->name,
                      call->instruction, (long long)dim, rank);
  *out = (int32_t)d;
  return ETRT_OK;
}

/* Elements before and (in bytes) after `dim`, in the tensor's memory order. */
static void etrt_portable_split_dims(const etrt_runtime_tensor *t, int32_t dim, int64_t *outer,
                                     size_t *inner) {
  *outer = 1;
  *inner = etrt_dtype_size(t->dtype);
  int32_t at = 0;
  while (at < t->rank && t->dim_order[at] != dim) ++at;
  for (int32_t k = 0; k < at; ++k) *outer *= t->sizes[t->dim_order[k]];
  for (int32_t k = at + 1; k < t->rank; ++k) *inner *= (size_t)t->sizes[t->dim_order[k]];
}

/* Copies the box `dims` element by element: from src at element sbase + index . ss to
 * dst at dbase + index . ds. */
static void etrt_join_box(const etrt_runtime_tensor *src, int64_t sbase, const int64_t *ss,
                          etrt_runtime_tensor *dst, int64_t dbase, const int64_t *ds, int32_t rank,
                          const int64_t *dims) {
  const size_t item = etrt_dtype_size(src->dtype);
  int64_t numel = 1, index[ETRT_MAX_RANK] = {0}, from = sbase, to = dbase;
  for (int32_t d = 0; d < rank; ++d) numel *= dims[d];
  for (int64_t e = 0; e < numel; ++e) {
    memcpy((uint8_t *)dst->data + (size_t)to * item,
           (const uint8_t *)src->data + (size_t)from * item, item);
    for (int32_t d = rank - 1; d >= 0; --d) {
      from += ss[d];
      to += ds[d];
      if (++index[d] < dims[d]) break;
      from -= ss[d] * index[d];
      to -= ds[d] * index[d];
      index[d] = 0;
    }
  }
}

/* Whether a and b have one dim order (what the block copies need). */
static int etrt_join_same_order(const etrt_runtime_tensor *a, const etrt_runtime_tensor *b) {
  return a->rank == b->rank && memcmp(a->dim_order, b->dim_order, (size_t)a->rank) == 0;
}

/* The strides of t with dim `skip` left out (-1: none). */
static void etrt_join_strides(const etrt_runtime_tensor *t, int32_t skip, int64_t *strides) {
  int64_t all[ETRT_MAX_RANK];
  etrt_portable_strides(t, all);
  for (int32_t d = 0, k = 0; d < t->rank; ++d)
    if (d != skip) strides[k++] = all[d];
}

/* ATen's cat skips the legacy empty 1-D tensors. */
static int etrt_portable_cat_skips(const etrt_runtime_tensor *t, etrt_portable_join_kind kind) {
  return kind == ETRT_JOIN_CAT && t->rank == 1 && t->sizes[0] == 0;
}

static etrt_status etrt_portable_join(etrt_kernel_call *call, etrt_value *values) {
  const etrt_portable_join_spec *spec = etrt_portable_join_of(call);
  const etrt_value *list = &values[call->args[spec->list]];
  const uint32_t n = list->u.tensor_list.count;
  const int stack = spec->kind == ETRT_JOIN_STACK;
  const etrt_runtime_tensor *first = NULL;
  for (uint32_t i = 0; i < n && first == NULL; ++i) {
    const etrt_runtime_tensor *t = &values[list->u.tensor_list.items[i]].u.tensor;
    if (!etrt_portable_cat_skips(t, spec->kind)) first = t;
  }
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  if (first == NULL) return etrt_portable_out_fit(call, out, out->dtype, 1, (int64_t[]){0});
  int32_t rank = first->rank + stack, dim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_dim(call, call->ints[0][0], rank, &dim));
  int64_t dims[ETRT_MAX_RANK];
  if (rank > ETRT_MAX_RANK)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: rank %d is too large", call->def->name, rank);
  for (int32_t i = 0, j = 0; i < rank; ++i) dims[i] = stack && i == dim ? 1 : first->sizes[j++];
  int64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const etrt_runtime_tensor *t = &values[list->u.tensor_list.items[i]].u.tensor;
    if (etrt_portable_cat_skips(t, spec->kind)) continue;
    int same = t->dtype == first->dtype && t->rank == first->rank;
    for (int32_t a = 0, b = 0; same && a < rank; ++a) {
      if (stack && a == dim) continue;
      int64_t size = t->sizes[b++];
      if (a != dim && size != dims[a]) same = 0;
      if (a == dim) total += size;
    }
    if (!same)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): tensor %u does not match the others' dtype and sizes",
                        call->def->name, call->instruction, i);
    if (stack) total += 1;
  }
  dims[dim] = total;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, first->dtype, rank, dims));
  int blocks = !stack || !out->permuted;
  for (uint32_t i = 0; i < n && blocks; ++i) {
    const etrt_runtime_tensor *t = &values[list->u.tensor_list.items[i]].u.tensor;
    if (etrt_portable_cat_skips(t, spec->kind)) continue;
    blocks = stack ? !t->permuted : etrt_join_same_order(t, out);
  }
  if (!blocks) {
    int64_t os[ETRT_MAX_RANK], ds[ETRT_MAX_RANK], ts[ETRT_MAX_RANK];
    etrt_portable_strides(out, os);
    etrt_join_strides(out, stack ? dim : -1, ds);
    int64_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const etrt_runtime_tensor *t = &values[list->u.tensor_list.items[i]].u.tensor;
      if (etrt_portable_cat_skips(t, spec->kind)) continue;
      etrt_join_strides(t, -1, ts);
      etrt_join_box(t, 0, ts, out, at * os[dim], ds, t->rank, t->sizes);
      at += stack ? 1 : t->sizes[dim];
    }
    return ETRT_OK;
  }
  int64_t outer;
  size_t inner;
  etrt_portable_split_dims(out, dim, &outer, &inner);
  int64_t offset = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const etrt_runtime_tensor *t = &values[list->u.tensor_list.items[i]].u.tensor;
    if (etrt_portable_cat_skips(t, spec->kind)) continue;
    int64_t size = stack ? 1 : t->sizes[dim];
    for (int64_t o = 0; o < outer; ++o)
      memcpy((uint8_t *)out->data + (size_t)(o * total + offset) * inner,
             (const uint8_t *)t->data + (size_t)(o * size) * inner, (size_t)size * inner);
    offset += size;
  }
  return ETRT_OK;
}

/* split / unbind: every out tensor's shape is fitted before any is written. */
static etrt_status etrt_portable_part(etrt_kernel_call *call, etrt_value *values) {
  const etrt_portable_join_spec *spec = etrt_portable_join_of(call);
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const etrt_value *list = &values[call->args[spec->list]];
  const uint32_t n = list->u.tensor_list.count;
  const int unbind = spec->kind == ETRT_JOIN_UNBIND;
  int32_t dim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_dim(call, call->ints[0][0], self->rank, &dim));
  int64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) total += unbind ? 1 : call->ints[1][i];
  if (total != self->sizes[dim])
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the parts add up to %lld, dim %d has %lld",
                      call->def->name, call->instruction, (long long)total, dim,
                      (long long)self->sizes[dim]);
  for (uint32_t i = 0; i < n; ++i) {
    etrt_runtime_tensor *o = &values[list->u.tensor_list.items[i]].u.tensor;
    int64_t dims[ETRT_MAX_RANK];
    int32_t rank = 0;
    for (int32_t a = 0; a < self->rank; ++a) {
      if (a == dim && unbind) continue;
      dims[rank++] = a == dim ? call->ints[1][i] : self->sizes[a];
    }
    etrt_runtime_tensor check = *o;
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, self->dtype, rank, dims));
  }
  int blocks = !unbind || !self->permuted;
  for (uint32_t i = 0; i < n && blocks; ++i) {
    const etrt_runtime_tensor *o = &values[list->u.tensor_list.items[i]].u.tensor;
    blocks = unbind ? !o->permuted : etrt_join_same_order(o, self);
  }
  int64_t outer;
  size_t inner;
  etrt_portable_split_dims(self, dim, &outer, &inner);
  int64_t offset = 0, ss[ETRT_MAX_RANK], src[ETRT_MAX_RANK], ds[ETRT_MAX_RANK];
  etrt_portable_strides(self, ss);
  etrt_join_strides(self, unbind ? dim : -1, src);
  for (uint32_t i = 0; i < n; ++i) {
    etrt_runtime_tensor *o = &values[list->u.tensor_list.items[i]].u.tensor;
    int64_t size = unbind ? 1 : call->ints[1][i];
    if (!blocks) {
      int64_t dims[ETRT_MAX_RANK];
      int32_t rank = 0;
      for (int32_t a = 0; a < self->rank; ++a) {
        if (a == dim && unbind) continue;
        dims[rank++] = a == dim ? size : self->sizes[a];
      }
      ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, o, self->dtype, rank, dims));
      etrt_join_strides(o, -1, ds);
      etrt_join_box(self, offset * ss[dim], src, o, 0, ds, rank, dims);
      offset += size;
      continue;
    }
    int64_t dims[ETRT_MAX_RANK];
    int32_t rank = 0;
    for (int32_t a = 0; a < self->rank; ++a) {
      if (a == dim && unbind) continue;
      dims[rank++] = a == dim ? size : self->sizes[a];
    }
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, o, self->dtype, rank, dims));
    for (int64_t r = 0; r < outer; ++r)
      memcpy((uint8_t *)o->data + (size_t)(r * size) * inner,
             (const uint8_t *)self->data + (size_t)(r * total + offset) * inner,
             (size_t)size * inner);
    offset += size;
  }
  return ETRT_OK;
}

static etrt_status etrt_portable_slice(etrt_kernel_call *call, etrt_value *values) {
  const etrt_portable_join_spec *spec = etrt_portable_join_of(call);
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  int32_t dim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_dim(call, call->ints[0][0], self->rank, &dim));
  const int64_t size = self->sizes[dim], step = call->ints[1][2];
  int64_t start = call->ints[1][0], end = call->ints[1][1];
  /* Python slice bounds: negative from the end, then clamped to [0, size]. */
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : start > size ? size : start;
  end = end < start ? start : end > size ? size : end;
  const int64_t count = (end - start + step - 1) / step;
  int64_t dims[ETRT_MAX_RANK];
  memcpy(dims, self->sizes, (size_t)self->rank * sizeof *dims);
  dims[dim] = count;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, self->dtype, self->rank, dims));
  if (!etrt_join_same_order(self, out)) {
    int64_t ss[ETRT_MAX_RANK], ds[ETRT_MAX_RANK];
    etrt_portable_strides(self, ss);
    etrt_portable_strides(out, ds);
    const int64_t base = start * ss[dim];
    ss[dim] *= step;
    etrt_join_box(self, base, ss, out, 0, ds, self->rank, dims);
    return ETRT_OK;
  }
  int64_t outer;
  size_t inner;
  etrt_portable_split_dims(self, dim, &outer, &inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      memcpy((uint8_t *)out->data + (size_t)(o * count + j) * inner,
             (const uint8_t *)self->data + (size_t)(o * size + start + j * step) * inner, inner);
  return ETRT_OK;
}

static etrt_status etrt_portable_join_run(etrt_kernel_call *call, etrt_value *values,
                                          etrt_run_context *context) {
  (void)context;
  /* dims, sizes and bounds may be SymInts: read them again (no allocation). */
  ETRT_RETURN_IF_ERROR(etrt_portable_join_prepare(call, values));
  switch (etrt_portable_join_of(call)->kind) {
    case ETRT_JOIN_CAT:
    case ETRT_JOIN_STACK:
      return etrt_portable_join(call, values);
    case ETRT_JOIN_SPLIT:
    case ETRT_JOIN_SPLIT_EQUAL:
    case ETRT_JOIN_UNBIND:
      return etrt_portable_part(call, values);
    default:
      return etrt_portable_slice(call, values);
  }
}

#define JOIN(var, name, nargs, kind, list, dim, out, sizes)              \
  static const etrt_portable_join_spec var = {                           \
      {name, nargs, etrt_portable_join_prepare, etrt_portable_join_run}, \
      kind,                                                              \
      list,                                                              \
      dim,                                                               \
      out,                                                               \
      sizes}

JOIN(cat, "aten::cat.out", 4, ETRT_JOIN_CAT, 0, 1, 2, -1);
JOIN(stack, "aten::stack.out", 4, ETRT_JOIN_STACK, 0, 1, 2, -1);
JOIN(split, "aten::split_with_sizes_copy.out", 5, ETRT_JOIN_SPLIT, 3, 2, -1, 1);
JOIN(split_equal, "aten::split_copy.Tensor_out", 5, ETRT_JOIN_SPLIT_EQUAL, 3, 2, -1, 1);
JOIN(unbind, "aten::unbind_copy.int_out", 4, ETRT_JOIN_UNBIND, 2, 1, -1, -1);
JOIN(slice, "aten::slice_copy.Tensor_out", 7, ETRT_JOIN_SLICE, -1, 1, 5, -1);

const etrt_kernel_def *const etrt_portable_concat[] = {
    &cat.def, &stack.def, &split.def, &split_equal.def, &unbind.def, &slice.def, NULL,
};
