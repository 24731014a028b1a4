/* Operators that produce shapes or tensors from shapes: Shape, Size,
 * ConstantOfShape, Range, EyeLike. Definitions in shape.c, CPU kernels in
 * cpu/shape.c. */
#ifndef ETRT_ENGINE_OPS_SHAPE_H
#define ETRT_ENGINE_OPS_SHAPE_H

#include "engine/op.h"

/* Shape's [start, end) after clamping to the input's rank. */
void etrt_shape_op_range(const etrt_node *node, int32_t rank, int32_t *start, int32_t *end);

/* Range's element count from its scalar inputs (host values). */
etrt_status etrt_range_count(const etrt_node *node, const etrt_tensor *inputs, int64_t *count);

/* EyeLike's diagonal offset k and the bytes of the value 1 in `dtype` (the element
 * size of dtype, at most 8). */
int64_t etrt_eye_like_k(const etrt_node *node);
void etrt_eye_like_one(etrt_dtype dtype, uint8_t one[8]);

etrt_status etrt_cpu_shape(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_size(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_constant_of_shape(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs);
etrt_status etrt_cpu_range(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *outputs);
etrt_status etrt_cpu_eye_like(const etrt_node *node, const etrt_tensor *inputs,
                              etrt_tensor *outputs);

#endif
