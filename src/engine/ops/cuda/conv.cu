/* Conv on the GPU. The window geometry (pads, auto_pad, strides, dilations) comes
 * from the shared etrt_conv_geometry_conv. Ungrouped convolutions are matrix
 * products through cuBLASLt: a pointwise one (1x1, stride 1, no pad) reads X as it
 * is; others first unfold a chunk of images into the workspace (im2col) as
 * [image][C * kernel][output positions]. Grouped convolutions (depthwise above all,
 * where a product per group would be tiny) run a direct kernel. The bias is copied
 * into Y first and the product adds to it (beta = 1). */
#include "engine/ops/cuda/gemm.h"

extern "C" {
#include "engine/ops/conv.h"
}

/* Most bytes of unfolded images the workspace holds; larger batches go in chunks. */
#define ETRT_CONV_UNFOLD_CAP ((size_t)128 << 20)

typedef struct etrt_conv_sizes {
  int64_t batch, channels, maps, group, in_count, out_count, kernel_count;
} etrt_conv_sizes;

static etrt_status etrt_conv_resolve(const etrt_node *node, const etrt_tensor *inputs,
                                     etrt_conv_geometry *g, etrt_conv_sizes *d) {
  const etrt_conv_params *params = (const etrt_conv_params *)node->state;
  ETRT_RETURN_IF_ERROR(etrt_conv_geometry_conv(node, params, &inputs[0], &inputs[1], g));
  d->batch = inputs[0].dims[0];
  d->channels = inputs[0].dims[1];
  d->maps = inputs[1].dims[0];
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

extern "C" ETRT_CUDA_RUN(etrt_cuda_conv) {
  etrt_conv_geometry g;
  etrt_conv_sizes d;
  ETRT_RETURN_IF_ERROR(etrt_conv_resolve(node, inputs, &g, &d));
  const etrt_tensor *x = &inputs[0], *w = &inputs[1];
  const etrt_tensor *bias = node->num_inputs > 2 && inputs[2].rank >= 0 ? &inputs[2] : NULL;
  etrt_tensor *y = &outputs[0];
  cudaStream_t stream = etrt_cuda_stream(launch);
  int64_t total = d.batch * d.maps * d.out_count;
  if (total == 0) return ETRT_OK;

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
  etrt_cuda_gemm_args a;
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

extern "C" ETRT_CUDA_WORKSPACE(etrt_cuda_conv_workspace) {
  etrt_conv_geometry g;
  etrt_conv_sizes d;
  if (etrt_conv_resolve(node, inputs, &g, &d) != ETRT_OK) return 0;
  if (d.group > 1 || !etrt_cuda_gemm_dtype_ok(inputs[0].dtype)) return 0;
  if (etrt_conv_pointwise(&g)) return ETRT_CUDA_GEMM_WORKSPACE;
  size_t per_image = etrt_conv_unfold_bytes(&d, inputs[0].dtype);
  size_t images = per_image > 0 ? ETRT_CONV_UNFOLD_CAP / per_image : 1;
  if (images < 1) images = 1;
  if ((int64_t)images > d.batch) images = d.batch > 0 ? (size_t)d.batch : 1;
  return ETRT_CUDA_GEMM_WORKSPACE + images * per_image;
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
    {NULL, NULL, NULL},
};
