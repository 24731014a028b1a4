#include "runtime/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "base/thread_pool.h"
#include "runtime/backend.h"
#include "runtime/kernels.h"

const etrt_pte_plan *etrt_program_plan(const etrt_program *program, const char *name) {
  const etrt_pte_plan *plan = etrt_pte_program_find_plan(program->pte, name);
  if (plan != NULL) return plan;
  char names[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < program->pte->plans_count && used < sizeof names - 1; ++i) {
    int n = snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "",
                     program->pte->plans[i].name.data);
    if (n < 0) break;
    used += (size_t)n;
  }
  etrt_error(ETRT_ERROR_NOT_FOUND, "the program has no method '%s' (it has %s)", name,
             used ? names : "none");
  return NULL;
}

/* Everything a method instance would refuse that load can already see: operators
 * the runtime lacks, delegates no backend is registered for, element types etrt does
 * not know. */
static etrt_status etrt_program_verify_plan(const etrt_program *program,
                                            const etrt_pte_plan *plan) {
  const char *method = plan->name.data;
  for (size_t i = 0; i < plan->operators_count; ++i) {
    const etrt_pte_operator *op = &plan->operators[i];
    if (etrt_kernel_find(op->name.data, op->name.size, op->overload.data, op->overload.size) ==
        NULL) {
      /* The first instruction that calls it, numbered across the chains. */
      long first = -1, index = 0;
      for (size_t c = 0; c < plan->chains_count && first < 0; ++c)
        for (size_t k = 0; k < plan->chains[c].instructions_count; ++k, ++index) {
          const etrt_pte_instruction *in = &plan->chains[c].instructions[k];
          if (in->kind == ETRT_PTE_INSTR_KERNEL && in->kernel.op_index == (int64_t)i) {
            first = index;
            break;
          }
        }
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "method '%s': instruction %ld: operator %.*s%s%.*s is not available in "
                        "etrt",
                        method, first, (int)op->name.size, op->name.data,
                        op->overload.size ? "." : "", (int)op->overload.size,
                        op->overload.data ? op->overload.data : "");
    }
  }
  for (size_t i = 0; i < plan->delegates_count; ++i) {
    const etrt_pte_delegate *d = &plan->delegates[i];
    if (etrt_backend_find(d->id.data) == NULL) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "method '%s', delegate %zu: no backend is registered under id '%s'", method,
                        i, d->id.data);
    }
  }
  for (size_t i = 0; i < plan->values_count; ++i) {
    const etrt_pte_value *v = &plan->values[i];
    if (v->kind == ETRT_PTE_VALUE_TENSOR && etrt_dtype_size(v->tensor.scalar_type) == 0) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "method '%s', value %zu: element type %d is not supported", method, i,
                        (int)v->tensor.scalar_type);
    }
    if (v->kind == ETRT_PTE_VALUE_TENSOR && v->tensor.sizes.count > ETRT_MAX_RANK) {
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "method '%s', value %zu: rank %zu is above etrt's limit of %d", method, i,
                        v->tensor.sizes.count, ETRT_MAX_RANK);
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_program_finish_load(etrt_program *program, const uint8_t *data, size_t size,
                                            const etrt_program_options *options) {
  ETRT_RETURN_IF_ERROR(etrt_pte_parse(data, size, &program->pte));
  for (size_t i = 0; i < program->pte->plans_count; ++i) {
    ETRT_RETURN_IF_ERROR(etrt_program_verify_plan(program, &program->pte->plans[i]));
  }
  if (options != NULL) {
    program->allow_cpu_fallback = options->allow_cpu_fallback || options->force_cpu;
    program->force_cpu = options->force_cpu;
    if (options->data_path != NULL) {
      ETRT_RETURN_IF_ERROR(etrt_program_open_data(program, options->data_path));
    }
    program->threads = options->threads;
  }
  ETRT_RETURN_IF_ERROR(etrt_thread_pool_acquire(program->threads));
  program->holds_pool = 1;
  return ETRT_OK;
}

etrt_status etrt_program_load_memory(const void *data, size_t size,
                                     const etrt_program_options *options, etrt_program **out) {
  *out = NULL;
  if (data == NULL && size > 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "program bytes are NULL");
  etrt_program *program = calloc(1, sizeof *program);
  if (program == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory loading a program");
  etrt_status status = etrt_program_finish_load(program, data, size, options);
  if (status != ETRT_OK) {
    etrt_program_destroy(program);
    return status;
  }
  *out = program;
  return ETRT_OK;
}

etrt_status etrt_program_load_file(const char *path, const etrt_program_options *options,
                                   etrt_program **out) {
  *out = NULL;
  etrt_program *program = calloc(1, sizeof *program);
  if (program == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
  etrt_status status = etrt_file_map_open(path, &program->file);
  if (status == ETRT_OK)
    status = etrt_program_finish_load(program, program->file.data, program->file.size, options);
  if (status != ETRT_OK) {
    etrt_error_context(status, "%s: ", path);
    etrt_program_destroy(program);
    return status;
  }
  *out = program;
  return ETRT_OK;
}

void etrt_program_destroy(etrt_program *program) {
  if (program == NULL) return;
  if (program->holds_pool) etrt_thread_pool_release();
  etrt_program_close_data(program);
  etrt_pte_program_free(program->pte);
  etrt_file_map_close(&program->file);
  free(program);
}

uint32_t etrt_program_method_count(const etrt_program *program) {
  return (uint32_t)program->pte->plans_count;
}

const char *etrt_program_method_name(const etrt_program *program, uint32_t index) {
  return index < program->pte->plans_count ? program->pte->plans[index].name.data : NULL;
}

etrt_status etrt_program_method_io(const etrt_program *program, const char *method,
                                   uint32_t *num_inputs, uint32_t *num_outputs) {
  const etrt_pte_plan *plan = etrt_program_plan(program, method);
  if (plan == NULL) return ETRT_ERROR_NOT_FOUND;
  *num_inputs = (uint32_t)plan->inputs.count;
  *num_outputs = (uint32_t)plan->outputs.count;
  return ETRT_OK;
}

static etrt_status etrt_program_value_info(const etrt_pte_plan *plan, int32_t value_index,
                                           etrt_tensor_info *out) {
  memset(out, 0, sizeof *out);
  const etrt_pte_value *v = &plan->values[value_index];
  if (v->kind != ETRT_PTE_VALUE_TENSOR) {
    out->dtype = v->kind == ETRT_PTE_VALUE_DOUBLE ? ETRT_DTYPE_FLOAT64
                 : v->kind == ETRT_PTE_VALUE_BOOL ? ETRT_DTYPE_BOOL
                                                  : ETRT_DTYPE_INT64;
    return ETRT_OK;
  }
  out->is_tensor = 1;
  out->dtype = v->tensor.scalar_type;
  out->rank = (int32_t)v->tensor.sizes.count;
  for (int32_t i = 0; i < out->rank; ++i) out->sizes[i] = v->tensor.sizes.data[i];
  out->dynamic = v->tensor.shape_dynamism != ETRT_PTE_SHAPE_STATIC;
  out->device = etrt_pte_tensor_device(&v->tensor);
  for (int32_t i = 0; i < out->rank && i < ETRT_MAX_RANK;
       ++i) /* a permutation: checked at method creation */
    out->dim_order[i] =
        (size_t)i < v->tensor.dim_order.count && v->tensor.dim_order.data[i] < out->rank
            ? v->tensor.dim_order.data[i]
            : (uint8_t)i;
  return ETRT_OK;
}

/* Input (or output) `index` of a method. */
static etrt_status etrt_program_io_info(const etrt_program *program, const char *method,
                                        uint32_t index, bool input, etrt_tensor_info *out) {
  const etrt_pte_plan *plan = etrt_program_plan(program, method);
  if (plan == NULL) return ETRT_ERROR_NOT_FOUND;
  const etrt_pte_i32s *ids = input ? &plan->inputs : &plan->outputs;
  if (index >= ids->count)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "method '%s' has %zu %s, not %u", method,
                      ids->count, input ? "inputs" : "outputs", index + 1);
  return etrt_program_value_info(plan, ids->data[index], out);
}

etrt_status etrt_program_input_info(const etrt_program *program, const char *method, uint32_t index,
                                    etrt_tensor_info *out) {
  return etrt_program_io_info(program, method, index, true, out);
}

etrt_status etrt_program_output_info(const etrt_program *program, const char *method,
                                     uint32_t index, etrt_tensor_info *out) {
  return etrt_program_io_info(program, method, index, false, out);
}
