/* Weights packed ahead for etrt's GEMM (engine/cpu_packed.h): the packed product gives
 * the unpacked product's bits for every micro-kernel and odd shapes (within rounding for
 * products of at most four rows, which the unpacked product sums row by row without the
 * micro-kernel's fused multiply-adds), refuses panels
 * packed for another kernel, and a plan's MatMul and EtrtMatMulBias by constant weights
 * run packed (where oneDNN does not take them) with the same outputs as unpacked
 * (ETRT_CPU_PACKED=0), with either kernel set, at the largest and at a smaller batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cpu_onednn.h"
#include "engine/cpu_packed.h"
#include "engine/engine.h"
#include "engine/ops/cpu/gemm_util.h"
#include "etrt/network.h"
#include "test_util.h"

static void fill(float *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* Bit for bit, or (`rounding`) within float32 rounding of the sums. */
static int same(const float *want, const float *got, int64_t count, int rounding) {
  if (!rounding) return memcmp(want, got, (size_t)count * sizeof *got) == 0;
  for (int64_t i = 0; i < count; ++i) {
    float d = want[i] - got[i], scale = want[i] < 0 ? -want[i] : want[i];
    if (!(d <= 1e-5f * (1.0f + scale) && d >= -1e-5f * (1.0f + scale))) return 0;
  }
  return 1;
}

static void test_packed_product_bits(void) {
  static const int64_t shapes[][3] = {{1, 1, 1},      {3, 17, 5},      {7, 33, 300},
                                      {50, 129, 257}, {130, 300, 600}, {6, 16, 256}};
  static const etrt_cpu_isa isas[] = {ETRT_CPU_ISA_AVX512, ETRT_CPU_ISA_AVX2,
                                      ETRT_CPU_ISA_PORTABLE};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    float *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(k * n) * sizeof *b);
    float *want = malloc((size_t)(m * n) * sizeof *want),
          *got = malloc((size_t)(m * n) * sizeof *got);
    fill(a, m * k, 1u + (uint32_t)s);
    fill(b, k * n, 7u + (uint32_t)s);
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; ++i) {
      etrt_cpu_gemm_isa_limit(isas[i]);
      float *packed = malloc(etrt_cpu_gemm_packed_b_count_f32(k, n) * sizeof *packed);
      int nr = etrt_cpu_gemm_pack_b_f32(k, n, b, n, packed);
      etrt_cpu_gemm_f32(m, n, k, 0.5f, a, k, 1, b, n, want, n, 0);
      memset(got, 0xff, (size_t)(m * n) * sizeof *got);
      CHECK(etrt_cpu_gemm_packed_f32(m, n, k, 0.5f, a, k, 1, packed, nr, got, n, 0));
      if (!same(want, got, m * n, m <= 4))
        etrt_test_fail(__FILE__, __LINE__, "%lldx%lldx%lld (isa limit %d): packed differs",
                       (long long)m, (long long)n, (long long)k, (int)isas[i]);
      /* Accumulating into C as well. */
      etrt_cpu_gemm_f32(m, n, k, 1.0f, a, k, 1, b, n, want, n, 1);
      CHECK(etrt_cpu_gemm_packed_f32(m, n, k, 1.0f, a, k, 1, packed, nr, got, n, 1));
      CHECK(same(want, got, m * n, m <= 4));
      /* Panels for another micro-kernel width are refused, never misread. */
      CHECK(!etrt_cpu_gemm_packed_f32(m, n, k, 1.0f, a, k, 1, packed, nr * 2, got, n, 0));
      free(packed);
    }
    etrt_cpu_gemm_isa_limit(ETRT_CPU_ISA_AVX512);
    free(a);
    free(b);
    free(want);
    free(got);
  }
}

enum { K = 70, N = 130, N2 = 20 };

/* x [1..2, 5, K] -> MatMul by W [K, N] -> EtrtMatMulBias by V [N, N2] and bias [N2]. */
static void build(uint8_t **plan, size_t *size) {
  etrt_network *net = NULL;
  CHECK_OK(etrt_network_create(&net));
  int32_t x, w, v, bias, h, y;
  const int64_t lo[3] = {1, 5, K}, hi[3] = {2, 5, K};
  CHECK_OK(etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 3, lo, hi, &x));
  float *data = malloc(sizeof(float) * K * N);
  fill(data, K * N, 3);
  CHECK_OK(etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 2, (const int64_t[]){K, N}, data,
                                     &w));
  fill(data, N * N2, 4);
  CHECK_OK(etrt_network_add_constant(net, "v", ETRT_DTYPE_FLOAT32, 2, (const int64_t[]){N, N2},
                                     data, &v));
  fill(data, N2, 5);
  CHECK_OK(etrt_network_add_constant(net, "bias", ETRT_DTYPE_FLOAT32, 1, (const int64_t[]){N2},
                                     data, &bias));
  free(data);
  CHECK_OK(etrt_network_add_op(net, "MatMul", "mm", 2, (const int32_t[]){x, w}, 1, &h, 0, NULL));
  CHECK_OK(etrt_network_add_op(net, "EtrtMatMulBias", "mmb", 3, (const int32_t[]){h, v, bias}, 1,
                               &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(net, y, "y"));
  CHECK_OK(etrt_plan_build(net, &(etrt_plan_options){.device = {ETRT_DEVICE_CPU, 0}}, plan, size));
  etrt_network_destroy(net);
}

static float *run(const uint8_t *plan, size_t size, int64_t batch, const float *x) {
  etrt_engine *engine = NULL;
  etrt_exec_context *ctx = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  CHECK_OK(etrt_exec_context_create(engine, NULL, &ctx));
  float *y = calloc((size_t)(batch * 5 * N2), sizeof *y);
  CHECK_OK(etrt_exec_context_set_input_shape(ctx, 0, 3, (const int64_t[]){batch, 5, K}));
  CHECK_OK(etrt_exec_context_set_address(ctx, 0, (void *)x));
  CHECK_OK(etrt_exec_context_set_address(ctx, 1, y));
  CHECK_OK(etrt_exec_context_enqueue(ctx, NULL));
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  return y;
}

static void test_plan_runs_packed(void) {
  uint8_t *plan = NULL;
  size_t size = 0;
  build(&plan, &size);
  if (plan == NULL) return;
  etrt_engine *engine = NULL;
  CHECK_OK(etrt_engine_deserialize(plan, size, &engine));
  etrt_cpu_packed *packed = NULL;
  CHECK_OK(etrt_cpu_packed_create(engine, NULL, &packed));
  CHECK_EQ_INT((int)etrt_cpu_packed_node_count(packed), 2);
  etrt_cpu_packed_destroy(packed);
  /* Nodes oneDNN takes (where the build and machine have it) are left to it. */
  etrt_cpu_onednn *onednn = NULL;
  CHECK_OK(etrt_cpu_onednn_create(engine, &onednn));
  int taken = 0;
  for (uint32_t n = 0; n < 2; ++n) taken += etrt_cpu_onednn_takes(onednn, n);
  CHECK_OK(etrt_cpu_packed_create(engine, onednn, &packed));
  CHECK_EQ_INT((int)etrt_cpu_packed_node_count(packed), 2 - taken);
  etrt_cpu_packed_destroy(packed);
  etrt_cpu_onednn_destroy(onednn);
  setenv("ETRT_CPU_PACKED", "0", 1);
  CHECK_OK(etrt_cpu_packed_create(engine, NULL, &packed));
  CHECK(packed == NULL);
  unsetenv("ETRT_CPU_PACKED");
  etrt_engine_destroy(engine);

  float x[2 * 5 * K];
  fill(x, 2 * 5 * K, 9);
  static const char *const kernels[] = {"etrt", NULL};
  for (int kset = 0; kset < 2; ++kset) {
    if (kernels[kset] != NULL)
      setenv("ETRT_CPU_KERNELS", kernels[kset], 1);
    else
      unsetenv("ETRT_CPU_KERNELS");
    for (int64_t batch = 2; batch >= 1; --batch) {
      float *with = run(plan, size, batch, x);
      setenv("ETRT_CPU_PACKED", "0", 1);
      float *without = run(plan, size, batch, x);
      unsetenv("ETRT_CPU_PACKED");
      /* etrt's GEMM both times (with etrt's kernels), else oneDNN may run the unpacked
       * one: compare bits, or within float32 summation order. */
      int64_t count = batch * 5 * N2;
      int bad = 0;
      for (int64_t i = 0; i < count; ++i) {
        float d = with[i] - without[i];
        bad += kernels[kset] != NULL ? memcmp(&with[i], &without[i], sizeof with[i]) != 0
                                     : !(d <= 1e-4f && d >= -1e-4f);
      }
      if (bad)
        etrt_test_fail(__FILE__, __LINE__, "kernels %s batch %lld: %d outputs differ",
                       kernels[kset] ? kernels[kset] : "default", (long long)batch, bad);
      free(with);
      free(without);
    }
  }
  unsetenv("ETRT_CPU_KERNELS");
  free(plan);
}

int main(void) {
  RUN_TEST(test_packed_product_bits);
  RUN_TEST(test_plan_runs_packed);
  return TEST_EXIT();
}
