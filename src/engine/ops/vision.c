/* GridSample, RoiAlign, LRN and MeanVarianceNormalization: shape inference and the
 * plans (vision.h). */
#include "engine/ops/vision.h"

#include <string.h>

#include "engine/ops/op_check.h"

static const etrt_dtype etrt_vision_floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                                                ETRT_DTYPE_INVALID};

/* Refuses a node without `count` inputs, all present, and one output. */
static etrt_status etrt_vision_check_io(const etrt_node *node, const etrt_tensor *inputs,
                                        uint32_t count) {
  if (node->num_inputs != count || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes %u input(s) and 1 output",
                         count);
  for (uint32_t i = 0; i < count; ++i)
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is required", i);
  return ETRT_OK;
}

/* The index of `value` in the NULL-terminated `names`, or -1. */
static int32_t etrt_vision_choice(const char *value, const char *const *names) {
  for (int32_t i = 0; names[i] != NULL; ++i)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

etrt_status etrt_grid_sample_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_grid_sample_plan *plan) {
  ETRT_RETURN_IF_ERROR(etrt_vision_check_io(node, inputs, 2));
  const etrt_tensor *x = &inputs[0], *grid = &inputs[1];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "X", x->dtype, etrt_vision_floats));
  if (grid->dtype != x->dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "grid must have X's dtype %s",
                         etrt_dtype_name(x->dtype));
  if (x->rank != 4)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "X has rank %d; only 4-D images [N, C, H, W] are supported", (int)x->rank);
  if (grid->rank != 4 || grid->dims[0] != x->dims[0] || grid->dims[3] != 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "grid must be [N, H_out, W_out, 2] with X's N %lld",
                         (long long)x->dims[0]);
  /* opset 20 renamed bilinear and bicubic to linear and cubic */
  static const struct {
    const char *name;
    int32_t mode;
  } modes[] = {{"bilinear", ETRT_GRID_LINEAR},
               {"linear", ETRT_GRID_LINEAR},
               {"nearest", ETRT_GRID_NEAREST},
               {"bicubic", ETRT_GRID_CUBIC},
               {"cubic", ETRT_GRID_CUBIC}};
  static const char *const paddings[] = {"zeros", "border", "reflection", NULL};
  const char *mode = etrt_node_attribute_string(node, "mode", "bilinear");
  const char *padding = etrt_node_attribute_string(node, "padding_mode", "zeros");
  plan->mode = -1;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
    if (strcmp(mode, modes[i].name) == 0) plan->mode = modes[i].mode;
  if (plan->mode < 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "mode '%s' is not supported", mode);
  plan->padding = etrt_vision_choice(padding, paddings);
  if (plan->padding < 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "padding_mode '%s' is not supported",
                         padding);
  plan->align_corners = etrt_node_attribute_int(node, "align_corners", 0) != 0;
  plan->f64 = x->dtype == ETRT_DTYPE_FLOAT64;
  plan->channels = x->dims[1];
  plan->h_in = x->dims[2];
  plan->w_in = x->dims[3];
  plan->h_out = grid->dims[1];
  plan->w_out = grid->dims[2];
  if ((plan->h_in == 0 || plan->w_in == 0) && grid->dims[1] * grid->dims[2] * x->dims[1] != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "cannot sample an empty image");
  return ETRT_OK;
}

static etrt_status etrt_grid_sample_infer(const etrt_node *node, const etrt_tensor *inputs,
                                          etrt_tensor *outputs) {
  etrt_grid_sample_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_grid_sample_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 4;
  outputs[0].dims[0] = inputs[0].dims[0];
  outputs[0].dims[1] = plan.channels;
  outputs[0].dims[2] = plan.h_out;
  outputs[0].dims[3] = plan.w_out;
  return ETRT_OK;
}

etrt_status etrt_roi_align_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_roi_align_plan *plan) {
  ETRT_RETURN_IF_ERROR(etrt_vision_check_io(node, inputs, 3));
  const etrt_tensor *x = &inputs[0], *rois = &inputs[1], *batch = &inputs[2];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "X", x->dtype, etrt_vision_floats));
  if (rois->dtype != x->dtype)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "rois must have X's dtype %s",
                         etrt_dtype_name(x->dtype));
  static const etrt_dtype indices[] = {ETRT_DTYPE_INT64, ETRT_DTYPE_INT32, ETRT_DTYPE_INVALID};
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "batch_indices", batch->dtype, indices));
  if (x->rank != 4)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "X must be [N, C, H, W]");
  if (rois->rank != 2 || rois->dims[1] != 4 || batch->rank != 1 || batch->dims[0] != rois->dims[0])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "rois must be [R, 4] and batch_indices [R]");
  static const char *const modes[] = {"avg", "max", NULL};
  static const char *const transforms[] = {"output_half_pixel", "half_pixel", NULL};
  const char *mode = etrt_node_attribute_string(node, "mode", "avg");
  const char *transform =
      etrt_node_attribute_string(node, "coordinate_transformation_mode", "half_pixel");
  plan->max_mode = etrt_vision_choice(mode, modes);
  if (plan->max_mode < 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "mode '%s' is not supported", mode);
  plan->half_pixel = etrt_vision_choice(transform, transforms);
  if (plan->half_pixel < 0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "coordinate_transformation_mode '%s' is not supported", transform);
  plan->out_h = etrt_node_attribute_int(node, "output_height", 1);
  plan->out_w = etrt_node_attribute_int(node, "output_width", 1);
  plan->sampling_ratio = etrt_node_attribute_int(node, "sampling_ratio", 0);
  plan->spatial_scale = etrt_node_attribute_float(node, "spatial_scale", 1.0f);
  if (plan->out_h < 1 || plan->out_w < 1 || plan->sampling_ratio < 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "output_height and output_width must be positive and sampling_ratio "
                         "not negative");
  plan->f64 = x->dtype == ETRT_DTYPE_FLOAT64;
  plan->batch_i64 = batch->dtype == ETRT_DTYPE_INT64;
  plan->batch = x->dims[0];
  plan->channels = x->dims[1];
  plan->height = x->dims[2];
  plan->width = x->dims[3];
  plan->rois = rois->dims[0];
  if ((plan->height == 0 || plan->width == 0) && plan->rois * plan->channels != 0)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "cannot pool an empty image");
  return ETRT_OK;
}

static etrt_status etrt_roi_align_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  etrt_roi_align_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_roi_align_plan_make(node, inputs, &plan));
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = 4;
  outputs[0].dims[0] = plan.rois;
  outputs[0].dims[1] = plan.channels;
  outputs[0].dims[2] = plan.out_h;
  outputs[0].dims[3] = plan.out_w;
  return ETRT_OK;
}

etrt_status etrt_lrn_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_lrn_plan *plan) {
  ETRT_RETURN_IF_ERROR(etrt_vision_check_io(node, inputs, 1));
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "X", x->dtype, etrt_vision_floats));
  if (x->rank < 2) return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "X must be [N, C, ...]");
  const etrt_attribute *size = etrt_node_attribute(node, "size");
  if (size == NULL || size->kind != ETRT_ATTRIBUTE_INT || size->i < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "needs the positive int attribute 'size'");
  plan->f64 = x->dtype == ETRT_DTYPE_FLOAT64;
  plan->channels = x->dims[1];
  plan->inner = 1;
  for (int32_t d = 2; d < x->rank; ++d) plan->inner *= x->dims[d];
  plan->before = (size->i - 1) / 2;
  plan->after = size->i - 1 - plan->before;
  plan->scale = (double)etrt_node_attribute_float(node, "alpha", 1e-4f) / (double)size->i;
  plan->beta = etrt_node_attribute_float(node, "beta", 0.75f);
  plan->bias = etrt_node_attribute_float(node, "bias", 1.0f);
  return ETRT_OK;
}

etrt_status etrt_mvn_plan_make(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_mvn_plan *plan) {
  ETRT_RETURN_IF_ERROR(etrt_vision_check_io(node, inputs, 1));
  const etrt_tensor *x = &inputs[0];
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "X", x->dtype, etrt_vision_floats));
  int64_t axes[ETRT_MAX_RANK], count = 0;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "axes", axes, ETRT_MAX_RANK, &count));
  if (etrt_node_attribute(node, "axes") == NULL) {
    /* the default, over N and the spatial dims of an NCHW image */
    static const int64_t nchw[] = {0, 2, 3};
    count = 3;
    memcpy(axes, nchw, sizeof nchw);
  }
  plan->f64 = x->dtype == ETRT_DTYPE_FLOAT64;
  plan->rank = x->rank;
  plan->reduced = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
    if (a < 0 || a >= x->rank || (plan->reduced & (1u << a)))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "axis %lld is out of range or repeated for rank %d", (long long)axes[i],
                           (int)x->rank);
    plan->reduced |= 1u << a;
  }
  plan->groups = plan->members = 1;
  for (int32_t d = 0; d < x->rank; ++d) {
    plan->dims[d] = x->dims[d];
    if (plan->reduced & (1u << d))
      plan->members *= x->dims[d];
    else
      plan->groups *= x->dims[d];
  }
  return ETRT_OK;
}

/* LRN and MeanVarianceNormalization keep the input's dtype and shape. */
static void etrt_vision_same_shape(const etrt_tensor *inputs, etrt_tensor *outputs) {
  outputs[0].dtype = inputs[0].dtype;
  outputs[0].rank = inputs[0].rank;
  memcpy(outputs[0].dims, inputs[0].dims, sizeof inputs[0].dims);
}

static etrt_status etrt_lrn_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_lrn_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_lrn_plan_make(node, inputs, &plan));
  etrt_vision_same_shape(inputs, outputs);
  return ETRT_OK;
}

static etrt_status etrt_mvn_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_mvn_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_mvn_plan_make(node, inputs, &plan));
  etrt_vision_same_shape(inputs, outputs);
  return ETRT_OK;
}

static const etrt_op_def etrt_op_def_grid_sample = {.op_type = "GridSample",
                                                    .infer = etrt_grid_sample_infer,
                                                    .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_roi_align = {
    .op_type = "RoiAlign", .infer = etrt_roi_align_infer, .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_lrn = {
    .op_type = "LRN", .infer = etrt_lrn_infer, .cuda_supports = etrt_op_supports_all};
static const etrt_op_def etrt_op_def_mvn = {.op_type = "MeanVarianceNormalization",
                                            .infer = etrt_mvn_infer,
                                            .cuda_supports = etrt_op_supports_all};

const etrt_op_def *const etrt_ops_vision[] = {&etrt_op_def_grid_sample, &etrt_op_def_roi_align,
                                              &etrt_op_def_lrn, &etrt_op_def_mvn, NULL};
