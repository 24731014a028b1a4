/* CPU kernel of Compress (compress.h): kept slices copied in order. */
#include <string.h>

#include "engine/op.h"
#include "engine/ops/compress.h"
#include "engine/ops/op_check.h"

static etrt_status etrt_cpu_compress(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  etrt_compress_layout l;
  ETRT_RETURN_IF_ERROR(etrt_compress_layout_of(node, inputs, &l));
  const uint8_t *c = etrt_op_input_host(&inputs[1]);
  size_t slice = (size_t)l.inner * etrt_dtype_size(inputs[0].dtype);
  const uint8_t *src = inputs[0].data;
  uint8_t *dst = outputs[0].data;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.conditions; ++i) {
      if (!c[i]) continue;
      memcpy(dst, src + (size_t)(o * l.length + i) * slice, slice);
      dst += slice;
    }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_compress[] = {
    {"Compress", etrt_cpu_compress},
    {NULL, NULL},
};
