/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on the GPU (ops/loss.h),
 * in double as on the CPU. A thread handles one position (b, d1..dk): the
 * log-sum-exp over the classes for SoftmaxCrossEntropyLoss (and the log_prob
 * output), then its loss and weight. With reduction "none" it writes its loss; with
 * "sum" or "mean" one block of threads adds the positions up. The CPU kernel refuses
 * a target outside [0, C) (other than ignore_index); a kernel cannot, so such a
 * position yields NaN (and a NaN sum), never a read outside the scores. */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/loss.h"
}

typedef struct etrt_loss_plan {
  int64_t batch, classes, inner;
  int reduction, softmax, has_ignore;
  int64_t ignore_index;
} etrt_loss_plan;

template <typename T>
__device__ __forceinline__ double etrt_loss_load(const T *p, int64_t i) {
  return (double)etrt_cvt<typename etrt_math<T>::type>(p[i]);
}
template <typename T>
__device__ __forceinline__ T etrt_loss_value(double v) {
  return (T)v;
}
template <>
__device__ __forceinline__ __half etrt_loss_value<__half>(double v) {
  return __double2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 etrt_loss_value<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}

/* The loss and weight of one position; writes its log_prob row when asked. */
template <typename T, typename L>
__device__ __forceinline__ void etrt_loss_position(const T *x, const L *target, const T *weight,
                                                   T *log_prob, const etrt_loss_plan &p,
                                                   int64_t position, double *loss, double *w) {
  int64_t b = position / p.inner, d = position % p.inner;
  int64_t first = b * p.classes * p.inner + d;
  double shift = 0.0;
  if (p.softmax) {
    double m = -INFINITY;
    for (int64_t c = 0; c < p.classes; ++c) m = fmax(m, etrt_loss_load(x, first + c * p.inner));
    double sum = 0.0;
    for (int64_t c = 0; c < p.classes; ++c) sum += exp(etrt_loss_load(x, first + c * p.inner) - m);
    shift = m + log(sum);
    if (log_prob != NULL) {
      for (int64_t c = 0; c < p.classes; ++c) {
        int64_t at = first + c * p.inner;
        log_prob[at] = etrt_loss_value<T>(etrt_loss_load(x, at) - shift);
      }
    }
  }
  int64_t label = (int64_t)target[position];
  *loss = 0.0;
  *w = 0.0;
  if (p.has_ignore && label == p.ignore_index) return;
  if (label < 0 || label >= p.classes) {
    *loss = NAN;
    *w = NAN;
    return;
  }
  *w = weight != NULL ? etrt_loss_load(weight, label) : 1.0;
  *loss = -(etrt_loss_load(x, first + label * p.inner) - shift) * *w;
}

template <typename T, typename L>
__global__ void etrt_loss_none_kernel(const T *x, const L *target, const T *weight, T *y,
                                      T *log_prob, etrt_loss_plan p) {
  ETRT_CUDA_LOOP(position, p.batch * p.inner) {
    double loss, w;
    etrt_loss_position(x, target, weight, log_prob, p, position, &loss, &w);
    y[position] = etrt_loss_value<T>(loss);
  }
}

/* One block: every thread sums its positions, then the block adds them up. */
template <typename T, typename L>
__global__ void etrt_loss_reduce_kernel(const T *x, const L *target, const T *weight, T *y,
                                        T *log_prob, etrt_loss_plan p) {
  __shared__ double shared[32];
  double total = 0.0, total_weight = 0.0;
  for (int64_t position = threadIdx.x; position < p.batch * p.inner; position += blockDim.x) {
    double loss, w;
    etrt_loss_position(x, target, weight, log_prob, p, position, &loss, &w);
    total += loss;
    total_weight += w;
  }
  total = etrt_cuda_block_reduce(total, 0.0, etrt_cuda_sum_op(), shared);
  total_weight = etrt_cuda_block_reduce(total_weight, 0.0, etrt_cuda_sum_op(), shared);
  if (threadIdx.x == 0)
    y[0] = etrt_loss_value<T>(p.reduction == ETRT_LOSS_SUM ? total : total / total_weight);
}

template <typename T, typename L>
static void etrt_loss_launch(const etrt_tensor *inputs, etrt_tensor *outputs,
                             const etrt_tensor *weight, T *log_prob, const etrt_loss_plan &p,
                             cudaStream_t stream) {
  const T *x = (const T *)inputs[0].data;
  const L *target = (const L *)inputs[1].data;
  const T *w = weight != NULL ? (const T *)weight->data : (const T *)NULL;
  T *y = (T *)outputs[0].data;
  if (p.reduction == ETRT_LOSS_NONE) {
    etrt_loss_none_kernel<T, L>
        <<<etrt_cuda_blocks(p.batch * p.inner, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            x, target, w, y, log_prob, p);
  } else {
    etrt_loss_reduce_kernel<T, L>
        <<<1, ETRT_CUDA_THREADS, 0, stream>>>(x, target, w, y, log_prob, p);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_loss) {
  const etrt_loss_state *s = (const etrt_loss_state *)node->state;
  const etrt_tensor *x = &inputs[0];
  const etrt_tensor *weight = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL;
  etrt_tensor *log_prob = node->num_outputs == 2 && outputs[1].rank >= 0 && outputs[1].data != NULL
                              ? &outputs[1]
                              : NULL;
  if (x->rank < 2) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s node '%s': input 0 has rank %d",
                      node->op_type, etrt_cuda_name(node), (int)x->rank);
  }
  etrt_loss_plan p;
  p.batch = x->dims[0];
  p.classes = x->dims[1];
  p.inner = etrt_cuda_span(x, 2, x->rank);
  p.reduction = (int)s->reduction;
  p.softmax = s->softmax;
  p.has_ignore = s->has_ignore_index;
  p.ignore_index = s->ignore_index;
  /* no positions: nothing to write for "none"; a sum of 0 (or 0 / 0) otherwise */
  if (p.batch * p.inner == 0 && p.reduction == ETRT_LOSS_NONE) return ETRT_OK;
  cudaStream_t stream = etrt_cuda_stream(launch);
  int int32_target = inputs[1].dtype == ETRT_DTYPE_INT32;
  ETRT_CUDA_FLOAT_SWITCH(x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype), {
    T *lp = log_prob != NULL ? (T *)log_prob->data : (T *)NULL;
    if (int32_target)
      etrt_loss_launch<T, int32_t>(inputs, outputs, weight, lp, p, stream);
    else
      etrt_loss_launch<T, int64_t>(inputs, outputs, weight, lp, p, stream);
  });
  return etrt_cuda_check(node, "loss");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_loss[] = {
    {"NegativeLogLikelihoodLoss", etrt_cuda_loss, NULL},
    {"SoftmaxCrossEntropyLoss", etrt_cuda_loss, NULL},
    {NULL, NULL, NULL},
};
