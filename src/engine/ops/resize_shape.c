#include "engine/ops/resize_shape.h"

#include <math.h>
#include <string.h>

#include "engine/ops/op_check.h"

etrt_status etrt_resize_params_parse(const etrt_node *node, etrt_resize_params *p) {
  memset(p, 0, sizeof *p);
  int upsample = strcmp(node->op_type, "Upsample") == 0;
  /* Upsample and opset 10's Resize take (X, scales) and map coordinates
   * asymmetrically with floor rounding. */
  int legacy = upsample || node->num_inputs == 2;
  const char *mode = etrt_node_attribute_string(node, "mode", "nearest");
  if (strcmp(mode, "nearest") == 0)
    p->mode = ETRT_RESIZE_NEAREST;
  else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
    p->mode = ETRT_RESIZE_LINEAR;
  else if (strcmp(mode, "cubic") == 0 && !legacy)
    p->mode = ETRT_RESIZE_CUBIC;
  else
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "unknown mode '%s'", mode);
  const char *t = etrt_node_attribute_string(node, "coordinate_transformation_mode",
                                             legacy ? "asymmetric" : "half_pixel");
  static const char *const transforms[] = {"half_pixel",           "pytorch_half_pixel",
                                           "align_corners",        "asymmetric",
                                           "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  int found = 0;
  for (int i = 0; i < 6; ++i) {
    if (strcmp(t, transforms[i]) == 0) {
      p->transform = (etrt_resize_transform)i;
      found = 1;
    }
  }
  if (!found)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "coordinate_transformation_mode '%s'", t);
  const char *n =
      etrt_node_attribute_string(node, "nearest_mode", legacy ? "floor" : "round_prefer_floor");
  if (strcmp(n, "round_prefer_floor") == 0)
    p->nearest = ETRT_RESIZE_ROUND_PREFER_FLOOR;
  else if (strcmp(n, "round_prefer_ceil") == 0)
    p->nearest = ETRT_RESIZE_ROUND_PREFER_CEIL;
  else if (strcmp(n, "floor") == 0)
    p->nearest = ETRT_RESIZE_FLOOR;
  else if (strcmp(n, "ceil") == 0)
    p->nearest = ETRT_RESIZE_CEIL;
  else
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "unknown nearest_mode '%s'", n);
  p->cubic_a = etrt_node_attribute_float(node, "cubic_coeff_a", -0.75f);
  p->exclude_outside = etrt_node_attribute_int(node, "exclude_outside", 0) != 0;
  p->extrapolation_value = etrt_node_attribute_float(node, "extrapolation_value", 0.0f);
  if (etrt_node_attribute(node, "axes") != NULL ||
      strcmp(etrt_node_attribute_string(node, "keep_aspect_ratio_policy", "stretch"), "stretch") !=
          0)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "the axes and keep_aspect_ratio_policy attributes are not supported");
  if (legacy) {
    p->scales_input = 1;
  } else {
    p->scales_input = 2;
    p->sizes_input = node->num_inputs > 3 ? 3 : 0;
  }
  return ETRT_OK;
}

etrt_status etrt_resize_geometry_compute(const etrt_node *node, const etrt_resize_params *p,
                                         const etrt_tensor *inputs, etrt_resize_geometry *g) {
  const etrt_tensor *x = &inputs[0];
  memset(g, 0, sizeof *g);
  g->rank = x->rank;
  memcpy(g->in, x->dims, sizeof g->in);
  for (int32_t i = 0; i < x->rank; ++i) {
    g->roi_start[i] = 0.0;
    g->roi_end[i] = 1.0;
  }
  /* roi matters only to tf_crop_and_resize; during shape inference its values may
   * be unknown, which is fine when sizes (not scales) decide the output. */
  int roi_known = 0;
  if (p->transform == ETRT_RESIZE_TF_CROP_AND_RESIZE && etrt_op_has_input(node, inputs, 1) &&
      etrt_op_input_host(&inputs[1]) != NULL) {
    roi_known = 1;
    double roi[2 * ETRT_MAX_RANK];
    int64_t count;
    ETRT_RETURN_IF_ERROR(
        etrt_op_input_doubles(node, inputs, 1, "roi", roi, 2 * ETRT_MAX_RANK, &count));
    if (count != 2 * x->rank)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "roi has %lld values, need %d",
                           (long long)count, 2 * (int)x->rank);
    for (int32_t i = 0; i < x->rank; ++i) {
      g->roi_start[i] = roi[i];
      g->roi_end[i] = roi[i + x->rank];
    }
  }
  int has_sizes = p->sizes_input != 0 && etrt_op_has_input(node, inputs, p->sizes_input) &&
                  etrt_tensor_numel(&inputs[p->sizes_input]) > 0;
  int has_scales = p->scales_input != 0 && etrt_op_has_input(node, inputs, p->scales_input) &&
                   etrt_tensor_numel(&inputs[p->scales_input]) > 0;
  if (has_sizes == has_scales)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "exactly one of scales and sizes must be given");
  int64_t count;
  if (has_sizes) {
    ETRT_RETURN_IF_ERROR(
        etrt_op_input_ints(node, inputs, p->sizes_input, "sizes", g->out, ETRT_MAX_RANK, &count));
    if (count != x->rank)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "sizes has %lld values, the input has rank %d", (long long)count,
                           (int)x->rank);
    for (int32_t i = 0; i < x->rank; ++i) {
      if (g->out[i] < 0 || g->out[i] > ((int64_t)1 << 40))
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "sizes[%d] is %lld", (int)i,
                             (long long)g->out[i]);
      g->scale[i] = g->in[i] > 0 ? (double)g->out[i] / (double)g->in[i] : 1.0;
    }
    return ETRT_OK;
  }
  ETRT_RETURN_IF_ERROR(etrt_op_input_doubles(node, inputs, p->scales_input, "scales", g->scale,
                                             ETRT_MAX_RANK, &count));
  if (count != x->rank)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "scales has %lld values, the input has rank %d", (long long)count,
                         (int)x->rank);
  if (p->transform == ETRT_RESIZE_TF_CROP_AND_RESIZE && etrt_op_has_input(node, inputs, 1) &&
      !roi_known)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "roi must be known when the plan is built for tf_crop_and_resize with "
                         "scales");
  for (int32_t i = 0; i < x->rank; ++i) {
    double box =
        p->transform == ETRT_RESIZE_TF_CROP_AND_RESIZE ? g->roi_end[i] - g->roi_start[i] : 1.0;
    double out = floor((double)g->in[i] * box * g->scale[i]);
    if (!(g->scale[i] > 0.0) || !(out >= 0.0 && out <= (double)((int64_t)1 << 40)))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "scales[%d] is %g", (int)i,
                           g->scale[i]);
    g->out[i] = (int64_t)out;
  }
  return ETRT_OK;
}

/* The reference's source coordinate of output index x (note: it uses the scaled
 * width scale * in, not the rounded output size, for align_corners). */
static double etrt_resize_source(const etrt_resize_params *p, const etrt_resize_geometry *g,
                                 int32_t axis, int64_t x, int *outside) {
  double in = (double)g->in[axis], scale = g->scale[axis], width = scale * in, xd = (double)x;
  *outside = 0;
  switch (p->transform) {
    case ETRT_RESIZE_ALIGN_CORNERS:
      return width == 1.0 ? 0.0 : xd * (in - 1.0) / (width - 1.0);
    case ETRT_RESIZE_ASYMMETRIC:
      return xd / scale;
    case ETRT_RESIZE_PYTORCH_HALF_PIXEL:
      return width == 1.0 ? -0.5 : (xd + 0.5) / scale - 0.5;
    case ETRT_RESIZE_TF_HALF_PIXEL_FOR_NN:
      return (xd + 0.5) / scale;
    case ETRT_RESIZE_TF_CROP_AND_RESIZE: {
      double start = g->roi_start[axis], end = g->roi_end[axis];
      double s = width == 1.0 ? (end - start) * (in - 1.0) / 2.0
                              : xd * (end - start) * (in - 1.0) / (width - 1.0);
      s += start * (in - 1.0);
      *outside = s < 0.0 || s > in - 1.0;
      return s;
    }
    default:
      return (xd + 0.5) / scale - 0.5;
  }
}

static int64_t etrt_resize_clamp(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

int etrt_resize_neighbours(const etrt_resize_params *p, const etrt_resize_geometry *g, int32_t axis,
                           int64_t x, int64_t *index, double *weight) {
  int64_t n = g->in[axis];
  /* An axis that keeps its size maps each index onto itself. */
  if (g->out[axis] == n && g->scale[axis] == 1.0 &&
      p->transform != ETRT_RESIZE_TF_CROP_AND_RESIZE) {
    index[0] = x;
    weight[0] = 1.0;
    return 1;
  }
  int outside;
  double s = etrt_resize_source(p, g, axis, x, &outside);
  if (outside) return 0;
  /* base: the neighbour left of s, strictly (ratio in (0, 1]), as the reference */
  double fl = floor(s);
  int64_t base = (int64_t)fl - (s == fl ? 1 : 0);
  double ratio = s - (double)base;
  if (p->mode == ETRT_RESIZE_NEAREST) {
    int up;
    if (ratio == 1.0)
      up = 1;
    else if (p->nearest == ETRT_RESIZE_ROUND_PREFER_FLOOR)
      up = ratio > 0.5;
    else if (p->nearest == ETRT_RESIZE_ROUND_PREFER_CEIL)
      up = ratio >= 0.5;
    else
      up = p->nearest == ETRT_RESIZE_CEIL;
    index[0] = etrt_resize_clamp(base + up, n);
    weight[0] = 1.0;
    return 1;
  }
  int count;
  int64_t first;
  double w[4];
  if (p->mode == ETRT_RESIZE_LINEAR) {
    count = 2;
    first = base;
    w[0] = 1.0 - ratio;
    w[1] = ratio;
  } else {
    double a = p->cubic_a, r = ratio, q = 1.0 - ratio;
    count = 4;
    first = base - 1;
    w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
    w[3] = ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a;
  }
  if (p->exclude_outside) {
    double sum = 0.0;
    for (int i = 0; i < count; ++i) {
      if (first + i < 0 || first + i >= n) w[i] = 0.0;
      sum += w[i];
    }
    if (sum != 0.0)
      for (int i = 0; i < count; ++i) w[i] /= sum;
  }
  int kept = 0;
  for (int i = 0; i < count; ++i) {
    if (w[i] == 0.0) continue;
    index[kept] = etrt_resize_clamp(first + i, n);
    weight[kept++] = w[i];
  }
  if (kept == 0) {
    index[0] = etrt_resize_clamp(base, n);
    weight[0] = 0.0;
    kept = 1;
  }
  return kept;
}
