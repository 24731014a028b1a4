/* Host helpers shared by the CUDA kernel files (see cuda_kernel.h). */
#include "engine/ops/cuda/cuda_kernel.h"

extern "C" etrt_status etrt_cuda_check(const etrt_node *node, const char *kernel) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return ETRT_OK;
  return etrt_error(ETRT_ERROR_DEVICE, "%s node '%s': CUDA kernel %s failed: %s", node->op_type,
                    etrt_cuda_name(node), kernel, cudaGetErrorString(err));
}

extern "C" etrt_status etrt_cuda_no_kernel(const etrt_node *node, etrt_dtype dtype) {
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s node '%s': no CUDA kernel for %s", node->op_type,
                    etrt_cuda_name(node), etrt_dtype_name(dtype));
}

template <typename T, int V, typename I>
__global__ void etrt_plan_copy_kernel(const T *in, T *out, I runs, etrt_broadcast_iter it) {
  const int64_t step = it.strides[0][it.rank - 1];
  ETRT_CUDA_LOOP_AS(I, r, runs) {
    I i = r * (I)V, off[1];
    etrt_cuda_offsets<1, I>(it, i, off);
    T v[V];
    etrt_cuda_load_run<V>(in, off[0], step, v);
    etrt_cuda_store_run<V>(out, i, v);
  }
}

template <typename T>
static void etrt_plan_copy_start(const T *in, T *out, const etrt_broadcast_iter &it,
                                 cudaStream_t stream) {
  const void *bases[1] = {in};
  const size_t sizes[1] = {sizeof(T)};
  int runs_ok =
      etrt_broadcast_iter_runs_of(&it, etrt_cuda_width<T>(), bases, sizes, out, sizeof(T));
#define ETRT_PLAN_COPY_KERNEL(V, I) etrt_plan_copy_kernel<T, V, I>
  ETRT_CUDA_WALK_LAUNCH(it, T, runs_ok, stream, ETRT_PLAN_COPY_KERNEL, in, out);
#undef ETRT_PLAN_COPY_KERNEL
}

etrt_status etrt_cuda_plan_copy(const etrt_node *node, const etrt_broadcast_iter &it,
                                const void *in, void *out, size_t elem_size, cudaStream_t stream) {
  if (it.numel == 0) return ETRT_OK;
  ETRT_CUDA_BYTES_SWITCH(
      elem_size, T,
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s: no CUDA copy for %zu-byte elements",
                        node->op_type, elem_size),
      etrt_plan_copy_start<T>((const T *)in, (T *)out, it, stream));
  return etrt_cuda_check(node, "copy");
}

etrt_status etrt_cuda_broadcast_copy(const etrt_node *node, const etrt_tensor *in, etrt_tensor *out,
                                     cudaStream_t stream) {
  int64_t n = etrt_tensor_numel(out);
  if (n == 0) return ETRT_OK;
  etrt_broadcast_iter it;
  const etrt_tensor *ins[1] = {in};
  ETRT_RETURN_IF_ERROR(etrt_broadcast_iter_init(&it, out, 1, ins));
  return etrt_cuda_plan_copy(node, it, in->data, out->data, etrt_dtype_size(out->dtype), stream);
}

/* The chunk stays in the kernel's argument space (__grid_constant__): no per-thread
 * copy of 16 KiB. */
__global__ void etrt_cuda_upload_kernel(uint8_t *dst,
                                        const __grid_constant__ etrt_cuda_upload_chunk chunk,
                                        uint32_t size) {
  for (uint32_t i = threadIdx.x; i < size; i += blockDim.x) dst[i] = chunk.bytes[i];
}

static void etrt_cuda_uploader_flush(etrt_cuda_uploader *u) {
  if (u->used == 0) return;
  if (u->status == ETRT_OK) {
    etrt_cuda_upload_kernel<<<1, ETRT_CUDA_THREADS, 0, u->stream>>>(u->dst, u->chunk,
                                                                    (uint32_t)u->used);
    u->status = etrt_cuda_check(u->node, "upload");
  }
  u->dst += u->used;
  u->used = 0;
}

void etrt_cuda_uploader_init(etrt_cuda_uploader *u, const etrt_node *node, void *dst,
                             cudaStream_t stream) {
  u->node = node;
  u->stream = stream;
  u->dst = (uint8_t *)dst;
  u->used = 0;
  u->status = ETRT_OK;
}

void etrt_cuda_uploader_put(etrt_cuda_uploader *u, const void *bytes, size_t size) {
  if (size > ETRT_CUDA_UPLOAD_BYTES) {
    if (u->status == ETRT_OK)
      u->status = etrt_error(ETRT_ERROR_INTERNAL, "%s node '%s': a table entry of %zu bytes",
                             u->node->op_type, etrt_cuda_name(u->node), size);
    return;
  }
  if (u->used + size > ETRT_CUDA_UPLOAD_BYTES) etrt_cuda_uploader_flush(u);
  memcpy(u->chunk.bytes + u->used, bytes, size);
  u->used += size;
}

etrt_status etrt_cuda_uploader_finish(etrt_cuda_uploader *u) {
  etrt_cuda_uploader_flush(u);
  return u->status;
}
