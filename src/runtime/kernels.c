#include "runtime/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const etrt_kernel_def *etrt_kernel_find(const char *name, size_t name_size, const char *overload,
                                        size_t overload_size) {
  char full[256];
  int n = overload_size > 0 ? snprintf(full, sizeof full, "%.*s.%.*s", (int)name_size, name,
                                       (int)overload_size, overload)
                            : snprintf(full, sizeof full, "%.*s", (int)name_size, name);
  if (n < 0 || (size_t)n >= sizeof full) return NULL;
  if (strcmp(full, etrt_kernel_h2d_copy.name) == 0) return &etrt_kernel_h2d_copy;
  if (strcmp(full, etrt_kernel_d2h_copy.name) == 0) return &etrt_kernel_d2h_copy;
  return etrt_portable_find(full);
}

etrt_status etrt_kernel_call_prepare(etrt_kernel_call *call, const etrt_kernel_def *def,
                                     const int32_t *args, uint32_t num_args, uint32_t instruction,
                                     const etrt_value *values) {
  memset(call, 0, sizeof *call);
  call->def = def;
  call->args = args;
  call->num_args = num_args;
  call->instruction = instruction;
  if (num_args != def->num_args) {
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "instruction %u: %s takes %u arguments, the program gives %u", instruction,
                      def->name, def->num_args, num_args);
  }
  etrt_status status = def->prepare(call, values);
  if (status != ETRT_OK) {
    etrt_kernel_call_release(call);
    return etrt_error_context(status, "instruction %u (%s): ", instruction, def->name);
  }
  return ETRT_OK;
}

void etrt_kernel_call_release(etrt_kernel_call *call) {
  free(call->state);
  free(call->scale_state);
  free(call->post_state);
  free(call->layout_out);
  free(call->widen_out);
  free(call->narrow_state);
  call->layout_out = call->widen_out = call->narrow_state = NULL;
  for (int i = 0; i < ETRT_KERNEL_MAX_ENGINE_INPUTS; ++i) {
    free(call->cast_state[i]);
    free(call->cast_scratch[i]);
    free(call->layout_scratch[i]);
    call->layout_scratch[i] = NULL;
    call->cast_state[i] = call->cast_scratch[i] = NULL;
  }
  free(call->scratch);
  call->state = call->scale_state = call->post_state = call->scratch = NULL;
}
