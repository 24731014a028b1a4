/* The vectorised float32 Sigmoid against double precision: within 3e-7 relative
 * where the result is a normal float, within 1.2e-38 absolute below that, and NaN,
 * infinities and signed zeros as the operator specifies; axpy's exact arithmetic; the
 * shifted exponential (Softmax's numerators) likewise; the convolution epilogue's
 * activations against their scalar definitions; and the eight-lane paths giving the
 * portable loops' bits, odd lengths included. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops/cpu/gemm_util.h"
#include "engine/ops/cpu/vector_math.h"
#include "test_util.h"

static void test_sigmoid_accuracy(void) {
  enum { N = 400001 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; ++i) x[i] = -100.0f + (float)i * 0.0005f;
  etrt_cpu_sigmoid_f32(x, y, N);
  double worst = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    double want = 1.0 / (1.0 + exp(-(double)x[i]));
    double err = fabs(y[i] - want);
    int ok = want >= 1.2e-38 ? err <= 3e-7 * want : err <= 1.2e-38;
    if (!ok && bad++ < 5) fprintf(stderr, "sigmoid(%.9g) = %.9g, want %.9g\n", x[i], y[i], want);
    if (want >= 1.2e-38 && err / want > worst) worst = err / want;
  }
  printf("  largest relative error %.3g\n", worst);
  CHECK_EQ_INT(bad, 0);
  free(x);
  free(y);
}

static void test_sigmoid_special_values(void) {
  float x[6] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88.0f}, y[6];
  etrt_cpu_sigmoid_f32(x, y, 6);
  CHECK(isnan(y[0]));
  CHECK(y[1] == 1.0f);
  CHECK(y[2] == 0.0f);
  CHECK(y[3] == 0.5f && y[4] == 0.5f);
  CHECK(y[5] == 1.0f);
  etrt_cpu_sigmoid_f32(x, y, 0); /* nothing to do */
}

/* axpy is a multiply then an add, element by element, whatever the vector width. */
static void test_axpy(void) {
  enum { N = 1000 };
  static float x[N], y[N], want[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 37) * 0.37f - 5.0f;
    y[i] = want[i] = (float)(i % 11) * 1.1f;
    volatile float product = 0.3f * x[i]; /* rounded before the add */
    want[i] = want[i] + product;
  }
  etrt_cpu_axpy_f32(y, x, 0.3f, N - 3);
  int bad = 0;
  for (int i = 0; i < N - 3; ++i) bad += y[i] != want[i];
  CHECK_EQ_INT(bad, 0);
  CHECK(y[N - 1] == (float)((N - 1) % 11) * 1.1f); /* past n: untouched */
}

static void test_exp_shifted(void) {
  enum { N = 200003 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; ++i) x[i] = 3.0f - (float)i * 0.0005f; /* down to -97 */
  etrt_cpu_exp_shifted_f32(x, y, N, 3.0f);
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    double want = exp((double)x[i] - 3.0);
    double err = fabs(y[i] - want);
    int ok = want >= 1.2e-38 ? err <= 3e-7 * want : err <= 1.2e-38;
    if (!ok && bad++ < 5) fprintf(stderr, "exp(%.9g - 3) = %.9g, want %.9g\n", x[i], y[i], want);
  }
  CHECK_EQ_INT(bad, 0);
  float special[11] = {0, 1, 2, NAN, -INFINITY, 5, 6, 7, 8, NAN, 1};
  etrt_cpu_exp_shifted_f32(special, special, 11, 8.0f); /* in place; NaN in both paths */
  CHECK(isnan(special[3]) && isnan(special[9]));
  CHECK(special[4] == 0.0f && special[8] == 1.0f);
  free(x);
  free(y);
}

static float act_scalar(float v, const float *z, etrt_cpu_activation kind, float lo, float hi) {
  if (z != NULL) v += *z;
  switch (kind) {
    case ETRT_CPU_ACTIVATION_RELU:
      return v > 0.0f ? v : 0.0f;
    case ETRT_CPU_ACTIVATION_CLIP:
      return v < lo ? (lo > hi ? hi : lo) : v > hi ? hi : v;
    case ETRT_CPU_ACTIVATION_HARD_SWISH: {
      volatile float t = v * (float)(1.0 / 6.0);
      float u = t + 0.5f;
      return v * (u < 0.0f ? 0.0f : u > 1.0f ? 1.0f : u);
    }
    default:
      return v;
  }
}

static void test_activations(void) {
  enum { N = 37 };
  float base[N], z[N];
  for (int i = 0; i < N; ++i) {
    base[i] = (float)(i - 18) * 0.41f;
    z[i] = (float)(i % 5) - 2.0f;
  }
  base[3] = NAN;
  base[4] = -0.0f;
  base[5] = INFINITY;
  base[6] = -INFINITY;
  const float bounds[3][2] = {{-1.0f, 2.0f}, {3.0f, -1.0f}, {0.0f, 6.0f}};
  for (int kind = ETRT_CPU_ACTIVATION_NONE; kind <= ETRT_CPU_ACTIVATION_HARD_SWISH; ++kind) {
    for (int b = 0; b < 3; ++b) {
      for (int with_z = 0; with_z < 2; ++with_z) {
        float y[N];
        memcpy(y, base, sizeof y);
        etrt_cpu_activate_f32(y, with_z ? z : NULL, N, (etrt_cpu_activation)kind, bounds[b][0],
                              bounds[b][1]);
        int bad = 0;
        for (int i = 0; i < N; ++i) {
          float want = act_scalar(base[i], with_z ? &z[i] : NULL, (etrt_cpu_activation)kind,
                                  bounds[b][0], bounds[b][1]);
          int same =
              (isnan(want) && isnan(y[i])) || (want == y[i] && signbit(want) == signbit(y[i]));
          if (!same && bad++ < 3)
            fprintf(stderr, "kind %d bounds %d z %d: [%d] %.9g, want %.9g\n", kind, b, with_z, i,
                    y[i], want);
        }
        CHECK_EQ_INT(bad, 0);
      }
    }
  }
}

/* Every function on the eight-lane path and on the portable loops, bit for bit. */
static void test_paths_agree(void) {
  enum { N = 1029 };
  static float x[N], a[N], b[N], z[N];
  for (int i = 0; i < N; ++i) {
    x[i] = sinf((float)i * 0.37f) * 40.0f - (i % 7 == 0 ? 60.0f : 0.0f);
    z[i] = cosf((float)i) * 3.0f;
  }
  x[10] = NAN;
  x[11] = -0.0f;
  int bad = 0;
  for (int f = 0; f < 6; ++f) {
    for (int pass = 0; pass < 2; ++pass) {
      float *out = pass == 0 ? a : b;
      etrt_cpu_gemm_isa_limit(pass == 0 ? ETRT_CPU_ISA_AVX512 : ETRT_CPU_ISA_PORTABLE);
      memcpy(out, x, sizeof x);
      if (f == 0) etrt_cpu_sigmoid_f32(x, out, N);
      if (f == 1) etrt_cpu_exp_shifted_f32(x, out, N, 40.0f);
      if (f >= 2)
        etrt_cpu_activate_f32(out, f == 5 ? z : NULL, N, (etrt_cpu_activation)(f - 1), -2.0f, 5.0f);
    }
    for (int i = 0; i < N; ++i) bad += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
  }
  etrt_cpu_gemm_isa_limit(ETRT_CPU_ISA_AVX512);
  CHECK_EQ_INT(bad, 0);
}

int main(void) {
  RUN_TEST(test_sigmoid_accuracy);
  RUN_TEST(test_sigmoid_special_values);
  RUN_TEST(test_axpy);
  RUN_TEST(test_exp_shifted);
  RUN_TEST(test_activations);
  RUN_TEST(test_paths_agree);
  return TEST_EXIT();
}
