/* Indexing by tensors: index.Tensor and index_put (ATen's advanced indexing with
 * integer index tensors), scatter / scatter_add, topk, narrow_copy and
 * native_dropout (inference: the identity and an all-true mask). Indices are
 * data: one out of range is an execute error naming the operator. Positions come
 * from each tensor's strides, so any dim order is read and written as it is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

static int etrt_portable_is_index_dtype(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_INT64 || dtype == ETRT_DTYPE_INT32;
}

static int64_t etrt_portable_index_load(const etrt_runtime_tensor *t, int64_t at) {
  return t->dtype == ETRT_DTYPE_INT64 ? ((const int64_t *)t->data)[at]
                                      : ((const int32_t *)t->data)[at];
}

/* ---- index.Tensor_out(self, Tensor?[] indices, *, out) and
 * index_put.out(self, Tensor?[] indices, Tensor values, bool accumulate, *, out). */

typedef struct etrt_portable_advanced {
  const etrt_runtime_tensor *index[ETRT_MAX_RANK]; /* per dim of self; NULL: taken whole */
  int32_t num_indexed, first, adjacent;
  int32_t rank_b; /* the broadcast index shape */
  int64_t b[ETRT_MAX_RANK];
  int64_t index_strides[ETRT_MAX_RANK][ETRT_MAX_RANK];
  int32_t rank; /* the result: self's dims with the indexed ones replaced by b */
  int64_t dims[ETRT_MAX_RANK];
} etrt_portable_advanced;

static etrt_status etrt_portable_indices_prepare(etrt_kernel_call *call, const etrt_value *values,
                                                 const etrt_runtime_tensor *self) {
  const etrt_value *list = &values[call->args[1]];
  if (list->tag != ETRT_VALUE_OPTIONAL_TENSOR_LIST && list->tag != ETRT_VALUE_TENSOR_LIST)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument 1 (indices) must be a tensor list");
  if (list->u.tensor_list.count > (uint32_t)self->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%u indices for a tensor of rank %d",
                      list->u.tensor_list.count, self->rank);
  for (uint32_t i = 0; i < list->u.tensor_list.count; ++i) {
    int32_t id = list->u.tensor_list.items[i];
    if (id < 0 || values[id].tag == ETRT_VALUE_NONE) continue;
    if (values[id].tag != ETRT_VALUE_TENSOR)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "index %u is not a tensor", i);
    const etrt_runtime_tensor *t = &values[id].u.tensor;
    if (!etrt_portable_is_index_dtype(t->dtype))
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "index %u is %s; integer index tensors are supported (a bool mask has a "
                        "data-dependent shape)",
                        i, etrt_dtype_name(t->dtype));
    if (t->device.type != ETRT_DEVICE_CPU)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "index %u is planned on a device", i);
  }
  return ETRT_OK;
}

static etrt_status etrt_portable_advanced_plan(const etrt_kernel_call *call,
                                               const etrt_value *values,
                                               const etrt_runtime_tensor *self,
                                               etrt_portable_advanced *a) {
  memset(a, 0, sizeof *a);
  const etrt_value *list = &values[call->args[1]];
  int32_t last = -1;
  a->first = -1;
  a->adjacent = 1;
  for (uint32_t i = 0; i < list->u.tensor_list.count; ++i) {
    int32_t id = list->u.tensor_list.items[i];
    if (id < 0 || values[id].tag != ETRT_VALUE_TENSOR) continue;
    const etrt_runtime_tensor *t = &values[id].u.tensor;
    a->index[i] = t;
    if (a->first < 0) a->first = (int32_t)i;
    if (last >= 0 && (int32_t)i != last + 1) a->adjacent = 0;
    last = (int32_t)i;
    ++a->num_indexed;
    if (t->rank > a->rank_b) a->rank_b = t->rank;
  }
  for (int32_t d = 0; d < a->rank_b; ++d) a->b[d] = 1;
  for (int32_t i = 0; i < ETRT_MAX_RANK; ++i) {
    const etrt_runtime_tensor *t = a->index[i];
    if (t == NULL) continue;
    for (int32_t d = 0; d < t->rank; ++d) {
      int64_t *at = &a->b[a->rank_b - t->rank + d];
      if (t->sizes[d] == *at || t->sizes[d] == 1) continue;
      if (*at != 1)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): the index tensors do not broadcast together",
                          call->def->name, call->instruction);
      *at = t->sizes[d];
    }
  }
  if (a->num_indexed == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): no index tensor",
                      call->def->name, call->instruction);
  for (int32_t i = 0; i < self->rank; ++i) {
    const etrt_runtime_tensor *t = a->index[i];
    if (t == NULL) continue;
    int64_t own[ETRT_MAX_RANK];
    etrt_portable_strides(t, own);
    for (int32_t d = 0; d < t->rank; ++d)
      a->index_strides[i][a->rank_b - t->rank + d] = t->sizes[d] == 1 ? 0 : own[d];
  }
  /* ATen: adjacent indexed dims are replaced in place by the broadcast shape; apart,
   * the broadcast shape comes first. */
  int32_t r = 0;
  if (!a->adjacent)
    for (int32_t d = 0; d < a->rank_b; ++d) a->dims[r++] = a->b[d];
  for (int32_t i = 0; i < self->rank; ++i) {
    if (a->index[i] == NULL) {
      a->dims[r++] = self->sizes[i];
    } else if (a->adjacent && i == a->first) {
      for (int32_t d = 0; d < a->rank_b; ++d) a->dims[r++] = a->b[d];
    }
  }
  if (r > ETRT_MAX_RANK)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s (instruction %u): the result has rank %d",
                      call->def->name, call->instruction, r);
  a->rank = r;
  return ETRT_OK;
}

/* For result position `index` (a->rank entries), the element's offset in self (with
 * self's strides `xs`) and in a tensor of self's shape with strides `ys`; an index out
 * of range is an error. */
static etrt_status etrt_portable_advanced_source(
    const etrt_kernel_call *call, const etrt_runtime_tensor *self, const etrt_portable_advanced *a,
    const int64_t *index, const int64_t *xs, const int64_t *ys, int64_t *offset, int64_t *other) {
  const int64_t *bi = a->adjacent ? index + a->first : index;
  int32_t r = a->adjacent ? 0 : a->rank_b;
  int64_t at = 0, at_other = 0;
  for (int32_t i = 0; i < self->rank; ++i) {
    if (a->index[i] == NULL) {
      at += index[r] * xs[i];
      at_other += index[r++] * ys[i];
      continue;
    }
    if (a->adjacent && i == a->first) r += a->rank_b;
    int64_t pos = 0;
    for (int32_t d = 0; d < a->rank_b; ++d) pos += bi[d] * a->index_strides[i][d];
    int64_t v = etrt_portable_index_load(a->index[i], pos);
    if (v < 0) v += self->sizes[i];
    if (v < 0 || v >= self->sizes[i])
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): index %lld is out of range for dim %d of size %lld",
                        call->def->name, call->instruction,
                        (long long)etrt_portable_index_load(a->index[i], pos), i,
                        (long long)self->sizes[i]);
    at += v * xs[i];
    at_other += v * ys[i];
  }
  *offset = at;
  *other = at_other;
  return ETRT_OK;
}

/* The tensor written: index.Tensor_out's and index_put.out's out, index_put_'s self
 * (its five arguments end with the return value). */
static uint32_t etrt_portable_index_out(const etrt_kernel_call *call) {
  return call->def->num_args == 6 ? 4 : call->def->num_args == 5 ? 0 : 2;
}

static etrt_status etrt_portable_index_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  const int put = call->def->num_args >= 5;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, etrt_portable_index_out(call), &out));
  if (out->dtype != self->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor is %s, self %s",
                      etrt_dtype_name(out->dtype), etrt_dtype_name(self->dtype));
  if (put) {
    const etrt_runtime_tensor *v = NULL;
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 2, &v));
    if (v->dtype != self->dtype)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the values are %s, self %s",
                        etrt_dtype_name(v->dtype), etrt_dtype_name(self->dtype));
    int64_t accumulate = 0;
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &accumulate));
    call->scalars[0] = (double)accumulate;
  }
  return etrt_portable_indices_prepare(call, values, self);
}

static etrt_status etrt_portable_index_run(etrt_kernel_call *call, etrt_value *values,
                                           etrt_run_context *context) {
  (void)context;
  const int put = call->def->num_args >= 5;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[etrt_portable_index_out(call)]].u.tensor;
  etrt_portable_advanced a;
  ETRT_RETURN_IF_ERROR(etrt_portable_advanced_plan(call, values, self, &a));
  const size_t item = etrt_dtype_size(self->dtype);
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], vs[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  const etrt_runtime_tensor *v = put ? &values[call->args[2]].u.tensor : NULL;
  if (put) {
    /* The result is self with the indexed elements replaced (or added to). */
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, self->rank, self->sizes));
    etrt_portable_strides(out, ys);
    if (v->rank > a.rank)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the values (rank %d) do not broadcast to the "
                        "indexed shape (rank %d)",
                        call->def->name, call->instruction, v->rank, a.rank);
    int64_t own[ETRT_MAX_RANK];
    etrt_portable_strides(v, own);
    for (int32_t d = 0; d < v->rank; ++d) {
      int64_t want = a.dims[a.rank - v->rank + d];
      if (v->sizes[d] != want && v->sizes[d] != 1)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): the values' dim %d (%lld) does not broadcast to "
                          "%lld",
                          call->def->name, call->instruction, d, (long long)v->sizes[d],
                          (long long)want);
      vs[a.rank - v->rank + d] = v->sizes[d] == 1 ? 0 : own[d];
    }
    /* Copy self into out position by position (their dim orders may differ). */
    int64_t index[ETRT_MAX_RANK] = {0}, numel = etrt_portable_numel(self);
    for (int64_t e = 0; e < numel; ++e) {
      int64_t src = 0, dst = 0;
      for (int32_t d = 0; d < self->rank; ++d) {
        src += index[d] * xs[d];
        dst += index[d] * ys[d];
      }
      if (out->data != self->data)
        memcpy((uint8_t *)out->data + (size_t)dst * item,
               (const uint8_t *)self->data + (size_t)src * item, item);
      for (int32_t d = self->rank - 1; d >= 0; --d) {
        if (++index[d] < self->sizes[d]) break;
        index[d] = 0;
      }
    }
  } else {
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, a.rank, a.dims));
    etrt_portable_strides(out, ys);
  }
  int64_t index[ETRT_MAX_RANK] = {0}, numel = 1;
  for (int32_t d = 0; d < a.rank; ++d) numel *= a.dims[d];
  for (int64_t e = 0; e < numel; ++e) {
    int64_t src = 0, dst = 0, here = 0;
    ETRT_RETURN_IF_ERROR(
        etrt_portable_advanced_source(call, self, &a, index, xs, put ? ys : xs, &src, &dst));
    if (put) {
      int64_t pos = 0;
      for (int32_t d = 0; d < a.rank; ++d) pos += index[d] * vs[d];
      uint8_t *at = (uint8_t *)out->data + (size_t)dst * item;
      const uint8_t *from = (const uint8_t *)v->data + (size_t)pos * item;
      if (call->scalars[0] != 0) {
        double sum =
            etrt_portable_scalar_load(out->dtype, at) + etrt_portable_scalar_load(v->dtype, from);
        etrt_portable_scalar_store(sum, out->dtype, at);
      } else {
        memcpy(at, from, item);
      }
    } else {
      for (int32_t d = 0; d < a.rank; ++d) here += index[d] * ys[d];
      memcpy((uint8_t *)out->data + (size_t)here * item,
             (const uint8_t *)self->data + (size_t)src * item, item);
    }
    for (int32_t d = a.rank - 1; d >= 0; --d) {
      if (++index[d] < a.dims[d]) break;
      index[d] = 0;
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def index_tensor = {"aten::index.Tensor_out", 4,
                                             etrt_portable_index_prepare, etrt_portable_index_run};
static const etrt_kernel_def index_put = {"aten::index_put.out", 6, etrt_portable_index_prepare,
                                          etrt_portable_index_run};
/* index_put_(self, Tensor?[] indices, Tensor values, bool accumulate) -> self: in place
 * (the copy of self into out is skipped, the bytes being the same). */
static const etrt_kernel_def index_put_inplace = {
    "aten::index_put_", 5, etrt_portable_index_prepare, etrt_portable_index_run};

/* ---- scatter.src_out(self, dim, index, src, *, out), scatter.value_out(self, dim,
 * index, Scalar value, *, out), scatter_add.out(self, dim, index, src, *, out): out is
 * self, then out[.., index[i], ..] = src[i] (or += src[i]) for every i of index. */
typedef struct etrt_portable_scatter_spec {
  etrt_kernel_def def;
  int value; /* arg 3 is a Scalar */
  int add;
} etrt_portable_scatter_spec;

static etrt_status etrt_portable_scatter_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_scatter_spec *spec = (const etrt_portable_scatter_spec *)call->def;
  const etrt_runtime_tensor *self = NULL, *index = NULL, *src = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 2, &index));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 4, &out));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &call->ints[0][0]));
  if (index->dtype != ETRT_DTYPE_INT64)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 2 (index) must be int64, not %s",
                      etrt_dtype_name(index->dtype));
  if (spec->value) {
    ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, 3, &call->scalars[0]));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 3, &src));
    if (src->dtype != self->dtype)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 3 (src) is %s, self %s",
                        etrt_dtype_name(src->dtype), etrt_dtype_name(self->dtype));
  }
  if (out->dtype != self->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor is %s, self %s",
                      etrt_dtype_name(out->dtype), etrt_dtype_name(self->dtype));
  return ETRT_OK;
}

static etrt_status etrt_portable_scatter_run(etrt_kernel_call *call, etrt_value *values,
                                             etrt_run_context *context) {
  (void)context;
  const etrt_portable_scatter_spec *spec = (const etrt_portable_scatter_spec *)call->def;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *index = &values[call->args[2]].u.tensor;
  const etrt_runtime_tensor *src = spec->value ? NULL : &values[call->args[3]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[4]].u.tensor;
  const int32_t rank = self->rank;
  int64_t dim = call->ints[0][0] < 0 ? call->ints[0][0] + (rank ? rank : 1) : call->ints[0][0];
  if (dim < 0 || dim >= (rank ? rank : 1) || (rank && index->rank != rank))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): dim %lld or the index's rank %d does not fit self's "
                      "rank %d",
                      call->def->name, call->instruction, (long long)call->ints[0][0], index->rank,
                      rank);
  for (int32_t d = 0; d < rank; ++d)
    if (index->sizes[d] > (d == dim ? INT64_MAX : self->sizes[d]) ||
        (src != NULL && index->sizes[d] > src->sizes[d]))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the index's dim %d (%lld) is larger than self's "
                        "or src's",
                        call->def->name, call->instruction, d, (long long)index->sizes[d]);
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, rank, self->sizes));
  const size_t item = etrt_dtype_size(self->dtype);
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], is[ETRT_MAX_RANK], ss[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  etrt_portable_strides(index, is);
  if (src) etrt_portable_strides(src, ss);
  int64_t pos[ETRT_MAX_RANK] = {0}, numel = etrt_portable_numel(self);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t a = 0, b = 0;
    for (int32_t d = 0; d < rank; ++d) {
      a += pos[d] * xs[d];
      b += pos[d] * ys[d];
    }
    if (out->data != self->data)
      memcpy((uint8_t *)out->data + (size_t)b * item,
             (const uint8_t *)self->data + (size_t)a * item, item);
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < self->sizes[d]) break;
      pos[d] = 0;
    }
  }
  uint8_t value[8];
  if (spec->value) etrt_portable_scalar_store(call->scalars[0], out->dtype, value);
  memset(pos, 0, sizeof pos);
  numel = etrt_portable_numel(index);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t at_index = 0, at_src = 0, at_out = 0;
    for (int32_t d = 0; d < rank; ++d) {
      at_index += pos[d] * is[d];
      at_src += pos[d] * ss[d];
    }
    int64_t target = rank ? ((const int64_t *)index->data)[at_index] : 0;
    if (target < 0) target += rank ? self->sizes[dim] : 1;
    if (target < 0 || target >= (rank ? self->sizes[dim] : 1))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): index %lld is out of range for dim %lld of size "
                        "%lld",
                        call->def->name, call->instruction,
                        (long long)((const int64_t *)index->data)[at_index], (long long)dim,
                        (long long)(rank ? self->sizes[dim] : 1));
    for (int32_t d = 0; d < rank; ++d) at_out += (d == dim ? target : pos[d]) * ys[d];
    uint8_t *to = (uint8_t *)out->data + (size_t)at_out * item;
    const uint8_t *from = spec->value ? value : (const uint8_t *)src->data + (size_t)at_src * item;
    if (spec->add)
      etrt_portable_scalar_store(
          etrt_portable_scalar_load(out->dtype, to) + etrt_portable_scalar_load(out->dtype, from),
          out->dtype, to);
    else
      memcpy(to, from, item);
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < index->sizes[d]) break;
      pos[d] = 0;
    }
  }
  return ETRT_OK;
}

#define SCATTER(var, name, value_, add_)          \
  static const etrt_portable_scatter_spec var = { \
      {name, 6, etrt_portable_scatter_prepare, etrt_portable_scatter_run}, value_, add_}
SCATTER(scatter_src, "aten::scatter.src_out", 0, 0);
SCATTER(scatter_value, "aten::scatter.value_out", 1, 0);
SCATTER(scatter_add, "aten::scatter_add.out", 0, 1);

/* ---- topk.values(self, SymInt k, int dim, bool largest, bool sorted, *, values,
 * indices): the k largest (smallest) along dim, in order; NaN counts as the largest,
 * ties keep the lower index first. Scratch for one line, sized at prepare. */
typedef struct etrt_portable_topk_item {
  double value;
  int64_t index;
} etrt_portable_topk_item;

static int etrt_portable_topk_before(const etrt_portable_topk_item *a,
                                     const etrt_portable_topk_item *b, int largest) {
  int an = isnan(a->value), bn = isnan(b->value);
  if (an != bn) return largest ? an : bn;
  if (!an && a->value != b->value) return largest ? a->value > b->value : a->value < b->value;
  return a->index < b->index;
}

static etrt_status etrt_portable_topk_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *v = NULL, *i = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 5, &v));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 6, &i));
  if (v->dtype != self->dtype || i->dtype != ETRT_DTYPE_INT64)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the values must be %s and the indices int64 (they are %s and %s)",
                      etrt_dtype_name(self->dtype), etrt_dtype_name(v->dtype),
                      etrt_dtype_name(i->dtype));
  int64_t largest = 1, dim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &dim));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &largest));
  call->scalars[1] = (double)largest;
  if (dim < 0) dim += self->rank ? self->rank : 1;
  if (dim < 0 || dim >= (self->rank ? self->rank : 1))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "argument 2 (dim) is out of range for rank %d",
                      self->rank);
  call->ints[0][0] = dim;
  int64_t line = self->rank ? self->max_sizes[dim] : 1;
  call->scratch_size = (size_t)(line > 0 ? line : 1) * sizeof(etrt_portable_topk_item);
  call->scratch = malloc(call->scratch_size);
  if (call->scratch == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for topk's scratch");
  return ETRT_OK;
}

static etrt_status etrt_portable_topk_run(etrt_kernel_call *call, etrt_value *values,
                                          etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *v = &values[call->args[5]].u.tensor;
  etrt_runtime_tensor *ix = &values[call->args[6]].u.tensor;
  int64_t k = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &k)); /* a SymInt */
  const int32_t rank = self->rank;
  const int64_t dim = call->ints[0][0], line = rank ? self->sizes[dim] : 1;
  if (k < 0 || k > line)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): k = %lld is out of range for a dim of size %lld",
                      call->def->name, call->instruction, (long long)k, (long long)line);
  int64_t dims[ETRT_MAX_RANK];
  memcpy(dims, self->sizes, sizeof dims);
  if (rank) dims[dim] = k;
  etrt_runtime_tensor check = *ix;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, ETRT_DTYPE_INT64, rank, dims));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, v, v->dtype, rank, dims));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, ix, ETRT_DTYPE_INT64, rank, dims));
  int64_t xs[ETRT_MAX_RANK], vs[ETRT_MAX_RANK], is[ETRT_MAX_RANK], pos[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  etrt_portable_strides(v, vs);
  etrt_portable_strides(ix, is);
  const int64_t x_step = rank ? xs[dim] : 0, v_step = rank ? vs[dim] : 0,
                i_step = rank ? is[dim] : 0;
  int64_t lines = 1;
  for (int32_t d = 0; d < rank; ++d)
    if (d != dim) lines *= self->sizes[d];
  const size_t item = etrt_dtype_size(self->dtype);
  const int largest = call->scalars[1] != 0;
  etrt_portable_topk_item *items = call->scratch;
  for (int64_t l = 0; l < lines; ++l) {
    int64_t xb = 0, vb = 0, ib = 0;
    for (int32_t d = 0; d < rank; ++d) {
      xb += pos[d] * xs[d];
      vb += pos[d] * vs[d];
      ib += pos[d] * is[d];
    }
    /* Selection by insertion into the first k: O(n k), no allocation. */
    int64_t filled = 0;
    for (int64_t e = 0; e < line; ++e) {
      etrt_portable_topk_item it = {
          etrt_portable_scalar_load(self->dtype,
                                    (const uint8_t *)self->data + (size_t)(xb + e * x_step) * item),
          e};
      if (filled == k && (k == 0 || !etrt_portable_topk_before(&it, &items[k - 1], largest)))
        continue;
      int64_t at = filled < k ? filled++ : k - 1;
      while (at > 0 && etrt_portable_topk_before(&it, &items[at - 1], largest)) {
        items[at] = items[at - 1];
        --at;
      }
      items[at] = it;
    }
    for (int64_t j = 0; j < k; ++j) {
      memcpy((uint8_t *)v->data + (size_t)(vb + j * v_step) * item,
             (const uint8_t *)self->data + (size_t)(xb + items[j].index * x_step) * item, item);
      ((int64_t *)ix->data)[ib + j * i_step] = items[j].index;
    }
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (d == dim) continue;
      if (++pos[d] < self->sizes[d]) break;
      pos[d] = 0;
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def topk = {"aten::topk.values", 8, etrt_portable_topk_prepare,
                                     etrt_portable_topk_run};

/* ---- narrow_copy.out(self, int dim, SymInt start, SymInt length, *, out). */
static etrt_status etrt_portable_narrow_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 4, &out));
  if (out->dtype != self->dtype || self->rank == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "narrow takes a tensor of rank 1 or more and an out tensor of its dtype");
  return ETRT_OK;
}

static etrt_status etrt_portable_narrow_run(etrt_kernel_call *call, etrt_value *values,
                                            etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[4]].u.tensor;
  int64_t dim = 0, start = 0, length = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &start));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &length));
  if (dim < 0) dim += self->rank;
  if (dim >= 0 && dim < self->rank && start < 0) start += self->sizes[dim];
  if (dim < 0 || dim >= self->rank || start < 0 || length < 0 || start + length > self->sizes[dim])
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): dim %lld, start %lld, length %lld out of range",
                      call->def->name, call->instruction, (long long)dim, (long long)start,
                      (long long)length);
  int64_t dims[ETRT_MAX_RANK];
  memcpy(dims, self->sizes, sizeof dims);
  dims[dim] = length;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, self->rank, dims));
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], pos[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(out);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t a = start * xs[dim], b = 0;
    for (int32_t d = 0; d < self->rank; ++d) {
      a += pos[d] * xs[d];
      b += pos[d] * ys[d];
    }
    memcpy((uint8_t *)out->data + (size_t)b * item, (const uint8_t *)self->data + (size_t)a * item,
           item);
    for (int32_t d = self->rank - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def narrow = {"aten::narrow_copy.out", 6, etrt_portable_narrow_prepare,
                                       etrt_portable_narrow_run};

/* ---- select_scatter.out(self, src, int dim, SymInt index, *, out) and
 * slice_scatter.out(self, src, int dim, SymInt? start, SymInt? end, SymInt step, *,
 * out): out is self with src written over the selected index (slice) of dim. */
static etrt_status etrt_portable_embed_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *src = NULL, *out = NULL;
  const uint32_t out_arg = call->def->num_args == 6 ? 4 : 6;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &src));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, out_arg, &out));
  if (src->dtype != self->dtype || out->dtype != self->dtype || self->rank == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "self, src and the out tensor must share one dtype (%s, %s, %s) and have "
                      "rank 1 or more",
                      etrt_dtype_name(self->dtype), etrt_dtype_name(src->dtype),
                      etrt_dtype_name(out->dtype));
  return ETRT_OK;
}

static etrt_status etrt_portable_embed_run(etrt_kernel_call *call, etrt_value *values,
                                           etrt_run_context *context) {
  (void)context;
  const int select = call->def->num_args == 6;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *src = &values[call->args[1]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[select ? 4 : 6]].u.tensor;
  int64_t dim = 0, start = 0, end = INT64_MAX, step = 1;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &dim));
  if (dim < 0) dim += self->rank;
  const int64_t size = dim >= 0 && dim < self->rank ? self->sizes[dim] : 0;
  if (select) {
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &start));
    if (start < 0) start += size;
    end = start + 1;
  } else {
    if (values[call->args[3]].tag != ETRT_VALUE_NONE)
      ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &start));
    if (values[call->args[4]].tag != ETRT_VALUE_NONE)
      ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 4, &end));
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 5, &step));
    /* Python slice bounds: negative from the end, then clamped to [0, size]. */
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = start < 0 ? 0 : start > size ? size : start;
    end = end < start ? start : end > size ? size : end;
  }
  const int64_t count = step > 0 ? (end - start + step - 1) / step : -1;
  /* src has self's shape with dim of `count` (slice) or without dim (select). */
  int shape_ok = dim >= 0 && dim < self->rank && count >= 0 && start >= 0 &&
                 (select ? start < size : 1) && src->rank == self->rank - (select ? 1 : 0);
  for (int32_t d = 0, k = 0; shape_ok && d < self->rank; ++d) {
    if (d == dim) {
      if (!select && src->sizes[k++] != count) shape_ok = 0;
      continue;
    }
    if (src->sizes[k++] != self->sizes[d]) shape_ok = 0;
  }
  if (!shape_ok)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): src (rank %d) does not fit dim %lld, %lld..%lld step "
                      "%lld of self (rank %d)",
                      call->def->name, call->instruction, src->rank, (long long)dim,
                      (long long)start, (long long)end, (long long)step, self->rank);
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, self->rank, self->sizes));
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], ss[ETRT_MAX_RANK], pos[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, xs);
  etrt_portable_strides(out, ys);
  etrt_portable_strides(src, ss);
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(self);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t i = pos[dim], a = 0, b = 0, c = 0;
    int from_src = i >= start && i < end && (i - start) % step == 0;
    for (int32_t d = 0, k = 0; d < self->rank; ++d) {
      a += pos[d] * xs[d];
      b += pos[d] * ys[d];
      if (d == dim) {
        if (!select) c += ((i - start) / step) * ss[k++];
      } else {
        c += pos[d] * ss[k++];
      }
    }
    const uint8_t *from = from_src ? (const uint8_t *)src->data + (size_t)c * item
                                   : (const uint8_t *)self->data + (size_t)a * item;
    memcpy((uint8_t *)out->data + (size_t)b * item, from, item);
    for (int32_t d = self->rank - 1; d >= 0; --d) {
      if (++pos[d] < self->sizes[d]) break;
      pos[d] = 0;
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def select_scatter = {
    "aten::select_scatter.out", 6, etrt_portable_embed_prepare, etrt_portable_embed_run};
static const etrt_kernel_def slice_scatter = {"aten::slice_scatter.out", 8,
                                              etrt_portable_embed_prepare, etrt_portable_embed_run};

/* ---- nonzero.out(self, *, out): the [n, rank] int64 positions of the non-zero
 * elements in row-major order, and masked_select.out(self, mask, *, out): the elements
 * where the mask (broadcast to self's shape) is true. Both have a data-dependent
 * length: the out tensor must be dynamic and large enough. */
static etrt_status etrt_portable_select_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const int masked = call->def->num_args == 4;
  const etrt_runtime_tensor *self = NULL, *out = NULL, *mask = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, masked ? 2 : 1, &out));
  if (masked) {
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &mask));
    if (mask->dtype != ETRT_DTYPE_BOOL || mask->rank > self->rank || out->dtype != self->dtype)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "masked_select takes a bool mask of at most self's rank and an out "
                        "tensor of self's dtype");
  } else if (out->dtype != ETRT_DTYPE_INT64) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor must be int64, not %s",
                      etrt_dtype_name(out->dtype));
  }
  return ETRT_OK;
}

static etrt_status etrt_portable_select_run(etrt_kernel_call *call, etrt_value *values,
                                            etrt_run_context *context) {
  (void)context;
  const int masked = call->def->num_args == 4;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *mask = masked ? &values[call->args[1]].u.tensor : NULL;
  etrt_runtime_tensor *out = &values[call->args[masked ? 2 : 1]].u.tensor;
  const int32_t rank = self->rank;
  int64_t xs[ETRT_MAX_RANK], ms[ETRT_MAX_RANK] = {0}, own[ETRT_MAX_RANK];
  etrt_portable_strides(self, xs);
  if (mask) {
    etrt_portable_strides(mask, own);
    for (int32_t d = 0; d < mask->rank; ++d) {
      int32_t at = rank - mask->rank + d;
      if (mask->sizes[d] != self->sizes[at] && mask->sizes[d] != 1)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): the mask's dim %d (%lld) does not broadcast to "
                          "%lld",
                          call->def->name, call->instruction, d, (long long)mask->sizes[d],
                          (long long)self->sizes[at]);
      ms[at] = mask->sizes[d] == 1 ? 0 : own[d];
    }
  }
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(self);
  /* Two passes: the count (to fit the out tensor), then the writes. */
  int64_t found = 0;
  for (int pass = 0; pass < 2; ++pass) {
    int64_t pos[ETRT_MAX_RANK] = {0}, written = 0;
    for (int64_t e = 0; e < numel; ++e) {
      int64_t a = 0, m = 0;
      for (int32_t d = 0; d < rank; ++d) {
        a += pos[d] * xs[d];
        m += pos[d] * ms[d];
      }
      int take = mask ? ((const uint8_t *)mask->data)[m] != 0
                      : etrt_portable_scalar_load(
                            self->dtype, (const uint8_t *)self->data + (size_t)a * item) != 0.0;
      if (take) {
        if (pass == 1 && mask)
          memcpy((uint8_t *)out->data + (size_t)written * item,
                 (const uint8_t *)self->data + (size_t)a * item, item);
        else if (pass == 1)
          for (int32_t d = 0; d < rank; ++d) ((int64_t *)out->data)[written * rank + d] = pos[d];
        ++written;
      }
      for (int32_t d = rank - 1; d >= 0; --d) {
        if (++pos[d] < self->sizes[d]) break;
        pos[d] = 0;
      }
    }
    if (pass == 0) {
      found = written;
      int64_t dims[2] = {found, rank};
      ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, mask ? 1 : 2, dims));
    }
  }
  return ETRT_OK;
}
static const etrt_kernel_def nonzero = {"aten::nonzero.out", 3, etrt_portable_select_prepare,
                                        etrt_portable_select_run};
static const etrt_kernel_def masked_select = {
    "aten::masked_select.out", 4, etrt_portable_select_prepare, etrt_portable_select_run};

/* ---- native_dropout.out(input, float p, bool? train, *, out0, out1): a program
 * exported for inference runs it with train False: the input and an all-true mask.
 * Training (random masks) is refused at load. */
static etrt_status etrt_portable_dropout_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *t = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
  const etrt_dtype dtype = t->dtype;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 3, &t));
  if (t->dtype != dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "out0 is %s, the input %s",
                      etrt_dtype_name(t->dtype), etrt_dtype_name(dtype));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 4, &t));
  if (t->dtype != ETRT_DTYPE_BOOL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "out1 (the mask) must be bool");
  const etrt_value *train = &values[call->args[2]];
  if (train->tag == ETRT_VALUE_BOOL && train->u.b)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "argument 2 (train) is true: random dropout masks are not supported");
  return ETRT_OK;
}

static etrt_status etrt_portable_dropout_run(etrt_kernel_call *call, etrt_value *values,
                                             etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *x = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *y = &values[call->args[3]].u.tensor;
  etrt_runtime_tensor *mask = &values[call->args[4]].u.tensor;
  etrt_runtime_tensor check = *mask;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check, ETRT_DTYPE_BOOL, x->rank, x->sizes));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, y, y->dtype, x->rank, x->sizes));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, mask, ETRT_DTYPE_BOOL, x->rank, x->sizes));
  int64_t xs[ETRT_MAX_RANK], ys[ETRT_MAX_RANK], pos[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(x, xs);
  etrt_portable_strides(y, ys);
  const size_t item = etrt_dtype_size(x->dtype);
  const int64_t numel = etrt_portable_numel(x);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t a = 0, b = 0;
    for (int32_t d = 0; d < x->rank; ++d) {
      a += pos[d] * xs[d];
      b += pos[d] * ys[d];
    }
    if (y->data != x->data)
      memcpy((uint8_t *)y->data + (size_t)b * item, (const uint8_t *)x->data + (size_t)a * item,
             item);
    for (int32_t d = x->rank - 1; d >= 0; --d) {
      if (++pos[d] < x->sizes[d]) break;
      pos[d] = 0;
    }
  }
  memset(mask->data, 1, (size_t)numel);
  return ETRT_OK;
}
static const etrt_kernel_def dropout = {"aten::native_dropout.out", 6,
                                        etrt_portable_dropout_prepare, etrt_portable_dropout_run};

/* repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size, out): index i
 * repeated repeats[i] times; the length is the data's (a dynamic out tensor). */
static etrt_status etrt_portable_repeat_interleave_prepare(etrt_kernel_call *call,
                                                           const etrt_value *values) {
  const etrt_runtime_tensor *repeats = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &repeats));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 2, &out));
  if ((repeats->dtype != ETRT_DTYPE_INT32 && repeats->dtype != ETRT_DTYPE_INT64) ||
      repeats->rank > 1 || out->dtype != repeats->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "repeats (%s, rank %d) must be a 1-D int32 or int64 tensor, and out (%s) of "
                      "its dtype",
                      etrt_dtype_name(repeats->dtype), repeats->rank, etrt_dtype_name(out->dtype));
  return ETRT_OK;
}

static etrt_status etrt_portable_repeat_interleave_run(etrt_kernel_call *call, etrt_value *values,
                                                       etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *repeats = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[2]].u.tensor;
  const int64_t n = etrt_portable_numel(repeats);
  const size_t item = etrt_dtype_size(repeats->dtype);
  int64_t strides[ETRT_MAX_RANK] = {1}, total = 0;
  etrt_portable_strides(repeats, strides);
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = (int64_t)etrt_portable_scalar_load(
        repeats->dtype, (const uint8_t *)repeats->data + (size_t)(i * strides[0]) * item);
    if (r < 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): repeats[%lld] is %lld",
                        call->def->name, call->instruction, (long long)i, (long long)r);
    total += r;
  }
  if (values[call->args[1]].tag != ETRT_VALUE_NONE) {
    int64_t given = 0;
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &given));
    if (given != total)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): output_size is %lld, the repeats add up to %lld",
                        call->def->name, call->instruction, (long long)given, (long long)total);
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, 1, &total));
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = (int64_t)etrt_portable_scalar_load(
        repeats->dtype, (const uint8_t *)repeats->data + (size_t)(i * strides[0]) * item);
    for (int64_t k = 0; k < r; ++k, ++at)
      ETRT_RETURN_IF_ERROR(etrt_portable_scalar_store((double)i, out->dtype,
                                                      (uint8_t *)out->data + (size_t)at * item));
  }
  return ETRT_OK;
}

static const etrt_kernel_def repeat_interleave = {"aten::repeat_interleave.Tensor_out", 4,
                                                  etrt_portable_repeat_interleave_prepare,
                                                  etrt_portable_repeat_interleave_run};

/* masked_scatter.out(self, mask, source, *, out): self, with the positions where the
 * mask (broadcast to self's shape) is true taking source's elements one after another
 * in row-major order. Too few source elements is an execute error, nothing written. */
static etrt_status etrt_portable_masked_scatter_prepare(etrt_kernel_call *call,
                                                        const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *mask = NULL, *source = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &mask));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 2, &source));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 3, &out));
  if (mask->dtype != ETRT_DTYPE_BOOL || source->dtype != self->dtype || out->dtype != self->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "the mask (%s) must be bool, source (%s) and out (%s) of self's dtype (%s)",
                      etrt_dtype_name(mask->dtype), etrt_dtype_name(source->dtype),
                      etrt_dtype_name(out->dtype), etrt_dtype_name(self->dtype));
  return ETRT_OK;
}

static etrt_status etrt_portable_masked_scatter_run(etrt_kernel_call *call, etrt_value *values,
                                                    etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const etrt_runtime_tensor *mask = &values[call->args[1]].u.tensor;
  const etrt_runtime_tensor *source = &values[call->args[2]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[3]].u.tensor;
  int64_t xs[ETRT_MAX_RANK], ms[ETRT_MAX_RANK] = {0}, own[ETRT_MAX_RANK], ys[ETRT_MAX_RANK];
  int64_t ss[ETRT_MAX_RANK], si[ETRT_MAX_RANK] = {0};
  if (mask->rank > self->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the mask (rank %d) does not broadcast to self (rank "
                      "%d)",
                      call->def->name, call->instruction, mask->rank, self->rank);
  etrt_portable_strides(mask, own);
  for (int32_t d = 0; d < mask->rank; ++d) {
    const int32_t at = self->rank - mask->rank + d;
    if (mask->sizes[d] != self->sizes[at] && mask->sizes[d] != 1)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the mask's dim %d (%lld) does not broadcast to %lld",
                        call->def->name, call->instruction, d, (long long)mask->sizes[d],
                        (long long)self->sizes[at]);
    ms[at] = mask->sizes[d] == 1 ? 0 : own[d];
  }
  etrt_portable_strides(self, xs);
  etrt_portable_strides(source, ss);
  const int64_t numel = etrt_portable_numel(self), available = etrt_portable_numel(source);
  /* Count first: a short source writes nothing. */
  int64_t index[ETRT_MAX_RANK] = {0}, needed = 0;
  for (int64_t e = 0; e < numel; ++e) {
    int64_t m = 0;
    for (int32_t d = 0; d < self->rank; ++d) m += index[d] * ms[d];
    needed += ((const uint8_t *)mask->data)[m] != 0;
    for (int32_t d = self->rank - 1; d >= 0; --d) {
      if (++index[d] < self->sizes[d]) break;
      index[d] = 0;
    }
  }
  if (needed > available)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): the mask selects %lld elements, source has %lld",
                      call->def->name, call->instruction, (long long)needed, (long long)available);
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, self->rank, self->sizes));
  etrt_portable_strides(out, ys);
  const size_t item = etrt_dtype_size(self->dtype);
  memset(index, 0, sizeof index);
  for (int64_t e = 0; e < numel; ++e) {
    int64_t m = 0, x = 0, y = 0, s = 0;
    for (int32_t d = 0; d < self->rank; ++d) {
      m += index[d] * ms[d];
      x += index[d] * xs[d];
      y += index[d] * ys[d];
    }
    const uint8_t *from = (const uint8_t *)self->data + (size_t)x * item;
    if (((const uint8_t *)mask->data)[m] != 0) {
      for (int32_t d = 0; d < source->rank; ++d) s += si[d] * ss[d];
      from = (const uint8_t *)source->data + (size_t)s * item;
      for (int32_t d = source->rank - 1; d >= 0; --d) {
        if (++si[d] < source->sizes[d]) break;
        si[d] = 0;
      }
    }
    memmove((uint8_t *)out->data + (size_t)y * item, from, item);
    for (int32_t d = self->rank - 1; d >= 0; --d) {
      if (++index[d] < self->sizes[d]) break;
      index[d] = 0;
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def masked_scatter = {"aten::masked_scatter.out", 5,
                                               etrt_portable_masked_scatter_prepare,
                                               etrt_portable_masked_scatter_run};

const etrt_kernel_def *const etrt_portable_index[] = {
    &index_tensor,   &nonzero,         &masked_select,     &select_scatter,
    &slice_scatter,  &index_put,       &index_put_inplace, &repeat_interleave,
    &masked_scatter, &scatter_src.def, &scatter_value.def, &scatter_add.def,
    &topk,           &narrow,          &dropout,           NULL,
};
