/* Bodies inlined where their node was: SequenceMap once per element, a Loop that
 * carries a sequence once per iteration, and the branch an If over sequences takes. A
 * sequence's length is known at import (import_sequence.h), so what runs per element
 * or iteration is known too, and the engine sees only the tensor operators of the
 * copies. Inlined bodies nest (a branch inside an unrolled Loop): each copy's names
 * are prefixed by its enclosing copies' prefix, the node and the iteration. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/import_internal.h"

/* Most copies of one body: each is a copy of its nodes in the plan. */
#define ETRT_IMPORT_UNROLL_MAX 4096

static etrt_status etrt_import_unroll_oom(void) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "import: out of memory inlining a body");
}

/* What a body input takes, or a body output gives: a tensor value, or a list. */
typedef struct etrt_import_operand {
  int32_t value; /* -1 for a list */
  etrt_import_list list;
} etrt_import_operand;

/* Imports body `og` in place with its names prefixed by `prefix`: its inputs take
 * `in[0 .. og->input_count)`, its outputs are written to `out[0 .. og->output_count)`.
 * Lists the body makes are dropped afterwards (their elements live on in `out`). */
static etrt_status etrt_import_inline(etrt_import *im, const etrt_onnx_graph *og, const char *label,
                                      const char *prefix, const etrt_import_operand *in,
                                      etrt_import_operand *out) {
  etrt_ir_graph *g = im->graph;
  if (im->inline_depth == ETRT_IMPORT_MAX_INLINE)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: bodies inlined more than %d deep (SequenceMap, Loops and Ifs over "
                      "sequences)",
                      label, ETRT_IMPORT_MAX_INLINE);
  uint32_t lists_before = im->lists.count;
  const char *outer_prefix = im->prefix;
  im->prefixes[im->inline_depth++] = prefix;
  im->prefix = prefix;
  etrt_status st = ETRT_OK;
  for (size_t i = 0; i < og->initializer_count && st == ETRT_OK; ++i) {
    const etrt_onnx_tensor *t = &og->initializers[i];
    etrt_onnx_host_tensor host;
    int32_t id;
    char *name = etrt_ir_printf(g, "%s%.*s", prefix, ETRT_ONNX_STR_ARGS(t->name));
    if (name == NULL) {
      st = etrt_import_unroll_oom();
    } else if ((st = etrt_ir_add_value(g, name, &id)) == ETRT_OK &&
               (st = etrt_onnx_tensor_to_host(t, &host)) == ETRT_OK) {
      void *copy = etrt_ir_alloc_uninit(g, host.nbytes ? host.nbytes : 1);
      if (copy == NULL) {
        st = etrt_import_unroll_oom();
      } else {
        if (host.nbytes) memcpy(copy, host.data, host.nbytes);
        st = etrt_ir_set_constant(g, id, host.dtype, host.rank, host.dims, copy, host.nbytes);
      }
      etrt_onnx_host_tensor_release(&host);
    }
  }
  for (size_t k = 0; k < og->input_count && st == ETRT_OK; ++k) {
    etrt_onnx_str iname = og->inputs[k].name;
    char *raw = etrt_ir_strndup(g, iname.data, iname.size);
    char *name = etrt_ir_printf(g, "%s%.*s", prefix, ETRT_ONNX_STR_ARGS(iname));
    if (raw == NULL || name == NULL) {
      st = etrt_import_unroll_oom();
      break;
    }
    if (in[k].value < 0) {
      const etrt_import_list *l = &in[k].list;
      st = etrt_import_lists_add(g, &im->lists, raw, l->kind, l->present, l->dtype, l->elements,
                                 l->count);
      continue;
    }
    int32_t id, from = in[k].value;
    st = etrt_ir_add_value(g, name, &id);
    /* A constant stays one (an iteration number is a position SequenceAt reads). */
    const etrt_ir_value *fv = &g->values[from];
    if (st == ETRT_OK && fv->is_constant)
      st = etrt_ir_set_constant(g, id, fv->dtype, fv->rank, fv->max, fv->data, fv->nbytes);
    else if (st == ETRT_OK)
      st = etrt_ir_add_node(g, "Identity", "", name, 1, &from, 1, &id, 0, NULL, NULL);
  }
  for (size_t i = 0; i < og->node_count && st == ETRT_OK; ++i) {
    const etrt_onnx_node *node = &og->nodes[i];
    for (size_t k = 0; k < node->output_count && st == ETRT_OK; ++k) {
      if (node->outputs[k].size == 0) continue;
      char *name = etrt_ir_printf(g, "%s%.*s", prefix, ETRT_ONNX_STR_ARGS(node->outputs[k]));
      int32_t id;
      st = name == NULL ? etrt_import_unroll_oom() : etrt_ir_add_value(g, name, &id);
    }
  }
  for (size_t i = 0; i < og->node_count && st == ETRT_OK; ++i)
    st = etrt_import_node_add(im, &og->nodes[i], i);
  for (size_t k = 0; k < og->output_count && st == ETRT_OK; ++k) {
    etrt_onnx_str name = og->outputs[k].name;
    const etrt_import_list *l = etrt_import_lists_find(&im->lists, name);
    if (l != NULL) {
      out[k].value = -1;
      out[k].list = *l;
      continue;
    }
    st = etrt_import_resolve(im, name, &out[k].value);
    if (st == ETRT_OK && out[k].value < 0)
      st = etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: body output '%.*s' is not defined", label,
                      ETRT_ONNX_STR_ARGS(name));
  }
  im->prefix = outer_prefix;
  --im->inline_depth;
  im->lists.count = lists_before;
  if (st != ETRT_OK) st = etrt_error_context(st, "%s: body: ", label);
  return st;
}

static const etrt_onnx_graph *etrt_import_unroll_body(const etrt_onnx_node *node) {
  const etrt_onnx_attribute *a = etrt_onnx_node_attr(node, "body");
  return a != NULL && a->type == ETRT_ONNX_ATTR_GRAPH ? a->g : NULL;
}

/* The operand that ONNX input `name` of the node is: a list, or a tensor. */
static etrt_status etrt_import_unroll_operand(etrt_import *im, etrt_onnx_str name,
                                              etrt_import_operand *out) {
  memset(out, 0, sizeof *out);
  const etrt_import_list *l = etrt_import_lists_find(&im->lists, name);
  if (l != NULL) {
    out->value = -1;
    out->list = *l;
    return ETRT_OK;
  }
  return etrt_import_resolve(im, name, &out->value);
}

etrt_status etrt_import_sequence_map(etrt_import *im, const etrt_onnx_node *node, const char *label,
                                     const int32_t *outputs) {
  (void)outputs; /* its outputs are sequences */
  etrt_ir_graph *g = im->graph;
  const etrt_onnx_graph *body = etrt_import_unroll_body(node);
  if (body == NULL)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: the subgraph attribute 'body' is missing",
                      label);
  if (node->input_count == 0 || body->input_count != node->input_count ||
      body->output_count != node->output_count)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s: the body takes %zu inputs and gives %zu outputs; the node has %zu and "
                      "%zu",
                      label, body->input_count, body->output_count, node->input_count,
                      node->output_count);
  size_t ni = node->input_count, no = node->output_count;
  etrt_import_operand *args = calloc(ni + no, sizeof *args);
  etrt_import_operand *in = calloc(ni, sizeof *in);
  int32_t **elements = calloc(no, sizeof *elements);
  etrt_status st = args && in && elements ? ETRT_OK : etrt_import_unroll_oom();
  for (size_t k = 0; k < ni && st == ETRT_OK; ++k)
    st = etrt_import_unroll_operand(im, node->inputs[k], &args[k]);
  uint32_t n = 0;
  if (st == ETRT_OK && (args[0].value >= 0 || args[0].list.kind != ETRT_IMPORT_LIST_SEQUENCE))
    st = etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: input 0 '%.*s' is not a sequence", label,
                    ETRT_ONNX_STR_ARGS(node->inputs[0]));
  if (st == ETRT_OK) n = args[0].list.count;
  for (size_t k = 1; k < ni && st == ETRT_OK; ++k)
    if (args[k].value < 0 &&
        (args[k].list.kind != ETRT_IMPORT_LIST_SEQUENCE || args[k].list.count != n))
      st = etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s: input %zu '%.*s' is not a sequence of %u tensors like input 0", label, k,
                      ETRT_ONNX_STR_ARGS(node->inputs[k]), n);
  for (size_t j = 0; j < no && st == ETRT_OK; ++j)
    if ((elements[j] = calloc(n + 1u, sizeof **elements)) == NULL) st = etrt_import_unroll_oom();
  etrt_import_operand *res = args ? args + ni : NULL;
  for (uint32_t i = 0; i < n && st == ETRT_OK; ++i) {
    for (size_t k = 0; k < ni; ++k) {
      in[k] = args[k];
      if (args[k].value < 0) {
        in[k].value = args[k].list.elements[i];
        memset(&in[k].list, 0, sizeof in[k].list);
      }
    }
    char *prefix = etrt_ir_printf(g, "%s%s/%u/", im->prefix ? im->prefix : "", label, i);
    if (prefix == NULL) {
      st = etrt_import_unroll_oom();
      break;
    }
    st = etrt_import_inline(im, body, label, prefix, in, res);
    for (size_t j = 0; j < no && st == ETRT_OK; ++j) {
      if (res[j].value < 0)
        st = etrt_error(ETRT_ERROR_UNSUPPORTED,
                        "%s: body output %zu is a sequence (SequenceMap's body gives tensors)",
                        label, j);
      else
        elements[j][i] = res[j].value;
    }
  }
  for (size_t j = 0; j < no && st == ETRT_OK; ++j) {
    char *name = etrt_ir_strndup(g, node->outputs[j].data, node->outputs[j].size);
    st = name == NULL ? etrt_import_unroll_oom()
                      : etrt_import_lists_add(g, &im->lists, name, ETRT_IMPORT_LIST_SEQUENCE, true,
                                              ETRT_DTYPE_INVALID, elements[j], n);
  }
  for (size_t j = 0; elements != NULL && j < no; ++j) free(elements[j]);
  free(elements);
  free(in);
  free(args);
  return st;
}

bool etrt_import_loop_carries_list(const etrt_import *im, const etrt_onnx_node *node) {
  for (size_t k = 2; k < node->input_count; ++k)
    if (etrt_import_lists_find(&im->lists, node->inputs[k]) != NULL) return true;
  return false;
}

etrt_status etrt_import_loop_unroll(etrt_import *im, const etrt_onnx_node *node, const char *label,
                                    const int32_t *outputs) {
  etrt_ir_graph *g = im->graph;
  const etrt_onnx_graph *body = etrt_import_unroll_body(node);
  if (body == NULL)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: the subgraph attribute 'body' is missing",
                      label);
  size_t carried = node->input_count - 2;
  if (body->input_count != carried + 2 || body->output_count != carried + 1 ||
      node->output_count != carried)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: a Loop carrying a sequence is unrolled at import, which takes a body "
                      "of %zu inputs and %zu outputs and no scan outputs (it has %zu and %zu)",
                      label, carried + 2, carried + 1, body->input_count, body->output_count);
  int64_t trips = ETRT_IMPORT_UNROLL_MAX + 1, cond = 1;
  int32_t m = -1, c = -1;
  bool known = true;
  etrt_status st = ETRT_OK;
  if (node->inputs[0].size) {
    st = etrt_import_resolve(im, node->inputs[0], &m);
    if (st == ETRT_OK) st = etrt_import_known(im, m, &known, &trips);
    if (st == ETRT_OK && !known)
      st = etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: the trip count '%s' of a Loop carrying a sequence must be known when "
                      "the program is built (a constant, or a graph input given with "
                      "--shape-values NAME:N)",
                      label, g->values[m].name);
  }
  if (st == ETRT_OK && node->inputs[1].size) {
    st = etrt_import_resolve(im, node->inputs[1], &c);
    if (st == ETRT_OK) st = etrt_import_known(im, c, &known, &cond);
    if (st == ETRT_OK && !known)
      st = etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: the condition '%s' of a Loop carrying a sequence must be known when "
                      "the program is built (a constant, or a graph input given with "
                      "--shape-values NAME:0|1)",
                      label, g->values[c].name);
  }
  ETRT_RETURN_IF_ERROR(st);
  etrt_import_operand *in = calloc(carried + 2, sizeof *in);
  etrt_import_operand *res = calloc(carried + 1, sizeof *res);
  if (in == NULL || res == NULL) st = etrt_import_unroll_oom();
  for (size_t k = 0; k < carried && st == ETRT_OK; ++k)
    st = etrt_import_unroll_operand(im, node->inputs[k + 2], &in[k + 2]);
  int32_t cond_value = c;
  int64_t i = 0;
  for (; st == ETRT_OK && cond && i < trips; ++i) {
    if (i == ETRT_IMPORT_UNROLL_MAX) {
      st = etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: a Loop carrying a sequence runs more than %d iterations", label,
                      ETRT_IMPORT_UNROLL_MAX);
      break;
    }
    void *data;
    int32_t iter;
    st = etrt_ir_add_constant(g, "loop_iteration", ETRT_DTYPE_INT64, 0, NULL, &data, &iter);
    if (st != ETRT_OK) break;
    memcpy(data, &i, sizeof i);
    if (cond_value < 0) {
      st = etrt_ir_add_constant(g, "loop_condition", ETRT_DTYPE_BOOL, 0, NULL, &data, &cond_value);
      if (st != ETRT_OK) break;
      *(uint8_t *)data = 1;
    }
    in[0] = (etrt_import_operand){.value = iter};
    in[1] = (etrt_import_operand){.value = cond_value};
    char *prefix = etrt_ir_printf(g, "%s%s/%" PRId64 "/", im->prefix ? im->prefix : "", label, i);
    if (prefix == NULL) {
      st = etrt_import_unroll_oom();
      break;
    }
    st = etrt_import_inline(im, body, label, prefix, in, res);
    if (st != ETRT_OK) break;
    known = false;
    if (res[0].value >= 0) st = etrt_import_known(im, res[0].value, &known, &cond);
    if (st != ETRT_OK) break;
    if (!known) {
      st = etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: the condition a Loop carrying a sequence computes must be known when "
                      "the program is built",
                      label);
      break;
    }
    cond_value = res[0].value;
    for (size_t k = 0; k < carried; ++k) in[k + 2] = res[k + 1];
  }
  for (size_t k = 0; k < carried && st == ETRT_OK; ++k) {
    const etrt_import_operand *v = &in[k + 2];
    if (v->value < 0) {
      char *name = etrt_ir_strndup(g, node->outputs[k].data, node->outputs[k].size);
      st = name == NULL ? etrt_import_unroll_oom()
                        : etrt_import_lists_add(g, &im->lists, name, v->list.kind, v->list.present,
                                                v->list.dtype, v->list.elements, v->list.count);
    } else if (outputs[k] >= 0) {
      int32_t from = v->value, to = outputs[k];
      st = etrt_ir_add_node(g, "Identity", "", g->values[to].name, 1, &from, 1, &to, 0, NULL, NULL);
    }
  }
  free(in);
  free(res);
  return st;
}

bool etrt_import_if_gives_list(const etrt_onnx_node *node) {
  static const char *const branches[2] = {"then_branch", "else_branch"};
  for (int b = 0; b < 2; ++b) {
    const etrt_onnx_attribute *a = etrt_onnx_node_attr(node, branches[b]);
    if (a == NULL || a->type != ETRT_ONNX_ATTR_GRAPH || a->g == NULL) continue;
    for (size_t k = 0; k < a->g->output_count; ++k)
      if (a->g->outputs[k].kind == ETRT_ONNX_TYPE_SEQUENCE ||
          a->g->outputs[k].kind == ETRT_ONNX_TYPE_OPTIONAL)
        return true;
  }
  return false;
}

etrt_status etrt_import_if_inline(etrt_import *im, const etrt_onnx_node *node, const char *label,
                                  const int32_t *outputs) {
  etrt_ir_graph *g = im->graph;
  int32_t c = -1;
  bool known = false;
  int64_t cond = 0;
  if (node->input_count < 1 || node->inputs[0].size == 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: the condition is missing", label);
  ETRT_RETURN_IF_ERROR(etrt_import_resolve(im, node->inputs[0], &c));
  if (c < 0)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s reads '%.*s', which no node, input or initializer defines", label,
                      ETRT_ONNX_STR_ARGS(node->inputs[0]));
  ETRT_RETURN_IF_ERROR(etrt_import_known(im, c, &known, &cond));
  if (!known)
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "%s: its branches give sequences or optionals, so its condition '%s' must "
                      "be known when the program is built (a constant, or a graph input given "
                      "with --shape-values NAME:0|1)",
                      label, g->values[c].name);
  const char *branch = cond ? "then_branch" : "else_branch";
  const etrt_onnx_attribute *a = etrt_onnx_node_attr(node, branch);
  if (a == NULL || a->type != ETRT_ONNX_ATTR_GRAPH || a->g == NULL)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT, "%s: the subgraph attribute '%s' is missing",
                      label, branch);
  const etrt_onnx_graph *body = a->g;
  if (body->input_count != 0 || body->output_count != node->output_count)
    return etrt_error(ETRT_ERROR_INVALID_FORMAT,
                      "%s: %s takes %zu inputs and gives %zu outputs; an If's branch takes none "
                      "and gives the node's %zu",
                      label, branch, body->input_count, body->output_count, node->output_count);
  etrt_import_operand *res = calloc(node->output_count + 1, sizeof *res);
  if (res == NULL) return etrt_import_unroll_oom();
  char *prefix = etrt_ir_printf(g, "%s%s/%s/", im->prefix ? im->prefix : "", label, branch);
  etrt_status st =
      prefix ? etrt_import_inline(im, body, label, prefix, NULL, res) : etrt_import_unroll_oom();
  for (size_t k = 0; k < node->output_count && st == ETRT_OK; ++k) {
    if (node->outputs[k].size == 0) continue;
    if (res[k].value < 0) {
      char *name = etrt_ir_strndup(g, node->outputs[k].data, node->outputs[k].size);
      st = name == NULL
               ? etrt_import_unroll_oom()
               : etrt_import_lists_add(g, &im->lists, name, res[k].list.kind, res[k].list.present,
                                       res[k].list.dtype, res[k].list.elements, res[k].list.count);
    } else if (outputs[k] >= 0) {
      int32_t from = res[k].value, to = outputs[k];
      st = etrt_ir_add_node(g, "Identity", "", g->values[to].name, 1, &from, 1, &to, 0, NULL, NULL);
    }
  }
  free(res);
  return st;
}
