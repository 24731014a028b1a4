/* Views and copies as ExecuTorch defines them (every *_copy writes its own out
 * tensor): the byte copies (view_copy, unsqueeze_copy, squeeze_copy), which move
 * elements one by one in logical order when either tensor has another dim order
 * (channels-last); executorch_prim::et_view, the one true view, whose out tensor takes
 * self's bytes; and the engine-backed ones (clone, _clone_dim_order and
 * _to_dim_order_copy, which also convert between dim orders, permute_copy, t_copy,
 * transpose_copy, expand_copy, select_copy, index_select, embedding, gather,
 * constant_pad_nd, tril/triu, pixel_shuffle, repeat). */
#include <string.h>

#include "base/dtype.h"
#include "runtime/portable/portable.h"

typedef enum etrt_portable_copy_kind {
  ETRT_COPY_VIEW,      /* (self, size, *, out) */
  ETRT_COPY_UNSQUEEZE, /* (self, dim, *, out) */
  ETRT_COPY_SQUEEZE,   /* (self, dim or dims, *, out) */
  ETRT_COPY_ET_VIEW    /* et_view.default(self, size, out): out aliases self's bytes */
} etrt_portable_copy_kind;

typedef struct etrt_portable_copy_spec {
  etrt_kernel_def def;
  etrt_portable_copy_kind kind;
  int8_t out;
} etrt_portable_copy_spec;

static const etrt_portable_copy_spec *etrt_portable_copy_of(const etrt_kernel_call *call) {
  return (const etrt_portable_copy_spec *)call->def;
}

static etrt_status etrt_portable_copy_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_copy_spec *spec = etrt_portable_copy_of(call);
  const etrt_runtime_tensor *t = NULL;
  if (spec->kind == ETRT_COPY_ET_VIEW) {
    /* Another dim order would make the shared bytes mean other elements. */
    ETRT_RETURN_IF_ERROR(etrt_portable_contiguous_arg(call, values, 0, &t));
    ETRT_RETURN_IF_ERROR(etrt_portable_contiguous_arg(call, values, (uint32_t)spec->out, &t));
    const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
    if (t->dtype != self->dtype || t->device.type != self->device.type)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "the out tensor (%s) must have self's dtype (%s) and device",
                        etrt_dtype_name(t->dtype), etrt_dtype_name(self->dtype));
  } else {
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &t));
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &t));
  }
  uint32_t count = 0;
  switch (spec->kind) {
    case ETRT_COPY_ET_VIEW:
    case ETRT_COPY_VIEW:
    case ETRT_COPY_SQUEEZE:
      ETRT_RETURN_IF_ERROR(
          etrt_portable_ints_arg(call, values, 1, call->ints[0], ETRT_MAX_RANK, &count));
      break;
    case ETRT_COPY_UNSQUEEZE:
      ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &call->ints[0][0]));
      count = 1;
      break;
    default:
      break;
  }
  call->scalars[0] = count;
  return ETRT_OK;
}

/* The result's shape from self's and the arguments. */
static etrt_status etrt_portable_copy_shape(const etrt_kernel_call *call,
                                            const etrt_runtime_tensor *self, int32_t *rank,
                                            int64_t *dims) {
  const etrt_portable_copy_spec *spec = etrt_portable_copy_of(call);
  const uint32_t count = (uint32_t)call->scalars[0];
  const int64_t *ints = call->ints[0];
  switch (spec->kind) {
    case ETRT_COPY_ET_VIEW:
    case ETRT_COPY_VIEW: {
      int64_t known = 1, numel = 1;
      int infer = -1;
      for (int32_t i = 0; i < self->rank; ++i) numel *= self->sizes[i];
      for (uint32_t i = 0; i < count; ++i) {
        dims[i] = ints[i];
        if (ints[i] == -1 && infer < 0) {
          infer = (int)i;
        } else if (ints[i] < 0) {
          return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: size %u is %lld", call->def->name, i,
                            (long long)ints[i]);
        } else {
          known *= ints[i];
        }
      }
      if (infer >= 0) {
        if (known == 0 || numel % known != 0)
          return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                            "%s: %lld elements cannot be viewed with the given size",
                            call->def->name, (long long)numel);
        dims[infer] = numel / known;
        known = numel;
      }
      if (known != numel)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "%s (instruction %u): %lld elements cannot be viewed as %lld",
                          call->def->name, call->instruction, (long long)numel, (long long)known);
      *rank = (int32_t)count;
      return ETRT_OK;
    }
    case ETRT_COPY_UNSQUEEZE: {
      int64_t dim = ints[0] < 0 ? ints[0] + self->rank + 1 : ints[0];
      if (dim < 0 || dim > self->rank || self->rank >= ETRT_MAX_RANK)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: dim %lld is out of range for rank %d",
                          call->def->name, (long long)ints[0], self->rank);
      *rank = 0;
      for (int32_t i = 0; i <= self->rank; ++i)
        dims[(*rank)++] = i == dim ? 1 : self->sizes[i - (i > dim)];
      return ETRT_OK;
    }
    case ETRT_COPY_SQUEEZE: {
      int squeeze[ETRT_MAX_RANK] = {0};
      for (uint32_t i = 0; i < count; ++i) {
        int64_t dim = ints[i] < 0 ? ints[i] + self->rank : ints[i];
        if (dim < 0 || dim >= (self->rank ? self->rank : 1))
          return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: dim %lld is out of range for rank %d",
                            call->def->name, (long long)ints[i], self->rank);
        if (dim < self->rank) squeeze[dim] = self->sizes[dim] == 1; /* ATen: others stay */
      }
      *rank = 0;
      for (int32_t i = 0; i < self->rank; ++i)
        if (!squeeze[i]) dims[(*rank)++] = self->sizes[i];
      return ETRT_OK;
    }
    default:
      *rank = self->rank;
      memcpy(dims, self->sizes, (size_t)self->rank * sizeof *dims);
      return ETRT_OK;
  }
}

/* Element e of self (in row-major logical order) to element e of out, each at the
 * position its own strides give: the same elements, whatever either's dim order. */
static void etrt_portable_copy_logical(const etrt_runtime_tensor *self, etrt_runtime_tensor *out) {
  int64_t ss[ETRT_MAX_RANK], os[ETRT_MAX_RANK], si[ETRT_MAX_RANK] = {0}, oi[ETRT_MAX_RANK] = {0};
  etrt_portable_strides(self, ss);
  etrt_portable_strides(out, os);
  const size_t item = etrt_dtype_size(self->dtype);
  const int64_t numel = etrt_portable_numel(self);
  int64_t sat = 0, oat = 0;
  for (int64_t e = 0; e < numel; ++e) {
    memcpy((uint8_t *)out->data + (size_t)oat * item,
           (const uint8_t *)self->data + (size_t)sat * item, item);
    for (int32_t d = self->rank - 1; d >= 0; --d) {
      sat += ss[d];
      if (++si[d] < self->sizes[d]) break;
      sat -= ss[d] * si[d];
      si[d] = 0;
    }
    for (int32_t d = out->rank - 1; d >= 0; --d) {
      oat += os[d];
      if (++oi[d] < out->sizes[d]) break;
      oat -= os[d] * oi[d];
      oi[d] = 0;
    }
  }
}

static etrt_status etrt_portable_copy_run(etrt_kernel_call *call, etrt_value *values,
                                          etrt_run_context *context) {
  (void)context;
  const etrt_portable_copy_spec *spec = etrt_portable_copy_of(call);
  /* Sizes may be SymInts computed by earlier instructions: read them again (prepare
   * only checks and copies, it allocates nothing). */
  ETRT_RETURN_IF_ERROR(etrt_portable_copy_prepare(call, values));
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  int32_t rank = 0;
  int64_t dims[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_portable_copy_shape(call, self, &rank, dims));
  if (spec->kind == ETRT_COPY_ET_VIEW) {
    /* Fitted against self's bytes before the out tensor takes them. */
    etrt_runtime_tensor view = *out;
    view.capacity = self->capacity;
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &view, self->dtype, rank, dims));
    view.data = self->data;
    *out = view;
    return ETRT_OK;
  }
  if (self->permuted || out->permuted) {
    if (out->data == self->data && etrt_portable_numel(self) > 1)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s (instruction %u): self and out share their bytes in different dim "
                        "orders",
                        call->def->name, call->instruction);
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, self->dtype, rank, dims));
    etrt_portable_copy_logical(self, out);
    return ETRT_OK;
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, self->dtype, rank, dims));
  size_t nbytes = etrt_runtime_tensor_nbytes(out);
  if (nbytes > 0 && out->data != self->data) memmove(out->data, self->data, nbytes);
  return ETRT_OK;
}

#define COPY(var, name, nargs, kind, out)      \
  static const etrt_portable_copy_spec var = { \
      {name, nargs, etrt_portable_copy_prepare, etrt_portable_copy_run}, kind, out}

COPY(view_copy, "aten::view_copy.out", 4, ETRT_COPY_VIEW, 2);
COPY(unsafe_view, "aten::_unsafe_view.out", 4, ETRT_COPY_VIEW, 2);
COPY(unsqueeze_copy, "aten::unsqueeze_copy.out", 4, ETRT_COPY_UNSQUEEZE, 2);
COPY(squeeze_dims, "aten::squeeze_copy.dims_out", 4, ETRT_COPY_SQUEEZE, 2);
COPY(squeeze_dim, "aten::squeeze_copy.dim_out", 4, ETRT_COPY_SQUEEZE, 2);
COPY(et_view, "executorch_prim::et_view.default", 3, ETRT_COPY_ET_VIEW, 2);

#define E ETRT_PORTABLE_ENGINE

/* permute_copy.out(self, int[] dims, *, out). */
static etrt_status etrt_portable_permute_attributes(etrt_kernel_call *call,
                                                    const etrt_value *values) {
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(
      etrt_portable_ints_arg(call, values, 1, call->ints[1], ETRT_MAX_RANK, &count));
  return etrt_portable_attribute(
      call,
      (etrt_attribute){
          .name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = count, .ints = call->ints[1]});
}
static const etrt_portable_spec permute_copy = ETRT_PORTABLE_HOOKED(
    "aten::permute_copy.out", 4, "Transpose", 0, -1, -1, 2, etrt_portable_permute_attributes);
static const etrt_portable_spec t_copy =
    E("aten::t_copy.out", 3, "Transpose", 0, -1, -1, -1, 1, -1, -1, 0);

/* transpose_copy.int_out(self, int dim0, int dim1, *, out): the identity permutation
 * of self's rank with two dims swapped. */
static etrt_status etrt_portable_transpose_attributes(etrt_kernel_call *call,
                                                      const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  int64_t d0 = 0, d1 = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &d0));
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &d1));
  if (d0 < 0) d0 += self->rank;
  if (d1 < 0) d1 += self->rank;
  if (d0 < 0 || d0 >= self->rank || d1 < 0 || d1 >= self->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "dims out of range for rank %d", self->rank);
  for (int32_t i = 0; i < self->rank; ++i) call->ints[1][i] = i;
  call->ints[1][d0] = d1;
  call->ints[1][d1] = d0;
  return etrt_portable_attribute(
      call,
      (etrt_attribute){
          .name = "perm", .kind = ETRT_ATTRIBUTE_INTS, .count = self->rank, .ints = call->ints[1]});
}
static const etrt_portable_spec transpose_copy =
    ETRT_PORTABLE_HOOKED("aten::transpose_copy.int_out", 5, "Transpose", 0, -1, -1, 3,
                         etrt_portable_transpose_attributes);

/* expand_copy.out(self, SymInt[] size, *, bool implicit, out): Expand's broadcast, where
 * -1 keeps a size. */
static const etrt_portable_spec expand_copy =
    E("aten::expand_copy.out", 5, "Expand", 0, ETRT_PORTABLE_INTS(1), -1, -1, 3, -1, -1, 0);

/* Gather along the dim in argument `arg`. */
static etrt_status etrt_portable_gather_axis(etrt_kernel_call *call, const etrt_value *values) {
  int64_t dim = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = dim});
}
/* select_copy.int_out(self, int dim, SymInt index, *, out). */
static const etrt_portable_spec select_copy =
    ETRT_PORTABLE_HOOKED("aten::select_copy.int_out", 5, "Gather", 0, ETRT_PORTABLE_INT(2), -1, 3,
                         etrt_portable_gather_axis);
/* index_select.out(self, int dim, Tensor index, *, out). */
static const etrt_portable_spec index_select = ETRT_PORTABLE_HOOKED(
    "aten::index_select.out", 5, "Gather", 0, 2, -1, 3, etrt_portable_gather_axis);
/* embedding.out(weight, indices, padding_idx, scale_grad_by_freq, sparse, *, out):
 * rows of weight; the other arguments only matter for training. */
static const etrt_portable_spec embedding =
    E("aten::embedding.out", 7, "Gather", 0, 1, -1, -1, 5, -1, -1, 0);

/* gather.out(self, int dim, Tensor index, *, bool sparse_grad, out). */
static const etrt_portable_spec gather = ETRT_PORTABLE_HOOKED(
    "aten::gather.out", 6, "GatherElements", 0, 2, -1, 4, etrt_portable_gather_axis);

/* The dim_order argument of the dim order copies (None: contiguous) must be the out
 * tensor's; the engine call converts between the dim orders. */
static etrt_status etrt_portable_check_dim_order(etrt_kernel_call *call, const etrt_value *values,
                                                 const etrt_runtime_tensor *out) {
  int64_t order[ETRT_MAX_RANK];
  uint32_t n = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 2, order, ETRT_MAX_RANK, &n));
  int same = n == 0 ? !out->permuted : n == (uint32_t)out->rank;
  for (uint32_t i = 0; same && n > 0 && i < n; ++i) same = order[i] == out->dim_order[i];
  if (!same)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 2 (dim_order) differs from the out tensor's dim order");
  return ETRT_OK;
}

/* _clone_dim_order.out(self, *, bool non_blocking, int[]? dim_order, out): Identity. */
static etrt_status etrt_portable_clone_attributes(etrt_kernel_call *call,
                                                  const etrt_value *values) {
  const etrt_runtime_tensor *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 3, &out));
  return etrt_portable_check_dim_order(call, values, out);
}
static const etrt_portable_spec clone_dim_order =
    ETRT_PORTABLE_HOOKED("dim_order_ops::_clone_dim_order.out", 5, "Identity", 0, -1, -1, 3,
                         etrt_portable_clone_attributes);
/* clone.out(self, *, MemoryFormat? memory_format, out); alias_copy.out(self, *, out). */
static const etrt_portable_spec clone =
    E("aten::clone.out", 4, "Identity", 0, -1, -1, -1, 2, -1, -1, 0);
static const etrt_portable_spec alias_copy =
    E("aten::alias_copy.out", 3, "Identity", 0, -1, -1, -1, 1, -1, -1, 0);
/* detach_copy.out(self, *, out) and lift_fresh_copy.out(self, *, out): copies too. */
static const etrt_portable_spec detach_copy =
    E("aten::detach_copy.out", 3, "Identity", 0, -1, -1, -1, 1, -1, -1, 0);
static const etrt_portable_spec lift_fresh_copy =
    E("aten::lift_fresh_copy.out", 3, "Identity", 0, -1, -1, -1, 1, -1, -1, 0);

/* _to_dim_order_copy.out(self, *, bool non_blocking, int[]? dim_order, out): a copy
 * converted to the out tensor's dtype (Cast) and dim order. */
static etrt_status etrt_portable_to_copy_attributes(etrt_kernel_call *call,
                                                    const etrt_value *values) {
  const etrt_runtime_tensor *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 3, &out));
  ETRT_RETURN_IF_ERROR(etrt_portable_check_dim_order(call, values, out));
  return etrt_portable_attribute(
      call, (etrt_attribute){
                .name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = etrt_dtype_to_onnx(out->dtype)});
}
static const etrt_portable_spec to_dim_order_copy =
    ETRT_PORTABLE_HOOKED("dim_order_ops::_to_dim_order_copy.out", 5, "Cast", 0, -1, -1, 3,
                         etrt_portable_to_copy_attributes);

/* constant_pad_nd.out(self, SymInt[] pad, Scalar value, *, out): ATen's pad pairs
 * run from the last dim backwards ([last_begin, last_end, prev_begin, ...]); Pad takes
 * every dim's begins, then every dim's ends. Negative amounts crop. */
static etrt_status etrt_portable_pad_attributes(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  int64_t pad[2 * ETRT_MAX_RANK];
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 1, pad, 2 * ETRT_MAX_RANK, &count));
  if (count % 2 != 0 || count / 2 > (uint32_t)self->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "argument 1 (pad) has %u values for a rank-%d tensor", count, self->rank);
  int64_t *pads = call->ints[1];
  for (int32_t d = 0; d < 2 * self->rank; ++d) pads[d] = 0;
  for (uint32_t k = 0; k < count / 2; ++k) {
    int32_t d = self->rank - 1 - (int32_t)k;
    pads[d] = pad[2 * k];
    pads[self->rank + d] = pad[2 * k + 1];
  }
  call->scalars[1] = 2 * self->rank;
  return ETRT_OK;
}
static const etrt_portable_spec constant_pad_nd = ETRT_PORTABLE_ENGINE_FULL(
    "aten::constant_pad_nd.out", 5, "Pad", 0, ETRT_PORTABLE_INTS(1), ETRT_PORTABLE_SCALAR(2), -1, 3,
    -1, -1, ETRT_PORTABLE_INTS_AT_PREPARE, NULL, etrt_portable_pad_attributes, NULL, 0);

/* tril.out / triu.out(self, int diagonal, *, out). */
static const etrt_attribute tril_attributes[] = {
    {.name = "upper", .kind = ETRT_ATTRIBUTE_INT, .i = 0}};
static const etrt_attribute triu_attributes[] = {
    {.name = "upper", .kind = ETRT_ATTRIBUTE_INT, .i = 1}};
static const etrt_portable_spec tril =
    ETRT_PORTABLE_ENGINE_FULL("aten::tril.out", 4, "Trilu", 0, ETRT_PORTABLE_INT(1), -1, -1, 2, -1,
                              -1, 0, NULL, NULL, tril_attributes, 1);
static const etrt_portable_spec triu =
    ETRT_PORTABLE_ENGINE_FULL("aten::triu.out", 4, "Trilu", 0, ETRT_PORTABLE_INT(1), -1, -1, 2, -1,
                              -1, 0, NULL, NULL, triu_attributes, 1);

/* pixel_shuffle.out(self, int upscale_factor, *, out): DepthToSpace in CRD order. */
static etrt_status etrt_portable_pixel_shuffle_attributes(etrt_kernel_call *call,
                                                          const etrt_value *values) {
  int64_t factor = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &factor));
  ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
      call, (etrt_attribute){.name = "blocksize", .kind = ETRT_ATTRIBUTE_INT, .i = factor}));
  return etrt_portable_attribute(
      call, (etrt_attribute){.name = "mode", .kind = ETRT_ATTRIBUTE_STRING, .s = "CRD"});
}
static const etrt_portable_spec pixel_shuffle =
    ETRT_PORTABLE_HOOKED("aten::pixel_shuffle.out", 4, "DepthToSpace", 0, -1, -1, 2,
                         etrt_portable_pixel_shuffle_attributes);

/* repeat.out(self, SymInt[] repeats, *, out): Tile, when there is one repeat per dim
 * (ATen's leading new dims are refused). */
static etrt_status etrt_portable_repeat_attributes(etrt_kernel_call *call,
                                                   const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  if ((int32_t)call->scalars[1] != self->rank)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "argument 1 (repeats): %d repeats for a rank-%d tensor (new leading dims) "
                      "are not supported",
                      (int)call->scalars[1], self->rank);
  return ETRT_OK;
}
static const etrt_portable_spec repeat =
    ETRT_PORTABLE_ENGINE_FULL("aten::repeat.out", 4, "Tile", 0, ETRT_PORTABLE_INTS(1), -1, -1, 2,
                              -1, -1, 0, NULL, etrt_portable_repeat_attributes, NULL, 0);

/* unfold_copy.out(self, int dimension, int size, int step, *, out): windows of `size`
 * every `step` along a dim, as a new last dim; as_strided_copy.out(self, SymInt[] size,
 * SymInt[] stride, SymInt? storage_offset, *, out): elements of self's bytes at
 * storage_offset + sum(index * stride), whatever self's dim order. Both read out's
 * element at each logical index from self at base + sum(index[d] * from[d]). */
static etrt_status etrt_portable_strided_plan(const etrt_kernel_call *call,
                                              const etrt_value *values, int32_t *rank,
                                              int64_t *dims, int64_t *from, int64_t *base) {
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  const int unfold = strcmp(call->def->name, "aten::unfold_copy.out") == 0;
  *base = 0;
  if (unfold) {
    int64_t dim = 0, size = 0, step = 0, ss[ETRT_MAX_RANK];
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 1, &dim));
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 2, &size));
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, &step));
    if (dim < 0) dim += self->rank;
    if (self->rank < 1 || self->rank >= ETRT_MAX_RANK || dim < 0 || dim >= self->rank)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): dimension %lld is out of range for rank %d",
                        call->def->name, call->instruction, (long long)dim, self->rank);
    if (size < 0 || size > self->sizes[dim] || step < 1)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): size %lld and step %lld do not fit dim %lld (%lld)",
                        call->def->name, call->instruction, (long long)size, (long long)step,
                        (long long)dim, (long long)self->sizes[dim]);
    etrt_portable_strides(self, ss);
    for (int32_t d = 0; d < self->rank; ++d) {
      dims[d] = self->sizes[d];
      from[d] = ss[d];
    }
    dims[dim] = (self->sizes[dim] - size) / step + 1;
    from[dim] = ss[dim] * step;
    dims[self->rank] = size;
    from[self->rank] = ss[dim];
    *rank = self->rank + 1;
    return ETRT_OK;
  }
  uint32_t count = 0, strides = 0;
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 1, dims, ETRT_MAX_RANK, &count));
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 2, from, ETRT_MAX_RANK, &strides));
  if (values[call->args[3]].tag != ETRT_VALUE_NONE)
    ETRT_RETURN_IF_ERROR(etrt_portable_int_arg(call, values, 3, base));
  if (strides != count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): %u sizes and %u strides",
                      call->def->name, call->instruction, count, strides);
  int64_t last = *base, empty = 0;
  for (uint32_t d = 0; d < count; ++d) {
    if (dims[d] < 0 || from[d] < 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): size %lld and stride %lld of dim %u must not be "
                        "negative",
                        call->def->name, call->instruction, (long long)dims[d], (long long)from[d],
                        d);
    empty |= dims[d] == 0;
    if (dims[d] > 0) last += (dims[d] - 1) * from[d];
  }
  if (!empty && (*base < 0 || last >= etrt_portable_numel(self)))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s (instruction %u): element %lld is past self's %lld elements",
                      call->def->name, call->instruction, (long long)last,
                      (long long)etrt_portable_numel(self));
  *rank = (int32_t)count;
  return ETRT_OK;
}

static etrt_status etrt_portable_strided_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *self = NULL, *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 0, &self));
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 4, &out));
  if (out->dtype != self->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor is %s, self %s",
                      etrt_dtype_name(out->dtype), etrt_dtype_name(self->dtype));
  return ETRT_OK;
}

static etrt_status etrt_portable_strided_run(etrt_kernel_call *call, etrt_value *values,
                                             etrt_run_context *context) {
  (void)context;
  const etrt_runtime_tensor *self = &values[call->args[0]].u.tensor;
  etrt_runtime_tensor *out = &values[call->args[4]].u.tensor;
  int32_t rank = 0;
  int64_t dims[ETRT_MAX_RANK], from[ETRT_MAX_RANK], base = 0, os[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_portable_strided_plan(call, values, &rank, dims, from, &base));
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, self->dtype, rank, dims));
  etrt_portable_strides(out, os);
  const size_t item = etrt_dtype_size(self->dtype);
  int64_t index[ETRT_MAX_RANK] = {0}, src = base, dst = 0, numel = etrt_portable_numel(out);
  for (int64_t e = 0; e < numel; ++e) {
    memcpy((uint8_t *)out->data + (size_t)dst * item,
           (const uint8_t *)self->data + (size_t)src * item, item);
    for (int32_t d = rank - 1; d >= 0; --d) {
      src += from[d];
      dst += os[d];
      if (++index[d] < dims[d]) break;
      src -= from[d] * index[d];
      dst -= os[d] * index[d];
      index[d] = 0;
    }
  }
  return ETRT_OK;
}

static const etrt_kernel_def unfold_copy = {
    "aten::unfold_copy.out", 6, etrt_portable_strided_prepare, etrt_portable_strided_run};
static const etrt_kernel_def as_strided_copy = {
    "aten::as_strided_copy.out", 6, etrt_portable_strided_prepare, etrt_portable_strided_run};

const etrt_kernel_def *const etrt_portable_shape[] = {
    &tril.def,
    &triu.def,
    &pixel_shuffle.def,
    &repeat.def,
    &constant_pad_nd.def,
    &gather.def,
    &to_dim_order_copy.def,
    &view_copy.def,
    &et_view.def,
    &unsafe_view.def,
    &unsqueeze_copy.def,
    &squeeze_dims.def,
    &squeeze_dim.def,
    &clone.def,
    &alias_copy.def,
    &detach_copy.def,
    &lift_fresh_copy.def,
    &clone_dim_order.def,
    &permute_copy.def,
    &t_copy.def,
    &transpose_copy.def,
    &expand_copy.def,
    &select_copy.def,
    &index_select.def,
    &embedding.def,
    &unfold_copy,
    &as_strided_copy,
    NULL,
};
