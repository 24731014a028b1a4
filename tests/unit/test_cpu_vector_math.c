/* The vectorised float32 Sigmoid against double precision: within 3e-7 relative
 * where the result is a normal float, within 1.2e-38 absolute below that, and NaN,
 * infinities and signed zeros as the operator specifies; axpy's exact arithmetic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(void) {
  RUN_TEST(test_sigmoid_accuracy);
  RUN_TEST(test_sigmoid_special_values);
  RUN_TEST(test_axpy);
  return TEST_EXIT();
}
