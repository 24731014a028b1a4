/* Sequence and optional values as lists of IR tensor values (import_sequence.h). */
#include "builder/import_sequence.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"

/* Longest sequence a --sequence spec may give: each element is a method input. */
#define ETRT_IMPORT_SEQUENCE_MAX 4096

static etrt_status etrt_import_sequence_oom(void) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "import: out of memory for a sequence");
}

void etrt_import_lists_free(etrt_import_lists *lists) {
  free(lists->items);
  memset(lists, 0, sizeof *lists);
}

const etrt_import_list *etrt_import_lists_find(const etrt_import_lists *lists, etrt_onnx_str name) {
  if (name.size == 0) return NULL;
  for (uint32_t i = lists->count; i-- > 0;) {
    const etrt_import_list *l = &lists->items[i];
    if (strlen(l->name) == name.size && memcmp(l->name, name.data, name.size) == 0) return l;
  }
  return NULL;
}

etrt_status etrt_import_lists_add(etrt_ir_graph *g, etrt_import_lists *lists, const char *name,
                                  etrt_import_list_kind kind, bool present, etrt_dtype dtype,
                                  const int32_t *elements, uint32_t count) {
  if (lists->count == lists->capacity) {
    uint32_t capacity = lists->capacity ? 2 * lists->capacity : 8;
    etrt_import_list *items = realloc(lists->items, capacity * sizeof *items);
    if (items == NULL) return etrt_import_sequence_oom();
    lists->items = items;
    lists->capacity = capacity;
  }
  etrt_import_list *l = &lists->items[lists->count];
  l->name = etrt_ir_strdup(g, name);
  l->elements = etrt_ir_alloc(g, (count + 1u) * sizeof *l->elements);
  if (l->name == NULL || l->elements == NULL) return etrt_import_sequence_oom();
  if (count) memcpy(l->elements, elements, count * sizeof *elements);
  l->kind = kind;
  l->present = present;
  l->dtype = dtype;
  l->count = count;
  ++lists->count;
  return ETRT_OK;
}

static bool etrt_import_sequence_op_is(const etrt_onnx_node *node, const char *op) {
  return etrt_onnx_str_eq(node->op_type, op);
}

bool etrt_import_sequence_handles(const etrt_import_lists *lists, const etrt_onnx_node *node) {
  static const char *const ops[] = {"SequenceEmpty",      "SequenceConstruct",  "SequenceInsert",
                                    "SequenceErase",      "SequenceAt",         "SequenceLength",
                                    "SplitToSequence",    "ConcatFromSequence", "Optional",
                                    "OptionalHasElement", "OptionalGetElement"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
    if (etrt_import_sequence_op_is(node, ops[i])) return true;
  return etrt_import_sequence_op_is(node, "Identity") && node->input_count == 1 &&
         etrt_import_lists_find(lists, node->inputs[0]) != NULL;
}

/* ---- reading a node's operands ---------------------------------------------------- */

typedef struct etrt_import_sequence_call {
  etrt_ir_graph *g;
  etrt_import_lists *lists;
  const etrt_onnx_node *node;
  const char *label;
  const int32_t *outputs;
  etrt_import_resolve_fn resolve;
  etrt_import_known_fn known;
  etrt_import_known_values_fn known_values;
  void *user;
} etrt_import_sequence_call;

static bool etrt_import_sequence_has_input(const etrt_import_sequence_call *c, size_t i) {
  return i < c->node->input_count && c->node->inputs[i].size > 0;
}

/* Input `i` as a sequence (an optional holding one where `optional_ok`). */
static etrt_status etrt_import_sequence_list_in(const etrt_import_sequence_call *c, size_t i,
                                                const etrt_import_list **out) {
  *out = NULL;
  if (!etrt_import_sequence_has_input(c, i))
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: input %zu (a sequence) is missing", c->label,
                      i);
  const etrt_import_list *l = etrt_import_lists_find(c->lists, c->node->inputs[i]);
  if (l == NULL || l->kind != ETRT_IMPORT_LIST_SEQUENCE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: input %zu '%.*s' is not a sequence known when the program is built "
                      "(sequences from graph inputs need --sequence NAME:LENGTH)",
                      c->label, i, ETRT_ONNX_STR_ARGS(c->node->inputs[i]));
  *out = l;
  return ETRT_OK;
}

/* Input `i` as a tensor value. */
static etrt_status etrt_import_sequence_tensor_in(const etrt_import_sequence_call *c, size_t i,
                                                  int32_t *out) {
  *out = -1;
  etrt_onnx_str name = c->node->inputs[i];
  if (etrt_import_lists_find(c->lists, name) != NULL)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s: input %zu '%.*s' is a sequence or optional, "
                      "a tensor is expected",
                      c->label, i, ETRT_ONNX_STR_ARGS(name));
  ETRT_RETURN_IF_ERROR(c->resolve(c->user, name, out));
  if (*out < 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s reads '%.*s', which no node, input or initializer defines", c->label,
                      ETRT_ONNX_STR_ARGS(name));
  return ETRT_OK;
}

/* A position input: an integer scalar known at import. */
static etrt_status etrt_import_sequence_position(const etrt_import_sequence_call *c, size_t i,
                                                 int64_t *out) {
  int32_t v;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, i, &v));
  const etrt_ir_value *pv = &c->g->values[v];
  bool known = false;
  if (pv->dtype == ETRT_DTYPE_INT64 || pv->dtype == ETRT_DTYPE_INT32)
    ETRT_RETURN_IF_ERROR(c->known(c->user, v, &known, out));
  if (!known)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: position '%s' must be known when the program is built (a sequence is "
                      "unrolled then): an int32 or int64 constant with one value, or a graph "
                      "input given one with --shape-values %s:V",
                      c->label, pv->name, pv->name);
  return ETRT_OK;
}

static etrt_status etrt_import_sequence_output_name(const etrt_import_sequence_call *c, size_t k,
                                                    char **out) {
  if (k >= c->node->output_count || c->node->outputs[k].size == 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: output %zu is missing", c->label, k);
  *out = etrt_ir_strndup(c->g, c->node->outputs[k].data, c->node->outputs[k].size);
  return *out ? ETRT_OK : etrt_import_sequence_oom();
}

static etrt_status etrt_import_sequence_out_list(const etrt_import_sequence_call *c, size_t k,
                                                 etrt_import_list_kind kind, bool present,
                                                 etrt_dtype dtype, const int32_t *elements,
                                                 uint32_t count) {
  char *name;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_output_name(c, k, &name));
  return etrt_import_lists_add(c->g, c->lists, name, kind, present, dtype, elements, count);
}

/* Tensor output `k`, made beforehand by the importer. */
static etrt_status etrt_import_sequence_out_tensor(const etrt_import_sequence_call *c, size_t k,
                                                   int32_t *out) {
  *out = k < c->node->output_count ? c->outputs[k] : -1;
  if (*out < 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: output %zu is missing", c->label, k);
  return ETRT_OK;
}

static etrt_status etrt_import_sequence_identity(const etrt_import_sequence_call *c, int32_t from,
                                                 int32_t to) {
  return etrt_ir_add_node(c->g, "Identity", "", c->g->values[to].name, 1, &from, 1, &to, 0, NULL,
                          NULL);
}

static int64_t etrt_import_sequence_attr_int(const etrt_onnx_node *node, const char *name,
                                             int64_t fallback, bool *given) {
  if (given) *given = false;
  for (size_t i = 0; i < node->attribute_count; ++i)
    if (etrt_onnx_str_eq(node->attributes[i].name, name)) {
      if (given) *given = true;
      return node->attributes[i].i;
    }
  return fallback;
}

/* A new int64 constant of rank 0 or 1. */
static etrt_status etrt_import_sequence_i64(const etrt_import_sequence_call *c, const char *base,
                                            const int64_t *values, int64_t count, int32_t rank,
                                            int32_t *out) {
  void *data;
  int64_t dims[1] = {count};
  ETRT_RETURN_IF_ERROR(etrt_ir_add_constant(c->g, base, ETRT_DTYPE_INT64, rank, dims, &data, out));
  if (count) memcpy(data, values, (size_t)count * sizeof *values);
  return ETRT_OK;
}

/* ---- the operators ---------------------------------------------------------------- */

static etrt_status etrt_import_sequence_insert(const etrt_import_sequence_call *c) {
  const etrt_import_list *s;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_list_in(c, 0, &s));
  int32_t t;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, 1, &t));
  int64_t n = s->count, pos = n;
  if (etrt_import_sequence_has_input(c, 2)) {
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_position(c, 2, &pos));
    if (pos < -n || pos > n)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "%s: position %" PRId64 " is outside [-%" PRId64 ", %" PRId64 "]", c->label,
                        pos, n, n);
    if (pos < 0) pos += n;
  }
  int32_t *e = malloc(((size_t)n + 1) * sizeof *e);
  if (e == NULL) return etrt_import_sequence_oom();
  for (int64_t i = 0, k = 0; i <= n; ++i) e[i] = i == pos ? t : s->elements[k++];
  etrt_status st = etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_SEQUENCE, true, s->dtype, e,
                                                 (uint32_t)n + 1);
  free(e);
  return st;
}

static etrt_status etrt_import_sequence_erase(const etrt_import_sequence_call *c) {
  const etrt_import_list *s;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_list_in(c, 0, &s));
  int64_t n = s->count, pos = n - 1;
  if (etrt_import_sequence_has_input(c, 1))
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_position(c, 1, &pos));
  if (pos < -n || pos >= n)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s: position %" PRId64 " is outside a sequence of %" PRId64 " tensors",
                      c->label, pos, n);
  if (pos < 0) pos += n;
  int32_t *e = malloc(((size_t)n + 1) * sizeof *e);
  if (e == NULL) return etrt_import_sequence_oom();
  for (int64_t i = 0, k = 0; i < n; ++i)
    if (i != pos) e[k++] = s->elements[i];
  etrt_status st = etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_SEQUENCE, true, s->dtype, e,
                                                 (uint32_t)n - 1);
  free(e);
  return st;
}

static etrt_status etrt_import_sequence_at(const etrt_import_sequence_call *c) {
  const etrt_import_list *s;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_list_in(c, 0, &s));
  int64_t n = s->count, pos;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_position(c, 1, &pos));
  if (pos < -n || pos >= n)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s: position %" PRId64 " is outside a sequence of %" PRId64 " tensors",
                      c->label, pos, n);
  int32_t out;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_out_tensor(c, 0, &out));
  return etrt_import_sequence_identity(c, s->elements[pos < 0 ? pos + n : pos], out);
}

static etrt_status etrt_import_sequence_length(const etrt_import_sequence_call *c) {
  const etrt_import_list *s;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_list_in(c, 0, &s));
  int32_t out;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_out_tensor(c, 0, &out));
  int64_t *data = etrt_ir_alloc(c->g, sizeof *data);
  if (data == NULL) return etrt_import_sequence_oom();
  *data = s->count;
  return etrt_ir_set_constant(c->g, out, ETRT_DTYPE_INT64, 0, NULL, data, sizeof *data);
}

/* SplitToSequence's output: a Split of `x` along `axis` into parts of `sizes` (each
 * squeezed where `squeeze`), as a sequence. */
static etrt_status etrt_import_sequence_split_parts(const etrt_import_sequence_call *c, int32_t x,
                                                    int64_t axis, const int64_t *sizes,
                                                    int64_t count, bool squeeze) {
  etrt_status st = ETRT_OK;
  etrt_dtype dtype = c->g->values[x].dtype;
  int32_t *parts = calloc((size_t)count + 1, sizeof *parts);
  int32_t split = -1, axes = -1;
  if (parts == NULL) st = etrt_import_sequence_oom();
  if (st == ETRT_OK && count > 0)
    st = etrt_import_sequence_i64(c, "split_to_sequence_sizes", sizes, count, 1, &split);
  if (st == ETRT_OK && squeeze)
    st = etrt_import_sequence_i64(c, "split_to_sequence_axes", &axis, 1, 1, &axes);
  for (int64_t i = 0; i < count && st == ETRT_OK; ++i)
    st = etrt_ir_add_value_unique(c->g, c->label, &parts[i]);
  etrt_attribute attr = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = axis};
  int32_t in[2] = {x, split};
  if (st == ETRT_OK && count > 0)
    st = etrt_ir_add_node(c->g, "Split", "", NULL, 2, in, (uint32_t)count, parts, 1, &attr, NULL);
  for (int64_t i = 0; i < count && squeeze && st == ETRT_OK; ++i) {
    int32_t squeezed, sin[2] = {parts[i], axes};
    st = etrt_ir_add_value_unique(c->g, c->label, &squeezed);
    if (st == ETRT_OK)
      st = etrt_ir_add_node(c->g, "Squeeze", "", NULL, 2, sin, 1, &squeezed, 0, NULL, NULL);
    parts[i] = squeezed;
  }
  if (st == ETRT_OK)
    st = etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_SEQUENCE, true, dtype, parts,
                                       (uint32_t)count);
  free(parts);
  return st;
}

static etrt_status etrt_import_sequence_split(const etrt_import_sequence_call *c) {
  int32_t x;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, 0, &x));
  const etrt_ir_value *xv = &c->g->values[x];
  int64_t axis = etrt_import_sequence_attr_int(c->node, "axis", 0, NULL);
  int64_t keepdims = etrt_import_sequence_attr_int(c->node, "keepdims", 1, NULL);
  if (xv->rank < 0)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: the rank of '%s' must be known when the program is built", c->label,
                      xv->name);
  if (axis < -(int64_t)xv->rank || axis >= xv->rank)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: axis %" PRId64 " is outside rank %d",
                      c->label, axis, (int)xv->rank);
  if (axis < 0) axis += xv->rank;
  int64_t dim = xv->min[axis] == xv->max[axis] ? xv->max[axis] : -1;
  int64_t *sizes = NULL, count = 0;
  bool squeeze = false;
  etrt_status st = ETRT_OK;
  if (etrt_import_sequence_has_input(c, 1)) {
    int32_t sv;
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, 1, &sv));
    const etrt_ir_value *s = &c->g->values[sv];
    if (!s->is_constant) {
      /* a graph input given its values (--shape-values) */
      int64_t *given = malloc(ETRT_IMPORT_SEQUENCE_MAX * sizeof *given);
      size_t n = 0;
      bool known = false;
      if (given == NULL) return etrt_import_sequence_oom();
      st = c->known_values(c->user, sv, given, ETRT_IMPORT_SEQUENCE_MAX, &n, &known);
      if (st == ETRT_OK && known)
        st = etrt_import_sequence_split_parts(c, x, axis, given, (int64_t)n, false);
      free(given);
      if (st != ETRT_OK || known) return st;
    }
    if (!s->is_constant || (s->dtype != ETRT_DTYPE_INT64 && s->dtype != ETRT_DTYPE_INT32) ||
        s->rank > 1)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s: split '%s' must be known when the program is built: an int32 or "
                        "int64 constant of rank 0 or 1, or a 1-D graph input given with "
                        "--shape-values %s:V1,V2,...",
                        c->label, s->name, s->name);
    size_t esize = s->dtype == ETRT_DTYPE_INT64 ? 8 : 4;
    int64_t n = (int64_t)(s->nbytes / esize);
    if (s->rank == 0) {
      int64_t chunk = 0;
      if (esize == 8) {
        memcpy(&chunk, s->data, 8);
      } else {
        int32_t v;
        memcpy(&v, s->data, 4);
        chunk = v;
      }
      if (chunk <= 0)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: split %" PRId64 " is not positive",
                          c->label, chunk);
      if (dim < 0)
        return etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s: axis %" PRId64
                          " of '%s' must have a fixed size when the program "
                          "is built",
                          c->label, axis, xv->name);
      count = (dim + chunk - 1) / chunk;
      if (count > ETRT_IMPORT_SEQUENCE_MAX)
        return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: %" PRId64 " parts exceed %d", c->label,
                          count, ETRT_IMPORT_SEQUENCE_MAX);
      sizes = malloc(((size_t)count + 1) * sizeof *sizes);
      if (sizes == NULL) return etrt_import_sequence_oom();
      for (int64_t i = 0; i < count; ++i) sizes[i] = i + 1 < count ? chunk : dim - chunk * i;
    } else {
      count = n;
      sizes = malloc(((size_t)count + 1) * sizeof *sizes);
      if (sizes == NULL) return etrt_import_sequence_oom();
      for (int64_t i = 0; i < n; ++i) {
        if (esize == 8) {
          memcpy(&sizes[i], (const char *)s->data + 8 * i, 8);
        } else {
          int32_t v;
          memcpy(&v, (const char *)s->data + 4 * i, 4);
          sizes[i] = v;
        }
      }
    }
  } else {
    if (dim < 0)
      return etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s: axis %" PRId64
                        " of '%s' must have a fixed size when the program is "
                        "built",
                        c->label, axis, xv->name);
    if (dim > ETRT_IMPORT_SEQUENCE_MAX)
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: %" PRId64 " parts exceed %d", c->label, dim,
                        ETRT_IMPORT_SEQUENCE_MAX);
    count = dim;
    squeeze = keepdims == 0;
    sizes = malloc(((size_t)count + 1) * sizeof *sizes);
    if (sizes == NULL) return etrt_import_sequence_oom();
    for (int64_t i = 0; i < count; ++i) sizes[i] = 1;
  }
  st = etrt_import_sequence_split_parts(c, x, axis, sizes, count, squeeze);
  free(sizes);
  return st;
}

static etrt_status etrt_import_sequence_concat(const etrt_import_sequence_call *c) {
  const etrt_import_list *s;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_list_in(c, 0, &s));
  bool has_axis;
  int64_t axis = etrt_import_sequence_attr_int(c->node, "axis", 0, &has_axis);
  int64_t new_axis = etrt_import_sequence_attr_int(c->node, "new_axis", 0, NULL);
  if (!has_axis)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: attribute 'axis' is required", c->label);
  if (s->count == 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: the sequence '%s' is empty", c->label,
                      s->name);
  int32_t out;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_out_tensor(c, 0, &out));
  int32_t *parts = malloc(s->count * sizeof *parts);
  if (parts == NULL) return etrt_import_sequence_oom();
  memcpy(parts, s->elements, s->count * sizeof *parts);
  etrt_status st = ETRT_OK;
  if (new_axis) {
    int32_t axes;
    st = etrt_import_sequence_i64(c, "concat_from_sequence_axes", &axis, 1, 1, &axes);
    for (uint32_t i = 0; i < s->count && st == ETRT_OK; ++i) {
      int32_t in[2] = {s->elements[i], axes};
      st = etrt_ir_add_value_unique(c->g, c->label, &parts[i]);
      if (st == ETRT_OK)
        st = etrt_ir_add_node(c->g, "Unsqueeze", "", NULL, 2, in, 1, &parts[i], 0, NULL, NULL);
    }
  }
  etrt_attribute attr = {.name = "axis", .kind = ETRT_ATTRIBUTE_INT, .i = axis};
  if (st == ETRT_OK)
    st = etrt_ir_add_node(c->g, "Concat", "", c->g->values[out].name, s->count, parts, 1, &out, 1,
                          &attr, NULL);
  free(parts);
  return st;
}

static etrt_status etrt_import_sequence_optional(const etrt_import_sequence_call *c) {
  if (!etrt_import_sequence_has_input(c, 0))
    return etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_OPTIONAL_TENSOR, false,
                                         ETRT_DTYPE_INVALID, NULL, 0);
  const etrt_import_list *l = etrt_import_lists_find(c->lists, c->node->inputs[0]);
  if (l != NULL && l->kind != ETRT_IMPORT_LIST_SEQUENCE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: an optional of an optional is not supported",
                      c->label);
  if (l != NULL)
    return etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_OPTIONAL_SEQUENCE, true, l->dtype,
                                         l->elements, l->count);
  int32_t t;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, 0, &t));
  return etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_OPTIONAL_TENSOR, true,
                                       c->g->values[t].dtype, &t, 1);
}

static etrt_status etrt_import_sequence_has_element(const etrt_import_sequence_call *c) {
  bool has = false;
  if (etrt_import_sequence_has_input(c, 0)) {
    const etrt_import_list *l = etrt_import_lists_find(c->lists, c->node->inputs[0]);
    if (l != NULL) {
      has = l->present;
    } else {
      int32_t t;
      ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, 0, &t));
      has = true;
    }
  }
  int32_t out;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_out_tensor(c, 0, &out));
  uint8_t *data = etrt_ir_alloc(c->g, 1);
  if (data == NULL) return etrt_import_sequence_oom();
  *data = has;
  return etrt_ir_set_constant(c->g, out, ETRT_DTYPE_BOOL, 0, NULL, data, 1);
}

/* OptionalGetElement, and Identity of a list. */
static etrt_status etrt_import_sequence_get(const etrt_import_sequence_call *c, bool identity) {
  if (!etrt_import_sequence_has_input(c, 0))
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: input 0 is missing", c->label);
  const etrt_import_list *l = etrt_import_lists_find(c->lists, c->node->inputs[0]);
  if (l == NULL) {
    int32_t t, out;
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_tensor_in(c, 0, &t));
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_out_tensor(c, 0, &out));
    return etrt_import_sequence_identity(c, t, out);
  }
  if (identity || l->kind == ETRT_IMPORT_LIST_SEQUENCE)
    return etrt_import_sequence_out_list(c, 0, l->kind, l->present, l->dtype, l->elements,
                                         l->count);
  if (!l->present)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: the optional '%s' holds no value", c->label,
                      l->name);
  if (l->kind == ETRT_IMPORT_LIST_OPTIONAL_SEQUENCE)
    return etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_SEQUENCE, true, l->dtype,
                                         l->elements, l->count);
  int32_t out;
  ETRT_RETURN_IF_ERROR(etrt_import_sequence_out_tensor(c, 0, &out));
  return etrt_import_sequence_identity(c, l->elements[0], out);
}

static etrt_status etrt_import_sequence_construct(const etrt_import_sequence_call *c) {
  size_t n = c->node->input_count;
  if (n == 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: SequenceConstruct needs an input", c->label);
  int32_t *e = malloc(n * sizeof *e);
  if (e == NULL) return etrt_import_sequence_oom();
  etrt_status st = ETRT_OK;
  for (size_t i = 0; i < n && st == ETRT_OK; ++i) st = etrt_import_sequence_tensor_in(c, i, &e[i]);
  if (st == ETRT_OK)
    st = etrt_import_sequence_out_list(c, 0, ETRT_IMPORT_LIST_SEQUENCE, true,
                                       c->g->values[e[0]].dtype, e, (uint32_t)n);
  free(e);
  return st;
}

etrt_status etrt_import_sequence_node(etrt_ir_graph *g, etrt_import_lists *lists,
                                      const etrt_onnx_node *node, const char *label,
                                      const int32_t *outputs, etrt_import_resolve_fn resolve,
                                      etrt_import_known_fn known,
                                      etrt_import_known_values_fn known_values, void *user) {
  etrt_import_sequence_call c = {g,       lists, node,         label, outputs,
                                 resolve, known, known_values, user};
  if (etrt_import_sequence_op_is(node, "SequenceEmpty")) {
    int64_t onnx_type = etrt_import_sequence_attr_int(node, "dtype", 1, NULL);
    etrt_dtype dtype = etrt_dtype_from_onnx(onnx_type);
    return etrt_import_sequence_out_list(&c, 0, ETRT_IMPORT_LIST_SEQUENCE, true, dtype, NULL, 0);
  }
  if (etrt_import_sequence_op_is(node, "SequenceConstruct"))
    return etrt_import_sequence_construct(&c);
  if (etrt_import_sequence_op_is(node, "SequenceInsert")) return etrt_import_sequence_insert(&c);
  if (etrt_import_sequence_op_is(node, "SequenceErase")) return etrt_import_sequence_erase(&c);
  if (etrt_import_sequence_op_is(node, "SequenceAt")) return etrt_import_sequence_at(&c);
  if (etrt_import_sequence_op_is(node, "SequenceLength")) return etrt_import_sequence_length(&c);
  if (etrt_import_sequence_op_is(node, "SplitToSequence")) return etrt_import_sequence_split(&c);
  if (etrt_import_sequence_op_is(node, "ConcatFromSequence"))
    return etrt_import_sequence_concat(&c);
  if (etrt_import_sequence_op_is(node, "Optional")) return etrt_import_sequence_optional(&c);
  if (etrt_import_sequence_op_is(node, "OptionalHasElement"))
    return etrt_import_sequence_has_element(&c);
  if (etrt_import_sequence_op_is(node, "OptionalGetElement"))
    return etrt_import_sequence_get(&c, false);
  return etrt_import_sequence_get(&c, true); /* Identity */
}

/* ---- the program's boundary ------------------------------------------------------- */

/* One element input, typed from the declared element type. */
static etrt_status etrt_import_sequence_element_input(etrt_ir_graph *g,
                                                      const etrt_onnx_value_info *info,
                                                      const char *name, int32_t *out) {
  etrt_dtype dtype = etrt_dtype_from_onnx(info->elem_type);
  if (dtype == ETRT_DTYPE_INVALID)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "input '%.*s': element type %d of the sequence or optional is not supported",
                      ETRT_ONNX_STR_ARGS(info->name), (int)info->elem_type);
  if (info->has_shape && info->rank > ETRT_MAX_RANK)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "input '%.*s' has rank %zu; etrt supports up to %d",
                      ETRT_ONNX_STR_ARGS(info->name), info->rank, ETRT_MAX_RANK);
  ETRT_RETURN_IF_ERROR(etrt_ir_add_value(g, name, out));
  etrt_ir_value *v = &g->values[*out];
  v->dtype = dtype;
  v->rank = info->has_shape ? (int32_t)info->rank : -1;
  for (int32_t i = 0; i < v->rank; ++i) {
    const etrt_onnx_dim *d = &info->dims[i];
    if (d->has_value && d->value >= 0) {
      v->min[i] = v->max[i] = d->value;
    } else {
      /* Elements of one sequence may differ in size: a symbol names no common axis,
       * so each element is bounded by --shape NAME[i]:DIMS. */
      v->min[i] = v->max[i] = -1;
    }
  }
  return etrt_ir_add_input(g, *out);
}

etrt_status etrt_import_sequence_input(etrt_ir_graph *g, etrt_import_lists *lists,
                                       const etrt_onnx_value_info *info, const char *spec) {
  char *name = etrt_ir_strndup(g, info->name.data, info->name.size);
  if (name == NULL) return etrt_import_sequence_oom();
  bool optional = info->kind == ETRT_ONNX_TYPE_OPTIONAL;
  bool holds_sequence = !optional || info->elem_kind == ETRT_ONNX_TYPE_SEQUENCE;
  bool of_tensors = optional ? info->elem_tensor && (info->elem_kind == ETRT_ONNX_TYPE_TENSOR ||
                                                     info->elem_kind == ETRT_ONNX_TYPE_SEQUENCE)
                             : info->elem_kind == ETRT_ONNX_TYPE_TENSOR;
  if (!of_tensors)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "input '%s': only sequences and optionals of tensors (and optional "
                      "sequences of tensors) are supported",
                      name);
  bool none = spec != NULL && strcmp(spec, "none") == 0;
  if (none && !optional)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "--sequence %s:none: input '%s' is a sequence, not an optional", name, name);
  etrt_dtype dtype = etrt_dtype_from_onnx(info->elem_type);
  if (none)
    return etrt_import_lists_add(
        g, lists, name,
        holds_sequence ? ETRT_IMPORT_LIST_OPTIONAL_SEQUENCE : ETRT_IMPORT_LIST_OPTIONAL_TENSOR,
        false, dtype, NULL, 0);
  if (!holds_sequence) {
    int32_t id;
    ETRT_RETURN_IF_ERROR(etrt_import_sequence_element_input(g, info, name, &id));
    return etrt_import_lists_add(g, lists, name, ETRT_IMPORT_LIST_OPTIONAL_TENSOR, true, dtype, &id,
                                 1);
  }
  if (spec == NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "input '%s' is a sequence: give its length with --sequence %s:LENGTH (a "
                      "sequence is unrolled when the program is built)",
                      name, name);
  long length = strtol(spec, NULL, 10);
  int32_t *e = malloc(((size_t)length + 1) * sizeof *e);
  if (e == NULL) return etrt_import_sequence_oom();
  etrt_status st = ETRT_OK;
  for (long i = 0; i < length && st == ETRT_OK; ++i) {
    char element[512];
    snprintf(element, sizeof element, "%s[%ld]", name, i);
    st = etrt_import_sequence_element_input(g, info, element, &e[i]);
  }
  if (st == ETRT_OK)
    st = etrt_import_lists_add(
        g, lists, name, optional ? ETRT_IMPORT_LIST_OPTIONAL_SEQUENCE : ETRT_IMPORT_LIST_SEQUENCE,
        true, dtype, e, (uint32_t)length);
  free(e);
  return st;
}

etrt_status etrt_import_sequence_output(etrt_ir_graph *g, const etrt_import_list *list) {
  for (uint32_t i = 0; i < list->count; ++i) {
    char *name = list->kind == ETRT_IMPORT_LIST_OPTIONAL_TENSOR
                     ? etrt_ir_strdup(g, list->name)
                     : etrt_ir_printf(g, "%s[%u]", list->name, i);
    if (name == NULL) return etrt_import_sequence_oom();
    int32_t copy, from = list->elements[i];
    ETRT_RETURN_IF_ERROR(etrt_ir_add_value_unique(g, name, &copy));
    ETRT_RETURN_IF_ERROR(
        etrt_ir_add_node(g, "Identity", "", name, 1, &from, 1, &copy, 0, NULL, NULL));
    ETRT_RETURN_IF_ERROR(etrt_ir_add_output(g, copy, name));
  }
  return ETRT_OK;
}

etrt_status etrt_import_sequence_spec_check(const char *spec) {
  const char *colon = strrchr(spec, ':');
  if (colon == NULL || colon == spec)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sequence '%s': expected NAME:LENGTH or NAME:none", spec);
  const char *v = colon + 1;
  if (strcmp(v, "none") == 0) return ETRT_OK;
  char *end;
  long n = strtol(v, &end, 10);
  if (*v < '0' || *v > '9' || *end != '\0' || n < 0 || n > ETRT_IMPORT_SEQUENCE_MAX)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sequence '%s': the length '%s' is not a number 0..%d or 'none'", spec, v,
                      ETRT_IMPORT_SEQUENCE_MAX);
  return ETRT_OK;
}
