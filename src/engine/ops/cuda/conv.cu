/* Conv and EtrtFusedConv on the GPU. The window geometry (pads, auto_pad, strides,
 * dilations) comes from the shared etrt_conv_geometry_conv.
 *
 * Where cuDNN loads, a convolution with symmetric pads runs as one
 * cudnnConvolutionBiasActivationForward: bias, residual (EtrtFusedConv's Z) and Relu
 * in its epilogue. The node's setup (op.h), run when a context is created, makes the
 * descriptors and takes the algorithm the plan recorded for this GPU (plan_tune.h), or
 * picks it by timing the candidates on the context's GPU
 * (cudnnFindConvolutionForwardAlgorithm, and at build time a re-timing of the best few),
 * among those whose scratch fits the workspace the node asks for anyway; launches only
 * re-describe changed shapes.
 *
 * Otherwise (no cuDNN, other geometry, float64): ungrouped convolutions are matrix
 * products through cuBLASLt: a pointwise one (1x1, stride 1, no pad) reads X as it
 * is; others first unfold a chunk of images into the workspace (im2col) as
 * [image][C * kernel][output positions]. Grouped convolutions (depthwise above all,
 * where a product per group would be tiny) run a direct kernel. The bias is copied
 * into Y first and the product adds to it (beta = 1).
 *
 * A node with the builder's channels_last attribute (conv_shape.h) has X, Y and Z in
 * NHWC and W in [M, kernel..., C/group]: cuDNN gets NHWC strides and an NHWC filter, so
 * its tensor-core kernels read and write the activations as they are, with no
 * conversion around each call. A pointwise one (1x1, stride 1, no pad, one group) is
 * a plain product instead, with bias, residual and Relu in cuBLASLt's epilogue. Other
 * such nodes run cudnnConvolutionForward and then one pass for bias, residual and Relu;
 * a half-type 2-D one may instead run all of it as one cuDNN graph (conv_graph.h), kept
 * at setup where that is faster. Without cuDNN they run a direct kernel coalesced along
 * the channels (never the im2col path, which is written for NCHW). */
#include <limits.h>
#include <stdlib.h>

#include "engine/ops/cuda/conv_graph.h"
#include "engine/ops/cuda/cuda_libraries.h"
#include "engine/ops/cuda/gemm.h"

extern "C" {
#include "base/log.h"
#include "engine/ops/conv.h"
}

/* Most bytes of unfolded images the workspace holds; larger batches go in chunks. */
#define ETRT_CONV_UNFOLD_CAP ((size_t)128 << 20)
/* The most scratch a channels-last node's cuDNN algorithm may take (etrt_conv_dnn_setup_node
 * times only the candidates that fit). */
#define ETRT_CONV_DNN_SCRATCH ((size_t)64 << 20)
/* Build-time tuning (etrt_conv_dnn_retime): how many of Find's candidates are timed
 * again, with how many warm-up and timed runs each, and how much slower than the
 * fastest a candidate with less scratch may be and still be taken. */
#define ETRT_CONV_TUNE_CANDIDATES 4
#define ETRT_CONV_TUNE_WARMUP 3
#define ETRT_CONV_TUNE_RUNS 10
#define ETRT_CONV_TUNE_TOLERANCE 1.03f

typedef struct etrt_conv_sizes {
  int64_t batch, channels, maps, group, in_count, out_count, kernel_count;
} etrt_conv_sizes;

static etrt_status etrt_conv_resolve(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_conv_geometry *g, etrt_conv_sizes *d) {
  const etrt_conv_params *params = (const etrt_conv_params *)node->state;
  etrt_tensor x = inputs[0], w = inputs[1];
  if (params->channels_last) {
    x = etrt_conv_nchw_view(&inputs[0]);
    w = etrt_conv_nchw_view(&inputs[1]);
  }
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_conv(node, params, &x, &w, g));
  d->batch = x.dims[0];
  d->channels = x.dims[1];
  d->maps = w.dims[0];
  d->group = params->group;
  d->in_count = etrt_conv_geometry_in_count(g);
  d->out_count = etrt_conv_geometry_out_count(g);
  d->kernel_count = etrt_conv_geometry_kernel_count(g);
  if (d->group < 1 || d->channels % d->group != 0 || d->maps % d->group != 0) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "Conv node '%s': %lld channels, %lld maps, group %lld", etrt_cuda_name(node),
                      (long long)d->channels, (long long)d->maps, (long long)d->group);
  }
  return ETRT_OK;
}

static int etrt_conv_pointwise(const etrt_conv_geometry *g) {
  for (int32_t s = 0; s < g->spatial; ++s) {
    if (g->kernel[s] != 1 || g->stride[s] != 1 || g->pad_begin[s] != 0 || g->in[s] != g->out[s]) {
      return 0;
    }
  }
  return 1;
}

/* A channels-last 1x1 convolution with stride 1, no pad and one group is one product,
 * Y [N * positions, M] = X [N * positions, C] W^T with W [M][C], and cuBLASLt adds the
 * bias, the residual (its C operand) and Relu in its epilogue: through cuDNN, an NHWC
 * node needs a pass of its own over Y for those (etrt_conv_bias_epilogue_kernel).
 * ETRT_CUDA_POINTWISE_GEMM=0 leaves such nodes to cuDNN. */
static bool etrt_conv_nhwc_product(const etrt_node *node, const etrt_conv_geometry &g,
                                   const etrt_conv_sizes &d, etrt_dtype dtype) {
  return ((const etrt_conv_params *)node->state)->channels_last && d.group == 1 && d.channels > 0 &&
         etrt_conv_pointwise(&g) && etrt_cuda_gemm_dtype_ok(dtype);
}

/* cuDNN's tensor-core kernels for channels-last half types read channels in runs of 8
 * or 16 bytes. With fewer channels (an image stem's 3) it may have no tensor-core
 * algorithm within the scratch a node may take, and then falls back to a float kernel
 * that took a third of ResNet-50's batch-128 inference. Such a node (not a pointwise
 * one, which is a product) may read its input from the workspace with the channels
 * padded by zeros, and a weight padded likewise once at setup
 * (etrt_conv_dnn_wants_padding decides): to 4 channels from fewer (cuDNN 9 on an H200,
 * batch-128 stem: 0.28 ms at 4 channels, 0.71 at 8), else to a multiple of 8. Returns
 * the channels it would see. */
static int64_t etrt_conv_padded_channels(const etrt_node *node, const etrt_conv_geometry &g,
                                         const etrt_conv_sizes &d, etrt_dtype dtype) {
  if (!((const etrt_conv_params *)node->state)->channels_last || d.group != 1 ||
      (dtype != ETRT_DTYPE_FLOAT16 && dtype != ETRT_DTYPE_BFLOAT16) || etrt_conv_pointwise(&g))
    return d.channels;
  int64_t padded = d.channels < 4 ? 4 : (d.channels + 7) / 8 * 8;
  /* cuDNN describes the padded input with int sizes and strides */
  return d.batch * d.in_count * padded <= INT_MAX ? padded : d.channels;
}

/* Scratch a node that may pad its channels may take: cuDNN's tensor-core algorithms
 * for a few channels ask for the output's bytes (196 MiB for the batch-128 stem), with
 * a MiB to spare, where that is more than the node's usual `scratch`. */
static size_t etrt_conv_padded_scratch(const etrt_conv_sizes &d, etrt_dtype dtype, size_t scratch) {
  size_t output = (size_t)(d.batch * d.maps * d.out_count) * etrt_dtype_size(dtype);
  return output + ((size_t)1 << 20) > scratch ? output + ((size_t)1 << 20) : scratch;
}

/* Workspace bytes of the padded input (256-byte aligned), 0 without padding. */
static size_t etrt_conv_padded_bytes(const etrt_conv_sizes &d, int64_t padded, etrt_dtype dtype) {
  if (padded == d.channels) return 0;
  size_t bytes = (size_t)(d.batch * d.in_count * padded) * etrt_dtype_size(dtype);
  return (bytes + 255) & ~(size_t)255;
}

/* y[p][c] = c < channels ? x[p][c] : 0 over `pixels` positions of `padded` channels. */
template <typename T>
__global__ void etrt_conv_pad_channels_kernel(const T *x, T *y, int64_t pixels, int64_t channels,
                                              int64_t padded) {
  ETRT_CUDA_LOOP(t, pixels * padded) {
    int64_t c = t % padded;
    y[t] = c < channels ? x[(t / padded) * channels + c] : etrt_cvt<T>(0.0f);
  }
}

/* Bytes of one unfolded image. */
static size_t etrt_conv_unfold_bytes(const etrt_conv_sizes *d, etrt_dtype dtype) {
  return (size_t)(d->channels * d->kernel_count * d->out_count) * etrt_dtype_size(dtype);
}

/* The input position read by output position `p` and kernel position `k` along each
 * axis; -1 from the function when the read falls in the padding. */
__device__ __forceinline__ int64_t etrt_conv_input_offset(const etrt_conv_geometry &g, int64_t p,
                                                          int64_t k) {
  int64_t offset = 0, scale = 1;
  for (int32_t s = g.spatial - 1; s >= 0; --s) {
    int64_t o = p % g.out[s], kk = k % g.kernel[s];
    p /= g.out[s];
    k /= g.kernel[s];
    int64_t at = o * g.stride[s] - g.pad_begin[s] + kk * g.dilation[s];
    if (at < 0 || at >= g.in[s]) return -1;
    offset += at * scale;
    scale *= g.in[s];
  }
  return offset;
}

/* col[i][c * K + k][p] = x[first + i][c][window(p, k)] for `images` images. */
template <typename T>
__global__ void etrt_im2col_kernel(const T *x, T *col, int64_t images, int64_t channels,
                                   int64_t in_count, int64_t kernel_count, int64_t out_count,
                                   etrt_conv_geometry g) {
  int64_t rows = channels * kernel_count;
  ETRT_CUDA_LOOP(t, images * rows * out_count) {
    int64_t p = t % out_count;
    int64_t row = (t / out_count) % rows;
    int64_t image = t / (out_count * rows);
    int64_t c = row / kernel_count, k = row % kernel_count;
    int64_t at = etrt_conv_input_offset(g, p, k);
    col[t] = at < 0 ? T(0.0f) : x[(image * channels + c) * in_count + at];
  }
}

template <typename T>
__global__ void etrt_conv_direct_kernel(const T *x, const T *w, const T *bias, T *y,
                                        etrt_conv_sizes d, etrt_conv_geometry g) {
  typedef typename etrt_math<T>::type M;
  int64_t cg = d.channels / d.group, mg = d.maps / d.group;
  ETRT_CUDA_LOOP(t, d.batch * d.maps * d.out_count) {
    int64_t p = t % d.out_count;
    int64_t m = (t / d.out_count) % d.maps;
    int64_t n = t / (d.out_count * d.maps);
    int64_t grp = m / mg;
    const T *xg = x + (n * d.channels + grp * cg) * d.in_count;
    const T *wm = w + m * cg * d.kernel_count;
    M acc = bias != NULL ? etrt_cvt<M>(bias[m]) : M(0);
    for (int64_t k = 0; k < d.kernel_count; ++k) {
      int64_t at = etrt_conv_input_offset(g, p, k);
      if (at < 0) continue;
      for (int64_t c = 0; c < cg; ++c) {
        acc += etrt_cvt<M>(xg[c * d.in_count + at]) * etrt_cvt<M>(wm[c * d.kernel_count + k]);
      }
    }
    y[t] = etrt_cvt<T>(acc);
  }
}

/* channels_last: y[n][p][m] over X [N, positions, C] and W [M, kernel, C/group]; consecutive
 * threads take consecutive maps of one position, so the reads of X are shared. */
template <typename T>
__global__ void etrt_conv_nhwc_direct_kernel(const T *x, const T *w, const T *bias, T *y,
                                             etrt_conv_sizes d, etrt_conv_geometry g) {
  typedef typename etrt_math<T>::type M;
  int64_t cg = d.channels / d.group, mg = d.maps / d.group;
  ETRT_CUDA_LOOP(t, d.batch * d.out_count * d.maps) {
    int64_t m = t % d.maps;
    int64_t p = (t / d.maps) % d.out_count;
    int64_t n = t / (d.maps * d.out_count);
    const T *xn = x + n * d.in_count * d.channels + (m / mg) * cg;
    const T *wm = w + m * d.kernel_count * cg;
    M acc = M(0);
    for (int64_t k = 0; k < d.kernel_count; ++k) {
      int64_t at = etrt_conv_input_offset(g, p, k);
      if (at < 0) continue;
      for (int64_t c = 0; c < cg; ++c) {
        acc += etrt_cvt<M>(xn[at * d.channels + c]) * etrt_cvt<M>(wm[k * cg + c]);
      }
    }
    if (bias != NULL) acc += etrt_cvt<M>(bias[m]);
    y[t] = etrt_cvt<T>(acc);
  }
}

/* ---- cuDNN ----------------------------------------------------------------------- */

/* A node's cuDNN state in one context. The tensor descriptors describe the shapes of
 * the last launch (`dims`); the algorithm was chosen at setup. */
typedef struct etrt_conv_dnn {
  const etrt_cudnn_api *api;
  cudnnTensorDescriptor_t x, y, bias;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t activation;
  cudnnConvolutionFwdAlgo_t algo;
  cudnnDataType_t type;
  size_t algo_workspace; /* the algorithm's scratch at `dims` */
  int nhwc;              /* channels_last: NHWC tensors and filter */
  int refused;           /* cuDNN refused the NHWC call: the direct kernel runs the node */
  /* Channels-last nodes run cudnnConvolutionForward with the algorithm timed for it,
   * then bias, residual and Relu in one pass (etrt_conv_bias_epilogue_kernel): the
   * fused cudnnConvolutionBiasActivationForward takes slow non-tensor-core kernels for
   * NHWC half types, and Find, which times the plain call, cannot see that. */
  int split;
  int relu;
  void *zero_bias; /* `maps` zeros, for a node without B */
  /* etrt_conv_padded_channels: the channels cuDNN sees, and the weight padded to them
   * (NULL when they are the node's own) */
  int64_t padded_channels;
  void *padded_weight;
  int64_t maps;
  int rank;
  int dims[3][5]; /* x, w, y as described */
  /* A split node's convolution with its bias, residual and Relu fused by cuDNN's graph
   * API (conv_graph.h), where that was faster at setup; NULL otherwise. */
  etrt_conv_graph *graph;
} etrt_conv_dnn;

/* cuDNN's view of one convolution: NCHW (or NCDHW) dims of x, w and y, the window,
 * and the rank (a 1-D convolution is a 2-D one of height 1). */
typedef struct etrt_conv_dnn_shape {
  int rank;
  int dims[3][5];
  int pads[3], strides[3], dilations[3];
} etrt_conv_dnn_shape;

/* False when cuDNN cannot express the convolution: pads differing at the two ends, an
 * empty tensor, or sizes past its int range. */
static bool etrt_conv_dnn_shape_of(const etrt_conv_geometry &g, const etrt_conv_sizes &d,
                                   etrt_conv_dnn_shape *s) {
  if (g.spatial < 1 || g.spatial > 3 || d.group < 1) return false;
  int extra = g.spatial == 1 ? 1 : 0;
  int spatial = g.spatial + extra;
  s->rank = spatial + 2;
  int64_t x[5] = {d.batch, d.channels, 1, 1, 1}, w[5] = {d.maps, d.channels / d.group, 1, 1, 1},
          y[5] = {d.batch, d.maps, 1, 1, 1};
  int64_t x_count = d.batch * d.channels, y_count = d.batch * d.maps,
          w_count = d.maps * (d.channels / d.group);
  for (int i = 0; i < spatial; ++i) {
    int a = i - extra; /* the axis of the geometry, -1 for the added height */
    int64_t in = a < 0 ? 1 : g.in[a], out = a < 0 ? 1 : g.out[a], k = a < 0 ? 1 : g.kernel[a];
    int64_t pad = a < 0 ? 0 : g.pad_begin[a];
    if (a >= 0 && g.pad_begin[a] != g.pad_end[a]) return false;
    x[i + 2] = in;
    w[i + 2] = k;
    y[i + 2] = out;
    x_count *= in;
    y_count *= out;
    w_count *= k;
    s->pads[i] = (int)pad;
    s->strides[i] = a < 0 ? 1 : (int)g.stride[a];
    s->dilations[i] = a < 0 ? 1 : (int)g.dilation[a];
    if (pad > INT_MAX || (a >= 0 && (g.stride[a] > INT_MAX || g.dilation[a] > INT_MAX)))
      return false;
  }
  if (x_count <= 0 || y_count <= 0 || w_count <= 0 || x_count > INT_MAX || y_count > INT_MAX ||
      w_count > INT_MAX)
    return false;
  for (int i = 0; i < s->rank; ++i) {
    s->dims[0][i] = (int)x[i];
    s->dims[1][i] = (int)w[i];
    s->dims[2][i] = (int)y[i];
  }
  return true;
}

static etrt_status etrt_conv_dnn_failed(const etrt_cudnn_api *api, const etrt_node *node,
                                        const char *call, cudnnStatus_t st) {
  return etrt_error(ETRT_ERROR_DEVICE, "%s node '%s': %s failed: %s (%d)", node->op_type,
                    etrt_cuda_name(node), call, api->error_string(st), (int)st);
}

#define ETRT_DNN_TRY(node, name, call)                                                  \
  do {                                                                                  \
    cudnnStatus_t st_ = (call);                                                         \
    if (st_ != CUDNN_STATUS_SUCCESS) return etrt_conv_dnn_failed(api, node, name, st_); \
  } while (0)

/* Describes a packed tensor of `rank` dims given in NCHW order, laid out as such or, with
 * `nhwc`, with the channels innermost. */
static etrt_status etrt_conv_dnn_packed(const etrt_cudnn_api *api, const etrt_node *node,
                                        cudnnTensorDescriptor_t desc, cudnnDataType_t type,
                                        int rank, const int *dims, int nhwc) {
  int strides[5];
  if (nhwc) {
    strides[1] = 1;
    strides[rank - 1] = dims[1];
    for (int i = rank - 2; i >= 2; --i) strides[i] = strides[i + 1] * dims[i + 1];
    strides[0] = strides[2] * dims[2];
  } else {
    strides[rank - 1] = 1;
    for (int i = rank - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  }
  ETRT_DNN_TRY(node, "cudnnSetTensorNdDescriptor",
               api->set_tensor(desc, type, rank, dims, strides));
  return ETRT_OK;
}

/* Points the x, w, y and bias descriptors at `shape` and sizes the algorithm's
 * scratch there. */
static etrt_status etrt_conv_dnn_describe(etrt_conv_dnn *dnn, const etrt_node *node,
                                          cudnnHandle_t handle, const etrt_conv_dnn_shape &shape) {
  const etrt_cudnn_api *api = dnn->api;
  ETRT_RETURN_IF_ERROR(
      etrt_conv_dnn_packed(api, node, dnn->x, dnn->type, shape.rank, shape.dims[0], dnn->nhwc));
  ETRT_RETURN_IF_ERROR(
      etrt_conv_dnn_packed(api, node, dnn->y, dnn->type, shape.rank, shape.dims[2], dnn->nhwc));
  int bias_dims[5] = {1, shape.dims[2][1], 1, 1, 1};
  ETRT_RETURN_IF_ERROR(
      etrt_conv_dnn_packed(api, node, dnn->bias, dnn->type, shape.rank, bias_dims, 0));
  ETRT_DNN_TRY(node, "cudnnSetFilterNdDescriptor",
               api->set_filter(dnn->w, dnn->type, dnn->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                               shape.rank, shape.dims[1]));
  ETRT_DNN_TRY(node, "cudnnGetConvolutionForwardWorkspaceSize",
               api->forward_workspace(handle, dnn->x, dnn->w, dnn->conv, dnn->y, dnn->algo,
                                      &dnn->algo_workspace));
  dnn->rank = shape.rank;
  memcpy(dnn->dims, shape.dims, sizeof dnn->dims);
  return ETRT_OK;
}

static void etrt_conv_dnn_release(void *state) {
  etrt_conv_dnn *dnn = (etrt_conv_dnn *)state;
  if (dnn == NULL) return;
  const etrt_cudnn_api *api = dnn->api;
  etrt_conv_graph_destroy(dnn->graph);
  if (dnn->x != NULL) api->destroy_tensor(dnn->x);
  if (dnn->y != NULL) api->destroy_tensor(dnn->y);
  if (dnn->bias != NULL) api->destroy_tensor(dnn->bias);
  if (dnn->w != NULL) api->destroy_filter(dnn->w);
  if (dnn->conv != NULL) api->destroy_conv(dnn->conv);
  if (dnn->activation != NULL) api->destroy_activation(dnn->activation);
  if (dnn->zero_bias != NULL) cudaFree(dnn->zero_bias);
  if (dnn->padded_weight != NULL) cudaFree(dnn->padded_weight);
  free(dnn);
}

/* float32 data computes as the plan's precision allows, as in gemm.cu. */
static cudnnMathType_t etrt_conv_dnn_math(etrt_dtype dtype, etrt_precision precision) {
  if (dtype != ETRT_DTYPE_FLOAT32) return CUDNN_TENSOR_OP_MATH;
  switch (precision) {
    case ETRT_PRECISION_TF32:
      return CUDNN_TENSOR_OP_MATH;
    case ETRT_PRECISION_FP16:
    case ETRT_PRECISION_BF16:
      return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    default:
      return CUDNN_FMA_MATH;
  }
}

extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_conv_workspace);

static bool etrt_conv_dnn_tensor_math(cudnnMathType_t math) {
  return math != CUDNN_DEFAULT_MATH && math != CUDNN_FMA_MATH;
}

/* One launch of the node's cuDNN call on scratch buffers (bias zero, Z = Y). */
static cudnnStatus_t etrt_conv_dnn_call(const etrt_conv_dnn *dnn, cudnnHandle_t handle,
                                        const void *x, const void *w, void *y, const void *bias,
                                        cudnnConvolutionFwdAlgo_t algo, void *scratch,
                                        size_t scratch_size) {
  float one = 1.0f, zero = 0.0f;
  if (dnn->split)
    return dnn->api->convolution_forward(handle, &one, dnn->x, x, dnn->w, w, dnn->conv, algo,
                                         scratch, scratch_size, &zero, dnn->y, y);
  return dnn->api->bias_activation_forward(handle, &one, dnn->x, x, dnn->w, w, dnn->conv, algo,
                                           scratch, scratch_size, &zero, dnn->y, y, dnn->bias, bias,
                                           dnn->activation, dnn->y, y);
}

static int etrt_conv_float_compare(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* Build-time tuning: Find's timings (one run each, at context creation) are noisy
 * enough to order the candidates differently from one process to the next, so the
 * first `count` of `candidates` (indices into `found`, Find's order) are timed again
 * on buffers of the node's shapes, the median of ETRT_CONV_TUNE_RUNS launches after
 * ETRT_CONV_TUNE_WARMUP; among those within ETRT_CONV_TUNE_TOLERANCE of the fastest
 * the one with the least scratch wins. Returns the index into `found`; a candidate
 * whose launch fails is skipped, and the first candidate is kept where none ran. */
static int etrt_conv_dnn_retime(etrt_conv_dnn *dnn, const etrt_node *node, cudnnHandle_t handle,
                                const etrt_conv_dnn_shape &shape,
                                const cudnnConvolutionFwdAlgoPerf_t *found, const int *candidates,
                                int count) {
  const etrt_cudnn_api *api = dnn->api;
  size_t elem = dnn->type == CUDNN_DATA_FLOAT ? 4 : 2;
  size_t sizes[4] = {elem, elem, elem, elem * (size_t)dnn->maps};
  for (int t = 0; t < 3; ++t)
    for (int i = 0; i < shape.rank; ++i) sizes[t] *= (size_t)shape.dims[t][i];
  size_t scratch = 0;
  for (int c = 0; c < count; ++c)
    if (found[candidates[c]].memory > scratch) scratch = found[candidates[c]].memory;
  /* x, w, y, bias and the scratch in one allocation, each part 256-byte aligned */
  size_t offsets[5], total = 0;
  for (int t = 0; t < 5; ++t) {
    offsets[t] = total;
    total += ((t < 4 ? sizes[t] : scratch) + 255) & ~(size_t)255;
  }
  char *buffer = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  if (cudaMalloc((void **)&buffer, total) != cudaSuccess ||
      cudaMemset(buffer, 0, offsets[4]) != cudaSuccess || cudaEventCreate(&start) != cudaSuccess ||
      cudaEventCreate(&stop) != cudaSuccess) {
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': no room to time the candidates again (%zu bytes): %s",
             node->op_type, etrt_cuda_name(node), total, cudaGetErrorString(cudaGetLastError()));
    if (buffer != NULL) cudaFree(buffer);
    if (start != NULL) cudaEventDestroy(start);
    return candidates[0];
  }
  const void *x = buffer + offsets[0], *w = buffer + offsets[1], *bias = buffer + offsets[3];
  void *y = buffer + offsets[2], *space = scratch > 0 ? buffer + offsets[4] : NULL;
  float median[ETRT_CONV_TUNE_CANDIDATES];
  for (int c = 0; c < count; ++c) {
    const cudnnConvolutionFwdAlgoPerf_t &f = found[candidates[c]];
    median[c] = -1.0f;
    if (dnn->split && api->set_conv_math(dnn->conv, f.mathType) != CUDNN_STATUS_SUCCESS) continue;
    bool ok = true;
    for (int r = 0; r < ETRT_CONV_TUNE_WARMUP && ok; ++r)
      ok = etrt_conv_dnn_call(dnn, handle, x, w, y, bias, f.algo, space, scratch) ==
           CUDNN_STATUS_SUCCESS;
    float runs[ETRT_CONV_TUNE_RUNS];
    for (int r = 0; r < ETRT_CONV_TUNE_RUNS && ok; ++r) {
      ok = cudaEventRecord(start, NULL) == cudaSuccess &&
           etrt_conv_dnn_call(dnn, handle, x, w, y, bias, f.algo, space, scratch) ==
               CUDNN_STATUS_SUCCESS &&
           cudaEventRecord(stop, NULL) == cudaSuccess &&
           cudaEventSynchronize(stop) == cudaSuccess &&
           cudaEventElapsedTime(&runs[r], start, stop) == cudaSuccess;
    }
    if (!ok) {
      (void)cudaGetLastError();
      continue;
    }
    qsort(runs, ETRT_CONV_TUNE_RUNS, sizeof runs[0], etrt_conv_float_compare);
    median[c] = runs[ETRT_CONV_TUNE_RUNS / 2];
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': algorithm %d (math %d): %.4f ms, %zu bytes of scratch",
             node->op_type, etrt_cuda_name(node), (int)f.algo, (int)f.mathType, median[c],
             f.memory);
  }
  (void)cudaStreamSynchronize(NULL); /* a failed candidate's work, before the free */
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(buffer);
  int fastest = -1;
  for (int c = 0; c < count; ++c)
    if (median[c] >= 0.0f && (fastest < 0 || median[c] < median[fastest])) fastest = c;
  if (fastest < 0) return candidates[0];
  int pick = fastest;
  for (int c = 0; c < count; ++c) {
    if (median[c] < 0.0f || median[c] > median[fastest] * ETRT_CONV_TUNE_TOLERANCE) continue;
    if (found[candidates[c]].memory < found[candidates[pick]].memory) pick = c;
  }
  return candidates[pick];
}

/* The algorithm and math type the plan recorded for the node (launch->recorded), where
 * cuDNN still sizes its scratch at these shapes and it fits `limit`. False (the
 * descriptor's math put back) otherwise: the node is timed as without a record. */
static bool etrt_conv_dnn_use_record(etrt_conv_dnn *dnn, const etrt_node *node,
                                     cudnnHandle_t handle, const etrt_conv_dnn_shape &shape,
                                     const etrt_cuda_launch *launch, cudnnMathType_t math,
                                     size_t limit) {
  const etrt_plan_conv_choice *c = launch->recorded;
  const etrt_cudnn_api *api = dnn->api;
  dnn->algo = (cudnnConvolutionFwdAlgo_t)c->algorithm;
  cudnnStatus_t st = api->set_conv_math(dnn->conv, (cudnnMathType_t)c->math);
  etrt_status s = st == CUDNN_STATUS_SUCCESS
                      ? etrt_conv_dnn_describe(dnn, node, handle, shape)
                      : etrt_conv_dnn_failed(api, node, "cudnnSetConvolutionMathType", st);
  if (s == ETRT_OK && dnn->algo_workspace <= limit) return true;
  etrt_log(ETRT_LOG_DEBUG,
           "%s node '%s': the recorded algorithm %u (math %u) does not serve here (%s): timing",
           node->op_type, etrt_cuda_name(node), c->algorithm, c->math,
           s != ETRT_OK ? etrt_last_error() : "its scratch does not fit");
  etrt_clear_error();
  dnn->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  (void)api->set_conv_math(dnn->conv, math);
  return false;
}

/* Whether a node that may pad its channels should. Fewer than 4 channels always pad
 * to 4 (the batch-32 stem: 0.10 ms either way; batch 128: 0.28 against 0.37 ms, with
 * less scratch). Others pad when cuDNN's heuristics (untimed, so a build and every later
 * context decide alike) list no tensor-core algorithm for the unpadded node within
 * `limit` bytes of scratch. The descriptors are the unpadded ones.
 * ETRT_CUDA_CONV_PAD=1 pads every node that may, =0 none. */
static bool etrt_conv_dnn_wants_padding(const etrt_conv_dnn *dnn, cudnnHandle_t handle,
                                        int64_t channels, size_t limit) {
  const char *env = getenv("ETRT_CUDA_CONV_PAD");
  if (env != NULL && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) return env[0] == '1';
  if (channels < 4) return true;
  cudnnConvolutionFwdAlgoPerf_t listed[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int count = 0;
  if (dnn->api->heuristic_forward(handle, dnn->x, dnn->w, dnn->conv, dnn->y,
                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                  listed) != CUDNN_STATUS_SUCCESS)
    return true;
  for (int i = 0; i < count; ++i)
    if (listed[i].status == CUDNN_STATUS_SUCCESS && listed[i].memory <= limit &&
        etrt_conv_dnn_tensor_math(listed[i].mathType))
      return false;
  return true;
}

/* The weight (W [M, kernel..., C] as the plan holds it on the host) with its channels
 * padded by zeros to dnn->padded_channels, in device memory. Without host values the
 * node is left unpadded. */
static etrt_status etrt_conv_dnn_pad_weight(etrt_conv_dnn *dnn, const etrt_node *node,
                                            const etrt_tensor *w, const etrt_conv_sizes &d,
                                            int64_t padded) {
  if (w->host_value == NULL) return ETRT_OK;
  size_t elem = etrt_dtype_size(w->dtype), rows = (size_t)(d.maps * d.kernel_count);
  size_t bytes = rows * (size_t)padded * elem;
  char *host = (char *)calloc(bytes, 1);
  if (host == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s node '%s': %zu bytes of padded weight",
                      node->op_type, etrt_cuda_name(node), bytes);
  for (size_t r = 0; r < rows; ++r)
    memcpy(host + r * (size_t)padded * elem, (const char *)w->host_value + r * d.channels * elem,
           (size_t)d.channels * elem);
  etrt_status s = ETRT_OK;
  /* Context creation, not a launch: a synchronous copy is fine here. */
  if (cudaMalloc(&dnn->padded_weight, bytes) != cudaSuccess ||
      cudaMemcpy(dnn->padded_weight, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    cudaError_t e = cudaGetLastError();
    s = etrt_error(ETRT_ERROR_DEVICE, "%s node '%s': %zu bytes of padded weight: %s", node->op_type,
                   etrt_cuda_name(node), bytes, cudaGetErrorString(e));
  } else {
    dnn->padded_channels = padded;
  }
  free(host);
  return s;
}

static etrt_status etrt_conv_bias_epilogue(const etrt_node *node, etrt_tensor *y,
                                           const etrt_tensor *bias, const etrt_tensor *z, int relu,
                                           int64_t maps, cudaStream_t stream);

/* The graph path's view of a split node at `shape` (2-D convolutions, and 1-D ones as
 * 2-D of height 1); false for others. */
static bool etrt_conv_dnn_graph_shape(const etrt_conv_dnn *dnn, const etrt_conv_dnn_shape &shape,
                                      int bias, int residual, etrt_conv_graph_shape *out) {
  if (shape.rank != 4) return false;
  memset(out, 0, sizeof *out);
  out->type = dnn->type;
  for (int i = 0; i < 4; ++i) {
    out->x[i] = shape.dims[0][i];
    out->w[i] = shape.dims[1][i];
    out->y[i] = shape.dims[2][i];
  }
  for (int i = 0; i < 2; ++i) {
    out->pads[i] = shape.pads[i];
    out->strides[i] = shape.strides[i];
    out->dilations[i] = shape.dilations[i];
  }
  out->bias = bias;
  out->residual = residual;
  out->relu = dnn->relu;
  return true;
}

/* What the graph path's setup times its plans against: the split path as a launch runs
 * it (etrt_conv_graph_unfused_fn). */
typedef struct etrt_conv_dnn_unfused_args {
  const etrt_conv_dnn *dnn;
  cudnnHandle_t handle;
  const etrt_node *node;
  etrt_tensor y, bias; /* the node's output and bias at setup, for their dtype and dims */
} etrt_conv_dnn_unfused_args;

static bool etrt_conv_dnn_unfused(void *user, const etrt_conv_graph_buffers *b) {
  const etrt_conv_dnn_unfused_args *a = (const etrt_conv_dnn_unfused_args *)user;
  const etrt_conv_dnn *dnn = a->dnn;
  float one = 1.0f, zero = 0.0f;
  if (dnn->api->convolution_forward(a->handle, &one, dnn->x, b->x, dnn->w, b->w, dnn->conv,
                                    dnn->algo, b->workspace, dnn->algo_workspace, &zero, dnn->y,
                                    b->y) != CUDNN_STATUS_SUCCESS)
    return false;
  etrt_tensor y = a->y, bias = a->bias, z = a->y;
  y.data = b->y;
  bias.data = (void *)b->bias;
  z.data = (void *)b->z;
  if (etrt_conv_bias_epilogue(a->node, &y, b->bias != NULL ? &bias : NULL, b->z != NULL ? &z : NULL,
                              dnn->relu, dnn->maps, NULL) == ETRT_OK)
    return true;
  etrt_clear_error();
  return false;
}

/* Makes the node's state: descriptors, and the fastest algorithm whose scratch fits
 * the workspace the node asks for. cudnnConvolutionBiasActivationForward takes any
 * algorithm with Relu but only the implicit precomputed GEMM without an activation,
 * so only Relu nodes are timed. No state (the GEMM path) where cuDNN is missing or
 * turned off (ETRT_CUDNN=0) or cannot express the node. */
static etrt_status etrt_conv_dnn_setup_node(const etrt_node *node, const etrt_tensor *inputs,
                                            const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                            int relu, void **state) {
  *state = NULL;
  const char *env = getenv("ETRT_CUDNN");
  if (env != NULL && strcmp(env, "0") == 0) return ETRT_OK;
  etrt_dtype dtype = inputs[0].dtype;
  if (!etrt_cuda_gemm_dtype_ok(dtype)) return ETRT_OK;
  etrt_conv_geometry g;
  etrt_conv_sizes d;
  etrt_conv_dnn_shape shape;
  if (etrt_conv_resolve(node, inputs, &g, &d) != ETRT_OK || !etrt_conv_dnn_shape_of(g, d, &shape))
    return ETRT_OK;
  const char *product = getenv("ETRT_CUDA_POINTWISE_GEMM");
  if (etrt_conv_nhwc_product(node, g, d, dtype) && (product == NULL || strcmp(product, "0") != 0))
    return ETRT_OK;
  const etrt_cudnn_api *api = NULL;
  if (etrt_cuda_cudnn_get(&api) != ETRT_OK) {
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': convolution without cuDNN: %s", node->op_type,
             etrt_cuda_name(node), etrt_last_error());
    return ETRT_OK;
  }
  if (launch->cudnn == NULL) {
    cudnnHandle_t handle = NULL;
    cudnnStatus_t st = api->create(&handle);
    if (st != CUDNN_STATUS_SUCCESS) {
      etrt_log(ETRT_LOG_DEBUG, "convolutions without cuDNN: cudnnCreate failed: %s",
               api->error_string(st));
      return ETRT_OK;
    }
    launch->cudnn = handle;
  }
  cudnnHandle_t handle = (cudnnHandle_t)launch->cudnn;
  etrt_conv_dnn *dnn = (etrt_conv_dnn *)calloc(1, sizeof *dnn);
  if (dnn == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine: out of memory");
  dnn->api = api;
  dnn->maps = d.maps;
  dnn->nhwc = ((const etrt_conv_params *)node->state)->channels_last;
  dnn->type = dtype == ETRT_DTYPE_FLOAT16    ? CUDNN_DATA_HALF
              : dtype == ETRT_DTYPE_BFLOAT16 ? CUDNN_DATA_BFLOAT16
                                             : CUDNN_DATA_FLOAT;
  dnn->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  dnn->split = dnn->nhwc;
  dnn->relu = relu;
  dnn->padded_channels = d.channels;
  etrt_status s = ETRT_OK;
  cudnnStatus_t st = api->create_tensor(&dnn->x);
  if (st == CUDNN_STATUS_SUCCESS) st = api->create_tensor(&dnn->y);
  if (st == CUDNN_STATUS_SUCCESS) st = api->create_tensor(&dnn->bias);
  if (st == CUDNN_STATUS_SUCCESS) st = api->create_filter(&dnn->w);
  if (st == CUDNN_STATUS_SUCCESS) st = api->create_conv(&dnn->conv);
  if (st == CUDNN_STATUS_SUCCESS) st = api->create_activation(&dnn->activation);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->set_conv(dnn->conv, shape.rank - 2, shape.pads, shape.strides, shape.dilations,
                       CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  if (st == CUDNN_STATUS_SUCCESS) st = api->set_conv_groups(dnn->conv, (int)d.group);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->set_conv_math(dnn->conv, etrt_conv_dnn_math(dtype, launch->precision));
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->set_activation(dnn->activation,
                             relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                             CUDNN_PROPAGATE_NAN, 0.0);
  if (st == CUDNN_STATUS_SUCCESS) st = api->set_stream(handle, NULL);
  if (st != CUDNN_STATUS_SUCCESS) s = etrt_conv_dnn_failed(api, node, "describing", st);
  if (s == ETRT_OK) s = etrt_conv_dnn_describe(dnn, node, handle, shape);
  /* the padded input comes first in the workspace, the algorithm's scratch after it */
  size_t limit = etrt_cuda_conv_workspace(node, inputs, outputs), padded_bytes = 0;
  int64_t padded = etrt_conv_padded_channels(node, g, d, dtype);
  if (padded != d.channels) {
    padded_bytes = etrt_conv_padded_bytes(d, padded, dtype);
    limit = limit > padded_bytes ? limit - padded_bytes : 0;
    if (s == ETRT_OK && etrt_conv_dnn_wants_padding(dnn, handle, d.channels, limit)) {
      s = etrt_conv_dnn_pad_weight(dnn, node, &inputs[1], d, padded);
      if (s == ETRT_OK && dnn->padded_weight != NULL) {
        shape.dims[0][1] = shape.dims[1][1] = (int)padded;
        s = etrt_conv_dnn_describe(dnn, node, handle, shape);
        etrt_log(ETRT_LOG_DEBUG, "%s node '%s': cuDNN reads its %lld channels padded to %lld",
                 node->op_type, etrt_cuda_name(node), (long long)d.channels, (long long)padded);
      }
    }
    if (dnn->padded_weight == NULL) padded_bytes = 0;
  }
  if (s != ETRT_OK && dnn->nhwc) {
    /* cuDNN takes fewer configurations in NHWC (the algorithm an activation-less node must
     * use may refuse one): the direct NHWC kernel runs such a node instead. */
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': channels-last convolution without cuDNN: %s",
             node->op_type, etrt_cuda_name(node), etrt_last_error());
    etrt_clear_error();
    etrt_conv_dnn_release(dnn);
    return ETRT_OK;
  }
  cudnnMathType_t math = etrt_conv_dnn_math(dtype, launch->precision);
  bool timed = relu || dnn->split, recorded = false;
  if (s == ETRT_OK && timed && launch->recorded != NULL && !launch->tune)
    recorded = etrt_conv_dnn_use_record(dnn, node, handle, shape, launch, math, limit);
  if (s == ETRT_OK && timed && !recorded) {
    cudnnConvolutionFwdAlgoPerf_t found[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    st = api->find_forward(handle, dnn->x, dnn->w, dnn->conv, dnn->y,
                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, found);
    if (st != CUDNN_STATUS_SUCCESS) {
      s = etrt_conv_dnn_failed(api, node, "cudnnFindConvolutionForwardAlgorithm", st);
    } else {
      /* Sorted fastest first. A channels-last half-type node takes a tensor-core
       * algorithm where one is listed: Find's timings of the others are noisy enough to
       * put a slow non-tensor-core kernel first now and then. */
      bool tensor_only = false;
      for (int i = 0; i < count; ++i)
        if (dnn->split && dnn->type != CUDNN_DATA_FLOAT &&
            found[i].status == CUDNN_STATUS_SUCCESS && found[i].memory <= limit &&
            etrt_conv_dnn_tensor_math(found[i].mathType))
          tensor_only = true;
      int candidates[CUDNN_CONVOLUTION_FWD_ALGO_COUNT], listed = 0;
      for (int i = 0; i < count; ++i)
        if (found[i].status == CUDNN_STATUS_SUCCESS && found[i].memory <= limit &&
            (!tensor_only || etrt_conv_dnn_tensor_math(found[i].mathType)))
          candidates[listed++] = i;
      if (listed > 0) {
        int pick = candidates[0];
        if (launch->tune && listed > 1)
          pick = etrt_conv_dnn_retime(
              dnn, node, handle, shape, found, candidates,
              listed < ETRT_CONV_TUNE_CANDIDATES ? listed : ETRT_CONV_TUNE_CANDIDATES);
        dnn->algo = found[pick].algo;
        /* the math type it was timed with (tensor cores or not) */
        if (dnn->split) math = found[pick].mathType;
      }
      st = api->set_conv_math(dnn->conv, math);
      s = st != CUDNN_STATUS_SUCCESS
              ? etrt_conv_dnn_failed(api, node, "cudnnSetConvolutionMathType", st)
              : etrt_conv_dnn_describe(dnn, node, handle, shape);
    }
  }
  if (s == ETRT_OK && dnn->algo_workspace > limit) {
    etrt_conv_dnn_release(dnn);
    return ETRT_OK;
  }
  bool has_bias = node->num_inputs > 2 && inputs[2].rank >= 0;
  if (s == ETRT_OK && !has_bias) {
    size_t bytes = (size_t)d.maps * etrt_dtype_size(dtype);
    if (cudaMalloc(&dnn->zero_bias, bytes) != cudaSuccess ||
        cudaMemset(dnn->zero_bias, 0, bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      dnn->zero_bias = NULL;
      s = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "%s node '%s': %zu bytes of zero bias",
                     node->op_type, etrt_cuda_name(node), bytes);
    }
  }
  if (s != ETRT_OK) {
    etrt_conv_dnn_release(dnn);
    return s;
  }
  /* A split node of a half type (not one reading padded channels) may fuse its bias,
   * residual and Relu into the convolution through cuDNN's graph API, kept where that
   * is faster than the algorithm just chosen followed by the epilogue kernel. Not while
   * tuning: the plan records only the unfused algorithm. */
  etrt_conv_graph_shape graph_shape;
  int residual = node->num_inputs > 3 && inputs[3].rank >= 0;
  if (dnn->split && dnn->type != CUDNN_DATA_FLOAT && dnn->padded_weight == NULL && d.group == 1 &&
      !launch->tune && etrt_conv_dnn_graph_shape(dnn, shape, has_bias, residual, &graph_shape)) {
    etrt_conv_dnn_unfused_args args;
    memset(&args, 0, sizeof args);
    args.dnn = dnn;
    args.handle = handle;
    args.node = node;
    args.y = outputs[0];
    if (has_bias) args.bias = inputs[2];
    dnn->graph = etrt_conv_graph_create(api, handle, node, &graph_shape, limit, dnn->algo_workspace,
                                        etrt_conv_dnn_unfused, &args);
  }
  etrt_log(ETRT_LOG_DEBUG, "%s node '%s': cuDNN algorithm %d (%s), %zu bytes of scratch",
           node->op_type, etrt_cuda_name(node), (int)dnn->algo,
           recorded ? "recorded"
           : timed  ? "timed"
                    : "fixed",
           dnn->algo_workspace);
  if (recorded) {
    launch->recorded_used++;
    /* A channels-last node's fallback needs no im2col room (the direct kernel, or for a
     * 1x1 one with ETRT_CUDA_POINTWISE_GEMM=0 a product that takes what scratch there
     * is), so the context reserves only what the recorded algorithm takes. */
    if (dnn->split) {
      size_t need = (dnn->algo_workspace > launch->recorded->scratch_bytes
                         ? dnn->algo_workspace
                         : (size_t)launch->recorded->scratch_bytes) +
                    padded_bytes;
      if (dnn->graph != NULL && etrt_conv_graph_workspace(dnn->graph) > need)
        need = etrt_conv_graph_workspace(dnn->graph);
      if (need < launch->workspace_size) launch->workspace_size = need;
    }
  } else if (timed) {
    launch->timed++;
  }
  if (timed && launch->tune) {
    launch->tuned->algorithm = (uint32_t)dnn->algo;
    launch->tuned->math = (uint32_t)math;
    launch->tuned->scratch_bytes = dnn->algo_workspace;
    launch->tuned_set = 1;
  }
  *state = dnn;
  return ETRT_OK;
}

static etrt_status etrt_conv_dnn_setup(const etrt_node *node, const etrt_tensor *inputs,
                                       const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                       void **state) {
  return etrt_conv_dnn_setup_node(node, inputs, outputs, launch, 0, state);
}

static etrt_status etrt_fused_conv_dnn_setup(const etrt_node *node, const etrt_tensor *inputs,
                                             const etrt_tensor *outputs, etrt_cuda_launch *launch,
                                             void **state) {
  const etrt_fused_conv_params *p = (const etrt_fused_conv_params *)node->state;
  return etrt_conv_dnn_setup_node(node, inputs, outputs, launch,
                                  (p->activation == ETRT_CONV_ACT_RELU), state);
}

extern "C" void etrt_cuda_dnn_destroy(void *handle) {
  const etrt_cudnn_api *api = NULL;
  if (handle != NULL && etrt_cuda_cudnn_get(&api) == ETRT_OK) api->destroy((cudnnHandle_t)handle);
}

/* y = act(y + bias[c] + z) over a channels-last output (the channel is the innermost
 * axis), V channels per thread where they are aligned for 16-byte accesses. */
template <typename T, int V>
__global__ void etrt_conv_bias_epilogue_kernel(T *y, const T *bias, const T *z, int relu,
                                               int64_t runs, int64_t maps) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(r, runs) {
    int64_t i = r * V;
    T v[V], b[V], res[V];
    etrt_cuda_load_run<V>(y, i, 1, v);
    if (bias != NULL) etrt_cuda_load_run<V>(bias, i % maps, 1, b);
    if (z != NULL) etrt_cuda_load_run<V>(z, i, 1, res);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      M m = etrt_cvt<M>(v[k]);
      if (bias != NULL) m += etrt_cvt<M>(b[k]);
      if (z != NULL) m += etrt_cvt<M>(res[k]);
      if (relu) m = m > M(0) ? m : M(0);
      v[k] = etrt_cvt<T>(m);
    }
    etrt_cuda_store_run<V>(y, i, v);
  }
}

template <typename T>
static void etrt_conv_bias_epilogue_start(T *y, const T *bias, const T *z, int relu, int64_t count,
                                          int64_t maps, cudaStream_t stream) {
  constexpr int W = etrt_cuda_width<T>();
  const size_t bytes = W * sizeof(T);
  if (maps % W == 0 && (uintptr_t)y % bytes == 0 && (uintptr_t)bias % bytes == 0 &&
      (uintptr_t)z % bytes == 0) {
    etrt_conv_bias_epilogue_kernel<T, W>
        <<<etrt_cuda_blocks(count / W, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            y, bias, z, relu, count / W, maps);
  } else {
    etrt_conv_bias_epilogue_kernel<T, 1>
        <<<etrt_cuda_blocks(count, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            y, bias, z, relu, count, maps);
  }
}

static etrt_status etrt_conv_bias_epilogue(const etrt_node *node, etrt_tensor *y,
                                           const etrt_tensor *bias, const etrt_tensor *z, int relu,
                                           int64_t maps, cudaStream_t stream) {
  int64_t count = etrt_tensor_numel(y);
  if (count == 0 || (bias == NULL && z == NULL && !relu)) return ETRT_OK;
  ETRT_CUDA_FLOAT_SWITCH(
      y->dtype, T, return etrt_cuda_no_kernel(node, y->dtype),
      etrt_conv_bias_epilogue_start<T>(
          (T *)y->data, bias != NULL ? (const T *)bias->data : (const T *)NULL,
          z != NULL ? (const T *)z->data : (const T *)NULL, relu, count, maps, stream));
  return etrt_cuda_check(node, "conv_bias_epilogue");
}

/* Y = act(conv(X, W) + B + Z) as one cuDNN call. False (and *status untouched) when
 * the node has no state or these shapes need more scratch than the context has: the
 * caller takes the GEMM path. */
static bool etrt_conv_dnn_run(const etrt_node *node, const etrt_tensor *inputs,
                              etrt_tensor *outputs, const etrt_cuda_launch *launch,
                              const etrt_tensor *z, etrt_status *status) {
  etrt_conv_dnn *dnn =
      launch->node_state != NULL ? (etrt_conv_dnn *)launch->node_state[launch->node] : NULL;
  if (dnn == NULL || launch->cudnn == NULL || dnn->refused) return false;
  etrt_conv_geometry g;
  etrt_conv_sizes d;
  etrt_conv_dnn_shape shape;
  if (etrt_conv_resolve(node, inputs, &g, &d) != ETRT_OK || !etrt_conv_dnn_shape_of(g, d, &shape))
    return false;
  cudnnHandle_t handle = (cudnnHandle_t)launch->cudnn;
  size_t padded_bytes = 0;
  if (dnn->padded_weight != NULL) {
    shape.dims[0][1] = shape.dims[1][1] = (int)dnn->padded_channels;
    padded_bytes = etrt_conv_padded_bytes(d, dnn->padded_channels, inputs[0].dtype);
  }
  if (shape.rank != dnn->rank || memcmp(shape.dims, dnn->dims, sizeof dnn->dims) != 0) {
    etrt_status s = etrt_conv_dnn_describe(dnn, node, handle, shape);
    if (s != ETRT_OK) {
      *status = s;
      return true;
    }
  }
  if (dnn->algo_workspace + padded_bytes > launch->workspace_size || d.maps > dnn->maps) {
    dnn->rank = 0; /* described for shapes this launch does not use */
    return false;
  }
  const etrt_cudnn_api *api = dnn->api;
  cudnnStatus_t st = api->set_stream(handle, etrt_cuda_stream(launch));
  if (st != CUDNN_STATUS_SUCCESS) {
    *status = etrt_conv_dnn_failed(api, node, "cudnnSetStream", st);
    return true;
  }
  bool has_bias = node->num_inputs > 2 && inputs[2].rank >= 0;
  float one = 1.0f, residual = z != NULL ? 1.0f : 0.0f, zero = 0.0f;
  if (dnn->split) {
    const void *x = inputs[0].data, *w = inputs[1].data;
    char *scratch = (char *)launch->workspace;
    etrt_conv_graph_shape now;
    if (dnn->graph != NULL && padded_bytes == 0 &&
        etrt_conv_dnn_graph_shape(dnn, shape, has_bias, z != NULL, &now) &&
        etrt_conv_graph_matches(dnn->graph, &now)) {
      etrt_conv_graph_buffers b = {x,
                                   w,
                                   has_bias ? inputs[2].data : NULL,
                                   z != NULL ? z->data : NULL,
                                   outputs[0].data,
                                   launch->workspace,
                                   launch->workspace_size};
      if (etrt_conv_graph_run(dnn->graph, node, handle, &b, status)) return true;
    }
    if (padded_bytes > 0) {
      int64_t pixels = d.batch * d.in_count;
      ETRT_CUDA_FLOAT_SWITCH(
          inputs[0].dtype, T, return false,
          etrt_conv_pad_channels_kernel<T>
          <<<etrt_cuda_blocks(pixels * dnn->padded_channels, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS,
             0, etrt_cuda_stream(launch)>>>((const T *)x, (T *)scratch, pixels, d.channels,
                                            dnn->padded_channels));
      *status = etrt_cuda_check(node, "conv_pad_channels");
      if (*status != ETRT_OK) return true;
      x = scratch;
      w = dnn->padded_weight;
      scratch += padded_bytes;
    }
    st = api->convolution_forward(handle, &one, dnn->x, x, dnn->w, w, dnn->conv, dnn->algo, scratch,
                                  dnn->algo_workspace, &zero, dnn->y, outputs[0].data);
    if (st == CUDNN_STATUS_SUCCESS) {
      *status = etrt_conv_bias_epilogue(node, &outputs[0], has_bias ? &inputs[2] : NULL, z,
                                        dnn->relu, d.maps, etrt_cuda_stream(launch));
      return true;
    }
  } else {
    st = api->bias_activation_forward(handle, &one, dnn->x, inputs[0].data, dnn->w, inputs[1].data,
                                      dnn->conv, dnn->algo, launch->workspace, dnn->algo_workspace,
                                      &residual, dnn->y, z != NULL ? z->data : outputs[0].data,
                                      dnn->bias, has_bias ? inputs[2].data : dnn->zero_bias,
                                      dnn->activation, dnn->y, outputs[0].data);
  }
  if (st == CUDNN_STATUS_NOT_SUPPORTED && dnn->nhwc) {
    /* Refused before the convolution is queued (only the padding of its input, into the
     * workspace, may have run): the direct NHWC kernel takes the node from now on. */
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': cuDNN refuses this channels-last convolution (%s)",
             node->op_type, etrt_cuda_name(node), api->error_string(st));
    dnn->refused = 1;
    return false;
  }
  *status = st == CUDNN_STATUS_SUCCESS
                ? ETRT_OK
                : etrt_conv_dnn_failed(api, node,
                                       dnn->split ? "cudnnConvolutionForward"
                                                  : "cudnnConvolutionBiasActivationForward",
                                       st);
  return true;
}

/* y = act(y + z) after the GEMM path of EtrtFusedConv. */
template <typename T>
__global__ void etrt_conv_epilogue_kernel(T *y, const T *z, int relu, int64_t count) {
  typedef typename etrt_math<T>::type M;
  ETRT_CUDA_LOOP(i, count) {
    M v = etrt_cvt<M>(y[i]);
    if (z != NULL) v += etrt_cvt<M>(z[i]);
    if (relu) v = v > M(0) ? v : M(0);
    y[i] = etrt_cvt<T>(v);
  }
}

/* Y = conv(X, W) + B without cuDNN: im2col and cuBLASLt, or a direct kernel. A
 * channels-last pointwise node is one product whose epilogue also adds Z (NULL for
 * none) and applies Relu, and *fused says so; otherwise the caller applies them. */
static etrt_status etrt_conv_gemm_path(const etrt_node *node, const etrt_tensor *inputs,
                                       etrt_tensor *outputs, const etrt_cuda_launch *launch,
                                       const etrt_tensor *z, int relu, bool *fused) {
  *fused = false;
  etrt_conv_geometry g;
  etrt_conv_sizes d;
  ETRT_RETURN_IF_ERROR(etrt_conv_resolve(node, inputs, &g, &d));
  const etrt_tensor *x = &inputs[0], *w = &inputs[1];
  const etrt_tensor *bias = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL;
  etrt_tensor *y = &outputs[0];
  cudaStream_t stream = etrt_cuda_stream(launch);
  int64_t total = d.batch * d.maps * d.out_count;
  if (total == 0) return ETRT_OK;

  if (etrt_conv_nhwc_product(node, g, d, x->dtype)) {
    etrt_cuda_gemm_args a = {};
    a.dtype = x->dtype;
    a.trans_b = 1;
    a.m = d.batch * d.out_count, a.n = d.maps, a.k = d.channels;
    a.a = x->data, a.lda = d.channels;
    a.b = w->data, a.ldb = d.channels;
    a.y = y->data, a.ldy = d.maps;
    a.batch = 1;
    a.alpha = 1.0f;
    a.beta = z != NULL ? 1.0f : 0.0f;
    a.c = z != NULL ? z->data : NULL;
    a.bias = bias != NULL ? bias->data : NULL;
    a.activation = relu ? ETRT_MATMUL_ACTIVATION_RELU : ETRT_MATMUL_ACTIVATION_NONE;
    *fused = true;
    return etrt_cuda_gemm_run(node, &a, launch, launch->workspace, launch->workspace_size);
  }
  if (((const etrt_conv_params *)node->state)->channels_last) {
    ETRT_CUDA_FLOAT_SWITCH(
        x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
        etrt_conv_nhwc_direct_kernel<T>
        <<<etrt_cuda_blocks(total, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            (const T *)x->data, (const T *)w->data,
            bias != NULL ? (const T *)bias->data : (const T *)NULL, (T *)y->data, d, g));
    return etrt_cuda_check(node, "conv_nhwc_direct");
  }
  if (d.group > 1 || !etrt_cuda_gemm_dtype_ok(x->dtype)) {
    ETRT_CUDA_FLOAT_SWITCH(
        x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
        etrt_conv_direct_kernel<T>
        <<<etrt_cuda_blocks(total, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
            (const T *)x->data, (const T *)w->data,
            bias != NULL ? (const T *)bias->data : (const T *)NULL, (T *)y->data, d, g));
    return etrt_cuda_check(node, "conv_direct");
  }

  float beta = 0.0f;
  if (bias != NULL) {
    /* B [M] read as [M, 1, ...] broadcasts over Y [N, M, spatial...]. */
    etrt_tensor b = *bias;
    b.rank = y->rank - 1;
    b.dims[0] = d.maps;
    for (int32_t a = 1; a < b.rank; ++a) b.dims[a] = 1;
    ETRT_RETURN_IF_ERROR(etrt_cuda_broadcast_copy(node, &b, y, stream));
    beta = 1.0f;
  }
  int64_t rows = d.channels * d.kernel_count;
  size_t elem = etrt_dtype_size(x->dtype);
  /* Y[n] (maps x positions) = W (maps x rows) * unfolded X[n] (rows x positions). */
  etrt_cuda_gemm_args a = {};
  a.dtype = x->dtype;
  a.trans_a = a.trans_b = 0;
  a.m = d.maps, a.n = d.out_count, a.k = rows;
  a.a = w->data, a.lda = rows, a.stride_a = 0;
  a.ldb = d.out_count, a.stride_b = rows * d.out_count;
  a.ldy = d.out_count, a.stride_y = d.maps * d.out_count;
  a.alpha = 1.0f, a.beta = beta;
  if (etrt_conv_pointwise(&g)) {
    a.b = x->data;
    a.y = y->data;
    a.batch = d.batch;
    return etrt_cuda_gemm_run(node, &a, launch, launch->workspace, launch->workspace_size);
  }
  size_t per_image = etrt_conv_unfold_bytes(&d, x->dtype);
  size_t gemm_ws = ETRT_CUDA_GEMM_WORKSPACE;
  if (launch->workspace_size < gemm_ws + per_image) {
    return etrt_error(ETRT_ERROR_INTERNAL,
                      "Conv node '%s': workspace of %zu bytes, needs %zu for one image",
                      etrt_cuda_name(node), launch->workspace_size, gemm_ws + per_image);
  }
  int64_t chunk = (int64_t)((launch->workspace_size - gemm_ws) / per_image);
  if (chunk > d.batch) chunk = d.batch;
  void *col = (char *)launch->workspace + gemm_ws;
  for (int64_t first = 0; first < d.batch; first += chunk) {
    int64_t images = d.batch - first < chunk ? d.batch - first : chunk;
    int64_t count = images * rows * d.out_count;
    unsigned blocks = etrt_cuda_blocks(count, ETRT_CUDA_THREADS);
    const char *xs = (const char *)x->data + (size_t)(first * d.channels * d.in_count) * elem;
    ETRT_CUDA_FLOAT_SWITCH(x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
                           etrt_im2col_kernel<T><<<blocks, ETRT_CUDA_THREADS, 0, stream>>>(
                               (const T *)xs, (T *)col, images, d.channels, d.in_count,
                               d.kernel_count, d.out_count, g));
    ETRT_RETURN_IF_ERROR(etrt_cuda_check(node, "im2col"));
    a.b = col;
    a.y = (char *)y->data + (size_t)(first * d.maps * d.out_count) * elem;
    a.batch = images;
    ETRT_RETURN_IF_ERROR(etrt_cuda_gemm_run(node, &a, launch, launch->workspace, gemm_ws));
  }
  return ETRT_OK;
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_conv) {
  etrt_status s = ETRT_OK;
  if (etrt_conv_dnn_run(node, inputs, outputs, launch, NULL, &s)) return s;
  bool fused = false;
  return etrt_conv_gemm_path(node, inputs, outputs, launch, NULL, 0, &fused);
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_fused_conv) {
  const etrt_fused_conv_params *p = (const etrt_fused_conv_params *)node->state;
  const etrt_tensor *z = node->num_inputs > 3 && inputs[3].rank >= 0 ? &inputs[3] : NULL;
  etrt_status s = ETRT_OK;
  if (etrt_conv_dnn_run(node, inputs, outputs, launch, z, &s)) return s;
  etrt_node conv = *node;
  conv.num_inputs = node->num_inputs < 3 ? node->num_inputs : 3;
  int relu = p->activation == ETRT_CONV_ACT_RELU;
  bool fused = false;
  ETRT_RETURN_IF_ERROR(etrt_conv_gemm_path(&conv, inputs, outputs, launch, z, relu, &fused));
  int64_t count = etrt_tensor_numel(&outputs[0]);
  if (fused || count == 0 || (z == NULL && !relu)) return ETRT_OK;
  ETRT_CUDA_FLOAT_SWITCH(
      outputs[0].dtype, T, return etrt_cuda_no_kernel(node, outputs[0].dtype),
      etrt_conv_epilogue_kernel<T><<<etrt_cuda_blocks(count, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS,
                                     0, etrt_cuda_stream(launch)>>>(
          (T *)outputs[0].data, z != NULL ? (const T *)z->data : (const T *)NULL, relu, count));
  return etrt_cuda_check(node, "conv_epilogue");
}

/* The GEMM path's scratch, and at least cuBLASLt's for every float convolution: the
 * cuDNN algorithms chosen at setup fit in it (etrt_conv_dnn_setup_node). A channels-last
 * node has no im2col path (a 1x1 one is a product with cuBLASLt's scratch; without cuDNN
 * others run the direct kernel, with none), so it asks for no more than cuDNN's
 * algorithms may use, plus the room of a padded input (etrt_conv_padded_channels):
 * ResNet-50's batch-32 workspace was 147 MB of im2col room that cuDNN never touched. */
extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_conv_workspace) {
  etrt_conv_geometry g;
  etrt_conv_sizes d;
  if (etrt_conv_resolve(node, inputs, &g, &d) != ETRT_OK) return 0;
  if (!etrt_cuda_gemm_dtype_ok(inputs[0].dtype)) return 0;
  if (d.group > 1) return ETRT_CUDA_GEMM_WORKSPACE;
  if (etrt_conv_pointwise(&g)) return ETRT_CUDA_GEMM_WORKSPACE;
  size_t per_image = etrt_conv_unfold_bytes(&d, inputs[0].dtype);
  size_t images = per_image > 0 ? ETRT_CONV_UNFOLD_CAP / per_image : 1;
  if (images < 1) images = 1;
  if ((int64_t)images > d.batch) images = d.batch > 0 ? (size_t)d.batch : 1;
  size_t unfold = ETRT_CUDA_GEMM_WORKSPACE + images * per_image;
  if (!((const etrt_conv_params *)node->state)->channels_last) return unfold;
  size_t scratch = unfold < ETRT_CONV_DNN_SCRATCH ? unfold : ETRT_CONV_DNN_SCRATCH;
  int64_t padded = etrt_conv_padded_channels(node, g, d, inputs[0].dtype);
  if (padded == d.channels) return scratch;
  return etrt_conv_padded_scratch(d, inputs[0].dtype, scratch) +
         etrt_conv_padded_bytes(d, padded, inputs[0].dtype);
}

/* ---- ConvTranspose --------------------------------------------------------------- */

/* A direct kernel that gathers instead of scattering, so no two threads write one
 * output and nothing needs atomics: output position o along an axis receives input
 * position i through kernel tap k when o = i * stride - pad_begin + k * dilation. */
template <typename T>
__global__ void etrt_conv_transpose_kernel(const T *x, const T *w, const T *bias, T *y,
                                           etrt_conv_sizes d, etrt_conv_geometry g) {
  typedef typename etrt_math<T>::type M;
  int64_t cg = d.channels / d.group, mg = d.maps / d.group;
  ETRT_CUDA_LOOP(t, d.batch * d.maps * d.out_count) {
    int64_t p = t % d.out_count;
    int64_t m = (t / d.out_count) % d.maps;
    int64_t n = t / (d.out_count * d.maps);
    int64_t grp = m / mg, mm = m % mg;
    int64_t o[ETRT_CONV_MAX_SPATIAL];
    for (int32_t s = g.spatial - 1; s >= 0; --s) {
      o[s] = p % g.out[s] + g.pad_begin[s];
      p /= g.out[s];
    }
    const T *xg = x + (n * d.channels + grp * cg) * d.in_count;
    /* W is [C, M / group, kernel...]: channel c of the group, map mm */
    const T *wg = w + (grp * cg * mg + mm) * d.kernel_count;
    M acc = M(0);
    for (int64_t k = 0; k < d.kernel_count; ++k) {
      int64_t kr = k, at = 0, scale = 1;
      int hit = 1;
      for (int32_t s = g.spatial - 1; s >= 0 && hit; --s) {
        int64_t shifted = o[s] - (kr % g.kernel[s]) * g.dilation[s];
        kr /= g.kernel[s];
        if (shifted < 0 || shifted % g.stride[s] != 0) {
          hit = 0;
        } else {
          int64_t i = shifted / g.stride[s];
          if (i >= g.in[s]) hit = 0;
          at += i * scale;
          scale *= g.in[s];
        }
      }
      if (!hit) continue;
      for (int64_t c = 0; c < cg; ++c) {
        acc += etrt_cvt<M>(xg[c * d.in_count + at]) * etrt_cvt<M>(wg[c * mg * d.kernel_count + k]);
      }
    }
    if (bias != NULL) acc += etrt_cvt<M>(bias[m]);
    y[t] = etrt_cvt<T>(acc);
  }
}

extern "C" ETRT_CUDA_RUN(etrt_cuda_conv_transpose) {
  const etrt_conv_params *params = (const etrt_conv_params *)node->state;
  const etrt_tensor *x = &inputs[0], *w = &inputs[1];
  const etrt_tensor *bias = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL;
  etrt_conv_geometry g;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_transpose(node, params, x, w, &g));
  etrt_conv_sizes d;
  d.batch = x->dims[0];
  d.channels = x->dims[1];
  d.group = params->group;
  d.maps = w->dims[1] * params->group;
  d.in_count = etrt_conv_geometry_in_count(&g);
  d.out_count = etrt_conv_geometry_out_count(&g);
  d.kernel_count = etrt_conv_geometry_kernel_count(&g);
  if (d.group < 1 || d.channels % d.group != 0 || w->dims[0] != d.channels) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "ConvTranspose node '%s': %lld channels, W[0] %lld, group %lld",
                      etrt_cuda_name(node), (long long)d.channels, (long long)w->dims[0],
                      (long long)d.group);
  }
  int64_t total = d.batch * d.maps * d.out_count;
  if (total == 0) return ETRT_OK;
  cudaStream_t stream = etrt_cuda_stream(launch);
  ETRT_CUDA_FLOAT_SWITCH(
      x->dtype, T, return etrt_cuda_no_kernel(node, x->dtype),
      etrt_conv_transpose_kernel<T>
      <<<etrt_cuda_blocks(total, ETRT_CUDA_THREADS), ETRT_CUDA_THREADS, 0, stream>>>(
          (const T *)x->data, (const T *)w->data,
          bias != NULL ? (const T *)bias->data : (const T *)NULL, (T *)outputs[0].data, d, g));
  return etrt_cuda_check(node, "conv_transpose");
}

/* The CUDA rows of the family (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_row etrt_cuda_rows_conv[] = {
    {"Conv", etrt_cuda_conv, etrt_cuda_conv_workspace},
    {"ConvTranspose", etrt_cuda_conv_transpose, NULL},
    {"EtrtFusedConv", etrt_cuda_fused_conv, etrt_cuda_conv_workspace},
    {NULL, NULL, NULL},
};

/* The rows with per-context state (ops/cuda/table.c). */
extern "C" const etrt_op_cuda_setup_row etrt_cuda_setups_conv[] = {
    {"Conv", etrt_conv_dnn_setup, etrt_conv_dnn_release},
    {"EtrtFusedConv", etrt_fused_conv_dnn_setup, etrt_conv_dnn_release},
    {NULL, NULL, NULL},
};
