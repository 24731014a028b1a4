/* CPU kernels of GridSample, RoiAlign, LRN and MeanVarianceNormalization (vision.h). */
#include "engine/op.h"
#include "engine/ops/op_check.h"
#include "engine/ops/vision.h"

static void etrt_vision_store(etrt_tensor *y, int32_t f64, int64_t i, double v) {
  if (f64)
    ((double *)y->data)[i] = v;
  else
    ((float *)y->data)[i] = (float)v;
}

static etrt_status etrt_cpu_grid_sample(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  etrt_grid_sample_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_grid_sample_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  for (int64_t o = 0; o < n; ++o)
    etrt_vision_store(&outputs[0], plan.f64, o,
                      etrt_grid_sample_element(&plan, inputs[0].data, inputs[1].data, o));
  return ETRT_OK;
}

static etrt_status etrt_cpu_roi_align(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  etrt_roi_align_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_roi_align_plan_make(node, inputs, &plan));
  for (int64_t r = 0; r < plan.rois; ++r) {
    int64_t b = etrt_roi_align_batch(&plan, inputs[2].data, r);
    if (b < 0 || b >= plan.batch)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "batch_indices[%lld] is %lld, outside [0, %lld)", (long long)r,
                           (long long)b, (long long)plan.batch);
  }
  int64_t n = etrt_tensor_numel(&outputs[0]);
  int64_t per_roi = plan.channels * plan.out_h * plan.out_w;
  for (int64_t o = 0; o < n; ++o) {
    int64_t b = etrt_roi_align_batch(&plan, inputs[2].data, o / per_roi);
    etrt_vision_store(&outputs[0], plan.f64, o,
                      etrt_roi_align_element(&plan, inputs[0].data, inputs[1].data, b, o));
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_lrn(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  etrt_lrn_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_lrn_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  for (int64_t o = 0; o < n; ++o)
    etrt_vision_store(&outputs[0], plan.f64, o, etrt_lrn_element(&plan, inputs[0].data, o));
  return ETRT_OK;
}

static etrt_status etrt_cpu_mvn(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  etrt_mvn_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_mvn_plan_make(node, inputs, &plan));
  for (int64_t g = 0; g < plan.groups; ++g) {
    double mean, std;
    etrt_mvn_moments(&plan, inputs[0].data, g, &mean, &std);
    for (int64_t m = 0; m < plan.members; ++m) {
      int64_t i = etrt_mvn_offset(&plan, g, m);
      double v = etrt_vision_load(inputs[0].data, plan.f64, i);
      etrt_vision_store(&outputs[0], plan.f64, i, (v - mean) / (std + ETRT_MVN_EPSILON));
    }
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_vision[] = {
    {"GridSample", etrt_cpu_grid_sample},
    {"RoiAlign", etrt_cpu_roi_align},
    {"LRN", etrt_cpu_lrn},
    {"MeanVarianceNormalization", etrt_cpu_mvn},
    {NULL, NULL},
};
