/* CPU kernel of Max, Min, Sum, Mean: the two-input kernel folded over the inputs,
 * the running result kept in the output (each step reads an element before writing
 * it), so no scratch memory is needed. */
#include <string.h>

#include "base/status.h"
#include "engine/ops/cpu/scalar.h"
#include "engine/ops/variadic.h"

etrt_status etrt_cpu_variadic(const etrt_node *node, const etrt_tensor *inputs,
                              etrt_tensor *outputs) {
  const etrt_variadic_state *s = node->state;
  etrt_tensor *out = &outputs[0];
  etrt_status status = ETRT_OK;
  if (node->num_inputs == 1) {
    /* one input: the output has its shape */
    int64_t n = etrt_tensor_numel(out);
    if (n > 0 && out->data != inputs[0].data)
      memcpy(out->data, inputs[0].data, (size_t)n * etrt_dtype_size(out->dtype));
  } else {
    etrt_tensor pair[2] = {inputs[0], inputs[1]};
    status = etrt_cpu_binary(s->kind, pair, out);
    for (uint32_t i = 2; i < node->num_inputs && status == ETRT_OK; ++i) {
      pair[0] = *out;
      pair[1] = inputs[i];
      status = etrt_cpu_binary(s->kind, pair, out);
    }
  }
  if (status == ETRT_OK && s->mean && node->num_inputs > 1) {
    double count_bytes[1]; /* aligned for any dtype */
    etrt_scalar_store(count_bytes, out->dtype, 0, (double)node->num_inputs);
    etrt_tensor pair[2] = {*out, {.data = count_bytes, .dtype = out->dtype, .rank = 0}};
    status = etrt_cpu_binary(ETRT_BINARY_DIV, pair, out);
  }
  if (status != ETRT_OK) return etrt_error_context(status, "%s: ", node->op_type);
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_variadic[] = {
    {"Max", etrt_cpu_variadic},
    {"Min", etrt_cpu_variadic},
    {"Sum", etrt_cpu_variadic},
    {"Mean", etrt_cpu_variadic},
    {NULL, NULL},
};
