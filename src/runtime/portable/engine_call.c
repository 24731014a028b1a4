/* Portable operators that run one engine operation (etrt_portable_spec): the
 * arguments become the operation's inputs and attributes once, at prepare; each
 * run views the current tensors, infers the result's shape, fits the out tensor to
 * it and runs the engine's CPU kernel. Around it: inputs cast to the compute dtype
 * (ATen's promotion) and converted from other dim orders, weights transposed for
 * linear, alpha scaling, a post operation. No allocation on the run path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/status.h"
#include "runtime/portable/portable.h"

static const etrt_portable_spec *etrt_portable_spec_of(const etrt_kernel_call *call) {
  return (const etrt_portable_spec *)call->def;
}

/* Copies a tensor between the contiguous dim order (`contiguous`) and its own
 * (`memory`), in the direction `to_memory` says. */
static void etrt_portable_relayout(const etrt_runtime_tensor *t, void *contiguous, void *memory,
                                   int to_memory) {
  const size_t item = etrt_dtype_size(t->dtype);
  int64_t strides[ETRT_MAX_RANK]; /* per logical dim, in elements of memory */
  int64_t numel = 1;
  for (int32_t k = t->rank - 1; k >= 0; --k) {
    strides[t->dim_order[k]] = numel;
    numel *= t->sizes[t->dim_order[k]];
  }
  int64_t index[ETRT_MAX_RANK] = {0}, at = 0;
  uint8_t *c = contiguous, *m = memory;
  for (int64_t e = 0; e < numel; ++e) {
    if (to_memory)
      memcpy(m + (size_t)at * item, c + (size_t)e * item, item);
    else
      memcpy(c + (size_t)e * item, m + (size_t)at * item, item);
    for (int32_t d = t->rank - 1; d >= 0; --d) { /* the next logical index */
      at += strides[d];
      if (++index[d] < t->sizes[d]) break;
      at -= strides[d] * index[d];
      index[d] = 0;
    }
  }
}

static etrt_status etrt_portable_node(etrt_node *node, void **state, const char *op_type,
                                      uint32_t num_inputs, const int32_t *inputs,
                                      const int32_t *output, uint32_t num_outputs,
                                      const etrt_attribute *attributes, uint32_t num_attributes) {
  const etrt_op_def *def = etrt_op_find(op_type);
  if (def == NULL) return etrt_error(ETRT_ERROR_INTERNAL, "the engine lacks operation %s", op_type);
  memset(node, 0, sizeof *node);
  node->op_type = op_type;
  node->name = op_type;
  node->num_inputs = num_inputs;
  node->num_outputs = num_outputs;
  node->inputs = inputs;
  node->outputs = output;
  node->attributes = attributes;
  node->num_attributes = num_attributes;
  node->def = def;
  node->run_cpu = etrt_op_cpu_find(op_type);
  if (node->run_cpu == NULL)
    return etrt_error(ETRT_ERROR_INTERNAL, "the engine has no CPU kernel for %s", op_type);
  *state = NULL;
  if (def->state_size > 0) {
    *state = calloc(1, def->state_size);
    if (*state == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory preparing %s", op_type);
  }
  node->state = *state;
  return def->prepare != NULL ? def->prepare(node, *state) : ETRT_OK;
}

static size_t etrt_portable_max_nbytes(const etrt_runtime_tensor *t) {
  size_t size = etrt_dtype_size(t->dtype);
  for (int32_t i = 0; i < t->rank; ++i) size *= (size_t)t->max_sizes[i];
  return size;
}

/* weight [rows, cols] -> scratch [cols, rows], so that linear multiplies by rows of
 * contiguous memory, exactly as addmm does. */
static void etrt_portable_transpose(const etrt_runtime_tensor *w, void *out) {
  const int64_t rows = w->sizes[0], cols = w->sizes[1];
  const size_t item = etrt_dtype_size(w->dtype);
  const uint8_t *src = w->data;
  uint8_t *dst = out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      memcpy(dst + (size_t)(c * rows + r) * item, src + (size_t)(r * cols + c) * item, item);
}

static etrt_status etrt_portable_prepare_input(etrt_kernel_call *call, const etrt_value *values,
                                               int src, uint32_t index, int32_t *id) {
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  *id = (int32_t)index;
  if (src >= 0) {
    if (values[call->args[src]].tag == ETRT_VALUE_NONE && src == spec->optional_input) {
      *id = -1;
      return ETRT_OK;
    }
    const etrt_runtime_tensor *t = NULL;
    return etrt_portable_tensor_arg(call, values, (uint32_t)src, &t);
  }
  if (src <= ETRT_PORTABLE_INTS(0)) {
    uint32_t count = 0;
    ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values,
                                                (uint32_t)(ETRT_PORTABLE_INTS(0) - src),
                                                call->ints[index], ETRT_MAX_RANK, &count));
    for (uint32_t i = 0; i < count; ++i)
      if (call->ints[index][i] == -1) call->ints[index][i] = 1;
    call->scalars[index] = count;
    return ETRT_OK;
  }
  if (src <= ETRT_PORTABLE_INT(0))
    return etrt_portable_int_arg(call, values, (uint32_t)(ETRT_PORTABLE_INT(0) - src),
                                 &call->ints[index][0]);
  uint32_t arg = (uint32_t)(ETRT_PORTABLE_SCALAR(0) - src);
  if (values[call->args[arg]].tag == ETRT_VALUE_NONE) {
    *id = -1;
    return ETRT_OK;
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, arg, &call->scalars[index]));
  /* The scalar takes the first input's dtype (after promotion: the out tensor's). An
   * integer computation with a fractional scalar would be ATen's float promotion. */
  etrt_dtype dtype = call->compute_dtype;
  if (dtype == ETRT_DTYPE_INVALID) {
    const etrt_runtime_tensor *self = NULL;
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->inputs[0], &self));
    dtype = self->dtype;
  }
  double v = call->scalars[index];
  if (!etrt_portable_dtype_is_float(dtype) && v != (double)(int64_t)v)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "argument %u: a fractional scalar computed in %s is not supported", arg,
                      etrt_dtype_name(dtype));
  return ETRT_OK;
}

/* ATen's result type of two operands (a scalar counts only when it brings a higher
 * category: bool < integer < floating point). */
static int etrt_portable_category(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_BOOL ? 0 : etrt_portable_dtype_is_float(dtype) ? 2 : 1;
}

static etrt_dtype etrt_portable_common(etrt_dtype a, etrt_dtype b) {
  if (a == b) return a;
  int ca = etrt_portable_category(a), cb = etrt_portable_category(b);
  if (ca != cb) return ca > cb ? a : b;
  size_t sa = etrt_dtype_size(a), sb = etrt_dtype_size(b);
  if (sa != sb) return sa > sb ? a : b;
  /* Same size, different types: float16 and bfloat16 meet in float32, int8 and uint8
   * in int16. */
  return ca == 2 ? ETRT_DTYPE_FLOAT32 : ETRT_DTYPE_INT16;
}

/* The dtype the inputs are computed in, before any input is prepared. */
static etrt_status etrt_portable_compute_dtype(etrt_kernel_call *call, const etrt_value *values,
                                               const etrt_runtime_tensor *out) {
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  call->compute_dtype = ETRT_DTYPE_INVALID;
  if (spec->flags & ETRT_PORTABLE_PROMOTE) {
    call->compute_dtype = out->dtype;
    return ETRT_OK;
  }
  if (!(spec->flags & ETRT_PORTABLE_PROMOTE_COMMON)) return ETRT_OK;
  etrt_dtype tensors = ETRT_DTYPE_INVALID;
  int scalar_category = -1;
  for (int i = 0; i < ETRT_KERNEL_MAX_ENGINE_INPUTS && spec->inputs[i] != ETRT_PORTABLE_NONE; ++i) {
    int src = spec->inputs[i];
    if (src >= 0) {
      const etrt_runtime_tensor *t = NULL;
      ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)src, &t));
      tensors = tensors == ETRT_DTYPE_INVALID ? t->dtype : etrt_portable_common(tensors, t->dtype);
    } else if (src > ETRT_PORTABLE_INT(0)) {
      etrt_value_tag tag = values[call->args[ETRT_PORTABLE_SCALAR(0) - src]].tag;
      int c = tag == ETRT_VALUE_DOUBLE ? 2 : tag == ETRT_VALUE_INT ? 1 : 0;
      if (c > scalar_category) scalar_category = c;
    }
  }
  if (tensors == ETRT_DTYPE_INVALID) return ETRT_OK;
  if (scalar_category > etrt_portable_category(tensors))
    tensors = scalar_category == 2 ? ETRT_DTYPE_FLOAT32 : ETRT_DTYPE_INT64;
  call->compute_dtype = tensors;
  return ETRT_OK;
}

/* Operations that only move or select elements: they take float16 and bfloat16 as
 * they are. Every other operation computes float16 and bfloat16 in float32 (inputs
 * cast up, the result cast back), as ATen's portable kernels do. */
static int etrt_portable_moves_bytes(const char *op_type) {
  static const char *const movers[] = {"Identity",       "Transpose", "Expand", "Gather",
                                       "GatherElements", "Slice",     "Concat", "Split",
                                       "Tile",           "Pad",       "Trilu",  "DepthToSpace",
                                       "SpaceToDepth",   "Reshape",   "Where",  NULL};
  for (const char *const *m = movers; *m != NULL; ++m)
    if (strcmp(*m, op_type) == 0) return 1;
  return 0;
}

static int etrt_portable_is_half(etrt_dtype dtype) {
  return dtype == ETRT_DTYPE_FLOAT16 || dtype == ETRT_DTYPE_BFLOAT16;
}

/* Widens a float16 / bfloat16 computation to float32 (see above). */
static etrt_status etrt_portable_widen(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  if (etrt_portable_moves_bytes(spec->op_type)) return ETRT_OK;
  etrt_dtype working = call->compute_dtype;
  for (int i = 0; working == ETRT_DTYPE_INVALID && i < ETRT_KERNEL_MAX_ENGINE_INPUTS &&
                  spec->inputs[i] != ETRT_PORTABLE_NONE;
       ++i) {
    const etrt_runtime_tensor *t = NULL;
    if (spec->inputs[i] < 0) continue;
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->inputs[i], &t));
    working = t->dtype;
  }
  if (etrt_portable_is_half(working)) call->compute_dtype = ETRT_DTYPE_FLOAT32;
  return ETRT_OK;
}

/* A Cast to the compute dtype for each tensor input of another dtype. */
static etrt_status etrt_portable_prepare_casts(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_dtype target = call->compute_dtype;
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  static const int32_t cast_input = 0, cast_output = 1;
  const uint32_t first = (spec->flags & ETRT_PORTABLE_PROMOTE_SKIP_FIRST) ? 1 : 0;
  etrt_attribute *to = NULL;
  for (uint32_t i = first; i < call->node.num_inputs; ++i) {
    int src = spec->inputs[i];
    if (src < 0 || call->node_inputs[i] < 0) continue;
    const etrt_runtime_tensor *t = &values[call->args[src]].u.tensor;
    if (t->dtype == target) continue;
    /* ATen computes in the promoted dtype and refuses to narrow it into the out tensor:
     * float into an integer, or anything but bool into bool. */
    int narrows =
        (etrt_portable_dtype_is_float(t->dtype) && !etrt_portable_dtype_is_float(target)) ||
        (t->dtype != ETRT_DTYPE_BOOL && target == ETRT_DTYPE_BOOL);
    if (narrows)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "argument %d is %s; the result cannot be written to the %s out tensor", src,
                        etrt_dtype_name(t->dtype), etrt_dtype_name(target));
    if (to == NULL) {
      ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
          call, (etrt_attribute){
                    .name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = etrt_dtype_to_onnx(target)}));
      to = &call->attributes[call->num_attributes - 1];
    }
    size_t size = etrt_portable_max_nbytes(t) / etrt_dtype_size(t->dtype) * etrt_dtype_size(target);
    call->cast_scratch[i] = calloc(1, size ? size : 1);
    if (call->cast_scratch[i] == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for a promoted input");
    ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->cast_node[i], &call->cast_state[i], "Cast", 1,
                                            &cast_input, &cast_output, 1, to, 1));
  }
  return ETRT_OK;
}

etrt_status etrt_portable_engine_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  const etrt_runtime_tensor *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->out, &out));
  ETRT_RETURN_IF_ERROR(etrt_portable_compute_dtype(call, values, out));
  ETRT_RETURN_IF_ERROR(etrt_portable_widen(call, values));
  uint32_t num_inputs = 0;
  for (int i = 0; i < ETRT_KERNEL_MAX_ENGINE_INPUTS && spec->inputs[i] != ETRT_PORTABLE_NONE; ++i) {
    ETRT_RETURN_IF_ERROR(etrt_portable_prepare_input(call, values, spec->inputs[i], num_inputs,
                                                     &call->node_inputs[num_inputs]));
    ++num_inputs;
  }
  const uint32_t num_outputs = (spec->flags & ETRT_PORTABLE_THREE_OUTS) ? 3 : 1;
  for (uint32_t k = 0; k < num_outputs; ++k) {
    call->node_outputs[k] = (int32_t)(num_inputs + k);
    const etrt_runtime_tensor *extra = NULL;
    if (k == 0) continue;
    ETRT_RETURN_IF_ERROR(
        etrt_portable_contiguous_arg(call, values, (uint32_t)spec->out + k, &extra));
  }

  for (uint32_t i = 0; i < spec->num_fixed; ++i)
    ETRT_RETURN_IF_ERROR(etrt_portable_attribute(call, spec->fixed[i]));
  double alpha = 1.0, beta = 1.0;
  if (spec->alpha >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, (uint32_t)spec->alpha, &alpha));
  if (spec->beta >= 0)
    ETRT_RETURN_IF_ERROR(etrt_portable_scalar_arg(call, values, (uint32_t)spec->beta, &beta));
  if (spec->attributes != NULL) ETRT_RETURN_IF_ERROR(spec->attributes(call, values));
  int gemm = strcmp(spec->op_type, "Gemm") == 0;
  if (gemm) {
    ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
        call, (etrt_attribute){.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)alpha}));
    ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
        call, (etrt_attribute){.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)beta}));
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->node, &call->state, spec->op_type, num_inputs,
                                          call->node_inputs, call->node_outputs, num_outputs,
                                          call->attributes, call->num_attributes));
  call->alpha = alpha;
  for (uint32_t i = 0; i < num_inputs; ++i) {
    int src = spec->inputs[i];
    if (src < 0 || call->node_inputs[i] < 0) continue;
    const etrt_runtime_tensor *t = &values[call->args[src]].u.tensor;
    if (!t->permuted) continue;
    if (spec->flags & ETRT_PORTABLE_LINEAR)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "argument %d: linear takes contiguous tensors, not another dim order", src);
    call->layout_scratch[i] = calloc(1, etrt_portable_max_nbytes(t) + 1);
    if (call->layout_scratch[i] == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for a dim order conversion");
  }
  if (out->permuted) {
    call->layout_out = calloc(1, etrt_portable_max_nbytes(out) + 1);
    if (call->layout_out == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for a dim order conversion");
  }
  if (call->compute_dtype == ETRT_DTYPE_FLOAT32 && etrt_portable_is_half(out->dtype)) {
    static const int32_t narrow_input = 0, narrow_output = 1;
    /* One float32 region per engine output (layer norm's mean and rstd too). */
    size_t total = 0;
    for (uint32_t k = 0; k < num_outputs; ++k) {
      const etrt_runtime_tensor *t = &values[call->args[spec->out + (int)k]].u.tensor;
      call->widen_at[k] = total;
      total += (etrt_portable_max_nbytes(t) / etrt_dtype_size(t->dtype) * sizeof(float) + 15) &
               ~(size_t)15;
    }
    call->widen_out = calloc(1, total + 1);
    if (call->widen_out == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for a float32 result");
    ETRT_RETURN_IF_ERROR(etrt_portable_attribute(
        call, (etrt_attribute){
                  .name = "to", .kind = ETRT_ATTRIBUTE_INT, .i = etrt_dtype_to_onnx(out->dtype)}));
    ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->narrow_node, &call->narrow_state, "Cast", 1,
                                            &narrow_input, &narrow_output, 1,
                                            &call->attributes[call->num_attributes - 1], 1));
  }
  if (call->compute_dtype != ETRT_DTYPE_INVALID)
    ETRT_RETURN_IF_ERROR(etrt_portable_prepare_casts(call, values));
  if (spec->flags & ETRT_PORTABLE_LINEAR) {
    const etrt_runtime_tensor *w = NULL;
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->inputs[1], &w));
    if (w->rank != 2)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the weight must have rank 2, not %d",
                        w->rank);
    const etrt_dtype wdtype =
        call->compute_dtype != ETRT_DTYPE_INVALID ? call->compute_dtype : w->dtype;
    call->scratch_size =
        etrt_portable_max_nbytes(w) / etrt_dtype_size(w->dtype) * etrt_dtype_size(wdtype);
    call->scratch = calloc(1, call->scratch_size ? call->scratch_size : 1);
    if (call->scratch == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for the transposed weight");
    if (w->constant && w->data != NULL && wdtype == w->dtype) {
      etrt_portable_transpose(w, call->scratch);
      call->scratch_ready = 1;
    }
  } else if (!gemm && alpha != 1.0) {
    /* other * alpha goes through a scratch buffer as large as `other` can get. */
    const etrt_runtime_tensor *other = NULL;
    ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, (uint32_t)spec->inputs[1], &other));
    /* It is scaled after promotion, in the compute dtype. */
    etrt_dtype dtype =
        call->compute_dtype != ETRT_DTYPE_INVALID ? call->compute_dtype : other->dtype;
    call->scratch_size =
        etrt_portable_max_nbytes(other) / etrt_dtype_size(other->dtype) * etrt_dtype_size(dtype) +
        16;
    call->scratch = calloc(1, call->scratch_size);
    if (call->scratch == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for alpha scratch");
    if (!etrt_portable_dtype_is_float(dtype) && alpha != (double)(int64_t)alpha)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "a fractional alpha computed in %s",
                        etrt_dtype_name(dtype));
    static const int32_t scale_inputs[2] = {0, 1};
    static const int32_t scale_output = 2;
    ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->scale_node, &call->scale_state, "Mul", 2,
                                            scale_inputs, &scale_output, 1, NULL, 0));
  }
  if (spec->post_op != NULL) {
    static const int32_t post_inputs[2] = {0, 1};
    static const int32_t post_output = 2;
    uint32_t n = (spec->flags & ETRT_PORTABLE_POST_SELF) ? 2 : 1;
    ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->post_node, &call->post_state, spec->post_op, n,
                                            post_inputs, &post_output, 1, NULL, 0));
  }
  return ETRT_OK;
}

static void etrt_portable_view(const etrt_runtime_tensor *t, etrt_tensor *out) {
  memset(out, 0, sizeof *out);
  out->data = t->data;
  out->host_value = t->data;
  out->dtype = t->dtype;
  out->rank = t->rank;
  memcpy(out->dims, t->sizes, sizeof out->dims);
}

static void etrt_portable_host_tensor(void *data, etrt_dtype dtype, int32_t rank, int64_t dim0,
                                      etrt_tensor *out) {
  memset(out, 0, sizeof *out);
  out->data = data;
  out->host_value = data;
  out->dtype = dtype;
  out->rank = rank;
  out->dims[0] = dim0;
}

static etrt_status etrt_portable_run_input(etrt_kernel_call *call, const etrt_value *values,
                                           uint32_t i, const etrt_tensor *first, etrt_tensor *out) {
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  int src = spec->inputs[i];
  if (call->node_inputs[i] < 0) {
    memset(out, 0, sizeof *out);
    out->rank = -1;
    return ETRT_OK;
  }
  if (src >= 0) {
    etrt_portable_view(&values[call->args[src]].u.tensor, out);
    return ETRT_OK;
  }
  if (src <= ETRT_PORTABLE_INT(0) && !(spec->flags & ETRT_PORTABLE_INTS_AT_PREPARE)) {
    /* SymInt arguments: instructions before this one (sym_size, prim arithmetic) may
     * have changed them since prepare. */
    int32_t id = 0;
    ETRT_RETURN_IF_ERROR(etrt_portable_prepare_input(call, values, src, i, &id));
  }
  if (src <= ETRT_PORTABLE_INTS(0)) {
    etrt_portable_host_tensor(call->ints[i], ETRT_DTYPE_INT64, 1, (int64_t)call->scalars[i], out);
    return ETRT_OK;
  }
  if (src <= ETRT_PORTABLE_INT(0)) {
    etrt_portable_host_tensor(call->ints[i], ETRT_DTYPE_INT64, 0, 0, out);
    return ETRT_OK;
  }
  etrt_dtype dtype = call->compute_dtype != ETRT_DTYPE_INVALID ? call->compute_dtype : first->dtype;
  ETRT_RETURN_IF_ERROR(etrt_portable_scalar_store(call->scalars[i], dtype, call->scalar_bytes[i]));
  etrt_portable_host_tensor(call->scalar_bytes[i], dtype, 0, 0, out);
  return ETRT_OK;
}

etrt_status etrt_portable_engine_run(etrt_kernel_call *call, etrt_value *values,
                                     etrt_run_context *context) {
  (void)context;
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  etrt_tensor inputs[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  for (uint32_t i = 0; i < call->node.num_inputs; ++i)
    ETRT_RETURN_IF_ERROR(etrt_portable_run_input(call, values, i, &inputs[0], &inputs[i]));
  for (uint32_t i = 0; i < call->node.num_inputs; ++i) {
    if (call->layout_scratch[i] == NULL) continue;
    etrt_portable_relayout(&values[call->args[spec->inputs[i]]].u.tensor, call->layout_scratch[i],
                           inputs[i].data, 0);
    inputs[i].data = call->layout_scratch[i];
    inputs[i].host_value = inputs[i].data;
  }
  for (uint32_t i = 0; i < call->node.num_inputs; ++i) {
    if (call->cast_node[i].def == NULL) continue;
    etrt_tensor cast = inputs[i];
    cast.dtype = call->compute_dtype;
    cast.data = call->cast_scratch[i];
    cast.host_value = cast.data;
    ETRT_RETURN_IF_ERROR(call->cast_node[i].run_cpu(&call->cast_node[i], &inputs[i], &cast));
    inputs[i] = cast;
  }
  int64_t leading[ETRT_MAX_RANK];
  int32_t leading_rank = 0;
  if (spec->flags & ETRT_PORTABLE_LINEAR) {
    etrt_runtime_tensor w = values[call->args[spec->inputs[1]]].u.tensor;
    w.data = inputs[1].data; /* after the cast to the compute dtype, if any */
    w.dtype = inputs[1].dtype;
    if (!call->scratch_ready) etrt_portable_transpose(&w, call->scratch);
    inputs[1].data = call->scratch;
    inputs[1].host_value = call->scratch;
    inputs[1].dims[0] = w.sizes[1];
    inputs[1].dims[1] = w.sizes[0];
    if (inputs[0].rank > 2) {
      /* [*, in] viewed as [prod(*), in]: the bytes are contiguous, so no copy. */
      leading_rank = inputs[0].rank - 1;
      memcpy(leading, inputs[0].dims, (size_t)leading_rank * sizeof(int64_t));
      int64_t rows = 1;
      for (int32_t i = 0; i < leading_rank; ++i) rows *= leading[i];
      inputs[0].dims[0] = rows;
      inputs[0].dims[1] = inputs[0].dims[inputs[0].rank - 1];
      inputs[0].rank = 2;
    }
  }
  if (call->scale_node.def != NULL) {
    etrt_tensor scale_inputs[2] = {inputs[1]};
    ETRT_RETURN_IF_ERROR(etrt_portable_scalar_store(call->alpha, inputs[1].dtype, call->scratch));
    etrt_portable_host_tensor(call->scratch, inputs[1].dtype, 0, 0, &scale_inputs[1]);
    etrt_tensor scaled = inputs[1];
    scaled.data = (uint8_t *)call->scratch + 16;
    scaled.host_value = scaled.data;
    ETRT_RETURN_IF_ERROR(call->scale_node.run_cpu(&call->scale_node, scale_inputs, &scaled));
    inputs[1] = scaled;
  }
  etrt_tensor outputs[3];
  memset(outputs, 0, sizeof outputs);
  ETRT_RETURN_IF_ERROR(call->node.def->infer(&call->node, inputs, outputs));
  /* The extra outputs first: every out tensor is fitted before any is written. An
   * extra output of float16 / bfloat16 computed in float32 goes through widen_out. */
  int narrow_extra[3] = {0, 0, 0};
  for (uint32_t k = 1; k < call->node.num_outputs; ++k) {
    etrt_runtime_tensor *extra = &values[call->args[spec->out + (int)k]].u.tensor;
    narrow_extra[k] = call->widen_out != NULL && outputs[k].dtype == ETRT_DTYPE_FLOAT32 &&
                      etrt_portable_is_half(extra->dtype);
    etrt_runtime_tensor check = *extra;
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, &check,
                                               narrow_extra[k] ? extra->dtype : outputs[k].dtype,
                                               outputs[k].rank, outputs[k].dims));
  }
  for (uint32_t k = 1; k < call->node.num_outputs; ++k) {
    etrt_runtime_tensor *extra = &values[call->args[spec->out + (int)k]].u.tensor;
    ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, extra,
                                               narrow_extra[k] ? extra->dtype : outputs[k].dtype,
                                               outputs[k].rank, outputs[k].dims));
    outputs[k].data =
        narrow_extra[k] ? (uint8_t *)call->widen_out + call->widen_at[k] : extra->data;
    outputs[k].host_value = NULL;
  }
  etrt_tensor output = outputs[0];
  etrt_tensor result = output;
  if (leading_rank > 0) {
    memcpy(result.dims, leading, (size_t)leading_rank * sizeof(int64_t));
    result.dims[leading_rank] = output.dims[1];
    result.rank = leading_rank + 1;
  }
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  const int narrow = call->widen_out != NULL && result.dtype == ETRT_DTYPE_FLOAT32;
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, narrow ? out->dtype : result.dtype,
                                             result.rank, result.dims));
  void *destination = call->layout_out != NULL ? call->layout_out : out->data;
  output.data = narrow ? call->widen_out : destination;
  output.host_value = NULL;
  outputs[0] = output;
  ETRT_RETURN_IF_ERROR(call->node.run_cpu(&call->node, inputs, outputs));
  if (call->post_node.def != NULL) {
    etrt_tensor post_inputs[2] = {inputs[0], output};
    if (!(spec->flags & ETRT_PORTABLE_POST_SELF)) post_inputs[0] = output;
    ETRT_RETURN_IF_ERROR(call->post_node.run_cpu(&call->post_node, post_inputs, &output));
  }
  if (narrow) {
    etrt_tensor narrowed = output;
    narrowed.dtype = out->dtype;
    narrowed.data = destination;
    ETRT_RETURN_IF_ERROR(call->narrow_node.run_cpu(&call->narrow_node, &output, &narrowed));
  }
  for (uint32_t k = 1; k < call->node.num_outputs; ++k) {
    if (!narrow_extra[k]) continue;
    etrt_runtime_tensor *extra = &values[call->args[spec->out + (int)k]].u.tensor;
    etrt_tensor narrowed = outputs[k];
    narrowed.dtype = extra->dtype;
    narrowed.data = extra->data;
    ETRT_RETURN_IF_ERROR(call->narrow_node.run_cpu(&call->narrow_node, &outputs[k], &narrowed));
  }
  if (call->layout_out != NULL) etrt_portable_relayout(out, call->layout_out, out->data, 1);
  return ETRT_OK;
}
