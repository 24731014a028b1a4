/* onnxruntime's quantized elementwise operators on the GPU (ops/qlinear.h), with the
 * formulas of that header, which the CPU kernels (cpu/qlinear.c) share: QLinearAdd and
 * QLinearMul one thread per output element over the broadcast plan, each working out
 * the scale ratios from the scales in device memory; QLinearSoftmax one thread per
 * softmax, summing in the CPU's order, with the exponential table built on the host
 * from the constant x_scale (cuda_supports takes only constant scales). */
#include <stdlib.h>

#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/op_check.h"
#include "engine/ops/qlinear.h"
#include "engine/ops/quantize.h"
#include "engine/ops/shape_util.h"
}

struct etrt_ql_scalars {
  const float *a_scale, *b_scale, *c_scale;
  const void *a_zp, *b_zp, *c_zp; /* NULL: 0 */
};

__device__ __forceinline__ int32_t etrt_ql_zp(const void *zp, etrt_dtype t) {
  return zp != NULL ? etrt_quant_load_int(zp, t, 0) : 0;
}

__global__ void etrt_ql_binary_kernel(etrt_broadcast_iter it, const void *a, const void *b, void *y,
                                      etrt_dtype t, etrt_ql_scalars s, int add, int32_t lo,
                                      int32_t hi) {
  etrt_qlinear_binary p;
  etrt_qlinear_binary_init(&p, *s.a_scale, etrt_ql_zp(s.a_zp, t), *s.b_scale, etrt_ql_zp(s.b_zp, t),
                           *s.c_scale, etrt_ql_zp(s.c_zp, t), lo, hi);
  int a_one = it.strides[0][it.rank - 1] == 0, b_one = it.strides[1][it.rank - 1] == 0;
  ETRT_CUDA_LOOP(e, it.numel) {
    int64_t rest = e, oa = 0, ob = 0;
    for (int32_t d = it.rank - 1; d >= 0; --d) {
      int64_t i = rest % it.dims[d];
      rest /= it.dims[d];
      oa += i * it.strides[0][d];
      ob += i * it.strides[1][d];
    }
    etrt_quant_store_int(y, t, e,
                         etrt_qlinear_binary_at(&p, add, etrt_quant_load_int(a, t, oa),
                                                etrt_quant_load_int(b, t, ob), a_one, b_one));
  }
}

static const void *etrt_ql_optional(const etrt_node *node, const etrt_tensor *inputs,
                                    uint32_t index) {
  return etrt_op_has_input(node, inputs, index) ? inputs[index].data : NULL;
}

static etrt_status etrt_cuda_qlinear_binary(const etrt_node *node, const etrt_tensor *inputs,
                                            etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                            int add) {
  etrt_tensor *y = &outputs[0];
  if (etrt_tensor_numel(y) == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  const etrt_tensor *operands[2] = {&inputs[0], &inputs[3]};
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, y, 2, operands));
  etrt_ql_scalars s = {(const float *)inputs[1].data,     (const float *)inputs[4].data,
                       (const float *)inputs[6].data,     etrt_ql_optional(node, inputs, 2),
                       etrt_ql_optional(node, inputs, 5), etrt_ql_optional(node, inputs, 7)};
  int32_t lo, hi;
  etrt_quant_range(y->dtype, &lo, &hi);
  etrt_ql_binary_kernel<<<etrt_cuda_blocks(it.numel, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                          etrt_cuda_stream(launch)>>>(it, inputs[0].data, inputs[3].data, y->data,
                                                      y->dtype, s, add, lo, hi);
  return etrt_cuda_check(node, add ? "qlinear add" : "qlinear mul");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_qlinear_add) {
  return etrt_cuda_qlinear_binary(node, inputs, outputs, launch, 1);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_qlinear_mul) {
  return etrt_cuda_qlinear_binary(node, inputs, outputs, launch, 0);
}

struct etrt_ql_table {
  float e[256];
};

__global__ void etrt_ql_softmax_kernel(etrt_qlinear_softmax_shape s, etrt_ql_table table,
                                       float y_scale, int32_t yzp, const void *x, void *y,
                                       etrt_dtype t, int32_t lo, int32_t hi) {
  ETRT_CUDA_LOOP(row, s.outer * s.inner) {
    int64_t base = row / s.inner * s.reduce * s.inner + row % s.inner;
    int32_t top = lo;
    for (int64_t k = 0; k < s.reduce; ++k) {
      int32_t v = etrt_quant_load_int(x, t, base + k * s.inner);
      top = v > top ? v : top;
    }
    float sum = 0.0f;
    for (int64_t k = 0; k < s.reduce; ++k)
      sum += table.e[255 - top + etrt_quant_load_int(x, t, base + k * s.inner)];
    for (int64_t k = 0; k < s.reduce; ++k) {
      int32_t q = yzp;
      if (sum > 0.0f) {
        float v =
            __fmul_rn(table.e[255 - top + etrt_quant_load_int(x, t, base + k * s.inner)], y_scale);
        q = (int32_t)nearbyintf(__fdiv_rn(v, sum)) + yzp;
      }
      etrt_quant_store_int(y, t, base + k * s.inner, q < lo ? lo : q > hi ? hi : q);
    }
  }
}

/* QLinearSoftmax's constant scales and output zero point, read on the host once per
 * context: a run's inputs carry only device addresses. */
typedef struct etrt_ql_softmax_constants {
  float x_scale, y_scale;
  int32_t y_zero_point;
} etrt_ql_softmax_constants;

/* The constants from the inputs' host values (a setup's constants have them; a run's
 * data is device memory, never read here); refused where one is missing. */
static etrt_status etrt_ql_softmax_read(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_ql_softmax_constants *c) {
  const void *x_scale = inputs[1].host_value, *y_scale = inputs[3].host_value;
  if (x_scale == NULL || y_scale == NULL)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "x_scale and y_scale must be constants on the GPU");
  c->x_scale = *(const float *)x_scale;
  c->y_scale = *(const float *)y_scale;
  c->y_zero_point = 0;
  if (etrt_op_has_input(node, inputs, 4)) {
    const void *zp = inputs[4].host_value;
    if (zp == NULL)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                           "y_zero_point must be a constant on the GPU");
    c->y_zero_point = etrt_quant_load_int(zp, inputs[4].dtype, 0);
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_qlinear_softmax) {
  etrt_qlinear_softmax_shape s;
  ETRT_RETURN_IF_ERROR(etrt_qlinear_softmax_shape_of(node, &inputs[0], &s));
  if (s.reduce == 0 || etrt_tensor_numel(&inputs[0]) == 0) return ETRT_OK;
  const etrt_ql_softmax_constants *held =
      launch->node_state != NULL
          ? (const etrt_ql_softmax_constants *)launch->node_state[launch->node]
          : NULL;
  etrt_ql_softmax_constants c = {0.0f, 0.0f, 0};
  if (held != NULL)
    c = *held;
  else
    ETRT_RETURN_IF_ERROR(etrt_ql_softmax_read(node, inputs, &c));
  etrt_ql_table table;
  etrt_qlinear_softmax_table(c.x_scale, s.reduce, table.e);
  int32_t lo, hi;
  etrt_quant_range(inputs[0].dtype, &lo, &hi);
  etrt_ql_softmax_kernel<<<etrt_cuda_blocks(s.outer * s.inner, ETRT_CUDA_THREADS),
                           ETRT_CUDA_THREADS, 0, etrt_cuda_stream(launch)>>>(
      s, table, floorf(1.0f / c.y_scale), c.y_zero_point, inputs[0].data, outputs[0].data,
      inputs[0].dtype, lo, hi);
  return etrt_cuda_check(node, "qlinear softmax");
}

static etrt_status etrt_ql_softmax_setup(const etrt_node *node, const etrt_tensor *inputs,
                                         const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                         void **state) {
  (void)outputs;
  (void)launch;
  *state = NULL;
  etrt_ql_softmax_constants c = {0.0f, 0.0f, 0};
  ETRT_RETURN_IF_ERROR(etrt_ql_softmax_read(node, inputs, &c));
  etrt_ql_softmax_constants *held = (etrt_ql_softmax_constants *)malloc(sizeof *held);
  if (held == NULL)
    return etrt_op_error(node, ETRT_ERROR_OUT_OF_MEMORY, "out of memory for its constants");
  *held = c;
  *state = held;
  return ETRT_OK;
}

static void etrt_ql_softmax_release(void *state) { free(state); }

extern "C" const etrt_op_cuda_setup_row etrt_cuda_setups_qlinear[] = {
    {"QLinearSoftmax", etrt_ql_softmax_setup, etrt_ql_softmax_release},
    {NULL, NULL, NULL},
};

extern "C" const etrt_op_cuda_row etrt_cuda_rows_qlinear[] = {
    {"QLinearAdd", etrt_cuda_qlinear_add, NULL},
    {"QLinearMul", etrt_cuda_qlinear_mul, NULL},
    {"QLinearSoftmax", etrt_cuda_qlinear_softmax, NULL},
    {NULL, NULL, NULL},
};
