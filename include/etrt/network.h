/* Building engine plans in code: a network definition (inputs, constants, operations,
 * outputs) and the plan builder. The ONNX importer uses the same API.
 *
 *   etrt_network *net;  etrt_network_create(&net);
 *   int32_t x, w, y;
 *   etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){1, 64}, (int64_t[]){32,
 * 64}, &x); etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){64, 10},
 * weights, &w); etrt_network_add_op(net, "MatMul", NULL, 2, (int32_t[]){x, w}, 1, &y, 0, NULL);
 *   etrt_network_mark_output(net, y, "y");
 *   etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 0}}, &plan, &plan_size);
 */
#ifndef ETRT_NETWORK_H
#define ETRT_NETWORK_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "etrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etrt_network etrt_network;

/* Operation attributes, as ONNX defines them. */
typedef enum etrt_attribute_kind {
  ETRT_ATTRIBUTE_INT = 0,
  ETRT_ATTRIBUTE_FLOAT = 1,
  ETRT_ATTRIBUTE_STRING = 2,
  ETRT_ATTRIBUTE_INTS = 3,
  ETRT_ATTRIBUTE_FLOATS = 4,
  ETRT_ATTRIBUTE_TENSOR = 5,
  /* A body graph of control flow (If, Loop, Scan): an engine plan (etrt_plan_build),
   * held in `tensor` as a 1-D uint8 tensor of the plan's bytes. */
  ETRT_ATTRIBUTE_GRAPH = 6
} etrt_attribute_kind;

typedef struct etrt_attribute {
  const char *name;
  etrt_attribute_kind kind;
  int64_t i;               /* INT */
  float f;                 /* FLOAT */
  const char *s;           /* STRING (NUL-terminated) */
  int64_t count;           /* INTS, FLOATS */
  const int64_t *ints;     /* INTS */
  const float *floats;     /* FLOATS */
  etrt_tensor_view tensor; /* TENSOR: a host tensor (data, dtype, rank, sizes) */
} etrt_attribute;

etrt_status etrt_network_create(etrt_network **out);
void etrt_network_destroy(etrt_network *network);

/* An input whose size along each axis may vary between min_sizes and max_sizes at run
 * time (equal for a fixed axis). Writes the new value's id to *out. */
etrt_status etrt_network_add_input(etrt_network *network, const char *name, etrt_dtype dtype,
                                   int32_t rank, const int64_t *min_sizes, const int64_t *max_sizes,
                                   int32_t *out);

/* A shape input: a 1-D int64 tensor of `count` values passed on the host at run
 * time (etrt_exec_context_set_input_values), whose values decide other shapes (the
 * shape of a Reshape, say). Each value may vary within [min_values[i],
 * max_values[i]]; output bounds are inferred at both ends. */
etrt_status etrt_network_add_shape_input(etrt_network *network, const char *name, int64_t count,
                                         const int64_t *min_values, const int64_t *max_values,
                                         int32_t *out);

/* A constant (weights); the bytes are copied. */
etrt_status etrt_network_add_constant(etrt_network *network, const char *name, etrt_dtype dtype,
                                      int32_t rank, const int64_t *sizes, const void *data,
                                      int32_t *out);

/* An operation named as ONNX names it ("MatMul", "Gemm", "Add", "Relu", ...). An input
 * id of -1 is an omitted optional input. Output dtypes and shapes are inferred; the
 * new values' ids are written to outputs[0..num_outputs). Attribute arrays are copied.
 * An unknown operation or bad attributes are refused with the op's name. */
etrt_status etrt_network_add_op(etrt_network *network, const char *op_type, const char *name,
                                uint32_t num_inputs, const int32_t *inputs, uint32_t num_outputs,
                                int32_t *outputs, uint32_t num_attributes,
                                const etrt_attribute *attributes);

/* Makes a value an output of the network, under `name`. The value must be produced
 * by an operation (an input or a constant is refused). The engine's I/O table lists
 * the inputs in the order they were added, then the outputs in the order they were
 * marked. */
etrt_status etrt_network_mark_output(etrt_network *network, int32_t value, const char *name);

/* Shape and type of a value (bounds: min and max per axis). */
etrt_status etrt_network_value_info(const etrt_network *network, int32_t value, etrt_dtype *dtype,
                                    int32_t *rank, int64_t *min_sizes, int64_t *max_sizes);

typedef enum etrt_precision {
  ETRT_PRECISION_FP32 = 0,
  ETRT_PRECISION_TF32 = 1,
  ETRT_PRECISION_FP16 = 2,
  ETRT_PRECISION_BF16 = 3
} etrt_precision;

typedef struct etrt_plan_options {
  etrt_device device; /* the device the plan is built for: cpu or cuda:N */
  /* What matrix work on float32 data may use on the GPU (TF32, or operands rounded to
   * float16/bfloat16 by cuBLASLt and cuDNN). A network keeps the types it was made
   * with: the ONNX builder (etrt/build.h) is what stores fp16/bf16 plans in half types. */
  etrt_precision precision;
  const char *name; /* the engine's name (appears in logs); NULL for "engine" */
  /* For CUDA plans: the compute capability recorded; 0 records 9.0. The builder never
   * queries a device: a caller building for the local GPU passes its capability. */
  int compute_major, compute_minor;
} etrt_plan_options;

/* Serializes the network as a plan (malloc'd; free with free()). The same network
 * and options always give the same bytes. Refuses a network without outputs, and an
 * engine name longer than 111 bytes. */
etrt_status etrt_plan_build(const etrt_network *network, const etrt_plan_options *options,
                            uint8_t **plan, size_t *plan_size);

/* Wraps a plan as a fully delegated ExecuTorch program: one method "forward" whose
 * inputs and outputs are the engine's, planned in host memory, and one EtrtBackend
 * DelegateCall whose target_device is the plan's device. The .pte bytes are malloc'd
 * (free with free()). */
etrt_status etrt_plan_to_program(const uint8_t *plan, size_t plan_size, uint8_t **pte,
                                 size_t *pte_size);

#ifdef __cplusplus
}
#endif
#endif
