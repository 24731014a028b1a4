/* Cast and CastLike: element type conversion, shared by the definitions (cast.c) and
 * the CPU kernel (cpu/cast.c). */
#ifndef ETRT_ENGINE_OPS_CAST_H
#define ETRT_ENGINE_OPS_CAST_H

#include <stdint.h>

#include "engine/op.h"

/* Converts n elements from src (src_dtype) to dst (dst_dtype), contiguous host
 * memory, any pair of numeric and bool dtypes. Floats to float16/bfloat16 round to
 * nearest even (also from float64, without double rounding); floats to integers
 * truncate toward zero and saturate at the integer's range (NaN gives 0); integers
 * wrap as C converts them; anything to bool is "!= 0". src and dst may be the same
 * buffer only when the dtypes have the same size. */
etrt_status etrt_cpu_convert(const void *src, etrt_dtype src_dtype, void *dst, etrt_dtype dst_dtype,
                             int64_t n);

etrt_status etrt_cpu_cast(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);

#endif
