/* Loops that apply one expression to every element, written once and expanded per
 * dtype. Inside EXPR, `v` is the element loaded as the compute type T (float for
 * float32, float16 and bfloat16, double for float64, the integer type itself for
 * integers). Used with <tgmath.h>, so exp(v) is expf for float and exp for double.
 * Each ETRT_MAP_* returns ETRT_OK from the calling function when the dtype matched
 * and falls through otherwise. The caller has `in` and `out` (etrt_tensor *) and
 * `n` (elements) in scope. */
#ifndef ETRT_ENGINE_OPS_CPU_MAP_H
#define ETRT_ENGINE_OPS_CPU_MAP_H

#include <stdint.h>

#include "base/half.h"

#define ETRT_MAP_SAME(x) (x)
#define ETRT_MAP_BOOL(x) ((uint8_t)((x) != 0))

#define ETRT_MAP_LOOP(SRC, DST, CT, LOAD, STORE, EXPR) \
  do {                                                 \
    const SRC *x_ = (const SRC *)in->data;             \
    DST *y_ = (DST *)out->data;                        \
    for (int64_t i_ = 0; i_ < n; ++i_) {               \
      typedef CT T;                                    \
      T v = LOAD(x_[i_]);                              \
      y_[i_] = STORE(EXPR);                            \
    }                                                  \
  } while (0)

/* The four float dtypes, output of the input's dtype. */
#define ETRT_MAP_FLOATS(EXPR)                                                                  \
  switch (in->dtype) {                                                                         \
    case ETRT_DTYPE_FLOAT32:                                                                   \
      ETRT_MAP_LOOP(float, float, float, ETRT_MAP_SAME, ETRT_MAP_SAME, EXPR);                  \
      return ETRT_OK;                                                                          \
    case ETRT_DTYPE_FLOAT64:                                                                   \
      ETRT_MAP_LOOP(double, double, double, ETRT_MAP_SAME, ETRT_MAP_SAME, EXPR);               \
      return ETRT_OK;                                                                          \
    case ETRT_DTYPE_FLOAT16:                                                                   \
      ETRT_MAP_LOOP(uint16_t, uint16_t, float, etrt_half_to_float, etrt_float_to_half, EXPR);  \
      return ETRT_OK;                                                                          \
    case ETRT_DTYPE_BFLOAT16:                                                                  \
      ETRT_MAP_LOOP(uint16_t, uint16_t, float, etrt_bfloat16_to_float, etrt_float_to_bfloat16, \
                    EXPR);                                                                     \
      return ETRT_OK;                                                                          \
    default:                                                                                   \
      break;                                                                                   \
  }

/* The four float dtypes, bool output. */
#define ETRT_MAP_FLOATS_TO_BOOL(EXPR)                                                       \
  switch (in->dtype) {                                                                      \
    case ETRT_DTYPE_FLOAT32:                                                                \
      ETRT_MAP_LOOP(float, uint8_t, float, ETRT_MAP_SAME, ETRT_MAP_BOOL, EXPR);             \
      return ETRT_OK;                                                                       \
    case ETRT_DTYPE_FLOAT64:                                                                \
      ETRT_MAP_LOOP(double, uint8_t, double, ETRT_MAP_SAME, ETRT_MAP_BOOL, EXPR);           \
      return ETRT_OK;                                                                       \
    case ETRT_DTYPE_FLOAT16:                                                                \
      ETRT_MAP_LOOP(uint16_t, uint8_t, float, etrt_half_to_float, ETRT_MAP_BOOL, EXPR);     \
      return ETRT_OK;                                                                       \
    case ETRT_DTYPE_BFLOAT16:                                                               \
      ETRT_MAP_LOOP(uint16_t, uint8_t, float, etrt_bfloat16_to_float, ETRT_MAP_BOOL, EXPR); \
      return ETRT_OK;                                                                       \
    default:                                                                                \
      break;                                                                                \
  }

#define ETRT_MAP_INT_CASE(DTYPE, CT, EXPR)                \
  case DTYPE:                                             \
    ETRT_MAP_LOOP(CT, CT, CT, ETRT_MAP_SAME, (CT), EXPR); \
    return ETRT_OK;

#define ETRT_MAP_SIGNED_INTS(EXPR)                     \
  switch (in->dtype) {                                 \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_INT8, int8_t, EXPR)   \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_INT16, int16_t, EXPR) \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_INT32, int32_t, EXPR) \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_INT64, int64_t, EXPR) \
    default:                                           \
      break;                                           \
  }

#define ETRT_MAP_UNSIGNED_INTS(EXPR)                     \
  switch (in->dtype) {                                   \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_UINT8, uint8_t, EXPR)   \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_UINT16, uint16_t, EXPR) \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_UINT32, uint32_t, EXPR) \
    ETRT_MAP_INT_CASE(ETRT_DTYPE_UINT64, uint64_t, EXPR) \
    default:                                             \
      break;                                             \
  }

#endif
