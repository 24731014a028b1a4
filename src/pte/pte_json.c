#include "pte/pte_json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "engine/engine.h"

typedef struct json_out {
  char *buf;
  size_t size;
  size_t capacity;
  bool failed;
} json_out;

static void put(json_out *j, const char *s, size_t n) {
  if (j->failed) return;
  if (j->size + n + 1 > j->capacity) {
    size_t cap = j->capacity ? j->capacity : 4096;
    while (cap < j->size + n + 1) {
      if (cap > SIZE_MAX / 2) {
        j->failed = true;
        return;
      }
      cap *= 2;
    }
    char *p = realloc(j->buf, cap);
    if (p == NULL) {
      j->failed = true;
      return;
    }
    j->buf = p;
    j->capacity = cap;
  }
  memcpy(j->buf + j->size, s, n);
  j->size += n;
  j->buf[j->size] = 0;
}

static void puts_(json_out *j, const char *s) { put(j, s, strlen(s)); }

static void printf_(json_out *j, const char *fmt, ...) ETRT_PRINTF(2, 3);
static void printf_(json_out *j, const char *fmt, ...) {
  char tmp[256];
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0 && (size_t)n < sizeof tmp) {
    put(j, tmp, (size_t)n);
  } else if (n > 0) {
    /* Longer than the buffer: never cut a piece of JSON short. */
    char *whole = malloc((size_t)n + 1);
    if (whole != NULL && vsnprintf(whole, (size_t)n + 1, fmt, again) == n) put(j, whole, (size_t)n);
    free(whole);
  }
  va_end(again);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_sequence(const uint8_t *s, size_t n) {
  uint8_t c = s[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, cp = c & 0x07;
  else
    return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
    return 0;
  }
  return len;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD so the output stays valid. */
static void string_n(json_out *j, const char *data, size_t size) {
  const uint8_t *s = (const uint8_t *)data;
  put(j, "\"", 1);
  size_t i = 0;
  while (i < size) {
    uint8_t c = s[i];
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      put(j, esc, 2);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      printf_(j, "\\u%04x", c);
      ++i;
    } else {
      size_t len = utf8_sequence(s + i, size - i);
      if (len == 0) {
        puts_(j, "\\ufffd");
        ++i;
      } else {
        put(j, data + i, len);
        i += len;
      }
    }
  }
  put(j, "\"", 1);
}

static void string_view(json_out *j, etrt_pte_str s) {
  string_n(j, s.data ? s.data : "", s.data ? s.size : 0);
}

static void key(json_out *j, const char *name, bool first) {
  if (!first) put(j, ",", 1);
  string_n(j, name, strlen(name));
  put(j, ":", 1);
}

static void i32_array(json_out *j, etrt_pte_i32s v) {
  put(j, "[", 1);
  for (size_t i = 0; i < v.count; ++i) printf_(j, i ? ",%" PRId32 : "%" PRId32, v.data[i]);
  put(j, "]", 1);
}

static void device(json_out *j, etrt_device d) {
  char buf[32];
  const char *text = etrt_device_format(d, buf, sizeof buf);
  string_n(j, text, strlen(text));
}

static void tensor_fields(json_out *j, const etrt_pte_tensor *t) {
  key(j, "dtype", true);
  string_n(j, etrt_dtype_name(t->scalar_type), strlen(etrt_dtype_name(t->scalar_type)));
  key(j, "sizes", false);
  i32_array(j, t->sizes);
  key(j, "device", false);
  device(j, etrt_pte_tensor_device(t));
  if (t->shape_dynamism != ETRT_PTE_SHAPE_STATIC) {
    key(j, "dynamic", false);
    puts_(j, t->shape_dynamism == ETRT_PTE_SHAPE_DYNAMIC_BOUND ? "\"bound\"" : "\"unbound\"");
  }
}

static void io_tensors(json_out *j, const etrt_pte_plan *p, etrt_pte_i32s indices) {
  put(j, "[", 1);
  for (size_t i = 0; i < indices.count; ++i) {
    if (i) put(j, ",", 1);
    int32_t v = indices.data[i];
    if (v >= 0 && (size_t)v < p->values_count && p->values[v].kind == ETRT_PTE_VALUE_TENSOR) {
      put(j, "{", 1);
      tensor_fields(j, &p->values[v].tensor);
      put(j, "}", 1);
    } else {
      puts_(j, "null");
    }
  }
  put(j, "]", 1);
}

static void operator_name(json_out *j, const etrt_pte_operator *op) {
  size_t n = op->name.size, o = op->overload.data ? op->overload.size : 0;
  char *full = malloc(n + o + 2);
  if (full == NULL) {
    j->failed = true;
    return;
  }
  memcpy(full, op->name.data, n);
  if (o) {
    full[n] = '.';
    memcpy(full + n + 1, op->overload.data, o);
  }
  string_n(j, full, n + (o ? o + 1 : 0));
  free(full);
}

static bool printable(etrt_pte_bytes v) {
  for (size_t i = 0; i < v.size;) {
    uint8_t c = v.data[i];
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
    size_t len = utf8_sequence(v.data + i, v.size - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

static void compile_spec_value(json_out *j, etrt_pte_bytes v) {
  if (printable(v)) {
    string_n(j, (const char *)v.data, v.size);
    return;
  }
  static const char hex[] = "0123456789abcdef";
  puts_(j, "\"hex:");
  for (size_t i = 0; i < v.size; ++i) {
    char pair[2] = {hex[v.data[i] >> 4], hex[v.data[i] & 15]};
    put(j, pair, 2);
  }
  put(j, "\"", 1);
}

static void instruction(json_out *j, const etrt_pte_plan *p, const etrt_pte_instruction *in) {
  put(j, "{", 1);
  key(j, "kind", true);
  const char *kind = etrt_pte_instruction_kind_name(in->kind);
  string_n(j, kind, strlen(kind));
  if (in->kind == ETRT_PTE_INSTR_KERNEL) {
    key(j, "op", false);
    if (in->kernel.op_index >= 0 && (size_t)in->kernel.op_index < p->operators_count) {
      operator_name(j, &p->operators[in->kernel.op_index]);
    } else {
      puts_(j, "null");
    }
    key(j, "op_index", false);
    printf_(j, "%" PRId32, in->kernel.op_index);
    key(j, "args", false);
    i32_array(j, in->kernel.args);
  } else if (in->kind == ETRT_PTE_INSTR_DELEGATE) {
    key(j, "delegate", false);
    printf_(j, "%" PRId32, in->delegate.delegate_index);
    key(j, "args", false);
    i32_array(j, in->delegate.args);
  }
  put(j, "}", 1);
}

static void delegate(json_out *j, const etrt_pte_program *prog, const etrt_pte_delegate *d) {
  etrt_pte_bytes payload = {NULL, 0};
  if (etrt_pte_program_delegate_data(prog, d, &payload) != ETRT_OK) etrt_clear_error();
  put(j, "{", 1);
  key(j, "id", true);
  string_view(j, d->id);
  key(j, "location", false);
  puts_(j, d->location == ETRT_PTE_DATA_SEGMENT ? "\"segment\"" : "\"inline\"");
  key(j, "index", false);
  printf_(j, "%" PRIu32, d->index);
  key(j, "size", false);
  printf_(j, "%zu", payload.size);
  etrt_engine_memory m;
  if (payload.size > 0 && etrt_engine_plan_memory(payload.data, payload.size, &m)) {
    key(j, "peak_device_memory", false);
    printf_(j, "{\"total\":%" PRIu64 ",\"weights\":%" PRIu64 ",\"intermediates\":%" PRIu64, m.total,
            m.weights, m.intermediates);
    key(j, "workspace", false);
    if (m.workspace_known)
      printf_(j, "%" PRIu64 "}", m.workspace);
    else
      puts_(j, "null}");
  } else {
    etrt_clear_error();
  }
  etrt_engine_types types;
  if (payload.size > 0 && etrt_engine_plan_types(payload.data, payload.size, &types)) {
    static const char *const precisions[] = {"fp32", "tf32", "fp16", "bf16"};
    static const char *const floats[] = {"float32", "float16", "bfloat16"};
    key(j, "types", false);
    put(j, "{", 1);
    key(j, "precision", true);
    printf_(j, "\"%s\"", (unsigned)types.precision < 4 ? precisions[types.precision] : "unknown");
    key(j, "weight_bytes", false);
    for (int t = 0; t < 3; ++t) {
      put(j, t ? "," : "{", 1);
      key(j, floats[t], true);
      printf_(j, "%" PRIu64, types.weight_bytes[t]);
    }
    put(j, "}", 1);
    key(j, "values", false);
    for (int t = 0; t < 3; ++t) {
      put(j, t ? "," : "{", 1);
      key(j, floats[t], true);
      printf_(j, "%" PRIu32, types.values[t]);
    }
    put(j, "}", 1);
    key(j, "float_casts", false);
    printf_(j, "%" PRIu32, types.float_casts);
    key(j, "edge_casts", false);
    printf_(j, "%" PRIu32 "}", types.edge_casts);
    key(j, "layouts", false);
    printf_(j, "{\"channels_last_nodes\":%" PRIu32 ",\"layout_conversions\":%" PRIu32 "}",
            types.channels_last_nodes, types.layout_conversions);
    key(j, "tuning", false);
    if (types.tuned) {
      put(j, "{", 1);
      key(j, "gpu", true);
      string_n(j, types.tuned_gpu, strlen(types.tuned_gpu));
      printf_(j,
              ",\"compute_capability\":\"%d.%d\",\"cudnn_version\":%" PRIu32
              ",\"convolutions\":%" PRIu32 "}",
              types.tuned_major, types.tuned_minor, types.tuned_cudnn, types.tuned_convolutions);
    } else {
      puts_(j, "null");
    }
  } else {
    etrt_clear_error();
  }
  key(j, "compile_specs", false);
  put(j, "{", 1);
  for (size_t i = 0; i < d->compile_specs_count; ++i) {
    if (i) put(j, ",", 1);
    string_view(j, d->compile_specs[i].key);
    put(j, ":", 1);
    compile_spec_value(j, d->compile_specs[i].value);
  }
  puts_(j, "}}");
}

static void method(json_out *j, const etrt_pte_program *prog, const etrt_pte_plan *p) {
  put(j, "{", 1);
  key(j, "name", true);
  string_view(j, p->name);
  key(j, "num_values", false);
  printf_(j, "%zu", p->values_count);
  key(j, "inputs", false);
  i32_array(j, p->inputs);
  key(j, "outputs", false);
  i32_array(j, p->outputs);
  key(j, "input_tensors", false);
  io_tensors(j, p, p->inputs);
  key(j, "output_tensors", false);
  io_tensors(j, p, p->outputs);

  key(j, "tensors", false);
  put(j, "[", 1);
  bool first = true;
  for (size_t i = 0; i < p->values_count; ++i) {
    if (p->values[i].kind != ETRT_PTE_VALUE_TENSOR) continue;
    puts_(j, first ? "{" : ",{");
    first = false;
    key(j, "index", true);
    printf_(j, "%zu", i);
    put(j, ",", 1);
    tensor_fields(j, &p->values[i].tensor);
    put(j, "}", 1);
  }
  put(j, "]", 1);

  key(j, "operators", false);
  put(j, "[", 1);
  for (size_t i = 0; i < p->operators_count; ++i) {
    if (i) put(j, ",", 1);
    operator_name(j, &p->operators[i]);
  }
  put(j, "]", 1);

  key(j, "instructions", false);
  put(j, "[", 1);
  first = true;
  for (size_t c = 0; c < p->chains_count; ++c) {
    for (size_t i = 0; i < p->chains[c].instructions_count; ++i) {
      if (!first) put(j, ",", 1);
      first = false;
      instruction(j, p, &p->chains[c].instructions[i]);
    }
  }
  put(j, "]", 1);

  key(j, "delegates", false);
  put(j, "[", 1);
  for (size_t i = 0; i < p->delegates_count; ++i) {
    if (i) put(j, ",", 1);
    delegate(j, prog, &p->delegates[i]);
  }
  put(j, "]", 1);

  key(j, "non_const_buffer_sizes", false);
  put(j, "[", 1);
  for (size_t i = 0; i < p->non_const_buffer_sizes.count; ++i) {
    printf_(j, i ? ",%" PRId64 : "%" PRId64, p->non_const_buffer_sizes.data[i]);
  }
  put(j, "]", 1);

  key(j, "non_const_buffer_device", false);
  put(j, "[", 1);
  for (size_t i = 0; i < p->non_const_buffer_device_count; ++i) {
    const etrt_pte_buffer_device *d = &p->non_const_buffer_device[i];
    puts_(j, i ? ",{" : "{");
    key(j, "buffer_idx", true);
    printf_(j, "%" PRId32, d->buffer_idx);
    key(j, "device", false);
    device(j, (etrt_device){(etrt_device_type)d->device_type, d->device_index});
    put(j, "}", 1);
  }
  puts_(j, "]}");
}

etrt_status etrt_pte_json(const etrt_pte_program *prog, char **out, size_t *out_size) {
  json_out j = {0};
  *out = NULL;
  *out_size = 0;
  put(&j, "{", 1);
  key(&j, "file_identifier", true);
  string_n(&j, prog->file_identifier, strlen(prog->file_identifier));
  key(&j, "extended_header", false);
  if (prog->has_extended_header) {
    const etrt_pte_extended_header *h = &prog->extended_header;
    printf_(&j, "{\"program_size\":%" PRIu64, h->program_size);
    printf_(&j, ",\"segment_base_offset\":%" PRIu64, h->segment_base_offset);
    printf_(&j, ",\"segment_data_size\":%" PRIu64 "}", h->segment_data_size);
  } else {
    puts_(&j, "null");
  }
  key(&j, "version", false);
  printf_(&j, "%" PRIu32, prog->version);

  key(&j, "segments", false);
  put(&j, "[", 1);
  for (size_t i = 0; i < prog->segments_count; ++i) {
    printf_(&j, "%s{\"offset\":%" PRIu64, i ? "," : "", prog->segments[i].offset);
    printf_(&j, ",\"size\":%" PRIu64 "}", prog->segments[i].size);
  }
  put(&j, "]", 1);

  key(&j, "named_data", false);
  put(&j, "[", 1);
  for (size_t i = 0; i < prog->named_data_count; ++i) {
    puts_(&j, i ? ",{" : "{");
    key(&j, "key", true);
    string_view(&j, prog->named_data[i].key);
    key(&j, "segment_index", false);
    printf_(&j, "%" PRIu32 "}", prog->named_data[i].segment_index);
  }
  put(&j, "]", 1);

  key(&j, "methods", false);
  put(&j, "[", 1);
  for (size_t i = 0; i < prog->plans_count; ++i) {
    if (i) put(&j, ",", 1);
    method(&j, prog, &prog->plans[i]);
  }
  puts_(&j, "]}");
  if (j.failed) {
    free(j.buf);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "inspect: out of memory rendering JSON");
  }
  *out = j.buf;
  *out_size = j.size;
  return ETRT_OK;
}
