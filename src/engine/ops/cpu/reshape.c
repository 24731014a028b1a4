#include "engine/ops/reshape.h"

#include <string.h>

etrt_status etrt_cpu_reshape(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs) {
  size_t bytes = (size_t)etrt_tensor_numel(&inputs[0]) * etrt_dtype_size(inputs[0].dtype);
  if (bytes > 0 && outputs[0].data != inputs[0].data)
    memmove(outputs[0].data, inputs[0].data, bytes);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_reshape[] = {
    {"Reshape", etrt_cpu_reshape},
    {"Flatten", etrt_cpu_reshape},
    {"Squeeze", etrt_cpu_reshape},
    {"Unsqueeze", etrt_cpu_reshape},
    {NULL, NULL},
};
