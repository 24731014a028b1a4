/* Small networks for the engine tests: a 64-128-32-10 MLP (Gemm with transB and bias,
 * Relu) built through the network API, its plain C reference, and deterministic
 * random data. */
#ifndef ETRT_TESTS_ENGINE_TEST_MODELS_H
#define ETRT_TESTS_ENGINE_TEST_MODELS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/network.h"

#define MLP_IN 64
#define MLP_H1 128
#define MLP_H2 32
#define MLP_OUT 10

/* Values in [-1, 1) from a 32-bit LCG. */
static inline float test_random(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static inline void test_fill(float *p, size_t n, uint32_t seed, float scale) {
  for (size_t i = 0; i < n; ++i) p[i] = test_random(&seed) * scale;
}

typedef struct test_mlp {
  /* Weights as [out, in], as a Linear layer keeps them (Gemm transB = 1). */
  float w1[MLP_H1 * MLP_IN], b1[MLP_H1];
  float w2[MLP_H2 * MLP_H1], b2[MLP_H2];
  float w3[MLP_OUT * MLP_H2], b3[MLP_OUT];
} test_mlp;

static inline void test_mlp_init(test_mlp *m, uint32_t seed) {
  test_fill(m->w1, MLP_H1 * MLP_IN, seed + 1, 0.2f);
  test_fill(m->b1, MLP_H1, seed + 2, 0.1f);
  test_fill(m->w2, MLP_H2 * MLP_H1, seed + 3, 0.15f);
  test_fill(m->b2, MLP_H2, seed + 4, 0.1f);
  test_fill(m->w3, MLP_OUT * MLP_H2, seed + 5, 0.2f);
  test_fill(m->b3, MLP_OUT, seed + 6, 0.1f);
}

static inline void test_linear_reference(const float *x, int64_t batch, const float *w,
                                         const float *b, int in, int out, int relu, float *y) {
  for (int64_t r = 0; r < batch; ++r) {
    for (int o = 0; o < out; ++o) {
      double acc = b[o];
      for (int i = 0; i < in; ++i) acc += (double)x[r * in + i] * w[o * in + i];
      y[r * out + o] = relu && acc < 0 ? 0.0f : (float)acc;
    }
  }
}

static inline void test_mlp_reference(const test_mlp *m, const float *x, int64_t batch, float *y) {
  float *h1 = malloc((size_t)batch * MLP_H1 * sizeof(float));
  float *h2 = malloc((size_t)batch * MLP_H2 * sizeof(float));
  test_linear_reference(x, batch, m->w1, m->b1, MLP_IN, MLP_H1, 1, h1);
  test_linear_reference(h1, batch, m->w2, m->b2, MLP_H1, MLP_H2, 1, h2);
  test_linear_reference(h2, batch, m->w3, m->b3, MLP_H2, MLP_OUT, 0, y);
  free(h1);
  free(h2);
}

/* One Linear layer: Gemm(x, w, b, transB = 1), then Relu when asked. */
static inline etrt_status test_linear(etrt_network *net, int32_t x, const char *name,
                                      const float *w, const float *b, int in, int out, int relu,
                                      int32_t *y) {
  char wn[64], bn[64], rn[64];
  snprintf(wn, sizeof wn, "%s.weight", name);
  snprintf(bn, sizeof bn, "%s.bias", name);
  snprintf(rn, sizeof rn, "%s.relu", name);
  int32_t wv, bv, g;
  etrt_status s =
      etrt_network_add_constant(net, wn, ETRT_DTYPE_FLOAT32, 2, (int64_t[]){out, in}, w, &wv);
  if (s == ETRT_OK)
    s = etrt_network_add_constant(net, bn, ETRT_DTYPE_FLOAT32, 1, (int64_t[]){out}, b, &bv);
  etrt_attribute trans = {.name = "transB", .kind = ETRT_ATTRIBUTE_INT, .i = 1};
  if (s == ETRT_OK)
    s = etrt_network_add_op(net, "Gemm", name, 3, (int32_t[]){x, wv, bv}, 1, &g, 1, &trans);
  if (s == ETRT_OK && relu) s = etrt_network_add_op(net, "Relu", rn, 1, &g, 1, &g, 0, NULL);
  *y = g;
  return s;
}

static inline etrt_status test_mlp_network(const test_mlp *m, int64_t min_batch, int64_t max_batch,
                                           etrt_network **out) {
  etrt_network *net;
  etrt_status s = etrt_network_create(&net);
  if (s != ETRT_OK) return s;
  int32_t x, h;
  s = etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, (int64_t[]){min_batch, MLP_IN},
                             (int64_t[]){max_batch, MLP_IN}, &x);
  if (s == ETRT_OK) s = test_linear(net, x, "fc1", m->w1, m->b1, MLP_IN, MLP_H1, 1, &h);
  if (s == ETRT_OK) s = test_linear(net, h, "fc2", m->w2, m->b2, MLP_H1, MLP_H2, 1, &h);
  if (s == ETRT_OK) s = test_linear(net, h, "fc3", m->w3, m->b3, MLP_H2, MLP_OUT, 0, &h);
  if (s == ETRT_OK) s = etrt_network_mark_output(net, h, "y");
  if (s != ETRT_OK) {
    etrt_network_destroy(net);
    return s;
  }
  *out = net;
  return ETRT_OK;
}

static inline etrt_status test_mlp_plan(const test_mlp *m, etrt_device device, uint8_t **plan,
                                        size_t *size) {
  etrt_network *net;
  etrt_status s = test_mlp_network(m, 1, 32, &net);
  if (s != ETRT_OK) return s;
  etrt_plan_options options = {.device = device, .name = "mlp"};
  s = etrt_plan_build(net, &options, plan, size);
  etrt_network_destroy(net);
  return s;
}

#endif
