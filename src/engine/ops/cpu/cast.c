/* CPU conversion between element types (Cast, CastLike, and any kernel that needs a
 * dtype change): one loop per (destination, source) pair, expanded from macros. */
#include <string.h>

#include "base/half.h"
#include "base/status.h"
#include "engine/ops/cast.h"

/* Floats to integers: truncate toward zero, saturate, NaN -> 0 (C leaves the
 * out-of-range cases undefined). */
#define ETRT_SATURATE(T, LO, HI)                \
  static inline T etrt_saturate_##T(double v) { \
    if (v != v) return 0;                       \
    if (v <= (double)(LO)) return LO;           \
    if (v >= (double)(HI)) return HI;           \
    return (T)v;                                \
  }
ETRT_SATURATE(int8_t, INT8_MIN, INT8_MAX)
ETRT_SATURATE(int16_t, INT16_MIN, INT16_MAX)
ETRT_SATURATE(int32_t, INT32_MIN, INT32_MAX)
ETRT_SATURATE(int64_t, INT64_MIN, INT64_MAX)
ETRT_SATURATE(uint8_t, 0, UINT8_MAX)
ETRT_SATURATE(uint16_t, 0, UINT16_MAX)
ETRT_SATURATE(uint32_t, 0, UINT32_MAX)
ETRT_SATURATE(uint64_t, 0, UINT64_MAX)
#undef ETRT_SATURATE

/* Loads: a source element as a C value. */
#define ETRT_LOAD_SAME(x) (x)
#define ETRT_LOAD_HALF(x) etrt_half_to_float(x)
#define ETRT_LOAD_BF16(x) etrt_bfloat16_to_float(x)
#define ETRT_LOAD_BOOL(x) ((uint8_t)((x) != 0))

/* Stores: a C value of any arithmetic type as a destination element. */
#define ETRT_STORE_F32(x) ((float)(x))
#define ETRT_STORE_F64(x) ((double)(x))
#define ETRT_STORE_HALF(x) \
  _Generic((x), float : etrt_float_to_half((float)(x)), default : etrt_double_to_half((double)(x)))
#define ETRT_STORE_BF16(x)                               \
  _Generic((x), float                                    \
           : etrt_float_to_bfloat16((float)(x)), default \
           : etrt_double_to_bfloat16((double)(x)))
#define ETRT_STORE_BOOL(x) ((uint8_t)((x) != 0))
#define ETRT_STORE_INT(T, x)                         \
  _Generic((x), float                                \
           : etrt_saturate_##T((double)(x)), double  \
           : etrt_saturate_##T((double)(x)), default \
           : (T)(x))
#define ETRT_STORE_I8(x) ETRT_STORE_INT(int8_t, x)
#define ETRT_STORE_I16(x) ETRT_STORE_INT(int16_t, x)
#define ETRT_STORE_I32(x) ETRT_STORE_INT(int32_t, x)
#define ETRT_STORE_I64(x) ETRT_STORE_INT(int64_t, x)
#define ETRT_STORE_U8(x) ETRT_STORE_INT(uint8_t, x)
#define ETRT_STORE_U16(x) ETRT_STORE_INT(uint16_t, x)
#define ETRT_STORE_U32(x) ETRT_STORE_INT(uint32_t, x)
#define ETRT_STORE_U64(x) ETRT_STORE_INT(uint64_t, x)

#define ETRT_CAST_FROM(DST_T, STORE, SRC_DTYPE, SRC_T, LOAD)         \
  case SRC_DTYPE: {                                                  \
    const SRC_T *s_ = (const SRC_T *)src;                            \
    DST_T *d_ = (DST_T *)dst;                                        \
    for (int64_t i_ = 0; i_ < n; ++i_) d_[i_] = STORE(LOAD(s_[i_])); \
    return ETRT_OK;                                                  \
  }

#define ETRT_CAST_TO(DST_DTYPE, DST_T, STORE)                                     \
  case DST_DTYPE:                                                                 \
    switch (src_dtype) {                                                          \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_FLOAT32, float, ETRT_LOAD_SAME)     \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_FLOAT64, double, ETRT_LOAD_SAME)    \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_FLOAT16, uint16_t, ETRT_LOAD_HALF)  \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_BFLOAT16, uint16_t, ETRT_LOAD_BF16) \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_INT8, int8_t, ETRT_LOAD_SAME)       \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_INT16, int16_t, ETRT_LOAD_SAME)     \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_INT32, int32_t, ETRT_LOAD_SAME)     \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_INT64, int64_t, ETRT_LOAD_SAME)     \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_UINT8, uint8_t, ETRT_LOAD_SAME)     \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_UINT16, uint16_t, ETRT_LOAD_SAME)   \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_UINT32, uint32_t, ETRT_LOAD_SAME)   \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_UINT64, uint64_t, ETRT_LOAD_SAME)   \
      ETRT_CAST_FROM(DST_T, STORE, ETRT_DTYPE_BOOL, uint8_t, ETRT_LOAD_BOOL)      \
      default:                                                                    \
        break;                                                                    \
    }                                                                             \
    break;

etrt_status etrt_cpu_convert(const void *src, etrt_dtype src_dtype, void *dst, etrt_dtype dst_dtype,
                             int64_t n) {
  if (n <= 0) return ETRT_OK;
  if (src_dtype == dst_dtype && src_dtype != ETRT_DTYPE_BOOL) {
    size_t size = etrt_dtype_size(src_dtype);
    if (size == 0)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "cannot convert %s", etrt_dtype_name(src_dtype));
    if (src != dst) memmove(dst, src, (size_t)n * size);
    return ETRT_OK;
  }
  switch (dst_dtype) {
    ETRT_CAST_TO(ETRT_DTYPE_FLOAT32, float, ETRT_STORE_F32)
    ETRT_CAST_TO(ETRT_DTYPE_FLOAT64, double, ETRT_STORE_F64)
    ETRT_CAST_TO(ETRT_DTYPE_FLOAT16, uint16_t, ETRT_STORE_HALF)
    ETRT_CAST_TO(ETRT_DTYPE_BFLOAT16, uint16_t, ETRT_STORE_BF16)
    ETRT_CAST_TO(ETRT_DTYPE_INT8, int8_t, ETRT_STORE_I8)
    ETRT_CAST_TO(ETRT_DTYPE_INT16, int16_t, ETRT_STORE_I16)
    ETRT_CAST_TO(ETRT_DTYPE_INT32, int32_t, ETRT_STORE_I32)
    ETRT_CAST_TO(ETRT_DTYPE_INT64, int64_t, ETRT_STORE_I64)
    ETRT_CAST_TO(ETRT_DTYPE_UINT8, uint8_t, ETRT_STORE_U8)
    ETRT_CAST_TO(ETRT_DTYPE_UINT16, uint16_t, ETRT_STORE_U16)
    ETRT_CAST_TO(ETRT_DTYPE_UINT32, uint32_t, ETRT_STORE_U32)
    ETRT_CAST_TO(ETRT_DTYPE_UINT64, uint64_t, ETRT_STORE_U64)
    ETRT_CAST_TO(ETRT_DTYPE_BOOL, uint8_t, ETRT_STORE_BOOL)
    default:
      break;
  }
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "no conversion from %s to %s",
                    etrt_dtype_name(src_dtype), etrt_dtype_name(dst_dtype));
}

etrt_status etrt_cpu_cast(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs) {
  etrt_status status = etrt_cpu_convert(inputs[0].data, inputs[0].dtype, outputs[0].data,
                                        outputs[0].dtype, etrt_tensor_numel(&inputs[0]));
  if (status != ETRT_OK) return etrt_error_context(status, "%s: ", node->op_type);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_cast[] = {
    {"Cast", etrt_cpu_cast},
    {"CastLike", etrt_cpu_cast},
    {NULL, NULL},
};
