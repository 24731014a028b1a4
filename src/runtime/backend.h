/* The delegate interface, as ExecuTorch defines it: a backend registered under an id
 * is_available / init (payload, compile specs, context) / execute / destroy. It
 * belongs to the runtime, as ExecuTorch's BackendInterface belongs to its runtime;
 * src/delegate/ implements it (EtrtBackend). */
#ifndef ETRT_RUNTIME_BACKEND_H
#define ETRT_RUNTIME_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"
#include "runtime/value.h"

typedef struct etrt_compile_spec {
  const char *key;
  const uint8_t *value;
  size_t value_size;
} etrt_compile_spec;

typedef struct etrt_backend_init_args {
  const uint8_t *payload; /* the delegate's processed bytes; valid while the program lives */
  size_t payload_size;
  const etrt_compile_spec *compile_specs;
  uint32_t num_compile_specs;
  /* Context for messages and logs. */
  const char *method_name;
  uint32_t delegate_index;
  /* No GPU is present and the program allows plans built for one to run on the CPU. */
  int allow_cpu_fallback;
  /* Run on the CPU executor even where a GPU is present. */
  int force_cpu;
} etrt_backend_init_args;

typedef struct etrt_backend_execute_args {
  etrt_value **values; /* the DelegateCall's arguments: inputs, then outputs */
  uint32_t num_values;
  const char *method_name;
  uint32_t delegate_index;
  /* Set by execute_async: the backend may leave work in flight and write the
   * completion event here (else it returns with all work done). */
  int allow_async;
  void **completion_event; /* set to the handle's event, or NULL when nothing is in flight */
  /* Set with a completion event (when not NULL): the device whose stream it was
   * recorded on, so that the method knows whether it follows the method's own work. */
  int *completion_device;
  /* The stream the method runs on (the caller's selection, else the per-thread
   * default); resolved once per method execute. */
  void *stream;
  int stream_selected; /* 0: no selection, `stream` is the per-thread default */
} etrt_backend_execute_args;

typedef struct etrt_backend {
  const char *id;
  int (*is_available)(void);
  etrt_status (*init)(const etrt_backend_init_args *args, void **handle);
  etrt_status (*execute)(void *handle, const etrt_backend_execute_args *args);
  /* Waits for the handle's work in flight, then frees it. */
  void (*destroy)(void *handle);
} etrt_backend;

/* Registers a backend; a second registration of an id is refused. The backend struct
 * must outlive the process (static storage). */
etrt_status etrt_backend_register(const etrt_backend *backend);
/* The backend registered under `id`, or NULL. The built-in EtrtBackend is registered
 * on first use. */
const etrt_backend *etrt_backend_find(const char *id);

#endif
