/* etrt inspect [--json] FILE: a readable summary of a .pte program, or the JSON
 * object of src/pte/pte_json.h. The file is mapped and read in place. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "commands.h"
#include "etrt/status.h"
#include "pte/bpte.h"
#include "pte/flatbuffers_reader.h"
#include "pte/pte.h"
#include "engine/engine.h"
#include "pte/pte_json.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: etrt inspect [--json] FILE\n\n"
          "Verifies an ExecuTorch program (.pte) and prints a summary of it: header,\n"
          "segments, methods with their values, operators, instructions and delegates.\n"
          "Dynamic shapes show their upper bound. For a bundled program (.bpte) the\n"
          "summary starts with its test suites, then describes the program it holds.\n\n"
          "  --json   print one JSON object instead (fields listed in src/pte/pte_json.h)\n\n"
          "Exit status: 0 printed, 2 bad usage or a file that is not a valid program\n"
          "(nothing is printed on standard output then).\n");
}

static void print_tensor(const etrt_pte_program *prog, const etrt_pte_plan *p, int32_t index) {
  (void)prog;
  const etrt_pte_value *v = &p->values[index];
  if (v->kind != ETRT_PTE_VALUE_TENSOR) {
    printf(" %%%d %s", index, etrt_pte_value_kind_name(v->kind));
    return;
  }
  char dev[32];
  printf(" %%%d %s[", index, etrt_dtype_name(v->tensor.scalar_type));
  for (size_t i = 0; i < v->tensor.sizes.count; ++i)
    printf(i ? ",%d" : "%d", v->tensor.sizes.data[i]);
  printf("]");
  if (v->tensor.shape_dynamism == ETRT_PTE_SHAPE_DYNAMIC_BOUND) printf(" (dynamic, upper bound)");
  if (v->tensor.shape_dynamism == ETRT_PTE_SHAPE_DYNAMIC_UNBOUND) printf(" (dynamic, unbounded)");
  printf(" %s", etrt_device_format(etrt_pte_tensor_device(&v->tensor), dev, sizeof dev));
}

static void print_operator(const etrt_pte_operator *op) {
  printf("%s%s%s", op->name.data, op->overload.size ? "." : "",
         op->overload.size ? op->overload.data : "");
}

static void print_args(etrt_pte_i32s args) {
  printf("(");
  for (size_t i = 0; i < args.count; ++i) printf(i ? ", %%%d" : "%%%d", args.data[i]);
  printf(")");
}

static void print_plan(const etrt_pte_program *prog, const etrt_pte_plan *p) {
  size_t instructions = 0;
  for (size_t c = 0; c < p->chains_count; ++c) instructions += p->chains[c].instructions_count;
  printf(
      "\nmethod '%s': %zu values, %zu inputs, %zu outputs, %zu instructions, %zu operators, %zu "
      "delegates\n",
      p->name.data ? p->name.data : "", p->values_count, p->inputs.count, p->outputs.count,
      instructions, p->operators_count, p->delegates_count);
  printf("  inputs: ");
  for (size_t i = 0; i < p->inputs.count; ++i) print_tensor(prog, p, p->inputs.data[i]);
  printf("\n  outputs:");
  for (size_t i = 0; i < p->outputs.count; ++i) print_tensor(prog, p, p->outputs.data[i]);
  printf("\n  instructions:\n");
  size_t n = 0;
  for (size_t c = 0; c < p->chains_count; ++c) {
    for (size_t i = 0; i < p->chains[c].instructions_count; ++i) {
      const etrt_pte_instruction *in = &p->chains[c].instructions[i];
      printf("    %3zu %-10s ", n++, etrt_pte_instruction_kind_name(in->kind));
      switch (in->kind) {
        case ETRT_PTE_INSTR_KERNEL:
          print_operator(&p->operators[in->kernel.op_index]);
          print_args(in->kernel.args);
          break;
        case ETRT_PTE_INSTR_DELEGATE:
          printf("delegate %d '%s' ", in->delegate.delegate_index,
                 p->delegates[in->delegate.delegate_index].id.data);
          print_args(in->delegate.args);
          break;
        case ETRT_PTE_INSTR_MOVE:
          printf("%%%d -> %%%d", in->move.move_from, in->move.move_to);
          break;
        case ETRT_PTE_INSTR_JUMP_FALSE:
          printf("if not %%%d goto %d", in->jump_false.cond_value_index,
                 in->jump_false.destination_instruction);
          break;
        case ETRT_PTE_INSTR_FREE:
          printf("%%%d", in->free_call.value_index);
          break;
      }
      printf("\n");
    }
  }
  for (size_t i = 0; i < p->delegates_count; ++i) {
    const etrt_pte_delegate *d = &p->delegates[i];
    etrt_pte_bytes payload = {NULL, 0};
    if (etrt_pte_program_delegate_data(prog, d, &payload) != ETRT_OK) etrt_clear_error();
    printf("  delegate %zu '%s': %zu bytes %s %u, %zu compile specs\n", i, d->id.data, payload.size,
           d->location == ETRT_PTE_DATA_SEGMENT ? "in segment" : "inline", d->index,
           d->compile_specs_count);
    etrt_engine_memory m;
    if (payload.size > 0 && etrt_engine_plan_memory(payload.data, payload.size, &m)) {
      printf("    peak device memory: %" PRIu64 " bytes (weights %" PRIu64
             ", intermediates %" PRIu64,
             m.total, m.weights, m.intermediates);
      if (m.workspace_known)
        printf(", workspace %" PRIu64 ")\n", m.workspace);
      else
        printf(", workspace unknown: built without CUDA)\n");
    } else {
      etrt_clear_error();
    }
    etrt_engine_types types;
    static char names[4096];
    if (payload.size > 0 && etrt_engine_plan_types(payload.data, payload.size, &types) &&
        etrt_engine_plan_channels_last(payload.data, payload.size, names, sizeof names)) {
      printf("    layouts: %" PRIu32 " nodes channels-last (NHWC), %" PRIu32
             " layout conversions%s%s\n",
             types.channels_last_nodes, types.layout_conversions,
             types.channels_last_nodes ? "; channels-last: " : "", names);
      /* cuDNN 9 numbers versions major*10000 + minor*100 + patch, cuDNN 8 major*1000 + ... */
      unsigned v = types.tuned_cudnn, scale = v >= 10000 ? 10000u : 1000u;
      if (types.tuned)
        printf("    tuned for %s (sm_%d%d, cuDNN %u.%u.%u): %" PRIu32 " convolutions\n",
               types.tuned_gpu, types.tuned_major, types.tuned_minor, v / scale, (v % scale) / 100,
               v % 100, types.tuned_convolutions);
    } else {
      etrt_clear_error();
    }
  }
  printf("  planned buffers:");
  for (size_t i = 0; i < p->non_const_buffer_sizes.count; ++i) {
    printf(" [%zu] %" PRId64 " bytes", i, p->non_const_buffer_sizes.data[i]);
  }
  for (size_t i = 0; i < p->non_const_buffer_device_count; ++i) {
    const etrt_pte_buffer_device *d = &p->non_const_buffer_device[i];
    char dev[32];
    printf("%s buffer %d on %s", i ? "," : ";", d->buffer_idx,
           etrt_device_format((etrt_device){(etrt_device_type)d->device_type, d->device_index}, dev,
                              sizeof dev));
  }
  printf("\n");
}

static void print_summary(const char *path, size_t size, const etrt_pte_program *prog) {
  printf("%s: ExecuTorch program, %zu bytes, identifier %s, schema version %" PRIu32 "\n", path,
         size, prog->file_identifier, prog->version);
  if (prog->has_extended_header) {
    const etrt_pte_extended_header *h = &prog->extended_header;
    printf("extended header (%" PRIu32 " bytes): program_size %" PRIu64
           ", segment_base_offset %" PRIu64 ", segment_data_size %" PRIu64 "\n",
           h->header_length, h->program_size, h->segment_base_offset, h->segment_data_size);
  } else {
    printf("extended header: none\n");
  }
  printf("segments: %zu", prog->segments_count);
  for (size_t i = 0; i < prog->segments_count; ++i) {
    printf("%s [%zu] %" PRIu64 " bytes at +%" PRIu64, i ? "," : ":", i, prog->segments[i].size,
           prog->segments[i].offset);
  }
  printf(
      "\nconstants: %zu inline, %zu in the constant segment; %zu inline delegate payloads; %zu "
      "named data\n",
      prog->constant_buffer_count ? prog->constant_buffer_count - 1 : 0,
      prog->constant_segment.offsets.count ? prog->constant_segment.offsets.count - 1 : 0,
      prog->backend_delegate_data_count, prog->named_data_count);
  for (size_t i = 0; i < prog->named_data_count; ++i) {
    printf("  named data '%s' -> segment %" PRIu32 "\n", prog->named_data[i].key.data,
           prog->named_data[i].segment_index);
  }
  printf("methods: %zu", prog->plans_count);
  for (size_t i = 0; i < prog->plans_count; ++i)
    printf("%s '%s'", i ? "," : "", prog->plans[i].name.data ? prog->plans[i].name.data : "");
  printf("\n");
  for (size_t i = 0; i < prog->plans_count; ++i) print_plan(prog, &prog->plans[i]);
}

static void print_bundle(const char *path, size_t size, const etrt_bpte_file *bundle) {
  printf("%s: ExecuTorch bundled program, %zu bytes, identifier %s, version %" PRIu32
         ", %zu test suites\n",
         path, size, BPTE_FILE_IDENTIFIER, bundle->version, bundle->suites_count);
  for (size_t i = 0; i < bundle->suites_count; ++i) {
    printf("  method '%s': %zu test cases\n", bundle->suites[i].method_name.data,
           bundle->suites[i].cases_count);
  }
}

int etrt_cmd_inspect(int argc, char **argv) {
  int json = 0;
  const char *path = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (argv[i][0] == '-' && argv[i][1] != 0) {
      fprintf(stderr, "etrt inspect: unknown option '%s'\n\n", argv[i]);
      usage(stderr);
      return 2;
    } else if (path == NULL) {
      path = argv[i];
    } else {
      fprintf(stderr, "etrt inspect: one FILE only ('%s' and '%s')\n\n", path, argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (path == NULL) {
    usage(stderr);
    return 2;
  }

  etrt_file_map map;
  if (etrt_file_map_open(path, &map) != ETRT_OK) {
    fprintf(stderr, "etrt inspect: %s\n", etrt_last_error());
    return 2;
  }
  etrt_bpte_file *bundle = NULL;
  const uint8_t *data = map.data;
  size_t size = map.size;
  if (!json && etrt_fb_has_identifier(map.data, map.size, BPTE_FILE_IDENTIFIER)) {
    if (etrt_bpte_parse(map.data, map.size, &bundle) != ETRT_OK) {
      fprintf(stderr, "etrt inspect: %s: %s\n", path, etrt_last_error());
      etrt_file_map_close(&map);
      return 2;
    }
    data = bundle->program.data;
    size = bundle->program.size;
  }
  etrt_pte_program *prog = NULL;
  if (etrt_pte_parse(data, size, &prog) != ETRT_OK) {
    etrt_bpte_file_free(bundle);
    fprintf(stderr, "etrt inspect: %s: %s\n", path, etrt_last_error());
    etrt_file_map_close(&map);
    return 2;
  }
  int rc = 0;
  if (json) {
    char *text = NULL;
    size_t len = 0;
    if (etrt_pte_json(prog, &text, &len) != ETRT_OK) {
      fprintf(stderr, "etrt inspect: %s\n", etrt_last_error());
      rc = 1;
    } else {
      fwrite(text, 1, len, stdout);
      fputc('\n', stdout);
      free(text);
    }
  } else {
    if (bundle != NULL) print_bundle(path, map.size, bundle);
    print_summary(bundle != NULL ? "program" : path, size, prog);
  }
  etrt_pte_program_free(prog);
  etrt_bpte_file_free(bundle);
  etrt_file_map_close(&map);
  if (fflush(stdout) != 0) rc = 1;
  return rc;
}
