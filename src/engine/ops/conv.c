/* Conv and ConvTranspose (ONNX opsets 1-18): attributes and shape inference. */
#include "engine/ops/conv.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "engine/ops/op_check.h"

static const etrt_dtype etrt_conv_types[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT16,
                                             ETRT_DTYPE_BFLOAT16, ETRT_DTYPE_INVALID};

static etrt_status etrt_conv_prepare(const etrt_node *node, void *state) {
  return etrt_conv_params_parse(node, 0, (etrt_conv_params *)state);
}

static const char *const etrt_conv_activation_names[] = {"NONE",      "Relu",    "Clip",
                                                         "HardSwish", "Sigmoid", "Silu"};

int etrt_conv_activation_parse(const char *name) {
  for (int i = 0; i < (int)(sizeof etrt_conv_activation_names / sizeof(char *)); ++i)
    if (strcmp(name, etrt_conv_activation_names[i]) == 0) return i;
  return -1;
}

static etrt_status etrt_fused_conv_prepare(const etrt_node *node, void *state) {
  etrt_fused_conv_params *p = state;
  ETRT_RETURN_IF_ERROR(etrt_conv_params_parse(node, 0, &p->conv));
  const char *name = etrt_node_attribute_string(node, "activation", "NONE");
  int activation = etrt_conv_activation_parse(name);
  if (activation < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "activation '%s' is not one of NONE, Relu, Clip, HardSwish, Sigmoid, Silu",
                         name);
  p->activation = (etrt_conv_activation)activation;
  p->min = etrt_node_attribute_float(node, "activation_min", -INFINITY);
  p->max = etrt_node_attribute_float(node, "activation_max", INFINITY);
  if (!(p->min <= p->max))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "activation_min %g is above activation_max %g", (double)p->min,
                         (double)p->max);
  p->scale = etrt_node_attribute_float(node, "activation_scale", 1.0f);
  p->shift = etrt_node_attribute_float(node, "activation_shift", 0.0f);
  if (!isfinite(p->scale) || !isfinite(p->shift))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "activation_scale %g and activation_shift %g must be finite",
                         (double)p->scale, (double)p->shift);
  return ETRT_OK;
}

/* Checks the inputs shared by the operators: X, W and the optional bias B of
 * `bias_size` elements (EtrtFusedConv's Z is checked by its own infer). */
static etrt_status etrt_conv_check_inputs(const etrt_node *node, const etrt_tensor *inputs,
                                          int64_t bias_size) {
  uint32_t most = strcmp(node->op_type, "EtrtFusedConv") == 0 ? 4 : 3;
  if (node->num_inputs < 2 || node->num_inputs > most || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0) || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes inputs X, W and an optional B%s, and one output",
                         most == 4 ? " and an optional Z" : "");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input X", inputs[0].dtype, etrt_conv_types));
  if (inputs[1].dtype != inputs[0].dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "W has type %s, X has %s",
                         etrt_dtype_name(inputs[1].dtype), etrt_dtype_name(inputs[0].dtype));
  if (etrt_op_has_input(node, inputs, 2)) {
    const etrt_tensor *b = &inputs[2];
    if (b->dtype != inputs[0].dtype || b->rank != 1 || b->dims[0] != bias_size)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "B must be a 1-D %s tensor of %lld elements",
                           etrt_dtype_name(inputs[0].dtype), (long long)bias_size);
  }
  return ETRT_OK;
}

/* The parameters and geometry of Conv, or of ConvTranspose with `transpose`. */
static etrt_status etrt_conv_geometry_of(const etrt_node *node, const etrt_tensor *inputs,
                                         bool transpose, etrt_conv_params *params,
                                         etrt_conv_geometry *g) {
  ETRT_RETURN_IF_ERROR(etrt_conv_params_parse(node, 0, params));
  if (node->num_inputs < 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes inputs X, W and optional B");
  return transpose ? etrt_conv_geometry_transpose(node, params, &inputs[0], &inputs[1], g)
                   : etrt_conv_geometry_conv(node, params, &inputs[0], &inputs[1], g);
}

/* Checks the inputs against `maps` output maps, then writes the output's shape. */
static etrt_status etrt_conv_output(const etrt_node *node, const etrt_tensor *inputs,
                                    const etrt_conv_geometry *g, int64_t maps,
                                    etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_conv_check_inputs(node, inputs, maps));
  const etrt_tensor *x = &inputs[0];
  outputs[0].dtype = x->dtype;
  outputs[0].rank = x->rank;
  outputs[0].dims[0] = x->dims[0];
  outputs[0].dims[1] = maps;
  for (int32_t i = 0; i < g->spatial; ++i) outputs[0].dims[i + 2] = g->out[i];
  return ETRT_OK;
}

static etrt_status etrt_conv_infer(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  /* channels_last: the shapes are worked out on X and W seen in NCHW order, and the
   * output's dims are then put in the same order as X's. */
  bool channels_last = etrt_node_attribute_int(node, "channels_last", 0) == 1;
  etrt_tensor viewed[4];
  if (channels_last && node->num_inputs >= 2 && node->num_inputs <= 4) {
    ETRT_RETURN_IF_ERROR(etrt_conv_check_channels_last(node, &inputs[0], "X"));
    ETRT_RETURN_IF_ERROR(etrt_conv_check_channels_last(node, &inputs[1], "W"));
    for (uint32_t i = 0; i < node->num_inputs; ++i) viewed[i] = inputs[i];
    viewed[0] = etrt_conv_nchw_view(&inputs[0]);
    viewed[1] = etrt_conv_nchw_view(&inputs[1]);
    inputs = viewed;
  }
  etrt_conv_params params;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_of(node, inputs, false, &params, &g));
  const etrt_tensor *x = &inputs[0], *w = &inputs[1];
  int64_t channels = x->dims[1], maps = w->dims[0];
  if (channels != w->dims[1] * params.group || maps % params.group != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input has %lld channels and W is [%lld, %lld, ...] with group %lld: "
                         "need channels = W[1] * group and W[0] divisible by group",
                         (long long)channels, (long long)maps, (long long)w->dims[1],
                         (long long)params.group);
  ETRT_RETURN_IF_ERROR(etrt_conv_output(node, inputs, &g, maps, outputs));
  if (channels_last) etrt_conv_nhwc_dims(&outputs[0]);
  return ETRT_OK;
}

static etrt_status etrt_fused_conv_infer(const etrt_node *node, const etrt_tensor *inputs,
                                         etrt_tensor *outputs) {
  ETRT_RETURN_IF_ERROR(etrt_conv_infer(node, inputs, outputs));
  if (node->num_inputs < 4 || !etrt_op_has_input(node, inputs, 3)) return ETRT_OK;
  const etrt_tensor *z = &inputs[3];
  bool same = z->dtype == outputs[0].dtype && z->rank == outputs[0].rank;
  for (int32_t i = 0; same && i < z->rank; ++i) same = z->dims[i] == outputs[0].dims[i];
  if (!same)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the residual Z must have the output's type and shape");
  return ETRT_OK;
}

static etrt_status etrt_conv_transpose_infer(const etrt_node *node, const etrt_tensor *inputs,
                                             etrt_tensor *outputs) {
  etrt_conv_params params;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_of(node, inputs, true, &params, &g));
  const etrt_tensor *x = &inputs[0], *w = &inputs[1];
  int64_t channels = x->dims[1];
  if (channels != w->dims[0] || channels % params.group != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input has %lld channels and W is [%lld, ...] with group %lld: need "
                         "channels = W[0], divisible by group",
                         (long long)channels, (long long)w->dims[0], (long long)params.group);
  return etrt_conv_output(node, inputs, &g, w->dims[1] * params.group, outputs);
}

/* The CUDA kernels take X, W and the optional bias of one float dtype. */
static int etrt_conv_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  etrt_dtype t = inputs[0].dtype;
  if (!etrt_op_dtype_is_float(t) || inputs[1].dtype != t) return 0;
  return node->num_inputs < 3 || inputs[2].rank < 0 || inputs[2].dtype == t;
}

/* cuDNN's fused convolution (and the GEMM path's epilogue) applies Relu or nothing, and
 * no affine block after it (the builder folds those in CPU plans only). */
static int etrt_fused_conv_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  const etrt_fused_conv_params *p = node->state;
  if (p->activation != ETRT_CONV_ACT_NONE && p->activation != ETRT_CONV_ACT_RELU) return 0;
  if (p->scale != 1.0f || p->shift != 0.0f) return 0;
  if (!etrt_conv_cuda_supports(node, inputs)) return 0;
  return node->num_inputs < 4 || inputs[3].rank < 0 || inputs[3].dtype == inputs[0].dtype;
}

static const etrt_op_def etrt_op_def_conv = {.op_type = "Conv",
                                             .state_size = sizeof(etrt_conv_params),
                                             .prepare = etrt_conv_prepare,
                                             .infer = etrt_conv_infer,
                                             .cuda_supports = etrt_conv_cuda_supports,
                                             .channels_last = 1};
static const etrt_op_def etrt_op_def_fused_conv = {.op_type = "EtrtFusedConv",
                                                   .state_size = sizeof(etrt_fused_conv_params),
                                                   .prepare = etrt_fused_conv_prepare,
                                                   .infer = etrt_fused_conv_infer,
                                                   .cuda_supports = etrt_fused_conv_cuda_supports,
                                                   .channels_last = 1};
static const etrt_op_def etrt_op_def_conv_transpose = {.op_type = "ConvTranspose",
                                                       .state_size = sizeof(etrt_conv_params),
                                                       .prepare = etrt_conv_prepare,
                                                       .infer = etrt_conv_transpose_infer,
                                                       .cuda_supports = etrt_conv_cuda_supports};

const etrt_op_def *const etrt_ops_conv[] = {&etrt_op_def_conv, &etrt_op_def_conv_transpose,
                                            &etrt_op_def_fused_conv, NULL};
