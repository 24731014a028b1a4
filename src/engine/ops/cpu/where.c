/* CPU kernel of Where: a selection of element bytes, so one loop per element size
 * serves every dtype. */
#include <stdint.h>

#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"
#include "engine/ops/where.h"

#define ETRT_WHERE_FN(NAME, T)                                                                     \
  static void NAME(const etrt_broadcast_iter *it, const uint8_t *c, const T *x, const T *y,        \
                   T *out) {                                                                       \
    const int32_t last = it->rank - 1;                                                             \
    const int64_t inner = it->dims[last];                                                          \
    const int64_t sc = it->strides[0][last], sx = it->strides[1][last], sy = it->strides[2][last]; \
    etrt_broadcast_cursor cursor;                                                                  \
    etrt_broadcast_cursor_init(&cursor);                                                           \
    for (int64_t start = 0; start < it->numel; start += inner) {                                   \
      const uint8_t *pc = c + cursor.offset[0];                                                    \
      const T *px = x + cursor.offset[1], *py = y + cursor.offset[2];                              \
      T *po = out + start;                                                                         \
      for (int64_t j = 0; j < inner; ++j) po[j] = pc[j * sc] ? px[j * sx] : py[j * sy];            \
      etrt_broadcast_cursor_next_row(it, &cursor);                                                 \
    }                                                                                              \
  }

ETRT_WHERE_FN(etrt_where_1, uint8_t)
ETRT_WHERE_FN(etrt_where_2, uint16_t)
ETRT_WHERE_FN(etrt_where_4, uint32_t)
ETRT_WHERE_FN(etrt_where_8, uint64_t)

etrt_status etrt_cpu_where(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  etrt_broadcast_iter it;
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(
      &it, &outputs[0], 3, (const etrt_tensor *[]){&inputs[0], &inputs[1], &inputs[2]}));
  if (it.numel == 0) return ETRT_OK;
  const uint8_t *c = inputs[0].data;
  switch (etrt_dtype_size(outputs[0].dtype)) {
    case 1:
      etrt_where_1(&it, c, inputs[1].data, inputs[2].data, outputs[0].data);
      return ETRT_OK;
    case 2:
      etrt_where_2(&it, c, inputs[1].data, inputs[2].data, outputs[0].data);
      return ETRT_OK;
    case 4:
      etrt_where_4(&it, c, inputs[1].data, inputs[2].data, outputs[0].data);
      return ETRT_OK;
    case 8:
      etrt_where_8(&it, c, inputs[1].data, inputs[2].data, outputs[0].data);
      return ETRT_OK;
    default:
      break;
  }
  return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "no CPU kernel for type %s",
                       etrt_dtype_name(outputs[0].dtype));
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_where[] = {
    {"Where", etrt_cpu_where},
    {NULL, NULL},
};
