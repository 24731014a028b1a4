/* CPU kernels of onnxruntime's quantized elementwise operators (ops/qlinear.h), with
 * the formulas of that header. */
#include <string.h>

#include "engine/ops/op_check.h"
#include "engine/ops/qlinear.h"
#include "engine/ops/quantize.h"
#include "engine/ops/shape_util.h"

static int32_t etrt_cpu_qlinear_zp(const etrt_node *node, const etrt_tensor *inputs,
                                   uint32_t index) {
  return etrt_op_has_input(node, inputs, index)
             ? etrt_quant_load_int(inputs[index].data, inputs[index].dtype, 0)
             : 0;
}

static float etrt_cpu_qlinear_scale(const etrt_tensor *t) { return *(const float *)t->data; }

static etrt_status etrt_cpu_qlinear_binary(const etrt_node *node, const etrt_tensor *inputs,
                                           etrt_tensor *outputs, int add) {
  const etrt_tensor *a = &inputs[0], *b = &inputs[3];
  etrt_tensor *y = &outputs[0];
  etrt_qlinear_binary p;
  int32_t lo, hi;
  etrt_quant_range(y->dtype, &lo, &hi);
  etrt_qlinear_binary_init(&p, etrt_cpu_qlinear_scale(&inputs[1]),
                           etrt_cpu_qlinear_zp(node, inputs, 2), etrt_cpu_qlinear_scale(&inputs[4]),
                           etrt_cpu_qlinear_zp(node, inputs, 5), etrt_cpu_qlinear_scale(&inputs[6]),
                           etrt_cpu_qlinear_zp(node, inputs, 7), lo, hi);
  if (etrt_tensor_numel(y) == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, y, 2, (const etrt_tensor *[]){a, b}));
  etrt_broadcast_cursor c;
  etrt_broadcast_cursor_init(&c);
  int64_t n = it.dims[it.rank - 1], sa = it.strides[0][it.rank - 1],
          sb = it.strides[1][it.rank - 1];
  int64_t rows = it.numel / n;
  etrt_dtype t = y->dtype;
  /* An operand that is one value along the row is folded into the constant part, as
   * onnxruntime's broadcast hands its kernel a one-element span. */
  int a_one = sa == 0, b_one = sb == 0;
  for (int64_t r = 0; r < rows; ++r, etrt_broadcast_cursor_next_row(&it, &c)) {
    int64_t at = r * n;
    for (int64_t k = 0; k < n; ++k) {
      int32_t av = etrt_quant_load_int(a->data, t, c.offset[0] + k * sa);
      int32_t bv = etrt_quant_load_int(b->data, t, c.offset[1] + k * sb);
      etrt_quant_store_int(y->data, t, at + k,
                           etrt_qlinear_binary_at(&p, add, av, bv, a_one, b_one));
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_qlinear_add(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  return etrt_cpu_qlinear_binary(node, inputs, outputs, 1);
}

static etrt_status etrt_cpu_qlinear_mul(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  return etrt_cpu_qlinear_binary(node, inputs, outputs, 0);
}

static etrt_status etrt_cpu_qlinear_softmax(const etrt_node *node, const etrt_tensor *inputs,
                                            etrt_tensor *outputs) {
  etrt_qlinear_softmax_shape s;
  ETRT_RETURN_IF_ERROR(etrt_qlinear_softmax_shape_of(node, &inputs[0], &s));
  if (s.reduce == 0 || etrt_tensor_numel(&inputs[0]) == 0) return ETRT_OK;
  float table[256];
  etrt_qlinear_softmax_table(etrt_cpu_qlinear_scale(&inputs[1]), s.reduce, table);
  /* onnxruntime multiplies by the integer part of 1 / y_scale, not by 1 / y_scale. */
  float y_scale = floorf(1.0f / etrt_cpu_qlinear_scale(&inputs[3]));
  int32_t yzp = etrt_cpu_qlinear_zp(node, inputs, 4), lo, hi;
  etrt_dtype t = inputs[0].dtype;
  etrt_quant_range(t, &lo, &hi);
  const void *x = inputs[0].data;
  void *y = outputs[0].data;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t base = o * s.reduce * s.inner + i;
      int32_t top = lo;
      for (int64_t k = 0; k < s.reduce; ++k) {
        int32_t v = etrt_quant_load_int(x, t, base + k * s.inner);
        top = v > top ? v : top;
      }
      const float *e = table + 255 - top; /* e[v] for v in [top - 255, top] */
      float sum = 0.0f;
      for (int64_t k = 0; k < s.reduce; ++k)
        sum += e[etrt_quant_load_int(x, t, base + k * s.inner)];
      for (int64_t k = 0; k < s.reduce; ++k) {
        int32_t q = yzp;
        if (sum > 0.0f) {
          float v = e[etrt_quant_load_int(x, t, base + k * s.inner)] * y_scale / sum;
          q = (int32_t)nearbyintf(v) + yzp;
        }
        etrt_quant_store_int(y, t, base + k * s.inner, q < lo ? lo : q > hi ? hi : q);
      }
    }
  }
  return ETRT_OK;
}

const etrt_op_cpu_row etrt_cpu_rows_qlinear[] = {
    {"QLinearAdd", etrt_cpu_qlinear_add},
    {"QLinearMul", etrt_cpu_qlinear_mul},
    {"QLinearSoftmax", etrt_cpu_qlinear_softmax},
    {NULL, NULL},
};
