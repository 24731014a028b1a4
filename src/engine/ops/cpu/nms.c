/* CPU kernel of NonMaxSuppression (nms.h): candidates taken best first by repeated
 * scans, each checked against the boxes already written for its class. */
#include <string.h>

#include "engine/op.h"
#include "engine/ops/nms.h"
#include "engine/ops/op_check.h"

/* Whether candidate (score s, index i) comes after (ps, pi) in the order best first. */
static int etrt_nms_after(float s, int64_t i, float ps, int64_t pi) {
  return s < ps || (s == ps && i > pi);
}

static etrt_status etrt_cpu_nms(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  etrt_nms_params p = {0};
  ETRT_RETURN_IF_ERROR(etrt_nms_params_of(node, inputs, &p));
  const float *boxes = inputs[0].data, *scores = inputs[1].data;
  int64_t *out = outputs[0].data;
  int64_t capacity = outputs[0].dims[0], rows = 0;
  int64_t per_class = p.max_per_class < 0 ? 0 : p.max_per_class;
  for (int64_t b = 0; b < p.batches; ++b) {
    const float *bb = boxes + b * p.boxes * 4;
    for (int64_t c = 0; c < p.classes; ++c) {
      const float *cs = scores + (b * p.classes + c) * p.boxes;
      int64_t first = rows, kept = 0, prev = -1;
      float prev_score = 0;
      while (kept < per_class) {
        int64_t best = -1;
        for (int64_t i = 0; i < p.boxes; ++i) {
          if (p.has_score_threshold && !(cs[i] > p.score_threshold)) continue;
          if (cs[i] != cs[i]) continue; /* NaN never scores */
          if (prev >= 0 && !etrt_nms_after(cs[i], i, prev_score, prev)) continue;
          if (best < 0 || etrt_nms_after(cs[best], best, cs[i], i)) best = i;
        }
        if (best < 0) break;
        prev = best;
        prev_score = cs[best];
        int suppressed = 0;
        for (int64_t r = first; r < rows && !suppressed; ++r)
          suppressed = etrt_nms_suppresses(bb + out[r * 3 + 2] * 4, bb + best * 4,
                                           p.center_point_box, p.iou_threshold);
        if (suppressed) continue;
        if (rows == capacity)
          return etrt_op_error(node, ETRT_ERROR_INTERNAL, "more than the %lld rows planned",
                               (long long)capacity);
        out[rows * 3 + 0] = b;
        out[rows * 3 + 1] = c;
        out[rows * 3 + 2] = best;
        ++rows;
        ++kept;
      }
    }
  }
  outputs[0].dims[0] = rows;
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_nms[] = {
    {"NonMaxSuppression", etrt_cpu_nms},
    {NULL, NULL},
};
