/* EtrtBackend: the delegate that runs an engine plan inside a method. It owns the
 * device-handling contract of DESIGN.md section 3; the engine below it only takes
 * bound addresses and a stream. The rules are cited where they are implemented. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "delegate/etrt_backend.h"
#include "device/device.h"
#include "device/device_scope.h"
#include "engine/engine.h"

#define ETRT_DUMMY_BYTES 256

typedef struct etrt_staging {
  void *data;
  size_t capacity;
} etrt_staging;

typedef struct etrt_backend_handle {
  pthread_mutex_t mutex; /* rule 8: one call at a time per handle */
  etrt_engine *engine;
  etrt_exec_context *context;
  const etrt_device_driver *driver; /* NULL: the CPU executor on host memory */
  int device;                       /* rule 1: the engine's device, whatever else says */
  int pageable_access;              /* the device reads pageable memory in place */
  uint32_t num_inputs, num_outputs;
  uint32_t *io_index;    /* argument position -> engine I/O index */
  etrt_staging *staging; /* one cached device buffer per binding (rule 3) */
  /* Per binding: the engine's memory an output with no size bound was last pointed at
   * (etrt_engine_io.engine_memory); other memory in the tensor is the caller's. */
  void **held;
  void *dummy; /* the address bound for zero-size tensors */
  /* Rule 7: the context's completion event (etrt_exec_context_completion) was
   * recorded by an enqueue nobody has waited for yet. */
  int completion_pending;
  int staging_logged; /* rule 4: one staging log line per engine */
  const char *method_name;
  uint32_t delegate_index;
} etrt_backend_handle;

/* --- init and destroy ------------------------------------------------------------- */

/* Frees a handle; `pending` is the failure that led here (ETRT_OK from destroy), whose
 * message a failing step of the teardown must not replace. */
static void etrt_backend_free(etrt_backend_handle *h, etrt_status pending) {
  etrt_error_keep keep = etrt_error_keep_first(pending);
  etrt_device_scope scope; /* rule 2: the frees below run on the engine's device */
  /* Entering may fail; the frees are still attempted (device pointers are freed
   * whichever device is current). */
  (void)etrt_device_scope_enter(h->driver, h->device, &scope);
  if (h->driver != NULL) {
    if (h->completion_pending)
      (void)h->driver->event_synchronize(etrt_exec_context_completion(h->context));
    if (h->staging != NULL) {
      for (uint32_t i = 0; i < h->num_inputs + h->num_outputs; ++i) {
        if (h->staging[i].data != NULL) (void)h->driver->free_device(h->staging[i].data);
      }
    }
    if (h->dummy != NULL) (void)h->driver->free_device(h->dummy);
  }
  etrt_exec_context_destroy(h->context);
  etrt_engine_destroy(h->engine);
  (void)etrt_device_scope_exit(&scope, pending);
  etrt_error_keep_end(keep);
  free(h->staging);
  free(h->held);
  free(h->io_index);
  pthread_mutex_destroy(&h->mutex);
  free(h);
}

static etrt_status etrt_backend_map_io(etrt_backend_handle *h) {
  uint32_t count = etrt_engine_io_count(h->engine);
  h->io_index = calloc(count ? count : 1, sizeof *h->io_index);
  h->staging = calloc(count ? count : 1, sizeof *h->staging);
  h->held = calloc(count ? count : 1, sizeof *h->held);
  if (h->io_index == NULL || h->staging == NULL || h->held == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  /* The DelegateCall's arguments are the engine's inputs, then its outputs, each in
   * the engine's I/O order. */
  uint32_t position = 0;
  for (int pass = 1; pass >= 0; --pass) {
    for (uint32_t i = 0; i < count; ++i) {
      if (etrt_engine_io_at(h->engine, i)->is_input == pass) h->io_index[position++] = i;
    }
    if (pass == 1) h->num_inputs = position;
  }
  h->num_outputs = position - h->num_inputs;
  return ETRT_OK;
}

static etrt_status etrt_backend_init_device(etrt_backend_handle *h,
                                            const etrt_backend_init_args *args) {
  etrt_device device = etrt_engine_device(h->engine);
  if (device.type == ETRT_DEVICE_CPU || args->force_cpu)
    return etrt_exec_context_create(h->engine, NULL, &h->context);
  const etrt_device_driver *driver = etrt_device_driver_get();
  if (driver == NULL) {
    if (!args->allow_cpu_fallback) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "engine '%s' was built for cuda:%d, but no GPU is present (allow the CPU "
                        "fallback to run it on the CPU)",
                        etrt_engine_name(h->engine), (int)device.index);
    }
    etrt_log(ETRT_LOG_INFO, "engine '%s' (built for cuda:%d) runs on the CPU: no GPU is present",
             etrt_engine_name(h->engine), (int)device.index);
    return etrt_exec_context_create(h->engine, NULL, &h->context);
  }
  if (device.index >= driver->device_count()) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "engine '%s' was built for cuda:%d, but only %d GPU(s) are present",
                      etrt_engine_name(h->engine), (int)device.index, driver->device_count());
  }
  h->driver = driver;
  h->device = device.index;
  etrt_device_attributes attributes;
  ETRT_RETURN_IF_ERROR(driver->attributes(h->device, &attributes));
  int major, minor;
  etrt_engine_compute_capability(h->engine, &major, &minor);
  if (major != attributes.compute_major || minor != attributes.compute_minor) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "engine '%s' was built for compute capability %d.%d, cuda:%d is %d.%d",
                      etrt_engine_name(h->engine), major, minor, h->device,
                      attributes.compute_major, attributes.compute_minor);
  }
  h->pageable_access = attributes.pageable_memory_access;
  etrt_device_scope scope; /* rule 2 */
  ETRT_RETURN_IF_ERROR(etrt_device_scope_enter(driver, h->device, &scope));
  etrt_status status = etrt_exec_context_create(h->engine, driver, &h->context);
  if (status == ETRT_OK) status = driver->malloc_device(ETRT_DUMMY_BYTES, &h->dummy);
  return etrt_device_scope_exit(&scope, status);
}

static etrt_status etrt_backend_init(const etrt_backend_init_args *args, void **out) {
  *out = NULL;
  etrt_backend_handle *h = calloc(1, sizeof *h);
  if (h == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  pthread_mutex_init(&h->mutex, NULL);
  h->method_name = args->method_name;
  h->delegate_index = args->delegate_index;
  etrt_status status = etrt_engine_deserialize(args->payload, args->payload_size, &h->engine);
  if (status == ETRT_OK) status = etrt_backend_map_io(h);
  if (status == ETRT_OK) status = etrt_backend_init_device(h, args);
  if (status != ETRT_OK) {
    etrt_error_context(status, "delegate %u: ", args->delegate_index);
    etrt_backend_free(h, status);
    return status;
  }
  /* Rule 1: target_device is AOT metadata; say so where it disagrees. */
  for (uint32_t i = 0; i < args->num_compile_specs; ++i) {
    const etrt_compile_spec *spec = &args->compile_specs[i];
    if (strcmp(spec->key, "target_device") != 0 || !etrt_log_enabled(ETRT_LOG_DEBUG)) continue;
    char engine_device[16];
    etrt_device_format(etrt_engine_device(h->engine), engine_device, sizeof engine_device);
    if (strlen(engine_device) != spec->value_size ||
        memcmp(engine_device, spec->value, spec->value_size) != 0) {
      etrt_log(ETRT_LOG_DEBUG,
               "delegate %u: target_device says %.*s, engine '%s' runs on %s (the engine decides)",
               args->delegate_index, (int)spec->value_size, (const char *)spec->value,
               etrt_engine_name(h->engine), engine_device);
    }
  }
  *out = h;
  return ETRT_OK;
}

static void etrt_backend_destroy(void *handle) {
  etrt_backend_handle *h = handle;
  if (h == NULL) return;
  pthread_mutex_lock(&h->mutex); /* rule 8: waits for a call in progress */
  pthread_mutex_unlock(&h->mutex);
  etrt_backend_free(h, ETRT_OK);
}

/* --- execute ---------------------------------------------------------------------- */

/* Fails naming the method, the delegate and the binding ("input 1", "output 0"). */
static etrt_status etrt_backend_io_error(const etrt_backend_handle *h, uint32_t position,
                                         etrt_status status, const char *fmt, ...)
    ETRT_PRINTF(4, 5);
static etrt_status etrt_backend_io_error(const etrt_backend_handle *h, uint32_t position,
                                         etrt_status status, const char *fmt, ...) {
  char detail[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(detail, sizeof detail, fmt, args);
  va_end(args);
  int is_input = position < h->num_inputs;
  return etrt_error(status, "method '%s', delegate %u, %s %u: %s", h->method_name,
                    h->delegate_index, is_input ? "input" : "output",
                    is_input ? position : position - h->num_inputs, detail);
}

/* Rule 3: where the bytes of one binding are, and what address the engine gets. */
static etrt_status etrt_backend_bind(etrt_backend_handle *h, uint32_t position,
                                     const etrt_runtime_tensor *t, size_t nbytes, void **address,
                                     int *staged) {
  *staged = 0;
  if (nbytes == 0) {
    *address = h->driver != NULL ? h->dummy : (void *)h; /* any valid, non-NULL address */
    return ETRT_OK;
  }
  if (t->data == NULL) return etrt_backend_io_error(h, position, ETRT_ERROR_STATE, "has no memory");
  if (h->driver == NULL) {
    /* The CPU executor reads host memory; device memory here is a planning bug. */
    const etrt_device_driver *present = etrt_device_driver_get();
    etrt_pointer_info info = {ETRT_POINTER_PAGEABLE_HOST, -1};
    if (present != NULL) ETRT_RETURN_IF_ERROR(present->pointer_info(t->data, &info));
    if (info.kind == ETRT_POINTER_DEVICE)
      return etrt_backend_io_error(h, position, ETRT_ERROR_INVALID_ARGUMENT,
                                   "is device memory, this engine runs on the CPU");
    *address = t->data;
    return ETRT_OK;
  }
  etrt_pointer_info info;
  ETRT_RETURN_IF_ERROR(h->driver->pointer_info(t->data, &info));
  if (info.kind == ETRT_POINTER_MANAGED ||
      (info.kind == ETRT_POINTER_DEVICE && info.device == h->device) ||
      (info.kind == ETRT_POINTER_PAGEABLE_HOST && h->pageable_access)) {
    *address = t->data; /* zero copy */
    return ETRT_OK;
  }
  if (info.kind == ETRT_POINTER_DEVICE) {
    return etrt_backend_io_error(h, position, ETRT_ERROR_INVALID_ARGUMENT,
                                 "pointer is on cuda:%d, engine runs on cuda:%d", info.device,
                                 h->device);
  }
  /* Host memory: a cached device buffer per binding that grows and is reused. */
  etrt_staging *staging = &h->staging[position];
  if (staging->capacity < nbytes) {
    if (staging->data != NULL) ETRT_RETURN_IF_ERROR(h->driver->free_device(staging->data));
    staging->data = NULL;
    staging->capacity = 0;
    ETRT_RETURN_IF_ERROR(h->driver->malloc_device(nbytes, &staging->data));
    staging->capacity = nbytes;
  }
  *address = staging->data;
  *staged = 1;
  return ETRT_OK;
}

static etrt_status etrt_backend_tensor(const etrt_backend_handle *h,
                                       const etrt_backend_execute_args *args, uint32_t position,
                                       etrt_runtime_tensor **out) {
  etrt_value *v = args->values[position];
  if (v->tag != ETRT_VALUE_TENSOR)
    return etrt_backend_io_error(h, position, ETRT_ERROR_INVALID_ARGUMENT, "is not a tensor");
  *out = &v->u.tensor;
  return ETRT_OK;
}

/* Binds inputs and outputs, staging host inputs; records which outputs need copying
 * back. */
static etrt_status etrt_backend_prepare(etrt_backend_handle *h,
                                        const etrt_backend_execute_args *args, etrt_stream stream,
                                        uint32_t *staged_outputs, int *any_staged) {
  for (uint32_t p = 0; p < h->num_inputs; ++p) {
    etrt_runtime_tensor *t = NULL;
    ETRT_RETURN_IF_ERROR(etrt_backend_tensor(h, args, p, &t));
    uint32_t io = h->io_index[p];
    const etrt_engine_io *desc = etrt_engine_io_at(h->engine, io);
    /* A shape input's int32 tensor is widened: the plan casts it back behind the
     * shape input, which the engine keeps in int64. */
    int widened = desc->is_shape_input && t->dtype == ETRT_DTYPE_INT32;
    if (t->dtype != desc->dtype && !widened) {
      return etrt_backend_io_error(h, p, ETRT_ERROR_INVALID_ARGUMENT,
                                   "dtype differs from the engine's %s",
                                   etrt_dtype_name(desc->dtype));
    }
    if (desc->is_shape_input) {
      /* Shape inputs are host values (they decide shapes before anything runs); the
       * count is checked against the plan's by set_input_values, the values against
       * the bounds the plan was built for. */
      int64_t count = 1;
      for (int32_t a = 0; a < t->rank; ++a) count *= t->sizes[a];
      if (t->data == NULL && count > 0)
        return etrt_backend_io_error(h, p, ETRT_ERROR_STATE, "has no memory");
      const int64_t *values = t->data;
      int64_t wide[64];
      if (widened) {
        if (count > (int64_t)(sizeof wide / sizeof wide[0]))
          return etrt_backend_io_error(h, p, ETRT_ERROR_INVALID_ARGUMENT,
                                       "holds more values than a shape input takes");
        for (int64_t i = 0; i < count; ++i) wide[i] = ((const int32_t *)t->data)[i];
        values = wide;
      }
      ETRT_RETURN_IF_ERROR(etrt_exec_context_set_input_values(h->context, io, values, count));
      continue;
    }
    ETRT_RETURN_IF_ERROR(etrt_exec_context_set_input_shape(h->context, io, t->rank, t->sizes));
    size_t nbytes = etrt_runtime_tensor_nbytes(t);
    void *address;
    int staged;
    ETRT_RETURN_IF_ERROR(etrt_backend_bind(h, p, t, nbytes, &address, &staged));
    if (staged) {
      ETRT_RETURN_IF_ERROR(
          h->driver->memcpy_async(address, t->data, nbytes, ETRT_COPY_HOST_TO_DEVICE, stream));
      *any_staged = 1;
    }
    ETRT_RETURN_IF_ERROR(etrt_exec_context_set_address(h->context, io, address));
  }
  for (uint32_t p = h->num_inputs; p < h->num_inputs + h->num_outputs; ++p) {
    etrt_runtime_tensor *t = NULL;
    ETRT_RETURN_IF_ERROR(etrt_backend_tensor(h, args, p, &t));
    uint32_t io = h->io_index[p];
    int32_t rank;
    int64_t sizes[ETRT_MAX_RANK];
    const etrt_engine_io *desc = etrt_engine_io_at(h->engine, io);
    if (desc->engine_memory) {
      /* The engine holds its memory: the tensor points there after the run. */
      if (t->dtype != desc->dtype || t->rank != desc->rank)
        return etrt_backend_io_error(h, p, ETRT_ERROR_INVALID_ARGUMENT,
                                     "dtype or rank differs from the engine's output");
      continue;
    }
    if (desc->dims_at_execute) {
      /* The run decides the dims: its memory must hold the largest; the sizes are set
       * once the run is complete (etrt_backend_run_cpu). */
      rank = desc->rank;
      memcpy(sizes, desc->max_sizes, sizeof sizes);
    } else {
      ETRT_RETURN_IF_ERROR(etrt_exec_context_output_shape(h->context, io, &rank, sizes));
    }
    if (t->dtype != etrt_engine_io_at(h->engine, io)->dtype || rank != t->rank)
      return etrt_backend_io_error(h, p, ETRT_ERROR_INVALID_ARGUMENT,
                                   "dtype or rank differs from the engine's output");
    if (memcmp(sizes, t->sizes, (size_t)rank * sizeof(int64_t)) != 0) {
      etrt_runtime_tensor resized = *t;
      memcpy(resized.sizes, sizes, sizeof resized.sizes);
      if (!t->dynamic || etrt_runtime_tensor_nbytes(&resized) > t->capacity)
        return etrt_backend_io_error(h, p, ETRT_ERROR_INVALID_ARGUMENT,
                                     "the engine's output shape does not fit the tensor");
      memcpy(t->sizes, sizes, sizeof t->sizes);
    }
    void *address;
    int staged;
    ETRT_RETURN_IF_ERROR(
        etrt_backend_bind(h, p, t, etrt_runtime_tensor_nbytes(t), &address, &staged));
    if (staged) {
      staged_outputs[(p - h->num_inputs) / 32] |= 1u << ((p - h->num_inputs) % 32);
      *any_staged = 1;
    }
    ETRT_RETURN_IF_ERROR(etrt_exec_context_set_address(h->context, io, address));
  }
  return ETRT_OK;
}

#define ETRT_MAX_STAGED_WORDS 8

static etrt_status etrt_backend_run_gpu(etrt_backend_handle *h,
                                        const etrt_backend_execute_args *args) {
  const etrt_device_driver *driver = h->driver;
  etrt_stream stream = args->stream;
  /* Rule 6: the per-thread default stream is invalid under a green context. */
  if (!args->stream_selected && driver->green_context_current != NULL &&
      driver->green_context_current()) {
    return etrt_error(ETRT_ERROR_STATE,
                      "method '%s', delegate %u: a green context is current on this thread, where "
                      "the per-thread default "
                      "stream is invalid: select the green context's stream with etrt_stream_push",
                      h->method_name, h->delegate_index);
  }
  /* Rule 5: the stream must belong to the engine's device. */
  int stream_device;
  ETRT_RETURN_IF_ERROR(driver->stream_device(stream, &stream_device));
  if (stream_device != h->device) {
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "method '%s', delegate %u: the selected stream is on cuda:%d, engine '%s' runs on cuda:%d",
        h->method_name, h->delegate_index, stream_device, etrt_engine_name(h->engine), h->device);
  }
  /* Rule 7: the previous enqueue must finish before the context is reconfigured. */
  if (h->completion_pending) {
    ETRT_RETURN_IF_ERROR(driver->event_synchronize(etrt_exec_context_completion(h->context)));
    h->completion_pending = 0;
  }
  if (h->num_outputs > 32 * ETRT_MAX_STAGED_WORDS)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "engine '%s' has more than %d outputs",
                      etrt_engine_name(h->engine), 32 * ETRT_MAX_STAGED_WORDS);
  uint32_t staged_outputs[ETRT_MAX_STAGED_WORDS] = {0};
  int any_staged = 0, copies_back = 0;
  etrt_status status = etrt_backend_prepare(h, args, stream, staged_outputs, &any_staged);
  if (status == ETRT_OK && any_staged && !h->staging_logged) {
    /* Rule 4: a caller expecting zero-copy device I/O learns that it fell off it. */
    h->staging_logged = 1;
    etrt_log(ETRT_LOG_INFO,
             "engine '%s' (method '%s', delegate %u) is staging host I/O through device buffers; "
             "pass device memory for zero-copy",
             etrt_engine_name(h->engine), h->method_name, h->delegate_index);
  }
  if (status == ETRT_OK) status = etrt_exec_context_enqueue(h->context, stream);
  for (uint32_t p = 0; status == ETRT_OK && p < h->num_outputs; ++p) {
    if (!(staged_outputs[p / 32] & (1u << (p % 32)))) continue;
    etrt_runtime_tensor *t = &args->values[h->num_inputs + p]->u.tensor;
    status = driver->memcpy_async(t->data, h->staging[h->num_inputs + p].data,
                                  etrt_runtime_tensor_nbytes(t), ETRT_COPY_DEVICE_TO_HOST, stream);
    copies_back = 1;
  }
  if (status != ETRT_OK) {
    /* Rule 9: whatever was queued before the failure is drained. */
    etrt_error_keep keep = etrt_error_keep_first(status);
    (void)driver->stream_synchronize(stream);
    etrt_error_keep_end(keep);
    return status;
  }
  /* Rule 7: the enqueue recorded the context's completion event, the one event of
   * this execute; the handle records none of its own. */
  etrt_event completion = etrt_exec_context_completion(h->context);
  h->completion_pending = 1;
  /* Staged host I/O must be ready (inputs read, outputs written) when we return. The
   * copies back were queued after the completion event: the stream covers them. */
  if (!copies_back && !any_staged && args->allow_async) {
    if (args->completion_event != NULL) {
      *args->completion_event = completion;
      if (args->completion_device != NULL) *args->completion_device = h->device;
    }
    return ETRT_OK;
  }
  status = copies_back ? driver->stream_synchronize(stream) : driver->event_synchronize(completion);
  if (status == ETRT_OK) {
    h->completion_pending = 0;
    /* The run is complete: a bad index a kernel met fails this execute. */
    return etrt_exec_context_check(h->context);
  }
  /* Rule 9: the wait failed; drain what it left, keeping its message. Work the drain
   * cannot finish stays pending for the next execute and destroy to wait on. */
  etrt_error_keep keep = etrt_error_keep_first(status);
  if (driver->stream_synchronize(stream) == ETRT_OK) h->completion_pending = 0;
  etrt_error_keep_end(keep);
  return status;
}

static etrt_status etrt_backend_run_cpu(etrt_backend_handle *h,
                                        const etrt_backend_execute_args *args) {
  uint32_t unused[ETRT_MAX_STAGED_WORDS] = {0};
  int any_staged = 0;
  ETRT_RETURN_IF_ERROR(etrt_backend_prepare(h, args, NULL, unused, &any_staged));
  ETRT_RETURN_IF_ERROR(etrt_exec_context_enqueue(h->context, NULL));
  for (uint32_t p = h->num_inputs; p < h->num_inputs + h->num_outputs; ++p) {
    uint32_t io = h->io_index[p];
    const etrt_engine_io *desc = etrt_engine_io_at(h->engine, io);
    if (!desc->dims_at_execute) continue;
    etrt_runtime_tensor *t = NULL;
    ETRT_RETURN_IF_ERROR(etrt_backend_tensor(h, args, p, &t));
    int32_t rank;
    ETRT_RETURN_IF_ERROR(etrt_exec_context_output_shape(h->context, io, &rank, t->sizes));
    if (!desc->engine_memory) continue;
    void *data;
    size_t capacity, nbytes = etrt_runtime_tensor_nbytes(t);
    ETRT_RETURN_IF_ERROR(etrt_exec_context_output_memory(h->context, io, &data, &capacity));
    if (t->data == NULL || t->data == h->held[p]) {
      /* Valid until the next execute of this method, as the engine's memory is. */
      t->data = data;
      t->capacity = capacity;
      h->held[p] = data;
    } else if (nbytes > t->capacity) {
      return etrt_backend_io_error(h, p, ETRT_ERROR_INVALID_ARGUMENT,
                                   "the run gave more bytes than the memory set for it holds");
    } else if (nbytes > 0) {
      memcpy(t->data, data, nbytes); /* the caller's memory */
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_backend_execute(void *handle, const etrt_backend_execute_args *args) {
  etrt_backend_handle *h = handle;
  if (args->completion_event != NULL) *args->completion_event = NULL;
  if (args->num_values != h->num_inputs + h->num_outputs) {
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "method '%s', delegate %u: %u arguments, engine '%s' takes %u inputs and %u outputs",
        h->method_name, h->delegate_index, args->num_values, etrt_engine_name(h->engine),
        h->num_inputs, h->num_outputs);
  }
  pthread_mutex_lock(&h->mutex);
  etrt_status status;
  if (h->driver == NULL) {
    status = etrt_backend_run_cpu(h, args);
  } else {
    /* Rule 2: set the device only when it differs, and put it back on every path. */
    etrt_device_scope scope;
    status = etrt_device_scope_enter(h->driver, h->device, &scope);
    if (status == ETRT_OK) status = etrt_device_scope_exit(&scope, etrt_backend_run_gpu(h, args));
  }
  pthread_mutex_unlock(&h->mutex);
  return status;
}

static int etrt_backend_is_available(void) { return 1; }

const etrt_backend etrt_backend_etrt = {
    .id = ETRT_BACKEND_ID,
    .is_available = etrt_backend_is_available,
    .init = etrt_backend_init,
    .execute = etrt_backend_execute,
    .destroy = etrt_backend_destroy,
};
