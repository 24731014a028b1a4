/* CPU kernel of MaxUnpool (ops/unpool.c): every index is range-checked. */
#include <string.h>

#include "engine/op.h"
#include "engine/ops/op_check.h"
#include "engine/ops/unpool.h"

static etrt_status etrt_cpu_max_unpool(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs) {
  etrt_tensor base;
  ETRT_RETURN_IF_ERROR(etrt_max_unpool_default(node, inputs, &base));
  size_t element = etrt_dtype_size(inputs[0].dtype);
  int64_t size = etrt_tensor_numel(&base), n = etrt_tensor_numel(&inputs[0]);
  uint8_t *y = outputs[0].data;
  int64_t total = etrt_tensor_numel(&outputs[0]);
  if (total > 0) memset(y, 0, (size_t)total * element);
  const int64_t *idx = inputs[1].data;
  const uint8_t *x = inputs[0].data;
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= size)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "index %lld is out of range for an output of %lld elements",
                           (long long)idx[i], (long long)size);
    int64_t at = etrt_max_unpool_remap(base.rank, base.dims, outputs[0].dims, idx[i]);
    memcpy(y + (size_t)at * element, x + (size_t)i * element, element);
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_unpool[] = {
    {"MaxUnpool", etrt_cpu_max_unpool},
    {NULL, NULL},
};
