/* The random generators: attributes, keys and shape inference (random.h). */
#include "engine/ops/random.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/dtype.h"
#include "engine/ops/op_check.h"

/* The node's state: what the kernels read, then the count of executes that advances
 * an unseeded key. */
typedef struct etrt_random_node_state {
  etrt_random_state s;
  atomic_uint_fast64_t draws;
} etrt_random_node_state;

/* Loads in this process, so that two generators loaded in one clock tick differ. */
static atomic_uint_fast64_t etrt_random_loads;

uint64_t etrt_random_key_draw(const etrt_node *node) {
  etrt_random_node_state *st = node->state;
  if (st->s.seeded) return st->s.key;
  uint64_t draw = (uint64_t)atomic_fetch_add(&st->draws, 1);
  return etrt_random_mix(st->s.key + draw * 0x9e3779b97f4a7c15ull);
}

static etrt_status etrt_random_prepare_common(const etrt_node *node, etrt_random_node_state *st,
                                              etrt_dtype fallback) {
  memset(st, 0, sizeof *st);
  atomic_init(&st->draws, 0);
  const etrt_attribute *seed = etrt_node_attribute(node, "seed");
  /* Dropout's seed is an int, the generators' a float. */
  etrt_attribute_kind seed_kind =
      strcmp(node->op_type, "Dropout") == 0 ? ETRT_ATTRIBUTE_INT : ETRT_ATTRIBUTE_FLOAT;
  if (seed != NULL) {
    if (seed->kind != seed_kind)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "seed must be %s",
                           seed_kind == ETRT_ATTRIBUTE_INT ? "an int" : "a float");
    /* A float seed's bits, not its value: 0.5 and 0.25 are different streams. */
    uint64_t bits = (uint64_t)seed->i;
    if (seed_kind == ETRT_ATTRIBUTE_FLOAT) {
      double v = seed->f;
      memcpy(&bits, &v, sizeof bits);
    }
    st->s.key = etrt_random_mix(bits ^ 0x5eedull);
    st->s.seeded = 1;
  } else {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t load = (uint64_t)atomic_fetch_add(&etrt_random_loads, 1);
    st->s.key = etrt_random_mix((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec) ^
                etrt_random_mix(((uint64_t)getpid() << 32) ^ load) ^
                etrt_random_mix((uint64_t)(uintptr_t)st);
  }
  const etrt_attribute *dtype = etrt_node_attribute(node, "dtype");
  st->s.dtype = dtype != NULL ? etrt_dtype_from_onnx(dtype->i) : fallback;
  st->s.sample_size = 1;
  return ETRT_OK;
}

/* The float dtypes the generators write. */
static etrt_status etrt_random_check_float(const etrt_node *node, etrt_dtype d) {
  if (d != ETRT_DTYPE_FLOAT32 && d != ETRT_DTYPE_FLOAT64)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED,
                         "dtype %s is not supported (float32 or float64)", etrt_dtype_name(d));
  return ETRT_OK;
}

static etrt_status etrt_random_uniform_prepare(const etrt_node *node, void *state) {
  etrt_random_node_state *st = state;
  ETRT_RETURN_IF_ERROR(etrt_random_prepare_common(node, st, ETRT_DTYPE_FLOAT32));
  st->s.a = etrt_node_attribute_float(node, "low", 0.0f);
  st->s.b = etrt_node_attribute_float(node, "high", 1.0f);
  if (!(st->s.b >= st->s.a))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "high %g is below low %g", st->s.b,
                         st->s.a);
  return ETRT_OK;
}

static etrt_status etrt_random_normal_prepare(const etrt_node *node, void *state) {
  etrt_random_node_state *st = state;
  ETRT_RETURN_IF_ERROR(etrt_random_prepare_common(node, st, ETRT_DTYPE_FLOAT32));
  st->s.a = etrt_node_attribute_float(node, "mean", 0.0f);
  st->s.b = etrt_node_attribute_float(node, "scale", 1.0f);
  return ETRT_OK;
}

/* The *Like ops and Bernoulli take the input's dtype where `dtype` is absent. */
static etrt_status etrt_random_uniform_like_prepare(const etrt_node *node, void *state) {
  ETRT_RETURN_IF_ERROR(etrt_random_uniform_prepare(node, state));
  if (etrt_node_attribute(node, "dtype") == NULL)
    ((etrt_random_node_state *)state)->s.dtype = ETRT_DTYPE_INVALID;
  return ETRT_OK;
}

static etrt_status etrt_random_normal_like_prepare(const etrt_node *node, void *state) {
  ETRT_RETURN_IF_ERROR(etrt_random_normal_prepare(node, state));
  if (etrt_node_attribute(node, "dtype") == NULL)
    ((etrt_random_node_state *)state)->s.dtype = ETRT_DTYPE_INVALID;
  return ETRT_OK;
}

static etrt_status etrt_bernoulli_prepare(const etrt_node *node, void *state) {
  return etrt_random_prepare_common(node, state, ETRT_DTYPE_INVALID);
}

static etrt_status etrt_multinomial_prepare(const etrt_node *node, void *state) {
  etrt_random_node_state *st = state;
  ETRT_RETURN_IF_ERROR(etrt_random_prepare_common(node, st, ETRT_DTYPE_INT32));
  st->s.sample_size = etrt_node_attribute_int(node, "sample_size", 1);
  if (st->s.sample_size < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "sample_size must be positive, not %lld", (long long)st->s.sample_size);
  if (st->s.dtype != ETRT_DTYPE_INT32 && st->s.dtype != ETRT_DTYPE_INT64)
    return etrt_op_error(node, ETRT_ERROR_UNSUPPORTED, "dtype %s is not supported (int32 or int64)",
                         etrt_dtype_name(st->s.dtype));
  return ETRT_OK;
}

/* RandomUniform and RandomNormal: no input, the `shape` attribute. */
static etrt_status etrt_random_infer(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs) {
  (void)inputs;
  const etrt_random_state *s = node->state;
  if (node->num_inputs != 0 || node->num_outputs != 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "takes no input and 1 output");
  ETRT_RETURN_IF_ERROR(etrt_random_check_float(node, s->dtype));
  int64_t count = 0;
  ETRT_RETURN_IF_ERROR(
      etrt_op_attribute_ints(node, "shape", outputs[0].dims, ETRT_MAX_RANK, &count));
  if (etrt_node_attribute(node, "shape") == NULL)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "needs the shape attribute");
  for (int64_t a = 0; a < count; ++a)
    if (outputs[0].dims[a] < 0)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "shape[%lld] is negative (%lld)",
                           (long long)a, (long long)outputs[0].dims[a]);
  outputs[0].dtype = s->dtype;
  outputs[0].rank = (int32_t)count;
  return ETRT_OK;
}

/* RandomUniformLike and RandomNormalLike: the input's shape. */
static etrt_status etrt_random_like_infer(const etrt_node *node, const etrt_tensor *inputs,
                                          etrt_tensor *outputs) {
  const etrt_random_state *s = node->state;
  ETRT_RETURN_IF_ERROR(etrt_op_check_single_io(node, inputs));
  etrt_dtype d = s->dtype != ETRT_DTYPE_INVALID ? s->dtype : inputs[0].dtype;
  ETRT_RETURN_IF_ERROR(etrt_random_check_float(node, d));
  outputs[0].dtype = d;
  outputs[0].rank = inputs[0].rank;
  for (int32_t a = 0; a < inputs[0].rank; ++a) outputs[0].dims[a] = inputs[0].dims[a];
  return ETRT_OK;
}

static etrt_status etrt_bernoulli_infer(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  static const etrt_dtype probabilities[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64,
                                             ETRT_DTYPE_INVALID};
  static const etrt_dtype results[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INT32,
                                       ETRT_DTYPE_INT64,   ETRT_DTYPE_BOOL,    ETRT_DTYPE_INVALID};
  const etrt_random_state *s = node->state;
  ETRT_RETURN_IF_ERROR(etrt_op_check_single_io(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", inputs[0].dtype, probabilities));
  etrt_dtype d = s->dtype != ETRT_DTYPE_INVALID ? s->dtype : inputs[0].dtype;
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "dtype", d, results));
  outputs[0].dtype = d;
  outputs[0].rank = inputs[0].rank;
  for (int32_t a = 0; a < inputs[0].rank; ++a) outputs[0].dims[a] = inputs[0].dims[a];
  return ETRT_OK;
}

static etrt_status etrt_multinomial_infer(const etrt_node *node, const etrt_tensor *inputs,
                                          etrt_tensor *outputs) {
  static const etrt_dtype logits[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INVALID};
  const etrt_random_state *s = node->state;
  ETRT_RETURN_IF_ERROR(etrt_op_check_single_io(node, inputs));
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "input", inputs[0].dtype, logits));
  if (inputs[0].rank != 2 || inputs[0].dims[1] < 1)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "input must be [batch, classes] with at least one class");
  outputs[0].dtype = s->dtype;
  outputs[0].rank = 2;
  outputs[0].dims[0] = inputs[0].dims[0];
  outputs[0].dims[1] = s->sample_size;
  return ETRT_OK;
}

static etrt_status etrt_dropout_prepare(const etrt_node *node, void *state) {
  return etrt_random_prepare_common(node, state, ETRT_DTYPE_INVALID);
}

/* Dropout: data, then the optional scalar ratio and training_mode, read at execute
 * (the output's shape does not depend on them); the output and the optional bool
 * mask. */
static etrt_status etrt_dropout_infer(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  static const etrt_dtype floats[] = {ETRT_DTYPE_FLOAT32, ETRT_DTYPE_FLOAT64, ETRT_DTYPE_INVALID};
  static const etrt_dtype flags[] = {ETRT_DTYPE_BOOL, ETRT_DTYPE_INVALID};
  if (node->num_inputs < 1 || node->num_inputs > 3 || node->num_outputs < 1 ||
      node->num_outputs > 2)
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT,
                         "takes 1 to 3 inputs and 1 or 2 outputs, has %u and %u", node->num_inputs,
                         node->num_outputs);
  if (!etrt_op_has_input(node, inputs, 0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "input 0 (data) is required");
  ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "data", inputs[0].dtype, floats));
  if (etrt_op_has_input(node, inputs, 1)) {
    ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "ratio", inputs[1].dtype, floats));
    if (etrt_tensor_numel(&inputs[1]) != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "ratio must be a scalar");
  }
  if (etrt_op_has_input(node, inputs, 2)) {
    ETRT_RETURN_IF_ERROR(etrt_op_check_dtype(node, "training_mode", inputs[2].dtype, flags));
    if (etrt_tensor_numel(&inputs[2]) != 1)
      return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "training_mode must be a scalar");
  }
  for (uint32_t o = 0; o < node->num_outputs; ++o) {
    outputs[o].dtype = o == 0 ? inputs[0].dtype : ETRT_DTYPE_BOOL;
    outputs[o].rank = inputs[0].rank;
    for (int32_t a = 0; a < inputs[0].rank; ++a) outputs[o].dims[a] = inputs[0].dims[a];
  }
  return ETRT_OK;
}

/* Seeded generators only: see random.h. */
static int etrt_random_cuda_supports(const etrt_node *node, const etrt_tensor *inputs) {
  (void)inputs;
  return ((const etrt_random_state *)node->state)->seeded;
}

#define ETRT_RANDOM_DEF(var, name, prep, inf)                                   \
  static const etrt_op_def var = {.op_type = name,                              \
                                  .state_size = sizeof(etrt_random_node_state), \
                                  .prepare = prep,                              \
                                  .infer = inf,                                 \
                                  .cuda_supports = etrt_random_cuda_supports}
ETRT_RANDOM_DEF(etrt_op_def_random_uniform, "RandomUniform", etrt_random_uniform_prepare,
                etrt_random_infer);
ETRT_RANDOM_DEF(etrt_op_def_random_normal, "RandomNormal", etrt_random_normal_prepare,
                etrt_random_infer);
ETRT_RANDOM_DEF(etrt_op_def_random_uniform_like, "RandomUniformLike",
                etrt_random_uniform_like_prepare, etrt_random_like_infer);
ETRT_RANDOM_DEF(etrt_op_def_random_normal_like, "RandomNormalLike", etrt_random_normal_like_prepare,
                etrt_random_like_infer);
ETRT_RANDOM_DEF(etrt_op_def_bernoulli, "Bernoulli", etrt_bernoulli_prepare, etrt_bernoulli_infer);
ETRT_RANDOM_DEF(etrt_op_def_multinomial, "Multinomial", etrt_multinomial_prepare,
                etrt_multinomial_infer);
ETRT_RANDOM_DEF(etrt_op_def_dropout, "Dropout", etrt_dropout_prepare, etrt_dropout_infer);

const etrt_op_def *const etrt_ops_random[] = {
    &etrt_op_def_random_uniform,
    &etrt_op_def_random_normal,
    &etrt_op_def_random_uniform_like,
    &etrt_op_def_random_normal_like,
    &etrt_op_def_bernoulli,
    &etrt_op_def_multinomial,
    &etrt_op_def_dropout,
    NULL,
};
