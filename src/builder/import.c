/* ONNX model -> builder IR, with the opset rewrites that let the engine implement
 * only the newest form of each operator. */
#include "builder/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/import_contrib.h"
#include "builder/import_internal.h"
#include "builder/import_sequence.h"

static etrt_status etrt_import_oom(void) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "import: out of memory");
}

static char *etrt_import_str(etrt_import *im, etrt_onnx_str s) {
  return etrt_ir_strndup(im->graph, s.data, s.size);
}

/* The node's name for messages: its own, else its position. */
static void etrt_import_node_label(const etrt_onnx_node *node, size_t index, char *buf,
                                   size_t size) {
  if (node->name.size)
    snprintf(buf, size, "node '%.*s' (%.*s)", ETRT_ONNX_STR_ARGS(node->name),
             ETRT_ONNX_STR_ARGS(node->op_type));
  else
    snprintf(buf, size, "node %zu (%.*s)", index, ETRT_ONNX_STR_ARGS(node->op_type));
}

/* Host bytes of an ONNX tensor that live as long as the graph: a view where the
 * reader can give one, else a copy in the graph's arena. */
static etrt_status etrt_import_tensor(etrt_import *im, const etrt_onnx_tensor *tensor,
                                      etrt_onnx_host_tensor *out) {
  ETRT_RETURN_IF_ERROR(etrt_onnx_tensor_to_host(tensor, out));
  if (out->owned_ != NULL) {
    void *copy = etrt_ir_alloc_uninit(im->graph, out->nbytes);
    if (copy == NULL) {
      etrt_onnx_host_tensor_release(out);
      return etrt_import_oom();
    }
    if (out->nbytes) memcpy(copy, out->data, out->nbytes);
    etrt_onnx_host_tensor kept = *out;
    etrt_onnx_host_tensor_release(out); /* clears *out */
    kept.data = copy;
    kept.owned_ = NULL;
    *out = kept;
  }
  return ETRT_OK;
}

/* A new int64 constant value (for attributes that later opsets made inputs). */
static etrt_status etrt_import_i64_constant(etrt_import *im, const char *base,
                                            const int64_t *values, size_t count, int32_t rank,
                                            int32_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(im->graph, base, out));
  int64_t *data = etrt_ir_alloc(im->graph, count * sizeof *data);
  if (data == NULL) return etrt_import_oom();
  if (count) memcpy(data, values, count * sizeof *data);
  int64_t dims[1] = {(int64_t)count};
  return etrt_ir_set_constant(im->graph, *out, ETRT_DTYPE_INT64, rank, dims, data,
                              count * sizeof *data);
}

static etrt_status etrt_import_f32_constant(etrt_import *im, const char *base, float value,
                                            int32_t *out) {
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(im->graph, base, out));
  float *data = etrt_ir_alloc(im->graph, sizeof *data);
  if (data == NULL) return etrt_import_oom();
  *data = value;
  return etrt_ir_set_constant(im->graph, *out, ETRT_DTYPE_FLOAT32, 0, NULL, data, sizeof *data);
}

/* ---- attributes ------------------------------------------------------------------ */

static etrt_status etrt_import_attribute(etrt_import *im, const char *label,
                                         const etrt_onnx_attribute *from, etrt_attribute *to) {
  memset(to, 0, sizeof *to);
  to->name = etrt_import_str(im, from->name);
  if (to->name == NULL) return etrt_import_oom();
  switch (from->type) {
    case ETRT_ONNX_ATTR_FLOAT:
      to->kind = ETRT_ATTRIBUTE_FLOAT;
      to->f = from->f;
      return ETRT_OK;
    case ETRT_ONNX_ATTR_INT:
      to->kind = ETRT_ATTRIBUTE_INT;
      to->i = from->i;
      return ETRT_OK;
    case ETRT_ONNX_ATTR_STRING:
      to->kind = ETRT_ATTRIBUTE_STRING;
      to->s = etrt_import_str(im, from->s);
      return to->s ? ETRT_OK : etrt_import_oom();
    case ETRT_ONNX_ATTR_STRINGS: {
      /* One STRING of the names joined by commas (RNN, GRU and LSTM's activations):
       * the attribute kinds of a plan have no list of strings. */
      size_t total = 1;
      for (size_t i = 0; i < from->string_count; ++i) {
        if (from->strings[i].size > 0 &&
            memchr(from->strings[i].data, ',', from->strings[i].size) != NULL)
          return etrt_error(ETRT_ERROR_UNSUPPORTED,
                            "%s: attribute '%s': string %zu holds a ',', which a list of strings "
                            "cannot carry here",
                            label, to->name, i);
        total += from->strings[i].size + 1;
      }
      char *joined = etrt_ir_alloc(im->graph, total);
      if (joined == NULL) return etrt_import_oom();
      size_t at = 0;
      for (size_t i = 0; i < from->string_count; ++i) {
        if (i > 0) joined[at++] = ',';
        if (from->strings[i].size > 0)
          memcpy(joined + at, from->strings[i].data, from->strings[i].size);
        at += from->strings[i].size;
      }
      joined[at] = '\0';
      to->kind = ETRT_ATTRIBUTE_STRING;
      to->s = joined;
      return ETRT_OK;
    }
    case ETRT_ONNX_ATTR_INTS:
      to->kind = ETRT_ATTRIBUTE_INTS;
      to->count = (int64_t)from->int_count;
      to->ints = from->ints;
      return ETRT_OK;
    case ETRT_ONNX_ATTR_FLOATS:
      to->kind = ETRT_ATTRIBUTE_FLOATS;
      to->count = (int64_t)from->float_count;
      to->floats = from->floats;
      return ETRT_OK;
    case ETRT_ONNX_ATTR_TENSOR: {
      if (from->t == NULL)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: attribute '%s' holds no tensor", label,
                          to->name);
      etrt_onnx_host_tensor host;
      etrt_status status = etrt_import_tensor(im, from->t, &host);
      if (status != ETRT_OK)
        return etrt_error_context(status, "%s: attribute '%s': ", label, to->name);
      to->kind = ETRT_ATTRIBUTE_TENSOR;
      to->tensor.data = (void *)host.data;
      to->tensor.dtype = host.dtype;
      to->tensor.rank = host.rank;
      for (int32_t i = 0; i < host.rank; ++i) to->tensor.sizes[i] = host.dims[i];
      return ETRT_OK;
    }
    case ETRT_ONNX_ATTR_GRAPH:
    case ETRT_ONNX_ATTR_GRAPHS:
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s: attribute '%s' is a subgraph, which only If, Loop and Scan take",
                        label, to->name);
    default:
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: attribute '%s' of type %s is not supported",
                        label, to->name, etrt_onnx_attr_type_name(from->type));
  }
}

/* ---- names of enclosing graphs ------------------------------------------------- */

/* The value a name read in this graph stands for, or -1: this graph's own, else the
 * enclosing graphs' (a body reads them: constants are copied in, so that the body's plan
 * knows their values; anything else becomes a capture). */
int32_t etrt_import_find_local(const etrt_import *im, etrt_onnx_str name) {
  if (im->prefix == NULL) return etrt_ir_find_value_n(im->graph, name.data, name.size);
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "%s%.*s", im->prefix, ETRT_ONNX_STR_ARGS(name));
  if (n < 0 || (size_t)n >= sizeof buf) return -1;
  return etrt_ir_find_value(im->graph, buf);
}

etrt_status etrt_import_resolve(etrt_import *im, etrt_onnx_str name, int32_t *out) {
  etrt_ir_graph *g = im->graph;
  *out = -1;
  if (etrt_import_lists_find(&im->lists, name) != NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s%s'%.*s' is a sequence or optional value, read where a tensor is "
                      "expected (sequences are unrolled by the sequence operators only)",
                      im->label ? im->label : "", im->label ? ": " : "", ETRT_ONNX_STR_ARGS(name));
  /* Inlined bodies, innermost first: each reads the names of those around it. */
  for (int d = im->inline_depth - 1; d >= 0; --d) {
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%s%.*s", im->prefixes[d], ETRT_ONNX_STR_ARGS(name));
    if (n > 0 && (size_t)n < sizeof buf && (*out = etrt_ir_find_value(g, buf)) >= 0) return ETRT_OK;
  }
  *out = etrt_ir_find_value_n(g, name.data, name.size);
  if (*out >= 0 || im->parent == NULL) return ETRT_OK;
  int32_t outer;
  ETRT_RETURN_IF_ERROR(etrt_import_resolve(im->parent, name, &outer));
  if (outer < 0) return ETRT_OK;
  const etrt_ir_value *ov = &im->parent->graph->values[outer];
  if (ov->is_constant) {
    ETRT_RETURN_IF_ERROR(etrt_ir_add_value(g, ov->name, out));
    return etrt_ir_set_constant(g, *out, ov->dtype, ov->rank, ov->max, ov->data, ov->nbytes);
  }
  etrt_import_captures *c = im->captures;
  uint32_t j = 0;
  while (j < c->count && c->values[j] != outer) ++j;
  if (j == c->count) {
    if (c->count == ETRT_IMPORT_MAX_CAPTURES)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: its bodies read more than %d outer values",
                        im->label, ETRT_IMPORT_MAX_CAPTURES);
    c->values[c->count++] = outer;
    im->body_capture[j] = -1;
  }
  if (im->body_capture[j] < 0)
    ETRT_RETURN_IF_ERROR(etrt_ir_add_value(g, ov->name, &im->body_capture[j]));
  *out = im->body_capture[j];
  return ETRT_OK;
}

static etrt_status etrt_import_resolve_cb(void *user, etrt_onnx_str name, int32_t *out) {
  return etrt_import_resolve(user, name, out);
}

/* The exact values --shape-values gives graph input `name` ("NAME:V1,V2,..."), at most
 * `max` of them, if any. */
static bool etrt_import_spec_values(const etrt_import *im, const char *name, int64_t *values,
                                    size_t max, size_t *count) {
  size_t n = strlen(name);
  for (uint32_t i = 0; i < im->num_shape_values; ++i) {
    const char *spec = im->shape_values[i];
    if (strncmp(spec, name, n) != 0 || spec[n] != ':') continue;
    const char *text = spec + n + 1;
    *count = 0;
    while (*text != '\0' && *count < max) {
      char *end;
      long long v = strtoll(text, &end, 10);
      if (end == text || (*end != ',' && *end != '\0')) break;
      values[(*count)++] = v;
      text = *end == ',' ? end + 1 : end;
    }
    if (*text == '\0' && *count > 0) return true;
  }
  return false;
}

static bool etrt_import_spec_value(const etrt_import *im, const char *name, int64_t *out) {
  size_t count;
  return etrt_import_spec_values(im, name, out, 1, &count) && count == 1;
}

/* Marks graph input `x` as read at import with those values. */
static etrt_status etrt_import_mark_values(etrt_import *im, etrt_ir_value *x, const int64_t *values,
                                           size_t count) {
  if (x->value_min != NULL) return ETRT_OK;
  int64_t *copy = etrt_ir_alloc(im->graph, count * sizeof *copy);
  if (copy == NULL) return etrt_import_oom();
  memcpy(copy, values, count * sizeof *copy);
  x->value_min = x->value_max = copy;
  x->value_count = (int64_t)count;
  x->values_from_import = true;
  return ETRT_OK;
}

etrt_status etrt_import_known_values(etrt_import *im, int32_t value, int64_t *values, size_t max,
                                     size_t *count, bool *known) {
  *known = false;
  etrt_ir_value *x = &im->graph->values[value];
  if (im->parent != NULL || x->input_index < 0 || x->rank != 1 ||
      (x->dtype != ETRT_DTYPE_INT64 && x->dtype != ETRT_DTYPE_INT32) ||
      !etrt_import_spec_values(im, x->name, values, max, count) ||
      (x->min[0] >= 0 && x->min[0] == x->max[0] && x->min[0] != (int64_t)*count))
    return ETRT_OK;
  *known = true;
  return etrt_import_mark_values(im, x, values, *count);
}

etrt_status etrt_import_known(etrt_import *im, int32_t value, bool *known, int64_t *out) {
  etrt_ir_graph *g = im->graph;
  bool negate = false;
  *known = false;
  for (int hops = 0; value >= 0 && hops < 64; ++hops) {
    etrt_ir_value *x = &g->values[value];
    int64_t v;
    if (x->is_constant) {
      if (x->dtype == ETRT_DTYPE_BOOL && x->nbytes == 1) {
        v = *(const uint8_t *)x->data != 0;
      } else if (x->dtype == ETRT_DTYPE_INT64 && x->nbytes == 8) {
        memcpy(&v, x->data, 8);
      } else if (x->dtype == ETRT_DTYPE_INT32 && x->nbytes == 4) {
        int32_t i;
        memcpy(&i, x->data, 4);
        v = i;
      } else {
        return ETRT_OK;
      }
      *known = true;
      *out = negate ? !v : v;
      return ETRT_OK;
    }
    if (x->producer < 0) {
      bool scalar = x->rank == 0 || (x->rank == 1 && x->min[0] == 1 && x->max[0] == 1);
      bool typed = x->dtype == ETRT_DTYPE_BOOL || x->dtype == ETRT_DTYPE_INT64 ||
                   x->dtype == ETRT_DTYPE_INT32;
      if (im->parent != NULL || x->input_index < 0 || !scalar || !typed ||
          !etrt_import_spec_value(im, x->name, &v))
        return ETRT_OK;
      ETRT_RETURN_IF_ERROR(etrt_import_mark_values(im, x, &v, 1));
      *known = true;
      *out = negate ? !v : v;
      return ETRT_OK;
    }
    const etrt_ir_node *p = &g->nodes[x->producer];
    if (p->num_inputs != 1 ||
        (strcmp(p->op_type, "Identity") != 0 && strcmp(p->op_type, "Not") != 0))
      return ETRT_OK;
    if (strcmp(p->op_type, "Not") == 0) negate = !negate;
    value = p->inputs[0];
  }
  return ETRT_OK;
}

static etrt_status etrt_import_known_cb(void *user, int32_t value, bool *known, int64_t *out) {
  return etrt_import_known(user, value, known, out);
}

static etrt_status etrt_import_known_values_cb(void *user, int32_t value, int64_t *values,
                                               size_t max, size_t *count, bool *known) {
  return etrt_import_known_values(user, value, values, max, count, known);
}

/* ---- the node under construction ------------------------------------------------- */

#define ETRT_IMPORT_MAX_ARGS 1024

typedef struct etrt_import_node {
  char label[320];
  const char *op_type;
  const char *name;
  uint32_t num_inputs, num_outputs, num_attributes;
  int32_t inputs[ETRT_IMPORT_MAX_ARGS];
  int32_t *outputs;
  etrt_attribute *attributes;
} etrt_import_node;

static void etrt_import_drop_attribute(etrt_import_node *n, const char *name) {
  for (uint32_t i = 0; i < n->num_attributes; ++i) {
    if (strcmp(n->attributes[i].name, name) != 0) continue;
    n->attributes[i] = n->attributes[--n->num_attributes];
    return;
  }
}

static const etrt_attribute *etrt_import_find_attribute(const etrt_import_node *n,
                                                        const char *name) {
  for (uint32_t i = 0; i < n->num_attributes; ++i)
    if (strcmp(n->attributes[i].name, name) == 0) return &n->attributes[i];
  return NULL;
}

/* Sets input `index` (padding skipped optional inputs with -1). */
static etrt_status etrt_import_set_input(etrt_import_node *n, uint32_t index, int32_t value) {
  if (index >= ETRT_IMPORT_MAX_ARGS)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: too many inputs", n->label);
  while (n->num_inputs < index) n->inputs[n->num_inputs++] = -1;
  n->inputs[index] = value;
  if (n->num_inputs <= index) n->num_inputs = index + 1;
  return ETRT_OK;
}

/* An INTS attribute that a later opset made input `index`: moved there as an int64
 * constant (absent attribute: the input stays omitted). */
static etrt_status etrt_import_ints_to_input(etrt_import *im, etrt_import_node *n,
                                             const char *attribute, uint32_t index) {
  const etrt_attribute *a = etrt_import_find_attribute(n, attribute);
  if (a == NULL) return ETRT_OK;
  if (a->kind != ETRT_ATTRIBUTE_INTS && a->kind != ETRT_ATTRIBUTE_INT)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: attribute '%s' must be INTS", n->label,
                      attribute);
  if (n->num_inputs > index && n->inputs[index] >= 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: '%s' is given both as attribute and input",
                      n->label, attribute);
  char base[300];
  snprintf(base, sizeof base, "%s_%s", n->name, attribute);
  int32_t value;
  if (a->kind == ETRT_ATTRIBUTE_INT)
    ETRT_RETURN_IF_ERROR(etrt_import_i64_constant(im, base, &a->i, 1, 1, &value));
  else
    ETRT_RETURN_IF_ERROR(etrt_import_i64_constant(im, base, a->ints, (size_t)a->count, 1, &value));
  etrt_import_drop_attribute(n, attribute);
  return etrt_import_set_input(n, index, value);
}

/* Before opset 20 DFT's axis was an attribute, 1 when absent; from opset 20 it is
 * input 2, -2 when omitted: moved there as an int64 scalar constant. */
static etrt_status etrt_import_dft_axis(etrt_import *im, etrt_import_node *n) {
  const etrt_attribute *a = etrt_import_find_attribute(n, "axis");
  if (a != NULL && a->kind != ETRT_ATTRIBUTE_INT)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: attribute 'axis' must be INT", n->label);
  int64_t axis = a != NULL ? a->i : 1;
  if (n->num_inputs > 2 && n->inputs[2] >= 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: an opset %lld DFT has no axis input",
                      n->label, (long long)im->graph->opset);
  char base[300];
  snprintf(base, sizeof base, "%s_axis", n->name);
  int32_t value;
  ETRT_RETURN_IF_ERROR(etrt_import_i64_constant(im, base, &axis, 1, 0, &value));
  if (a != NULL) etrt_import_drop_attribute(n, "axis");
  return etrt_import_set_input(n, 2, value);
}

static bool etrt_import_is_reduce(const char *op) {
  static const char *const reduces[] = {"ReduceMean",   "ReduceMax",       "ReduceMin",
                                        "ReduceProd",   "ReduceL1",        "ReduceL2",
                                        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  for (size_t i = 0; i < sizeof reduces / sizeof reduces[0]; ++i)
    if (strcmp(op, reduces[i]) == 0) return true;
  return false;
}

static bool etrt_import_is_legacy_broadcast(const char *op) {
  static const char *const ops[] = {"Add", "Sub", "Mul",   "Div",     "Pow", "And",
                                    "Or",  "Xor", "Equal", "Greater", "Less"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

/* Before opset 7 binary operations broadcast only when asked (`broadcast`), B
 * aligned at `axis` of A, or at A's last axes without one. Numpy broadcasting, which
 * the engine implements, covers both flags where B is aligned at the last axes; B
 * aligned elsewhere is refused. */
static etrt_status etrt_import_legacy_broadcast(etrt_import *im, etrt_import_node *n) {
  const etrt_attribute *axis = etrt_import_find_attribute(n, "axis");
  const etrt_attribute *broadcast = etrt_import_find_attribute(n, "broadcast");
  if (axis != NULL && broadcast != NULL && broadcast->i != 0) {
    const etrt_ir_value *a =
        n->num_inputs > 0 && n->inputs[0] >= 0 ? &im->graph->values[n->inputs[0]] : NULL;
    const etrt_ir_value *b =
        n->num_inputs > 1 && n->inputs[1] >= 0 ? &im->graph->values[n->inputs[1]] : NULL;
    int64_t at = axis->i;
    if (a != NULL && a->rank >= 0 && at < 0) at += a->rank;
    bool suffix = a != NULL && b != NULL && a->rank >= 0 && b->rank >= 0 && at == a->rank - b->rank;
    if (!suffix)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s: opset %lld broadcasting B at axis %lld of A, not at A's last axes (or "
                        "with ranks unknown at import), is not supported",
                        n->label, (long long)im->graph->opset, (long long)axis->i);
  }
  etrt_import_drop_attribute(n, "axis");
  etrt_import_drop_attribute(n, "broadcast");
  return ETRT_OK;
}

/* Adds `attribute` to a node that lacks it: the default of an earlier opset. */
static etrt_status etrt_import_default_attribute(etrt_import *im, etrt_import_node *n,
                                                 etrt_attribute attribute) {
  if (etrt_import_find_attribute(n, attribute.name) != NULL) return ETRT_OK;
  etrt_attribute *grown = etrt_ir_alloc(im->graph, (n->num_attributes + 1) * sizeof *grown);
  if (grown == NULL) return etrt_import_oom();
  if (n->num_attributes) memcpy(grown, n->attributes, n->num_attributes * sizeof *grown);
  grown[n->num_attributes++] = attribute;
  n->attributes = grown;
  return ETRT_OK;
}

/* Rewrites attributes that later opsets turned into inputs, so that the engine only
 * ever sees the newest form. */
static etrt_status etrt_import_upgrade(etrt_import *im, etrt_import_node *n) {
  int64_t opset = im->graph->opset;
  const char *op = n->op_type;
  if (opset < 7 && etrt_import_is_legacy_broadcast(op)) return etrt_import_legacy_broadcast(im, n);
  /* C broadcasts to (M, N) from opset 7 on; before, `broadcast` only allowed it. */
  if (strcmp(op, "Gemm") == 0 && opset < 7) etrt_import_drop_attribute(n, "broadcast");
  if ((strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0) && opset < 13)
    return etrt_import_ints_to_input(im, n, "axes", 1);
  if (strcmp(op, "Split") == 0 && opset < 13) return etrt_import_ints_to_input(im, n, "split", 1);
  if (strcmp(op, "ReduceSum") == 0 && opset < 13)
    return etrt_import_ints_to_input(im, n, "axes", 1);
  if (etrt_import_is_reduce(op) && opset < 18) return etrt_import_ints_to_input(im, n, "axes", 1);
  if (strcmp(op, "Reshape") == 0 && opset < 5) return etrt_import_ints_to_input(im, n, "shape", 1);
  if (strcmp(op, "TopK") == 0 && opset < 10) return etrt_import_ints_to_input(im, n, "k", 1);
  if (strcmp(op, "DFT") == 0 && opset < 20) return etrt_import_dft_axis(im, n);
  if (strcmp(op, "Slice") == 0 && opset < 10) {
    ETRT_RETURN_IF_ERROR(etrt_import_ints_to_input(im, n, "starts", 1));
    ETRT_RETURN_IF_ERROR(etrt_import_ints_to_input(im, n, "ends", 2));
    return etrt_import_ints_to_input(im, n, "axes", 3);
  }
  if (strcmp(op, "Pad") == 0 && opset < 11) {
    /* Opset 1 called the attribute "paddings". */
    const etrt_attribute *old = etrt_import_find_attribute(n, "paddings");
    if (old != NULL) ((etrt_attribute *)old)->name = "pads";
    ETRT_RETURN_IF_ERROR(etrt_import_ints_to_input(im, n, "pads", 1));
    const etrt_attribute *value = etrt_import_find_attribute(n, "value");
    if (value != NULL && value->kind == ETRT_ATTRIBUTE_FLOAT) {
      char base[300];
      snprintf(base, sizeof base, "%s_value", n->name);
      int32_t v;
      ETRT_RETURN_IF_ERROR(etrt_import_f32_constant(im, base, value->f, &v));
      etrt_import_drop_attribute(n, "value");
      return etrt_import_set_input(n, 2, v);
    }
    return ETRT_OK;
  }
  /* Before opset 4 Concat's axis defaulted to 1. */
  if (strcmp(op, "Concat") == 0 && opset < 4)
    return etrt_import_default_attribute(
        im, n, (etrt_attribute){.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = 1});
  /* Opset 16 gave RoiAlign coordinate_transformation_mode, whose default (half_pixel)
   * moves the regions by half a pixel; before, they were taken as they are. */
  if (strcmp(op, "RoiAlign") == 0 && opset < 16)
    return etrt_import_default_attribute(im, n,
                                         (etrt_attribute){.name = "coordinate_transformation_mode",
                                                          .kind = ETRT_ATTRIBUTE_STRING,
                                                          .s = "output_half_pixel"});
  return ETRT_OK;
}

static bool etrt_import_is_softmax_family(const char *op) {
  return strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0 || strcmp(op, "Hardmax") == 0;
}

/* A Constant node: its value becomes the output's constant data. */
static etrt_status etrt_import_constant_node(etrt_import *im, const etrt_onnx_node *node,
                                             const char *label, int32_t output) {
  if (node->attribute_count != 1)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: a Constant needs exactly one attribute",
                      label);
  const etrt_onnx_attribute *a = &node->attributes[0];
  etrt_ir_graph *g = im->graph;
  if (etrt_onnx_str_eq(a->name, "value")) {
    if (a->t == NULL)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: attribute 'value' holds no tensor", label);
    etrt_onnx_host_tensor host;
    etrt_status status = etrt_import_tensor(im, a->t, &host);
    if (status != ETRT_OK) return etrt_error_context(status, "%s: ", label);
    return etrt_ir_set_constant(g, output, host.dtype, host.rank, host.dims, host.data,
                                host.nbytes);
  }
  if (etrt_onnx_str_eq(a->name, "value_float") || etrt_onnx_str_eq(a->name, "value_floats")) {
    bool scalar = etrt_onnx_str_eq(a->name, "value_float");
    size_t count = scalar ? 1 : a->float_count;
    float *data = etrt_ir_alloc(g, count * sizeof *data);
    if (data == NULL) return etrt_import_oom();
    if (scalar)
      data[0] = a->f;
    else if (count)
      memcpy(data, a->floats, count * sizeof *data);
    int64_t dims[1] = {(int64_t)count};
    return etrt_ir_set_constant(g, output, ETRT_DTYPE_FLOAT32, scalar ? 0 : 1, dims, data,
                                count * sizeof *data);
  }
  if (etrt_onnx_str_eq(a->name, "value_int") || etrt_onnx_str_eq(a->name, "value_ints")) {
    bool scalar = etrt_onnx_str_eq(a->name, "value_int");
    size_t count = scalar ? 1 : a->int_count;
    int64_t *data = etrt_ir_alloc(g, count * sizeof *data);
    if (data == NULL) return etrt_import_oom();
    if (scalar)
      data[0] = a->i;
    else if (count)
      memcpy(data, a->ints, count * sizeof *data);
    int64_t dims[1] = {(int64_t)count};
    return etrt_ir_set_constant(g, output, ETRT_DTYPE_INT64, scalar ? 0 : 1, dims, data,
                                count * sizeof *data);
  }
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: a Constant given as '%.*s' is not supported",
                    label, ETRT_ONNX_STR_ARGS(a->name));
}

/* Whether a Dropout input is a constant whose first element is zero (false, or a
 * ratio of 0); *known says whether it is a constant at all. */
static bool etrt_import_constant_zero(const etrt_ir_graph *g, int32_t value, bool *known) {
  const etrt_ir_value *v = &g->values[value];
  *known = v->is_constant && v->nbytes > 0 && etrt_ir_value_numel(v) >= 1;
  if (!*known) return false;
  if (v->dtype == ETRT_DTYPE_BOOL) return ((const uint8_t *)v->data)[0] == 0;
  if (v->dtype == ETRT_DTYPE_FLOAT32) {
    float f;
    memcpy(&f, v->data, sizeof f);
    return f == 0.0f;
  }
  if (v->dtype == ETRT_DTYPE_FLOAT64) {
    double d;
    memcpy(&d, v->data, sizeof d);
    return d == 0.0;
  }
  *known = false;
  return false;
}

/* Dropout at inference is the identity: an Identity (which the identity pass then
 * drops) and, where the mask output is named, an all-true mask of the input's shape
 * (Shape, then ConstantOfShape). A training_mode that is on, or known only at run
 * time, needs the engine's Dropout (ops/random.h), unless the ratio is a constant 0. */
static etrt_status etrt_import_dropout(etrt_import *im, etrt_import_node *n) {
  etrt_ir_graph *g = im->graph;
  if (n->num_inputs < 1 || n->inputs[0] < 0 || n->num_outputs < 1)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: Dropout needs its input and output",
                      n->label);
  if (n->num_inputs > 2 && n->inputs[2] >= 0) {
    bool mode_known, ratio_known = false;
    bool inference = etrt_import_constant_zero(g, n->inputs[2], &mode_known);
    bool no_drop = n->inputs[1] >= 0 && etrt_import_constant_zero(g, n->inputs[1], &ratio_known);
    if (!inference && !no_drop)
      return etrt_ir_add_node(g, n->op_type, "", n->name, n->num_inputs, n->inputs, n->num_outputs,
                              n->outputs, n->num_attributes, n->attributes, NULL);
  }
  int32_t x = n->inputs[0];
  if (n->outputs[0] >= 0)
    ETRT_RETURN_IF_ERROR(
        etrt_ir_add_node(g, "Identity", "", n->name, 1, &x, 1, n->outputs, 0, NULL, NULL));
  if (n->num_outputs < 2 || n->outputs[1] < 0) return ETRT_OK;
  if (g->opset < 10)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: the mask output of an opset %lld Dropout (of the input's type) is not "
                      "supported; from opset 10 on it is bool",
                      n->label, (long long)g->opset);
  char base[300];
  snprintf(base, sizeof base, "%s/mask_shape", n->name);
  int32_t shape;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(g, base, &shape));
  ETRT_RETURN_IF_ERROR(etrt_ir_add_node(g, "Shape", "", base, 1, &x, 1, &shape, 0, NULL, NULL));
  uint8_t *one = etrt_ir_alloc(g, 1);
  if (one == NULL) return etrt_import_oom();
  one[0] = 1;
  etrt_attribute value = {
      .name = "value",
      .kind = ETRT_ATTRIBUTE_TENSOR,
      .tensor = {.data = one, .dtype = ETRT_DTYPE_BOOL, .rank = 1, .sizes = {1}}};
  snprintf(base, sizeof base, "%s/mask", n->name);
  return etrt_ir_add_node(g, "ConstantOfShape", "", base, 1, &shape, 1, &n->outputs[1], 1, &value,
                          NULL);
}

static bool etrt_import_default_domain(etrt_onnx_str domain) {
  return domain.size == 0 || etrt_onnx_str_eq(domain, "ai.onnx");
}

/* ---- control flow ------------------------------------------------------------------ */

/* How deep bodies may nest below the main graph (the engine's limit). */
#define ETRT_IMPORT_MAX_DEPTH 8

static etrt_status etrt_import_graph(etrt_import *im, const etrt_onnx_graph *og);

static bool etrt_import_is_control(const char *op) {
  return strcmp(op, "If") == 0 || strcmp(op, "Loop") == 0 || strcmp(op, "Scan") == 0;
}

/* Checks a node's and its bodies' input and output counts. */
static etrt_status etrt_import_control_counts(const etrt_import_node *n, etrt_import **bodies,
                                              const char *const *names, uint32_t count,
                                              bool batched) {
  if (count == 2) {
    for (uint32_t b = 0; b < 2; ++b) {
      const etrt_ir_graph *g = bodies[b]->graph;
      if (g->num_inputs != 0)
        return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: %s takes %u inputs; a branch takes none",
                          n->label, names[b], g->num_inputs);
    }
    uint32_t t = bodies[0]->graph->num_outputs, e = bodies[1]->graph->num_outputs;
    if (t != e || t != n->num_outputs)
      return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                        "%s: then_branch has %u outputs and else_branch %u; the node has %u",
                        n->label, t, e, n->num_outputs);
    return ETRT_OK;
  }
  const etrt_ir_graph *g = bodies[0]->graph;
  bool loop = strcmp(n->op_type, "Loop") == 0;
  uint32_t want_in = n->num_inputs - (batched ? 1u : 0u);
  uint32_t want_out = n->num_outputs + (loop ? 1u : 0u);
  if (g->num_inputs != want_in || g->num_outputs != want_out)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s: the body has %u inputs and %u outputs; the node's %u inputs and %u "
                      "outputs need %u and %u",
                      n->label, g->num_inputs, g->num_outputs, n->num_inputs, n->num_outputs,
                      want_in, want_out);
  return ETRT_OK;
}

/* If, Loop and Scan: each body imported into a graph of its own; the values of this
 * graph they read become the node's last inputs and every body's last inputs. */
static etrt_status etrt_import_control(etrt_import *im, const etrt_onnx_node *node,
                                       etrt_import_node *n) {
  etrt_ir_graph *g = im->graph;
  static const char *const branch_names[2] = {"then_branch", "else_branch"};
  static const char *const body_names[1] = {"body"};
  bool is_if = strcmp(n->op_type, "If") == 0;
  const char *const *names = is_if ? branch_names : body_names;
  uint32_t count = is_if ? 2 : 1;
  bool batched = strcmp(n->op_type, "Scan") == 0 && g->opset < 9;
  if (im->depth >= ETRT_IMPORT_MAX_DEPTH)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: subgraphs nest deeper than %d levels", n->label,
                      ETRT_IMPORT_MAX_DEPTH);
  etrt_import_captures *captures = calloc(1, sizeof *captures);
  etrt_import *bodies[2] = {NULL, NULL};
  etrt_status status = captures != NULL ? ETRT_OK : etrt_import_oom();
  for (uint32_t b = 0; b < count && status == ETRT_OK; ++b) {
    const etrt_onnx_attribute *a = etrt_onnx_node_attr(node, names[b]);
    if (a == NULL || a->type != ETRT_ONNX_ATTR_GRAPH || a->g == NULL) {
      status = etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: the subgraph attribute '%s' is missing",
                          n->label, names[b]);
      break;
    }
    bodies[b] = calloc(1, sizeof *bodies[b]);
    if (bodies[b] == NULL || (status = etrt_ir_graph_create(&bodies[b]->graph)) != ETRT_OK) {
      if (status == ETRT_OK) status = etrt_import_oom();
      break;
    }
    etrt_import *child = bodies[b];
    child->model = im->model;
    child->graph->opset = g->opset;
    child->parent = im;
    child->captures = captures;
    child->depth = im->depth + 1;
    child->label = n->label;
    for (uint32_t j = 0; j < ETRT_IMPORT_MAX_CAPTURES; ++j) child->body_capture[j] = -1;
    status = etrt_import_graph(child, a->g);
    if (status != ETRT_OK) status = etrt_error_context(status, "%s: %s: ", n->label, names[b]);
  }
  if (status == ETRT_OK) status = etrt_import_control_counts(n, bodies, names, count, batched);
  /* Every body takes every capture, in the node's order (unread ones too). */
  for (uint32_t b = 0; b < count && status == ETRT_OK; ++b) {
    etrt_ir_graph *body = bodies[b]->graph;
    for (uint32_t j = 0; j < captures->count && status == ETRT_OK; ++j) {
      int32_t id = bodies[b]->body_capture[j];
      if (id < 0) status = etrt_ir_add_value_unique(body, g->values[captures->values[j]].name, &id);
      if (status == ETRT_OK) status = etrt_ir_add_input(body, id);
    }
    if (status == ETRT_OK) status = etrt_ir_sort(body);
    if (status != ETRT_OK) status = etrt_error_context(status, "%s: %s: ", n->label, names[b]);
  }
  if (status == ETRT_OK && n->num_inputs + captures->count > ETRT_IMPORT_MAX_ARGS)
    status = etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: too many inputs", n->label);
  for (uint32_t j = 0; status == ETRT_OK && j < captures->count; ++j)
    n->inputs[n->num_inputs++] = captures->values[j];
  for (size_t i = 0; i < node->attribute_count && status == ETRT_OK; ++i) {
    const etrt_onnx_attribute *a = &node->attributes[i];
    if (a->type == ETRT_ONNX_ATTR_GRAPH) continue;
    status = etrt_import_attribute(im, n->label, a, &n->attributes[n->num_attributes]);
    if (status == ETRT_OK) n->num_attributes++;
  }
  etrt_attribute extra[2] = {{.name = "_captures",
                              .kind = ETRT_ATTRIBUTE_INT,
                              .i = captures != NULL ? captures->count : 0},
                             {.name = "_batched", .kind = ETRT_ATTRIBUTE_INT, .i = 1}};
  etrt_attribute *attributes =
      status == ETRT_OK ? etrt_ir_alloc(g, (n->num_attributes + 2) * sizeof *attributes) : NULL;
  if (status == ETRT_OK && attributes == NULL) status = etrt_import_oom();
  int32_t id = -1;
  if (status == ETRT_OK) {
    if (n->num_attributes)
      memcpy(attributes, n->attributes, n->num_attributes * sizeof *attributes);
    uint32_t na = n->num_attributes;
    attributes[na++] = extra[0];
    if (batched) attributes[na++] = extra[1];
    status = etrt_ir_add_node(g, n->op_type, "", n->name, n->num_inputs, n->inputs, n->num_outputs,
                              n->outputs, na, attributes, &id);
  }
  etrt_ir_graph **graphs = status == ETRT_OK ? etrt_ir_alloc(g, count * sizeof *graphs) : NULL;
  if (status == ETRT_OK && graphs == NULL) status = etrt_import_oom();
  if (status == ETRT_OK) {
    etrt_ir_node *made = &g->nodes[id];
    for (uint32_t b = 0; b < count; ++b) {
      graphs[b] = bodies[b]->graph;
      bodies[b]->graph = NULL; /* the node owns it now */
    }
    made->bodies = graphs;
    made->body_names = (const char **)names;
    made->num_bodies = count;
    made->num_captures = captures->count;
  }
  for (uint32_t b = 0; b < count; ++b) {
    if (bodies[b] != NULL) etrt_ir_graph_destroy(bodies[b]->graph);
    free(bodies[b]);
  }
  free(captures);
  return status;
}

etrt_status etrt_import_node_add(etrt_import *im, const etrt_onnx_node *node, size_t index) {
  etrt_ir_graph *g = im->graph;
  etrt_import_node *n = calloc(1, sizeof *n);
  if (n == NULL) return etrt_import_oom();
  etrt_status status = ETRT_OK;
  etrt_import_node_label(node, index, n->label, sizeof n->label);
  bool contrib = etrt_onnx_str_eq(node->domain, "com.microsoft");
  if (contrib) {
    char op[128];
    snprintf(op, sizeof op, "%.*s", ETRT_ONNX_STR_ARGS(node->op_type));
    if (!etrt_import_contrib_known(op)) {
      status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s: operator '%s' of domain 'com.microsoft' is not supported (etrt "
                          "imports the com.microsoft operators Gelu, FastGelu, BiasGelu, "
                          "SkipLayerNormalization, Attention, QGemm, QLinearAdd, QLinearMul, "
                          "QLinearGlobalAveragePool, QLinearSoftmax, DynamicQuantizeMatMul, "
                          "QuantizeLinear and "
                          "DequantizeLinear)",
                          n->label, op);
      goto done;
    }
  } else if (!etrt_import_default_domain(node->domain)) {
    status =
        etrt_error(ETRT_ERROR_UNSUPPORTED,
                   "%s: operator '%.*s' of domain '%.*s' is not supported (etrt imports the "
                   "default ONNX domain and some com.microsoft operators)",
                   n->label, ETRT_ONNX_STR_ARGS(node->op_type), ETRT_ONNX_STR_ARGS(node->domain));
    goto done;
  }
  if (node->input_count > ETRT_IMPORT_MAX_ARGS || node->output_count > ETRT_IMPORT_MAX_ARGS) {
    status = etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: more than %d inputs or outputs", n->label,
                        ETRT_IMPORT_MAX_ARGS);
    goto done;
  }
  n->op_type = etrt_import_str(im, node->op_type);
  n->name = node->name.size ? etrt_ir_printf(g, "%s%.*s", im->prefix ? im->prefix : "",
                                             ETRT_ONNX_STR_ARGS(node->name))
                            : etrt_ir_printf(g, "%s%s_%zu", im->prefix ? im->prefix : "",
                                             n->op_type ? n->op_type : "", index);
  n->outputs = etrt_ir_alloc(g, (node->output_count + 1) * sizeof *n->outputs);
  n->attributes = etrt_ir_alloc(g, (node->attribute_count + 1) * sizeof *n->attributes);
  if (!n->op_type || !n->name || !n->outputs || !n->attributes) {
    status = etrt_import_oom();
    goto done;
  }
  n->num_outputs = (uint32_t)node->output_count;
  for (size_t i = 0; i < node->output_count; ++i)
    n->outputs[i] = node->outputs[i].size ? etrt_import_find_local(im, node->outputs[i]) : -1;
  if (!contrib && strcmp(n->op_type, "SequenceMap") == 0) {
    status = etrt_import_sequence_map(im, node, n->label, n->outputs);
    goto done;
  }
  if (!contrib && strcmp(n->op_type, "Loop") == 0 && etrt_import_loop_carries_list(im, node)) {
    status = etrt_import_loop_unroll(im, node, n->label, n->outputs);
    goto done;
  }
  if (!contrib && strcmp(n->op_type, "If") == 0 && etrt_import_if_gives_list(node)) {
    status = etrt_import_if_inline(im, node, n->label, n->outputs);
    goto done;
  }
  if (!contrib && etrt_import_sequence_handles(&im->lists, node)) {
    status =
        etrt_import_sequence_node(g, &im->lists, node, n->label, n->outputs, etrt_import_resolve_cb,
                                  etrt_import_known_cb, etrt_import_known_values_cb, im);
    goto done;
  }
  if (strcmp(n->op_type, "Constant") == 0) {
    if (node->output_count != 1 || n->outputs[0] < 0) {
      status = etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: a Constant has one output", n->label);
      goto done;
    }
    status = etrt_import_constant_node(im, node, n->label, n->outputs[0]);
    goto done;
  }
  for (size_t i = 0; i < node->input_count; ++i) {
    etrt_onnx_str name = node->inputs[i];
    int32_t value = -1;
    if (name.size) {
      status = etrt_import_resolve(im, name, &value);
      if (status != ETRT_OK) goto done;
      if (value < 0) {
        status = etrt_error(ETRT_ERROR_INVALID_FORMAT,
                            "%s reads '%.*s', which no node, input or initializer defines",
                            n->label, ETRT_ONNX_STR_ARGS(name));
        goto done;
      }
    }
    n->inputs[n->num_inputs++] = value;
  }
  if (etrt_import_is_control(n->op_type)) {
    status = etrt_import_control(im, node, n);
    goto done;
  }
  for (size_t i = 0; i < node->attribute_count; ++i) {
    status = etrt_import_attribute(im, n->label, &node->attributes[i], &n->attributes[i]);
    if (status != ETRT_OK) goto done;
    n->num_attributes++;
  }
  if (contrib) {
    status = etrt_import_contrib(g, n->label, n->op_type, n->name, n->num_inputs, n->inputs,
                                 n->num_outputs, n->outputs, n->num_attributes, n->attributes);
    goto done;
  }
  status = etrt_import_upgrade(im, n);
  if (status != ETRT_OK) goto done;
  if (strcmp(n->op_type, "Dropout") == 0) {
    status = etrt_import_dropout(im, n);
    goto done;
  }
  if (etrt_import_is_softmax_family(n->op_type) && g->opset < 13) {
    /* Before opset 13 these work on the input coerced to 2-D at `axis`; the engine's
     * definitions (src/engine/ops/softmax.c) take the opset as "_opset". */
    n->attributes[n->num_attributes++] =
        (etrt_attribute){.name = "_opset", .kind = ETRT_ATTRIBUTE_INT, .i = g->opset};
  }
  status = etrt_ir_add_node(g, n->op_type, "", n->name, n->num_inputs, n->inputs, n->num_outputs,
                            n->outputs, n->num_attributes, n->attributes, NULL);
done:
  free(n);
  return status;
}

/* ---- graph inputs ---------------------------------------------------------------- */

static etrt_status etrt_import_input(etrt_import *im, const etrt_onnx_value_info *info) {
  etrt_ir_graph *g = im->graph;
  char *name = etrt_import_str(im, info->name);
  if (name == NULL) return etrt_import_oom();
  if (info->kind == ETRT_ONNX_TYPE_SEQUENCE || info->kind == ETRT_ONNX_TYPE_OPTIONAL) {
    const char *spec = NULL;
    size_t n = strlen(name);
    for (uint32_t i = 0; i < im->num_sequences; ++i) {
      const char *colon = strrchr(im->sequences[i], ':');
      if (colon != NULL && (size_t)(colon - im->sequences[i]) == n &&
          memcmp(im->sequences[i], name, n) == 0)
        spec = colon + 1;
    }
    return etrt_import_sequence_input(im->graph, &im->lists, info, spec);
  }
  if (info->kind != ETRT_ONNX_TYPE_TENSOR)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "input '%s' is not a tensor (map and sparse inputs are not supported)", name);
  etrt_dtype dtype;
  etrt_status status = etrt_onnx_dtype_to_etrt(info->elem_type, &dtype);
  if (status != ETRT_OK) return etrt_error_context(status, "input '%s': ", name);
  if (info->has_shape && info->rank > ETRT_MAX_RANK)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "input '%s' has rank %zu; etrt supports up to %d",
                      name, info->rank, ETRT_MAX_RANK);
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value(g, name, &id));
  etrt_ir_value *v = &g->values[id];
  v->dtype = dtype;
  v->rank = info->has_shape ? (int32_t)info->rank : -1;
  for (int32_t i = 0; i < v->rank; ++i) {
    const etrt_onnx_dim *d = &info->dims[i];
    if (d->has_value && d->value >= 0) {
      v->min[i] = v->max[i] = d->value;
    } else {
      /* Unbounded until --shape gives bounds (a symbol) or a size. */
      v->min[i] = v->max[i] = -1;
      v->symbol[i] = d->param.size ? etrt_import_str(im, d->param) : NULL;
      if (d->param.size && v->symbol[i] == NULL) return etrt_import_oom();
    }
  }
  return etrt_ir_add_input(g, id);
}

static bool etrt_import_is_initializer(const etrt_onnx_graph *og, etrt_onnx_str name) {
  for (size_t i = 0; i < og->initializer_count; ++i) {
    etrt_onnx_str n = og->initializers[i].name;
    if (n.size == name.size && memcmp(n.data, name.data, n.size) == 0) return true;
  }
  return false;
}

/* A body's input: its type comes from what the node feeds it, at lowering. */
static etrt_status etrt_import_body_input(etrt_import *im, const etrt_onnx_value_info *info) {
  char *name = etrt_import_str(im, info->name);
  if (name == NULL) return etrt_import_oom();
  if (info->kind != ETRT_ONNX_TYPE_TENSOR && info->kind != ETRT_ONNX_TYPE_NONE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: body input '%s' is not a tensor (sequence, map and optional values "
                      "are not supported)",
                      im->label, name);
  int32_t id;
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value(im->graph, name, &id));
  return etrt_ir_add_input(im->graph, id);
}

/* Initializers, inputs, nodes and outputs of `og` into im->graph, sorted. */
static etrt_status etrt_import_graph(etrt_import *im, const etrt_onnx_graph *og) {
  const etrt_onnx_model *model = im->model;
  etrt_ir_graph *g = im->graph;
  etrt_status status = ETRT_OK;
  for (size_t i = 0; i < og->initializer_count && status == ETRT_OK; ++i) {
    const etrt_onnx_tensor *t = &og->initializers[i];
    char *name = etrt_import_str(im, t->name);
    int32_t id;
    etrt_onnx_host_tensor host;
    if (name == NULL) {
      status = etrt_import_oom();
    } else if ((status = etrt_ir_add_value(g, name, &id)) != ETRT_OK) {
      status = etrt_error_context(status, "initializer %zu: ", i);
    } else if ((status = etrt_import_tensor(im, t, &host)) != ETRT_OK) {
      status = etrt_error_context(status, "initializer '%s': ", name);
    } else {
      status =
          etrt_ir_set_constant(g, id, host.dtype, host.rank, host.dims, host.data, host.nbytes);
    }
  }
  /* Before IR version 4 every initializer was also listed as an input: such an
   * input is a constant, not something the caller passes. */
  for (size_t i = 0; i < og->input_count && status == ETRT_OK; ++i)
    if (im->parent != NULL)
      status = etrt_import_body_input(im, &og->inputs[i]);
    else if (!etrt_import_is_initializer(og, og->inputs[i].name))
      status = etrt_import_input(im, &og->inputs[i]);

  /* Every node output first, so that nodes may read values written by nodes listed
   * after them (the graph is sorted below). */
  for (size_t i = 0; i < og->node_count && status == ETRT_OK; ++i) {
    const etrt_onnx_node *node = &og->nodes[i];
    for (size_t k = 0; k < node->output_count && status == ETRT_OK; ++k) {
      if (node->outputs[k].size == 0) continue;
      char *name = etrt_import_str(im, node->outputs[k]);
      int32_t id;
      if (name == NULL) {
        status = etrt_import_oom();
      } else if ((status = etrt_ir_add_value(g, name, &id)) != ETRT_OK) {
        char label[320];
        etrt_import_node_label(node, i, label, sizeof label);
        status = etrt_error_context(status, "%s: ", label);
      }
    }
  }
  for (size_t i = 0; i < og->node_count && status == ETRT_OK; ++i) {
    const etrt_onnx_node *node = &og->nodes[i];
    for (size_t f = 0; f < etrt_onnx_model_function_count(model) && status == ETRT_OK; ++f) {
      etrt_onnx_str domain, name;
      etrt_onnx_model_function(model, f, &domain, &name);
      if (name.size == node->op_type.size &&
          memcmp(name.data, node->op_type.data, name.size) == 0 &&
          domain.size == node->domain.size &&
          memcmp(domain.data, node->domain.data, domain.size) == 0) {
        char label[320];
        etrt_import_node_label(node, i, label, sizeof label);
        status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                            "%s calls a model-local function, which etrt does not expand", label);
      }
    }
    if (status == ETRT_OK) status = etrt_import_node_add(im, node, i);
  }

  for (size_t i = 0; i < og->output_count && status == ETRT_OK; ++i) {
    etrt_onnx_str name = og->outputs[i].name;
    int32_t id = -1;
    const etrt_import_list *list = etrt_import_lists_find(&im->lists, name);
    if (list != NULL && im->parent != NULL) {
      status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s: body output '%.*s' is a sequence or optional (a body's outputs are "
                          "tensors)",
                          im->label, ETRT_ONNX_STR_ARGS(name));
      break;
    }
    if (list != NULL) {
      status = etrt_import_sequence_output(g, list);
      continue;
    }
    status = etrt_import_resolve(im, name, &id);
    if (status != ETRT_OK) break;
    if (id < 0) {
      status =
          etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s%soutput '%.*s' is not defined by the graph",
                     im->label != NULL ? im->label : "", im->label != NULL ? ": body " : "",
                     ETRT_ONNX_STR_ARGS(name));
    } else if (g->values[id].producer < 0 || etrt_ir_is_output(g, id)) {
      /* A graph input or a constant returned as it is (or a value returned twice): an
       * engine output is written by a node, so a copy writes it (the Identity pass keeps
       * such a copy). */
      int32_t copy;
      status = etrt_ir_add_value_unique(g, g->values[id].name, &copy);
      if (status == ETRT_OK)
        status = etrt_ir_add_node(g, "Identity", "", g->values[id].name, 1, &id, 1, &copy, 0, NULL,
                                  NULL);
      if (status == ETRT_OK) status = etrt_ir_add_output(g, copy, g->values[id].name);
    } else {
      status = etrt_ir_add_output(g, id, g->values[id].name);
    }
  }
  etrt_import_lists_free(&im->lists);
  if (status == ETRT_OK && g->num_outputs == 0)
    status =
        etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s%sthe graph has no outputs",
                   im->label != NULL ? im->label : "model", im->label != NULL ? ": body: " : ": ");
  /* A body is sorted once its captures are inputs (etrt_import_control). */
  if (status == ETRT_OK && im->parent == NULL) status = etrt_ir_sort(g);
  return status;
}

etrt_status etrt_import_onnx(const etrt_onnx_model *model, etrt_ir_graph **out) {
  etrt_import_options options = {0};
  return etrt_import_onnx_options(model, &options, out);
}

/* Whether --sequence `spec` names a sequence or optional input of the graph. */
static bool etrt_import_sequence_spec_used(const etrt_onnx_graph *og, const char *spec) {
  const char *colon = strrchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  for (size_t i = 0; i < og->input_count; ++i) {
    const etrt_onnx_value_info *in = &og->inputs[i];
    if ((in->kind == ETRT_ONNX_TYPE_SEQUENCE || in->kind == ETRT_ONNX_TYPE_OPTIONAL) &&
        in->name.size == n && memcmp(in->name.data, spec, n) == 0)
      return true;
  }
  return false;
}

etrt_status etrt_import_onnx_options(const etrt_onnx_model *model,
                                     const etrt_import_options *options, etrt_ir_graph **out) {
  const char *const *sequences = options->sequences;
  uint32_t num_sequences = options->num_sequences;
  *out = NULL;
  const etrt_onnx_graph *og = etrt_onnx_model_graph(model);
  int64_t opset = etrt_onnx_model_opset(model, "");
  if (opset < 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "model: no opset is imported for the default ONNX domain (opset_import)");
  for (uint32_t i = 0; i < num_sequences; ++i) {
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_spec_check(sequences[i]));
    if (!etrt_import_sequence_spec_used(og, sequences[i]))
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "sequence '%s': the model has no sequence or optional input of that name",
                        sequences[i]);
  }
  etrt_import im = {.model = model,
                    .sequences = sequences,
                    .num_sequences = num_sequences,
                    .shape_values = options->shape_values,
                    .num_shape_values = options->num_shape_values};
  ETRT_RETURN_IF_ERROR(etrt_ir_graph_create(&im.graph));
  im.graph->opset = opset;
  etrt_status status = etrt_import_graph(&im, og);
  if (status != ETRT_OK) {
    etrt_ir_graph_destroy(im.graph);
    return status;
  }
  *out = im.graph;
  return ETRT_OK;
}
