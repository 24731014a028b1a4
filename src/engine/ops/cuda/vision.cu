/* GridSample, RoiAlign, LRN and MeanVarianceNormalization on the GPU: a thread per
 * output element (a group, for MeanVarianceNormalization), evaluating the element
 * functions of vision.h as the CPU kernels do. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/vision.h"
}

__device__ __forceinline__ void etrt_vision_store_device(void *y, int32_t f64, int64_t i,
                                                         double v) {
  if (f64)
    ((double *)y)[i] = v;
  else
    ((float *)y)[i] = (float)v;
}

__global__ void etrt_grid_sample_kernel(etrt_grid_sample_plan plan, const void *x, const void *grid,
                                        void *y, int64_t n) {
  ETRT_CUDA_LOOP(o, n) {
    etrt_vision_store_device(y, plan.f64, o, etrt_grid_sample_element(&plan, x, grid, o));
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_grid_sample) {
  etrt_grid_sample_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_grid_sample_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  etrt_grid_sample_kernel<<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                            etrt_cuda_stream(launch)>>>(plan, inputs[0].data, inputs[1].data,
                                                        outputs[0].data, n);
  return etrt_cuda_check(node, "grid_sample");
}

/* A region whose batch index is out of range writes zeros and faults the node. */
__global__ void etrt_roi_align_kernel(etrt_roi_align_plan plan, const void *x, const void *rois,
                                      const void *batch, void *y, int64_t n, uint32_t *fault,
                                      uint32_t node) {
  int64_t per_roi = plan.channels * plan.out_h * plan.out_w;
  ETRT_CUDA_LOOP(o, n) {
    int64_t b = etrt_roi_align_batch(&plan, batch, o / per_roi);
    double v = 0.0;
    if (b < 0 || b >= plan.batch)
      etrt_cuda_fault(fault, node);
    else
      v = etrt_roi_align_element(&plan, x, rois, b, o);
    etrt_vision_store_device(y, plan.f64, o, v);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_roi_align) {
  etrt_roi_align_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_roi_align_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  etrt_roi_align_kernel<<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                          etrt_cuda_stream(launch)>>>(plan, inputs[0].data, inputs[1].data,
                                                      inputs[2].data, outputs[0].data, n,
                                                      launch->fault, launch->node);
  return etrt_cuda_check(node, "roi_align");
}

__global__ void etrt_lrn_kernel(etrt_lrn_plan plan, const void *x, void *y, int64_t n) {
  ETRT_CUDA_LOOP(o, n) { etrt_vision_store_device(y, plan.f64, o, etrt_lrn_element(&plan, x, o)); }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_lrn) {
  etrt_lrn_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_lrn_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (n == 0) return ETRT_OK;
  etrt_lrn_kernel<<<etrt_cuda_blocks(n, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                    etrt_cuda_stream(launch)>>>(plan, inputs[0].data, outputs[0].data, n);
  return etrt_cuda_check(node, "lrn");
}

__global__ void etrt_mvn_kernel(etrt_mvn_plan plan, const void *x, void *y) {
  ETRT_CUDA_LOOP(g, plan.groups) {
    double mean, std;
    etrt_mvn_moments(&plan, x, g, &mean, &std);
    for (int64_t m = 0; m < plan.members; ++m) {
      int64_t i = etrt_mvn_offset(&plan, g, m);
      etrt_vision_store_device(
          y, plan.f64, i, (etrt_vision_load(x, plan.f64, i) - mean) / (std + ETRT_MVN_EPSILON));
    }
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_mvn) {
  etrt_mvn_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_mvn_plan_make(node, inputs, &plan));
  if (plan.groups == 0 || plan.members == 0) return ETRT_OK;
  etrt_mvn_kernel<<<etrt_cuda_blocks(plan.groups, 64), 64, 0, etrt_cuda_stream(launch)>>>(
      plan, inputs[0].data, outputs[0].data);
  return etrt_cuda_check(node, "mean_variance_normalization");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_vision[] = {
    {"GridSample", etrt_cuda_grid_sample, NULL},
    {"RoiAlign", etrt_cuda_roi_align, NULL},
    {"LRN", etrt_cuda_lrn, NULL},
    {"MeanVarianceNormalization", etrt_cuda_mvn, NULL},
    {NULL, NULL, NULL},
};
