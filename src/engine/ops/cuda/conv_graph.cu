/* Channels-last convolutions fused through cuDNN's graph (backend) API (conv_graph.h).
 *
 * The operation graph, with every tensor channels innermost and 16-byte aligned:
 *
 *   X [N, C, H, W], W [M, C, kH, kW] -> conv_fprop (float) -> T1 (virtual, float)
 *     -> add B [1, M, 1, 1] -> T2 (virtual, float) -> add Z [N, M, OH, OW] -> T3 (virtual,
 *     float) -> Relu -> Y [N, M, OH, OW]
 *
 * where a missing B, Z or Relu drops its step and the last step writes Y (half type).
 * On Hopper cuDNN's runtime-fusion engines compile one tensor-core kernel for it when
 * the plan is finalized (at context creation), so a launch is one kernel with no pass of
 * its own over Y. Every descriptor the kept plan was built from lives as long as it.
 *
 * A launch names its data through a variant pack (unique ids -> device pointers). The
 * CUDA executor captures a run's launches into a CUDA graph once per set of addresses
 * and replays it, so a launch function runs only on the first run and when addresses
 * change: the node keeps one variant pack, made at its first launch, and points it at
 * new buffers only when they differ from the last launch's. cuDNN refuses attributes on
 * a finalized descriptor (cuDNN 9.19 answers CUDNN_STATUS_BAD_PARAM), so that means a
 * fresh pack: a few host calls inside cuDNN, allocating, once per re-capture, none in
 * the steady state, which replays the graph. cuDNN documents a native CUDA-graph API beside
 * cudnnBackendExecute (cudnnBackendPopulateCudaGraph) but no rule against capturing
 * cudnnBackendExecute on a stream, which its frontend and PyTorch's cuDNN convolutions
 * do; a capture the runtime refuses turns the executor's graphs off (executor_cuda.c). */
#include <stdlib.h>
#include <string.h>

#include "engine/ops/cuda/conv_graph.h"
#include "engine/ops/cuda/cuda_kernel.h"

extern "C" {
#include "base/log.h"
}

/* Configurations asked of the heuristics, plans timed among them, and the timing: the
 * median of ETRT_CONV_GRAPH_RUNS launches after ETRT_CONV_GRAPH_WARMUP. */
#define ETRT_CONV_GRAPH_CONFIGS 8
#define ETRT_CONV_GRAPH_PLANS 4
#define ETRT_CONV_GRAPH_WARMUP 3
#define ETRT_CONV_GRAPH_RUNS 10
#define ETRT_CONV_GRAPH_HELD 32
#define ETRT_CONV_GRAPH_ALIGNMENT 16

enum {
  ETRT_CONV_GRAPH_UID_X = 1,
  ETRT_CONV_GRAPH_UID_W,
  ETRT_CONV_GRAPH_UID_B,
  ETRT_CONV_GRAPH_UID_Z,
  ETRT_CONV_GRAPH_UID_Y,
  ETRT_CONV_GRAPH_UID_T1 = 101,
  ETRT_CONV_GRAPH_UID_T2,
  ETRT_CONV_GRAPH_UID_T3,
};

struct etrt_conv_graph {
  const etrt_cudnn_api *api;
  etrt_conv_graph_shape shape;
  /* the graph's descriptors, the heuristics and the kept plan's configuration */
  cudnnBackendDescriptor_t held[ETRT_CONV_GRAPH_HELD];
  int held_count;
  cudnnBackendDescriptor_t plan;
  size_t workspace;
  /* the variant pack and what it points at */
  cudnnBackendDescriptor_t pack;
  int pack_count;
  void *pointers[5];
  void *pack_workspace;
  int refused; /* cuDNN refused a launch: the unfused path runs the node from then on */
};

/* Building: the first call that failed is kept and every later call is skipped. */
typedef struct etrt_conv_graph_builder {
  etrt_conv_graph *g;
  const char *failed;
  cudnnStatus_t status;
} etrt_conv_graph_builder;

static void etrt_conv_graph_fail(etrt_conv_graph_builder *b, const char *call, cudnnStatus_t st) {
  if (b->failed == NULL) {
    b->failed = call;
    b->status = st;
  }
}

static cudnnBackendDescriptor_t etrt_conv_graph_make(etrt_conv_graph_builder *b,
                                                     cudnnBackendDescriptorType_t type) {
  if (b->failed != NULL) return NULL;
  if (b->g->held_count == ETRT_CONV_GRAPH_HELD) {
    etrt_conv_graph_fail(b, "holding its descriptors", CUDNN_STATUS_INTERNAL_ERROR);
    return NULL;
  }
  cudnnBackendDescriptor_t d = NULL;
  cudnnStatus_t st = b->g->api->backend_create(type, &d);
  if (st != CUDNN_STATUS_SUCCESS) {
    etrt_conv_graph_fail(b, "cudnnBackendCreateDescriptor", st);
    return NULL;
  }
  b->g->held[b->g->held_count++] = d;
  return d;
}

static void etrt_conv_graph_set(etrt_conv_graph_builder *b, cudnnBackendDescriptor_t d,
                                cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                int64_t count, const void *values, const char *what) {
  if (b->failed != NULL) return;
  cudnnStatus_t st = b->g->api->backend_set(d, name, type, count, values);
  if (st != CUDNN_STATUS_SUCCESS) etrt_conv_graph_fail(b, what, st);
}

#define ETRT_CONV_GRAPH_SET(b, d, name, type, count, values) \
  etrt_conv_graph_set(b, d, name, type, count, values, #name)

static void etrt_conv_graph_finalize(etrt_conv_graph_builder *b, cudnnBackendDescriptor_t d,
                                     const char *what) {
  if (b->failed != NULL) return;
  cudnnStatus_t st = b->g->api->backend_finalize(d);
  if (st != CUDNN_STATUS_SUCCESS) etrt_conv_graph_fail(b, what, st);
}

/* A tensor of NCHW-order `dims` laid out channels innermost (NHWC). */
static cudnnBackendDescriptor_t etrt_conv_graph_tensor(etrt_conv_graph_builder *b, int64_t uid,
                                                       const int64_t dims[4], cudnnDataType_t type,
                                                       bool is_virtual) {
  int64_t strides[4] = {dims[1] * dims[2] * dims[3], 1, dims[3] * dims[1], dims[1]};
  int64_t alignment = ETRT_CONV_GRAPH_ALIGNMENT;
  cudnnBackendDescriptor_t d = etrt_conv_graph_make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  ETRT_CONV_GRAPH_SET(b, d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  ETRT_CONV_GRAPH_SET(b, d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  ETRT_CONV_GRAPH_SET(b, d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  ETRT_CONV_GRAPH_SET(b, d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  ETRT_CONV_GRAPH_SET(b, d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  ETRT_CONV_GRAPH_SET(b, d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  etrt_conv_graph_finalize(b, d, "cudnnBackendFinalize (tensor)");
  return d;
}

/* y = mode(x, operand) (operand NULL for a unary mode), computed in float. */
static cudnnBackendDescriptor_t etrt_conv_graph_pointwise(etrt_conv_graph_builder *b,
                                                          cudnnPointwiseMode_t mode,
                                                          cudnnBackendDescriptor_t x,
                                                          cudnnBackendDescriptor_t operand,
                                                          cudnnBackendDescriptor_t y) {
  cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t pw = etrt_conv_graph_make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  ETRT_CONV_GRAPH_SET(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  ETRT_CONV_GRAPH_SET(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
  etrt_conv_graph_finalize(b, pw, "cudnnBackendFinalize (pointwise)");
  cudnnBackendDescriptor_t op =
      etrt_conv_graph_make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  ETRT_CONV_GRAPH_SET(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
  ETRT_CONV_GRAPH_SET(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &x);
  if (operand != NULL)
    ETRT_CONV_GRAPH_SET(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                        1, &operand);
  ETRT_CONV_GRAPH_SET(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &y);
  etrt_conv_graph_finalize(b, op, "cudnnBackendFinalize (pointwise operation)");
  return op;
}

/* One step of the epilogue, *current = mode(*current, operand): into y where it is the
 * last of *steps_left, else into a virtual float tensor `uid`. */
static cudnnBackendDescriptor_t etrt_conv_graph_step(
    etrt_conv_graph_builder *b, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t *current,
    cudnnBackendDescriptor_t operand, int *steps_left, int64_t uid, cudnnBackendDescriptor_t y) {
  cudnnBackendDescriptor_t out =
      --*steps_left > 0 ? etrt_conv_graph_tensor(b, uid, b->g->shape.y, CUDNN_DATA_FLOAT, 1) : y;
  cudnnBackendDescriptor_t op = etrt_conv_graph_pointwise(b, mode, *current, operand, out);
  *current = out;
  return op;
}

/* The finalized operation graph of g->shape, NULL where building failed. */
static cudnnBackendDescriptor_t etrt_conv_graph_operations(etrt_conv_graph_builder *b,
                                                           cudnnHandle_t handle) {
  const etrt_conv_graph_shape *s = &b->g->shape;
  const int64_t bias_dims[4] = {1, s->y[1], 1, 1};
  cudnnBackendDescriptor_t x = etrt_conv_graph_tensor(b, ETRT_CONV_GRAPH_UID_X, s->x, s->type, 0);
  cudnnBackendDescriptor_t w = etrt_conv_graph_tensor(b, ETRT_CONV_GRAPH_UID_W, s->w, s->type, 0);
  cudnnBackendDescriptor_t y = etrt_conv_graph_tensor(b, ETRT_CONV_GRAPH_UID_Y, s->y, s->type, 0);
  int steps = (s->bias ? 1 : 0) + (s->residual ? 1 : 0) + (s->relu ? 1 : 0);
  /* the convolution's own output: virtual where a step follows */
  cudnnBackendDescriptor_t current =
      steps > 0 ? etrt_conv_graph_tensor(b, ETRT_CONV_GRAPH_UID_T1, s->y, CUDNN_DATA_FLOAT, 1) : y;

  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t spatial = 2;
  cudnnBackendDescriptor_t conv = etrt_conv_graph_make(b, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
                      &mode);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, s->dilations);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2,
                      s->strides);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, s->pads);
  ETRT_CONV_GRAPH_SET(b, conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, s->pads);
  etrt_conv_graph_finalize(b, conv, "cudnnBackendFinalize (convolution)");

  float alpha = 1.0f, beta = 0.0f;
  cudnnBackendDescriptor_t ops[4];
  int op_count = 0;
  ops[op_count] = etrt_conv_graph_make(b, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  cudnnBackendDescriptor_t fprop = ops[op_count++];
  ETRT_CONV_GRAPH_SET(b, fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  ETRT_CONV_GRAPH_SET(b, fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
  ETRT_CONV_GRAPH_SET(b, fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &current);
  ETRT_CONV_GRAPH_SET(b, fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
  ETRT_CONV_GRAPH_SET(b, fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1,
                      &alpha);
  ETRT_CONV_GRAPH_SET(b, fprop, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
                      &beta);
  etrt_conv_graph_finalize(b, fprop, "cudnnBackendFinalize (convolution operation)");

  if (s->bias) {
    cudnnBackendDescriptor_t bias =
        etrt_conv_graph_tensor(b, ETRT_CONV_GRAPH_UID_B, bias_dims, s->type, 0);
    ops[op_count++] = etrt_conv_graph_step(b, CUDNN_POINTWISE_ADD, &current, bias, &steps,
                                           ETRT_CONV_GRAPH_UID_T2, y);
  }
  if (s->residual) {
    cudnnBackendDescriptor_t z = etrt_conv_graph_tensor(b, ETRT_CONV_GRAPH_UID_Z, s->y, s->type, 0);
    ops[op_count++] = etrt_conv_graph_step(b, CUDNN_POINTWISE_ADD, &current, z, &steps,
                                           ETRT_CONV_GRAPH_UID_T3, y);
  }
  if (s->relu) /* the last step: it writes y */
    ops[op_count++] = etrt_conv_graph_step(b, CUDNN_POINTWISE_RELU_FWD, &current, NULL, &steps,
                                           ETRT_CONV_GRAPH_UID_Y, y);

  cudnnBackendDescriptor_t graph = etrt_conv_graph_make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  ETRT_CONV_GRAPH_SET(b, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                      op_count, ops);
  /* Deprecated in cuDNN 9 (kept for the versions that still need it): a cuDNN that no
   * longer takes it fails here harmlessly, and the finalize says whether it was needed. */
  if (b->failed == NULL)
    (void)b->g->api->backend_set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                 &handle);
  etrt_conv_graph_finalize(b, graph, "cudnnBackendFinalize (operation graph)");
  return b->failed == NULL ? graph : NULL;
}

/* The engine's global index behind an engine configuration, -1 where cuDNN does not say. */
static int64_t etrt_conv_graph_engine_index(const etrt_cudnn_api *api,
                                            cudnnBackendDescriptor_t config) {
  cudnnBackendDescriptor_t engine = NULL;
  int64_t index = -1, count = 0;
  if (api->backend_create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS)
    return -1;
  if (api->backend_get(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                       &count, &engine) != CUDNN_STATUS_SUCCESS ||
      api->backend_get(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count,
                       &index) != CUDNN_STATUS_SUCCESS)
    index = -1;
  api->backend_destroy(engine);
  return index;
}

/* Points g->pack at `b`'s buffers unless it already does. cuDNN refuses attributes on
 * a finalized descriptor (cuDNN 9.19: CUDNN_STATUS_BAD_PARAM), so other pointers take a
 * fresh pack. */
static cudnnStatus_t etrt_conv_graph_bind(etrt_conv_graph *g, const etrt_conv_graph_buffers *b) {
  const etrt_cudnn_api *api = g->api;
  void *pointers[5];
  int64_t uids[5];
  int count = 0;
  pointers[count] = (void *)b->x;
  uids[count++] = ETRT_CONV_GRAPH_UID_X;
  pointers[count] = (void *)b->w;
  uids[count++] = ETRT_CONV_GRAPH_UID_W;
  if (g->shape.bias) {
    pointers[count] = (void *)b->bias;
    uids[count++] = ETRT_CONV_GRAPH_UID_B;
  }
  if (g->shape.residual) {
    pointers[count] = (void *)b->z;
    uids[count++] = ETRT_CONV_GRAPH_UID_Z;
  }
  pointers[count] = b->y;
  uids[count++] = ETRT_CONV_GRAPH_UID_Y;
  void *workspace = b->workspace;
  if (g->pack != NULL && g->pack_count == count && g->pack_workspace == workspace &&
      memcmp(g->pointers, pointers, (size_t)count * sizeof pointers[0]) == 0)
    return CUDNN_STATUS_SUCCESS;
  if (g->pack != NULL) api->backend_destroy(g->pack);
  g->pack = NULL;
  g->pack_count = 0;
  cudnnBackendDescriptor_t pack = NULL;
  cudnnStatus_t st = api->backend_create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  st = api->backend_set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count, uids);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->backend_set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, count,
                          pointers);
  if (st == CUDNN_STATUS_SUCCESS)
    st = api->backend_set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                          &workspace);
  if (st == CUDNN_STATUS_SUCCESS) st = api->backend_finalize(pack);
  if (st != CUDNN_STATUS_SUCCESS) {
    api->backend_destroy(pack);
    return st;
  }
  g->pack = pack;
  memcpy(g->pointers, pointers, (size_t)count * sizeof pointers[0]);
  g->pack_count = count;
  g->pack_workspace = workspace;
  return CUDNN_STATUS_SUCCESS;
}

static int etrt_conv_graph_float_compare(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* Median microseconds of `plan` (bound to `b` through g->pack) or, with plan NULL, of
 * the unfused path, on the legacy default stream; -1 where a launch failed. */
static float etrt_conv_graph_time(etrt_conv_graph *g, cudnnHandle_t handle,
                                  cudnnBackendDescriptor_t plan, etrt_conv_graph_unfused_fn unfused,
                                  void *user, const etrt_conv_graph_buffers *b, cudaEvent_t start,
                                  cudaEvent_t stop) {
  float runs[ETRT_CONV_GRAPH_RUNS];
  bool ok = true;
  for (int r = 0; r < ETRT_CONV_GRAPH_WARMUP + ETRT_CONV_GRAPH_RUNS && ok; ++r) {
    bool timed = r >= ETRT_CONV_GRAPH_WARMUP;
    if (timed) ok = cudaEventRecord(start, NULL) == cudaSuccess;
    if (ok)
      ok = plan != NULL ? g->api->backend_execute(handle, plan, g->pack) == CUDNN_STATUS_SUCCESS
                        : unfused(user, b);
    if (ok && timed)
      ok = cudaEventRecord(stop, NULL) == cudaSuccess &&
           cudaEventSynchronize(stop) == cudaSuccess &&
           cudaEventElapsedTime(&runs[r - ETRT_CONV_GRAPH_WARMUP], start, stop) == cudaSuccess;
  }
  if (!ok) {
    (void)cudaGetLastError();
    return -1.0f;
  }
  qsort(runs, ETRT_CONV_GRAPH_RUNS, sizeof runs[0], etrt_conv_graph_float_compare);
  return runs[ETRT_CONV_GRAPH_RUNS / 2] * 1000.0f;
}

void etrt_conv_graph_destroy(etrt_conv_graph *g) {
  if (g == NULL) return;
  const etrt_cudnn_api *api = g->api;
  if (g->pack != NULL) api->backend_destroy(g->pack);
  if (g->plan != NULL) api->backend_destroy(g->plan);
  /* users before what they use: operations after the graph, tensors after operations */
  for (int i = g->held_count - 1; i >= 0; --i) api->backend_destroy(g->held[i]);
  free(g);
}

/* Execution plans of up to ETRT_CONV_GRAPH_PLANS of the heuristics' configurations
 * (mode A, else FALLBACK) whose workspace fits `limit`, into plans/workspaces/engines;
 * returns how many. Configurations cuDNN cannot finalize are passed over. */
static int etrt_conv_graph_plans(etrt_conv_graph *g, etrt_conv_graph_builder *b,
                                 cudnnHandle_t handle, cudnnBackendDescriptor_t graph, size_t limit,
                                 cudnnBackendDescriptor_t *plans, size_t *workspaces,
                                 int64_t *engines) {
  const etrt_cudnn_api *api = g->api;
  const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
  int found = 0;
  for (int m = 0; m < 2 && found == 0 && b->failed == NULL; ++m) {
    cudnnBackendDescriptor_t heur = etrt_conv_graph_make(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    ETRT_CONV_GRAPH_SET(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    ETRT_CONV_GRAPH_SET(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[m]);
    if (b->failed != NULL) return 0;
    if (api->backend_finalize(heur) != CUDNN_STATUS_SUCCESS) continue;
    cudnnBackendDescriptor_t configs[ETRT_CONV_GRAPH_CONFIGS];
    int made = 0;
    for (; made < ETRT_CONV_GRAPH_CONFIGS; ++made)
      if (api->backend_create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &configs[made]) !=
          CUDNN_STATUS_SUCCESS)
        break;
    /* `listed` is how many configurations the heuristics have; cuDNN fills the first
     * min(listed, made) of `configs` */
    int64_t listed = 0;
    if (made == 0 ||
        api->backend_get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                         &listed, configs) != CUDNN_STATUS_SUCCESS)
      listed = 0;
    int filled = listed < made ? (int)listed : made;
    for (int i = 0; i < filled && found < ETRT_CONV_GRAPH_PLANS; ++i) {
      cudnnBackendDescriptor_t plan = NULL;
      if (api->backend_create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
          CUDNN_STATUS_SUCCESS)
        break;
      /* deprecated, as the operation graph's handle */
      (void)api->backend_set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      int64_t bytes = -1, count = 0;
      bool kept =
          api->backend_set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]) == CUDNN_STATUS_SUCCESS &&
          api->backend_finalize(plan) == CUDNN_STATUS_SUCCESS &&
          api->backend_get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                           &count, &bytes) == CUDNN_STATUS_SUCCESS &&
          bytes >= 0 && (uint64_t)bytes <= limit && g->held_count < ETRT_CONV_GRAPH_HELD;
      if (!kept) {
        api->backend_destroy(plan);
        continue;
      }
      plans[found] = plan;
      workspaces[found] = (size_t)bytes;
      engines[found] = etrt_conv_graph_engine_index(api, configs[i]);
      /* the configuration lives as long as the plan */
      g->held[g->held_count++] = configs[i];
      configs[i] = NULL;
      ++found;
    }
    for (int i = 0; i < made; ++i)
      if (configs[i] != NULL) api->backend_destroy(configs[i]);
  }
  return found;
}

etrt_conv_graph *etrt_conv_graph_create(const etrt_cudnn_api *api, cudnnHandle_t handle,
                                        const etrt_node *node, const etrt_conv_graph_shape *shape,
                                        size_t workspace_limit, size_t unfused_workspace,
                                        etrt_conv_graph_unfused_fn unfused, void *user) {
  const char *env = getenv("ETRT_CUDNN_GRAPH");
  if (env != NULL && strcmp(env, "0") == 0) return NULL;
  if (api->backend_create == NULL) {
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': no cuDNN graph: this cuDNN lacks the backend API",
             node->op_type, etrt_cuda_name(node));
    return NULL;
  }
  if ((shape->type != CUDNN_DATA_HALF && shape->type != CUDNN_DATA_BFLOAT16) ||
      !(shape->bias || shape->residual || shape->relu))
    return NULL;
  etrt_conv_graph *g = (etrt_conv_graph *)calloc(1, sizeof *g);
  if (g == NULL) return NULL;
  g->api = api;
  g->shape = *shape;
  etrt_conv_graph_builder b = {g, NULL, CUDNN_STATUS_SUCCESS};
  cudnnBackendDescriptor_t graph = etrt_conv_graph_operations(&b, handle);
  cudnnBackendDescriptor_t plans[ETRT_CONV_GRAPH_PLANS];
  size_t workspaces[ETRT_CONV_GRAPH_PLANS];
  int64_t engines[ETRT_CONV_GRAPH_PLANS];
  int count = graph != NULL ? etrt_conv_graph_plans(g, &b, handle, graph, workspace_limit, plans,
                                                    workspaces, engines)
                            : 0;
  if (b.failed != NULL || count == 0) {
    if (b.failed != NULL)
      etrt_log(ETRT_LOG_DEBUG, "%s node '%s': no cuDNN graph: %s failed: %s (%d)", node->op_type,
               etrt_cuda_name(node), b.failed, api->error_string(b.status), (int)b.status);
    else
      etrt_log(ETRT_LOG_DEBUG,
               "%s node '%s': no cuDNN graph: no engine takes it within %zu bytes of scratch",
               node->op_type, etrt_cuda_name(node), workspace_limit);
    for (int i = 0; i < count; ++i) api->backend_destroy(plans[i]);
    etrt_conv_graph_destroy(g);
    return NULL;
  }

  /* scratch X, W, B, Z, Y and workspace, each 256-byte aligned */
  size_t elem = 2,
         sizes[6] = {elem, elem, elem * (size_t)shape->y[1], elem, elem, unfused_workspace};
  for (int i = 0; i < 4; ++i) {
    sizes[0] *= (size_t)shape->x[i];
    sizes[1] *= (size_t)shape->w[i];
    sizes[3] *= (size_t)shape->y[i];
    sizes[4] *= (size_t)shape->y[i];
  }
  for (int i = 0; i < count; ++i)
    if (workspaces[i] > sizes[5]) sizes[5] = workspaces[i];
  size_t offsets[6], total = 0;
  for (int i = 0; i < 6; ++i) {
    offsets[i] = total;
    total += (sizes[i] + 255) & ~(size_t)255;
  }
  char *buffer = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  float unfused_us = -1.0f, best_us = -1.0f;
  int best = -1;
  if (cudaMalloc((void **)&buffer, total) == cudaSuccess &&
      cudaMemset(buffer, 0, offsets[5]) == cudaSuccess && cudaEventCreate(&start) == cudaSuccess &&
      cudaEventCreate(&stop) == cudaSuccess) {
    etrt_conv_graph_buffers s = {buffer + offsets[0],
                                 buffer + offsets[1],
                                 shape->bias ? buffer + offsets[2] : NULL,
                                 shape->residual ? buffer + offsets[3] : NULL,
                                 buffer + offsets[4],
                                 sizes[5] > 0 ? buffer + offsets[5] : NULL,
                                 sizes[5]};
    unfused_us = etrt_conv_graph_time(g, handle, NULL, unfused, user, &s, start, stop);
    cudnnStatus_t bound = etrt_conv_graph_bind(g, &s);
    for (int i = 0; i < count && unfused_us >= 0.0f && bound == CUDNN_STATUS_SUCCESS; ++i) {
      float us = etrt_conv_graph_time(g, handle, plans[i], unfused, user, &s, start, stop);
      etrt_log(ETRT_LOG_DEBUG,
               "%s node '%s': cuDNN graph engine %lld: %.1f us against %.1f us unfused",
               node->op_type, etrt_cuda_name(node), (long long)engines[i], us, unfused_us);
      if (us >= 0.0f && (best < 0 || us < best_us)) {
        best = i;
        best_us = us;
      }
    }
    if (bound != CUDNN_STATUS_SUCCESS)
      etrt_log(ETRT_LOG_DEBUG, "%s node '%s': no cuDNN graph: its variant pack: %s (%d)",
               node->op_type, etrt_cuda_name(node), api->error_string(bound), (int)bound);
  } else {
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': no cuDNN graph: no room to time it (%zu bytes): %s",
             node->op_type, etrt_cuda_name(node), total, cudaGetErrorString(cudaGetLastError()));
  }
  (void)cudaStreamSynchronize(NULL); /* a failed launch's work, before the free */
  (void)cudaGetLastError();
  if (start != NULL) cudaEventDestroy(start);
  if (stop != NULL) cudaEventDestroy(stop);
  if (buffer != NULL) cudaFree(buffer);
  /* ETRT_CUDNN_GRAPH=1 keeps the fastest plan even where it is slower (for tests) */
  bool forced = env != NULL && strcmp(env, "1") == 0;
  if (best >= 0 && best_us >= unfused_us && !forced) best = -1;
  for (int i = 0; i < count; ++i)
    if (i != best) api->backend_destroy(plans[i]);
  if (best < 0) {
    etrt_conv_graph_destroy(g);
    return NULL;
  }
  g->plan = plans[best];
  g->workspace = workspaces[best];
  etrt_log(ETRT_LOG_DEBUG, "%s node '%s': fused by cuDNN graph engine %lld, %zu bytes of scratch",
           node->op_type, etrt_cuda_name(node), (long long)engines[best], g->workspace);
  return g;
}

bool etrt_conv_graph_matches(const etrt_conv_graph *g, const etrt_conv_graph_shape *shape) {
  const etrt_conv_graph_shape *s = &g->shape;
  return s->type == shape->type && memcmp(s->x, shape->x, sizeof s->x) == 0 &&
         memcmp(s->w, shape->w, sizeof s->w) == 0 && memcmp(s->y, shape->y, sizeof s->y) == 0 &&
         memcmp(s->pads, shape->pads, sizeof s->pads) == 0 &&
         memcmp(s->strides, shape->strides, sizeof s->strides) == 0 &&
         memcmp(s->dilations, shape->dilations, sizeof s->dilations) == 0 &&
         s->bias == shape->bias && s->residual == shape->residual && s->relu == shape->relu;
}

size_t etrt_conv_graph_workspace(const etrt_conv_graph *g) { return g->workspace; }

static bool etrt_conv_graph_aligned(const void *p) {
  return (uintptr_t)p % ETRT_CONV_GRAPH_ALIGNMENT == 0;
}

bool etrt_conv_graph_run(etrt_conv_graph *g, const etrt_node *node, cudnnHandle_t handle,
                         const etrt_conv_graph_buffers *b, etrt_status *status) {
  if (g->refused || !etrt_conv_graph_aligned(b->x) || !etrt_conv_graph_aligned(b->w) ||
      !etrt_conv_graph_aligned(b->y) || (g->shape.bias && !etrt_conv_graph_aligned(b->bias)) ||
      (g->shape.residual && !etrt_conv_graph_aligned(b->z)) || b->workspace_size < g->workspace ||
      (g->workspace > 0 && b->workspace == NULL))
    return false;
  cudnnStatus_t st = etrt_conv_graph_bind(g, b);
  if (st != CUDNN_STATUS_SUCCESS) {
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': unfused this launch: cuDNN's variant pack: %s (%d)",
             node->op_type, etrt_cuda_name(node), g->api->error_string(st), (int)st);
    return false;
  }
  st = g->api->backend_execute(handle, g->plan, g->pack);
  /* cuDNN checks parameters and support (status codes 2000 to 3999) before it queues
   * anything: such a refusal leaves the node to the unfused path */
  if ((int)st >= (int)CUDNN_STATUS_BAD_PARAM && (int)st < (int)CUDNN_STATUS_INTERNAL_ERROR) {
    etrt_log(ETRT_LOG_DEBUG, "%s node '%s': unfused from now on: cudnnBackendExecute: %s (%d)",
             node->op_type, etrt_cuda_name(node), g->api->error_string(st), (int)st);
    g->refused = 1;
    return false;
  }
  *status =
      st == CUDNN_STATUS_SUCCESS
          ? ETRT_OK
          : etrt_error(ETRT_ERROR_DEVICE, "%s node '%s': cudnnBackendExecute failed: %s (%d)",
                       node->op_type, etrt_cuda_name(node), g->api->error_string(st), (int)st);
  return true;
}

const char *etrt_conv_graph_check(const etrt_cudnn_api *api, cudnnHandle_t handle,
                                  const etrt_conv_graph_shape *shape, cudnnStatus_t *status) {
  *status = CUDNN_STATUS_NOT_SUPPORTED;
  if (api->backend_create == NULL) return "cudnnBackendCreateDescriptor (not in this cuDNN)";
  etrt_conv_graph *g = (etrt_conv_graph *)calloc(1, sizeof *g);
  if (g == NULL) return "calloc";
  g->api = api;
  g->shape = *shape;
  etrt_conv_graph_builder b = {g, NULL, CUDNN_STATUS_SUCCESS};
  (void)etrt_conv_graph_operations(&b, handle);
  const char *failed = b.failed; /* a literal, or NULL */
  *status = b.status;
  etrt_conv_graph_destroy(g);
  return failed;
}
