/* The cuDNN graph of a fused channels-last convolution (src/engine/ops/cuda/conv_graph.cu)
 * without a GPU: cuDNN 9 finalizes tensor, convolution, pointwise and operation-graph
 * descriptors with no device, so every variant the setup builds (bias, residual, Relu,
 * float16 and bfloat16, strides) is checked to finalize with the attribute names, types
 * and counts the code gives them, and inconsistent shapes are refused naming the call.
 * Engines, timing and launches need the GPU (tests/gpu/test_cuda_ops.c). Skips where
 * cuDNN does not load. */
#include <stdlib.h>
#include <string.h>

#include "etrt/log.h"
#include "test_util.h"

#ifdef ETRT_HAVE_CUDA
#include "engine/ops/cuda/conv_graph.h"

static const etrt_cudnn_api *dnn;

/* X [2, 16, 9, 9] (NHWC in memory), W [32, 16, 3, 3], pads 1: Y [2, 32, 9, 9]. */
static etrt_conv_graph_shape shape_3x3(cudnnDataType_t type, int bias, int residual, int relu) {
  etrt_conv_graph_shape s;
  memset(&s, 0, sizeof s);
  s.type = type;
  const int64_t x[4] = {2, 16, 9, 9}, w[4] = {32, 16, 3, 3}, y[4] = {2, 32, 9, 9};
  memcpy(s.x, x, sizeof x);
  memcpy(s.w, w, sizeof w);
  memcpy(s.y, y, sizeof y);
  for (int i = 0; i < 2; ++i) {
    s.pads[i] = 1;
    s.strides[i] = 1;
    s.dilations[i] = 1;
  }
  s.bias = bias;
  s.residual = residual;
  s.relu = relu;
  return s;
}

static void check_builds(const etrt_conv_graph_shape *s, const char *what) {
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *failed = etrt_conv_graph_check(dnn, NULL, s, &st);
  if (failed != NULL) printf("  %s: %s failed: %s (%d)\n", what, failed, dnn->error_string(st), st);
  CHECK(failed == NULL);
}

static void test_every_variant_finalizes(void) {
  for (int bias = 0; bias < 2; ++bias)
    for (int residual = 0; residual < 2; ++residual)
      for (int relu = 0; relu < 2; ++relu) {
        if (!bias && !residual && !relu) continue; /* nothing to fuse: never built */
        etrt_conv_graph_shape s = shape_3x3(CUDNN_DATA_HALF, bias, residual, relu);
        check_builds(&s, "float16");
      }
  etrt_conv_graph_shape s = shape_3x3(CUDNN_DATA_BFLOAT16, 1, 1, 1);
  check_builds(&s, "bfloat16");
  /* stride 2: Y [2, 32, 5, 5] */
  s = shape_3x3(CUDNN_DATA_HALF, 1, 0, 1);
  s.strides[0] = s.strides[1] = 2;
  s.y[2] = s.y[3] = 5;
  check_builds(&s, "stride 2");
  /* a 1-D convolution as 2-D of height 1: X [2, 16, 1, 20], W [32, 16, 1, 3], pad 0/1 */
  s = shape_3x3(CUDNN_DATA_HALF, 1, 1, 0);
  s.x[2] = s.w[2] = s.y[2] = 1;
  s.x[3] = s.y[3] = 20;
  s.pads[0] = 0;
  check_builds(&s, "1-d");
}

/* An output whose dims do not follow from the window, and a weight whose channels do not
 * divide the input's, are refused, naming the descriptor that would not finalize. */
static void test_inconsistent_shapes_are_refused(void) {
  etrt_conv_graph_shape s = shape_3x3(CUDNN_DATA_HALF, 1, 1, 1);
  s.y[2] = s.y[3] = 7;
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  const char *failed = etrt_conv_graph_check(dnn, NULL, &s, &st);
  CHECK(failed != NULL);
  if (failed != NULL) {
    printf("  wrong output dims: %s failed (%d)\n", failed, st);
    CHECK_STR_CONTAINS(failed, "cudnnBackendFinalize");
    CHECK(st != CUDNN_STATUS_SUCCESS);
  }
  /* (fewer weight channels than the input's would be a grouped convolution to cuDNN,
   * which infers the groups from the two counts; the setup builds only one group) */
  s = shape_3x3(CUDNN_DATA_HALF, 1, 0, 0);
  s.w[1] = 24;
  failed = etrt_conv_graph_check(dnn, NULL, &s, &st);
  CHECK(failed != NULL);
  if (failed != NULL) {
    printf("  weight channels not dividing the input's: %s failed (%d)\n", failed, st);
    CHECK_STR_CONTAINS(failed, "cudnnBackendFinalize");
  }
}

/* The EtrtFusedConv node a graph is made for (only its type and name are read). */
static etrt_node fused_node(const char *name) {
  etrt_node node;
  memset(&node, 0, sizeof node);
  node.op_type = "EtrtFusedConv";
  node.name = name;
  return node;
}

static bool unfused_never_runs(void *user, const etrt_conv_graph_buffers *b) {
  (void)b;
  ++*(int *)user;
  return false;
}

/* ETRT_CUDNN_GRAPH=0, a float32 node and a node with nothing to fuse make no graph, and
 * none of them touches cuDNN or the device. */
static void test_graph_not_made(void) {
  etrt_node node = fused_node("conv");
  int calls = 0;
  etrt_conv_graph_shape s = shape_3x3(CUDNN_DATA_HALF, 1, 1, 1);
  setenv("ETRT_CUDNN_GRAPH", "0", 1);
  CHECK(etrt_conv_graph_create(dnn, NULL, &node, &s, 1 << 20, 0, unfused_never_runs, &calls) ==
        NULL);
  unsetenv("ETRT_CUDNN_GRAPH");
  s = shape_3x3(CUDNN_DATA_FLOAT, 1, 1, 1);
  CHECK(etrt_conv_graph_create(dnn, NULL, &node, &s, 1 << 20, 0, unfused_never_runs, &calls) ==
        NULL);
  s = shape_3x3(CUDNN_DATA_HALF, 0, 0, 0);
  CHECK(etrt_conv_graph_create(dnn, NULL, &node, &s, 1 << 20, 0, unfused_never_runs, &calls) ==
        NULL);
  CHECK_EQ_INT(calls, 0);
}

static char g_logged[512];

static void keep_message(etrt_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  if (strstr(message, "cuDNN graph") != NULL) snprintf(g_logged, sizeof g_logged, "%s", message);
}

/* A graph cuDNN refuses makes no graph, says why at debug level (naming the node and the
 * call) and sets no error: the node keeps the unfused path. */
static void test_refusal_is_logged(void) {
  etrt_node node = fused_node("conv7");
  int calls = 0;
  etrt_conv_graph_shape s = shape_3x3(CUDNN_DATA_HALF, 1, 1, 1);
  s.y[2] = s.y[3] = 7;
  etrt_log_level level = etrt_log_get_level();
  etrt_log_set_level(ETRT_LOG_DEBUG);
  etrt_log_set_sink(keep_message, NULL);
  g_logged[0] = 0;
  etrt_clear_error();
  CHECK(etrt_conv_graph_create(dnn, NULL, &node, &s, 1 << 20, 0, unfused_never_runs, &calls) ==
        NULL);
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(level);
  CHECK_STR_CONTAINS(g_logged, "EtrtFusedConv node 'conv7': no cuDNN graph: ");
  CHECK_STR_CONTAINS(g_logged, "cudnnBackendFinalize (convolution operation) failed");
  CHECK_EQ_INT(calls, 0);
  CHECK(strcmp(etrt_last_error(), "") == 0);
}

int main(void) {
  if (etrt_cuda_cudnn_get(&dnn) != ETRT_OK) {
    printf("skipped: cuDNN does not load here: %s\n", etrt_last_error());
    return 0;
  }
  if (dnn->backend_create == NULL) {
    printf("skipped: this cuDNN lacks the backend API\n");
    return 0;
  }
  RUN_TEST(test_every_variant_finalizes);
  RUN_TEST(test_inconsistent_shapes_are_refused);
  RUN_TEST(test_graph_not_made);
  RUN_TEST(test_refusal_is_logged);
  return TEST_EXIT();
}
#else
int main(void) {
  printf("skipped: built without CUDA\n");
  return 0;
}
#endif
