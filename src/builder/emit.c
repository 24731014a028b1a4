#include "builder/emit.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/memplan.h"
#include "delegate/etrt_backend.h"
#include "engine/engine.h"
#include "pte/pte.h"

/* A location: the host, or the CUDA device of that index. */
#define ETRT_EMIT_HOST (-1)
#define ETRT_EMIT_FOREVER INT32_MAX
/* Every planned tensor of the program starts 64-byte aligned in its buffer. */
#define ETRT_EMIT_ALIGNMENT 64

/* One tensor of the program: an IR value in one location. Its EValue index is its
 * index among the instances. */
typedef struct etrt_emit_instance {
  int32_t value;
  int32_t loc;
  int32_t next; /* the next instance of the same value, or -1 */
  bool planned;
  int32_t first, last; /* instruction indices: the write, the last read */
} etrt_emit_instance;

typedef struct etrt_emit_instruction {
  etrt_pte_instruction_kind kind;
  int32_t index; /* operator or delegate index */
  int32_t *args;
  uint32_t num_args;
} etrt_emit_instruction;

enum { ETRT_EMIT_OP_H2D = 0, ETRT_EMIT_OP_D2H = 1 };

typedef struct etrt_emit {
  const etrt_ir_graph *graph;
  bool io_on_device;
  int32_t io_loc;
  etrt_emit_instance *inst;
  uint32_t num_inst, cap_inst;
  int32_t *head; /* per IR value: its first (home) instance, or -1 */
  bool *is_method_output;
  etrt_emit_instruction *instr;
  uint32_t num_instr, cap_instr;
  int32_t op_index[2]; /* ETRT_EMIT_OP_*: index in the operator table, or -1 */
  uint32_t num_ops;
  int32_t op_order[2];
  etrt_emit_stats *stats;
} etrt_emit;

static etrt_status etrt_emit_oom(void) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "program: out of memory");
}

static int32_t etrt_emit_find(const etrt_emit *e, int32_t value, int32_t loc) {
  for (int32_t i = e->head[value]; i >= 0; i = e->inst[i].next)
    if (e->inst[i].loc == loc) return i;
  return -1;
}

/* A value whose dims are known only at execute with no bound on an axis: the engine that
 * computes it holds its memory (etrt_engine_io.engine_memory), so no buffer plans it. */
static bool etrt_emit_unbounded(const etrt_ir_value *v) {
  for (int32_t a = 0; a < v->rank; ++a)
    if (v->max[a] >= ETRT_ENGINE_DIM_UNBOUNDED) return true;
  return false;
}

/* A new tensor for `value` in `loc`, written by the instruction about to be added. */
static etrt_status etrt_emit_instance_new(etrt_emit *e, int32_t value, int32_t loc, bool planned,
                                          int32_t *out) {
  if (e->num_inst == e->cap_inst) {
    uint32_t fresh = e->cap_inst ? e->cap_inst * 2 : 64;
    etrt_emit_instance *grown = realloc(e->inst, fresh * sizeof *grown);
    if (grown == NULL) return etrt_emit_oom();
    e->inst = grown;
    e->cap_inst = fresh;
  }
  int32_t id = (int32_t)e->num_inst++;
  e->inst[id] =
      (etrt_emit_instance){value, loc, -1, planned, (int32_t)e->num_instr, (int32_t)e->num_instr};
  if (e->head[value] < 0) {
    e->head[value] = id;
  } else {
    int32_t tail = e->head[value];
    while (e->inst[tail].next >= 0) tail = e->inst[tail].next;
    e->inst[tail].next = id;
  }
  *out = id;
  return ETRT_OK;
}

static void etrt_emit_read(etrt_emit *e, int32_t instance) {
  if (e->inst[instance].last < (int32_t)e->num_instr)
    e->inst[instance].last = (int32_t)e->num_instr;
}

static etrt_status etrt_emit_instruction_add(etrt_emit *e, etrt_pte_instruction_kind kind,
                                             int32_t index, const int32_t *args,
                                             uint32_t num_args) {
  if (e->num_instr == e->cap_instr) {
    uint32_t fresh = e->cap_instr ? e->cap_instr * 2 : 32;
    etrt_emit_instruction *grown = realloc(e->instr, fresh * sizeof *grown);
    if (grown == NULL) return etrt_emit_oom();
    e->instr = grown;
    e->cap_instr = fresh;
  }
  int32_t *copy = malloc(((size_t)num_args + 1) * sizeof *copy);
  if (copy == NULL) return etrt_emit_oom();
  if (num_args) memcpy(copy, args, num_args * sizeof *copy);
  e->instr[e->num_instr++] = (etrt_emit_instruction){kind, index, copy, num_args};
  return ETRT_OK;
}

/* Method inputs and outputs the caller binds itself (device I/O) are not planned. */
static bool etrt_emit_planned(const etrt_emit *e, int32_t value, int32_t loc) {
  if (etrt_emit_unbounded(&e->graph->values[value])) return false;
  return !(e->io_on_device && e->is_method_output[value] && loc == e->io_loc);
}

/* The tensor of `value` in `loc`, adding the copies that bring it there: host to
 * device, device to host, and between two devices through the host. */
static etrt_status etrt_emit_get(etrt_emit *e, int32_t value, int32_t loc, int32_t *out) {
  /* Inputs passed by value are engine shape inputs: every delegate, GPU ones
   * included, reads them on the host. */
  if (e->graph->values[value].value_min != NULL) loc = ETRT_EMIT_HOST;
  int32_t found = etrt_emit_find(e, value, loc);
  if (found >= 0) {
    *out = found;
    return ETRT_OK;
  }
  int32_t src = e->head[value];
  if (src < 0)
    return etrt_error(ETRT_ERROR_INTERNAL, "program: value '%s' is read before it is computed",
                      e->graph->values[value].name);
  if (e->inst[src].loc != ETRT_EMIT_HOST && loc != ETRT_EMIT_HOST)
    ETRT_RETURN_IF_ERROR(etrt_emit_get(e, value, ETRT_EMIT_HOST, &src));
  int which = loc == ETRT_EMIT_HOST ? ETRT_EMIT_OP_D2H : ETRT_EMIT_OP_H2D;
  if (e->op_index[which] < 0) {
    e->op_index[which] = (int32_t)e->num_ops;
    e->op_order[e->num_ops++] = which;
  }
  int32_t dst;
  ETRT_RETURN_IF_ERROR(
      etrt_emit_instance_new(e, value, loc, etrt_emit_planned(e, value, loc), &dst));
  etrt_emit_read(e, src);
  /* ExecuTorch's out-variant convention: the inputs, the out tensor, then the
   * returned value (the out tensor again). */
  int32_t args[3] = {src, dst, dst};
  ETRT_RETURN_IF_ERROR(
      etrt_emit_instruction_add(e, ETRT_PTE_INSTR_KERNEL, e->op_index[which], args, 3));
  if (which == ETRT_EMIT_OP_H2D)
    e->stats->h2d_copies++;
  else
    e->stats->d2h_copies++;
  *out = dst;
  return ETRT_OK;
}

static etrt_status etrt_emit_location(const char *label, int32_t *loc) {
  etrt_device device;
  if (label == NULL || etrt_device_parse(label, &device) != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "target_device '%s' is not 'cpu' or 'cuda:N': cannot place its tensors",
                      label ? label : "(null)");
  if (device.type == ETRT_DEVICE_CUDA && device.index > 127)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "target_device '%s': device index above 127", label);
  *loc = device.type == ETRT_DEVICE_CPU ? ETRT_EMIT_HOST : device.index;
  return ETRT_OK;
}

/* Whether partition k's output `value` (in `loc`) is read somewhere other than loc. */
static bool etrt_emit_needed_elsewhere(const etrt_emit *e, const etrt_partitioning *parts,
                                       const int32_t *locs, uint32_t k, int32_t value) {
  for (uint32_t j = k + 1; j < parts->count; ++j) {
    if (locs[j] == locs[k]) continue;
    for (uint32_t i = 0; i < parts->parts[j].num_inputs; ++i)
      if (parts->parts[j].inputs[i] == value) return true;
  }
  int32_t required = e->io_on_device ? e->io_loc : ETRT_EMIT_HOST;
  return e->is_method_output[value] && required != locs[k];
}

/* A host-to-device copy is queued on the stream and may read its host source only
 * when the stream runs, while host code after it (a CPU partition) runs at once: the
 * source's memory must not be reused before the stream is known to have run it,
 * which is the next device-to-host copy from that device (it waits for the stream
 * before the host reads the result) or the end of the method. */
static void etrt_emit_hold_copy_sources(etrt_emit *e) {
  if (e->op_index[ETRT_EMIT_OP_H2D] < 0 || e->num_instr == 0) return;
  int32_t drained[128]; /* per device: the next instruction that waits for its stream */
  for (int32_t d = 0; d < 128; ++d) drained[d] = (int32_t)e->num_instr - 1;
  for (uint32_t i = e->num_instr; i-- > 0;) {
    const etrt_emit_instruction *in = &e->instr[i];
    if (in->kind != ETRT_PTE_INSTR_KERNEL || in->num_args < 2) continue;
    etrt_emit_instance *src = &e->inst[in->args[0]];
    const etrt_emit_instance *dst = &e->inst[in->args[1]];
    if (in->index == e->op_index[ETRT_EMIT_OP_D2H] && src->loc >= 0 && src->loc < 128)
      drained[src->loc] = (int32_t)i;
    if (in->index == e->op_index[ETRT_EMIT_OP_H2D] && dst->loc >= 0 && dst->loc < 128 &&
        src->last < drained[dst->loc])
      src->last = drained[dst->loc];
  }
}

/* The instructions and tensors, before they become a .pte model. */
static etrt_status etrt_emit_schedule(etrt_emit *e, const etrt_partitioning *parts,
                                      const int32_t *locs) {
  const etrt_ir_graph *g = e->graph;
  for (uint32_t i = 0; i < g->num_inputs; ++i) {
    int32_t id;
    bool on_device = e->io_on_device && g->values[g->inputs[i]].value_min == NULL;
    ETRT_RETURN_IF_ERROR(etrt_emit_instance_new(
        e, g->inputs[i], on_device ? e->io_loc : ETRT_EMIT_HOST, !on_device, &id));
    e->inst[id].first = -1;
  }
  int32_t *args = NULL;
  etrt_status status = ETRT_OK;
  for (uint32_t k = 0; k < parts->count && status == ETRT_OK; ++k) {
    const etrt_partition *part = &parts->parts[k];
    uint32_t n = part->num_inputs + part->num_outputs;
    int32_t *grown = realloc(args, ((size_t)n + 1) * sizeof *grown);
    if (grown == NULL) {
      status = etrt_emit_oom();
      break;
    }
    args = grown;
    for (uint32_t i = 0; i < part->num_inputs && status == ETRT_OK; ++i)
      status = etrt_emit_get(e, part->inputs[i], locs[k], &args[i]);
    if (status != ETRT_OK) break;
    for (uint32_t i = 0; i < part->num_inputs; ++i) etrt_emit_read(e, args[i]);
    for (uint32_t o = 0; o < part->num_outputs && status == ETRT_OK; ++o) {
      int32_t v = part->outputs[o];
      status = etrt_emit_instance_new(e, v, locs[k], etrt_emit_planned(e, v, locs[k]),
                                      &args[part->num_inputs + o]);
    }
    if (status == ETRT_OK)
      status = etrt_emit_instruction_add(e, ETRT_PTE_INSTR_DELEGATE, (int32_t)k, args, n);
    /* A GPU result the host needs goes back right after the call that made it. */
    for (uint32_t o = 0; o < part->num_outputs && status == ETRT_OK && locs[k] != ETRT_EMIT_HOST;
         ++o) {
      int32_t v = part->outputs[o], ignored;
      if (etrt_emit_needed_elsewhere(e, parts, locs, k, v))
        status = etrt_emit_get(e, v, ETRT_EMIT_HOST, &ignored);
    }
  }
  free(args);
  for (uint32_t i = 0; i < g->num_outputs && status == ETRT_OK; ++i) {
    int32_t id;
    status = etrt_emit_get(e, g->outputs[i], e->io_on_device ? e->io_loc : ETRT_EMIT_HOST, &id);
    if (status == ETRT_OK) e->inst[id].last = ETRT_EMIT_FOREVER;
  }
  if (status == ETRT_OK) etrt_emit_hold_copy_sources(e);
  return status;
}

/* Bytes of an instance's tensor at its largest shape. */
static etrt_status etrt_emit_nbytes(const etrt_ir_value *v, uint64_t *out) {
  size_t bytes = etrt_dtype_size(v->dtype);
  if (bytes == 0 || v->rank < 0)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "program: value '%s' has no known type or shape",
                      v->name);
  for (int32_t a = 0; a < v->rank; ++a)
    if (v->max[a] < 0 || v->max[a] > INT32_MAX ||
        etrt_mul_overflow_size(bytes, (size_t)v->max[a], &bytes))
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "program: value '%s' axis %d: size %lld does not fit a .pte tensor",
                        v->name, (int)a, (long long)v->max[a]);
  *out = bytes;
  return ETRT_OK;
}

static const char *const etrt_emit_op_names[2] = {"et_copy::_h2d_copy", "et_copy::_d2h_copy"};

static etrt_status etrt_emit_model(etrt_emit *e, const etrt_partitioning *parts,
                                   const etrt_emit_partition *plans, etrt_pte_builder *b) {
  const etrt_ir_graph *g = e->graph;
  etrt_pte_program *program = etrt_pte_builder_program(b);
  etrt_pte_plan *plan = ETRT_PTE_NEW(b, etrt_pte_plan, 1);
  if (plan == NULL) return etrt_emit_oom();
  program->version = 0;
  program->plans = plan;
  program->plans_count = 1;
  plan->name = etrt_pte_builder_str(b, "forward");

  /* Buffers: 0 unused, 1 the host arena, then one per GPU holding planned tensors. */
  int32_t gpu_of_buffer[130];
  uint32_t num_buffers = 2;
  for (int32_t loc = 0; loc < 128; ++loc) {
    bool used = false;
    for (uint32_t i = 0; i < e->num_inst && !used; ++i)
      used = e->inst[i].planned && e->inst[i].loc == loc;
    if (used) gpu_of_buffer[num_buffers++] = loc;
  }
  etrt_memplan_interval *tensors = calloc((size_t)e->num_inst + 1, sizeof *tensors);
  uint64_t buffer_sizes[130];
  if (tensors == NULL) return etrt_emit_oom();
  etrt_status status = ETRT_OK;
  for (uint32_t i = 0; i < e->num_inst && status == ETRT_OK; ++i) {
    const etrt_emit_instance *in = &e->inst[i];
    tensors[i].buffer = 1;
    for (uint32_t k = 2; k < num_buffers; ++k)
      if (gpu_of_buffer[k] == in->loc) tensors[i].buffer = k;
    tensors[i].first = in->first;
    tensors[i].last = in->last;
    if (!etrt_emit_unbounded(&g->values[in->value]))
      status = etrt_emit_nbytes(&g->values[in->value], &tensors[i].size);
    if (!in->planned) tensors[i].size = 0, tensors[i].buffer = 0;
  }
  if (status == ETRT_OK)
    status =
        etrt_memplan_place(tensors, e->num_inst, ETRT_EMIT_ALIGNMENT, buffer_sizes, num_buffers);
  if (status != ETRT_OK) {
    free(tensors);
    return status;
  }
  e->stats->host_arena_bytes = buffer_sizes[1];
  for (uint32_t k = 2; k < num_buffers; ++k) e->stats->device_arena_bytes += buffer_sizes[k];
  buffer_sizes[0] = 0;
  plan->non_const_buffer_sizes =
      etrt_pte_builder_i64s(b, (const int64_t *)buffer_sizes, num_buffers);
  etrt_pte_buffer_device *devices = ETRT_PTE_NEW(b, etrt_pte_buffer_device, num_buffers);
  etrt_pte_value *values = ETRT_PTE_NEW(b, etrt_pte_value, e->num_inst + 1);
  if (devices == NULL || values == NULL) {
    free(tensors);
    return etrt_emit_oom();
  }
  for (uint32_t k = 2; k < num_buffers; ++k)
    devices[k - 2] = (etrt_pte_buffer_device){(int32_t)k, ETRT_DEVICE_CUDA, gpu_of_buffer[k]};
  plan->non_const_buffer_device = devices;
  plan->non_const_buffer_device_count = num_buffers - 2;

  for (uint32_t i = 0; i < e->num_inst; ++i) {
    const etrt_emit_instance *in = &e->inst[i];
    const etrt_ir_value *v = &g->values[in->value];
    etrt_pte_value *out = &values[i];
    out->kind = ETRT_PTE_VALUE_TENSOR;
    etrt_pte_tensor *t = &out->tensor;
    t->scalar_type = v->dtype;
    int32_t sizes[ETRT_MAX_RANK];
    uint8_t order[ETRT_MAX_RANK];
    bool dynamic = false, unbounded = etrt_emit_unbounded(v);
    for (int32_t a = 0; a < v->rank; ++a) {
      /* No bound: the sizes say only the smallest; the run sets them. */
      int64_t size = unbounded ? v->min[a] : v->max[a];
      sizes[a] = (int32_t)(size < INT32_MAX ? size : INT32_MAX);
      order[a] = (uint8_t)a;
      dynamic |= v->min[a] != v->max[a];
    }
    t->sizes = etrt_pte_builder_i32s(b, sizes, (size_t)v->rank);
    t->dim_order = etrt_pte_builder_u8s(b, order, (size_t)v->rank);
    t->shape_dynamism = unbounded ? ETRT_PTE_SHAPE_DYNAMIC_UNBOUND
                        : dynamic ? ETRT_PTE_SHAPE_DYNAMIC_BOUND
                                  : ETRT_PTE_SHAPE_STATIC;
    if (in->planned) {
      t->has_allocation_info = true;
      t->allocation_info.memory_id = tensors[i].buffer;
      t->allocation_info.memory_offset_low = (uint32_t)tensors[i].offset;
      t->allocation_info.memory_offset_high = (uint32_t)(tensors[i].offset >> 32);
    }
    if (in->loc != ETRT_EMIT_HOST) {
      t->has_extra_tensor_info = true;
      t->extra_tensor_info.location = ETRT_PTE_TENSOR_IN_SEGMENT;
      t->extra_tensor_info.device_type = ETRT_DEVICE_CUDA;
      t->extra_tensor_info.device_index = in->loc;
    }
  }
  free(tensors);
  plan->values = values;
  plan->values_count = e->num_inst;

  int32_t *inputs = calloc((size_t)g->num_inputs + 1, sizeof *inputs);
  int32_t *outputs = calloc((size_t)g->num_outputs + 1, sizeof *outputs);
  if (inputs == NULL || outputs == NULL) {
    free(inputs);
    free(outputs);
    return etrt_emit_oom();
  }
  for (uint32_t i = 0; i < g->num_inputs; ++i) inputs[i] = e->head[g->inputs[i]];
  int32_t required = e->io_on_device ? e->io_loc : ETRT_EMIT_HOST;
  for (uint32_t i = 0; i < g->num_outputs; ++i)
    outputs[i] = etrt_emit_find(e, g->outputs[i], required);
  plan->inputs = etrt_pte_builder_i32s(b, inputs, g->num_inputs);
  plan->outputs = etrt_pte_builder_i32s(b, outputs, g->num_outputs);

  etrt_pte_chain *chain = ETRT_PTE_NEW(b, etrt_pte_chain, 1);
  etrt_pte_instruction *instructions = ETRT_PTE_NEW(b, etrt_pte_instruction, e->num_instr + 1);
  etrt_pte_operator *operators = ETRT_PTE_NEW(b, etrt_pte_operator, 3);
  etrt_pte_delegate *delegates = ETRT_PTE_NEW(b, etrt_pte_delegate, parts->count + 1);
  if (!chain || !instructions || !operators || !delegates) {
    free(inputs);
    free(outputs);
    return etrt_emit_oom();
  }
  chain->inputs = plan->inputs;
  chain->outputs = plan->outputs;
  free(inputs);
  free(outputs);
  for (uint32_t i = 0; i < e->num_instr; ++i) {
    const etrt_emit_instruction *in = &e->instr[i];
    etrt_pte_instruction *out = &instructions[i];
    out->kind = in->kind;
    if (in->kind == ETRT_PTE_INSTR_KERNEL) {
      out->kernel.op_index = in->index;
      out->kernel.args = etrt_pte_builder_i32s(b, in->args, in->num_args);
    } else {
      out->delegate.delegate_index = in->index;
      out->delegate.args = etrt_pte_builder_i32s(b, in->args, in->num_args);
    }
  }
  chain->instructions = instructions;
  chain->instructions_count = e->num_instr;
  plan->chains = chain;
  plan->chains_count = 1;
  for (uint32_t k = 0; k < e->num_ops; ++k) {
    operators[k].name = etrt_pte_builder_str(b, etrt_emit_op_names[e->op_order[k]]);
    operators[k].overload = etrt_pte_builder_str(b, "out");
  }
  plan->operators = operators;
  plan->operators_count = e->num_ops;

  for (uint32_t k = 0; k < parts->count; ++k) {
    uint32_t segment;
    ETRT_RETURN_IF_ERROR(
        etrt_pte_builder_add_segment(b, plans[k].plan, plans[k].plan_size, 0, &segment));
    etrt_pte_compile_spec *spec = ETRT_PTE_NEW(b, etrt_pte_compile_spec, 1);
    if (spec == NULL) return etrt_emit_oom();
    spec->key = etrt_pte_builder_str(b, "target_device");
    spec->value = etrt_pte_builder_bytes(b, plans[k].target_device, strlen(plans[k].target_device));
    delegates[k].id = etrt_pte_builder_str(b, ETRT_BACKEND_ID);
    delegates[k].location = ETRT_PTE_DATA_SEGMENT;
    delegates[k].index = segment;
    delegates[k].compile_specs = spec;
    delegates[k].compile_specs_count = 1;
  }
  plan->delegates = delegates;
  plan->delegates_count = parts->count;
  e->stats->values = e->num_inst;
  e->stats->instructions = e->num_instr;
  return ETRT_OK;
}

etrt_status etrt_emit_program(const etrt_ir_graph *graph, const etrt_partitioning *partitioning,
                              const etrt_emit_partition *plans, const etrt_emit_options *options,
                              uint8_t **pte, size_t *pte_size, etrt_emit_stats *stats) {
  *pte = NULL;
  *pte_size = 0;
  etrt_emit_stats ignored;
  if (stats == NULL) stats = &ignored;
  memset(stats, 0, sizeof *stats);
  etrt_emit e;
  memset(&e, 0, sizeof e);
  e.graph = graph;
  e.stats = stats;
  e.op_index[0] = e.op_index[1] = -1;
  e.io_loc = ETRT_EMIT_HOST;
  etrt_status status = ETRT_OK;
  etrt_pte_builder *builder = NULL;
  int32_t *locs = calloc((size_t)partitioning->count + 1, sizeof *locs);
  e.head = malloc(((size_t)graph->num_values + 1) * sizeof *e.head);
  e.is_method_output = calloc((size_t)graph->num_values + 1, sizeof *e.is_method_output);
  if (locs == NULL || e.head == NULL || e.is_method_output == NULL) {
    status = etrt_emit_oom();
    goto done;
  }
  for (uint32_t v = 0; v < graph->num_values; ++v) e.head[v] = -1;
  for (uint32_t i = 0; i < graph->num_outputs; ++i) e.is_method_output[graph->outputs[i]] = true;
  for (uint32_t k = 0; k < partitioning->count && status == ETRT_OK; ++k)
    status = etrt_emit_location(plans[k].target_device, &locs[k]);
  if (status != ETRT_OK) goto done;
  if (options->io_on_device) {
    for (uint32_t k = 0; k < partitioning->count && e.io_loc == ETRT_EMIT_HOST; ++k)
      e.io_loc = locs[k];
    e.io_on_device = e.io_loc != ETRT_EMIT_HOST;
  }
  status = etrt_emit_schedule(&e, partitioning, locs);
  if (status == ETRT_OK) status = etrt_pte_builder_create(&builder);
  if (status == ETRT_OK) status = etrt_emit_model(&e, partitioning, plans, builder);
  if (status == ETRT_OK) status = etrt_pte_builder_write(builder, pte, pte_size);
done:
  etrt_pte_builder_destroy(builder);
  for (uint32_t i = 0; i < e.num_instr; ++i) free(e.instr[i].args);
  free(e.instr);
  free(e.inst);
  free(e.head);
  free(e.is_method_output);
  free(locs);
  return status;
}
