/* If whose condition is known when the plan is built (a constant, or computed on the
 * host from constants, shapes and --shape-values, as exported models test a shape)
 * replaced by the branch it takes. The graph is lowered into a throw-away network node
 * by node, so that the engine's own host evaluation decides what is known; a branch
 * taken is inlined where the If was and lowered at once, so that an If inside it is
 * folded too, and the untaken branch is never inferred (it may not even fit the shapes
 * given). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/lower.h"
#include "base/status.h"
#include "builder/passes.h"
#include "engine/network.h"

typedef struct etrt_fold_if {
  etrt_ir_graph *graph;
  etrt_network *network;
  int32_t *net_ids;
  uint32_t capacity;
  uint32_t folded;
} etrt_fold_if;

static etrt_status etrt_fold_if_ids(etrt_fold_if *f) {
  uint32_t need = f->graph->num_values + 1;
  if (need <= f->capacity) return ETRT_OK;
  uint32_t capacity = need * 2;
  int32_t *ids = realloc(f->net_ids, (size_t)capacity * sizeof *ids);
  if (ids == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
  for (uint32_t v = f->capacity; v < capacity; ++v) ids[v] = -1;
  f->net_ids = ids;
  f->capacity = capacity;
  return ETRT_OK;
}

/* The condition of If node n when it is known now. */
static int etrt_fold_if_condition(const etrt_fold_if *f, uint32_t n, int *taken) {
  const etrt_ir_node *node = &f->graph->nodes[n];
  if (node->num_inputs < 1 || node->inputs[0] < 0 || node->num_bodies != 2) return 0;
  const etrt_ir_value *v = &f->graph->values[node->inputs[0]];
  if (v->is_constant) {
    if (v->dtype != ETRT_DTYPE_BOOL) return 0;
    if (v->nbytes < 1) return 0;
    *taken = ((const uint8_t *)v->data)[0] != 0;
    return 1;
  }
  const void *lo = NULL, *hi = NULL;
  int32_t id = f->net_ids[node->inputs[0]];
  etrt_dtype dtype = ETRT_DTYPE_INVALID;
  if (id < 0 || etrt_network_value_info(f->network, id, &dtype, NULL, NULL, NULL) != ETRT_OK ||
      dtype != ETRT_DTYPE_BOOL)
    return 0;
  etrt_network_host_values(f->network, id, &lo, &hi);
  if (lo == NULL || hi == NULL) return 0;
  int a = *(const uint8_t *)lo != 0, b = *(const uint8_t *)hi != 0;
  if (a != b) return 0;
  *taken = a;
  return 1;
}

/* Branch b of If node n copied into the graph after the last node: its captures read
 * the If's inputs, its values get names of their own ("<if>/<value>"), and the If's
 * outputs are written by the branch's nodes (or copies of what the branch returns as it
 * is). The If is marked dead; its bodies stay with it (the copies' constants may point
 * into them). */
static etrt_status etrt_fold_if_inline(etrt_ir_graph *g, uint32_t n, uint32_t b) {
  etrt_ir_graph *body = g->nodes[n].bodies[b];
  const char *prefix = g->nodes[n].name;
  int32_t *map = malloc(((size_t)body->num_values + 1) * sizeof *map);
  int32_t *args = NULL;
  if (map == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
  etrt_status status = ETRT_OK;
  /* The branch's nodes write the If's outputs now: the dead If lists none (the sort
   * would take it for their writer). */
  int32_t *outs = g->nodes[n].outputs;
  g->nodes[n].dead = true;
  g->nodes[n].outputs = etrt_ir_alloc(g, ((size_t)g->nodes[n].num_outputs + 1) * sizeof *outs);
  if (g->nodes[n].outputs == NULL) {
    free(map);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
  }
  for (uint32_t k = 0; k < g->nodes[n].num_outputs; ++k) {
    g->nodes[n].outputs[k] = -1;
    if (outs[k] >= 0) g->values[outs[k]].producer = -1;
  }
  for (uint32_t v = 0; v < body->num_values; ++v) map[v] = -1;
  for (uint32_t j = 0; j < body->num_inputs; ++j) map[body->inputs[j]] = g->nodes[n].inputs[1 + j];
  for (uint32_t k = 0; k < body->num_outputs; ++k) {
    int32_t bv = body->outputs[k], out = outs[k];
    if (out >= 0 && body->values[bv].producer >= 0 && map[bv] < 0) map[bv] = out;
  }
  for (uint32_t v = 0; v < body->num_values && status == ETRT_OK; ++v) {
    const etrt_ir_value *bv = &body->values[v];
    if (map[v] >= 0 || (!bv->is_constant && bv->producer < 0)) continue;
    char *name = etrt_ir_printf(g, "%s/%s", prefix, bv->name);
    status = name != NULL ? etrt_ir_add_value_unique(g, name, &map[v])
                          : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
    if (status == ETRT_OK && bv->is_constant)
      status = etrt_ir_set_constant(g, map[v], bv->dtype, bv->rank, bv->max, bv->data, bv->nbytes);
  }
  for (uint32_t i = 0; i < body->num_nodes && status == ETRT_OK; ++i) {
    etrt_ir_node *bn = &body->nodes[i];
    if (bn->dead) continue;
    free(args);
    args = malloc(((size_t)bn->num_inputs + bn->num_outputs + 1) * sizeof *args);
    char *name = etrt_ir_printf(g, "%s/%s", prefix, bn->name);
    if (args == NULL || name == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
      break;
    }
    for (uint32_t k = 0; k < bn->num_inputs; ++k)
      args[k] = bn->inputs[k] >= 0 ? map[bn->inputs[k]] : -1;
    for (uint32_t k = 0; k < bn->num_outputs; ++k)
      args[bn->num_inputs + k] = bn->outputs[k] >= 0 ? map[bn->outputs[k]] : -1;
    int32_t id;
    status =
        etrt_ir_add_node(g, bn->op_type, bn->domain, name, bn->num_inputs, args, bn->num_outputs,
                         args + bn->num_inputs, bn->num_attributes, bn->attributes, &id);
    if (status != ETRT_OK || bn->num_bodies == 0) continue;
    /* A control node inside the branch takes its bodies along. */
    etrt_ir_graph **bodies = etrt_ir_alloc(g, bn->num_bodies * sizeof *bodies);
    if (bodies == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
      break;
    }
    memcpy(bodies, bn->bodies, bn->num_bodies * sizeof *bodies);
    etrt_ir_node *made = &g->nodes[id];
    made->bodies = bodies;
    made->body_names = bn->body_names;
    made->num_bodies = bn->num_bodies;
    made->num_captures = bn->num_captures;
    bn->num_bodies = 0;
  }
  for (uint32_t k = 0; k < body->num_outputs && status == ETRT_OK; ++k) {
    int32_t bv = body->outputs[k], out = outs[k];
    if (out < 0 || map[bv] == out) continue;
    char *name = etrt_ir_printf(g, "%s/output_%u", prefix, k);
    status = name != NULL
                 ? etrt_ir_add_node(g, "Identity", "", name, 1, &map[bv], 1, &out, 0, NULL, NULL)
                 : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "folding If: out of memory");
  }
  free(args);
  free(map);
  return status;
}

static etrt_status etrt_fold_if_visit(etrt_fold_if *f, uint32_t n) {
  etrt_ir_graph *g = f->graph;
  ETRT_RETURN_IF_ERROR(etrt_fold_if_ids(f));
  int taken = 0;
  if (strcmp(g->nodes[n].op_type, "If") == 0 && etrt_fold_if_condition(f, n, &taken)) {
    uint32_t first = g->num_nodes;
    etrt_status s = etrt_fold_if_inline(g, n, taken ? 0 : 1);
    if (s != ETRT_OK)
      return etrt_error_context(s, "If '%s' (%s taken): ", g->nodes[n].name,
                                taken ? "then_branch" : "else_branch");
    ++f->folded;
    uint32_t last = g->num_nodes;
    for (uint32_t k = first; k < last; ++k) ETRT_RETURN_IF_ERROR(etrt_fold_if_visit(f, k));
    return ETRT_OK;
  }
  return etrt_lower_nodes(g, f->network, &n, 1, f->net_ids);
}

etrt_status etrt_pass_fold_if(etrt_ir_graph *graph, uint32_t *folded) {
  *folded = 0;
  bool any = false;
  for (uint32_t n = 0; n < graph->num_nodes && !any; ++n)
    any = !graph->nodes[n].dead && strcmp(graph->nodes[n].op_type, "If") == 0;
  if (!any) return ETRT_OK;
  etrt_fold_if f = {.graph = graph};
  ETRT_RETURN_IF_ERROR(etrt_network_create(&f.network));
  etrt_status status = etrt_fold_if_ids(&f);
  for (uint32_t i = 0; i < graph->num_inputs && status == ETRT_OK; ++i)
    status = etrt_lower_input(graph, f.network, graph->inputs[i], f.net_ids);
  /* The nodes there are now; those inlined are visited as they are made. */
  uint32_t count = graph->num_nodes;
  for (uint32_t n = 0; n < count && status == ETRT_OK; ++n)
    if (!graph->nodes[n].dead) status = etrt_fold_if_visit(&f, n);
  /* Sorted even after a failure: the inlined nodes stay (the If is dead), and the graph
   * may be lowered again (an If branch that cannot be built is lowered once more, as a
   * branch that fails when taken, and an enclosing body each time it is built). */
  if (f.folded > 0) {
    etrt_error_keep keep = etrt_error_keep_first(status);
    status = etrt_status_first(status, etrt_ir_sort(graph));
    etrt_error_keep_end(keep);
  }
  *folded = f.folded;
  free(f.net_ids);
  etrt_network_destroy(f.network);
  return status;
}
