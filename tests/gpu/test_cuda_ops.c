/* Every CUDA kernel against the CPU kernel of the same plan: the rows of the CUDA
 * executor's table, each with every case of tests/util/op_cases.c (one operation
 * per network, built for cuda:0, run by a CPU context and a CUDA context on the same
 * inputs, outputs compared within the case's tolerance). A row without a case
 * fails. Without a GPU it prints "no GPU" and passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "engine/engine.h"
#include "engine/op.h"
#include "etrt/log.h"
#include "etrt/network.h"
#include "op_cases.h"
#include "test_util.h"

#ifndef ETRT_HAVE_CUDA

int main(void) {
  printf("no GPU (built without CUDA)\n");
  return 0;
}

#else

static const etrt_device_driver *d;

#define MAX_ROWS 512

static void test_every_cuda_row(void) {
  static const char *ops[MAX_ROWS];
  size_t count = 0, rows = 0;
  const etrt_op_cuda_row *const *table = etrt_op_cuda_all(&count);
  for (size_t i = 0; i < count && rows < MAX_ROWS; ++i) ops[rows++] = table[i]->op_type;
  CHECK(rows > 100);
  CHECK_EQ_INT(co_run_ops(ops, rows, d, ETRT_EXECUTOR_CUDA), 0);
}

/* An out-of-range index fails the run on the GPU too, naming the op. */
static void test_bad_indices(void) {
  size_t count = 0;
  const co_case *cases = co_bad_cases(&count);
  CHECK(count > 0);
  for (size_t k = 0; k < count; ++k) co_run_bad(&cases[k], d, ETRT_EXECUTOR_CUDA);
}

/* EtrtSmId: every block reports an SM id below the device's SM count, and a
 * kernel of many blocks spreads over more than one SM. */
static void test_sm_id(void) {
  enum { BLOCKS = 1024 };
  void *ids = NULL;
  const co_value x[1] = {{.dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .dims = {4}}};
  const etrt_attribute blocks[1] = {{.name = "blocks", .kind = ETRT_ATTRIBUTE_INT, .i = BLOCKS}};
  const co_case c = {"EtrtSmId", "EtrtSmId", 1, x, 1, blocks, 1, -1, ETRT_PRECISION_FP32};
  co_run(&c, d, ETRT_EXECUTOR_CUDA, &ids);
  CHECK(ids != NULL);
  if (ids == NULL) return;
  etrt_device_attributes a;
  CHECK_OK(d->attributes(0, &a));
  int distinct = 0;
  uint8_t seen[1024] = {0};
  for (int b = 0; b < BLOCKS; ++b) {
    int32_t sm = ((const int32_t *)ids)[b];
    CHECK(sm >= 0 && sm < a.sm_count);
    if (sm >= 0 && sm < 1024 && !seen[sm]) {
      seen[sm] = 1;
      ++distinct;
    }
  }
  printf("  %d blocks ran on %d of %d SMs\n", BLOCKS, distinct, a.sm_count);
  CHECK(distinct > 1);
  free(ids);
}

static int g_dnn_chosen, g_dnn_missing, g_dnn_padded;

static void count_dnn(etrt_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  if (strstr(message, "cuDNN algorithm") != NULL) ++g_dnn_chosen;
  if (strstr(message, "without cuDNN") != NULL) ++g_dnn_missing;
  if (strstr(message, "channels padded to 4") != NULL) ++g_dnn_padded;
}

/* The three-channel stem case reads its input padded to 4 channels (by default, and
 * with ETRT_CUDA_CONV_PAD=1) and agrees with the CPU either way; ETRT_CUDA_CONV_PAD=0
 * leaves it unpadded. */
static void test_padded_stem(void) {
  size_t count = 0;
  const co_case *cases = co_cases(&count), *stem = NULL;
  for (size_t i = 0; i < count && stem == NULL; ++i)
    if (strcmp(cases[i].label, "fused conv channels-last float16 three channels stem") == 0)
      stem = &cases[i];
  CHECK(stem != NULL);
  if (stem == NULL) return;
  etrt_log_level level = etrt_log_get_level();
  etrt_log_set_level(ETRT_LOG_DEBUG);
  etrt_log_set_sink(count_dnn, NULL);
  const char *settings[] = {NULL, "1", "0"};
  for (int k = 0; k < 3; ++k) {
    if (settings[k] != NULL) setenv("ETRT_CUDA_CONV_PAD", settings[k], 1);
    g_dnn_padded = g_dnn_missing = 0;
    co_run(stem, d, ETRT_EXECUTOR_CUDA, NULL);
    if (g_dnn_missing == 0) CHECK_EQ_INT(g_dnn_padded, k < 2 ? 1 : 0);
  }
  unsetenv("ETRT_CUDA_CONV_PAD");
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(level);
}

/* EtrtFusedConv goes through cuDNN (its setup names the algorithm it chose) and agrees
 * with the CPU; with ETRT_CUDNN=0 it takes the GEMM path and still agrees. */
static void test_cudnn_conv(void) {
  size_t count = 0;
  const co_case *cases = co_cases(&count), *fused = NULL;
  for (size_t i = 0; i < count && fused == NULL; ++i)
    if (strcmp(cases[i].label, "fused conv 3x3 bias residual relu") == 0) fused = &cases[i];
  CHECK(fused != NULL);
  if (fused == NULL) return;
  etrt_log_level level = etrt_log_get_level();
  etrt_log_set_level(ETRT_LOG_DEBUG);
  etrt_log_set_sink(count_dnn, NULL);
  g_dnn_chosen = g_dnn_missing = 0;
  co_run(fused, d, ETRT_EXECUTOR_CUDA, NULL);
  if (g_dnn_missing > 0) {
    printf("  cuDNN is not loadable here: the GEMM path ran\n");
  } else {
    CHECK_EQ_INT(g_dnn_chosen, 1);
  }
  setenv("ETRT_CUDNN", "0", 1);
  g_dnn_chosen = 0;
  co_run(fused, d, ETRT_EXECUTOR_CUDA, NULL);
  CHECK_EQ_INT(g_dnn_chosen, 0);
  unsetenv("ETRT_CUDNN");
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(level);
}

static int g_graph_timed, g_graph_fused, g_dnn_unloadable;

static void count_graph(etrt_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  /* the library itself missing, not one node that cuDNN refuses */
  if (strstr(message, "cannot load cuDNN") != NULL ||
      (strstr(message, "cuDNN (") != NULL && strstr(message, " lacks cudnn") != NULL &&
       strstr(message, "going without") == NULL))
    ++g_dnn_unloadable;
  if (strstr(message, "cuDNN graph engine") != NULL) {
    if (strstr(message, "fused by") != NULL)
      ++g_graph_fused;
    else
      ++g_graph_timed;
  }
}

/* Every channels-last Conv / EtrtFusedConv case agrees with the CPU with cuDNN's graph
 * path as it chooses (at least one engine timed against the unfused path), forced
 * (ETRT_CUDNN_GRAPH=1: the fused plan runs where cuDNN builds one, and it does for at
 * least one case) and off (ETRT_CUDNN_GRAPH=0: nothing timed, nothing fused). */
static void test_cudnn_graph_conv(void) {
  const char *preset = getenv("ETRT_CUDNN_GRAPH");
  if (preset != NULL && strcmp(preset, "0") == 0) {
    printf(
        "  skipped: ETRT_CUDNN_GRAPH=0 in the environment (make test-gpu-sanitize's racecheck)\n");
    return;
  }
  size_t count = 0;
  const co_case *cases = co_cases(&count);
  etrt_log_level level = etrt_log_get_level();
  etrt_log_set_level(ETRT_LOG_DEBUG);
  etrt_log_set_sink(count_graph, NULL);
  const char *settings[] = {NULL, "1", "0"};
  for (int k = 0; k < 3; ++k) {
    if (settings[k] != NULL) setenv("ETRT_CUDNN_GRAPH", settings[k], 1);
    g_graph_timed = g_graph_fused = g_dnn_unloadable = 0;
    int ran = 0;
    for (size_t i = 0; i < count; ++i) {
      if (strstr(cases[i].label, "channels-last") == NULL ||
          (strcmp(cases[i].op, "Conv") != 0 && strcmp(cases[i].op, "EtrtFusedConv") != 0))
        continue;
      co_run(&cases[i], d, ETRT_EXECUTOR_CUDA, NULL);
      ++ran;
    }
    CHECK(ran >= 4);
    printf("  ETRT_CUDNN_GRAPH=%s: %d engines timed, %d nodes fused\n",
           settings[k] != NULL ? settings[k] : "(unset)", g_graph_timed, g_graph_fused);
    if (g_dnn_unloadable > 0) {
      printf("  cuDNN is not loadable here: the graph path cannot run\n");
      continue;
    }
    if (k == 0) CHECK(g_graph_timed >= 1);
    if (k == 1) CHECK(g_graph_fused >= 1);
    if (k == 2) CHECK_EQ_INT(g_graph_timed + g_graph_fused, 0);
  }
  unsetenv("ETRT_CUDNN_GRAPH");
  etrt_log_set_sink(NULL, NULL);
  etrt_log_set_level(level);
}

int main(void) {
  d = etrt_device_cuda_driver();
  if (d == NULL || d->device_count() < 1) {
    printf("no GPU\n");
    return 0;
  }
  CHECK_OK(d->set_device(0));
  RUN_TEST(test_every_cuda_row);
  RUN_TEST(test_bad_indices);
  RUN_TEST(test_sm_id);
  RUN_TEST(test_cudnn_conv);
  RUN_TEST(test_padded_stem);
  RUN_TEST(test_cudnn_graph_conv);
  return TEST_EXIT();
}

#endif
