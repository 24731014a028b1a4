#include "builder/lower_control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "builder/host_values.h"
#include "builder/lower.h"
#include "builder/passes.h"
#include "engine/bounds.h"
#include "engine/engine.h"
#include "engine/network.h"

/* Rounds of widening the loop-carried bounds before giving up. */
#define ETRT_LOWER_CONTROL_ROUNDS 4

typedef struct etrt_lower_bound {
  etrt_dtype dtype;
  int32_t rank;
  int64_t min[ETRT_MAX_RANK], max[ETRT_MAX_RANK];
  const void *lo, *hi; /* values known on the host (captures only), else NULL */
} etrt_lower_bound;

static etrt_status etrt_lower_net_bound(etrt_network *network, int32_t id, etrt_lower_bound *b) {
  memset(b, 0, sizeof *b);
  ETRT_RETURN_IF_ERROR(etrt_network_value_info(network, id, &b->dtype, &b->rank, b->min, b->max));
  return ETRT_OK;
}

/* Drops axis `axis` of a bound (a Scan's slice). */
static void etrt_lower_drop_axis(etrt_lower_bound *b, int64_t axis) {
  for (int32_t a = (int32_t)axis; a + 1 < b->rank; ++a) {
    b->min[a] = b->min[a + 1];
    b->max[a] = b->max[a + 1];
  }
  --b->rank;
}

/* Sets body input i's type and bounds, as a shape input where the body needs its values
 * on the host and they are known. */
static etrt_status etrt_lower_set_input(etrt_ir_graph *body, uint32_t i, const etrt_lower_bound *b,
                                        const etrt_host_value_use *uses) {
  etrt_ir_value *v = &body->values[body->inputs[i]];
  v->dtype = b->dtype;
  v->rank = b->rank;
  memcpy(v->min, b->min, sizeof v->min);
  memcpy(v->max, b->max, sizeof v->max);
  v->value_min = v->value_max = NULL;
  v->value_count = 0;
  int64_t count = 1;
  for (int32_t a = 0; a < b->rank; ++a) count = b->min[a] == b->max[a] ? count * b->max[a] : -1;
  if (b->lo == NULL || b->hi == NULL || uses[body->inputs[i]].node < 0 || b->rank > 1 ||
      count < 0 || count > 64 || (b->dtype != ETRT_DTYPE_INT64 && b->dtype != ETRT_DTYPE_INT32))
    return ETRT_OK;
  int64_t *lo = etrt_ir_alloc(body, (size_t)(count + 1) * sizeof *lo);
  int64_t *hi = etrt_ir_alloc(body, (size_t)(count + 1) * sizeof *hi);
  if (lo == NULL || hi == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
  for (int64_t k = 0; k < count; ++k) {
    int64_t a, z;
    if (b->dtype == ETRT_DTYPE_INT64) {
      a = ((const int64_t *)b->lo)[k];
      z = ((const int64_t *)b->hi)[k];
    } else {
      a = ((const int32_t *)b->lo)[k];
      z = ((const int32_t *)b->hi)[k];
    }
    lo[k] = a < z ? a : z;
    hi[k] = a < z ? z : a;
  }
  v->value_min = lo;
  v->value_max = hi;
  v->value_count = count;
  return ETRT_OK;
}

/* The body as a network: its inputs, its live nodes, its outputs marked. */
static etrt_status etrt_lower_body_network(const etrt_ir_graph *body, etrt_network **out,
                                           int32_t **ids) {
  *out = NULL;
  *ids = NULL;
  etrt_network *network = NULL;
  ETRT_RETURN_IF_ERROR(etrt_network_create(&network));
  int32_t *net_ids = malloc(((size_t)body->num_values + 1) * sizeof *net_ids);
  uint32_t *order = malloc(((size_t)body->num_nodes + 1) * sizeof *order);
  etrt_status status = net_ids != NULL && order != NULL
                           ? ETRT_OK
                           : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
  for (uint32_t v = 0; status == ETRT_OK && v < body->num_values; ++v) net_ids[v] = -1;
  for (uint32_t i = 0; status == ETRT_OK && i < body->num_inputs; ++i)
    status = etrt_lower_input(body, network, body->inputs[i], net_ids);
  uint32_t count = 0;
  for (uint32_t n = 0; status == ETRT_OK && n < body->num_nodes; ++n)
    if (!body->nodes[n].dead) order[count++] = n;
  if (status == ETRT_OK) status = etrt_lower_nodes(body, network, order, count, net_ids);
  for (uint32_t o = 0; status == ETRT_OK && o < body->num_outputs; ++o) {
    int32_t v = body->outputs[o];
    status = etrt_network_mark_output(network, net_ids[v], body->values[v].name);
  }
  free(order);
  if (status != ETRT_OK) {
    free(net_ids);
    etrt_network_destroy(network);
    return status;
  }
  *out = network;
  *ids = net_ids;
  return ETRT_OK;
}

/* Widens carried input `i` to hold body output `o`; true when it had to. */
static int etrt_lower_widen(etrt_lower_bound *in, const etrt_lower_bound *out) {
  if (in->rank != out->rank || in->dtype != out->dtype) return 0; /* the engine refuses it */
  int widened = 0;
  for (int32_t a = 0; a < in->rank; ++a) {
    if (out->min[a] < in->min[a]) in->min[a] = out->min[a], widened = 1;
    if (out->max[a] > in->max[a]) in->max[a] = out->max[a], widened = 1;
  }
  return widened;
}

/* Body b's network as a CPU plan named after the node and the body (bodies run on the
 * host). */
static etrt_status etrt_lower_body_build(const etrt_ir_node *node, uint32_t b,
                                         etrt_network *network, uint8_t **plan, size_t *plan_size) {
  char name[112];
  snprintf(name, sizeof name, "%.60s/%s", node->name, node->body_names[b]);
  etrt_plan_options options = {
      .device = {ETRT_DEVICE_CPU, 0}, .precision = ETRT_PRECISION_FP32, .name = name};
  return etrt_plan_build(network, &options, plan, plan_size);
}

/* One body as a plan (malloc'd), for input bounds `bounds` (one per body input);
 * carried input first_in + j returns as output first_out + j. Where `outs` is given it
 * receives the bounds of the body's outputs (one per output). */
static etrt_status etrt_lower_body_plan(const etrt_ir_node *node, uint32_t b,
                                        etrt_lower_bound *bounds, uint32_t carried,
                                        uint32_t first_in, uint32_t first_out,
                                        etrt_lower_bound *outs, uint8_t **plan, size_t *plan_size) {
  etrt_ir_graph *body = node->bodies[b];
  /* Each carried value is a body input and a body output (import checks the counts of
   * well-formed nodes; a hostile model can still declare more carried values). */
  if ((uint64_t)body->num_inputs < (uint64_t)first_in + carried ||
      (uint64_t)body->num_outputs < (uint64_t)first_out + carried)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s '%s': body '%s' has %u inputs and %u outputs, too few for %u "
                      "loop-carried values",
                      node->op_type, node->name, node->body_names[b], body->num_inputs,
                      body->num_outputs, carried);
  etrt_host_value_use *uses = malloc(((size_t)body->num_values + 1) * sizeof *uses);
  if (uses == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
  etrt_host_values_find(body, uses);
  etrt_status status = ETRT_OK;
  etrt_network *network = NULL;
  int32_t *net_ids = NULL;
  for (int round = 0;; ++round) {
    for (uint32_t i = 0; i < body->num_inputs && status == ETRT_OK; ++i)
      status = etrt_lower_set_input(body, i, &bounds[i], uses);
    /* An If inside the body whose condition its inputs' shapes decide (exported models
     * test a captured value's rank or size in every branch) is folded as at the top
     * level. Only where nothing is carried: there the bounds are final, while a carried
     * value's may widen in the next round and undo what the fold assumed. */
    uint32_t folded = 0;
    if (status == ETRT_OK && carried == 0) status = etrt_pass_fold_if(body, &folded);
    if (status == ETRT_OK) status = etrt_lower_body_network(body, &network, &net_ids);
    if (status != ETRT_OK) break;
    int widened = 0;
    for (uint32_t j = 0; j < carried && status == ETRT_OK; ++j) {
      etrt_lower_bound out;
      status = etrt_lower_net_bound(network, net_ids[body->outputs[first_out + j]], &out);
      widened |= status == ETRT_OK && etrt_lower_widen(&bounds[first_in + j], &out);
    }
    if (status != ETRT_OK || !widened) break;
    etrt_network_destroy(network);
    free(net_ids);
    network = NULL;
    net_ids = NULL;
    if (round + 1 == ETRT_LOWER_CONTROL_ROUNDS) {
      status = etrt_error(ETRT_ERROR_UNSUPPORTED,
                          "%s '%s': a loop-carried value changes shape from one iteration to the "
                          "next beyond any bound",
                          node->op_type, node->name);
      break;
    }
  }
  for (uint32_t o = 0; status == ETRT_OK && outs != NULL && o < body->num_outputs; ++o)
    status = etrt_lower_net_bound(network, net_ids[body->outputs[o]], &outs[o]);
  if (status == ETRT_OK) status = etrt_lower_body_build(node, b, network, plan, plan_size);
  if (status != ETRT_OK && network != NULL)
    status =
        etrt_error_context(status, "%s '%s': %s: ", node->op_type, node->name, node->body_names[b]);
  etrt_network_destroy(network);
  free(net_ids);
  free(uses);
  return status;
}

/* In place of If branch b, which cannot be built for these bounds (`reason`): a plan
 * of one EtrtRefusedBranch node (engine/ops/control.c), which fails with the reason if
 * the branch is taken, with the branch's inputs (`bounds`) and outputs of the other
 * branch's types and bounds (`outs`), so the If's bounds are the other branch's. */
static etrt_status etrt_lower_refused_plan(const etrt_ir_node *node, uint32_t b,
                                           const etrt_lower_bound *bounds,
                                           const etrt_lower_bound *outs, uint32_t num_outs,
                                           const char *reason, uint8_t **plan, size_t *plan_size) {
  const etrt_ir_graph *body = node->bodies[b];
  if (body->num_outputs != num_outs || num_outs > ETRT_BOUNDS_MAX_OUTPUTS)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "If '%s': %s has %u outputs, the other branch %u (and it cannot be built: "
                      "%s)",
                      node->name, node->body_names[b], body->num_outputs, num_outs, reason);
  uint32_t n_in = body->num_inputs;
  int32_t *ids = malloc(((size_t)n_in + num_outs + 1) * sizeof *ids);
  int64_t *ints = malloc(((size_t)num_outs * (2 + 2 * ETRT_MAX_RANK) + 1) * sizeof *ints);
  etrt_network *network = NULL;
  etrt_status status = ids != NULL && ints != NULL
                           ? etrt_network_create(&network)
                           : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
  for (uint32_t i = 0; status == ETRT_OK && i < n_in; ++i)
    status = etrt_network_add_input(network, body->values[body->inputs[i]].name, bounds[i].dtype,
                                    bounds[i].rank, bounds[i].min, bounds[i].max, &ids[i]);
  if (status == ETRT_OK) {
    int64_t *dtypes = ints, *ranks = ints + num_outs, *mins = ints + 2 * num_outs;
    int64_t dims = 0;
    for (uint32_t o = 0; o < num_outs; ++o) dims += outs[o].rank;
    int64_t *maxs = mins + dims;
    for (uint32_t o = 0, at = 0; o < num_outs; ++o) {
      dtypes[o] = outs[o].dtype;
      ranks[o] = outs[o].rank;
      for (int32_t a = 0; a < outs[o].rank; ++a, ++at) {
        mins[at] = outs[o].min[a];
        maxs[at] = outs[o].max[a];
      }
    }
    const etrt_attribute attributes[] = {
        {.name = "message", .kind = ETRT_ATTRIBUTE_STRING, .s = reason},
        {.name = "dtypes", .kind = ETRT_ATTRIBUTE_INTS, .count = num_outs, .ints = dtypes},
        {.name = "ranks", .kind = ETRT_ATTRIBUTE_INTS, .count = num_outs, .ints = ranks},
        {.name = "min_dims", .kind = ETRT_ATTRIBUTE_INTS, .count = dims, .ints = mins},
        {.name = "max_dims", .kind = ETRT_ATTRIBUTE_INTS, .count = dims, .ints = maxs},
    };
    status = etrt_network_add_op(network, "EtrtRefusedBranch", node->body_names[b], n_in, ids,
                                 num_outs, ids + n_in, 5, attributes);
  }
  for (uint32_t o = 0; status == ETRT_OK && o < num_outs; ++o)
    status = etrt_network_mark_output(network, ids[n_in + o], body->values[body->outputs[o]].name);
  if (status == ETRT_OK) status = etrt_lower_body_build(node, b, network, plan, plan_size);
  etrt_network_destroy(network);
  free(ints);
  free(ids);
  return status;
}

static int64_t etrt_lower_axis(const etrt_ir_node *node, const char *name, uint32_t k,
                               int32_t rank) {
  const etrt_attribute *a = etrt_ir_node_attribute(node, name);
  int64_t axis =
      a != NULL && a->kind == ETRT_ATTRIBUTE_INTS && (int64_t)k < a->count ? a->ints[k] : 0;
  return axis < 0 ? axis + rank : axis;
}

/* Body b's plan as the node's GRAPH attribute. */
static void etrt_lower_set_body(const etrt_ir_node *node, uint32_t b, size_t plan_size,
                                etrt_lower_bodies *out) {
  etrt_attribute *a = &out->attributes[node->num_attributes + b];
  a->name = node->body_names[b];
  a->kind = ETRT_ATTRIBUTE_GRAPH;
  a->tensor.data = out->plans[b];
  a->tensor.dtype = ETRT_DTYPE_UINT8;
  a->tensor.rank = 1;
  a->tensor.sizes[0] = (int64_t)plan_size;
}

etrt_status etrt_lower_bodies_make(const etrt_ir_node *node, etrt_network *network,
                                   const int32_t *net_inputs, etrt_lower_bodies *out) {
  memset(out, 0, sizeof *out);
  bool is_loop = strcmp(node->op_type, "Loop") == 0, is_scan = strcmp(node->op_type, "Scan") == 0;
  bool is_if = !is_loop && !is_scan && node->num_bodies == 2;
  /* An If branch that cannot be built for these bounds (the other sample rate's network,
   * say) is replaced by one that fails when taken, as onnxruntime looks at a branch only
   * when it runs; the other branch must build. */
  int refused = -1;
  char reason[512] = "";
  etrt_lower_bound *outs[2] = {NULL, NULL};
  bool batched = is_scan && etrt_ir_node_attribute_int(node, "_batched", 0) != 0;
  uint32_t first = is_loop ? 2 : is_scan ? (batched ? 1 : 0) : 1; /* node input of body input 0 */
  uint32_t n_in = node->num_inputs;
  /* Signed: a hostile model may declare more scan inputs than the node has. */
  int64_t carried_count = is_loop   ? (int64_t)n_in - 2 - node->num_captures
                          : is_scan ? (int64_t)n_in - first - node->num_captures -
                                          etrt_ir_node_attribute_int(node, "num_scan_inputs", 0)
                                    : 0;
  if (carried_count < 0 || carried_count > n_in)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "%s '%s': %u inputs leave no room for the loop-carried values "
                      "(num_scan_inputs %lld)",
                      node->op_type, node->name, n_in,
                      (long long)etrt_ir_node_attribute_int(node, "num_scan_inputs", 0));
  uint32_t carried = (uint32_t)carried_count;
  etrt_lower_bound *bounds = calloc((size_t)n_in + 2, sizeof *bounds);
  int64_t iteration[2] = {0, 0};
  out->attributes = calloc((size_t)node->num_attributes + 2, sizeof *out->attributes);
  etrt_status status = bounds != NULL && out->attributes != NULL
                           ? ETRT_OK
                           : etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
  for (uint32_t b = 0; b < node->num_bodies && status == ETRT_OK; ++b) {
    const etrt_ir_graph *body = node->bodies[b];
    if (body->num_inputs > n_in + 2) {
      status = etrt_error(ETRT_ERROR_INTERNAL, "%s '%s': body inputs", node->op_type, node->name);
      break;
    }
    for (uint32_t i = 0; i < body->num_inputs && status == ETRT_OK; ++i) {
      etrt_lower_bound *bound = &bounds[i];
      if (is_loop && i < 2) {
        memset(bound, 0, sizeof *bound);
        bound->dtype = i == 0 ? ETRT_DTYPE_INT64 : ETRT_DTYPE_BOOL;
        if (i == 0) {
          /* The iteration number runs over [0, M - 1]. */
          const void *lo = NULL, *hi = NULL;
          if (net_inputs[0] >= 0) etrt_network_host_values(network, net_inputs[0], &lo, &hi);
          iteration[1] = hi != NULL && *(const int64_t *)hi > 0 ? *(const int64_t *)hi - 1
                                                                : ETRT_ENGINE_DIM_UNBOUNDED - 1;
          bound->lo = &iteration[0];
          bound->hi = &iteration[1];
        }
        continue;
      }
      uint32_t k = is_loop ? i : first + i;
      if (k >= n_in || net_inputs[k] < 0) {
        status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s '%s': input %u is omitted",
                            node->op_type, node->name, k);
        break;
      }
      status = etrt_lower_net_bound(network, net_inputs[k], bound);
      if (status != ETRT_OK) break;
      bool captured = k >= n_in - node->num_captures;
      if (captured) etrt_network_host_values(network, net_inputs[k], &bound->lo, &bound->hi);
      if (is_scan && !captured) {
        uint32_t own = i;
        bool scan = own >= carried;
        if (batched && bound->rank > 0) etrt_lower_drop_axis(bound, 0);
        if (scan && bound->rank > 0)
          etrt_lower_drop_axis(
              bound,
              batched ? 0 : etrt_lower_axis(node, "scan_input_axes", own - carried, bound->rank));
      }
    }
    size_t plan_size = 0;
    if (status == ETRT_OK && is_if) {
      outs[b] = calloc((size_t)body->num_outputs + 1, sizeof *outs[b]);
      if (outs[b] == NULL) status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "lowering: out of memory");
    }
    if (status == ETRT_OK)
      status = etrt_lower_body_plan(node, b, bounds, carried, is_loop ? 2 : 0, is_loop ? 1 : 0,
                                    outs[b], &out->plans[b], &plan_size);
    if (status != ETRT_OK && status != ETRT_ERROR_OUT_OF_MEMORY && is_if && refused >= 0) {
      status =
          etrt_error_context(status,
                             "If '%s': neither branch can be built for the shapes of this "
                             "plan (%s: %s); %s: ",
                             node->name, node->body_names[refused], reason, node->body_names[b]);
      break;
    }
    if (status != ETRT_OK && status != ETRT_ERROR_OUT_OF_MEMORY && is_if) {
      snprintf(reason, sizeof reason, "%s", etrt_last_error());
      etrt_clear_error();
      refused = (int)b;
      status = ETRT_OK;
      continue;
    }
    if (status == ETRT_OK) etrt_lower_set_body(node, b, plan_size, out);
  }
  if (status == ETRT_OK && refused >= 0) {
    /* the other branch built: the refused one takes its outputs' types and bounds */
    uint32_t r = (uint32_t)refused, other = 1 - r;
    if (!node->bodies[r]->refusal_warned)
      etrt_log(ETRT_LOG_WARN,
               "If '%s': %s cannot be built for the shapes of this plan; it fails if it is "
               "taken: %s",
               node->name, node->body_names[r], reason);
    node->bodies[r]->refusal_warned = true;
    size_t plan_size = 0;
    status = etrt_lower_refused_plan(node, r, bounds, outs[other], node->bodies[other]->num_outputs,
                                     reason, &out->plans[r], &plan_size);
    if (status == ETRT_OK) etrt_lower_set_body(node, r, plan_size, out);
  }
  if (status == ETRT_OK) {
    if (node->num_attributes)
      memcpy(out->attributes, node->attributes, node->num_attributes * sizeof *out->attributes);
    out->count = node->num_attributes + node->num_bodies;
  }
  free(bounds);
  free(outs[0]);
  free(outs[1]);
  if (status != ETRT_OK) etrt_lower_bodies_release(out);
  return status;
}

void etrt_lower_bodies_release(etrt_lower_bodies *bodies) {
  for (uint32_t b = 0; b < 2; ++b) free(bodies->plans[b]);
  free(bodies->attributes);
  memset(bodies, 0, sizeof *bodies);
}
