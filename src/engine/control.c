/* If, Loop and Scan run on the host (control.h). */
#include "engine/control.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/status.h"
#include "engine/ops/control.h"

typedef struct etrt_control_buffer {
  void *data;
  size_t capacity;
} etrt_control_buffer;

/* A body value between runs: where its bytes are and its dims. */
typedef struct etrt_control_value {
  const void *data;
  int32_t rank;
  int64_t dims[ETRT_MAX_RANK];
} etrt_control_value;

struct etrt_control {
  const etrt_node *node;
  const etrt_control_state *s;
  etrt_exec_context *ctx[2];
  uint32_t inputs, outputs;        /* of each body */
  etrt_control_buffer *outs;       /* per body output: bound to it unless the body holds it */
  etrt_control_buffer *turns[2];   /* per carried value, the two sets taken in turns */
  etrt_control_buffer *gathered;   /* per scan output of a Loop: the slices so far */
  etrt_control_buffer *slices;     /* per scan input of a Scan: the slice of this step */
  etrt_control_value *carried;     /* per carried value: its current bytes and dims */
  etrt_control_value *first_slice; /* per scan output: the dims every step must give */
  int64_t iteration;
  uint8_t cond;
  uint64_t dummy[8]; /* the address of zero-size bindings */
};

static etrt_status etrt_control_oom(const etrt_node *node) {
  return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s '%s': out of memory", node->op_type, node->name);
}

/* Makes `b` hold at least `bytes`, keeping what it holds when `keep`. */
static etrt_status etrt_control_reserve(const etrt_node *node, etrt_control_buffer *b, size_t bytes,
                                        int keep) {
  if (bytes <= b->capacity && b->data != NULL) return ETRT_OK;
  size_t capacity = b->capacity * 2 > bytes ? b->capacity * 2 : bytes;
  if (capacity == 0) capacity = 64;
  void *p = keep ? realloc(b->data, capacity) : malloc(capacity);
  if (p == NULL) return etrt_control_oom(node);
  if (!keep) free(b->data);
  b->data = p;
  b->capacity = capacity;
  return ETRT_OK;
}

static int64_t etrt_control_io_bytes(const etrt_engine_io *io) {
  if (io->engine_memory) return 0;
  return etrt_graph_nbytes(io->dtype, io->rank, io->max_sizes);
}

etrt_status etrt_control_create(const etrt_node *node, etrt_control **out) {
  *out = NULL;
  const etrt_control_state *s = node->state;
  etrt_control *c = calloc(1, sizeof *c);
  if (c == NULL) return etrt_control_oom(node);
  c->node = node;
  c->s = s;
  etrt_status status = ETRT_OK;
  for (uint32_t b = 0; b < s->body_count && status == ETRT_OK; ++b)
    status = etrt_exec_context_create(s->bodies[b], NULL, &c->ctx[b]);
  const etrt_engine *body = s->bodies[0];
  uint32_t count = etrt_engine_io_count(body);
  for (uint32_t i = 0; i < count; ++i) c->inputs += etrt_engine_io_at(body, i)->is_input != 0;
  c->outputs = count - c->inputs;
  uint32_t n = s->carried > 0 ? s->carried : 1, k = s->scans > 0 ? s->scans : 1;
  uint32_t m = s->scan_inputs > 0 ? s->scan_inputs : 1;
  c->outs = calloc(c->outputs + 1, sizeof *c->outs);
  c->turns[0] = calloc(n, sizeof *c->turns[0]);
  c->turns[1] = calloc(n, sizeof *c->turns[1]);
  c->gathered = calloc(k, sizeof *c->gathered);
  c->slices = calloc(m, sizeof *c->slices);
  c->carried = calloc(n, sizeof *c->carried);
  c->first_slice = calloc(k, sizeof *c->first_slice);
  if (status == ETRT_OK &&
      (c->outs == NULL || c->turns[0] == NULL || c->turns[1] == NULL || c->gathered == NULL ||
       c->slices == NULL || c->carried == NULL || c->first_slice == NULL))
    status = etrt_control_oom(node);
  /* Room for every body output at its largest, so that runs allocate nothing. */
  for (uint32_t b = 0; b < s->body_count && status == ETRT_OK; ++b) {
    for (uint32_t o = 0; o < c->outputs && status == ETRT_OK; ++o) {
      int64_t bytes = etrt_control_io_bytes(etrt_engine_io_at(s->bodies[b], c->inputs + o));
      if (bytes < 0) bytes = 0;
      uint32_t first_carried = s->kind == ETRT_CONTROL_LOOP ? 1 : 0;
      int carried =
          s->kind != ETRT_CONTROL_IF && o >= first_carried && o < first_carried + s->carried;
      if (carried) {
        for (int t = 0; t < 2 && status == ETRT_OK; ++t)
          status = etrt_control_reserve(node, &c->turns[t][o - first_carried], (size_t)bytes, 0);
      } else {
        status = etrt_control_reserve(node, &c->outs[o], (size_t)bytes, 0);
      }
    }
  }
  for (uint32_t i = 0; i < s->scan_inputs && status == ETRT_OK; ++i) {
    int64_t bytes = etrt_control_io_bytes(etrt_engine_io_at(body, s->carried + i));
    status = etrt_control_reserve(node, &c->slices[i], bytes > 0 ? (size_t)bytes : 0, 0);
  }
  if (status != ETRT_OK) {
    etrt_control_destroy(c);
    return status;
  }
  *out = c;
  return ETRT_OK;
}

void etrt_control_destroy(etrt_control *c) {
  if (c == NULL) return;
  const etrt_control_state *s = c->s;
  for (uint32_t b = 0; b < 2; ++b) etrt_exec_context_destroy(c->ctx[b]);
  for (uint32_t o = 0; c->outs != NULL && o < c->outputs; ++o) free(c->outs[o].data);
  for (uint32_t j = 0; j < s->carried; ++j)
    for (int t = 0; t < 2; ++t)
      if (c->turns[t] != NULL) free(c->turns[t][j].data);
  for (uint32_t k = 0; c->gathered != NULL && k < s->scans; ++k) free(c->gathered[k].data);
  for (uint32_t i = 0; c->slices != NULL && i < s->scan_inputs; ++i) free(c->slices[i].data);
  free(c->outs);
  free(c->turns[0]);
  free(c->turns[1]);
  free(c->gathered);
  free(c->slices);
  free(c->carried);
  free(c->first_slice);
  free(c);
}

/* --- binding a body --------------------------------------------------------------- */

static etrt_status etrt_control_bind_input(etrt_control *c, etrt_exec_context *ctx, uint32_t io,
                                           etrt_dtype dtype, const void *data, int32_t rank,
                                           const int64_t *dims) {
  const etrt_engine_io *e = etrt_engine_io_at(etrt_exec_context_engine(ctx), io);
  if (e->is_shape_input) {
    int64_t values[64];
    int64_t count = 1;
    for (int32_t a = 0; a < rank; ++a) count *= dims[a];
    if (count > 64) count = 64;
    for (int64_t i = 0; i < count; ++i)
      values[i] =
          dtype == ETRT_DTYPE_INT32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
    return etrt_exec_context_set_input_values(ctx, io, values, count);
  }
  ETRT_RETURN_IF_ERROR(etrt_exec_context_set_input_shape(ctx, io, rank, dims));
  return etrt_exec_context_set_address(ctx, io, data != NULL ? (void *)data : c->dummy);
}

static etrt_status etrt_control_bind_tensor(etrt_control *c, etrt_exec_context *ctx, uint32_t io,
                                            const etrt_tensor *t) {
  return etrt_control_bind_input(c, ctx, io, t->dtype, t->data, t->rank, t->dims);
}

/* Binds body output o to `b` unless the body holds its memory. */
static etrt_status etrt_control_bind_output(etrt_control *c, etrt_exec_context *ctx, uint32_t o,
                                            etrt_control_buffer *b) {
  uint32_t io = c->inputs + o;
  if (etrt_engine_io_at(etrt_exec_context_engine(ctx), io)->engine_memory) return ETRT_OK;
  return etrt_exec_context_set_address(ctx, io, b->data != NULL ? b->data : c->dummy);
}

/* Body output o after a run: its bytes and dims. */
static etrt_status etrt_control_result(etrt_control *c, etrt_exec_context *ctx, uint32_t o,
                                       const etrt_control_buffer *b, etrt_control_value *v) {
  uint32_t io = c->inputs + o;
  ETRT_RETURN_IF_ERROR(etrt_exec_context_output_shape(ctx, io, &v->rank, v->dims));
  if (etrt_engine_io_at(etrt_exec_context_engine(ctx), io)->engine_memory) {
    void *data = NULL;
    ETRT_RETURN_IF_ERROR(etrt_exec_context_output_memory(ctx, io, &data, NULL));
    v->data = data;
  } else {
    v->data = b->data;
  }
  return ETRT_OK;
}

static etrt_dtype etrt_control_output_dtype(const etrt_control *c, uint32_t o) {
  return etrt_engine_io_at(c->s->bodies[0], c->inputs + o)->dtype;
}

static int64_t etrt_control_value_bytes(etrt_dtype dtype, const etrt_control_value *v) {
  return etrt_graph_nbytes(dtype, v->rank, v->dims);
}

/* Output o of the node at these dims: its memory (grown when it has no bound), checked
 * against what was planned. */
static etrt_status etrt_control_output_memory(const etrt_exec_run *run, const etrt_node *node,
                                              uint32_t o, etrt_tensor *out, int32_t rank,
                                              const int64_t *dims) {
  int32_t id = node->outputs[o];
  const etrt_graph_value *gv = &run->engine->graph.values[id];
  int64_t bytes = etrt_graph_nbytes(gv->dtype, rank, dims);
  if (bytes < 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "output %u ('%s'): the size overflows", o,
                      gv->name);
  if (etrt_graph_value_unbounded(gv)) {
    if (bytes > run->planned_bytes[id] || run->values[id].data == NULL)
      ETRT_RETURN_IF_ERROR(run->grow(run->grow_state, (uint32_t)id, (size_t)bytes));
    out->data = run->values[id].data;
  }
  if (bytes > run->planned_bytes[id])
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "output %u ('%s') needs %lld bytes; %lld were planned", o, gv->name,
                      (long long)bytes, (long long)run->planned_bytes[id]);
  out->dtype = gv->dtype;
  out->rank = rank;
  memcpy(out->dims, dims, (size_t)rank * sizeof *dims);
  return ETRT_OK;
}

static etrt_status etrt_control_emit(const etrt_exec_run *run, const etrt_node *node, uint32_t o,
                                     etrt_tensor *out, const etrt_control_value *v) {
  ETRT_RETURN_IF_ERROR(etrt_control_output_memory(run, node, o, out, v->rank, v->dims));
  int64_t bytes = etrt_graph_nbytes(out->dtype, v->rank, v->dims);
  if (bytes > 0 && out->data != v->data) memcpy(out->data, v->data, (size_t)bytes);
  return ETRT_OK;
}

/* --- If --------------------------------------------------------------------------- */

static etrt_status etrt_control_if(etrt_control *c, const etrt_exec_run *run, etrt_tensor *in,
                                   etrt_tensor *out) {
  const etrt_node *node = c->node;
  int taken = *(const uint8_t *)in[0].data != 0;
  etrt_exec_context *ctx = c->ctx[taken ? 0 : 1];
  for (uint32_t i = 1; i < node->num_inputs; ++i)
    ETRT_RETURN_IF_ERROR(etrt_control_bind_tensor(c, ctx, i - 1, &in[i]));
  for (uint32_t o = 0; o < c->outputs; ++o)
    ETRT_RETURN_IF_ERROR(etrt_control_bind_output(c, ctx, o, &c->outs[o]));
  etrt_status s = etrt_exec_context_enqueue(ctx, NULL);
  if (s != ETRT_OK) return etrt_error_context(s, "%s: ", taken ? "then_branch" : "else_branch");
  for (uint32_t o = 0; o < c->outputs; ++o) {
    etrt_control_value v;
    ETRT_RETURN_IF_ERROR(etrt_control_result(c, ctx, o, &c->outs[o], &v));
    ETRT_RETURN_IF_ERROR(etrt_control_emit(run, node, o, &out[o], &v));
  }
  return ETRT_OK;
}

/* --- Loop ------------------------------------------------------------------------- */

/* A carried value's result of step `turn`: where the next step reads it. */
static etrt_status etrt_control_carry(etrt_control *c, etrt_exec_context *ctx, uint32_t o,
                                      uint32_t j, int turn) {
  etrt_control_value v;
  etrt_control_buffer *b = &c->turns[turn][j];
  ETRT_RETURN_IF_ERROR(etrt_control_result(c, ctx, o, b, &v));
  if (v.data != b->data) {
    /* Memory the body holds is written again by its next run: keep a copy. */
    int64_t bytes = etrt_control_value_bytes(etrt_control_output_dtype(c, o), &v);
    ETRT_RETURN_IF_ERROR(etrt_control_reserve(c->node, b, (size_t)bytes, 0));
    if (bytes > 0) memcpy(b->data, v.data, (size_t)bytes);
    v.data = b->data;
  }
  c->carried[j] = v;
  return ETRT_OK;
}

/* Every step must give a scan output the dims of the first. */
static etrt_status etrt_control_same_slice(etrt_control *c, uint32_t k, int first,
                                           const etrt_control_value *v) {
  etrt_control_value *f = &c->first_slice[k];
  if (first) {
    *f = *v;
    return ETRT_OK;
  }
  if (f->rank != v->rank || memcmp(f->dims, v->dims, (size_t)v->rank * sizeof *v->dims) != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "scan output %u changes shape between iterations (it is stacked)", k);
  return ETRT_OK;
}

static etrt_status etrt_control_loop_step(etrt_control *c, etrt_exec_context *ctx, int64_t i,
                                          size_t *gathered) {
  const etrt_control_state *s = c->s;
  c->iteration = i;
  static const int64_t no_dims[1] = {0};
  ETRT_RETURN_IF_ERROR(
      etrt_control_bind_input(c, ctx, 0, ETRT_DTYPE_INT64, &c->iteration, 0, no_dims));
  ETRT_RETURN_IF_ERROR(etrt_control_bind_input(c, ctx, 1, ETRT_DTYPE_BOOL, &c->cond, 0, no_dims));
  for (uint32_t j = 0; j < s->carried; ++j) {
    const etrt_control_value *v = &c->carried[j];
    ETRT_RETURN_IF_ERROR(etrt_control_bind_input(c, ctx, 2 + j, etrt_control_output_dtype(c, 1 + j),
                                                 v->data, v->rank, v->dims));
  }
  int turn = (int)(i & 1);
  ETRT_RETURN_IF_ERROR(etrt_control_bind_output(c, ctx, 0, &c->outs[0]));
  for (uint32_t j = 0; j < s->carried; ++j)
    ETRT_RETURN_IF_ERROR(etrt_control_bind_output(c, ctx, 1 + j, &c->turns[turn][j]));
  for (uint32_t k = 0; k < s->scans; ++k)
    ETRT_RETURN_IF_ERROR(
        etrt_control_bind_output(c, ctx, 1 + s->carried + k, &c->outs[1 + s->carried + k]));
  ETRT_RETURN_IF_ERROR(etrt_exec_context_enqueue(ctx, NULL));
  etrt_control_value cond;
  ETRT_RETURN_IF_ERROR(etrt_control_result(c, ctx, 0, &c->outs[0], &cond));
  c->cond = *(const uint8_t *)cond.data != 0;
  for (uint32_t j = 0; j < s->carried; ++j)
    ETRT_RETURN_IF_ERROR(etrt_control_carry(c, ctx, 1 + j, j, turn));
  for (uint32_t k = 0; k < s->scans; ++k) {
    uint32_t o = 1 + s->carried + k;
    etrt_control_value v;
    ETRT_RETURN_IF_ERROR(etrt_control_result(c, ctx, o, &c->outs[o], &v));
    ETRT_RETURN_IF_ERROR(etrt_control_same_slice(c, k, i == 0, &v));
    int64_t bytes = etrt_control_value_bytes(etrt_control_output_dtype(c, o), &v);
    size_t need;
    if (etrt_add_overflow_size(gathered[k], (size_t)bytes, &need)) return etrt_control_oom(c->node);
    ETRT_RETURN_IF_ERROR(etrt_control_reserve(c->node, &c->gathered[k], need, 1));
    if (bytes > 0) memcpy((uint8_t *)c->gathered[k].data + gathered[k], v.data, (size_t)bytes);
    gathered[k] = need;
  }
  return ETRT_OK;
}

static etrt_status etrt_control_loop(etrt_control *c, const etrt_exec_run *run, etrt_tensor *in,
                                     etrt_tensor *out) {
  const etrt_node *node = c->node;
  const etrt_control_state *s = c->s;
  etrt_exec_context *ctx = c->ctx[0];
  int64_t trips = INT64_MAX;
  if (in[0].rank >= 0) trips = *(const int64_t *)in[0].data;
  c->cond = in[1].rank >= 0 ? *(const uint8_t *)in[1].data != 0 : 1;
  for (uint32_t i = 2 + s->carried; i < node->num_inputs; ++i)
    ETRT_RETURN_IF_ERROR(etrt_control_bind_tensor(c, ctx, i, &in[i]));
  for (uint32_t j = 0; j < s->carried; ++j) {
    etrt_control_value *v = &c->carried[j];
    v->data = in[2 + j].data;
    v->rank = in[2 + j].rank;
    memcpy(v->dims, in[2 + j].dims, sizeof v->dims);
  }
  size_t gathered[ETRT_GRAPH_MAX_NODE_ARGS];
  memset(gathered, 0, s->scans * sizeof gathered[0]);
  int64_t i = 0;
  for (; i < trips && c->cond; ++i) {
    etrt_status st = etrt_control_loop_step(c, ctx, i, gathered);
    if (st != ETRT_OK) return etrt_error_context(st, "iteration %lld: ", (long long)i);
  }
  for (uint32_t j = 0; j < s->carried; ++j)
    ETRT_RETURN_IF_ERROR(etrt_control_emit(run, node, j, &out[j], &c->carried[j]));
  for (uint32_t k = 0; k < s->scans; ++k) {
    const etrt_engine_io *io = etrt_engine_io_at(s->bodies[0], c->inputs + 1 + s->carried + k);
    etrt_control_value v = {.data = c->gathered[k].data, .rank = io->rank + 1};
    v.dims[0] = i;
    for (int32_t a = 0; a < io->rank; ++a)
      v.dims[a + 1] = i > 0 ? c->first_slice[k].dims[a] : io->min_sizes[a];
    ETRT_RETURN_IF_ERROR(etrt_control_emit(run, node, s->carried + k, &out[s->carried + k], &v));
  }
  return ETRT_OK;
}

/* --- Scan ------------------------------------------------------------------------- */

/* Copies between a tensor of `rank` dims and its slice at `pos` along `axis`: to the
 * slice (`gather`) or from it. */
static void etrt_control_slice_copy(uint8_t *tensor, uint8_t *slice, size_t esize, int32_t rank,
                                    const int64_t *dims, int64_t axis, int64_t pos, int gather) {
  size_t outer = 1, inner = esize;
  for (int64_t a = 0; a < axis; ++a) outer *= (size_t)dims[a];
  for (int32_t a = (int32_t)axis + 1; a < rank; ++a) inner *= (size_t)dims[a];
  for (size_t o = 0; o < outer; ++o) {
    uint8_t *t = tensor + (o * (size_t)dims[axis] + (size_t)pos) * inner;
    uint8_t *sl = slice + o * inner;
    if (gather)
      memcpy(sl, t, inner);
    else
      memcpy(t, sl, inner);
  }
}

static etrt_status etrt_control_scan_batch(etrt_control *c, const etrt_exec_run *run,
                                           etrt_tensor *in, etrt_tensor *out, int64_t b,
                                           int64_t batches, int64_t length) {
  const etrt_node *node = c->node;
  const etrt_control_state *s = c->s;
  etrt_exec_context *ctx = c->ctx[0];
  int32_t lead = s->batched ? 1 : 0;
  for (uint32_t j = 0; j < s->carried; ++j) {
    const etrt_tensor *t = &in[s->first + j];
    etrt_control_value *v = &c->carried[j];
    v->rank = t->rank - lead;
    memcpy(v->dims, t->dims + lead, (size_t)v->rank * sizeof *v->dims);
    int64_t block = etrt_graph_nbytes(t->dtype, v->rank, v->dims);
    v->data = (const uint8_t *)t->data + b * block;
  }
  for (int64_t step = 0; step < length; ++step) {
    for (uint32_t m = 0; m < s->scan_inputs; ++m) {
      const etrt_tensor *t = &in[s->first + s->carried + m];
      int32_t rank = t->rank - lead;
      const int64_t *dims = t->dims + lead;
      int64_t axis = s->batched ? 0 : (s->in_axis[m] < 0 ? s->in_axis[m] + rank : s->in_axis[m]);
      int64_t pos = s->in_reverse[m] ? length - 1 - step : step;
      size_t esize = etrt_dtype_size(t->dtype);
      int64_t block = etrt_graph_nbytes(t->dtype, rank, dims);
      int64_t slice_dims[ETRT_MAX_RANK];
      for (int32_t a = 0, d = 0; a < rank; ++a)
        if (a != axis) slice_dims[d++] = dims[a];
      int64_t bytes = etrt_graph_nbytes(t->dtype, rank - 1, slice_dims);
      ETRT_RETURN_IF_ERROR(etrt_control_reserve(node, &c->slices[m], (size_t)bytes, 0));
      etrt_control_slice_copy((uint8_t *)t->data + b * block, c->slices[m].data, esize, rank, dims,
                              axis, pos, 1);
      ETRT_RETURN_IF_ERROR(etrt_control_bind_input(c, ctx, s->carried + m, t->dtype,
                                                   c->slices[m].data, rank - 1, slice_dims));
    }
    int turn = (int)(step & 1);
    for (uint32_t j = 0; j < s->carried; ++j) {
      const etrt_control_value *v = &c->carried[j];
      ETRT_RETURN_IF_ERROR(etrt_control_bind_input(c, ctx, j, etrt_control_output_dtype(c, j),
                                                   v->data, v->rank, v->dims));
      ETRT_RETURN_IF_ERROR(etrt_control_bind_output(c, ctx, j, &c->turns[turn][j]));
    }
    for (uint32_t k = 0; k < s->scans; ++k)
      ETRT_RETURN_IF_ERROR(
          etrt_control_bind_output(c, ctx, s->carried + k, &c->outs[s->carried + k]));
    etrt_status st = etrt_exec_context_enqueue(ctx, NULL);
    if (st != ETRT_OK) return etrt_error_context(st, "step %lld: ", (long long)step);
    for (uint32_t j = 0; j < s->carried; ++j)
      ETRT_RETURN_IF_ERROR(etrt_control_carry(c, ctx, j, j, turn));
    for (uint32_t k = 0; k < s->scans; ++k) {
      uint32_t o = s->carried + k;
      etrt_control_value v;
      ETRT_RETURN_IF_ERROR(etrt_control_result(c, ctx, o, &c->outs[o], &v));
      int first = b == 0 && step == 0;
      ETRT_RETURN_IF_ERROR(etrt_control_same_slice(c, k, first, &v));
      int32_t rank = v.rank + 1;
      int64_t axis = s->batched ? 0 : (s->out_axis[k] < 0 ? s->out_axis[k] + rank : s->out_axis[k]);
      int64_t dims[ETRT_MAX_RANK + 1];
      for (int32_t a = 0, d = 0; a < rank; ++a) dims[a] = a == axis ? length : v.dims[d++];
      if (first) {
        int64_t full[ETRT_MAX_RANK];
        full[0] = batches;
        memcpy(full + lead, dims, (size_t)rank * sizeof *dims);
        ETRT_RETURN_IF_ERROR(etrt_control_output_memory(run, node, o, &out[o], rank + lead, full));
      }
      etrt_dtype dtype = etrt_control_output_dtype(c, o);
      int64_t block = etrt_graph_nbytes(dtype, rank, dims);
      int64_t pos = s->out_reverse[k] ? length - 1 - step : step;
      etrt_control_slice_copy((uint8_t *)out[o].data + b * block, (uint8_t *)v.data,
                              etrt_dtype_size(dtype), rank, dims, axis, pos, 0);
    }
  }
  for (uint32_t j = 0; j < s->carried; ++j) {
    const etrt_control_value *v = &c->carried[j];
    etrt_dtype dtype = etrt_control_output_dtype(c, j);
    int64_t bytes = etrt_control_value_bytes(dtype, v);
    if (b == 0) {
      int64_t full[ETRT_MAX_RANK];
      full[0] = batches;
      memcpy(full + lead, v->dims, (size_t)v->rank * sizeof *v->dims);
      ETRT_RETURN_IF_ERROR(etrt_control_output_memory(run, node, j, &out[j], v->rank + lead, full));
    } else if (out[j].rank != v->rank + lead ||
               memcmp(out[j].dims + lead, v->dims, (size_t)v->rank * sizeof *v->dims) != 0) {
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "state %u has other dims in batch %lld", j,
                        (long long)b);
    }
    if (bytes > 0) memmove((uint8_t *)out[j].data + b * bytes, v->data, (size_t)bytes);
  }
  return ETRT_OK;
}

static etrt_status etrt_control_scan(etrt_control *c, const etrt_exec_run *run, etrt_tensor *in,
                                     etrt_tensor *out) {
  const etrt_node *node = c->node;
  const etrt_control_state *s = c->s;
  etrt_exec_context *ctx = c->ctx[0];
  for (uint32_t i = s->first + s->carried + s->scan_inputs; i < node->num_inputs; ++i)
    ETRT_RETURN_IF_ERROR(
        etrt_control_bind_tensor(c, ctx, (uint32_t)etrt_control_body_input(s, i), &in[i]));
  const etrt_tensor *x = &in[s->first + s->carried];
  int64_t batches = s->batched ? x->dims[0] : 1;
  int64_t axis = s->batched ? 1 : (s->in_axis[0] < 0 ? s->in_axis[0] + x->rank : s->in_axis[0]);
  int64_t length = x->dims[axis];
  if (batches == 0 || length == 0) {
    /* Nothing runs: the states come back as they are and the scans are empty. */
    for (uint32_t j = 0; j < s->carried; ++j) {
      const etrt_tensor *t = &in[s->first + j];
      etrt_control_value v = {.data = t->data, .rank = t->rank};
      memcpy(v.dims, t->dims, sizeof v.dims);
      ETRT_RETURN_IF_ERROR(etrt_control_emit(run, node, j, &out[j], &v));
    }
    for (uint32_t k = 0; k < s->scans; ++k) {
      const etrt_engine_io *io = etrt_engine_io_at(s->bodies[0], c->inputs + s->carried + k);
      int32_t lead = s->batched ? 1 : 0, rank = io->rank + 1 + lead;
      int64_t oaxis =
          s->batched ? 1 : (s->out_axis[k] < 0 ? s->out_axis[k] + rank : s->out_axis[k]);
      int64_t dims[ETRT_MAX_RANK];
      for (int32_t a = 0, d = 0; a < rank; ++a)
        dims[a] = a < lead ? batches : a == oaxis ? length : io->min_sizes[d++];
      ETRT_RETURN_IF_ERROR(
          etrt_control_output_memory(run, node, s->carried + k, &out[s->carried + k], rank, dims));
    }
    return ETRT_OK;
  }
  for (int64_t b = 0; b < batches; ++b) {
    etrt_status st = etrt_control_scan_batch(c, run, in, out, b, batches, length);
    if (st != ETRT_OK)
      return s->batched ? etrt_error_context(st, "batch %lld: ", (long long)b) : st;
  }
  return ETRT_OK;
}

etrt_status etrt_control_run(etrt_control *c, const etrt_exec_run *run, uint32_t n, etrt_tensor *in,
                             etrt_tensor *out) {
  (void)n;
  switch (c->s->kind) {
    case ETRT_CONTROL_IF:
      return etrt_control_if(c, run, in, out);
    case ETRT_CONTROL_LOOP:
      return etrt_control_loop(c, run, in, out);
    case ETRT_CONTROL_SCAN:
      return etrt_control_scan(c, run, in, out);
  }
  return etrt_error(ETRT_ERROR_INTERNAL, "unknown control kind");
}
