/* CPU kernels of the random generators (random.h). */
#include "engine/op.h"
#include "engine/ops/op_check.h"
#include "engine/ops/random.h"

static void etrt_cpu_random_store(etrt_tensor *out, int64_t i, double v) {
  switch (out->dtype) {
    case ETRT_DTYPE_FLOAT64:
      ((double *)out->data)[i] = v;
      break;
    case ETRT_DTYPE_FLOAT32:
      ((float *)out->data)[i] = (float)v;
      break;
    case ETRT_DTYPE_INT64:
      ((int64_t *)out->data)[i] = (int64_t)v;
      break;
    case ETRT_DTYPE_INT32:
      ((int32_t *)out->data)[i] = (int32_t)v;
      break;
    default: /* bool */
      ((uint8_t *)out->data)[i] = v != 0.0;
      break;
  }
}

/* RandomUniform and RandomUniformLike. */
static etrt_status etrt_cpu_random_uniform(const etrt_node *node, const etrt_tensor *inputs,
                                           etrt_tensor *outputs) {
  (void)inputs;
  const etrt_random_state *s = node->state;
  uint64_t key = etrt_random_key_draw(node);
  int is_double = outputs[0].dtype == ETRT_DTYPE_FLOAT64;
  int64_t count = etrt_tensor_numel(&outputs[0]);
  for (int64_t i = 0; i < count; ++i)
    etrt_cpu_random_store(&outputs[0], i,
                          s->a + (s->b - s->a) * etrt_random_uniform(key, (uint64_t)i, is_double));
  return ETRT_OK;
}

/* RandomNormal and RandomNormalLike. */
static etrt_status etrt_cpu_random_normal(const etrt_node *node, const etrt_tensor *inputs,
                                          etrt_tensor *outputs) {
  (void)inputs;
  const etrt_random_state *s = node->state;
  uint64_t key = etrt_random_key_draw(node);
  int64_t count = etrt_tensor_numel(&outputs[0]);
  for (int64_t i = 0; i < count; ++i)
    etrt_cpu_random_store(&outputs[0], i, s->a + s->b * etrt_random_normal(key, (uint64_t)i));
  return ETRT_OK;
}

static etrt_status etrt_cpu_bernoulli(const etrt_node *node, const etrt_tensor *inputs,
                                      etrt_tensor *outputs) {
  uint64_t key = etrt_random_key_draw(node);
  int is_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  int64_t count = etrt_tensor_numel(&outputs[0]);
  for (int64_t i = 0; i < count; ++i) {
    double p = is_double ? ((const double *)inputs[0].data)[i]
                         : (double)((const float *)inputs[0].data)[i];
    etrt_cpu_random_store(&outputs[0], i,
                          etrt_random_uniform(key, (uint64_t)i, is_double) < p ? 1.0 : 0.0);
  }
  return ETRT_OK;
}

static etrt_status etrt_cpu_multinomial(const etrt_node *node, const etrt_tensor *inputs,
                                        etrt_tensor *outputs) {
  uint64_t key = etrt_random_key_draw(node);
  int is_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  int64_t rows = outputs[0].dims[0], samples = outputs[0].dims[1], classes = inputs[0].dims[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t s = 0; s < samples; ++s)
      etrt_cpu_random_store(
          &outputs[0], r * samples + s,
          (double)etrt_random_multinomial(key, inputs[0].data, is_double, classes, r, samples, s));
  return ETRT_OK;
}

/* Dropout: the identity with an all-true mask unless training_mode is true; in
 * training each element is kept with probability 1 - ratio and scaled by
 * 1 / (1 - ratio). */
static etrt_status etrt_cpu_dropout(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  int is_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  int training = etrt_op_has_input(node, inputs, 2) && ((const uint8_t *)inputs[2].data)[0] != 0;
  double ratio = 0.5;
  if (etrt_op_has_input(node, inputs, 1))
    ratio = inputs[1].dtype == ETRT_DTYPE_FLOAT64 ? ((const double *)inputs[1].data)[0]
                                                  : (double)((const float *)inputs[1].data)[0];
  if (!training) ratio = 0.0;
  if (!(ratio >= 0.0 && ratio < 1.0))
    return etrt_op_error(node, ETRT_ERROR_INVALID_ARGUMENT, "ratio %g is not in [0, 1)", ratio);
  uint64_t key = etrt_random_key_draw(node);
  double scale = 1.0 / (1.0 - ratio);
  uint8_t *mask = node->num_outputs > 1 ? outputs[1].data : NULL;
  int64_t count = etrt_tensor_numel(&outputs[0]);
  for (int64_t i = 0; i < count; ++i) {
    int keep = etrt_random_keep(key, (uint64_t)i, is_double, ratio);
    double x = is_double ? ((const double *)inputs[0].data)[i]
                         : (double)((const float *)inputs[0].data)[i];
    etrt_cpu_random_store(&outputs[0], i, keep ? x * scale : 0.0);
    if (mask != NULL) mask[i] = (uint8_t)keep;
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_random[] = {
    {"RandomUniform", etrt_cpu_random_uniform},
    {"RandomNormal", etrt_cpu_random_normal},
    {"RandomUniformLike", etrt_cpu_random_uniform},
    {"RandomNormalLike", etrt_cpu_random_normal},
    {"Bernoulli", etrt_cpu_bernoulli},
    {"Multinomial", etrt_cpu_multinomial},
    {"Dropout", etrt_cpu_dropout},
    {NULL, NULL},
};
