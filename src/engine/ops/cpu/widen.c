#include "engine/ops/cpu/widen.h"

#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "engine/ops/op_check.h"

static bool etrt_cpu_widen_is_half(const etrt_tensor *t) {
  return t->rank >= 0 && (t->dtype == ETRT_DTYPE_FLOAT16 || t->dtype == ETRT_DTYPE_BFLOAT16);
}

bool etrt_cpu_widen_needed(const etrt_node *node, const etrt_tensor *inputs,
                           const etrt_tensor *outputs) {
  for (uint32_t i = 0; i < node->num_inputs; ++i)
    if (etrt_cpu_widen_is_half(&inputs[i])) return true;
  for (uint32_t o = 0; o < node->num_outputs; ++o)
    if (etrt_cpu_widen_is_half(&outputs[o])) return true;
  return false;
}

static void etrt_cpu_widen(const etrt_tensor *from, float *to, int64_t n) {
  const uint16_t *h = from->data;
  if (from->dtype == ETRT_DTYPE_FLOAT16)
    for (int64_t k = 0; k < n; ++k) to[k] = etrt_half_to_float(h[k]);
  else
    for (int64_t k = 0; k < n; ++k) to[k] = etrt_bfloat16_to_float(h[k]);
}

static void etrt_cpu_narrow(const float *from, etrt_tensor *to, int64_t n) {
  uint16_t *h = to->data;
  if (to->dtype == ETRT_DTYPE_FLOAT16)
    for (int64_t k = 0; k < n; ++k) h[k] = etrt_float_to_half(from[k]);
  else
    for (int64_t k = 0; k < n; ++k) h[k] = etrt_float_to_bfloat16(from[k]);
}

etrt_status etrt_cpu_widen_run(const etrt_node *node, const etrt_tensor *inputs,
                               etrt_tensor *outputs, etrt_op_cpu_fn kernel) {
  uint32_t count = node->num_inputs + node->num_outputs;
  etrt_tensor *wide = malloc(((size_t)count + 1) * sizeof *wide);
  if (wide == NULL) return etrt_op_error(node, ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  memcpy(wide, inputs, node->num_inputs * sizeof *wide);
  memcpy(wide + node->num_inputs, outputs, node->num_outputs * sizeof *wide);
  etrt_status status = ETRT_OK;
  uint32_t done = 0; /* tensors whose data this call allocated: [0, done) */
  for (; done < count && status == ETRT_OK; ++done) {
    etrt_tensor *t = &wide[done];
    if (!etrt_cpu_widen_is_half(t)) {
      t->data = NULL; /* not ours: marked so that the cleanup skips it */
      continue;
    }
    int64_t n = etrt_tensor_numel(t);
    float *buffer = malloc((size_t)(n > 0 ? n : 1) * sizeof *buffer);
    if (buffer == NULL) {
      status = etrt_op_error(node, ETRT_ERROR_OUT_OF_MEMORY, "%lld elements widened to float32",
                             (long long)n);
      break;
    }
    if (done < node->num_inputs) etrt_cpu_widen(t, buffer, n);
    t->data = buffer;
    t->dtype = ETRT_DTYPE_FLOAT32;
  }
  /* The kernel sees the caller's pointers where nothing was widened. */
  etrt_tensor *args = calloc((size_t)count + 1, sizeof *args);
  if (status == ETRT_OK && args == NULL)
    status = etrt_op_error(node, ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (status == ETRT_OK) {
    for (uint32_t k = 0; k < count; ++k) {
      const etrt_tensor *given = k < node->num_inputs ? &inputs[k] : &outputs[k - node->num_inputs];
      args[k] = wide[k].data != NULL ? wide[k] : *given;
    }
    status = kernel(node, args, args + node->num_inputs);
    for (uint32_t o = 0; o < node->num_outputs && status == ETRT_OK; ++o) {
      etrt_tensor *out = &outputs[o];
      const etrt_tensor *computed = &args[node->num_inputs + o];
      memcpy(out->dims, computed->dims, sizeof out->dims); /* dims a kernel wrote */
      if (wide[node->num_inputs + o].data != NULL)
        etrt_cpu_narrow(computed->data, out, etrt_tensor_numel(computed));
    }
  }
  for (uint32_t k = 0; k < done && k < count; ++k)
    if (wide[k].data != NULL) free(wide[k].data);
  free(args);
  free(wide);
  return status;
}
