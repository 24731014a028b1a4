/* One element of a host tensor of any numeric dtype, read or written as a double: for
 * the kernels where a per-element dtype switch costs nothing that matters (losses,
 * mixed-dtype Pow). int64 values beyond 2^53 lose precision, so integer kernels that
 * must be exact do not use these. */
#ifndef ETRT_ENGINE_OPS_CPU_SCALAR_H
#define ETRT_ENGINE_OPS_CPU_SCALAR_H

#include <stdint.h>

#include "base/half.h"
#include "etrt/types.h"

static inline double etrt_scalar_load(const void *data, etrt_dtype dtype, int64_t i) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      return ((const float *)data)[i];
    case ETRT_DTYPE_FLOAT64:
      return ((const double *)data)[i];
    case ETRT_DTYPE_FLOAT16:
      return etrt_half_to_float(((const uint16_t *)data)[i]);
    case ETRT_DTYPE_BFLOAT16:
      return etrt_bfloat16_to_float(((const uint16_t *)data)[i]);
    case ETRT_DTYPE_INT8:
      return ((const int8_t *)data)[i];
    case ETRT_DTYPE_INT16:
      return ((const int16_t *)data)[i];
    case ETRT_DTYPE_INT32:
      return ((const int32_t *)data)[i];
    case ETRT_DTYPE_INT64:
      return (double)((const int64_t *)data)[i];
    case ETRT_DTYPE_UINT8:
      return ((const uint8_t *)data)[i];
    case ETRT_DTYPE_UINT16:
      return ((const uint16_t *)data)[i];
    case ETRT_DTYPE_UINT32:
      return ((const uint32_t *)data)[i];
    case ETRT_DTYPE_UINT64:
      return (double)((const uint64_t *)data)[i];
    case ETRT_DTYPE_BOOL:
      return ((const uint8_t *)data)[i] != 0;
    default:
      return 0;
  }
}

/* Integers: truncated toward zero and saturated at the type's range; NaN gives 0. */
static inline double etrt_scalar_clamp(double v, double lo, double hi) {
  if (v != v) return 0;
  return v < lo ? lo : v > hi ? hi : v;
}

static inline void etrt_scalar_store(void *data, etrt_dtype dtype, int64_t i, double v) {
  switch (dtype) {
    case ETRT_DTYPE_FLOAT32:
      ((float *)data)[i] = (float)v;
      break;
    case ETRT_DTYPE_FLOAT64:
      ((double *)data)[i] = v;
      break;
    case ETRT_DTYPE_FLOAT16:
      ((uint16_t *)data)[i] = etrt_double_to_half(v);
      break;
    case ETRT_DTYPE_BFLOAT16:
      ((uint16_t *)data)[i] = etrt_double_to_bfloat16(v);
      break;
    case ETRT_DTYPE_INT8:
      ((int8_t *)data)[i] = (int8_t)etrt_scalar_clamp(v, INT8_MIN, INT8_MAX);
      break;
    case ETRT_DTYPE_INT16:
      ((int16_t *)data)[i] = (int16_t)etrt_scalar_clamp(v, INT16_MIN, INT16_MAX);
      break;
    case ETRT_DTYPE_INT32:
      ((int32_t *)data)[i] = (int32_t)etrt_scalar_clamp(v, INT32_MIN, INT32_MAX);
      break;
    case ETRT_DTYPE_INT64: /* 2^63 itself does not fit: stop one double below it */
      ((int64_t *)data)[i] =
          (int64_t)etrt_scalar_clamp(v, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case ETRT_DTYPE_UINT8:
      ((uint8_t *)data)[i] = (uint8_t)etrt_scalar_clamp(v, 0, UINT8_MAX);
      break;
    case ETRT_DTYPE_UINT16:
      ((uint16_t *)data)[i] = (uint16_t)etrt_scalar_clamp(v, 0, UINT16_MAX);
      break;
    case ETRT_DTYPE_UINT32:
      ((uint32_t *)data)[i] = (uint32_t)etrt_scalar_clamp(v, 0, UINT32_MAX);
      break;
    case ETRT_DTYPE_UINT64:
      ((uint64_t *)data)[i] = (uint64_t)etrt_scalar_clamp(v, 0, 18446744073709549568.0);
      break;
    case ETRT_DTYPE_BOOL:
      ((uint8_t *)data)[i] = v != 0;
      break;
    default:
      break;
  }
}

#endif
