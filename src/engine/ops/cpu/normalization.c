/* CPU kernels of the normalizations (float32, float64, float16 and bfloat16, each
 * element widened as it is read). Every one normalizes contiguous blocks of X;
 * statistics are accumulated in double, but for LayerNormalization's float32 rows with a
 * full-length scale, which take the vectorised row of vector_math.c. */
#include "engine/ops/normalization.h"

#include <math.h>

#include "base/thread_pool.h"
#include "engine/ops/cpu/scalar.h"
#include "engine/ops/cpu/vector_math.h"
#include "engine/ops/shape_util.h"

/* float32 first: the type of every CPU plan. */
static inline double etrt_norm_load(const etrt_tensor *t, int64_t i) {
  if (t->dtype == ETRT_DTYPE_FLOAT32) return ((const float *)t->data)[i];
  return etrt_scalar_load(t->data, t->dtype, i);
}

static inline void etrt_norm_store(etrt_tensor *t, int64_t i, double v) {
  if (t->dtype == ETRT_DTYPE_FLOAT32)
    ((float *)t->data)[i] = (float)v;
  else
    etrt_scalar_store(t->data, t->dtype, i, v);
}

/* Mean and 1/sqrt(variance + epsilon) of x[first .. first + size). */
static void etrt_norm_moments(const etrt_tensor *x, int64_t first, int64_t size, double epsilon,
                              double *mean, double *inv_std) {
  double sum = 0.0;
  for (int64_t i = 0; i < size; ++i) sum += etrt_norm_load(x, first + i);
  double m = size > 0 ? sum / (double)size : 0.0;
  double squares = 0.0;
  for (int64_t i = 0; i < size; ++i) {
    double d = etrt_norm_load(x, first + i) - m;
    squares += d * d;
  }
  *mean = m;
  *inv_std = 1.0 / sqrt((size > 0 ? squares / (double)size : 0.0) + epsilon);
}

etrt_status etrt_cpu_batch_norm(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  const etrt_norm_state *s = node->state;
  const etrt_tensor *x = &inputs[0];
  int64_t batch = x->dims[0], channels = x->dims[1];
  int64_t inner = etrt_shape_numel(x->rank - 2, x->dims + 2);
  for (int64_t c = 0; c < channels; ++c) {
    double mean = etrt_norm_load(&inputs[3], c), var = etrt_norm_load(&inputs[4], c);
    if (s->training) {
      /* The batch's population statistics normalize; the running ones move towards
       * them by 1 - momentum (ONNX opset 14 on). */
      double sum = 0.0, squares = 0.0, count = (double)(batch * inner);
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < inner; ++i)
          sum += etrt_norm_load(x, (n * channels + c) * inner + i);
      double batch_mean = count > 0 ? sum / count : 0.0;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t i = 0; i < inner; ++i) {
          double d = etrt_norm_load(x, (n * channels + c) * inner + i) - batch_mean;
          squares += d * d;
        }
      double batch_var = count > 0 ? squares / count : 0.0, m = (double)s->momentum;
      if (node->num_outputs > 1 && outputs[1].data != NULL)
        etrt_norm_store(&outputs[1], c, mean * m + batch_mean * (1.0 - m));
      if (node->num_outputs > 2 && outputs[2].data != NULL)
        etrt_norm_store(&outputs[2], c, var * m + batch_var * (1.0 - m));
      mean = batch_mean;
      var = batch_var;
    }
    double scale = etrt_norm_load(&inputs[1], c) / sqrt(var + (double)s->epsilon);
    double shift = etrt_norm_load(&inputs[2], c) - mean * scale;
    for (int64_t n = 0; n < batch; ++n) {
      int64_t first = (n * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i)
        etrt_norm_store(&outputs[0], first + i, etrt_norm_load(x, first + i) * scale + shift);
    }
  }
  return ETRT_OK;
}

/* Normalizes each group of channels of each batch item over all its elements, then
 * scales and shifts every channel (parameters per channel, or one per group). */
static void etrt_norm_groups(const etrt_tensor *inputs, int64_t groups, double epsilon,
                             etrt_tensor *y) {
  const etrt_tensor *x = &inputs[0];
  int64_t batch = x->dims[0], channels = x->dims[1];
  int64_t per_group = groups > 0 ? channels / groups : 0; /* no groups without channels */
  int64_t inner = etrt_shape_numel(x->rank - 2, x->dims + 2);
  int per_channel = inputs[1].dims[0] == channels;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      int64_t first = (n * channels + g * per_group) * inner;
      double mean, inv_std;
      etrt_norm_moments(x, first, per_group * inner, epsilon, &mean, &inv_std);
      for (int64_t c = 0; c < per_group; ++c) {
        int64_t param = per_channel ? g * per_group + c : g;
        double scale = etrt_norm_load(&inputs[1], param) * inv_std;
        double bias = etrt_norm_load(&inputs[2], param);
        int64_t base = first + c * inner;
        for (int64_t i = 0; i < inner; ++i)
          etrt_norm_store(y, base + i, (etrt_norm_load(x, base + i) - mean) * scale + bias);
      }
    }
  }
}

/* A group per channel. */
etrt_status etrt_cpu_instance_norm(const etrt_node *node, const etrt_tensor *inputs,
                                   etrt_tensor *outputs) {
  const etrt_norm_state *s = node->state;
  etrt_norm_groups(inputs, inputs[0].dims[1], s->epsilon, &outputs[0]);
  return ETRT_OK;
}

etrt_status etrt_cpu_group_norm(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  const etrt_norm_state *s = node->state;
  etrt_norm_groups(inputs, s->num_groups, s->epsilon, &outputs[0]);
  return ETRT_OK;
}

typedef struct etrt_layer_norm_job {
  const etrt_tensor *x, *scale, *bias;
  const etrt_tensor *addend; /* EtrtAddLayerNorm's B: x is then A + B, held in sum */
  etrt_tensor *sum;
  etrt_tensor *y;
  double epsilon;
  int64_t inner, scale_count, bias_count;
  float *mean_out, *inv_std_out;
  int fast; /* every tensor float32, scale and bias (if any) one value per element */
} etrt_layer_norm_job;

static int etrt_layer_norm_fast(const etrt_layer_norm_job *j) {
  const etrt_tensor *t[] = {j->x, j->scale, j->bias, j->addend, j->sum, j->y};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
    if (t[i] != NULL && t[i]->dtype != ETRT_DTYPE_FLOAT32) return 0;
  return j->inner > 0 && j->scale_count == j->inner &&
         (j->bias == NULL || j->bias_count == j->inner);
}

static void etrt_layer_norm_rows_f32(const etrt_layer_norm_job *j, int64_t begin, int64_t end) {
  const int64_t inner = j->inner;
  if (j->addend) {
    /* The residual sum normalised as onnxruntime's SkipLayerNormalization does
     * (vector_math.h): its optimised session runs every Add + LayerNormalization so. */
    float *sum = (float *)j->sum->data + begin * inner;
    etrt_cpu_add_f32((const float *)j->x->data + begin * inner,
                     (const float *)j->addend->data + begin * inner, sum, (end - begin) * inner);
    etrt_cpu_skip_layer_norm_f32(sum, j->scale->data, j->bias ? j->bias->data : NULL,
                                 (float *)j->y->data + begin * inner, end - begin, inner,
                                 (float)j->epsilon);
    return;
  }
  const float *x = j->x->data;
  for (int64_t o = begin; o < end; ++o) {
    float stats[2];
    etrt_cpu_layer_norm_f32(x + o * inner, j->scale->data, j->bias ? j->bias->data : NULL,
                            (float *)j->y->data + o * inner, inner, (float)j->epsilon, stats);
    if (j->mean_out) j->mean_out[o] = stats[0];
    if (j->inv_std_out) j->inv_std_out[o] = stats[1];
  }
}

/* Rows [begin, end): each normalised alone, so the split does not change results. */
static void etrt_layer_norm_rows(void *ctx, int64_t begin, int64_t end) {
  const etrt_layer_norm_job *j = ctx;
  if (j->fast) {
    etrt_layer_norm_rows_f32(j, begin, end);
    return;
  }
  const int64_t inner = j->inner;
  const etrt_tensor *x = j->addend ? j->sum : j->x;
  for (int64_t o = begin; o < end; ++o) {
    /* The sum is rounded to its type as the unfused Add would round it, and the row
     * is then normalised from the stored sum, so fused and unfused plans agree. */
    for (int64_t i = 0; j->addend && i < inner; ++i)
      etrt_norm_store(
          j->sum, o * inner + i,
          etrt_norm_load(j->x, o * inner + i) + etrt_norm_load(j->addend, o * inner + i));
    double mean, inv_std;
    etrt_norm_moments(x, o * inner, inner, j->epsilon, &mean, &inv_std);
    if (j->mean_out) j->mean_out[o] = (float)mean;
    if (j->inv_std_out) j->inv_std_out[o] = (float)inv_std;
    for (int64_t i = 0; i < inner; ++i) {
      double v = (etrt_norm_load(x, o * inner + i) - mean) * inv_std *
                 etrt_norm_load(j->scale, i % j->scale_count);
      if (j->bias) v += etrt_norm_load(j->bias, i % j->bias_count);
      etrt_norm_store(j->y, o * inner + i, v);
    }
  }
}

etrt_status etrt_cpu_layer_norm(const etrt_node *node, const etrt_tensor *inputs,
                                etrt_tensor *outputs) {
  const etrt_norm_state *s = node->state;
  const etrt_tensor *x = &inputs[0];
  int32_t axis = etrt_norm_axis(s, x->rank);
  int64_t outer = etrt_shape_numel(axis, x->dims);
  const etrt_tensor *bias = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL;
  etrt_layer_norm_job job = {.x = x,
                             .scale = &inputs[1],
                             .bias = bias,
                             .y = &outputs[0],
                             .epsilon = s->epsilon,
                             .inner = etrt_shape_numel(x->rank - axis, x->dims + axis),
                             .scale_count = etrt_shape_numel(inputs[1].rank, inputs[1].dims),
                             .bias_count = bias ? etrt_shape_numel(bias->rank, bias->dims) : 1,
                             .mean_out = node->num_outputs > 1 ? outputs[1].data : NULL,
                             .inv_std_out = node->num_outputs > 2 ? outputs[2].data : NULL};
  job.fast = etrt_layer_norm_fast(&job);
  etrt_parallel_for(outer, 1 + 8192 / (job.inner + 1), etrt_layer_norm_rows, &job);
  return ETRT_OK;
}

/* Without a Sum output the sum is written into Y, which is then normalised in
 * place row by row (each element is read before it is overwritten). */
etrt_status etrt_cpu_add_layer_norm(const etrt_node *node, const etrt_tensor *inputs,
                                    etrt_tensor *outputs) {
  const etrt_norm_state *s = node->state;
  const etrt_tensor *x = &inputs[0];
  int32_t axis = etrt_norm_axis(s, x->rank);
  int64_t outer = etrt_shape_numel(axis, x->dims);
  const etrt_tensor *bias = node->num_inputs > 3 && inputs[3].rank >= 0 ? &inputs[3] : NULL;
  etrt_tensor *sum = node->num_outputs > 1 && outputs[1].data != NULL ? &outputs[1] : &outputs[0];
  etrt_layer_norm_job job = {.x = x,
                             .addend = &inputs[1],
                             .sum = sum,
                             .scale = &inputs[2],
                             .bias = bias,
                             .y = &outputs[0],
                             .epsilon = s->epsilon,
                             .inner = etrt_shape_numel(x->rank - axis, x->dims + axis),
                             .scale_count = etrt_shape_numel(inputs[2].rank, inputs[2].dims),
                             .bias_count = bias ? etrt_shape_numel(bias->rank, bias->dims) : 1};
  job.fast = etrt_layer_norm_fast(&job);
  etrt_parallel_for(outer, 1 + 8192 / (job.inner + 1), etrt_layer_norm_rows, &job);
  return ETRT_OK;
}

etrt_status etrt_cpu_lp_norm(const etrt_node *node, const etrt_tensor *inputs,
                             etrt_tensor *outputs) {
  const etrt_norm_state *s = node->state;
  const etrt_tensor *x = &inputs[0];
  int32_t axis = etrt_norm_axis(s, x->rank);
  int64_t outer = etrt_shape_numel(axis, x->dims), size = x->dims[axis];
  int64_t inner = etrt_shape_numel(x->rank - (axis + 1), x->dims + (axis + 1));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t first = o * size * inner + i;
      double norm = 0.0;
      for (int64_t k = 0; k < size; ++k) {
        double v = etrt_norm_load(x, first + k * inner);
        norm += s->p == 1 ? fabs(v) : v * v;
      }
      if (s->p == 2) norm = sqrt(norm);
      for (int64_t k = 0; k < size; ++k)
        etrt_norm_store(&outputs[0], first + k * inner,
                        etrt_norm_load(x, first + k * inner) / norm);
    }
  }
  return ETRT_OK;
}

/* The CPU rows of the family (ops/cpu/table.c). */
const etrt_op_cpu_row etrt_cpu_rows_normalization[] = {
    {"BatchNormalization", etrt_cpu_batch_norm},
    {"InstanceNormalization", etrt_cpu_instance_norm},
    {"LayerNormalization", etrt_cpu_layer_norm},
    {"GroupNormalization", etrt_cpu_group_norm},
    {"LpNormalization", etrt_cpu_lp_norm},
    {"EtrtAddLayerNorm", etrt_cpu_add_layer_norm},
    {NULL, NULL},
};
