/* The signal operators on the GPU: a thread per output element, by the functions
 * the CPU kernels use (signal.h). */
#include "engine/ops/cuda/cuda_kernel.h"
#include "engine/ops/cuda/cuda_ops.h"

extern "C" {
#include "engine/ops/signal.h"
}

template <typename T>
__global__ void etrt_dft_kernel(etrt_dft_plan p, const T *x, T *y, int is_double, int64_t count) {
  ETRT_CUDA_LOOP(e, count) {
    double re, im;
    etrt_dft_element(&p, x, is_double, e, &re, &im);
    if (p.real_output) {
      y[e] = (T)re;
    } else {
      y[2 * e] = (T)re;
      y[2 * e + 1] = (T)im;
    }
  }
}

template <typename T>
__global__ void etrt_stft_kernel(etrt_stft_plan p, const T *x, const T *w, T *y, int is_double,
                                 int64_t count) {
  ETRT_CUDA_LOOP(e, count) {
    double re, im;
    etrt_stft_element(&p, x, w, is_double, e, &re, &im);
    y[2 * e] = (T)re;
    y[2 * e + 1] = (T)im;
  }
}

template <typename T>
__global__ void etrt_window_kernel(etrt_window_state s, T *y, int64_t size) {
  ETRT_CUDA_LOOP(i, size) y[i] = (T)etrt_window_element(&s, size, i);
}

/* The scalar inputs are read on the device: they are data, not value inputs. */
template <typename T>
__global__ void etrt_mel_kernel(etrt_mel_plan p, const void *rate, int rate_is_64,
                                const void *lower, const void *upper, int edges_are_64, T *y,
                                int64_t count, uint32_t *fault, uint32_t node) {
  double r = rate_is_64 ? (double)*(const int64_t *)rate : (double)*(const int32_t *)rate;
  double lo = etrt_signal_at(lower, edges_are_64, 0), hi = etrt_signal_at(upper, edges_are_64, 0);
  ETRT_CUDA_LOOP(e, count) {
    int bad = 0;
    double v = etrt_mel_element(&p, r, lo, hi, e, &bad);
    if (bad) etrt_cuda_fault(fault, node);
    y[e] = (T)v;
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_dft) {
  etrt_dft_plan p;
  ETRT_RETURN_IF_ERROR(etrt_dft_plan_make(node, inputs, &p));
  int64_t count = p.outer * p.bins * p.inner;
  if (count == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_dft_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        p, (const float *)inputs[0].data, (float *)outputs[0].data, 0, count);
  else
    etrt_dft_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        p, (const double *)inputs[0].data, (double *)outputs[0].data, 1, count);
  return etrt_cuda_check(node, "dft");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_stft) {
  etrt_stft_plan p;
  ETRT_RETURN_IF_ERROR(etrt_stft_plan_make(node, inputs, &p));
  int64_t count = p.batch * p.frames * p.bins;
  if (count == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  const void *w = p.has_window ? inputs[2].data : NULL;
  if (inputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_stft_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        p, (const float *)inputs[0].data, (const float *)w, (float *)outputs[0].data, 0, count);
  else
    etrt_stft_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        p, (const double *)inputs[0].data, (const double *)w, (double *)outputs[0].data, 1, count);
  return etrt_cuda_check(node, "stft");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_window) {
  (void)inputs;
  const etrt_window_state *s = (const etrt_window_state *)node->state;
  int64_t size = outputs[0].dims[0];
  if (size == 0) return ETRT_OK;
  unsigned blocks = etrt_cuda_blocks(size, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  if (outputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_window_kernel<float>
        <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(*s, (float *)outputs[0].data, size);
  else
    etrt_window_kernel<double>
        <<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(*s, (double *)outputs[0].data, size);
  return etrt_cuda_check(node, "window");
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_mel_weight_matrix) {
  etrt_mel_plan p;
  ETRT_RETURN_IF_ERROR(etrt_mel_plan_make(node, inputs, &p));
  int64_t count = p.spectrum_bins * p.mel_bins;
  unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
  cudaStream_t stream = etrt_cuda_stream(launch);
  int rate_is_64 = inputs[2].dtype == ETRT_DTYPE_INT64;
  int edges_are_64 = inputs[3].dtype == ETRT_DTYPE_FLOAT64;
  if (outputs[0].dtype == ETRT_DTYPE_FLOAT32)
    etrt_mel_kernel<float><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        p, inputs[2].data, rate_is_64, inputs[3].data, inputs[4].data, edges_are_64,
        (float *)outputs[0].data, count, launch->fault, launch->node);
  else
    etrt_mel_kernel<double><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
        p, inputs[2].data, rate_is_64, inputs[3].data, inputs[4].data, edges_are_64,
        (double *)outputs[0].data, count, launch->fault, launch->node);
  return etrt_cuda_check(node, "mel_weight_matrix");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_signal[] = {
    {"DFT", etrt_cuda_dft, NULL},
    {"STFT", etrt_cuda_stft, NULL},
    {"HannWindow", etrt_cuda_window, NULL},
    {"HammingWindow", etrt_cuda_window, NULL},
    {"BlackmanWindow", etrt_cuda_window, NULL},
    {"MelWeightMatrix", etrt_cuda_mel_weight_matrix, NULL},
    {NULL, NULL, NULL},
};
