/* A channels-last half-type convolution with its bias, residual and Relu fused into one
 * cuDNN kernel through cuDNN's graph (backend) API; conv.cu's setup builds it for a node
 * of its `split` path and keeps it only where it beats that path
 * (cudnnConvolutionForward, then etrt_conv_bias_epilogue_kernel). Included by .cu files
 * and by the unit test of the graph's descriptors. */
#ifndef ETRT_ENGINE_OPS_CUDA_CONV_GRAPH_H
#define ETRT_ENGINE_OPS_CUDA_CONV_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ops/cuda/cuda_libraries.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "engine/op.h"

/* One 2-D, one-group convolution as cuDNN sees it: dims in NCHW order (X [N, C, H, W],
 * W [M, C, kH, kW], Y and Z [N, M, OH, OW]) of tensors laid out channels innermost, and
 * symmetric pads. */
typedef struct etrt_conv_graph_shape {
  cudnnDataType_t type; /* CUDNN_DATA_HALF or CUDNN_DATA_BFLOAT16 */
  int64_t x[4], w[4], y[4];
  int64_t pads[2], strides[2], dilations[2];
  int bias, residual, relu; /* which of B, Z and Relu the graph applies */
} etrt_conv_graph_shape;

/* Device buffers of a shape's tensors (bias and z NULL where the shape has none), and
 * scratch. */
typedef struct etrt_conv_graph_buffers {
  const void *x, *w, *bias, *z;
  void *y;
  void *workspace;
  size_t workspace_size;
} etrt_conv_graph_buffers;

/* Launches the unfused path on `b` on the legacy default stream (the stream the cuDNN
 * handle is set to at setup); false when a launch failed. */
typedef bool (*etrt_conv_graph_unfused_fn)(void *user, const etrt_conv_graph_buffers *b);

typedef struct etrt_conv_graph etrt_conv_graph;

/* Builds the operation graph of `shape`, finalizes execution plans for up to four of
 * cuDNN's engine configurations (heuristics mode A, else FALLBACK) whose workspace fits
 * `workspace_limit`, and times each against `unfused` (which needs `unfused_workspace`
 * bytes of scratch) on scratch buffers of the shape; context creation only (it allocates
 * and synchronises). NULL, with the reason logged at debug level and no error set, where
 * the graph path is off (ETRT_CUDNN_GRAPH=0, a cuDNN without the backend API), cuDNN
 * takes no plan, or none is faster (ETRT_CUDNN_GRAPH=1 keeps the fastest plan anyway,
 * so that tests run the fused path on any shape). */
etrt_conv_graph *etrt_conv_graph_create(const etrt_cudnn_api *api, cudnnHandle_t handle,
                                        const etrt_node *node, const etrt_conv_graph_shape *shape,
                                        size_t workspace_limit, size_t unfused_workspace,
                                        etrt_conv_graph_unfused_fn unfused, void *user);

/* Whether `shape` is the one the graph was built for. */
bool etrt_conv_graph_matches(const etrt_conv_graph *graph, const etrt_conv_graph_shape *shape);

/* Scratch bytes the kept plan takes. */
size_t etrt_conv_graph_workspace(const etrt_conv_graph *graph);

/* Queues the fused convolution on the handle's stream. False (nothing queued, *status
 * untouched) where the plan cannot take this launch (a pointer not 16-byte aligned,
 * less scratch than the plan takes, cuDNN refusing the variant pack, or refusing the
 * plan's launch, after which the graph is not tried again): the caller runs the unfused
 * path. True with *status set otherwise. */
bool etrt_conv_graph_run(etrt_conv_graph *graph, const etrt_node *node, cudnnHandle_t handle,
                         const etrt_conv_graph_buffers *b, etrt_status *status);

void etrt_conv_graph_destroy(etrt_conv_graph *graph);

/* Builds and finalizes the operation graph of `shape` alone, with no engine and no
 * device (cuDNN 9 finalizes the descriptors and the operation graph without a GPU; the
 * handle may be NULL). NULL where every descriptor finalized, else the call that failed
 * with its status in *status. For tests. */
const char *etrt_conv_graph_check(const etrt_cudnn_api *api, cudnnHandle_t handle,
                                  const etrt_conv_graph_shape *shape, cudnnStatus_t *status);

#ifdef __cplusplus
}
#endif

#endif
