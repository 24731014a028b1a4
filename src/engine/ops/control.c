/* If, Loop and Scan: their bodies, checks and output bounds (control.h). */
#include "engine/ops/control.h"

#include <string.h>

#include "engine/bounds.h"
#include "engine/ops/op_check.h"
#include "engine/ops/shape_util.h"

/* Bodies nest by deserializing from prepare: the depth of the plan being prepared on
 * this thread bounds the recursion a hostile plan could ask for. */
static _Thread_local int etrt_control_depth;

int32_t etrt_control_body_input(const etrt_control_state *s, uint32_t i) {
  switch (s->kind) {
    case ETRT_CONTROL_IF:
      return i == 0 ? -1 : (int32_t)i - 1;
    case ETRT_CONTROL_LOOP:
      return i < 2 ? -1 : (int32_t)i;
    case ETRT_CONTROL_SCAN:
      return s->batched ? (i == 0 ? -1 : (int32_t)i - 1) : (int32_t)i;
  }
  return -1;
}

static void etrt_control_release(void *state) {
  etrt_control_state *s = state;
  for (uint32_t b = 0; b < 2; ++b) {
    etrt_engine_destroy(s->bodies[b]);
    s->bodies[b] = NULL;
  }
}

static etrt_status etrt_control_body(const etrt_node *node, const char *name, etrt_engine **out) {
  const etrt_attribute *a = etrt_node_attribute(node, name);
  if (a == NULL)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the subgraph attribute '%s' is missing", name);
  if (a->kind != ETRT_ATTRIBUTE_GRAPH)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "attribute '%s' is not a graph", name);
  if (etrt_control_depth >= ETRT_CONTROL_MAX_DEPTH)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "subgraph '%s' nests deeper than %d control-flow levels", name,
                         ETRT_CONTROL_MAX_DEPTH);
  ++etrt_control_depth;
  etrt_status s = etrt_engine_deserialize(a->tensor.data, (size_t)a->tensor.sizes[0], out);
  --etrt_control_depth;
  if (s != ETRT_OK)
    return etrt_error_context(
        s, "%s '%s': subgraph '%s' (offsets within its plan): ", node->op_type, node->name, name);
  if (etrt_engine_device(*out).type != ETRT_DEVICE_CPU)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "subgraph '%s' is not a CPU plan (bodies run on the host)", name);
  return ETRT_OK;
}

/* Inputs and outputs of a body, counted. */
static void etrt_control_io_counts(const etrt_engine *e, uint32_t *inputs, uint32_t *outputs) {
  uint32_t count = etrt_engine_io_count(e), in = 0;
  for (uint32_t i = 0; i < count; ++i) in += etrt_engine_io_at(e, i)->is_input != 0;
  *inputs = in;
  *outputs = count - in;
}

static const etrt_engine_io *etrt_control_output(const etrt_engine *e, uint32_t k) {
  uint32_t in, out;
  etrt_control_io_counts(e, &in, &out);
  return etrt_engine_io_at(e, in + k);
}

/* Elements a body I/O holds at most (a shape input: its values). */
static int64_t etrt_control_io_count_max(const etrt_engine_io *io) {
  if (io->is_shape_input) return io->value_count;
  int64_t n = 1;
  for (int32_t a = 0; a < io->rank; ++a) n = io->max_sizes[a] > 0 ? n * io->max_sizes[a] : 0;
  return n;
}

static etrt_status etrt_control_check_scalar(const etrt_node *node, const etrt_engine_io *io,
                                             etrt_dtype dtype, const char *what) {
  if (io->dtype != dtype || etrt_control_io_count_max(io) != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "the body's %s must be one %s", what,
                         etrt_dtype_name(dtype));
  return ETRT_OK;
}

static etrt_status etrt_control_captures(const etrt_node *node, uint32_t fixed,
                                         etrt_control_state *s) {
  int64_t captures = etrt_node_attribute_int(node, "_captures", 0);
  if (captures < 0 || (uint64_t)captures + fixed > node->num_inputs)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "_captures is %lld with %u inputs, %u of them not captured",
                         (long long)captures, node->num_inputs, fixed);
  s->captures = (uint32_t)captures;
  return ETRT_OK;
}

static etrt_status etrt_if_prepare(const etrt_node *node, void *state) {
  etrt_control_state *s = state;
  s->kind = ETRT_CONTROL_IF;
  if (node->num_inputs < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes a condition input");
  ETRT_RETURN_IF_ERROR(etrt_control_captures(node, 1, s));
  if (s->captures != node->num_inputs - 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "every input after the condition is a captured value");
  ETRT_RETURN_IF_ERROR(etrt_control_body(node, "then_branch", &s->bodies[0]));
  ETRT_RETURN_IF_ERROR(etrt_control_body(node, "else_branch", &s->bodies[1]));
  s->body_count = 2;
  for (uint32_t b = 0; b < 2; ++b) {
    uint32_t in, out;
    etrt_control_io_counts(s->bodies[b], &in, &out);
    if (in != s->captures || out != node->num_outputs)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "%s has %u inputs and %u outputs; the node has %u captured values and "
                           "%u outputs",
                           b == 0 ? "then_branch" : "else_branch", in, out, s->captures,
                           node->num_outputs);
  }
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    const etrt_engine_io *t = etrt_control_output(s->bodies[0], k);
    const etrt_engine_io *e = etrt_control_output(s->bodies[1], k);
    if (t->dtype != e->dtype || t->rank != e->rank)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                           "output %u is %s rank %d in then_branch but %s rank %d in else_branch",
                           k, etrt_dtype_name(t->dtype), (int)t->rank, etrt_dtype_name(e->dtype),
                           (int)e->rank);
  }
  return ETRT_OK;
}

static etrt_status etrt_loop_prepare(const etrt_node *node, void *state) {
  etrt_control_state *s = state;
  s->kind = ETRT_CONTROL_LOOP;
  s->first = 2;
  if (node->num_inputs < 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes M and cond inputs (either may be omitted)");
  ETRT_RETURN_IF_ERROR(etrt_control_captures(node, 2, s));
  s->carried = node->num_inputs - 2 - s->captures;
  if (s->carried > node->num_outputs)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "%u loop-carried values but %u outputs",
                         s->carried, node->num_outputs);
  s->scans = node->num_outputs - s->carried;
  ETRT_RETURN_IF_ERROR(etrt_control_body(node, "body", &s->bodies[0]));
  s->body_count = 1;
  uint32_t in, out;
  etrt_control_io_counts(s->bodies[0], &in, &out);
  if (in != node->num_inputs || out != 1 + node->num_outputs)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the body has %u inputs and %u outputs; the node's %u inputs and %u "
                         "outputs need %u and %u",
                         in, out, node->num_inputs, node->num_outputs, node->num_inputs,
                         1 + node->num_outputs);
  ETRT_RETURN_IF_ERROR(etrt_control_check_scalar(node, etrt_engine_io_at(s->bodies[0], 0),
                                                 ETRT_DTYPE_INT64, "iteration number input"));
  ETRT_RETURN_IF_ERROR(etrt_control_check_scalar(node, etrt_engine_io_at(s->bodies[0], 1),
                                                 ETRT_DTYPE_BOOL, "condition input"));
  return etrt_control_check_scalar(node, etrt_control_output(s->bodies[0], 0), ETRT_DTYPE_BOOL,
                                   "condition output");
}

/* A per-scan attribute: `count` values, each `fallback` when absent. */
static etrt_status etrt_scan_list(const etrt_node *node, const char *name, uint32_t count,
                                  int64_t *out) {
  int64_t n = 0;
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, name, out, ETRT_CONTROL_MAX_SCANS, &n));
  if (n == 0) {
    memset(out, 0, count * sizeof *out);
  } else if (n != (int64_t)count) {
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "'%s' has %lld values for %u scans",
                         name, (long long)n, count);
  }
  return ETRT_OK;
}

static etrt_status etrt_scan_prepare(const etrt_node *node, void *state) {
  etrt_control_state *s = state;
  s->kind = ETRT_CONTROL_SCAN;
  s->batched = etrt_node_attribute_int(node, "_batched", 0) != 0;
  s->first = s->batched ? 1 : 0;
  int64_t m = etrt_node_attribute_int(node, "num_scan_inputs", -1);
  ETRT_RETURN_IF_ERROR(etrt_control_captures(node, s->first, s));
  uint32_t own = node->num_inputs - s->first - s->captures;
  if (m < 1 || m > ETRT_CONTROL_MAX_SCANS || (uint64_t)m > own)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "num_scan_inputs is %lld with %u state and scan inputs (1 to %d scans)",
                         (long long)m, own, ETRT_CONTROL_MAX_SCANS);
  s->scan_inputs = (uint32_t)m;
  s->carried = own - s->scan_inputs;
  if (s->carried > node->num_outputs || node->num_outputs - s->carried > ETRT_CONTROL_MAX_SCANS)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "%u states and %u outputs (at most %d scan outputs)", s->carried,
                         node->num_outputs, ETRT_CONTROL_MAX_SCANS);
  s->scans = node->num_outputs - s->carried;
  int64_t v[ETRT_CONTROL_MAX_SCANS];
  ETRT_RETURN_IF_ERROR(etrt_scan_list(node, "scan_input_axes", s->scan_inputs, s->in_axis));
  ETRT_RETURN_IF_ERROR(etrt_scan_list(node, "scan_output_axes", s->scans, s->out_axis));
  ETRT_RETURN_IF_ERROR(
      etrt_scan_list(node, s->batched ? "directions" : "scan_input_directions", s->scan_inputs, v));
  for (uint32_t i = 0; i < s->scan_inputs; ++i) s->in_reverse[i] = v[i] != 0;
  ETRT_RETURN_IF_ERROR(etrt_scan_list(node, "scan_output_directions", s->scans, v));
  for (uint32_t k = 0; k < s->scans; ++k) s->out_reverse[k] = v[k] != 0;
  ETRT_RETURN_IF_ERROR(etrt_control_body(node, "body", &s->bodies[0]));
  s->body_count = 1;
  uint32_t in, out;
  etrt_control_io_counts(s->bodies[0], &in, &out);
  if (in != own + s->captures || out != node->num_outputs)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the body has %u inputs and %u outputs; the node needs %u and %u", in, out,
                         own + s->captures, node->num_outputs);
  return ETRT_OK;
}

/* Node input i against the body input it feeds: same dtype and rank (`drop` leading
 * axes and the scan axis removed). */
static etrt_status etrt_control_check_input(const etrt_node *node, const etrt_engine *body,
                                            int32_t b, const etrt_tensor *in, int32_t drop,
                                            uint32_t i) {
  const etrt_engine_io *io = etrt_engine_io_at(body, (uint32_t)b);
  int ok = io->is_shape_input ? (in->dtype == ETRT_DTYPE_INT64 || in->dtype == ETRT_DTYPE_INT32) &&
                                    in->rank <= 1 && etrt_tensor_numel(in) == io->value_count
                              : in->dtype == io->dtype && in->rank - drop == io->rank;
  if (!ok)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input %u is %s rank %d; the body's input %d is %s rank %d", i,
                         etrt_dtype_name(in->dtype), (int)in->rank, (int)b,
                         etrt_dtype_name(io->dtype), (int)(io->rank + drop));
  return ETRT_OK;
}

/* Bounds of a value that is either `in` (a zero-trip loop, an empty scan) or a body
 * output (`lead` axes in front, of the sizes in lead_dims). */
static void etrt_control_union(const etrt_tensor *in, const etrt_engine_io *io, int32_t lead,
                               const int64_t *lead_dims, etrt_tensor *lo, etrt_tensor *hi) {
  lo->dtype = hi->dtype = io->dtype;
  lo->rank = hi->rank = io->rank + lead;
  for (int32_t a = 0; a < lo->rank; ++a) {
    int64_t bmin = a < lead ? lead_dims[a] : io->min_sizes[a - lead];
    int64_t bmax = a < lead ? lead_dims[a] : io->max_sizes[a - lead];
    lo->dims[a] = in->dims[a] < bmin ? in->dims[a] : bmin;
    hi->dims[a] = in->dims[a] > bmax ? in->dims[a] : bmax;
  }
}

static etrt_status etrt_if_bound(const etrt_node *node, const etrt_tensor *inputs, etrt_tensor *lo,
                                 etrt_tensor *hi) {
  const etrt_control_state *s = node->state;
  if (inputs[0].dtype != ETRT_DTYPE_BOOL || etrt_tensor_numel(&inputs[0]) != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "the condition must be one bool");
  for (uint32_t i = 1; i < node->num_inputs; ++i)
    for (uint32_t b = 0; b < 2; ++b)
      ETRT_RETURN_IF_ERROR(
          etrt_control_check_input(node, s->bodies[b], (int32_t)i - 1, &inputs[i], 0, i));
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    const etrt_engine_io *t = etrt_control_output(s->bodies[0], k);
    const etrt_engine_io *e = etrt_control_output(s->bodies[1], k);
    lo[k].dtype = hi[k].dtype = t->dtype;
    lo[k].rank = hi[k].rank = t->rank;
    for (int32_t a = 0; a < t->rank; ++a) {
      lo[k].dims[a] = t->min_sizes[a] < e->min_sizes[a] ? t->min_sizes[a] : e->min_sizes[a];
      hi[k].dims[a] = t->max_sizes[a] > e->max_sizes[a] ? t->max_sizes[a] : e->max_sizes[a];
    }
  }
  return ETRT_OK;
}

static etrt_status etrt_loop_bound(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *lo, etrt_tensor *hi) {
  const etrt_control_state *s = node->state;
  const etrt_engine *body = s->bodies[0];
  int64_t trips = ETRT_OP_DIM_UNBOUNDED;
  if (etrt_op_has_input(node, inputs, 0)) {
    if (inputs[0].dtype != ETRT_DTYPE_INT64 || etrt_tensor_numel(&inputs[0]) != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "M must be one int64");
    const int64_t *m = etrt_op_input_host(&inputs[0]);
    if (m != NULL) trips = *m < 0 ? 0 : *m < ETRT_OP_DIM_UNBOUNDED ? *m : ETRT_OP_DIM_UNBOUNDED;
  }
  if (etrt_op_has_input(node, inputs, 1) &&
      (inputs[1].dtype != ETRT_DTYPE_BOOL || etrt_tensor_numel(&inputs[1]) != 1))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "cond must be one bool");
  for (uint32_t i = 2; i < node->num_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is omitted", i);
    ETRT_RETURN_IF_ERROR(etrt_control_check_input(node, body, (int32_t)i, &inputs[i], 0, i));
  }
  for (uint32_t j = 0; j < s->carried; ++j) {
    const etrt_engine_io *io = etrt_control_output(body, 1 + j);
    if (io->dtype != inputs[2 + j].dtype || io->rank != inputs[2 + j].rank)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "loop-carried value %u enters as %s rank %d and leaves the body as %s "
                           "rank %d",
                           j, etrt_dtype_name(inputs[2 + j].dtype), (int)inputs[2 + j].rank,
                           etrt_dtype_name(io->dtype), (int)io->rank);
    etrt_control_union(&inputs[2 + j], io, 0, NULL, &lo[j], &hi[j]);
  }
  for (uint32_t k = 0; k < s->scans; ++k) {
    const etrt_engine_io *io = etrt_control_output(body, 1 + s->carried + k);
    if (io->rank + 1 > ETRT_MAX_RANK)
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "scan output %u would have rank %d", k,
                           (int)io->rank + 1);
    etrt_tensor *l = &lo[s->carried + k], *h = &hi[s->carried + k];
    l->dtype = h->dtype = io->dtype;
    l->rank = h->rank = io->rank + 1;
    l->dims[0] = 0;
    h->dims[0] = trips;
    for (int32_t a = 0; a < io->rank; ++a) {
      l->dims[a + 1] = io->min_sizes[a];
      h->dims[a + 1] = io->max_sizes[a];
    }
  }
  return ETRT_OK;
}

static int64_t etrt_control_axis(int64_t axis, int32_t rank) {
  return axis < 0 ? axis + rank : axis;
}

static etrt_status etrt_scan_bound(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *lo, etrt_tensor *hi) {
  const etrt_control_state *s = node->state;
  const etrt_engine *body = s->bodies[0];
  int32_t lead = s->batched ? 1 : 0;
  if (s->batched && etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "sequence_lens is not supported");
  int64_t length = -1, batch = -1;
  for (uint32_t i = s->first; i < node->num_inputs; ++i) {
    if (!etrt_op_has_input(node, inputs, i))
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input %u is omitted", i);
    uint32_t own = i - s->first;
    int32_t b = etrt_control_body_input(s, i);
    int scan = own >= s->carried && own < s->carried + s->scan_inputs;
    int captured = own >= s->carried + s->scan_inputs;
    ETRT_RETURN_IF_ERROR(etrt_control_check_input(node, body, b, &inputs[i],
                                                  captured ? 0 : lead + (scan ? 1 : 0), i));
    if (!captured && lead) {
      if (batch >= 0 && inputs[i].dims[0] != batch)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "input %u has batch %lld, another %lld", i,
                             (long long)inputs[i].dims[0], (long long)batch);
      batch = inputs[i].dims[0];
    }
    if (scan) {
      uint32_t m = own - s->carried;
      int64_t axis = s->batched ? 1 : etrt_control_axis(s->in_axis[m], inputs[i].rank);
      if (axis < lead || axis >= inputs[i].rank)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "scan input %u: axis %lld is outside rank %d", m,
                             (long long)s->in_axis[m], (int)inputs[i].rank);
      if (length >= 0 && inputs[i].dims[axis] != length)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "scan input %u has %lld steps, another %lld", m,
                             (long long)inputs[i].dims[axis], (long long)length);
      length = inputs[i].dims[axis];
    }
  }
  for (uint32_t j = 0; j < s->carried; ++j) {
    const etrt_engine_io *io = etrt_control_output(body, j);
    const etrt_tensor *in = &inputs[s->first + j];
    if (io->dtype != in->dtype || io->rank + lead != in->rank)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "state %u enters as %s rank %d and leaves the body as %s rank %d", j,
                           etrt_dtype_name(in->dtype), (int)in->rank, etrt_dtype_name(io->dtype),
                           (int)(io->rank + lead));
    etrt_control_union(in, io, lead, &batch, &lo[j], &hi[j]);
  }
  for (uint32_t k = 0; k < s->scans; ++k) {
    const etrt_engine_io *io = etrt_control_output(body, s->carried + k);
    int32_t rank = io->rank + 1 + lead;
    int64_t axis = s->batched ? 1 : etrt_control_axis(s->out_axis[k], rank);
    if (rank > ETRT_MAX_RANK || axis < lead || axis >= rank)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "scan output %u: axis %lld with rank %d", k, (long long)s->out_axis[k],
                           (int)rank);
    etrt_tensor *l = &lo[s->carried + k], *h = &hi[s->carried + k];
    l->dtype = h->dtype = io->dtype;
    l->rank = h->rank = rank;
    for (int32_t a = 0, src = 0; a < rank; ++a) {
      if (a < lead) {
        l->dims[a] = h->dims[a] = batch;
      } else if (a == axis) {
        l->dims[a] = h->dims[a] = length;
      } else {
        l->dims[a] = io->min_sizes[src];
        h->dims[a] = io->max_sizes[src++];
      }
    }
  }
  return ETRT_OK;
}

/* Control nodes find their dims by running: shape inference gives the largest. */
#define ETRT_CONTROL_INFER(name, bound)                                          \
  static etrt_status name(const etrt_node *node, const etrt_tensor *inputs,      \
                          etrt_tensor *outputs) {                                \
    etrt_tensor lo[ETRT_BOUNDS_MAX_OUTPUTS];                                     \
    if (node->num_outputs > ETRT_BOUNDS_MAX_OUTPUTS)                             \
      return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "more than %d outputs", \
                           ETRT_BOUNDS_MAX_OUTPUTS);                             \
    memset(lo, 0, node->num_outputs * sizeof lo[0]);                             \
    return bound(node, inputs, lo, outputs);                                     \
  }

ETRT_CONTROL_INFER(etrt_if_infer, etrt_if_bound)
ETRT_CONTROL_INFER(etrt_loop_infer, etrt_loop_bound)
ETRT_CONTROL_INFER(etrt_scan_infer, etrt_scan_bound)

/* EtrtRefusedBranch: what the builder puts in place of an If branch it could not build
 * for the shapes the plan allows (the branch of another sample rate, say, whose
 * operators refuse these inputs), so that the plan builds and runs as onnxruntime runs
 * the model, which looks at a branch only when it is taken. Its inputs are the
 * branch's (unread); its outputs have the other branch's types and bounds (attributes
 * dtypes, ranks, min_dims and max_dims, the dims of every output in turn), so that the
 * If's bounds are the other branch's; running it fails with the build's reason
 * (attribute message). */
static etrt_status etrt_refused_branch_bound(const etrt_node *node, const etrt_tensor *inputs,
                                             etrt_tensor *lo, etrt_tensor *hi) {
  (void)inputs;
  if (etrt_node_attribute_string(node, "message", NULL) == NULL)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "the string attribute 'message' is "
                         "missing");
  uint32_t n = node->num_outputs;
  int64_t dtypes[ETRT_BOUNDS_MAX_OUTPUTS], ranks[ETRT_BOUNDS_MAX_OUTPUTS];
  int64_t min_dims[ETRT_BOUNDS_MAX_OUTPUTS * ETRT_MAX_RANK];
  int64_t max_dims[ETRT_BOUNDS_MAX_OUTPUTS * ETRT_MAX_RANK];
  int64_t count[4] = {0, 0, 0, 0};
  if (n > ETRT_BOUNDS_MAX_OUTPUTS)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "more than %d outputs",
                         ETRT_BOUNDS_MAX_OUTPUTS);
  ETRT_RETURN_IF_ERROR(
      etrt_op_attribute_ints(node, "dtypes", dtypes, ETRT_BOUNDS_MAX_OUTPUTS, &count[0]));
  ETRT_RETURN_IF_ERROR(
      etrt_op_attribute_ints(node, "ranks", ranks, ETRT_BOUNDS_MAX_OUTPUTS, &count[1]));
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "min_dims", min_dims,
                                              ETRT_BOUNDS_MAX_OUTPUTS * ETRT_MAX_RANK, &count[2]));
  ETRT_RETURN_IF_ERROR(etrt_op_attribute_ints(node, "max_dims", max_dims,
                                              ETRT_BOUNDS_MAX_OUTPUTS * ETRT_MAX_RANK, &count[3]));
  if (count[0] != (int64_t)n || count[1] != (int64_t)n)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "'dtypes' and 'ranks' have %lld and %lld values for %u outputs",
                         (long long)count[0], (long long)count[1], n);
  int64_t at = 0;
  for (uint32_t k = 0; k < n; ++k) {
    if (dtypes[k] < 0 || dtypes[k] > 64 || etrt_dtype_size((etrt_dtype)dtypes[k]) == 0 ||
        ranks[k] < 0 || ranks[k] > ETRT_MAX_RANK || at + ranks[k] > count[2] ||
        at + ranks[k] > count[3])
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                           "output %u: dtype %lld, rank %lld, with %lld and %lld dims given", k,
                           (long long)dtypes[k], (long long)ranks[k], (long long)count[2],
                           (long long)count[3]);
    lo[k].dtype = hi[k].dtype = (etrt_dtype)dtypes[k];
    lo[k].rank = hi[k].rank = (int32_t)ranks[k];
    for (int32_t a = 0; a < lo[k].rank; ++a, ++at) {
      if (min_dims[at] < 0 || min_dims[at] > max_dims[at] || max_dims[at] > ETRT_OP_DIM_UNBOUNDED)
        return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                             "output %u axis %d: bounds [%lld, %lld]", k, (int)a,
                             (long long)min_dims[at], (long long)max_dims[at]);
      lo[k].dims[a] = min_dims[at];
      hi[k].dims[a] = max_dims[at];
    }
  }
  if (at != count[2] || at != count[3])
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "%lld and %lld dims given for outputs of %lld axes in all",
                         (long long)count[2], (long long)count[3], (long long)at);
  return ETRT_OK;
}

ETRT_CONTROL_INFER(etrt_refused_branch_infer, etrt_refused_branch_bound)

static const etrt_op_def etrt_op_def_refused_branch = {.op_type = "EtrtRefusedBranch",
                                                       .infer = etrt_refused_branch_infer,
                                                       .bound = etrt_refused_branch_bound,
                                                       .dims_from_kernel = 1};

static const etrt_op_def etrt_op_def_if = {.op_type = "If",
                                           .state_size = sizeof(etrt_control_state),
                                           .prepare = etrt_if_prepare,
                                           .infer = etrt_if_infer,
                                           .bound = etrt_if_bound,
                                           /* The condition decides the shapes: known
                                            * at build, the If is folded. */
                                           .value_inputs = 1u,
                                           .dims_from_kernel = 1,
                                           .control = 1,
                                           .release = etrt_control_release};
static const etrt_op_def etrt_op_def_loop = {.op_type = "Loop",
                                             .state_size = sizeof(etrt_control_state),
                                             .prepare = etrt_loop_prepare,
                                             .infer = etrt_loop_infer,
                                             .bound = etrt_loop_bound,
                                             .value_inputs = 1u,
                                             .dims_from_kernel = 1,
                                             .control = 1,
                                             .release = etrt_control_release};
static const etrt_op_def etrt_op_def_scan = {.op_type = "Scan",
                                             .state_size = sizeof(etrt_control_state),
                                             .prepare = etrt_scan_prepare,
                                             .infer = etrt_scan_infer,
                                             .bound = etrt_scan_bound,
                                             .dims_from_kernel = 1,
                                             .control = 1,
                                             .release = etrt_control_release};

const etrt_op_def *const etrt_ops_control[] = {
    &etrt_op_def_if, &etrt_op_def_loop, &etrt_op_def_scan, &etrt_op_def_refused_branch, NULL};
