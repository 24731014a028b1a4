/* Checks shared by the operation definitions: refusals that name the op, typed
 * reads of INTS attributes, and reads of value inputs (the small host arrays, such
 * as Reshape's shape or Slice's starts, whose values decide output shapes). */
#ifndef ETRT_ENGINE_OPS_OP_CHECK_H
#define ETRT_ENGINE_OPS_OP_CHECK_H

#include <stdint.h>

#include "base/status.h"
#include "engine/op.h"

/* Writes "<OpType> '<name>': <message>" and returns `status`. */
etrt_status etrt_op_error(const etrt_node *node, etrt_status status, const char *fmt, ...)
    ETRT_PRINTF(3, 4);

/* An INTS attribute copied into out[0..capacity); *count is its length (0 when the
 * attribute is absent). Refuses another kind or more values than `capacity`. */
etrt_status etrt_op_attribute_ints(const etrt_node *node, const char *name, int64_t *out,
                                   int64_t capacity, int64_t *count);

/* True when input `index` exists and is not an omitted optional input. */
int etrt_op_has_input(const etrt_node *node, const etrt_tensor *inputs, uint32_t index);

/* Refuses a node that has not exactly one input, present, and one output. */
etrt_status etrt_op_check_single_io(const etrt_node *node, const etrt_tensor *inputs);

/* The host bytes of a value input: host_value where known (shape inference, and
 * every executor), else data (the CPU executor's host memory); NULL when neither. */
const void *etrt_op_input_host(const etrt_tensor *tensor);

/* The values of a 0-D or 1-D int32/int64 value input, as int64, into
 * out[0..capacity); `what` names the input in messages ("shape", "axes"). */
etrt_status etrt_op_input_ints(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                               const char *what, int64_t *out, int64_t capacity, int64_t *count);
/* The same for float32/float64 value inputs, as double. */
etrt_status etrt_op_input_doubles(const etrt_node *node, const etrt_tensor *inputs, uint32_t index,
                                  const char *what, double *out, int64_t capacity, int64_t *count);

/* Refuses a dtype outside `allowed` (ETRT_DTYPE_INVALID-terminated), naming the
 * input. */
etrt_status etrt_op_check_dtype(const etrt_node *node, const char *what, etrt_dtype dtype,
                                const etrt_dtype *allowed);

/* Elements from `tensor`'s dims, refusing negative sizes and overflow. */
etrt_status etrt_op_numel(const etrt_node *node, int32_t rank, const int64_t *dims, int64_t *out);

/* float16, bfloat16, float32 or float64. */
int etrt_op_dtype_is_float(etrt_dtype dtype);
/* The dtypes the CUDA arithmetic kernels are instantiated for: the floats, int8,
 * uint8, int32 and int64. */
int etrt_op_dtype_cuda_numeric(etrt_dtype dtype);
/* cuda_supports of the ops whose CUDA kernels take input 0 of a float dtype. */
int etrt_op_float_cuda_supports(const etrt_node *node, const etrt_tensor *inputs);

#endif
