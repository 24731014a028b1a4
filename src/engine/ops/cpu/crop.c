/* CPU kernel of CenterCropPad (crop.h). */
#include <string.h>

#include "engine/op.h"
#include "engine/ops/crop.h"

static etrt_status etrt_cpu_center_crop_pad(const etrt_node *node, const etrt_tensor *inputs,
                                            etrt_tensor *outputs) {
  etrt_crop_plan plan;
  ETRT_RETURN_IF_ERROR(etrt_crop_plan_make(node, inputs, &plan));
  size_t element = etrt_dtype_size(inputs[0].dtype);
  int64_t n = etrt_tensor_numel(&outputs[0]);
  const uint8_t *x = inputs[0].data;
  uint8_t *y = outputs[0].data;
  for (int64_t o = 0; o < n; ++o) {
    int64_t at = etrt_crop_source(&plan, o);
    if (at < 0)
      memset(y + (size_t)o * element, 0, element);
    else
      memcpy(y + (size_t)o * element, x + (size_t)at * element, element);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_crop[] = {
    {"CenterCropPad", etrt_cpu_center_crop_pad},
    {NULL, NULL},
};
