/* etrt demo: the main job on the embedded default example. A 3-layer MLP
 * (64-128-32-10) is defined with the network API, built into a plan for the GPU when
 * one is present (else the CPU), wrapped as a .pte program and run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/file.h"
#include "base/status.h"
#include "commands.h"
#include "duration.h"
#include "device/device.h"
#include "etrt/method.h"
#include "etrt/network.h"
#include "etrt/program.h"

#define ETRT_DEMO_BATCH 8

static const int64_t etrt_demo_widths[4] = {64, 128, 32, 10};

static float etrt_demo_weight(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return ((float)(*state >> 8) / 16777216.0f - 0.5f) * 0.25f;
}

static etrt_status etrt_demo_network(etrt_network **out) {
  etrt_network *net;
  ETRT_RETURN_IF_ERROR(etrt_network_create(&net));
  int32_t x;
  int64_t min[2] = {1, etrt_demo_widths[0]}, max[2] = {64, etrt_demo_widths[0]};
  etrt_status s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, min, max, &x);
  uint32_t seed = 7;
  for (int layer = 0; layer < 3 && s == ETRT_OK; ++layer) {
    int64_t in = etrt_demo_widths[layer], outw = etrt_demo_widths[layer + 1];
    float *w = malloc((size_t)(in * outw) * sizeof *w), *b = malloc((size_t)outw * sizeof *b);
    if (w == NULL || b == NULL) s = ETRT_ERROR_OUT_OF_MEMORY;
    for (int64_t i = 0; s == ETRT_OK && i < in * outw; ++i) w[i] = etrt_demo_weight(&seed);
    for (int64_t i = 0; s == ETRT_OK && i < outw; ++i) b[i] = etrt_demo_weight(&seed);
    char wname[16], bname[16];
    snprintf(wname, sizeof wname, "w%d", layer);
    snprintf(bname, sizeof bname, "b%d", layer);
    int32_t wid, bid, y, r;
    if (s == ETRT_OK)
      s = etrt_network_add_constant(net, wname, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){in, outw}, w,
                                    &wid);
    if (s == ETRT_OK)
      s = etrt_network_add_constant(net, bname, ETRT_DTYPE_FLOAT32, 1, (int64_t[]){outw}, b, &bid);
    if (s == ETRT_OK)
      s = etrt_network_add_op(net, "Gemm", NULL, 3, (int32_t[]){x, wid, bid}, 1, &y, 0, NULL);
    if (s == ETRT_OK && layer < 2) {
      s = etrt_network_add_op(net, "Relu", NULL, 1, &y, 1, &r, 0, NULL);
      y = r;
    }
    x = y;
    free(w);
    free(b);
  }
  if (s == ETRT_OK) s = etrt_network_mark_output(net, x, "logits");
  if (s != ETRT_OK) {
    etrt_network_destroy(net);
    return s;
  }
  *out = net;
  return ETRT_OK;
}

static void etrt_demo_usage(FILE *out) {
  fprintf(out,
          "usage: etrt demo [-o FILE.pte] [--device cpu|cuda:N] [--iterations N]\n\n"
          "Builds a 3-layer MLP (64-128-32-10) with the network API, on the GPU when one\n"
          "is present, runs it on a batch of %d and prints the outputs. -o also writes the\n"
          "program, for etrt run and etrt inspect.\n",
          ETRT_DEMO_BATCH);
}

int etrt_cmd_demo(int argc, char **argv) {
  const char *output = NULL;
  long iterations = 100;
  const etrt_device_driver *driver = etrt_device_driver_get();
  etrt_plan_options options = {.device = {driver != NULL ? ETRT_DEVICE_CUDA : ETRT_DEVICE_CPU, 0},
                               .name = "mlp"};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      etrt_demo_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      output = argv[++i];
    } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      if (etrt_device_parse(argv[++i], &options.device) != 0) {
        fprintf(stderr, "etrt demo: bad device '%s' (cpu or cuda:N)\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atol(argv[++i]);
      if (iterations < 1) iterations = 1;
    } else {
      etrt_demo_usage(stderr);
      return 2;
    }
  }
  char device[16];
  printf("etrt demo: MLP 64-128-32-10, batch %d, built for %s\n", ETRT_DEMO_BATCH,
         etrt_device_format(options.device, device, sizeof device));
  etrt_network *net = NULL;
  uint8_t *plan = NULL, *pte = NULL;
  size_t plan_size = 0, pte_size = 0;
  etrt_program *program = NULL;
  etrt_method *method = NULL;
  etrt_status s = etrt_demo_network(&net);
  if (s == ETRT_OK) s = etrt_plan_build(net, &options, &plan, &plan_size);
  if (s == ETRT_OK) s = etrt_plan_to_program(plan, plan_size, &pte, &pte_size);
  if (s == ETRT_OK && output != NULL) s = etrt_file_write_atomic(output, pte, pte_size);
  if (s == ETRT_OK) s = etrt_program_load_memory(pte, pte_size, NULL, &program);
  if (s == ETRT_OK) s = etrt_method_create(program, "forward", &method);
  float input[ETRT_DEMO_BATCH * 64];
  uint32_t seed = 11;
  for (size_t i = 0; i < sizeof input / sizeof input[0]; ++i)
    input[i] = etrt_demo_weight(&seed) * 8.0f;
  etrt_tensor_view view = {
      .data = input, .dtype = ETRT_DTYPE_FLOAT32, .rank = 2, .sizes = {ETRT_DEMO_BATCH, 64}};
  if (s == ETRT_OK) s = etrt_method_set_input(method, 0, &view);
  double best = 1e30;
  for (long it = 0; s == ETRT_OK && it < iterations; ++it) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    s = etrt_method_execute(method);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-3;
    if (us < best) best = us;
  }
  etrt_tensor_view out;
  if (s == ETRT_OK) s = etrt_method_get_output(method, 0, &out);
  if (s == ETRT_OK) {
    printf("plan %zu bytes, program %zu bytes%s%s\n", plan_size, pte_size,
           output ? ", written to " : "", output ? output : "");
    const float *logits = out.data;
    for (int64_t r = 0; r < out.sizes[0] && r < 3; ++r) {
      printf("row %lld:", (long long)r);
      for (int64_t c = 0; c < out.sizes[1]; ++c) printf(" %+.4f", logits[r * out.sizes[1] + c]);
      printf("\n");
    }
    char text[32];
    printf("best of %ld runs: %s per execute\n", iterations,
           etrt_tool_format_duration(best * 1e-6, text, sizeof text));
  } else {
    fprintf(stderr, "etrt demo: %s\n", etrt_last_error());
  }
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
  free(plan);
  etrt_network_destroy(net);
  return s == ETRT_OK ? 0 : 1;
}
