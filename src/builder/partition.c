#include "builder/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/host_values.h"
#include "builder/node_eval.h"
#include "engine/op.h"

bool etrt_partition_cuda_default(const etrt_ir_graph *graph, const etrt_ir_node *node, void *user) {
  (void)user;
  const etrt_op_def *def = etrt_op_find(node->op_type);
  if (def == NULL) return false;
  /* Inputs whose values decide shapes must be known when the plan is built: a GPU
   * partition cannot read them back from device memory to size its outputs. */
  for (uint32_t i = 0; i < node->num_inputs && i < 32; ++i)
    if ((def->value_inputs >> i & 1u) && node->inputs[i] >= 0 &&
        !graph->values[node->inputs[i]].is_constant)
      return false;
  /* The definition's predicate, compiled in every build, so that a CPU-only build
   * places nodes exactly as a CUDA build does. */
  if (def->cuda_supports == NULL) return false;
  if (def->cuda_supports == etrt_op_supports_all) return true;
  etrt_node engine_node;
  if (etrt_node_eval_prepare(graph, node, &engine_node) != ETRT_OK) return false;
  etrt_tensor *inputs = calloc((size_t)node->num_inputs + 1, sizeof *inputs);
  bool ok = false;
  if (inputs != NULL) {
    etrt_node_eval_inputs(graph, node, inputs);
    ok = etrt_op_cuda_supports(&engine_node, inputs) != 0;
  }
  free(inputs);
  etrt_node_eval_release(&engine_node);
  return ok;
}

void etrt_partitioning_destroy(etrt_partitioning *partitioning) {
  if (partitioning == NULL) return;
  for (uint32_t i = 0; i < partitioning->count; ++i) {
    free(partitioning->parts[i].nodes);
    free(partitioning->parts[i].inputs);
    free(partitioning->parts[i].outputs);
  }
  free(partitioning->parts);
  free(partitioning);
}

static bool etrt_partition_same_device(etrt_device a, etrt_device b) {
  return a.type == b.type && (a.type == ETRT_DEVICE_CPU || a.index == b.index);
}

/* Whether a node computes values that some plan needs on the host when it is
 * built (from graph inputs given by value): a GPU plan computes them on the device,
 * where the plan that needs them cannot read them, so such nodes run on the CPU. */
static bool etrt_partition_feeds_host(const etrt_ir_node *node, const etrt_host_value_use *uses,
                                      const bool *known) {
  /* An op with a bound reads values that are not known at build time from memory at
   * execute (its plan takes them as inputs), so what computes those may run on a GPU. */
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    int32_t v = node->outputs[o];
    if (v >= 0 && uses[v].node >= 0 && (!uses[v].optional || known[v])) return true;
  }
  return false;
}

/* Whether a node reads a value with no size bound (dims known only at execute, in memory
 * the plan computing it grows): such a value cannot cross into another plan, so what
 * reads it stays with it on the CPU. */
static bool etrt_partition_reads_unbounded(const etrt_ir_graph *graph, const etrt_ir_node *node) {
  for (uint32_t i = 0; i < node->num_inputs; ++i) {
    int32_t v = node->inputs[i];
    if (v < 0) continue;
    const etrt_ir_value *value = &graph->values[v];
    for (int32_t a = 0; a < value->rank; ++a)
      if (value->max[a] >= ETRT_OP_DIM_UNBOUNDED) return true;
  }
  return false;
}

/* known[v]: v can be computed when the plan is built: a constant, a graph input given by
 * value, or the output of an operation whose inputs (but those it reads the dims of) are
 * all known. The node array is a topological order. */
static void etrt_partition_known(const etrt_ir_graph *graph, bool *known) {
  for (uint32_t v = 0; v < graph->num_values; ++v)
    known[v] = graph->values[v].is_constant || graph->values[v].value_min != NULL;
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    const etrt_op_def *def = etrt_op_find(node->op_type);
    bool all = def != NULL && !def->dims_from_kernel;
    for (uint32_t i = 0; i < node->num_inputs && all; ++i) {
      int32_t v = node->inputs[i];
      bool dims_only = def != NULL && i < 32 && (def->dims_only_inputs >> i & 1u);
      if (v >= 0 && !dims_only && !known[v]) all = false;
    }
    for (uint32_t o = 0; o < node->num_outputs; ++o)
      if (node->outputs[o] >= 0) known[node->outputs[o]] = all;
  }
}

/* The device of each live node. */
static etrt_status etrt_partition_assign(const etrt_ir_graph *graph,
                                         const etrt_partition_options *options,
                                         etrt_device *devices) {
  etrt_partition_cuda_fn supports =
      options->cuda_supports ? options->cuda_supports : etrt_partition_cuda_default;
  etrt_host_value_use *uses = malloc(((size_t)graph->num_values + 1) * sizeof *uses);
  bool *known = malloc(((size_t)graph->num_values + 1) * sizeof *known);
  if (uses == NULL || known == NULL) {
    free(uses);
    free(known);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
  }
  etrt_host_values_find(graph, uses);
  etrt_partition_known(graph, known);
  etrt_status status = ETRT_OK;
  for (uint32_t p = 0; p < options->num_placements; ++p) {
    bool found = false;
    for (uint32_t n = 0; n < graph->num_nodes && !found; ++n)
      found = strcmp(graph->nodes[n].name, options->placements[p].node) == 0;
    if (!found) {
      status =
          etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "placement: the model has no node named '%s'",
                     options->placements[p].node);
      goto done;
    }
  }
  for (uint32_t n = 0; n < graph->num_nodes; ++n) {
    const etrt_ir_node *node = &graph->nodes[n];
    if (node->dead) continue;
    const etrt_partition_placement *placed = NULL;
    for (uint32_t p = 0; p < options->num_placements; ++p)
      if (strcmp(options->placements[p].node, node->name) == 0) placed = &options->placements[p];
    etrt_device device = placed ? placed->device : options->target;
    if (device.type == ETRT_DEVICE_CUDA && (etrt_partition_feeds_host(node, uses, known) ||
                                            etrt_partition_reads_unbounded(graph, node) ||
                                            !supports(graph, node, options->cuda_user))) {
      if (placed != NULL) {
        char name[32];
        status =
            etrt_error(ETRT_ERROR_UNSUPPORTED,
                       "placement: node '%s' (%s) is placed on %s, but the engine cannot run "
                       "it there (no CUDA kernel for these inputs, or its output shape "
                       "depends on values computed on the device)",
                       node->name, node->op_type, etrt_device_format(device, name, sizeof name));
        goto done;
      }
      device = (etrt_device){ETRT_DEVICE_CPU, 0};
    }
    if (device.type == ETRT_DEVICE_CPU) device.index = 0;
    devices[n] = device;
  }
done:
  free(uses);
  free(known);
  return status;
}

/* Appends to a malloc'd int32 array (capacity doubles). */
static bool etrt_partition_push(int32_t **array, uint32_t *count, uint32_t *capacity, int32_t v) {
  if (*count == *capacity) {
    uint32_t fresh = *capacity ? *capacity * 2 : 8;
    int32_t *grown = realloc(*array, fresh * sizeof *grown);
    if (grown == NULL) return false;
    *array = grown;
    *capacity = fresh;
  }
  (*array)[(*count)++] = v;
  return true;
}

/* Per-node and per-value scratch of the steps below. A step marks what it visits
 * with a fresh number, so nothing needs clearing between partitions. */
typedef struct etrt_partition_scratch {
  const etrt_ir_graph *graph;
  int32_t *home;       /* per node: the partition of its run in the node order, or -1 */
  int32_t *node_mark;  /* per node */
  int32_t *value_mark; /* per value */
  bool *flag;          /* per value */
  bool *known;         /* per value: computable when the plan is built */
  uint32_t *list;      /* per node */
  uint32_t *heap;      /* per node */
  int32_t mark;
} etrt_partition_scratch;

static etrt_status etrt_partition_out_of_memory(void) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "partitioning: out of memory");
}

/* The live node writing v, or -1 (graph inputs, constants). */
static int32_t etrt_partition_producer(const etrt_ir_graph *graph, int32_t v) {
  int32_t p = graph->values[v].producer;
  return p >= 0 && !graph->nodes[p].dead ? p : -1;
}

/* Replaces part->nodes by list[0..count). */
static etrt_status etrt_partition_set_nodes(etrt_partition *part, const uint32_t *list,
                                            uint32_t count) {
  uint32_t *nodes = malloc(((size_t)count + 1) * sizeof *nodes);
  if (nodes == NULL) return etrt_partition_out_of_memory();
  memcpy(nodes, list, (size_t)count * sizeof *nodes);
  free(part->nodes);
  part->nodes = nodes;
  part->num_nodes = count;
  return ETRT_OK;
}

/* Cuts the node order where the device changes: each live node's run is its home. */
static etrt_status etrt_partition_cut(etrt_partition_scratch *s, const etrt_device *devices,
                                      etrt_partitioning *result) {
  const etrt_ir_graph *g = s->graph;
  uint32_t capacity = 0, count = 0;
  for (uint32_t n = 0; n < g->num_nodes; ++n) s->home[n] = -1;
  for (uint32_t n = 0; n <= g->num_nodes; ++n) {
    if (n < g->num_nodes && g->nodes[n].dead) continue;
    etrt_partition *last = result->count ? &result->parts[result->count - 1] : NULL;
    if (last != NULL && n < g->num_nodes && etrt_partition_same_device(last->device, devices[n])) {
      s->list[count++] = n;
      s->home[n] = (int32_t)(result->count - 1);
      continue;
    }
    if (last != NULL) ETRT_RETURN_IF_ERROR(etrt_partition_set_nodes(last, s->list, count));
    if (n == g->num_nodes) break;
    if (result->count == capacity) {
      capacity = capacity ? capacity * 2 : 4;
      etrt_partition *grown = realloc(result->parts, capacity * sizeof *grown);
      if (grown == NULL) return etrt_partition_out_of_memory();
      result->parts = grown;
    }
    last = &result->parts[result->count++];
    memset(last, 0, sizeof *last);
    last->device = devices[n];
    count = 0;
    s->list[count++] = n;
    s->home[n] = (int32_t)(result->count - 1);
  }
  return ETRT_OK;
}

/* A max-heap of node indices. */
static void etrt_partition_heap_push(uint32_t *heap, uint32_t *count, uint32_t v) {
  uint32_t i = (*count)++;
  while (i > 0 && heap[(i - 1) / 2] < v) {
    heap[i] = heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  heap[i] = v;
}

static uint32_t etrt_partition_heap_pop(uint32_t *heap, uint32_t *count) {
  uint32_t top = heap[0], v = heap[--*count], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= *count) break;
    if (c + 1 < *count && heap[c + 1] > heap[c]) ++c;
    if (heap[c] <= v) break;
    heap[i] = heap[c];
    i = c;
  }
  if (*count > 0) heap[i] = v;
  return top;
}

/* A plan must compute from its own inputs every value it needs when it is built
 * (a value input of its nodes, and what that is computed from): the engine evaluates
 * them on the host while building, and a value another plan computes is only known
 * when that plan runs. So the nodes computing such a value in another partition are
 * recomputed here too (a copy of the small host-value chain, back to constants and
 * graph inputs given by value; inputs read for their dims alone may still come from
 * elsewhere). The partition's nodes and the copies are visited last to first
 * (readers before the writers they need), the copies through a heap, so the cost
 * follows what is visited, not how far back a chain starts. */
static etrt_status etrt_partition_recompute(etrt_partition_scratch *s, etrt_partition *part) {
  const etrt_ir_graph *g = s->graph;
  int32_t mark = ++s->mark;
  for (uint32_t j = 0; j < part->num_nodes; ++j) s->node_mark[part->nodes[j]] = mark;
  uint32_t j = part->num_nodes, pending = 0, count = 0;
  while (j > 0 || pending > 0) {
    uint32_t n = pending > 0 && (j == 0 || s->heap[0] > part->nodes[j - 1])
                     ? etrt_partition_heap_pop(s->heap, &pending)
                     : part->nodes[--j];
    s->list[count++] = n;
    const etrt_ir_node *node = &g->nodes[n];
    const etrt_op_def *def = etrt_op_find(node->op_type);
    uint32_t value_inputs = def ? def->value_inputs : 0,
             dims_only = def ? def->dims_only_inputs : 0;
    bool needed = false; /* some output is needed on the host here */
    for (uint32_t o = 0; o < node->num_outputs; ++o)
      needed |= node->outputs[o] >= 0 && s->value_mark[node->outputs[o]] == mark;
    for (uint32_t i = 0; i < node->num_inputs; ++i) {
      int32_t v = node->inputs[i];
      if (v < 0 || g->values[v].is_constant) continue;
      /* An op with a bound reads a value not known at build time from memory at
       * execute: its plan takes it as an input, nothing is recomputed for it. */
      bool by_value = i < 32 && (value_inputs >> i & 1u) && (def->bound == NULL || s->known[v]);
      bool by_dims = i < 32 && (dims_only >> i & 1u);
      if (!by_value && (!needed || by_dims)) continue;
      s->value_mark[v] = mark;
      int32_t p = etrt_partition_producer(g, v);
      if (p < 0 || s->node_mark[p] == mark) continue;
      s->node_mark[p] = mark;
      etrt_partition_heap_push(s->heap, &pending, (uint32_t)p);
    }
  }
  if (count == part->num_nodes) return ETRT_OK;
  for (uint32_t a = 0, b = count - 1; a < b; ++a, --b) {
    uint32_t t = s->list[a];
    s->list[a] = s->list[b];
    s->list[b] = t;
  }
  return etrt_partition_set_nodes(part, s->list, count);
}

/* Drops the node copies and originals whose values nobody reads any more (an
 * original whose every reader elsewhere now has its own copy), walking the
 * partitions and their nodes backwards. flag[v]: a later partition reads v from
 * where it was computed first. */
static void etrt_partition_prune(etrt_partition_scratch *s, etrt_partitioning *result) {
  const etrt_ir_graph *g = s->graph;
  for (uint32_t v = 0; v < g->num_values; ++v) s->flag[v] = false;
  for (uint32_t i = 0; i < g->num_outputs; ++i) s->flag[g->outputs[i]] = true;
  for (uint32_t k = result->count; k-- > 0;) {
    etrt_partition *part = &result->parts[k];
    int32_t mark = ++s->mark;
    for (uint32_t j = 0; j < part->num_nodes; ++j) s->node_mark[part->nodes[j]] = mark;
    uint32_t kept = part->num_nodes;
    for (uint32_t j = part->num_nodes; j-- > 0;) {
      uint32_t n = part->nodes[j];
      const etrt_ir_node *node = &g->nodes[n];
      bool here = s->home[n] == (int32_t)k, live = false;
      for (uint32_t o = 0; o < node->num_outputs; ++o) {
        int32_t v = node->outputs[o];
        live |= v >= 0 && (s->value_mark[v] == mark || (here && s->flag[v]));
      }
      if (!live) {
        if (here) s->home[n] = -1;
        continue;
      }
      part->nodes[--kept] = n;
      for (uint32_t i = 0; i < node->num_inputs; ++i) {
        int32_t v = node->inputs[i];
        if (v < 0 || g->values[v].is_constant) continue;
        int32_t p = etrt_partition_producer(g, v);
        if (p >= 0 && s->node_mark[p] == mark)
          s->value_mark[v] = mark;
        else
          s->flag[v] = true;
      }
    }
    memmove(part->nodes, part->nodes + kept,
            (size_t)(part->num_nodes - kept) * sizeof *part->nodes);
    part->num_nodes -= kept;
  }
}

/* Removes the partitions pruning emptied and joins the neighbours that then share a
 * device (one node list in the graph's order, each node once). */
static etrt_status etrt_partition_join(etrt_partition_scratch *s, etrt_partitioning *result) {
  const etrt_ir_graph *g = s->graph;
  int32_t *renumber = malloc(((size_t)result->count + 1) * sizeof *renumber);
  if (renumber == NULL) return etrt_partition_out_of_memory();
  uint32_t count = 0;
  etrt_status status = ETRT_OK;
  for (uint32_t k = 0; k < result->count; ++k) {
    etrt_partition *part = &result->parts[k];
    if (part->num_nodes == 0) {
      renumber[k] = -1;
      free(part->nodes);
      continue;
    }
    etrt_partition *last = count ? &result->parts[count - 1] : NULL;
    if (last == NULL || !etrt_partition_same_device(last->device, part->device)) {
      renumber[k] = (int32_t)count;
      result->parts[count++] = *part;
      continue;
    }
    renumber[k] = (int32_t)(count - 1);
    uint32_t a = 0, b = 0, n = 0;
    while (a < last->num_nodes || b < part->num_nodes) {
      uint32_t x = a < last->num_nodes ? last->nodes[a] : UINT32_MAX;
      uint32_t y = b < part->num_nodes ? part->nodes[b] : UINT32_MAX;
      s->list[n++] = x < y ? x : y;
      a += x <= y;
      b += y <= x;
    }
    free(part->nodes);
    if (status == ETRT_OK) status = etrt_partition_set_nodes(last, s->list, n);
  }
  result->count = count;
  for (uint32_t n = 0; n < g->num_nodes; ++n)
    if (s->home[n] >= 0) s->home[n] = renumber[s->home[n]];
  free(renumber);
  return status;
}

/* Inputs: values a partition reads and does not compute (graph inputs, other
 * partitions' outputs); outputs: values a partition is the home of that others
 * read, or graph outputs. */
static etrt_status etrt_partition_connect(etrt_partition_scratch *s, etrt_partitioning *result) {
  const etrt_ir_graph *g = s->graph;
  for (uint32_t v = 0; v < g->num_values; ++v) s->flag[v] = false;
  for (uint32_t i = 0; i < g->num_outputs; ++i) s->flag[g->outputs[i]] = true;
  for (uint32_t k = 0; k < result->count; ++k) {
    etrt_partition *part = &result->parts[k];
    int32_t mark = ++s->mark;
    uint32_t capacity = 0;
    part->num_recomputed = 0;
    for (uint32_t j = 0; j < part->num_nodes; ++j) {
      const etrt_ir_node *node = &g->nodes[part->nodes[j]];
      int32_t home = s->home[part->nodes[j]];
      part->num_recomputed += home >= 0 && home != (int32_t)k;
      for (uint32_t i = 0; i < node->num_inputs; ++i) {
        int32_t v = node->inputs[i];
        if (v < 0 || g->values[v].is_constant || s->value_mark[v] == mark) continue;
        int32_t p = etrt_partition_producer(g, v);
        if (p >= 0 && s->node_mark[p] == mark) continue;
        s->value_mark[v] = mark;
        if (p >= 0) s->flag[v] = true;
        if (!etrt_partition_push(&part->inputs, &part->num_inputs, &capacity, v))
          return etrt_partition_out_of_memory();
      }
      s->node_mark[part->nodes[j]] = mark;
    }
  }
  for (uint32_t k = 0; k < result->count; ++k) {
    etrt_partition *part = &result->parts[k];
    uint32_t capacity = 0;
    for (uint32_t j = 0; j < part->num_nodes; ++j) {
      if (s->home[part->nodes[j]] != (int32_t)k) continue;
      const etrt_ir_node *node = &g->nodes[part->nodes[j]];
      for (uint32_t o = 0; o < node->num_outputs; ++o) {
        int32_t v = node->outputs[o];
        if (v < 0 || !s->flag[v]) continue;
        if (!etrt_partition_push(&part->outputs, &part->num_outputs, &capacity, v))
          return etrt_partition_out_of_memory();
      }
    }
  }
  return ETRT_OK;
}

etrt_status etrt_partition_graph(const etrt_ir_graph *graph, const etrt_partition_options *options,
                                 etrt_partitioning **out) {
  *out = NULL;
  uint32_t nn = graph->num_nodes, nv = graph->num_values;
  etrt_partition_scratch s = {.graph = graph};
  etrt_device *devices = calloc((size_t)nn + 1, sizeof *devices);
  s.home = malloc(((size_t)nn + 1) * sizeof *s.home);
  s.node_mark = calloc((size_t)nn + 1, sizeof *s.node_mark);
  s.value_mark = calloc((size_t)nv + 1, sizeof *s.value_mark);
  s.flag = calloc((size_t)nv + 1, sizeof *s.flag);
  s.known = calloc((size_t)nv + 1, sizeof *s.known);
  s.list = malloc(((size_t)nn + 1) * sizeof *s.list);
  s.heap = malloc(((size_t)nn + 1) * sizeof *s.heap);
  etrt_partitioning *result = calloc(1, sizeof *result);
  etrt_status status = ETRT_OK;
  if (!devices || !s.home || !s.node_mark || !s.value_mark || !s.flag || !s.known || !s.list ||
      !s.heap || !result)
    status = etrt_partition_out_of_memory();
  if (status == ETRT_OK) etrt_partition_known(graph, s.known);
  if (status == ETRT_OK) status = etrt_partition_assign(graph, options, devices);
  if (status == ETRT_OK) status = etrt_partition_cut(&s, devices, result);
  bool copied = false;
  for (uint32_t k = 0; k < result->count && status == ETRT_OK; ++k) {
    uint32_t before = result->parts[k].num_nodes;
    status = etrt_partition_recompute(&s, &result->parts[k]);
    copied |= result->parts[k].num_nodes != before;
  }
  if (status == ETRT_OK && copied) {
    etrt_partition_prune(&s, result);
    status = etrt_partition_join(&s, result);
  }
  if (status == ETRT_OK) status = etrt_partition_connect(&s, result);
  free(devices);
  free(s.home);
  free(s.node_mark);
  free(s.value_mark);
  free(s.flag);
  free(s.known);
  free(s.list);
  free(s.heap);
  if (status != ETRT_OK) {
    etrt_partitioning_destroy(result);
    return status;
  }
  *out = result;
  return ETRT_OK;
}

void etrt_partition_describe(const etrt_ir_graph *graph, const etrt_partition *part, uint32_t index,
                             char *buf, size_t size) {
  char device[32];
  etrt_device_format(part->device, device, sizeof device);
  int used = snprintf(buf, size, "partition %u %s: %u op%s (", index, device, part->num_nodes,
                      part->num_nodes == 1 ? "" : "s");
  /* Op types in order of first appearance, with counts. */
  bool first = true;
  for (uint32_t j = 0; j < part->num_nodes && used > 0 && (size_t)used < size; ++j) {
    const char *op = graph->nodes[part->nodes[j]].op_type;
    bool seen = false;
    for (uint32_t p = 0; p < j && !seen; ++p)
      seen = strcmp(graph->nodes[part->nodes[p]].op_type, op) == 0;
    if (seen) continue;
    uint32_t count = 0;
    for (uint32_t p = j; p < part->num_nodes; ++p)
      count += strcmp(graph->nodes[part->nodes[p]].op_type, op) == 0;
    int w = count > 1 ? snprintf(buf + used, size - (size_t)used, "%s%s x%u", first ? "" : ", ", op,
                                 count)
                      : snprintf(buf + used, size - (size_t)used, "%s%s", first ? "" : ", ", op);
    if (w < 0) break;
    used += w;
    first = false;
  }
  if (used > 0 && (size_t)used + 2 <= size) {
    if (part->num_recomputed > 0)
      snprintf(buf + used, size - (size_t)used, "), %u recomputed from other partitions",
               part->num_recomputed);
    else
      snprintf(buf + used, size - (size_t)used, ")");
  } else if (size > 5) {
    memcpy(buf + size - 5, "...)", 5);
  }
}
