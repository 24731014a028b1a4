/* The vectorised float32 loops against double precision: Sigmoid within 3e-7 relative
 * where the result is a normal float, within 1.2e-38 absolute below that; Erf within
 * 1.5 ulp; Gelu, Softmax, LogSoftmax and LayerNormalization rows of every length
 * around the vector widths (tails), large magnitudes, and NaN, infinities and signed
 * zeros as the operators specify; axpy's and HardSwish's exact arithmetic. */
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

/* Distance from want in units in the last place of the float nearest to it. */
static double ulps(float got, double want) {
  float w = (float)want;
  double ulp = fabs(w) < 1.2e-38f ? 1.4e-45 : (double)nextafterf(fabsf(w), INFINITY) - fabsf(w);
  return fabs((double)got - want) / ulp;
}

static void test_erf_accuracy(void) {
  enum { N = 1200001 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; ++i) x[i] = -6.0f + (float)i * 1e-5f; /* both branches, both signs */
  etrt_cpu_erf_f32(x, y, N);
  double worst = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    double e = ulps(y[i], erf((double)x[i]));
    if (e > 1.5 && bad++ < 5)
      fprintf(stderr, "erf(%.9g) = %.9g, want %.9g\n", x[i], y[i], erf(x[i]));
    if (e > worst) worst = e;
  }
  /* tiny arguments, where erf(x) is about 1.128 x, down to the subnormals */
  int tiny = 0;
  for (float t = 1e-44f; t < 1e-2f; t *= 1.37f) x[tiny++] = t;
  etrt_cpu_erf_f32(x, y, tiny);
  for (int i = 0; i < tiny; ++i) {
    double e = ulps(y[i], erf((double)x[i]));
    if (e > 1.5 && bad++ < 10)
      fprintf(stderr, "erf(%.9g) = %.9g, want %.9g\n", x[i], y[i], erf(x[i]));
  }
  printf("  largest error %.3g ulp\n", worst);
  CHECK_EQ_INT(bad, 0);
  free(x);
  free(y);
}

static void test_erf_special_values(void) {
  float x[7] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, -9.0f}, y[7];
  etrt_cpu_erf_f32(x, y, 7);
  CHECK(isnan(y[0]));
  CHECK(y[1] == 1.0f && y[2] == -1.0f);
  CHECK(y[3] == 0.0f && !signbit(y[3]));
  CHECK(y[4] == 0.0f && signbit(y[4]));
  CHECK(y[5] == 1.0f && y[6] == -1.0f);
}

/* Gelu's error is erf's, scaled by x / 2: within 1.5 ulp of 1 + erf times |x| / 2 (the
 * float32 sum 1 + erf cannot be closer), plus the product's rounding. */
static void test_gelu_accuracy(void) {
  enum { N = 200003 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; ++i) x[i] = -12.0f + (float)i * 1.2e-4f;
  etrt_cpu_gelu_f32(x, y, N);
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    double v = x[i], want = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    double allowed = 1.5 * 1.2e-7 * 0.5 * fabs(v) + 3e-7 * fabs(want);
    if (fabs(y[i] - want) > allowed && bad++ < 5)
      fprintf(stderr, "gelu(%.9g) = %.9g, want %.9g\n", x[i], y[i], want);
  }
  CHECK_EQ_INT(bad, 0);
  float s[4] = {NAN, INFINITY, -INFINITY, 1e30f}, t[4];
  etrt_cpu_gelu_f32(s, t, 4);
  CHECK(isnan(t[0]) && t[1] == INFINITY && t[3] == 1e30f);
  CHECK(t[2] == 0.0f || isnan(t[2])); /* -inf * 0: the operator leaves it open */
  free(x);
  free(y);
}

static void test_hard_swish(void) {
  enum { N = 1003 };
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) x[i] = -5.0f + (float)i * 0.01f;
  x[7] = NAN;
  etrt_cpu_hard_swish_f32(x, y, N - 2);
  int bad = 0;
  for (int i = 0; i < N - 2; ++i) {
    if (i == 7) continue;
    volatile float t = x[i] * (float)(1.0 / 6.0);
    t = t + 0.5f;
    float want = x[i] * (t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t);
    bad += y[i] != want;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(isnan(y[7]));
  CHECK(y[N - 1] == 0.0f);          /* past n: untouched */
  etrt_cpu_hard_swish_f32(x, x, N); /* in place */
  CHECK(x[N - 1] == y[N - 1] || x[N - 1] > 4.9f);
}

/* Softmax and LogSoftmax rows of every length from 1 to 70 (every tail of the 8 and 16
 * lanes), then long rows, with values spread over +-(0.001 .. 1e4). */
static void test_softmax_rows(void) {
  enum { ROWS = 3, MAX_N = 6625 };
  float *x = malloc(ROWS * MAX_N * sizeof *x), *y = malloc(ROWS * MAX_N * sizeof *y);
  int lengths[80], count = 0;
  for (int n = 1; n <= 70; ++n) lengths[count++] = n;
  lengths[count++] = 128;
  lengths[count++] = 1000;
  lengths[count++] = MAX_N;
  int bad = 0;
  for (int c = 0; c < count; ++c) {
    int n = lengths[c];
    for (int logs = 0; logs < 2; ++logs) {
      for (int r = 0; r < ROWS; ++r) {
        double range = r == 0 ? 1e-3 : r == 1 ? 8.0 : 1e4;
        for (int i = 0; i < n; ++i)
          x[r * n + i] = (float)(range * sin(0.37 * i + r) + (r == 2 ? 3e4 : 0));
      }
      etrt_cpu_softmax_f32(x, y, ROWS, n, logs);
      for (int r = 0; r < ROWS; ++r) {
        const float *xr = x + r * n;
        double m = xr[0], sum = 0;
        for (int i = 1; i < n; ++i) m = xr[i] > m ? xr[i] : m;
        for (int i = 0; i < n; ++i) sum += exp((double)xr[i] - m);
        for (int i = 0; i < n; ++i) {
          double want = logs ? (double)xr[i] - m - log(sum) : exp((double)xr[i] - m) / sum;
          double err = fabs(y[r * n + i] - want);
          /* Softmax sums its exponentials in float in eight lanes, as onnxruntime's
           * MLAS does (its bits are the goal): over thousands of elements the sum
           * carries a few 1e-7 of rounding more than a double sum. */
          double rel = n > 1000 ? 2e-6 : 1e-6;
          int ok = logs ? err <= 3e-7 * fabs(want) + 1e-6 : err <= rel * want + 1e-38;
          if (!ok && bad++ < 5)
            fprintf(stderr, "%s n %d row %d [%d] = %.9g, want %.9g\n",
                    logs ? "logsoftmax" : "softmax", n, r, i, y[r * n + i], want);
        }
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  free(x);
  free(y);
}

/* Softmax and LogSoftmax down the columns of [n][inner] blocks: every inner width from
 * 1 to 70 and 130 (partial blocks of 64 columns), column ranges that start and end
 * inside a block, columns spread over +-(0.001 .. 1e4); a NaN makes its column NaN and
 * leaves the others alone. */
static void test_softmax_columns(void) {
  enum { MAX_N = 17, MAX_INNER = 130 };
  static float x[MAX_N * MAX_INNER], y[MAX_N * MAX_INNER];
  const int rows[] = {1, 3, MAX_N};
  int bad = 0;
  for (int r = 0; r < 3; ++r) {
    int n = rows[r];
    for (int inner = 1; inner <= MAX_INNER; inner += inner < 70 ? 1 : 60) {
      for (int logs = 0; logs < 2; ++logs) {
        for (int i = 0; i < n * inner; ++i) {
          int c = i % inner; /* a column's values share a range, as a row's do above */
          double range = c % 3 == 0 ? 1e-3 : c % 3 == 1 ? 8.0 : 1e4;
          x[i] = (float)(range * sin(0.37 * i + r));
        }
        int begin = inner > 3 ? 2 : 0, end = inner > 5 ? inner - 1 : inner;
        memset(y, 0, sizeof y);
        etrt_cpu_softmax_columns_f32(x, y, n, inner, begin, end, logs);
        for (int c = 0; c < inner; ++c) {
          double m = x[c], sum = 0;
          for (int k = 1; k < n; ++k) m = x[k * inner + c] > m ? x[k * inner + c] : m;
          for (int k = 0; k < n; ++k) sum += exp((double)x[k * inner + c] - m);
          for (int k = 0; k < n; ++k) {
            double v = x[k * inner + c];
            double want = c < begin || c >= end ? 0.0 : logs ? v - m - log(sum) : exp(v - m) / sum;
            double err = fabs(y[k * inner + c] - want);
            /* exp flushes results below 1.2e-38 to 0 */
            int ok = logs ? err <= 3e-7 * fabs(want) + 1e-6 : err <= 1e-6 * want + 1.2e-38;
            if (!ok && bad++ < 5)
              fprintf(stderr, "%s n %d inner %d [%d][%d] = %.9g, want %.9g\n",
                      logs ? "logsoftmax" : "softmax", n, inner, k, c, y[k * inner + c], want);
          }
        }
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  /* a NaN in column 1 of three; in place */
  float z[6] = {1.0f, NAN, 3.0f, 2.0f, 0.5f, 3.0f};
  etrt_cpu_softmax_columns_f32(z, z, 2, 3, 0, 3, 0);
  CHECK(fabsf(z[0] - 0.26894142f) < 1e-7f && fabsf(z[3] - 0.73105858f) < 1e-7f);
  CHECK(isnan(z[1]) && isnan(z[4]));
  CHECK(fabsf(z[2] - 0.5f) < 1e-7f && fabsf(z[5] - 0.5f) < 1e-7f);
}

/* Sums of every length from 0 to 70 (every tail of the lanes) and 100000, against a
 * sequential sum in long double. */
static void test_sum(void) {
  enum { MAX_N = 100000 };
  float *x = malloc(MAX_N * sizeof *x);
  for (int i = 0; i < MAX_N; ++i) x[i] = (float)(sin(0.37 * i) * 3.0 + (i % 11 == 0 ? 1e4 : 0.0));
  int bad = 0;
  for (int n = 0; n <= 71; ++n) {
    int len = n <= 70 ? n : MAX_N;
    long double want = 0;
    for (int i = 0; i < len; ++i) want += x[i];
    double got = 0.0;
    etrt_cpu_sum_f32(x, len, &got);
    if (fabsl((long double)got - want) > 1e-12L * (fabsl(want) + 1) && bad++ < 5)
      fprintf(stderr, "sum of %d = %.17g, want %.17Lg\n", len, got, want);
  }
  CHECK_EQ_INT(bad, 0);
  free(x);
}

static void test_softmax_special_values(void) {
  /* a NaN anywhere makes the row NaN; -inf entries give 0; +inf makes the row NaN
   * (inf - inf), as exp(x - max) / sum does */
  for (int n = 1; n <= 40; n += 13) {
    float x[40], y[40];
    for (int where = 0; where < n; ++where) {
      for (int i = 0; i < n; ++i) x[i] = (float)i * 0.5f;
      x[where] = NAN;
      etrt_cpu_softmax_f32(x, y, 1, n, 0);
      int nans = 0;
      for (int i = 0; i < n; ++i) nans += isnan(y[i]) != 0;
      CHECK_EQ_INT(nans, n);
      x[where] = INFINITY;
      etrt_cpu_softmax_f32(x, y, 1, n, 0);
      nans = 0;
      for (int i = 0; i < n; ++i) nans += isnan(y[i]) != 0;
      CHECK_EQ_INT(nans, n);
      x[where] = -INFINITY;
      etrt_cpu_softmax_f32(x, y, 1, n, 0);
      if (n > 1) CHECK(y[where] == 0.0f);
      etrt_cpu_softmax_f32(x, y, 1, n, 1);
      if (n > 1) CHECK(y[where] == -INFINITY);
    }
  }
  float x[3] = {1.0f, 2.0f, 3.0f};
  etrt_cpu_softmax_f32(x, x, 1, 3, 0); /* in place */
  CHECK(fabsf(x[2] - 0.66524096f) < 1e-7f);
}

/* Rows of lengths 1 to 70, 768 and 1001, centred on 0 and on 1e4 (where a one-pass
 * variance would lose every digit), with and without bias, in place and not. */
static void test_layer_norm_rows(void) {
  enum { MAX_N = 1001 };
  static float x[MAX_N], y[MAX_N], scale[MAX_N], bias[MAX_N];
  int lengths[80], count = 0;
  for (int n = 1; n <= 70; ++n) lengths[count++] = n;
  lengths[count++] = 768;
  lengths[count++] = MAX_N;
  int bad = 0;
  for (int c = 0; c < count; ++c) {
    int n = lengths[c];
    for (int variant = 0; variant < 4; ++variant) {
      double offset = variant & 1 ? 1e4 : 0.0;
      int with_bias = (variant & 2) != 0;
      for (int i = 0; i < n; ++i) {
        x[i] = (float)(offset + 3.0 * sin(0.7 * i + n));
        scale[i] = (float)(1.0 + 0.5 * cos(0.3 * i));
        bias[i] = (float)(0.25 * sin(0.11 * i));
      }
      double mean = 0, var = 0;
      for (int i = 0; i < n; ++i) mean += x[i];
      mean /= n;
      for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
      double inv_std = 1.0 / sqrt(var / n + 1e-5);
      float stats[2];
      float *out = variant == 3 ? x : y; /* one variant in place */
      float saved[MAX_N];
      memcpy(saved, x, sizeof(float) * (size_t)n);
      etrt_cpu_layer_norm_f32(x, scale, with_bias ? bias : NULL, out, n, 1e-5f, stats);
      /* the float32 inputs carry relative error 6e-8 of the offset into the deviations */
      double allowed = 2e-5 + 1.2e-7 * offset * inv_std * 4;
      for (int i = 0; i < n; ++i) {
        double want = (saved[i] - mean) * inv_std * scale[i] + (with_bias ? bias[i] : 0);
        if (fabs(out[i] - want) > allowed && bad++ < 5)
          fprintf(stderr, "layer norm n %d variant %d [%d] = %.9g, want %.9g\n", n, variant, i,
                  out[i], want);
      }
      if (fabs(stats[0] - mean) > 1e-6 * (1 + fabs(mean)) ||
          fabs(stats[1] - inv_std) > 1e-4 * inv_std) {
        if (bad++ < 5)
          fprintf(stderr, "layer norm n %d statistics %.9g %.9g, want %.9g %.9g\n", n, stats[0],
                  stats[1], mean, inv_std);
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  /* a NaN or an infinity reaches every output of its row */
  float r[20], o[20], one[20];
  for (int i = 0; i < 20; ++i) r[i] = (float)i, one[i] = 1.0f;
  r[17] = NAN;
  etrt_cpu_layer_norm_f32(r, one, NULL, o, 20, 1e-5f, (float[2]){0});
  CHECK(isnan(o[0]) && isnan(o[19]));
  r[17] = INFINITY;
  etrt_cpu_layer_norm_f32(r, one, NULL, o, 20, 1e-5f, (float[2]){0});
  CHECK(isnan(o[0]) && isnan(o[19]));
}

/* Relu and Clip against their scalar definitions: NaN, signed zeros, infinities, and a
 * Clip whose lo exceeds hi. */
static void test_relu_clip(void) {
  enum { N = 29 };
  float x[N], y[N];
  for (int i = 0; i < N; ++i) x[i] = (float)(i - 14) * 0.37f;
  x[2] = NAN;
  x[3] = -0.0f;
  x[4] = INFINITY;
  x[5] = -INFINITY;
  etrt_cpu_relu_f32(x, y, N);
  for (int i = 0; i < N; ++i) {
    float want = x[i] > 0.0f ? x[i] : 0.0f;
    CHECK(memcmp(&want, &y[i], sizeof want) == 0);
  }
  const float bounds[2][2] = {{-1.0f, 2.5f}, {3.0f, -1.0f}};
  for (int b = 0; b < 2; ++b) {
    float lo = bounds[b][0], hi = bounds[b][1];
    memcpy(y, x, sizeof y);
    etrt_cpu_clip_f32(y, y, N, lo, hi); /* in place */
    for (int i = 0; i < N; ++i) {
      float v = x[i], want = v < lo ? (lo > hi ? hi : lo) : v > hi ? hi : v;
      CHECK((isnan(want) && isnan(y[i])) || memcmp(&want, &y[i], sizeof want) == 0);
    }
  }
}

/* Every function's vector copies and its portable loop, bit for bit: odd lengths, NaN,
 * signed zeros and values across every branch of the approximations. */
static void test_paths_agree(void) {
  enum { N = 1031 };
  static float x[N], z[N], scale[N], bias[N], a[N], b[N];
  for (int i = 0; i < N; ++i) {
    x[i] = sinf((float)i * 0.37f) * 9.0f - (i % 7 == 0 ? 40.0f : 0.0f);
    z[i] = cosf((float)i) * 3.0f;
    scale[i] = 0.5f + (float)(i % 5) * 0.25f;
    bias[i] = (float)(i % 3) - 1.0f;
  }
  x[10] = NAN;
  x[11] = -0.0f;
  int bad = 0;
  for (int f = 0; f < 13; ++f) {
    for (int pass = 0; pass < 2; ++pass) {
      float *out = pass == 0 ? a : b, stats[2];
      etrt_cpu_gemm_isa_limit(pass == 0 ? ETRT_CPU_ISA_AVX512 : ETRT_CPU_ISA_PORTABLE);
      memset(out, 0, sizeof a);
      switch (f) {
        case 0:
          etrt_cpu_sigmoid_f32(x, out, N);
          break;
        case 1:
          etrt_cpu_erf_f32(x, out, N);
          break;
        case 2:
          etrt_cpu_gelu_f32(x, out, N);
          break;
        case 3:
          etrt_cpu_hard_swish_f32(x, out, N);
          break;
        case 4:
          etrt_cpu_relu_f32(x, out, N);
          break;
        case 5:
          etrt_cpu_clip_f32(x, out, N, -2.0f, 5.0f);
          break;
        case 6:
          etrt_cpu_add_f32(x, z, out, N);
          break;
        case 7:
          etrt_cpu_softmax_f32(z, out, 1, N, 0);
          break;
        case 8:
          etrt_cpu_softmax_f32(z, out, 1, N, 1);
          break;
        case 9:
          etrt_cpu_softmax_columns_f32(x, out, 7, 147, 0, 147, 0);
          break;
        case 10:
          etrt_cpu_softmax_columns_f32(z, out, 7, 147, 3, 140, 1);
          break;
        case 11: {
          double sum = 0.0;
          etrt_cpu_sum_f32(z, N, &sum);
          memcpy(out, &sum, sizeof sum);
          break;
        }
        default:
          etrt_cpu_layer_norm_f32(z, scale, bias, out, N, 1e-5f, stats);
          break;
      }
    }
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    if (wrong) fprintf(stderr, "function %d: %d outputs differ between the paths\n", f, wrong);
    bad += wrong;
  }
  etrt_cpu_gemm_isa_limit(ETRT_CPU_ISA_AVX512);
  CHECK_EQ_INT(bad, 0);
}

static void test_add(void) {
  enum { N = 37 };
  float a[N], b[N], y[N + 1];
  for (int i = 0; i < N; ++i) a[i] = (float)i * 0.1f, b[i] = 1.0f / (float)(i + 1);
  y[N] = 7.0f;
  etrt_cpu_add_f32(a, b, y, N);
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += y[i] != a[i] + b[i];
  CHECK_EQ_INT(bad, 0);
  CHECK(y[N] == 7.0f);
  etrt_cpu_add_f32(a, b, a, N); /* in place */
  for (int i = 0; i < N; ++i) bad += a[i] != y[i];
  CHECK_EQ_INT(bad, 0);
}

int main(void) {
  RUN_TEST(test_sigmoid_accuracy);
  RUN_TEST(test_sigmoid_special_values);
  RUN_TEST(test_axpy);
  RUN_TEST(test_erf_accuracy);
  RUN_TEST(test_erf_special_values);
  RUN_TEST(test_gelu_accuracy);
  RUN_TEST(test_hard_swish);
  RUN_TEST(test_softmax_rows);
  RUN_TEST(test_softmax_columns);
  RUN_TEST(test_sum);
  RUN_TEST(test_softmax_special_values);
  RUN_TEST(test_layer_norm_rows);
  RUN_TEST(test_add);
  RUN_TEST(test_relu_clip);
  RUN_TEST(test_paths_agree);
  return TEST_EXIT();
}
