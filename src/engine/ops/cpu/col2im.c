/* CPU kernel of Col2Im (col2im.h). */
#include "engine/op.h"
#include "engine/ops/col2im.h"

static etrt_status etrt_cpu_col2im(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  etrt_col2im_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_col2im_plan_make(node, inputs, &plan));
  int64_t n = etrt_tensor_numel(&outputs[0]);
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT32) {
    float *y = outputs[0].data;
    for (int64_t o = 0; o < n; ++o) y[o] = etrt_col2im_element_f32(&plan, inputs[0].data, o);
  } else {
    double *y = outputs[0].data;
    for (int64_t o = 0; o < n; ++o) y[o] = etrt_col2im_element_f64(&plan, inputs[0].data, o);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_col2im[] = {
    {"Col2Im", etrt_cpu_col2im},
    {NULL, NULL},
};
