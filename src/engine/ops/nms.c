/* NonMaxSuppression: checks, bounds and the overlap rule (nms.h). */
#include "engine/ops/nms.h"

#include <string.h>

#include "engine/ops/op_check.h"

/* A scalar or one-element optional input: its value where known. */
static etrt_status etrt_nms_scalar(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                                   etrt_dtype dtype, const char *what, const void **value) {
  *value = NULL;
  if (index >= node->num_inputs || !etrt_op_has_input(node, inputs, index)) return ETRT_OK;
  const etrt_tensor *t = &inputs[index];
  if (t->dtype != dtype || t->rank > 1 || etrt_tensor_numel(t) != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u (%s) must be one %s", index,
                         what, etrt_dtype_name(dtype));
  *value = etrt_op_input_host(t);
  return ETRT_OK;
}

etrt_status etrt_nms_params_of(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_nms_params *p) {
  if (node->num_inputs < 2 || node->num_inputs > 5 || node->num_outputs != 1 ||
      !etrt_op_has_input(node, inputs, 0) || !etrt_op_has_input(node, inputs, 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes 2 to 5 inputs and 1 output");
  const etrt_tensor *boxes = &inputs[0], *scores = &inputs[1];
  if (boxes->dtype != ETRT_DTYPE_FLOAT32 || scores->dtype != ETRT_DTYPE_FLOAT32)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "boxes and scores must be float32");
  if (boxes->rank != 3 || boxes->dims[2] != 4)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "boxes must be [batches, boxes, 4]");
  if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "scores must be [batches, classes, boxes] with the boxes' batches and "
                         "boxes");
  int64_t center = etrt_node_attribute_int(node, "center_point_box", 0);
  if (center != 0 && center != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "center_point_box must be 0 or 1, not %lld", (long long)center);
  p->batches = boxes->dims[0];
  p->classes = scores->dims[1];
  p->boxes = boxes->dims[1];
  p->center_point_box = (int)center;
  const void *max = NULL, *iou = NULL, *score = NULL;
  ETRT_RETURN_IF_ERROR(
      etrt_nms_scalar(node, inputs, 2, ETRT_DTYPE_INT64, "max_output_boxes_per_class", &max));
  ETRT_RETURN_IF_ERROR(etrt_nms_scalar(node, inputs, 3, ETRT_DTYPE_FLOAT32, "iou_threshold", &iou));
  ETRT_RETURN_IF_ERROR(
      etrt_nms_scalar(node, inputs, 4, ETRT_DTYPE_FLOAT32, "score_threshold", &score));
  int has_max = node->num_inputs > 2 && etrt_op_has_input(node, inputs, 2);
  p->max_per_class = !has_max ? 0 : max == NULL ? -1 : *(const int64_t *)max;
  if (p->max_per_class < -1) p->max_per_class = 0;
  p->iou_threshold = iou != NULL ? *(const float *)iou : 0.0f;
  p->score_threshold = score != NULL ? *(const float *)score : 0.0f;
  p->has_score_threshold = score != NULL;
  return ETRT_OK;
}

static etrt_status etrt_nms_bound(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *lo,
                                  etrt_tensor *hi) {
  etrt_nms_params p = {0};
  ETRT_RETURN_IF_ERROR(etrt_nms_params_of(node, inputs, &p));
  int64_t per_class = p.max_per_class < 0 || p.max_per_class > p.boxes ? p.boxes : p.max_per_class;
  lo[0].dtype = hi[0].dtype = ETRT_DTYPE_INT64;
  lo[0].rank = hi[0].rank = 2;
  lo[0].dims[0] = 0;
  hi[0].dims[0] = p.batches * p.classes * per_class;
  lo[0].dims[1] = hi[0].dims[1] = 3;
  return ETRT_OK;
}

/* The kernel finds the dims: shape inference can only give the largest. */
static etrt_status etrt_nms_infer(const etrt_node *node, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  etrt_tensor lo[1];
  memset(lo, 0, sizeof lo);
  return etrt_nms_bound(node, inputs, lo, outputs);
}

int etrt_nms_suppresses(const float *a, const float *b, int center_point_box, float threshold) {
  float ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  if (center_point_box) {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  } else {
    ay0 = a[0] < a[2] ? a[0] : a[2], ay1 = a[0] < a[2] ? a[2] : a[0];
    ax0 = a[1] < a[3] ? a[1] : a[3], ax1 = a[1] < a[3] ? a[3] : a[1];
    by0 = b[0] < b[2] ? b[0] : b[2], by1 = b[0] < b[2] ? b[2] : b[0];
    bx0 = b[1] < b[3] ? b[1] : b[3], bx1 = b[1] < b[3] ? b[3] : b[1];
  }
  float iw = (ax1 < bx1 ? ax1 : bx1) - (ax0 > bx0 ? ax0 : bx0);
  float ih = (ay1 < by1 ? ay1 : by1) - (ay0 > by0 ? ay0 : by0);
  if (iw <= 0 || ih <= 0) return 0;
  float inter = iw * ih;
  float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return 0;
  return inter / uni > threshold;
}

static const etrt_op_def etrt_op_def_nms = {.op_type = "NonMaxSuppression",
                                            .infer = etrt_nms_infer,
                                            .bound = etrt_nms_bound,
                                            .value_inputs = 0x1fu,
                                            .dims_from_kernel = 1};

const etrt_op_def *const etrt_ops_nms[] = {&etrt_op_def_nms, NULL};
