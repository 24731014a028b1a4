/* NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class?,
 * iou_threshold?, score_threshold?; center_point_box) -> selected_indices int64 [S, 3]:
 * per batch and class, the boxes scoring above score_threshold, best score first (the
 * lower index first among equal scores), each kept unless its IoU with a box already
 * kept for the class exceeds iou_threshold, at most max_output_boxes_per_class (0 or
 * omitted: none) of them. Boxes are [y1, x1, y2, x2] corners in either order, or
 * [x_center, y_center, width, height] with center_point_box = 1.
 *
 * S depends on every value, and finding it is the whole operation: the kernel writes the
 * dims (etrt_op_def.dims_from_kernel) within the bound B * C * min(N, max) rows, and
 * uses its output as the list of kept boxes, with no other memory. */
#ifndef ETRT_ENGINE_OPS_NMS_H
#define ETRT_ENGINE_OPS_NMS_H

#include <stdint.h>

#include "engine/op.h"

typedef struct etrt_nms_params {
  int64_t batches, classes, boxes;
  int64_t max_per_class; /* -1: not known (the bound then allows every box) */
  float iou_threshold, score_threshold;
  int has_score_threshold; /* omitted: every box is a candidate */
  int center_point_box;
} etrt_nms_params;

/* Checks the node and its inputs; the thresholds and the maximum are read where their
 * values are known (else the defaults, and max_per_class -1). */
etrt_status etrt_nms_params_of(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_nms_params *out);

/* Whether box b of `boxes` (4 floats each) overlaps box a by more than `threshold`. */
int etrt_nms_suppresses(const float *a, const float *b, int center_point_box, float threshold);

#endif
