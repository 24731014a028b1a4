#include "engine/ops/conv_shape.h"

#include <string.h>

#include "engine/ops/op_check.h"

/* Python's floor division: ONNX writes its padding formulas in it, and they meet
 * negative totals (ConvTranspose with a larger output_shape). */
static int64_t etrt_conv_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/* Bounds on attribute values: with axis sizes below 2^40, products of a kernel,
 * stride or dilation (below 2^20) with a size stay far from overflow. */
#define ETRT_CONV_MAX_WINDOW ((int64_t)1 << 20)
#define ETRT_CONV_MAX_PAD ((int64_t)1 << 40)

static etrt_status etrt_conv_read_list(const etrt_node *node, const char *name, int64_t *out,
                                       int64_t capacity, int32_t *count, int64_t minimum,
                                       int64_t maximum) {
  int64_t n;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, name, out, capacity, &n));
  for (int64_t i = 0; i < n; ++i) {
    if (out[i] < minimum || out[i] > maximum)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "attribute '%s'[%lld] is %lld, must be in [%lld, %lld]", name,
                           (long long)i, (long long)out[i], (long long)minimum, (long long)maximum);
  }
  *count = (int32_t)n;
  return ETRT_OK;
}

etrt_status etrt_conv_params_parse(const etrt_node *node, int require_kernel, etrt_conv_params *p) {
  memset(p, 0, sizeof *p);
  const char *auto_pad = etrt_node_attribute_string(node, "auto_pad", "NOTSET");
  if (strcmp(auto_pad, "NOTSET") == 0)
    p->auto_pad = ETRT_AUTO_PAD_NOTSET;
  else if (strcmp(auto_pad, "SAME_UPPER") == 0)
    p->auto_pad = ETRT_AUTO_PAD_SAME_UPPER;
  else if (strcmp(auto_pad, "SAME_LOWER") == 0)
    p->auto_pad = ETRT_AUTO_PAD_SAME_LOWER;
  else if (strcmp(auto_pad, "VALID") == 0)
    p->auto_pad = ETRT_AUTO_PAD_VALID;
  else
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "unknown auto_pad '%s'", auto_pad);
  p->group = etrt_node_attribute_int(node, "group", 1);
  if (p->group < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "group must be positive, is %lld",
                         (long long)p->group);
  p->ceil_mode = etrt_node_attribute_int(node, "ceil_mode", 0) != 0;
  p->count_include_pad = etrt_node_attribute_int(node, "count_include_pad", 0) != 0;
  p->lp_p = etrt_node_attribute_int(node, "p", 2);
  p->storage_order = etrt_node_attribute_int(node, "storage_order", 0);
  p->channels_last = etrt_node_attribute_int(node, "channels_last", 0) == 1;
  if (p->storage_order != 0 && p->storage_order != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "storage_order must be 0 or 1");
  const int64_t cap = ETRT_CONV_MAX_SPATIAL;
  ETRT_RETURN_IF_ERROR(etrt_conv_read_list(node, "kernel_shape", p->kernel, cap, &p->kernel_count,
                                           1, ETRT_CONV_MAX_WINDOW));
  ETRT_RETURN_IF_ERROR(etrt_conv_read_list(node, "strides", p->strides, cap, &p->stride_count, 1,
                                           ETRT_CONV_MAX_WINDOW));
  ETRT_RETURN_IF_ERROR(etrt_conv_read_list(node, "dilations", p->dilations, cap, &p->dilation_count,
                                           1, ETRT_CONV_MAX_WINDOW));
  ETRT_RETURN_IF_ERROR(
      etrt_conv_read_list(node, "pads", p->pads, 2 * cap, &p->pad_count, 0, ETRT_CONV_MAX_PAD));
  ETRT_RETURN_IF_ERROR(etrt_conv_read_list(node, "output_padding", p->output_padding, cap,
                                           &p->output_padding_count, 0, ETRT_CONV_MAX_WINDOW));
  ETRT_RETURN_IF_ERROR(etrt_conv_read_list(node, "output_shape", p->output_shape, cap,
                                           &p->output_shape_count, 0, ETRT_CONV_MAX_PAD));
  if (require_kernel && p->kernel_count == 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute 'kernel_shape' is required");
  if (p->pad_count % 2 != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "attribute 'pads' must have an even count, has %d", (int)p->pad_count);
  return ETRT_OK;
}

/* Checks that an attribute list (when given) has one value per spatial axis. */
static etrt_status etrt_conv_check_count(const etrt_node *node, const char *name, int32_t count,
                                         int32_t expected) {
  if (count != 0 && count != expected)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "attribute '%s' has %d values, the input has %d spatial axes", name,
                         (int)count, (int)expected);
  return ETRT_OK;
}

/* Fills spatial count, input sizes, kernel, strides, dilations and explicit pads. */
static etrt_status etrt_conv_geometry_common(const etrt_node *node, const etrt_conv_params *p,
                                             const etrt_tensor *input, etrt_conv_geometry *g) {
  memset(g, 0, sizeof *g);
  if (input->rank < 3)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input must have rank 3 or more ([N, C, spatial...]), has rank %d",
                         (int)input->rank);
  g->spatial = input->rank - 2;
  ETRT_RETURN_IF_ERROR(etrt_conv_check_count(node, "kernel_shape", p->kernel_count, g->spatial));
  ETRT_RETURN_IF_ERROR(etrt_conv_check_count(node, "strides", p->stride_count, g->spatial));
  ETRT_RETURN_IF_ERROR(etrt_conv_check_count(node, "dilations", p->dilation_count, g->spatial));
  ETRT_RETURN_IF_ERROR(etrt_conv_check_count(node, "pads", p->pad_count / 2, g->spatial));
  for (int32_t i = 0; i < g->spatial; ++i) {
    g->in[i] = input->dims[i + 2];
    g->kernel[i] = p->kernel_count ? p->kernel[i] : 1;
    g->stride[i] = p->stride_count ? p->strides[i] : 1;
    g->dilation[i] = p->dilation_count ? p->dilations[i] : 1;
    g->pad_begin[i] = p->pad_count ? p->pads[i] : 0;
    g->pad_end[i] = p->pad_count ? p->pads[i + g->spatial] : 0;
  }
  return ETRT_OK;
}

/* Forward windows (Conv and pools): output sizes and, for auto_pad, the pads. */
static etrt_status etrt_conv_geometry_forward(const etrt_node *node, const etrt_conv_params *p,
                                              int ceil_mode, etrt_conv_geometry *g) {
  for (int32_t i = 0; i < g->spatial; ++i) {
    int64_t span = (g->kernel[i] - 1) * g->dilation[i] + 1;
    if (p->auto_pad == ETRT_AUTO_PAD_SAME_UPPER || p->auto_pad == ETRT_AUTO_PAD_SAME_LOWER) {
      g->out[i] = (g->in[i] + g->stride[i] - 1) / g->stride[i];
      int64_t total = (g->out[i] - 1) * g->stride[i] + span - g->in[i];
      if (total < 0) total = 0;
      g->pad_begin[i] = p->auto_pad == ETRT_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
      g->pad_end[i] = total - g->pad_begin[i];
      continue;
    }
    if (p->auto_pad == ETRT_AUTO_PAD_VALID) g->pad_begin[i] = g->pad_end[i] = 0;
    int64_t room = g->in[i] + g->pad_begin[i] + g->pad_end[i] - span;
    if (room < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "spatial axis %d: the window (%lld with dilation) is larger than the "
                           "padded input (%lld)",
                           (int)i, (long long)span,
                           (long long)(g->in[i] + g->pad_begin[i] + g->pad_end[i]));
    if (ceil_mode) {
      g->out[i] = (room + g->stride[i] - 1) / g->stride[i] + 1;
      /* A last window that would start inside the end padding is dropped. */
      if ((g->out[i] - 1) * g->stride[i] >= g->in[i] + g->pad_begin[i]) --g->out[i];
    } else {
      g->out[i] = room / g->stride[i] + 1;
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_conv_check_weights_rank(const etrt_node *node, const etrt_tensor *input,
                                                const etrt_tensor *weights) {
  if (weights->rank != input->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "weights have rank %d, the input has rank %d", (int)weights->rank,
                         (int)input->rank);
  return ETRT_OK;
}

/* The kernel size along spatial axis i is the weights' (W is [.., .., k0, k1, ...]);
 * kernel_shape, when given, must agree. */
static etrt_status etrt_conv_kernel_axis(const etrt_node *node, const etrt_conv_params *p,
                                         const etrt_tensor *weights, int32_t i,
                                         etrt_conv_geometry *g) {
  if (p->kernel_count && p->kernel[i] != weights->dims[i + 2])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "kernel_shape[%d] is %lld, the weights have %lld", (int)i,
                         (long long)p->kernel[i], (long long)weights->dims[i + 2]);
  g->kernel[i] = weights->dims[i + 2];
  if (g->kernel[i] < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "the weights' kernel is empty");
  return ETRT_OK;
}

etrt_status etrt_conv_geometry_conv(const etrt_node *node, const etrt_conv_params *p,
                                    const etrt_tensor *input, const etrt_tensor *weights,
                                    etrt_conv_geometry *g) {
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_common(node, p, input, g));
  ETRT_RETURN_IF_ERROR(etrt_conv_check_weights_rank(node, input, weights));
  for (int32_t i = 0; i < g->spatial; ++i)
    ETRT_RETURN_IF_ERROR(etrt_conv_kernel_axis(node, p, weights, i, g));
  return etrt_conv_geometry_forward(node, p, 0, g);
}

etrt_status etrt_conv_geometry_pool(const etrt_node *node, const etrt_conv_params *p,
                                    const etrt_tensor *input, etrt_conv_geometry *g) {
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_common(node, p, input, g));
  return etrt_conv_geometry_forward(node, p, p->ceil_mode, g);
}

etrt_status etrt_conv_geometry_transpose(const etrt_node *node, const etrt_conv_params *p,
                                         const etrt_tensor *input, const etrt_tensor *weights,
                                         etrt_conv_geometry *g) {
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_common(node, p, input, g));
  ETRT_RETURN_IF_ERROR(etrt_conv_check_weights_rank(node, input, weights));
  ETRT_RETURN_IF_ERROR(
      etrt_conv_check_count(node, "output_padding", p->output_padding_count, g->spatial));
  ETRT_RETURN_IF_ERROR(
      etrt_conv_check_count(node, "output_shape", p->output_shape_count, g->spatial));
  for (int32_t i = 0; i < g->spatial; ++i) {
    ETRT_RETURN_IF_ERROR(etrt_conv_kernel_axis(node, p, weights, i, g));
    int64_t out_pad = p->output_padding_count ? p->output_padding[i] : 0;
    if (out_pad >= g->stride[i] && out_pad >= g->dilation[i])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "output_padding[%d] (%lld) must be smaller than the stride or the "
                           "dilation",
                           (int)i, (long long)out_pad);
    int64_t span = (g->kernel[i] - 1) * g->dilation[i] + 1;
    int64_t full = g->stride[i] * (g->in[i] - 1) + out_pad + span;
    int same = p->auto_pad == ETRT_AUTO_PAD_SAME_UPPER || p->auto_pad == ETRT_AUTO_PAD_SAME_LOWER;
    if (p->output_shape_count || same) {
      g->out[i] = p->output_shape_count ? p->output_shape[i] : g->in[i] * g->stride[i];
      int64_t total = full - g->out[i];
      int64_t half = etrt_conv_floor_div(total, 2);
      if (p->auto_pad == ETRT_AUTO_PAD_SAME_UPPER) {
        g->pad_begin[i] = half;
        g->pad_end[i] = total - half;
      } else {
        g->pad_begin[i] = total - half;
        g->pad_end[i] = half;
      }
    } else {
      if (p->auto_pad == ETRT_AUTO_PAD_VALID) g->pad_begin[i] = g->pad_end[i] = 0;
      g->out[i] = full - g->pad_begin[i] - g->pad_end[i];
    }
    if (g->out[i] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "spatial axis %d: the pads leave a negative output size", (int)i);
  }
  return ETRT_OK;
}

static int64_t etrt_conv_product(const int64_t *v, int32_t n) {
  int64_t p = 1;
  for (int32_t i = 0; i < n; ++i) p *= v[i];
  return p;
}

int64_t etrt_conv_geometry_out_count(const etrt_conv_geometry *g) {
  return etrt_conv_product(g->out, g->spatial);
}
int64_t etrt_conv_geometry_kernel_count(const etrt_conv_geometry *g) {
  return etrt_conv_product(g->kernel, g->spatial);
}
int64_t etrt_conv_geometry_in_count(const etrt_conv_geometry *g) {
  return etrt_conv_product(g->in, g->spatial);
}

etrt_tensor etrt_conv_nchw_view(const etrt_tensor *t) {
  etrt_tensor v = *t;
  if (t->rank < 3) return v;
  v.dims[1] = t->dims[t->rank - 1];
  for (int32_t a = 2; a < t->rank; ++a) v.dims[a] = t->dims[a - 1];
  return v;
}

void etrt_conv_nhwc_dims(etrt_tensor *t) {
  if (t->rank < 3) return;
  int64_t channels = t->dims[1];
  for (int32_t a = 1; a + 1 < t->rank; ++a) t->dims[a] = t->dims[a + 1];
  t->dims[t->rank - 1] = channels;
}

etrt_status etrt_conv_check_channels_last(const etrt_node *node, const etrt_tensor *t,
                                          const char *what) {
  if (t->rank != 4)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "channels_last takes a 4-D %s ([N, H, W, C]), it has rank %d", what,
                         (int)t->rank);
  return ETRT_OK;
}
