#include "engine/ops/reshape.h"

#include <string.h>

etrt_status etrt_cpu_reshape(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs) {
  size_t bytes = (size_t)etrt_tensor_numel(&inputs[0]) * etrt_dtype_size(inputs[0].dtype);
  if (bytes > 0 && outputs[0].data != inputs[0].data)
    memmove(outputs[0].data, inputs[0].data, bytes);
  return ETRT_OK;
}
