#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "base/status.h"
#include "builder/host_values.h"
#include "builder/import.h"
#include "builder/onnx_model.h"
#include "builder/tensor_pb.h"
#include "builder/value_pb.h"
#include "conformance.h"
#include "etrt/build.h"
#include "etrt/method.h"
#include "etrt/program.h"

#define ETRT_CONF_MAX_IO 64
#define ETRT_CONF_MAX_SETS 64

/* A data set's tensors: a sequence or optional file gives one tensor per element (none
 * for an absent optional), as the program takes them (import_sequence.h). */
typedef struct etrt_conf_data_set {
  etrt_tensor_pb inputs[ETRT_CONF_MAX_IO];
  etrt_tensor_pb outputs[ETRT_CONF_MAX_IO];
  uint32_t num_inputs, num_outputs;
  /* per input file: its first tensor among `inputs`, how many, and whether present */
  uint32_t file_first[ETRT_CONF_MAX_IO], file_count[ETRT_CONF_MAX_IO];
  int file_present[ETRT_CONF_MAX_IO];
  uint32_t num_files;
} etrt_conf_data_set;

typedef struct etrt_conf_case {
  const char *dir;
  const char *name;
  etrt_conf_result *out;
  etrt_conf_data_set *sets;
  uint32_t num_sets;
  char *shape_specs[ETRT_CONF_MAX_IO];
  uint32_t num_shape_specs;
  char *value_specs[ETRT_CONF_MAX_IO];
  uint32_t num_value_specs;
  char *sequence_specs[ETRT_CONF_MAX_IO];
  uint32_t num_sequence_specs;
  int flags_from_data; /* derive --shape and --shape-values from the data (debugging) */
  /* inputs whose fixed shape in the model the data contradict (etrt_conf_data_fits) */
  char *reshaped_names[ETRT_CONF_MAX_IO];
  uint32_t reshaped_inputs[ETRT_CONF_MAX_IO];
  uint32_t num_reshaped;
} etrt_conf_case;

static void etrt_conf_set(etrt_conf_result *out, etrt_conf_outcome outcome, const char *key,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void etrt_conf_set(etrt_conf_result *out, etrt_conf_outcome outcome, const char *key,
                          const char *fmt, ...) {
  out->outcome = outcome;
  snprintf(out->key, sizeof out->key, "%s", key);
  va_list args;
  va_start(args, fmt);
  vsnprintf(out->detail, sizeof out->detail, fmt, args);
  va_end(args);
}

/* A refusal or failure of the library at `stage`. Unsupported is a clean refusal
 * wherever it comes from; a malformed model (strings, sequences, optional types)
 * only when the builder or the test data reader says so: a program the builder
 * wrote and the runtime cannot read is a bug. */
static void etrt_conf_library_failed(etrt_conf_result *out, const char *stage, etrt_status s,
                                     int invalid_format_is_refusal) {
  const char *message = etrt_last_error();
  char reason[96], key[256];
  etrt_conf_reason_key(message, reason, sizeof reason);
  int refused =
      s == ETRT_ERROR_UNSUPPORTED || (invalid_format_is_refusal && s == ETRT_ERROR_INVALID_FORMAT);
  if (refused && strcmp(stage, "build") == 0)
    snprintf(key, sizeof key, "%s", reason);
  else if (refused)
    snprintf(key, sizeof key, "%s: %s", stage, reason);
  else
    snprintf(key, sizeof key, "%s: %s: %s", stage, etrt_status_name(s), reason);
  etrt_conf_set(out, refused ? ETRT_CONF_UNSUPPORTED : ETRT_CONF_FAILED, key, "%s: %s: %s", stage,
                etrt_status_name(s), message);
}

static int etrt_conf_file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The values `prefix`_0.pb, `prefix`_1.pb, ... of one data set folder, each
 * flattened into `tensors` (file i's at first[i], count[i] of them). */
static etrt_status etrt_conf_read_tensors(const char *dir, const char *prefix,
                                          etrt_tensor_pb *tensors, uint32_t *count, uint32_t *first,
                                          uint32_t *counts, int *present, uint32_t *files,
                                          char *failed_path, size_t size) {
  *count = 0;
  *files = 0;
  for (uint32_t i = 0; i < ETRT_CONF_MAX_IO; ++i) {
    snprintf(failed_path, size, "%s/%s_%u.pb", dir, prefix, i);
    if (!etrt_conf_file_exists(failed_path)) return ETRT_OK;
    etrt_value_pb v;
    ETRT_RETURN_IF_ERROR(etrt_value_pb_read_file(failed_path, &v));
    if (*count + v.count > ETRT_CONF_MAX_IO) {
      etrt_value_pb_release(&v);
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "'%s': more than %d tensors in the data set",
                        failed_path, ETRT_CONF_MAX_IO);
    }
    first[i] = *count;
    counts[i] = v.count;
    present[i] = v.present;
    for (uint32_t k = 0; k < v.count; ++k) tensors[(*count)++] = v.tensors[k];
    v.count = 0; /* the tensors moved */
    etrt_value_pb_release(&v);
    ++*files;
  }
  return ETRT_OK;
}

static int etrt_conf_set_index(const char *name) {
  const char *prefix = "test_data_set_";
  size_t n = strlen(prefix);
  if (strncmp(name, prefix, n) != 0 || name[n] == '\0') return -1;
  char *end;
  long v = strtol(name + n, &end, 10);
  return *end == '\0' && v >= 0 && v < ETRT_CONF_MAX_SETS ? (int)v : -1;
}

/* Every test_data_set_N, in the order of N. */
static int etrt_conf_read_data_sets(etrt_conf_case *c) {
  DIR *d = opendir(c->dir);
  if (d == NULL) {
    etrt_conf_set(c->out, ETRT_CONF_FAILED, "cannot read the case folder", "%s", c->dir);
    return 0;
  }
  int present[ETRT_CONF_MAX_SETS] = {0};
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    int k = etrt_conf_set_index(e->d_name);
    if (k >= 0) present[k] = 1;
  }
  closedir(d);
  c->sets = calloc(ETRT_CONF_MAX_SETS, sizeof *c->sets);
  if (c->sets == NULL) {
    etrt_conf_set(c->out, ETRT_CONF_FAILED, "out of memory", "reading the data sets");
    return 0;
  }
  for (int k = 0; k < ETRT_CONF_MAX_SETS; ++k) {
    if (!present[k]) continue;
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/test_data_set_%d", c->dir, k);
    etrt_conf_data_set *set = &c->sets[c->num_sets++];
    uint32_t first[ETRT_CONF_MAX_IO], counts[ETRT_CONF_MAX_IO], files;
    int present[ETRT_CONF_MAX_IO];
    etrt_status s = etrt_conf_read_tensors(dir, "input", set->inputs, &set->num_inputs,
                                           set->file_first, set->file_count, set->file_present,
                                           &set->num_files, path, sizeof path);
    if (s == ETRT_OK)
      s = etrt_conf_read_tensors(dir, "output", set->outputs, &set->num_outputs, first, counts,
                                 present, &files, path, sizeof path);
    if (s != ETRT_OK) {
      etrt_conf_library_failed(c->out, "test data", s, 1);
      return 0;
    }
  }
  if (c->num_sets == 0) {
    etrt_conf_set(c->out, ETRT_CONF_FAILED, "no test_data_set_*", "%s has no test data", c->dir);
    return 0;
  }
  return 1;
}

static void etrt_conf_dims_text(const etrt_tensor_pb *t, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t a = 0; a < t->rank && used < size; ++a)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, a ? "x" : "", t->sizes[a]);
}

static int etrt_conf_is_initializer(const etrt_onnx_graph *g, etrt_onnx_str name) {
  for (size_t i = 0; i < g->initializer_count; ++i)
    if (g->initializers[i].name.size == name.size &&
        memcmp(g->initializers[i].name.data, name.data, name.size) == 0)
      return 1;
  return 0;
}

/* Whether two tensors have the same shape. */
static int etrt_conf_same_shape(const etrt_tensor_pb *a, const etrt_tensor_pb *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->sizes[i] != b->sizes[i]) return 0;
  return 1;
}

/* Some cases' data contradict the fixed shape their model declares. ONNX 1.12 wrote
 * CastLike's bfloat16 cases with the output's type (3x4) declared for the `like`
 * input, whose data is the one element that every other CastLike case declares: the
 * model is wrong, and the data is what the reference computed the expected outputs
 * from. Such an input is built with the data's shape (etrt_conf_model_reshape) when
 * every data set agrees on it; otherwise the case is refused rather than counted as
 * wrong. */
static int etrt_conf_data_fits(etrt_conf_case *c, const etrt_onnx_value_info *in, uint32_t index) {
  for (uint32_t k = 0; k < c->num_sets; ++k) {
    if (index >= c->sets[k].num_inputs) continue;
    const etrt_tensor_pb *t = &c->sets[k].inputs[index];
    int fits = (size_t)t->rank == in->rank;
    for (int32_t a = 0; fits && a < t->rank; ++a) fits = t->sizes[a] == in->dims[a].value;
    int agree = index < c->sets[0].num_inputs;
    for (uint32_t d = 1; agree && d < c->num_sets; ++d)
      agree = index < c->sets[d].num_inputs &&
              etrt_conf_same_shape(&c->sets[d].inputs[index], &c->sets[0].inputs[index]);
    if (!fits && agree) {
      char *name = malloc(in->name.size + 1);
      if (name == NULL) {
        etrt_conf_set(c->out, ETRT_CONF_FAILED, "out of memory", "reading the model");
        return 0;
      }
      memcpy(name, in->name.data, in->name.size);
      name[in->name.size] = '\0';
      c->reshaped_names[c->num_reshaped] = name;
      c->reshaped_inputs[c->num_reshaped++] = index;
      return 1;
    }
    if (!fits) {
      char dims[256];
      etrt_conf_dims_text(t, dims, sizeof dims);
      etrt_conf_set(c->out, ETRT_CONF_UNSUPPORTED,
                    "test data: an input's shape contradicts the model",
                    "data set %u input %u '%.*s': the data's shape is %s (rank %d), the model "
                    "declares rank %zu",
                    k, index, ETRT_ONNX_STR_ARGS(in->name), dims[0] ? dims : "scalar", (int)t->rank,
                    in->rank);
      return 0;
    }
  }
  return 1;
}

/* Appends the smallest (or largest) of input `index`'s values over the data sets,
 * value by value, to `text` ("3,-1,0"). */
static void etrt_conf_values_text(const etrt_conf_case *c, uint32_t index, int64_t count,
                                  int want_max, char *text, size_t size) {
  size_t used = strlen(text);
  for (int64_t i = 0; i < count && used < size; ++i) {
    int64_t pick = 0;
    for (uint32_t d = 0; d < c->num_sets; ++d) {
      const etrt_tensor_pb *s = &c->sets[d].inputs[index];
      int64_t v = s->dtype == ETRT_DTYPE_INT64 ? ((const int64_t *)s->data)[i]
                                               : ((const int32_t *)s->data)[i];
      if (d == 0 || (want_max ? v > pick : v < pick)) pick = v;
    }
    used += (size_t)snprintf(text + used, size - used, "%s%" PRId64, i ? "," : "", pick);
  }
}

static bool etrt_conf_str_in(etrt_onnx_str s, const etrt_onnx_str *set, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (set[i].size == s.size && memcmp(set[i].data, s.data, s.size) == 0) return true;
  return false;
}

/* The scalar graph inputs the import reads the values of, as the sequence operators
 * are unrolled: positions, the trip count and condition of a Loop over a sequence, the
 * condition of an If whose branches give sequences. Each is given its value as
 * "NAME:V" (--shape-values) where every data set holds the same. */
static void etrt_conf_import_value_specs(etrt_conf_case *c, const etrt_onnx_graph *g) {
  size_t cap = g->input_count + 4 * g->node_count + 1, nlists = 0, nread = 0;
  etrt_onnx_str *lists = calloc(cap, sizeof *lists), *read = calloc(cap, sizeof *read);
  if (lists == NULL || read == NULL) goto done;
  for (size_t i = 0; i < g->input_count; ++i)
    if (g->inputs[i].kind == ETRT_ONNX_TYPE_SEQUENCE ||
        g->inputs[i].kind == ETRT_ONNX_TYPE_OPTIONAL)
      lists[nlists++] = g->inputs[i].name;
  static const char *const makers[] = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert",
                                       "SequenceErase", "SplitToSequence",   "SequenceMap",
                                       "Optional",      "OptionalGetElement"};
  for (size_t n = 0; n < g->node_count; ++n) {
    const etrt_onnx_node *node = &g->nodes[n];
    bool makes = false, reads_list = false;
    for (size_t m = 0; m < sizeof makers / sizeof makers[0]; ++m)
      makes = makes || etrt_onnx_str_eq(node->op_type, makers[m]);
    for (size_t k = 0; k < node->input_count; ++k)
      reads_list = reads_list || etrt_conf_str_in(node->inputs[k], lists, nlists);
    if ((makes || etrt_onnx_str_eq(node->op_type, "Identity") ||
         etrt_onnx_str_eq(node->op_type, "Loop") || etrt_onnx_str_eq(node->op_type, "If")) &&
        (makes || reads_list)) {
      for (size_t k = 0; k < node->output_count && nlists < cap; ++k)
        lists[nlists++] = node->outputs[k];
    }
    size_t first = 0, last = 0; /* inputs [first, last) are read by value */
    if (etrt_onnx_str_eq(node->op_type, "SequenceInsert")) first = 2, last = 3;
    if (etrt_onnx_str_eq(node->op_type, "SequenceErase") ||
        etrt_onnx_str_eq(node->op_type, "SequenceAt") ||
        etrt_onnx_str_eq(node->op_type, "SplitToSequence"))
      first = 1, last = 2;
    if (etrt_onnx_str_eq(node->op_type, "Loop") && reads_list) first = 0, last = 2;
    if (etrt_onnx_str_eq(node->op_type, "If")) {
      for (size_t a = 0; a < node->attribute_count; ++a) {
        const etrt_onnx_graph *b = node->attributes[a].g;
        for (size_t k = 0; b != NULL && k < b->output_count; ++k)
          if (b->outputs[k].kind == ETRT_ONNX_TYPE_SEQUENCE ||
              b->outputs[k].kind == ETRT_ONNX_TYPE_OPTIONAL)
            first = 0, last = 1;
      }
    }
    for (size_t k = first; k < last && k < node->input_count && nread < cap; ++k)
      read[nread++] = node->inputs[k];
  }
  uint32_t file = 0;
  for (size_t i = 0; i < g->input_count; ++i) {
    const etrt_onnx_value_info *in = &g->inputs[i];
    if (etrt_conf_is_initializer(g, in->name)) continue;
    uint32_t k = file++;
    if (!etrt_conf_str_in(in->name, read, nread) || k >= c->sets[0].num_files ||
        c->num_value_specs == ETRT_CONF_MAX_IO)
      continue;
    /* the values, the same in every data set: bool, int32 or int64, rank 0 or 1 */
    const etrt_tensor_pb *t0 = NULL;
    bool same = true;
    for (uint32_t d = 0; d < c->num_sets && same; ++d) {
      const etrt_conf_data_set *set = &c->sets[d];
      same = k < set->num_files && set->file_count[k] == 1;
      const etrt_tensor_pb *t = same ? &set->inputs[set->file_first[k]] : NULL;
      same = same && t->rank <= 1 && t->nbytes <= 64 * 8 &&
             (t->dtype == ETRT_DTYPE_BOOL || t->dtype == ETRT_DTYPE_INT64 ||
              t->dtype == ETRT_DTYPE_INT32);
      if (same && d > 0)
        same = t->dtype == t0->dtype && t->nbytes == t0->nbytes &&
               memcmp(t->data, t0->data, t->nbytes) == 0;
      if (d == 0) t0 = t;
    }
    if (!same || t0 == NULL || t0->nbytes == 0) continue;
    size_t esize = etrt_dtype_size(t0->dtype), count = t0->nbytes / esize;
    size_t size = in->name.size + 24 * count + 8;
    char *spec = malloc(size);
    if (spec == NULL) break;
    size_t used = (size_t)snprintf(spec, size, "%.*s:", ETRT_ONNX_STR_ARGS(in->name));
    for (size_t e = 0; e < count; ++e) {
      const uint8_t *p = (const uint8_t *)t0->data + e * esize;
      int64_t v;
      if (esize == 1) {
        v = *p != 0;
      } else if (esize == 4) {
        int32_t i;
        memcpy(&i, p, 4);
        v = i;
      } else {
        memcpy(&v, p, 8);
      }
      used += (size_t)snprintf(spec + used, size - used, "%s%" PRId64, e ? "," : "", v);
    }
    c->value_specs[c->num_value_specs++] = spec;
  }
done:
  free(lists);
  free(read);
}

/* Values for the inputs whose values the plans need when they are built (a
 * Reshape's shape given as a graph input), as `etrt build --shape-values` takes
 * them: "NAME:V1,V2", or "NAME:MINS:MAXS" where the data sets differ. */
static void etrt_conf_value_specs(etrt_conf_case *c, const etrt_onnx_model *model) {
  etrt_ir_graph *graph = NULL;
  etrt_import_options options = {.sequences = (const char *const *)c->sequence_specs,
                                 .num_sequences = c->num_sequence_specs,
                                 .shape_values = (const char *const *)c->value_specs,
                                 .num_shape_values = c->num_value_specs};
  if (etrt_import_onnx_options(model, &options, &graph) != ETRT_OK) return; /* the build says why */
  etrt_host_value_use *uses = malloc(((size_t)graph->num_values + 1) * sizeof *uses);
  if (uses != NULL) etrt_host_values_find(graph, uses);
  for (uint32_t k = 0; uses != NULL && k < graph->num_inputs && k < ETRT_CONF_MAX_IO; ++k) {
    const etrt_ir_value *v = &graph->values[graph->inputs[k]];
    if (uses[graph->inputs[k]].node < 0) continue;
    int64_t count = -1;
    int same = 1;
    for (uint32_t d = 0; d < c->num_sets; ++d) {
      if (k >= c->sets[d].num_inputs) {
        count = -1;
        break;
      }
      const etrt_tensor_pb *t = &c->sets[d].inputs[k];
      int64_t n = 1;
      for (int32_t a = 0; a < t->rank; ++a) n *= t->sizes[a];
      if ((t->dtype != ETRT_DTYPE_INT64 && t->dtype != ETRT_DTYPE_INT32) || t->rank > 1 || n > 64 ||
          (d > 0 && (n != count || t->dtype != c->sets[0].inputs[k].dtype))) {
        count = -1;
        break;
      }
      count = n;
      if (d > 0)
        same &=
            memcmp(t->data, c->sets[0].inputs[k].data, (size_t)n * etrt_dtype_size(t->dtype)) == 0;
    }
    if (count < 0) continue;
    size_t size = strlen(v->name) + 2 * 24 * (size_t)count + 8;
    char *spec = malloc(size);
    if (spec == NULL) break;
    snprintf(spec, size, "%s:", v->name);
    etrt_conf_values_text(c, k, count, 0, spec, size);
    if (!same) {
      strcat(spec, ":");
      etrt_conf_values_text(c, k, count, 1, spec, size);
    }
    c->value_specs[c->num_value_specs++] = spec;
  }
  free(uses);
  etrt_ir_graph_destroy(graph);
}

/* "NAME:DIMS", or "NAME:MINDIMS:MAXDIMS" where the data sets differ, for method input
 * `index` (nothing for a scalar or where the ranks differ). */
static void etrt_conf_dims_spec(etrt_conf_case *c, const char *name, uint32_t index) {
  if (index >= c->sets[0].num_inputs || c->sets[0].inputs[index].rank == 0) return;
  /* min and max over the data sets, axis by axis */
  etrt_tensor_pb lo = c->sets[0].inputs[index], hi = lo;
  for (uint32_t d = 1; d < c->num_sets; ++d) {
    if (index >= c->sets[d].num_inputs || c->sets[d].inputs[index].rank != lo.rank) return;
    for (int32_t a = 0; a < lo.rank; ++a) {
      int64_t v = c->sets[d].inputs[index].sizes[a];
      if (v < lo.sizes[a]) lo.sizes[a] = v;
      if (v > hi.sizes[a]) hi.sizes[a] = v;
    }
  }
  if (c->num_shape_specs == ETRT_CONF_MAX_IO) return;
  char min[256], max[256];
  etrt_conf_dims_text(&lo, min, sizeof min);
  etrt_conf_dims_text(&hi, max, sizeof max);
  size_t n = strlen(name) + sizeof min + sizeof max + 4;
  char *spec = malloc(n);
  if (spec == NULL) return;
  if (strcmp(min, max) == 0)
    snprintf(spec, n, "%s:%s", name, min);
  else
    snprintf(spec, n, "%s:%s:%s", name, min, max);
  c->shape_specs[c->num_shape_specs++] = spec;
}

/* A sequence or optional input (file `file`): its length ("NAME:N") or absence
 * ("NAME:none") as --sequence takes them, the same in every data set, and the bounds of
 * each of its tensors ("NAME[i]:DIMS"). */
static int etrt_conf_sequence_specs(etrt_conf_case *c, const etrt_onnx_value_info *in,
                                    uint32_t file) {
  const etrt_conf_data_set *s0 = &c->sets[0];
  for (uint32_t d = 1; d < c->num_sets; ++d) {
    const etrt_conf_data_set *sd = &c->sets[d];
    if (file >= sd->num_files || sd->file_count[file] != s0->file_count[file] ||
        sd->file_present[file] != s0->file_present[file]) {
      etrt_conf_set(c->out, ETRT_CONF_UNSUPPORTED,
                    "test data: a sequence's length differs between data sets",
                    "input %u '%.*s': data set %u differs from data set 0 (a sequence's length "
                    "is fixed when the program is built)",
                    file, ETRT_ONNX_STR_ARGS(in->name), d);
      return 0;
    }
  }
  if (c->num_sequence_specs == ETRT_CONF_MAX_IO) return 1;
  char name[512];
  snprintf(name, sizeof name, "%.*s", ETRT_ONNX_STR_ARGS(in->name));
  char *spec = malloc(strlen(name) + 24);
  if (spec == NULL) return 1;
  bool optional_tensor =
      in->kind == ETRT_ONNX_TYPE_OPTIONAL && in->elem_kind != ETRT_ONNX_TYPE_SEQUENCE;
  if (in->kind == ETRT_ONNX_TYPE_OPTIONAL &&
      (!s0->file_present[file] || (optional_tensor && s0->file_count[file] == 0)))
    sprintf(spec, "%s:none", name);
  else
    sprintf(spec, "%s:%u", name, s0->file_count[file]);
  c->sequence_specs[c->num_sequence_specs++] = spec;
  for (uint32_t j = 0; j < s0->file_count[file]; ++j) {
    char element[600];
    if (optional_tensor)
      snprintf(element, sizeof element, "%s", name);
    else
      snprintf(element, sizeof element, "%s[%u]", name, j);
    etrt_conf_dims_spec(c, element, s0->file_first[file] + j);
  }
  return 1;
}

/* The flags a case is built with. A sequence or optional input always gets its
 * structure (--sequence, its tensors' bounds and the values its length depends on):
 * the program is built for one structure, which its user must state. Everything else
 * is built from the model and --device alone; with --flags-from-data (debugging) the
 * dynamic inputs also get bounds from the data's shapes ("NAME:DIMS", or
 * "NAME:MINDIMS:MAXDIMS" where the data sets differ) and the inputs that decide shapes
 * their values (--shape-values). */
static int etrt_conf_shape_specs(etrt_conf_case *c, const uint8_t *model_bytes, size_t model_size) {
  etrt_onnx_model *model = NULL;
  etrt_status s = etrt_onnx_model_parse(model_bytes, model_size, c->dir, &model);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "build", s, 1);
    return 0;
  }
  const etrt_onnx_graph *g = etrt_onnx_model_graph(model);
  uint32_t k = 0; /* the input file's index: graph inputs that are not initializers */
  for (size_t i = 0; i < g->input_count && k < ETRT_CONF_MAX_IO; ++i) {
    const etrt_onnx_value_info *in = &g->inputs[i];
    if (etrt_conf_is_initializer(g, in->name)) continue;
    uint32_t file = k++;
    if (file >= c->sets[0].num_files) continue;   /* counted when the sets run */
    uint32_t index = c->sets[0].file_first[file]; /* the method's input index */
    if (in->kind == ETRT_ONNX_TYPE_SEQUENCE || in->kind == ETRT_ONNX_TYPE_OPTIONAL) {
      if (!etrt_conf_sequence_specs(c, in, file)) {
        etrt_onnx_model_free(model);
        return 0;
      }
      continue;
    }
    int dynamic = !in->has_shape;
    for (size_t a = 0; a < in->rank && !dynamic; ++a) dynamic = !in->dims[a].has_value;
    if (!dynamic && !etrt_conf_data_fits(c, in, index)) {
      etrt_onnx_model_free(model);
      return 0;
    }
    if (!dynamic || !c->flags_from_data || memchr(in->name.data, ':', in->name.size) != NULL)
      continue;
    char name[512];
    snprintf(name, sizeof name, "%.*s", ETRT_ONNX_STR_ARGS(in->name));
    etrt_conf_dims_spec(c, name, index);
  }
  etrt_conf_import_value_specs(c, g);
  if (c->flags_from_data) etrt_conf_value_specs(c, model);
  etrt_onnx_model_free(model);
  return 1;
}

/* Progress lines "partition 0 cuda:0: 12 ops (...)" say which executor got what. */
static void etrt_conf_progress(const char *line, void *user) {
  etrt_conf_result *out = user;
  unsigned index, ops;
  int at = 0;
  if (sscanf(line, "partition %u %n", &index, &at) != 1 || at == 0) return;
  const char *device = line + at;
  const char *colon = strstr(device, ": ");
  if (colon == NULL || sscanf(colon + 2, "%u op", &ops) != 1) return;
  ++out->partitions;
  if (strncmp(device, "cuda", 4) == 0)
    out->gpu_ops += ops;
  else
    out->cpu_ops += ops;
}

/* The data of input `index` as the method declares it: the test data keeps some
 * 16-bit floats as uint16, which only needs relabelling. */
static int etrt_conf_input_view(etrt_conf_case *c, const etrt_program *program, const char *method,
                                uint32_t set, uint32_t index, etrt_tensor_view *view) {
  const etrt_tensor_pb *t = &c->sets[set].inputs[index];
  etrt_tensor_info info;
  etrt_status s = etrt_program_input_info(program, method, index, &info);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "input info", s, 0);
    return 0;
  }
  memset(view, 0, sizeof *view);
  view->data = t->data;
  view->dtype = t->dtype;
  view->rank = t->rank;
  memcpy(view->sizes, t->sizes, sizeof view->sizes);
  if (t->dtype == info.dtype) return 1;
  if (t->dtype == ETRT_DTYPE_UINT16 &&
      (info.dtype == ETRT_DTYPE_BFLOAT16 || info.dtype == ETRT_DTYPE_FLOAT16)) {
    view->dtype = info.dtype;
    return 1;
  }
  etrt_conf_set(c->out, ETRT_CONF_FAILED, "input dtype differs from the model's",
                "data set %u input %u: the data is %s, the program declares %s", set, index,
                etrt_dtype_name(t->dtype), etrt_dtype_name(info.dtype));
  return 0;
}

static void etrt_conf_pb_view(const etrt_tensor_pb *t, etrt_tensor_view *v) {
  *v = (etrt_tensor_view){.data = t->data, .dtype = t->dtype, .rank = t->rank};
  memcpy(v->sizes, t->sizes, sizeof v->sizes);
}

static int etrt_conf_run_set(etrt_conf_case *c, const etrt_program *program,
                             const char *method_name, etrt_method *method, uint32_t k) {
  etrt_conf_data_set *set = &c->sets[k];
  uint32_t num_inputs = etrt_method_input_count(method);
  uint32_t num_outputs = etrt_method_output_count(method);
  if (num_inputs != set->num_inputs) {
    etrt_conf_set(c->out, ETRT_CONF_FAILED, "input count differs from the model's",
                  "data set %u has %u inputs, the method takes %u", k, set->num_inputs, num_inputs);
    return 0;
  }
  if (num_outputs != set->num_outputs) {
    etrt_conf_set(c->out, ETRT_CONF_FAILED, "output count differs from the model's",
                  "data set %u has %u outputs, the method gives %u", k, set->num_outputs,
                  num_outputs);
    return 0;
  }
  for (uint32_t i = 0; i < num_inputs; ++i) {
    etrt_tensor_view view;
    if (!etrt_conf_input_view(c, program, method_name, k, i, &view)) return 0;
    etrt_status s = etrt_method_set_input(method, i, &view);
    if (s != ETRT_OK) {
      etrt_conf_library_failed(c->out, "set input", s, 0);
      return 0;
    }
  }
  etrt_status s = etrt_method_execute(method);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "execute", s, 0);
    return 0;
  }
  for (uint32_t i = 0; i < num_outputs; ++i) {
    etrt_tensor_view actual;
    s = etrt_method_get_output(method, i, &actual);
    if (s != ETRT_OK) {
      etrt_conf_library_failed(c->out, "get output", s, 0);
      return 0;
    }
    const etrt_tensor_pb *e = &set->outputs[i];
    etrt_tensor_view expected = {.data = e->data, .dtype = e->dtype, .rank = e->rank};
    memcpy(expected.sizes, e->sizes, sizeof expected.sizes);
    char detail[768];
    etrt_conf_tolerance tol = etrt_conf_tolerance_for(c->name, e->dtype);
    int same;
    if (tol.dropout && e->dtype != ETRT_DTYPE_BOOL && set->num_inputs >= 2) {
      etrt_tensor_view data, ratio;
      etrt_conf_pb_view(&set->inputs[0], &data);
      etrt_conf_pb_view(&set->inputs[1], &ratio);
      same = etrt_conf_compare_dropout(&actual, &expected, &data, &ratio, detail, sizeof detail);
    } else {
      same = etrt_conf_compare(&actual, &expected, tol, detail, sizeof detail);
    }
    if (!same) {
      etrt_conf_set(c->out, ETRT_CONF_FAILED, "wrong output", "data set %u output %u: %s", k, i,
                    detail);
      return 0;
    }
  }
  return 1;
}

static void etrt_conf_build_and_run(etrt_conf_case *c, const char *device) {
  char path[4200];
  snprintf(path, sizeof path, "%s/model.onnx", c->dir);
  uint8_t *model = NULL, *pte = NULL;
  size_t model_size = 0, pte_size = 0;
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  etrt_status s = etrt_file_read_all(path, &model, &model_size);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "reading the model", s, 0);
    goto done;
  }
  if (!etrt_conf_shape_specs(c, model, model_size)) goto done;
  for (uint32_t i = 0; i < c->num_reshaped; ++i) {
    uint8_t *reshaped = NULL;
    const etrt_tensor_pb *data = &c->sets[0].inputs[c->reshaped_inputs[i]];
    s = etrt_conf_model_reshape(model, model_size, c->reshaped_names[i], data->rank, data->sizes,
                                &reshaped, &model_size);
    if (s != ETRT_OK) {
      etrt_conf_library_failed(c->out, "reshaping the model", s, 0);
      goto done;
    }
    free(model);
    model = reshaped;
  }
  etrt_build_options options;
  etrt_build_options_init(&options);
  options.device = device;
  options.shapes = (const char *const *)c->shape_specs;
  options.num_shapes = c->num_shape_specs;
  options.shape_values = (const char *const *)c->value_specs;
  options.num_shape_values = c->num_value_specs;
  options.sequences = (const char *const *)c->sequence_specs;
  options.num_sequences = c->num_sequence_specs;
  options.progress = etrt_conf_progress;
  options.progress_user = c->out;
  s = etrt_build_onnx_memory(model, model_size, &options, &pte, &pte_size);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "build", s, 1);
    goto done;
  }
  etrt_program_options program_options = {0};
  s = etrt_program_load_memory(pte, pte_size, &program_options, &program);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "load", s, 0);
    goto done;
  }
  const char *method_name = etrt_program_method_name(program, 0);
  if (method_name == NULL) {
    etrt_conf_set(c->out, ETRT_CONF_FAILED, "no method", "the program has no method");
    goto done;
  }
  s = etrt_method_create(program, method_name, &method);
  if (s != ETRT_OK) {
    etrt_conf_library_failed(c->out, "method", s, 0);
    goto done;
  }
  for (uint32_t k = 0; k < c->num_sets; ++k) {
    if (!etrt_conf_run_set(c, program, method_name, method, k)) goto done;
    ++c->out->data_sets;
  }
  etrt_conf_set(c->out, ETRT_CONF_PASSED, "", "%u data set(s)", c->num_sets);
done:
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
  free(model);
}

void etrt_conf_case_run(const char *case_dir, const char *case_name, const char *device,
                        int flags_from_data, etrt_conf_result *out) {
  memset(out, 0, sizeof *out);
  etrt_conf_case c = {
      .dir = case_dir, .name = case_name, .out = out, .flags_from_data = flags_from_data};
  if (etrt_conf_read_data_sets(&c)) etrt_conf_build_and_run(&c, device);
  if (c.sets != NULL)
    for (uint32_t k = 0; k < c.num_sets; ++k) {
      for (uint32_t i = 0; i < c.sets[k].num_inputs; ++i)
        etrt_tensor_pb_release(&c.sets[k].inputs[i]);
      for (uint32_t i = 0; i < c.sets[k].num_outputs; ++i)
        etrt_tensor_pb_release(&c.sets[k].outputs[i]);
    }
  free(c.sets);
  for (uint32_t i = 0; i < c.num_shape_specs; ++i) free(c.shape_specs[i]);
  for (uint32_t i = 0; i < c.num_value_specs; ++i) free(c.value_specs[i]);
  for (uint32_t i = 0; i < c.num_sequence_specs; ++i) free(c.sequence_specs[i]);
  for (uint32_t i = 0; i < c.num_reshaped; ++i) free(c.reshaped_names[i]);
}
