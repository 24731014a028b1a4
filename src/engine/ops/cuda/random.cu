/* The random generators on the GPU: a thread per value, by the stream functions the
 * CPU kernels use (random.h), so that a seeded generator gives the same values on
 * either executor. Only seeded nodes come here (etrt_random_cuda_supports). */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/random.h"
}

template <typename T>
__global__ void etrt_random_uniform_kernel(uint64_t key, double low, double high, T *y,
                                           int is_double, int64_t count) {
  ETRT_CUDA_LOOP(i, count) y[i] = (T)(low + (high - low) * etrt_random_uniform(key, i, is_double));
}

template <typename T>
__global__ void etrt_random_normal_kernel(uint64_t key, double mean, double scale, T *y,
                                          int64_t count) {
  ETRT_CUDA_LOOP(i, count) y[i] = (T)(mean + scale * etrt_random_normal(key, i));
}

template <typename P, typename T>
__global__ void etrt_bernoulli_kernel(uint64_t key, const P *p, T *y, int is_double,
                                      int64_t count) {
  ETRT_CUDA_LOOP(i, count) {
    y[i] = (T)(etrt_random_uniform(key, i, is_double) < (double)p[i] ? 1 : 0);
  }
}

template <typename T>
__global__ void etrt_multinomial_kernel(uint64_t key, const void *logits, int is_double,
                                        int64_t classes, int64_t samples, T *y, int64_t count) {
  ETRT_CUDA_LOOP(i, count) {
    y[i] = (T)etrt_random_multinomial(key, logits, is_double, classes, i / samples, samples,
                                      i % samples);
  }
}

/* Dropout (cpu/random.c). ratio and training_mode are read by the kernel, on the
 * device where they are, so that the launch needs no copy back. A ratio outside
 * [0, 1) in training is a fault, and nothing is written. */
template <typename T, typename R>
__global__ void etrt_dropout_kernel(uint64_t key, const T *x, const R *ratio_in,
                                    const uint8_t *training_in, T *y, uint8_t *mask, int is_double,
                                    int64_t count, uint32_t *fault, uint32_t node) {
  double ratio = ratio_in != NULL ? (double)ratio_in[0] : 0.5;
  if (training_in == NULL || training_in[0] == 0) ratio = 0.0;
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    if (blockIdx.x == 0 && threadIdx.x == 0) etrt_cuda_fault(fault, node);
    return;
  }
  double scale = 1.0 / (1.0 - ratio);
  ETRT_CUDA_LOOP(i, count) {
    int keep = etrt_random_keep(key, i, is_double, ratio);
    y[i] = (T)(keep ? (double)x[i] * scale : 0.0);
    if (mask != NULL) mask[i] = (uint8_t)keep;
  }
}

template <typename T, typename R>
static void etrt_cuda_dropout_launch(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_tensor *outputs, uint64_t key, int64_t count,
                                     const etrt_cuda_launch *launch) {
  const R *ratio = node->num_inputs > 1 && inputs[1].rank >= 0 ? (const R *)inputs[1].data : NULL;
  const uint8_t *training =
      node->num_inputs > 2 && inputs[2].rank >= 0 ? (const uint8_t *)inputs[2].data : NULL;
  uint8_t *mask = node->num_outputs > 1 ? (uint8_t *)outputs[1].data : NULL;
  etrt_dropout_kernel<T, R><<<etrt_cuda_blocks(count, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0,
                              etrt_cuda_stream(launch)>>>(
      key, (const T *)inputs[0].data, ratio, training, (T *)outputs[0].data, mask,
      inputs[0].dtype == ETRT_DTYPE_FLOAT64, count, launch->fault, launch->node);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_dropout) {
  int64_t count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  uint64_t key = etrt_random_key_draw(node);
  int x_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  int r_double =
      node->num_inputs > 1 && inputs[1].rank >= 0 && inputs[1].dtype == ETRT_DTYPE_FLOAT64;
  if (x_double && r_double)
    etrt_cuda_dropout_launch<double, double>(node, inputs, outputs, key, count, launch);
  else if (x_double)
    etrt_cuda_dropout_launch<double, float>(node, inputs, outputs, key, count, launch);
  else if (r_double)
    etrt_cuda_dropout_launch<float, double>(node, inputs, outputs, key, count, launch);
  else
    etrt_cuda_dropout_launch<float, float>(node, inputs, outputs, key, count, launch);
  return etrt_cuda_check(node, "dropout");
}

/* RandomUniform and RandomUniformLike. */
extern "C" ETRT_CUDA_RUN(etrt_cuda_random_uniform) {
  (void)inputs;
  const etrt_random_state *s = (const etrt_random_state *)node->state;
  int64_t count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  uint64_t key = etrt_random_key_draw(node);
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (outputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_random_uniform_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        key, s->a, s->b, (float *)outputs[0].data, 0, count);
  else
    etrt_random_uniform_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        key, s->a, s->b, (double *)outputs[0].data, 1, count);
  return etrt_cuda_check(node, "random_uniform");
}

/* RandomNormal and RandomNormalLike. */
extern "C" ETRT_CUDA_RUN(etrt_cuda_random_normal) {
  (void)inputs;
  const etrt_random_state *s = (const etrt_random_state *)node->state;
  int64_t count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  uint64_t key = etrt_random_key_draw(node);
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (outputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_random_normal_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        key, s->a, s->b, (float *)outputs[0].data, count);
  else
    etrt_random_normal_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        key, s->a, s->b, (double *)outputs[0].data, count);
  return etrt_cuda_check(node, "random_normal");
}

template <typename P>
static void etrt_cuda_bernoulli_launch(uint64_t key, const P *p, etrt_tensor *y, int is_double,
                                       int64_t count, cudaStream_t stream) {
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  switch (y->dtype) {
    case ETRT_DTYPE_FLOAT32:
      etrt_bernoulli_kernel<P, float>
          <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(key, p, (float *)y->data, is_double, count);
      break;
    case ETRT_DTYPE_FLOAT64:
      etrt_bernoulli_kernel<P, double>
          <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(key, p, (double *)y->data, is_double, count);
      break;
    case ETRT_DTYPE_INT32:
      etrt_bernoulli_kernel<P, int32_t>
          <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(key, p, (int32_t *)y->data, is_double, count);
      break;
    case ETRT_DTYPE_INT64:
      etrt_bernoulli_kernel<P, int64_t>
          <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(key, p, (int64_t *)y->data, is_double, count);
      break;
    default: /* bool */
      etrt_bernoulli_kernel<P, uint8_t>
          <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(key, p, (uint8_t *)y->data, is_double, count);
      break;
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_bernoulli) {
  int64_t count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  uint64_t key = etrt_random_key_draw(node);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT64)
    etrt_cuda_bernoulli_launch<double>(key, (const double *)inputs[0].data, &outputs[0], 1, count,
                                       stream);
  else
    etrt_cuda_bernoulli_launch<float>(key, (const float *)inputs[0].data, &outputs[0], 0, count,
                                      stream);
  return etrt_cuda_check(node, "bernoulli");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_multinomial) {
  int64_t count = etrt_tensor_numel(&outputs[0]);
  if (count == 0) return ETRT_OK;
  uint64_t key = etrt_random_key_draw(node);
  int64_t samples = outputs[0].dims[1], classes = inputs[0].dims[1];
  int is_double = inputs[0].dtype == ETRT_DTYPE_FLOAT64;
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (outputs[0].dtype == ETRT_DTYPE_INT64)
    etrt_multinomial_kernel<int64_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        key, inputs[0].data, is_double, classes, samples, (int64_t *)outputs[0].data, count);
  else
    etrt_multinomial_kernel<int32_t><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        key, inputs[0].data, is_double, classes, samples, (int32_t *)outputs[0].data, count);
  return etrt_cuda_check(node, "multinomial");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_random[] = {
    {"RandomUniform", etrt_cuda_random_uniform, NULL},
    {"RandomNormal", etrt_cuda_random_normal, NULL},
    {"RandomUniformLike", etrt_cuda_random_uniform, NULL},
    {"RandomNormalLike", etrt_cuda_random_normal, NULL},
    {"Bernoulli", etrt_cuda_bernoulli, NULL},
    {"Multinomial", etrt_cuda_multinomial, NULL},
    {"Dropout", etrt_cuda_dropout, NULL},
    {NULL, NULL, NULL},
};
