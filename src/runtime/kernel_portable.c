/* ExecuTorch portable operators (out variants) on the engine's CPU kernels. The
 * arguments follow ExecuTorch's encoding of out variants: the schema's arguments in
 * order, the out tensor among them, then the return value (the out tensor again). */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "runtime/kernels.h"

typedef struct etrt_portable_spec {
  etrt_kernel_def def;                          /* first: the registry hands out &spec->def */
  const char *op_type;                          /* the engine operation */
  int8_t inputs[ETRT_KERNEL_MAX_ENGINE_INPUTS]; /* argument index per engine input; -1 none */
  int8_t optional_input; /* an input that may be None (linear's bias), else -1 */
  int8_t out;
  int8_t alpha; /* Scalar alpha argument, else -1 */
  int8_t beta;
  int linear; /* weight is [out, in]: Gemm with transB; leading input axes flattened */
} etrt_portable_spec;

static const etrt_portable_spec *etrt_portable_spec_of(const etrt_kernel_call *call) {
  return (const etrt_portable_spec *)call->def;
}

static etrt_status etrt_portable_scalar(const etrt_value *value, uint32_t arg, double *out) {
  switch (value->tag) {
    case ETRT_VALUE_INT:
      *out = (double)value->u.i;
      return ETRT_OK;
    case ETRT_VALUE_DOUBLE:
      *out = value->u.d;
      return ETRT_OK;
    case ETRT_VALUE_BOOL:
      *out = value->u.b ? 1.0 : 0.0;
      return ETRT_OK;
    default:
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %u must be a scalar", arg);
  }
}

static etrt_status etrt_portable_node(etrt_node *node, void **state, const char *op_type,
                                      uint32_t num_inputs, const int32_t *inputs,
                                      const int32_t *output, const etrt_attribute *attributes,
                                      uint32_t num_attributes) {
  const etrt_op_def *def = etrt_op_find(op_type);
  if (def == NULL) return etrt_error(ETRT_ERROR_INTERNAL, "the engine lacks operation %s", op_type);
  memset(node, 0, sizeof *node);
  node->op_type = op_type;
  node->name = op_type;
  node->num_inputs = num_inputs;
  node->num_outputs = 1;
  node->inputs = inputs;
  node->outputs = output;
  node->attributes = attributes;
  node->num_attributes = num_attributes;
  node->def = def;
  node->run_cpu = etrt_op_cpu_find(op_type);
  *state = NULL;
  if (def->state_size > 0) {
    *state = calloc(1, def->state_size);
    if (*state == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory preparing %s", op_type);
  }
  node->state = *state;
  return def->prepare != NULL ? def->prepare(node, *state) : ETRT_OK;
}

static const etrt_runtime_tensor *etrt_portable_tensor(const etrt_value *values,
                                                       const etrt_kernel_call *call, int arg) {
  const etrt_value *v = &values[call->args[arg]];
  return v->tag == ETRT_VALUE_TENSOR ? &v->u.tensor : NULL;
}

static etrt_status etrt_portable_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  uint32_t num_inputs = 0;
  for (int i = 0; i < ETRT_KERNEL_MAX_ENGINE_INPUTS && spec->inputs[i] >= 0; ++i) {
    int arg = spec->inputs[i];
    const etrt_value *v = &values[call->args[arg]];
    if (v->tag == ETRT_VALUE_NONE && arg == spec->optional_input) {
      call->node_inputs[num_inputs++] = -1;
      continue;
    }
    if (v->tag != ETRT_VALUE_TENSOR)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %d must be a tensor", arg);
    if (v->u.tensor.device.type != ETRT_DEVICE_CPU)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "argument %d is planned on a device; this operator runs on the CPU", arg);
    call->node_inputs[num_inputs] = (int32_t)num_inputs;
    ++num_inputs;
  }
  const etrt_runtime_tensor *out = etrt_portable_tensor(values, call, spec->out);
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "argument %d (out) must be a tensor", spec->out);
  if (out->device.type != ETRT_DEVICE_CPU)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "the out tensor is planned on a device; this operator runs on the CPU");
  call->node_output = (int32_t)num_inputs;

  uint32_t num_attributes = 0;
  double alpha = 1.0, beta = 1.0;
  if (spec->alpha >= 0)
    ETRT_RETURN_IF_ERROR(
        etrt_portable_scalar(&values[call->args[spec->alpha]], (uint32_t)spec->alpha, &alpha));
  if (spec->beta >= 0)
    ETRT_RETURN_IF_ERROR(
        etrt_portable_scalar(&values[call->args[spec->beta]], (uint32_t)spec->beta, &beta));
  int gemm = strcmp(spec->op_type, "Gemm") == 0;
  if (gemm) {
    call->attributes[num_attributes++] =
        (etrt_attribute){.name = "alpha", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)alpha};
    call->attributes[num_attributes++] =
        (etrt_attribute){.name = "beta", .kind = ETRT_ATTRIBUTE_FLOAT, .f = (float)beta};
    if (spec->linear)
      call->attributes[num_attributes++] =
          (etrt_attribute){.name = "transB", .kind = ETRT_ATTRIBUTE_INT, .i = 1};
  }
  ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->node, &call->state, spec->op_type, num_inputs,
                                          call->node_inputs, &call->node_output, call->attributes,
                                          num_attributes));
  call->alpha = alpha;
  if (!gemm && alpha != 1.0) {
    /* other * alpha goes through a scratch buffer as large as `other` can get. */
    const etrt_runtime_tensor *other = etrt_portable_tensor(values, call, spec->inputs[1]);
    size_t size = etrt_dtype_size(other->dtype);
    for (int32_t i = 0; i < other->rank; ++i) size *= (size_t)other->max_sizes[i];
    call->scratch_size = size + 16;
    call->scratch = calloc(1, call->scratch_size);
    if (call->scratch == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for alpha scratch");
    static const int32_t scale_inputs[2] = {0, 1};
    static const int32_t scale_output = 2;
    ETRT_RETURN_IF_ERROR(etrt_portable_node(&call->scale_node, &call->scale_state, "Mul", 2,
                                            scale_inputs, &scale_output, NULL, 0));
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

/* Writes alpha as a 0-D tensor of `dtype` at the front of the scratch. */
static etrt_status etrt_portable_alpha_tensor(etrt_kernel_call *call, etrt_dtype dtype,
                                              etrt_tensor *out) {
  memset(out, 0, sizeof *out);
  out->dtype = dtype;
  out->rank = 0;
  out->data = call->scratch;
  out->host_value = call->scratch;
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      *(float *)call->scratch = (float)call->alpha;
      return ETRT_OK;
    case ETRT_DTYPE_FLOAT64:
      *(double *)call->scratch = call->alpha;
      return ETRT_OK;
    case ETRT_DTYPE_INT32:
      *(int32_t *)call->scratch = (int32_t)call->alpha;
      return ETRT_OK;
    case ETRT_DTYPE_INT64:
      *(int64_t *)call->scratch = (int64_t)call->alpha;
      return ETRT_OK;
    default:
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "alpha != 1 is not supported for %s",
                        etrt_dtype_name(dtype));
  }
}

static etrt_status etrt_portable_run(etrt_kernel_call *call, etrt_value *values,
                                     etrt_run_context *context) {
  (void)context;
  const etrt_portable_spec *spec = etrt_portable_spec_of(call);
  etrt_tensor inputs[ETRT_KERNEL_MAX_ENGINE_INPUTS];
  for (uint32_t i = 0; i < call->node.num_inputs; ++i) {
    if (call->node_inputs[i] < 0) {
      memset(&inputs[i], 0, sizeof inputs[i]);
      inputs[i].rank = -1;
      continue;
    }
    etrt_portable_view(etrt_portable_tensor(values, call, spec->inputs[i]), &inputs[i]);
  }
  int64_t leading[ETRT_MAX_RANK];
  int32_t leading_rank = 0;
  if (spec->linear && inputs[0].rank > 2) {
    /* [*, in] viewed as [prod(*), in]: the bytes are contiguous, so no copy. */
    leading_rank = inputs[0].rank - 1;
    memcpy(leading, inputs[0].dims, (size_t)leading_rank * sizeof(int64_t));
    int64_t rows = 1;
    for (int32_t i = 0; i < leading_rank; ++i) rows *= leading[i];
    inputs[0].dims[0] = rows;
    inputs[0].dims[1] = inputs[0].dims[inputs[0].rank - 1];
    inputs[0].rank = 2;
  }
  etrt_tensor scaled;
  if (call->scale_node.def != NULL) {
    etrt_tensor scale_inputs[2] = {inputs[1]};
    ETRT_RETURN_IF_ERROR(etrt_portable_alpha_tensor(call, inputs[1].dtype, &scale_inputs[1]));
    scaled = inputs[1];
    scaled.data = (uint8_t *)call->scratch + 16;
    scaled.host_value = scaled.data;
    ETRT_RETURN_IF_ERROR(call->scale_node.run_cpu(&call->scale_node, scale_inputs, &scaled));
    inputs[1] = scaled;
  }
  etrt_tensor output;
  memset(&output, 0, sizeof output);
  ETRT_RETURN_IF_ERROR(call->node.def->infer(&call->node, inputs, &output));
  if (leading_rank > 0) {
    int64_t features = output.dims[1];
    memcpy(output.dims, leading, (size_t)leading_rank * sizeof(int64_t));
    output.dims[leading_rank] = features;
    output.rank = leading_rank + 1;
  }
  etrt_runtime_tensor *out = &values[call->args[spec->out]].u.tensor;
  if (output.dtype != out->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: the result is %s, the out tensor %s",
                      call->def->name, etrt_dtype_name(output.dtype), etrt_dtype_name(out->dtype));
  int same = output.rank == out->rank &&
             memcmp(output.dims, out->sizes, (size_t)out->rank * sizeof(int64_t)) == 0;
  if (!same) {
    etrt_runtime_tensor resized = *out;
    resized.rank = output.rank;
    memcpy(resized.sizes, output.dims, sizeof resized.sizes);
    size_t need = etrt_runtime_tensor_nbytes(&resized);
    if (!out->dynamic || output.rank != out->rank || need > out->capacity)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s (instruction %u): the result's shape does not fit the out tensor",
                        call->def->name, call->instruction);
    memcpy(out->sizes, output.dims, sizeof out->sizes);
  }
  output.data = out->data;
  if (leading_rank > 0) {
    output.rank = 2;
    output.dims[0] = inputs[0].dims[0];
    output.dims[1] = out->sizes[out->rank - 1];
  }
  return call->node.run_cpu(&call->node, inputs, &output);
}

#define ETRT_PORTABLE(var, name_, nargs, op, i0, i1, i2, opt, out_, alpha_, beta_, linear_)        \
  static const etrt_portable_spec var = {{name_, nargs, etrt_portable_prepare, etrt_portable_run}, \
                                         op,                                                       \
                                         {i0, i1, i2},                                             \
                                         opt,                                                      \
                                         out_,                                                     \
                                         alpha_,                                                   \
                                         beta_,                                                    \
                                         linear_}

/* add.out(self, other, *, alpha, out) -> out: args [self, other, alpha, out, ret]. */
ETRT_PORTABLE(etrt_portable_add, "aten::add.out", 5, "Add", 0, 1, -1, -1, 3, 2, -1, 0);
ETRT_PORTABLE(etrt_portable_sub, "aten::sub.out", 5, "Sub", 0, 1, -1, -1, 3, 2, -1, 0);
ETRT_PORTABLE(etrt_portable_mul, "aten::mul.out", 4, "Mul", 0, 1, -1, -1, 2, -1, -1, 0);
ETRT_PORTABLE(etrt_portable_relu, "aten::relu.out", 3, "Relu", 0, -1, -1, -1, 1, -1, -1, 0);
ETRT_PORTABLE(etrt_portable_mm, "aten::mm.out", 4, "MatMul", 0, 1, -1, -1, 2, -1, -1, 0);
/* addmm.out(self, mat1, mat2, *, beta, alpha, out): Gemm(A=mat1, B=mat2, C=self). */
ETRT_PORTABLE(etrt_portable_addmm, "aten::addmm.out", 7, "Gemm", 1, 2, 0, -1, 5, 4, 3, 0);
/* linear.out(input, weight, bias?, *, out): Gemm(input, weight^T, bias). */
ETRT_PORTABLE(etrt_portable_linear, "aten::linear.out", 5, "Gemm", 0, 1, 2, 2, 3, -1, -1, 1);

const etrt_kernel_def *const etrt_kernels_portable[] = {
    &etrt_portable_add.def,    &etrt_portable_sub.def,
    &etrt_portable_mul.def,    &etrt_portable_relu.def,
    &etrt_portable_mm.def,     &etrt_portable_addmm.def,
    &etrt_portable_linear.def, NULL,
};
