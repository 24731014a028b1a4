/* Methods: one instance of a program's method, owned by one thread at a time. */
#ifndef ETRT_METHOD_H
#define ETRT_METHOD_H

#include <stdint.h>

#include "etrt/program.h"
#include "etrt/status.h"
#include "etrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etrt_method etrt_method;

/* Creates an instance of `name` with its own planned memory (host and device
 * arenas) and its own delegate handles. */
etrt_status etrt_method_create(const etrt_program *program, const char *name, etrt_method **out);
/* Waits for work in flight, then frees everything the instance owns. */
void etrt_method_destroy(etrt_method *method);

uint32_t etrt_method_input_count(const etrt_method *method);
uint32_t etrt_method_output_count(const etrt_method *method);

/* Sets input `index` from caller memory (host or device; etrt finds out which). The
 * memory is used in place and must stay valid through the execute. A shape inside
 * the declared bounds of a dynamic input is accepted; anything else is refused
 * naming the input, the axis and the bound. */
etrt_status etrt_method_set_input(etrt_method *method, uint32_t index,
                                  const etrt_tensor_view *view);
/* Sets a scalar (int64) input. */
etrt_status etrt_method_set_input_int(etrt_method *method, uint32_t index, int64_t value);

/* Hands in memory for output `index` (its capacity in bytes); without this the
 * output lives in the method's own planned memory. */
etrt_status etrt_method_set_output(etrt_method *method, uint32_t index, void *data,
                                   size_t capacity);

/* Runs the method; returns when every output is ready. */
etrt_status etrt_method_execute(etrt_method *method);

/* Runs the method and may return with work in flight: *event (a cudaEvent_t, owned
 * by the method, valid until the next execute or destroy) completes when the outputs
 * are ready. Refused where an output is host memory. */
etrt_status etrt_method_execute_async(etrt_method *method, void **event);

/* Output `index` after execute: data pointer (host or device, as planned or handed
 * in), dtype and the actual sizes. */
etrt_status etrt_method_get_output(const etrt_method *method, uint32_t index,
                                   etrt_tensor_view *out);

#ifdef __cplusplus
}
#endif
#endif
