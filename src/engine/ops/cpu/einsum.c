/* CPU kernel of Einsum: each output element by the shared evaluation (einsum.h). */
#include "engine/ops/einsum.h"

static etrt_status etrt_cpu_einsum(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  etrt_einsum_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_einsum_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT32) {
    const float *in[ETRT_EINSUM_MAX_INPUTS] = {0};
    for (int32_t i = 0; i < plan.inputs; ++i) in[i] = inputs[i].data;
    float *y = outputs[0].data;
    for (int64_t o = 0; o < n; ++o) y[o] = etrt_einsum_element_f32(&plan, in, o);
  } else {
    const double *in[ETRT_EINSUM_MAX_INPUTS] = {0};
    for (int32_t i = 0; i < plan.inputs; ++i) in[i] = inputs[i].data;
    double *y = outputs[0].data;
    for (int64_t o = 0; o < n; ++o) y[o] = etrt_einsum_element_f64(&plan, in, o);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_einsum[] = {
    {"Einsum", etrt_cpu_einsum},
    {NULL, NULL},
};
