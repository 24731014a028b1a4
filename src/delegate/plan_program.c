/* A fully delegated program from one plan: the shortest path from the network API
 * to something `etrt run` and the runtime accept. */
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "delegate/etrt_backend.h"
#include "engine/engine.h"
#include "etrt/network.h"
#include "pte/pte.h"

#define ETRT_PLAN_PROGRAM_ALIGNMENT 64

static etrt_status etrt_plan_program_fill(etrt_pte_builder *b, const etrt_engine *engine,
                                          const uint8_t *plan, size_t plan_size) {
  uint32_t count = etrt_engine_io_count(engine);
  etrt_pte_program *program = etrt_pte_builder_program(b);
  etrt_pte_plan *method = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  etrt_pte_value *values = ETRT_PTE_NEW(b, etrt_pte_value, count ? count : 1);
  int32_t *inputs = ETRT_PTE_NEW(b, int32_t, count ? count : 1);
  int32_t *outputs = ETRT_PTE_NEW(b, int32_t, count ? count : 1);
  int32_t *args = ETRT_PTE_NEW(b, int32_t, count ? count : 1);
  etrt_pte_instruction *instruction = ETRT_PTE_NEW(b, etrt_pte_instruction, 1);
  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  etrt_pte_delegate *delegate = ETRT_PTE_NEW(b, etrt_pte_delegate, 1);
  etrt_pte_compile_spec *spec = ETRT_PTE_NEW(b, etrt_pte_compile_spec, 1);
  if (!method || !values || !inputs || !outputs || !args || !instruction || !chain || !delegate ||
      !spec)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory writing a program");
  size_t num_inputs = 0, num_outputs = 0, offset = 0;
  /* Values in argument order: the engine's inputs, then its outputs. */
  for (int pass = 1; pass >= 0; --pass) {
    for (uint32_t i = 0; i < count; ++i) {
      const etrt_engine_io *io = etrt_engine_io_at(engine, i);
      if (io->is_input != pass) continue;
      size_t v = num_inputs + num_outputs;
      etrt_pte_tensor *t = &values[v].tensor;
      values[v].kind = ETRT_PTE_VALUE_TENSOR;
      t->scalar_type = io->dtype;
      int32_t sizes[ETRT_MAX_RANK];
      uint8_t order[ETRT_MAX_RANK];
      size_t nbytes = etrt_dtype_size(io->dtype);
      int dynamic = 0;
      for (int32_t a = 0; a < io->rank; ++a) {
        sizes[a] = (int32_t)io->max_sizes[a];
        order[a] = (uint8_t)a;
        nbytes *= (size_t)io->max_sizes[a];
        dynamic |= io->min_sizes[a] != io->max_sizes[a];
      }
      t->sizes = etrt_pte_builder_i32s(b, sizes, (size_t)io->rank);
      t->dim_order = etrt_pte_builder_u8s(b, order, (size_t)io->rank);
      t->shape_dynamism = dynamic ? ETRT_PTE_SHAPE_DYNAMIC_BOUND : ETRT_PTE_SHAPE_STATIC;
      t->has_allocation_info = 1;
      t->allocation_info.memory_id = 1;
      t->allocation_info.memory_offset_low = (uint32_t)offset;
      t->allocation_info.memory_offset_high = (uint32_t)((uint64_t)offset >> 32);
      offset += (nbytes + ETRT_PLAN_PROGRAM_ALIGNMENT - 1) / ETRT_PLAN_PROGRAM_ALIGNMENT *
                ETRT_PLAN_PROGRAM_ALIGNMENT;
      args[v] = (int32_t)v;
      if (pass) {
        inputs[num_inputs++] = (int32_t)v;
      } else {
        outputs[num_outputs++] = (int32_t)v;
      }
    }
  }
  int64_t buffer_sizes[2] = {0, (int64_t)offset};
  uint32_t segment;
  ETRT_RETURN_IF_ERROR(
      etrt_pte_builder_add_segment(b, plan, plan_size, ETRT_PLAN_PROGRAM_ALIGNMENT, &segment));
  char device[16];
  etrt_device_format(etrt_engine_device(engine), device, sizeof device);
  spec->key = etrt_pte_builder_str(b, "target_device");
  spec->value = etrt_pte_builder_bytes(b, device, strlen(device));
  delegate->id = etrt_pte_builder_str(b, ETRT_BACKEND_ID);
  delegate->location = ETRT_PTE_DATA_SEGMENT;
  delegate->index = segment;
  delegate->compile_specs = spec;
  delegate->compile_specs_count = 1;
  instruction->kind = ETRT_PTE_INSTR_DELEGATE;
  instruction->delegate.delegate_index = 0;
  instruction->delegate.args = etrt_pte_builder_i32s(b, args, num_inputs + num_outputs);
  chain->inputs = etrt_pte_builder_i32s(b, inputs, num_inputs);
  chain->outputs = etrt_pte_builder_i32s(b, outputs, num_outputs);
  chain->instructions = instruction;
  chain->instructions_count = 1;
  method->name = etrt_pte_builder_str(b, "forward");
  method->values = values;
  method->values_count = num_inputs + num_outputs;
  method->inputs = chain->inputs;
  method->outputs = chain->outputs;
  method->chains = chain;
  method->chains_count = 1;
  method->delegates = delegate;
  method->delegates_count = 1;
  method->non_const_buffer_sizes = etrt_pte_builder_i64s(b, buffer_sizes, 2);
  program->plans = method;
  program->plans_count = 1;
  return ETRT_OK;
}

etrt_status etrt_plan_to_program(const uint8_t *plan, size_t plan_size, uint8_t **pte,
                                 size_t *pte_size) {
  *pte = NULL;
  *pte_size = 0;
  etrt_engine *engine;
  ETRT_RETURN_IF_ERROR(etrt_engine_deserialize(plan, plan_size, &engine));
  etrt_pte_builder *b;
  etrt_status status = etrt_pte_builder_create(&b);
  if (status == ETRT_OK) {
    status = etrt_plan_program_fill(b, engine, plan, plan_size);
    if (status == ETRT_OK) status = etrt_pte_builder_write(b, pte, pte_size);
    etrt_pte_builder_destroy(b);
  }
  etrt_engine_destroy(engine);
  return status;
}
