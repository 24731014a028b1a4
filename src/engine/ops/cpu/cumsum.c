/* CPU kernel of CumSum. Floats accumulate in double; integers in uint64_t (wrapping
 * as the input type would). */
#include "base/half.h"
#include "engine/ops/cumsum.h"
#include "engine/ops/op_check.h"

#define ETRT_LOAD_SAME(x) (x)

#define ETRT_CUMSUM_FN(NAME, SRC, ACC, LOAD, STORE)                                     \
  static void NAME(const etrt_cumsum_state *s, int64_t outer, int64_t n, int64_t inner, \
                   const SRC *x, SRC *y) {                                              \
    int64_t step = s->reverse ? -inner : inner;                                         \
    for (int64_t o = 0; o < outer; ++o) {                                               \
      for (int64_t i = 0; i < inner; ++i) {                                             \
        int64_t at = o * n * inner + i + (s->reverse ? (n - 1) * inner : 0);            \
        ACC sum = 0;                                                                    \
        for (int64_t k = 0; k < n; ++k, at += step) {                                   \
          ACC v = (ACC)LOAD(x[at]);                                                     \
          if (s->exclusive) {                                                           \
            y[at] = STORE(sum);                                                         \
            sum += v;                                                                   \
          } else {                                                                      \
            sum += v;                                                                   \
            y[at] = STORE(sum);                                                         \
          }                                                                             \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }

ETRT_CUMSUM_FN(etrt_cumsum_f32, float, double, ETRT_LOAD_SAME, (float))
ETRT_CUMSUM_FN(etrt_cumsum_f64, double, double, ETRT_LOAD_SAME, (double))
ETRT_CUMSUM_FN(etrt_cumsum_f16, uint16_t, double, etrt_half_to_float, etrt_double_to_half)
ETRT_CUMSUM_FN(etrt_cumsum_bf16, uint16_t, double, etrt_bfloat16_to_float, etrt_double_to_bfloat16)
ETRT_CUMSUM_FN(etrt_cumsum_i32, int32_t, uint64_t, ETRT_LOAD_SAME, (int32_t))
ETRT_CUMSUM_FN(etrt_cumsum_i64, int64_t, uint64_t, ETRT_LOAD_SAME, (int64_t))
ETRT_CUMSUM_FN(etrt_cumsum_u32, uint32_t, uint64_t, ETRT_LOAD_SAME, (uint32_t))
ETRT_CUMSUM_FN(etrt_cumsum_u64, uint64_t, uint64_t, ETRT_LOAD_SAME, (uint64_t))

etrt_status etrt_cpu_cumsum(const etrt_node *node, const etrt_tensor *inputs,
                            etrt_tensor *outputs) {
  const etrt_cumsum_state *s = node->state;
  int64_t outer, n, inner;
  ETRT_RETURN_IF_ERROR(etrt_cumsum_layout(node, inputs, &outer, &n, &inner));
  const void *x = inputs[0].data;
  void *y = outputs[0].data;
  switch (inputs[0].dtype) {
    case ETRT_DTYPE_FLOAT32:
      etrt_cumsum_f32(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_FLOAT64:
      etrt_cumsum_f64(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_FLOAT16:
      etrt_cumsum_f16(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_BFLOAT16:
      etrt_cumsum_bf16(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_INT32:
      etrt_cumsum_i32(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_INT64:
      etrt_cumsum_i64(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_UINT32:
      etrt_cumsum_u32(s, outer, n, inner, x, y);
      return ETRT_OK;
    case ETRT_DTYPE_UINT64:
      etrt_cumsum_u64(s, outer, n, inner, x, y);
      return ETRT_OK;
    default:
      break;
  }
  return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "no CPU kernel for input type %s",
                       etrt_dtype_name(inputs[0].dtype));
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_cumsum[] = {
    {"CumSum", etrt_cpu_cumsum},
    {NULL, NULL},
};
