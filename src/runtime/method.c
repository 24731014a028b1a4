/* Method instances: planned memory, the value table, prepared kernels and delegate
 * handles, and the instruction loop. */
#include "etrt/method.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "device/device_scope.h"
#include "runtime/backend.h"
#include "etrt/stream.h"
#include "runtime/kernels.h"
#include "runtime/program.h"

#define ETRT_ARENA_ALIGNMENT 64

typedef struct etrt_method_buffer {
  void *data;
  void *allocation; /* host buffers: what calloc returned (data is aligned inside it) */
  size_t size;
  etrt_device device; /* where the program plans it; CPU buffers are host memory */
  int on_device;      /* allocated through the device driver */
} etrt_method_buffer;

typedef struct etrt_method_step {
  etrt_kernel_call call;      /* kernel instructions */
  etrt_value **delegate_args; /* delegate instructions: pointers into the value table */
} etrt_method_step;

struct etrt_method {
  const etrt_program *program;
  const etrt_pte_plan *plan;
  const char *name;
  const etrt_device_driver *driver; /* fixed at creation; NULL: no GPU */
  pthread_mutex_t mutex;            /* contract rule 8: one call at a time */
  etrt_value *values;
  size_t num_values;
  etrt_method_buffer *buffers;
  size_t num_buffers;
  etrt_method_step **steps; /* steps[chain][instruction] */
  const etrt_backend **backends;
  void **handles;
  etrt_event event;         /* execute_async's own event, where one must join several */
  int event_device;         /* the device `event` was created on */
  etrt_event pending_event; /* what the last execute_async handed out, not yet waited for */
  /* Per delegate: its completion event while its work is in flight. The delegate's
   * device may not be the caller's, so the method waits on these events rather than
   * on a stream of the current device. */
  etrt_event *in_flight;
  /* Per input: set by the caller since creation. Planned memory alone does not count,
   * so that an input the caller forgot is refused instead of read as stale bytes. */
  uint8_t *input_set;
  /* Per input: its planned host bytes when another value is planned over them (the
   * exporter aliases views to their source: flatten of an input reads the input's
   * planned memory). Such an input is copied in at every execute (the planner may also
   * reuse the bytes once the input is dead, so a copy made once would not survive a
   * run); any other is bound without a copy. NULL: no alias. */
  void **input_alias;
  const void **input_source; /* the caller's bytes for an aliased input */
};

/* --- planned memory ------------------------------------------------------------ */

static etrt_status etrt_method_alloc_buffer(etrt_method *m, etrt_method_buffer *b) {
  if (b->size == 0) return ETRT_OK;
  if (b->device.type == ETRT_DEVICE_CPU || m->driver == NULL) {
    /* Zeroed, as ExecuTorch's hosts allocate planned memory (value-initialized
     * vectors): a mutable buffer the program gives no initial data (a zeros buffer the
     * exporter leaves out) reads zeros on the first execute. By calloc rather than a
     * memset: a large block comes as fresh zero pages that become resident only when
     * written, so planned bytes nothing writes (an input bound in place, without a
     * copy) take no memory; a memset made all of them resident (4.7 MiB of the OCR
     * detector's 640 x 640 input). */
    size_t padded = b->size + 2 * ETRT_ARENA_ALIGNMENT;
    if (padded < b->size || (b->allocation = calloc(1, padded)) == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for a %zu-byte planned buffer",
                        b->size);
    uintptr_t at = ((uintptr_t)b->allocation + ETRT_ARENA_ALIGNMENT - 1) &
                   ~(uintptr_t)(ETRT_ARENA_ALIGNMENT - 1);
    b->data = (void *)at;
    return ETRT_OK;
  }
  /* Contract rule 2: allocated on the buffer's device, the caller's put back. */
  etrt_device_scope scope;
  ETRT_RETURN_IF_ERROR(etrt_device_scope_enter(m->driver, b->device.index, &scope));
  etrt_status status = m->driver->malloc_device(b->size, &b->data);
  if (status == ETRT_OK)
    b->on_device = 1; /* freed by destroy even if the restore fails */
  else
    b->data = NULL;
  return etrt_device_scope_exit(&scope, status);
}

static void etrt_method_free_buffer(etrt_method *m, etrt_method_buffer *b) {
  if (b->data == NULL) return;
  if (b->on_device) {
    etrt_device_scope scope; /* contract rule 2 */
    if (etrt_device_scope_enter(m->driver, b->device.index, &scope) == ETRT_OK)
      (void)etrt_device_scope_exit(&scope, m->driver->free_device(b->data));
  } else {
    free(b->allocation);
  }
  b->data = NULL;
  b->allocation = NULL;
}

static etrt_status etrt_method_plan_buffers(etrt_method *m) {
  const etrt_pte_plan *plan = m->plan;
  m->num_buffers = plan->non_const_buffer_sizes.count;
  if (m->num_buffers == 0) return ETRT_OK;
  m->buffers = calloc(m->num_buffers, sizeof *m->buffers);
  if (m->buffers == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory planning buffers");
  for (size_t i = 1; i < m->num_buffers; ++i) {
    int64_t size = plan->non_const_buffer_sizes.data[i];
    if (size < 0)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "planned buffer %zu has negative size %lld", i,
                        (long long)size);
    m->buffers[i].size = (size_t)size;
  }
  for (size_t i = 0; i < plan->non_const_buffer_device_count; ++i) {
    const etrt_pte_buffer_device *d = &plan->non_const_buffer_device[i];
    if (d->device_type != ETRT_DEVICE_CUDA) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "planned buffer %d is on device type %d; etrt plans CPU and CUDA buffers",
                        (int)d->buffer_idx, (int)d->device_type);
    }
    m->buffers[d->buffer_idx].device = (etrt_device){ETRT_DEVICE_CUDA, d->device_index};
    if (m->driver == NULL && !m->program->allow_cpu_fallback) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "planned buffer %d (%zu bytes) is on cuda:%d, but no GPU is present (allow "
                        "the CPU fallback to run it on the CPU)",
                        (int)d->buffer_idx, m->buffers[d->buffer_idx].size, (int)d->device_index);
    }
    if (m->driver != NULL && d->device_index >= m->driver->device_count()) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "planned buffer %d is on cuda:%d, but only %d GPU(s) are present",
                        (int)d->buffer_idx, (int)d->device_index, m->driver->device_count());
    }
  }
  for (size_t i = 1; i < m->num_buffers; ++i) {
    etrt_status status = etrt_method_alloc_buffer(m, &m->buffers[i]);
    if (status != ETRT_OK) return etrt_error_context(status, "planned buffer %zu: ", i);
  }
  return ETRT_OK;
}

/* --- the value table ------------------------------------------------------------ */

static etrt_status etrt_method_tensor_value(etrt_method *m, size_t index, const etrt_pte_tensor *t,
                                            etrt_value *v) {
  etrt_runtime_tensor *rt = &v->u.tensor;
  v->tag = ETRT_VALUE_TENSOR;
  rt->dtype = t->scalar_type;
  rt->rank = (int32_t)t->sizes.count;
  for (int32_t i = 0; i < rt->rank; ++i) {
    if (t->sizes.data[i] < 0)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "value %zu: negative size on axis %d", index,
                        (int)i);
    rt->sizes[i] = rt->max_sizes[i] = t->sizes.data[i];
  }
  rt->dynamic = t->shape_dynamism != ETRT_PTE_SHAPE_STATIC;
  rt->device = etrt_pte_tensor_device(t);
  /* The order of the dims in memory, outermost first (ExecuTorch's dim_order). */
  uint32_t seen = 0;
  for (int32_t i = 0; i < rt->rank; ++i) {
    uint8_t d = (size_t)i < t->dim_order.count ? t->dim_order.data[i] : (uint8_t)i;
    if (d >= rt->rank || (seen & (1u << d)))
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "value %zu: dim_order is not a permutation of the %d dims", index,
                        (int)rt->rank);
    seen |= 1u << d;
    rt->dim_order[i] = d;
    if (d != i) rt->permuted = 1;
  }
  size_t nbytes = etrt_runtime_tensor_nbytes(rt);
  if (nbytes == SIZE_MAX)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "value %zu: tensor size overflows", index);
  bool external =
      t->has_extra_tensor_info && t->extra_tensor_info.location == ETRT_PTE_TENSOR_EXTERNAL;
  if (t->has_allocation_info) {
    uint32_t id = t->allocation_info.memory_id;
    uint64_t offset = etrt_pte_allocation_offset(&t->allocation_info);
    if (id == 0 || id >= m->num_buffers || offset > m->buffers[id].size ||
        nbytes > m->buffers[id].size - offset) {
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "value %zu: %zu bytes at offset %llu of planned buffer %u do not fit it",
                        index, nbytes, (unsigned long long)offset, id);
    }
    if (m->buffers[id].device.type != rt->device.type ||
        (rt->device.type == ETRT_DEVICE_CUDA && m->buffers[id].device.index != rt->device.index)) {
      char a[16], b[16];
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "value %zu: the tensor is on %s but planned buffer %u is on %s", index,
                        etrt_device_format(rt->device, a, sizeof a), id,
                        etrt_device_format(m->buffers[id].device, b, sizeof b));
    }
    rt->data = m->buffers[id].size ? (uint8_t *)m->buffers[id].data + offset : NULL;
    rt->capacity = nbytes;
    if (external) {
      /* A planned EXTERNAL tensor starts from its named bytes, as ExecuTorch loads it. */
      const uint8_t *bytes;
      ETRT_RETURN_IF_ERROR(
          etrt_program_external_tensor(m->program, t->extra_tensor_info.fully_qualified_name.data,
                                       t->scalar_type, nbytes, &bytes));
      if (m->buffers[id].on_device)
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "value %zu: external data for a device-planned tensor", index);
      if (nbytes > 0) memcpy(rt->data, bytes, nbytes);
    } else if (t->data_buffer_idx > 0) {
      etrt_pte_bytes initial;
      ETRT_RETURN_IF_ERROR(etrt_pte_program_mutable_data(m->program->pte, t, nbytes, &initial));
      if (m->buffers[id].on_device)
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "value %zu: initial data for a device-planned tensor", index);
      memcpy(rt->data, initial.data, nbytes);
    }
    return ETRT_OK;
  }
  /* Contract: an EXTERNAL tensor is looked up by name whatever its data_buffer_idx. */
  if (external) {
    const uint8_t *bytes;
    ETRT_RETURN_IF_ERROR(
        etrt_program_external_tensor(m->program, t->extra_tensor_info.fully_qualified_name.data,
                                     t->scalar_type, nbytes, &bytes));
    rt->data = (void *)bytes; /* read-only, as constants */
    rt->capacity = nbytes;
    rt->constant = 1;
    return ETRT_OK;
  }
  if (t->data_buffer_idx > 0) {
    etrt_pte_bytes bytes;
    ETRT_RETURN_IF_ERROR(
        etrt_pte_program_constant(m->program->pte, t->data_buffer_idx, nbytes, &bytes));
    rt->data = (void *)bytes.data; /* constants are read-only: no kernel writes them */
    rt->capacity = nbytes;
    rt->constant = 1;
    return ETRT_OK;
  }
  return ETRT_OK; /* no memory yet: an input the caller sets, or an unplanned output */
}

static etrt_status etrt_method_fill_values(etrt_method *m) {
  const etrt_pte_plan *plan = m->plan;
  m->num_values = plan->values_count;
  m->values = calloc(m->num_values ? m->num_values : 1, sizeof *m->values);
  if (m->values == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for the value table");
  for (size_t i = 0; i < m->num_values; ++i) {
    const etrt_pte_value *p = &plan->values[i];
    etrt_value *v = &m->values[i];
    switch (p->kind) {
      case ETRT_PTE_VALUE_NULL:
        v->tag = ETRT_VALUE_NONE;
        break;
      case ETRT_PTE_VALUE_INT:
        v->tag = ETRT_VALUE_INT;
        v->u.i = p->int_val;
        break;
      case ETRT_PTE_VALUE_BOOL:
        v->tag = ETRT_VALUE_BOOL;
        v->u.b = p->bool_val;
        break;
      case ETRT_PTE_VALUE_DOUBLE:
        v->tag = ETRT_VALUE_DOUBLE;
        v->u.d = p->double_val;
        break;
      case ETRT_PTE_VALUE_STRING:
        v->tag = ETRT_VALUE_STRING;
        v->u.string.data = p->string_val.data;
        v->u.string.size = p->string_val.size;
        break;
      case ETRT_PTE_VALUE_INT_LIST:
        v->tag = ETRT_VALUE_INT_LIST;
        v->u.int_list.items = p->int_list.data;
        v->u.int_list.count = (uint32_t)p->int_list.count;
        break;
      case ETRT_PTE_VALUE_DOUBLE_LIST:
        v->tag = ETRT_VALUE_DOUBLE_LIST;
        v->u.doubles.items = p->double_list.data;
        v->u.doubles.count = (uint32_t)p->double_list.count;
        break;
      case ETRT_PTE_VALUE_BOOL_LIST:
        v->tag = ETRT_VALUE_BOOL_LIST;
        v->u.bools.items = p->bool_list.data;
        v->u.bools.count = (uint32_t)p->bool_list.count;
        break;
      case ETRT_PTE_VALUE_TENSOR_LIST:
      case ETRT_PTE_VALUE_OPTIONAL_TENSOR_LIST:
        v->tag = p->kind == ETRT_PTE_VALUE_TENSOR_LIST ? ETRT_VALUE_TENSOR_LIST
                                                       : ETRT_VALUE_OPTIONAL_TENSOR_LIST;
        v->u.tensor_list.items = p->kind == ETRT_PTE_VALUE_TENSOR_LIST
                                     ? p->tensor_list.data
                                     : p->optional_tensor_list.data;
        v->u.tensor_list.count =
            (uint32_t)(p->kind == ETRT_PTE_VALUE_TENSOR_LIST ? p->tensor_list.count
                                                             : p->optional_tensor_list.count);
        break;
      case ETRT_PTE_VALUE_TENSOR:
        ETRT_RETURN_IF_ERROR(etrt_method_tensor_value(m, i, &p->tensor, v));
        break;
      default:
        return etrt_error(ETRT_ERROR_INVALID_FORMAT, "value %zu has unknown kind %d", i,
                          (int)p->kind);
    }
  }
  return ETRT_OK;
}

/* --- instructions and delegates ------------------------------------------------- */

static etrt_status etrt_method_prepare_steps(etrt_method *m) {
  const etrt_pte_plan *plan = m->plan;
  if (plan->chains_count == 0) return ETRT_OK;
  m->steps = calloc(plan->chains_count, sizeof *m->steps);
  if (m->steps == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory preparing instructions");
  uint32_t index = 0;
  for (size_t c = 0; c < plan->chains_count; ++c) {
    const etrt_pte_chain *chain = &plan->chains[c];
    m->steps[c] =
        calloc(chain->instructions_count ? chain->instructions_count : 1, sizeof **m->steps);
    if (m->steps[c] == NULL)
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory preparing instructions");
    for (size_t i = 0; i < chain->instructions_count; ++i, ++index) {
      const etrt_pte_instruction *in = &chain->instructions[i];
      etrt_method_step *step = &m->steps[c][i];
      if (in->kind == ETRT_PTE_INSTR_KERNEL) {
        const etrt_pte_operator *op = &plan->operators[in->kernel.op_index];
        const etrt_kernel_def *def =
            etrt_kernel_find(op->name.data, op->name.size, op->overload.data, op->overload.size);
        if (def == NULL)
          return etrt_error(ETRT_ERROR_UNSUPPORTED,
                            "instruction %u: operator %.*s%s%.*s is not available", index,
                            (int)op->name.size, op->name.data, op->overload.size ? "." : "",
                            (int)op->overload.size, op->overload.data);
        ETRT_RETURN_IF_ERROR(etrt_kernel_call_prepare(&step->call, def, in->kernel.args.data,
                                                      (uint32_t)in->kernel.args.count, index,
                                                      m->values));
      } else if (in->kind == ETRT_PTE_INSTR_DELEGATE) {
        size_t n = in->delegate.args.count;
        step->delegate_args = calloc(n ? n : 1, sizeof *step->delegate_args);
        if (step->delegate_args == NULL)
          return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory preparing instructions");
        for (size_t a = 0; a < n; ++a)
          step->delegate_args[a] = &m->values[in->delegate.args.data[a]];
      }
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_method_init_delegates(etrt_method *m) {
  const etrt_pte_plan *plan = m->plan;
  if (plan->delegates_count == 0) return ETRT_OK;
  m->backends = calloc(plan->delegates_count, sizeof *m->backends);
  m->handles = calloc(plan->delegates_count, sizeof *m->handles);
  m->in_flight = calloc(plan->delegates_count, sizeof *m->in_flight);
  if (m->backends == NULL || m->handles == NULL || m->in_flight == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory for delegates");
  for (size_t i = 0; i < plan->delegates_count; ++i) {
    const etrt_pte_delegate *d = &plan->delegates[i];
    const etrt_backend *backend = etrt_backend_find(d->id.data);
    if (backend == NULL)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "delegate %zu: no backend '%s'", i, d->id.data);
    if (backend->is_available != NULL && !backend->is_available())
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "delegate %zu: backend '%s' is not available here",
                        i, d->id.data);
    etrt_pte_bytes payload;
    ETRT_RETURN_IF_ERROR(etrt_pte_program_delegate_data(m->program->pte, d, &payload));
    etrt_compile_spec specs[32];
    if (d->compile_specs_count > 32)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "delegate %zu has %zu compile specs (at most 32)",
                        i, d->compile_specs_count);
    for (size_t s = 0; s < d->compile_specs_count; ++s) {
      specs[s].key = d->compile_specs[s].key.data;
      specs[s].value = d->compile_specs[s].value.data;
      specs[s].value_size = d->compile_specs[s].value.size;
    }
    etrt_backend_init_args args = {
        .payload = payload.data,
        .payload_size = payload.size,
        .compile_specs = specs,
        .num_compile_specs = (uint32_t)d->compile_specs_count,
        .method_name = m->name,
        .delegate_index = (uint32_t)i,
        .allow_cpu_fallback = m->program->allow_cpu_fallback && m->driver == NULL,
        .force_cpu = m->program->force_cpu,
    };
    ETRT_RETURN_IF_ERROR(backend->init(&args, &m->handles[i]));
    m->backends[i] = backend;
  }
  return ETRT_OK;
}

static etrt_status etrt_method_find_input_aliases(etrt_method *m);

etrt_status etrt_method_create(const etrt_program *program, const char *name, etrt_method **out) {
  *out = NULL;
  if (program == NULL || name == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "etrt_method_create needs a program and a name");
  const etrt_pte_plan *plan = etrt_program_plan(program, name);
  if (plan == NULL) return ETRT_ERROR_NOT_FOUND;
  etrt_method *m = calloc(1, sizeof *m);
  if (m == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory creating method '%s'", name);
  m->program = program;
  m->plan = plan;
  m->name = plan->name.data;
  m->driver = program->force_cpu ? NULL : etrt_device_driver_get();
  pthread_mutex_init(&m->mutex, NULL);
  m->input_set = calloc(plan->inputs.count ? plan->inputs.count : 1, 1);
  etrt_status status =
      m->input_set != NULL
          ? ETRT_OK
          : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory creating method '%s'", name);
  if (status == ETRT_OK) status = etrt_method_plan_buffers(m);
  if (status == ETRT_OK) status = etrt_method_fill_values(m);
  if (status == ETRT_OK) status = etrt_method_find_input_aliases(m);
  if (status == ETRT_OK) status = etrt_method_prepare_steps(m);
  if (status == ETRT_OK) status = etrt_method_init_delegates(m);
  if (status != ETRT_OK) {
    etrt_error_context(status, "method '%s': ", name);
    etrt_error_keep keep =
        etrt_error_keep_first(status); /* the teardown's failures are not the cause */
    etrt_method_destroy(m);
    etrt_error_keep_end(keep);
    return status;
  }
  *out = m;
  return ETRT_OK;
}

void etrt_method_destroy(etrt_method *m) {
  if (m == NULL) return;
  pthread_mutex_lock(&m->mutex);
  if (m->pending_event != NULL)
    (void)m->driver->event_synchronize(m->pending_event); /* execute_async's work */
  if (m->event != NULL) (void)m->driver->event_destroy(m->event);
  if (m->handles != NULL) {
    for (size_t i = 0; i < m->plan->delegates_count; ++i) {
      if (m->handles[i] != NULL) m->backends[i]->destroy(m->handles[i]);
    }
  }
  if (m->steps != NULL) {
    for (size_t c = 0; c < m->plan->chains_count; ++c) {
      if (m->steps[c] == NULL) continue;
      for (size_t i = 0; i < m->plan->chains[c].instructions_count; ++i) {
        etrt_kernel_call_release(&m->steps[c][i].call);
        free(m->steps[c][i].delegate_args);
      }
      free(m->steps[c]);
    }
    free(m->steps);
  }
  for (size_t i = 0; i < m->num_buffers; ++i) etrt_method_free_buffer(m, &m->buffers[i]);
  free(m->buffers);
  free(m->values);
  free(m->backends);
  free(m->handles);
  free(m->in_flight);
  free(m->input_set);
  free(m->input_alias);
  free(m->input_source);
  pthread_mutex_unlock(&m->mutex);
  pthread_mutex_destroy(&m->mutex);
  free(m);
}

/* --- inputs and outputs ------------------------------------------------------------ */

static etrt_status etrt_method_find_input_aliases(etrt_method *m) {
  const size_t count = m->plan->inputs.count;
  m->input_alias = calloc(count ? count : 1, sizeof *m->input_alias);
  m->input_source = calloc(count ? count : 1, sizeof *m->input_source);
  if (m->input_alias == NULL || m->input_source == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory creating method '%s'", m->name);
  for (size_t i = 0; i < count; ++i) {
    const int32_t id = m->plan->inputs.data[i];
    const etrt_value *in = &m->values[id];
    if (in->tag != ETRT_VALUE_TENSOR || in->u.tensor.data == NULL ||
        in->u.tensor.device.type != ETRT_DEVICE_CPU || in->u.tensor.capacity == 0)
      continue;
    const uint8_t *lo = in->u.tensor.data, *hi = lo + in->u.tensor.capacity;
    for (size_t j = 0; j < m->num_values && m->input_alias[i] == NULL; ++j) {
      const etrt_value *v = &m->values[j];
      if ((int32_t)j == id || v->tag != ETRT_VALUE_TENSOR || v->u.tensor.data == NULL ||
          v->u.tensor.constant)
        continue;
      const uint8_t *a = v->u.tensor.data, *b = a + v->u.tensor.capacity;
      if (a < hi && lo < b && v->u.tensor.capacity > 0) m->input_alias[i] = in->u.tensor.data;
    }
  }
  return ETRT_OK;
}

uint32_t etrt_method_input_count(const etrt_method *m) { return (uint32_t)m->plan->inputs.count; }
uint32_t etrt_method_output_count(const etrt_method *m) { return (uint32_t)m->plan->outputs.count; }

static etrt_status etrt_method_io_tensor(etrt_method *m, int is_input, uint32_t index,
                                         etrt_value **out) {
  const etrt_pte_i32s *io = is_input ? &m->plan->inputs : &m->plan->outputs;
  if (index >= io->count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s' has %zu %s, not %u", m->name,
                      io->count, is_input ? "inputs" : "outputs", index + 1);
  *out = &m->values[io->data[index]];
  return ETRT_OK;
}

etrt_status etrt_method_set_input(etrt_method *m, uint32_t index, const etrt_tensor_view *view) {
  etrt_value *v = NULL;
  ETRT_RETURN_IF_ERROR(etrt_method_io_tensor(m, 1, index, &v));
  if (v->tag != ETRT_VALUE_TENSOR)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s', input %u is not a tensor", m->name,
                      index);
  etrt_runtime_tensor *t = &v->u.tensor;
  if (view->dtype != t->dtype)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "method '%s', input %u: dtype %s, the method takes %s", m->name, index,
                      etrt_dtype_name(view->dtype), etrt_dtype_name(t->dtype));
  if (view->rank != t->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "method '%s', input %u: rank %d, the method takes rank %d", m->name, index,
                      (int)view->rank, (int)t->rank);
  for (int32_t i = 0; i < t->rank; ++i) {
    int64_t s = view->sizes[i], bound = t->max_sizes[i];
    if (t->dynamic ? (s < 0 || s > bound) : s != bound) {
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "method '%s', input %u, axis %d: size %lld, the method takes %s%lld",
                        m->name, index, (int)i, (long long)s, t->dynamic ? "at most " : "",
                        (long long)bound);
    }
  }
  etrt_runtime_tensor next = *t;
  memcpy(next.sizes, view->sizes, sizeof next.sizes);
  size_t nbytes = etrt_runtime_tensor_nbytes(&next);
  if (view->data == NULL && nbytes > 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s', input %u: data is NULL", m->name,
                      index);
  pthread_mutex_lock(&m->mutex);
  memcpy(t->sizes, view->sizes, sizeof t->sizes);
  void *alias = m->input_alias[index];
  if (alias != NULL) {
    etrt_pointer_info where = {ETRT_POINTER_PAGEABLE_HOST, -1};
    if (m->driver != NULL && nbytes > 0) (void)m->driver->pointer_info(view->data, &where);
    if (where.kind == ETRT_POINTER_DEVICE) {
      pthread_mutex_unlock(&m->mutex);
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "method '%s', input %u: the program reads it through a view planned in "
                        "host memory; pass host memory",
                        m->name, index);
    }
    m->input_source[index] = view->data;
    t->data = alias;
  } else {
    t->data = view->data;
  }
  t->capacity = nbytes;
  m->input_set[index] = 1;
  pthread_mutex_unlock(&m->mutex);
  return ETRT_OK;
}

etrt_status etrt_method_set_input_int(etrt_method *m, uint32_t index, int64_t value) {
  etrt_value *v = NULL;
  ETRT_RETURN_IF_ERROR(etrt_method_io_tensor(m, 1, index, &v));
  if (v->tag != ETRT_VALUE_INT)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s', input %u is not an int", m->name,
                      index);
  pthread_mutex_lock(&m->mutex);
  v->u.i = value;
  m->input_set[index] = 1;
  pthread_mutex_unlock(&m->mutex);
  return ETRT_OK;
}

etrt_status etrt_method_set_output(etrt_method *m, uint32_t index, void *data, size_t capacity) {
  etrt_value *v = NULL;
  ETRT_RETURN_IF_ERROR(etrt_method_io_tensor(m, 0, index, &v));
  if (v->tag != ETRT_VALUE_TENSOR)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s', output %u is not a tensor",
                      m->name, index);
  etrt_runtime_tensor *t = &v->u.tensor;
  etrt_runtime_tensor largest = *t;
  memcpy(largest.sizes, t->max_sizes, sizeof largest.sizes);
  size_t need = etrt_runtime_tensor_nbytes(&largest);
  if (capacity < need || (data == NULL && need > 0))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "method '%s', output %u needs %zu bytes, got %zu", m->name, index, need,
                      data == NULL ? 0 : capacity);
  pthread_mutex_lock(&m->mutex);
  t->data = data;
  t->capacity = capacity;
  pthread_mutex_unlock(&m->mutex);
  return ETRT_OK;
}

etrt_status etrt_method_get_output(const etrt_method *m, uint32_t index, etrt_tensor_view *out) {
  etrt_value *v = NULL;
  ETRT_RETURN_IF_ERROR(etrt_method_io_tensor((etrt_method *)m, 0, index, &v));
  memset(out, 0, sizeof *out);
  if (v->tag != ETRT_VALUE_TENSOR)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s', output %u is not a tensor",
                      m->name, index);
  out->data = v->u.tensor.data;
  out->dtype = v->u.tensor.dtype;
  out->rank = v->u.tensor.rank;
  memcpy(out->sizes, v->u.tensor.sizes, sizeof out->sizes);
  return ETRT_OK;
}

/* --- execution ------------------------------------------------------------------- */

static etrt_status etrt_method_check_inputs(etrt_method *m) {
  for (size_t i = 0; i < m->plan->inputs.count; ++i) {
    const etrt_value *v = &m->values[m->plan->inputs.data[i]];
    if (v->tag == ETRT_VALUE_TENSOR && !m->input_set[i] &&
        (v->u.tensor.data == NULL || etrt_runtime_tensor_nbytes(&v->u.tensor) > 0))
      return etrt_error(ETRT_ERROR_STATE,
                        "method '%s': input %zu is not set (the method takes %zu inputs)", m->name,
                        i, m->plan->inputs.count);
  }
  /* Aliased inputs into their planned bytes (see input_alias). */
  for (size_t i = 0; i < m->plan->inputs.count; ++i) {
    if (m->input_alias[i] == NULL || m->input_source[i] == NULL) continue;
    const etrt_runtime_tensor *t = &m->values[m->plan->inputs.data[i]].u.tensor;
    size_t nbytes = etrt_runtime_tensor_nbytes(t);
    if (nbytes > 0 && m->input_source[i] != m->input_alias[i])
      memcpy(m->input_alias[i], m->input_source[i], nbytes);
  }
  return ETRT_OK;
}

/* execute_async is allowed only where every output is device-resident (rule 7). */
static etrt_status etrt_method_check_async_outputs(etrt_method *m) {
  if (m->driver == NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "method '%s': execute_async needs a GPU", m->name);
  for (size_t i = 0; i < m->plan->outputs.count; ++i) {
    const etrt_value *v = &m->values[m->plan->outputs.data[i]];
    if (v->tag != ETRT_VALUE_TENSOR) continue;
    etrt_pointer_info info = {ETRT_POINTER_PAGEABLE_HOST, -1};
    if (v->u.tensor.data != NULL)
      ETRT_RETURN_IF_ERROR(m->driver->pointer_info(v->u.tensor.data, &info));
    if (info.kind != ETRT_POINTER_DEVICE && info.kind != ETRT_POINTER_MANAGED)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "method '%s': execute_async needs every output in device memory, output "
                        "%zu is host memory; use execute",
                        m->name, i);
  }
  return ETRT_OK;
}

static etrt_status etrt_method_run_chain(etrt_method *m, size_t c, etrt_run_context *context) {
  const etrt_pte_chain *chain = &m->plan->chains[c];
  size_t pc = 0;
  while (pc < chain->instructions_count) {
    const etrt_pte_instruction *in = &chain->instructions[pc];
    etrt_method_step *step = &m->steps[c][pc];
    etrt_status status = ETRT_OK;
    size_t next = pc + 1;
    switch (in->kind) {
      case ETRT_PTE_INSTR_KERNEL:
        status = step->call.def->run(&step->call, m->values, context);
        if (status != ETRT_OK)
          etrt_error_context(status, "instruction %zu (%s): ", pc, step->call.def->name);
        break;
      case ETRT_PTE_INSTR_DELEGATE: {
        int32_t d = in->delegate.delegate_index;
        void *event = NULL;
        int event_device = -1;
        etrt_backend_execute_args args = {
            .values = step->delegate_args,
            .num_values = (uint32_t)in->delegate.args.count,
            .method_name = m->name,
            .delegate_index = (uint32_t)d,
            .allow_async = 1, /* the method synchronises (or hands out an event) at the end */
            .completion_event = &event,
            .completion_device = &event_device,
            .stream = context->stream,
            .stream_selected = context->stream_selected,
        };
        status = m->backends[d]->execute(m->handles[d], &args);
        m->in_flight[d] = event;
        if (event != NULL && context->stream_device >= 0 &&
            event_device == context->stream_device) {
          /* Recorded on the method's stream after everything queued there so far. */
          context->last_completion = event;
          context->stream_has_work = 0;
        } else if (event != NULL) {
          context->other_streams = 1;
        }
        break;
      }
      case ETRT_PTE_INSTR_MOVE:
        m->values[in->move.move_to] = m->values[in->move.move_from];
        break;
      case ETRT_PTE_INSTR_JUMP_FALSE: {
        const etrt_value *cond = &m->values[in->jump_false.cond_value_index];
        int value;
        if (cond->tag == ETRT_VALUE_BOOL) {
          value = cond->u.b;
        } else if (cond->tag == ETRT_VALUE_TENSOR && cond->u.tensor.dtype == ETRT_DTYPE_BOOL &&
                   etrt_runtime_tensor_nbytes(&cond->u.tensor) == 1 &&
                   cond->u.tensor.device.type == ETRT_DEVICE_CPU) {
          value = *(const uint8_t *)cond->u.tensor.data != 0;
        } else {
          status = etrt_error(ETRT_ERROR_INVALID_FORMAT,
                              "instruction %zu: the condition is not a bool", pc);
          break;
        }
        if (!value) next = (size_t)in->jump_false.destination_instruction;
        break;
      }
      case ETRT_PTE_INSTR_FREE:
        break; /* planned memory is owned by the arenas */
      default:
        status = etrt_error(ETRT_ERROR_INVALID_FORMAT, "instruction %zu has unknown kind %d", pc,
                            (int)in->kind);
    }
    if (status != ETRT_OK) return status;
    pc = next;
  }
  return ETRT_OK;
}

/* Waits for what this execute left queued: each delegate's completion event and
 * the method's own copies on the stream. What a failed wait left stays listed, so
 * that a second call (contract rule 9's drain) waits for it again. */
static etrt_status etrt_method_wait_in_flight(etrt_method *m, etrt_run_context *context) {
  etrt_status status = ETRT_OK;
  for (size_t d = 0; d < m->plan->delegates_count; ++d) {
    if (m->in_flight[d] == NULL) continue;
    etrt_status s = m->driver->event_synchronize(m->in_flight[d]);
    if (s == ETRT_OK) m->in_flight[d] = NULL;
    status = etrt_status_first(status, s);
  }
  if (context->stream_has_work) {
    etrt_status s = m->driver->stream_synchronize(context->stream);
    if (s == ETRT_OK) context->stream_has_work = 0;
    status = etrt_status_first(status, s);
  }
  return status;
}

/* The synchronous end of an execute: wait, and where the wait fails, drain what it
 * left (rule 9) without replacing its message. */
static etrt_status etrt_method_finish(etrt_method *m, etrt_run_context *context) {
  etrt_status status = etrt_method_wait_in_flight(m, context);
  if (status == ETRT_OK) return ETRT_OK;
  etrt_error_keep keep = etrt_error_keep_first(status);
  (void)etrt_method_wait_in_flight(m, context);
  etrt_error_keep_end(keep);
  return status;
}

/* An event is recorded only on a stream of the device it was created on: the join
 * event belongs to the selected stream's device, which need not be the current one
 * (contract rule 5: the caller picks the stream). Called with nothing pending on the
 * old event (the previous execute_async was waited for). */
static etrt_status etrt_method_join_event(etrt_method *m, int stream_device) {
  if (m->event != NULL && (stream_device < 0 || m->event_device == stream_device)) return ETRT_OK;
  if (m->event != NULL) {
    ETRT_RETURN_IF_ERROR(m->driver->event_destroy(m->event));
    m->event = NULL;
  }
  etrt_device_scope scope = {0};
  etrt_status status = ETRT_OK;
  if (stream_device >= 0) status = etrt_device_scope_enter(m->driver, stream_device, &scope);
  if (status == ETRT_OK) status = m->driver->event_create(&m->event);
  if (status == ETRT_OK) status = m->driver->get_device(&m->event_device);
  return etrt_device_scope_exit(&scope, status);
}

static etrt_status etrt_method_run(etrt_method *m, int async, void **event_out) {
  etrt_status status = etrt_method_check_inputs(m);
  if (status == ETRT_OK && async) status = etrt_method_check_async_outputs(m);
  if (status != ETRT_OK) return status;
  etrt_run_context context = {.driver = m->driver,
                              .stream = ETRT_STREAM_PER_THREAD,
                              .method_name = m->name,
                              .stream_device = -1};
  etrt_stream selected;
  if (etrt_stream_selected(&selected)) {
    context.stream = selected;
    context.stream_selected = 1;
  }
  /* Unknown (-1) where the query fails: the delegate reports what is wrong with the
   * stream, and the events are joined as for several streams. */
  if (async && m->driver->stream_device(context.stream, &context.stream_device) != ETRT_OK)
    context.stream_device = -1;
  if (m->pending_event != NULL) {
    /* The previous execute_async's outputs are being rewritten: wait for them. */
    ETRT_RETURN_IF_ERROR(m->driver->event_synchronize(m->pending_event));
    m->pending_event = NULL;
  }
  for (size_t c = 0; c < m->plan->chains_count && status == ETRT_OK; ++c) {
    status = etrt_method_run_chain(m, c, &context);
  }
  if (status != ETRT_OK) {
    /* Contract rule 9: nothing stays queued after an error; the drain's own failure
     * does not replace the message of the first. */
    etrt_error_context(status, "method '%s': ", m->name);
    etrt_error_keep keep = etrt_error_keep_first(status);
    (void)etrt_method_wait_in_flight(m, &context);
    etrt_error_keep_end(keep);
    return status;
  }
  if (!async) return etrt_method_finish(m, &context);
  if (context.last_completion != NULL && !context.other_streams && !context.stream_has_work) {
    /* Contract rule 7, one event per execute: everything this execute queued is on
     * one stream, before the last delegate's completion event; that event is the
     * caller's. */
    for (size_t d = 0; d < m->plan->delegates_count; ++d) m->in_flight[d] = NULL;
    m->pending_event = context.last_completion;
    *event_out = context.last_completion;
    return ETRT_OK;
  }
  /* Work on several streams (delegates on several devices) or the method's own copies
   * after the last delegate: one event for the caller that joins them. */
  status = etrt_method_join_event(m, context.stream_device);
  for (size_t d = 0; status == ETRT_OK && d < m->plan->delegates_count; ++d) {
    if (m->in_flight[d] != NULL)
      status = m->driver->stream_wait_event(context.stream, m->in_flight[d]);
  }
  if (status == ETRT_OK) status = m->driver->event_record(m->event, context.stream);
  if (status != ETRT_OK) {
    etrt_error_keep keep = etrt_error_keep_first(status);
    (void)etrt_method_wait_in_flight(m, &context);
    etrt_error_keep_end(keep);
    return status;
  }
  for (size_t d = 0; d < m->plan->delegates_count; ++d) m->in_flight[d] = NULL;
  m->pending_event = m->event;
  *event_out = m->event;
  return ETRT_OK;
}

etrt_status etrt_method_execute(etrt_method *m) {
  pthread_mutex_lock(&m->mutex);
  int limit = etrt_thread_pool_limit_set(m->program->threads);
  etrt_status status = etrt_method_run(m, 0, NULL);
  etrt_thread_pool_limit_set(limit);
  pthread_mutex_unlock(&m->mutex);
  return status;
}

etrt_status etrt_method_execute_async(etrt_method *m, void **event) {
  if (event == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "etrt_method_execute_async needs an event pointer");
  *event = NULL;
  pthread_mutex_lock(&m->mutex);
  int limit = etrt_thread_pool_limit_set(m->program->threads);
  etrt_status status = etrt_method_run(m, 1, event);
  etrt_thread_pool_limit_set(limit);
  pthread_mutex_unlock(&m->mutex);
  return status;
}
