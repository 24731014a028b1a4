/* The random generators: RandomUniform, RandomNormal, RandomUniformLike,
 * RandomNormalLike, Bernoulli, Multinomial, and Dropout (whose training mode draws
 * the elements it keeps).
 *
 * Every value is a function of a 64-bit key and the value's position (a counter-based
 * generator: two rounds of the SplitMix64 finalizer over key and counter), so the CPU
 * kernels (cpu/random.c) and the CUDA kernels (cuda/random.cu) draw the same stream
 * and need no state between elements.
 *
 * Seeding: with the `seed` attribute the key comes from the seed alone, and every
 * execute of the program, in any process and on either executor, gives the same
 * values. Without it the key is drawn when the program is loaded (the clock, the
 * process id and a process-wide count) and advanced on each execute, so no two
 * executes, loads or processes repeat a stream; that per-execute advance is host
 * state that a replayed CUDA graph cannot carry, so unseeded generators run on the
 * CPU executor (their cuda_supports refuses them). The builder never folds a
 * generator into a constant (builder/pass_fold.c). */
#ifndef ETRT_ENGINE_OPS_RANDOM_H
#define ETRT_ENGINE_OPS_RANDOM_H

#include <math.h>
#include <stdint.h>

#include "engine/op.h"

typedef struct etrt_random_state {
  uint64_t key;
  int seeded;
  etrt_dtype dtype; /* the output's; ETRT_DTYPE_INVALID: the input's (the *Like ops) */
  double a, b;      /* low and high, or mean and scale */
  int64_t sample_size;
} etrt_random_state;

/* The key of this execute (seeded: the seed's; else the load's key advanced). */
uint64_t etrt_random_key_draw(const etrt_node *node);

#ifdef __CUDACC__
#define ETRT_RANDOM_FN __host__ __device__ static inline
#else
#define ETRT_RANDOM_FN static inline
#endif

ETRT_RANDOM_FN uint64_t etrt_random_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* 64 random bits at position i of the stream `key`. */
ETRT_RANDOM_FN uint64_t etrt_random_bits(uint64_t key, uint64_t i) {
  return etrt_random_mix(etrt_random_mix(key + i * 0x9e3779b97f4a7c15ull) ^ key);
}

/* A uniform value in [0, 1) at position i: 24 bits for float32 outputs (so that the
 * value is exact in float32 and never rounds up to 1), 53 for float64. */
ETRT_RANDOM_FN double etrt_random_uniform(uint64_t key, uint64_t i, int is_double) {
  uint64_t bits = etrt_random_bits(key, i);
  return is_double ? (double)(bits >> 11) * (1.0 / 9007199254740992.0)
                   : (double)(bits >> 40) * (1.0 / 16777216.0);
}

/* A standard normal value at position i (Box-Muller over positions 2i and 2i + 1). */
ETRT_RANDOM_FN double etrt_random_normal(uint64_t key, uint64_t i) {
  double u1 = ((double)(etrt_random_bits(key, 2 * i) >> 11) + 1.0) *
              (1.0 / 9007199254740992.0); /* (0, 1] */
  double u2 = (double)(etrt_random_bits(key, 2 * i + 1) >> 11) * (1.0 / 9007199254740992.0);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

/* Whether training Dropout keeps element i: a uniform draw at or above the ratio
 * (probability 1 - ratio; every element when the ratio is 0). */
ETRT_RANDOM_FN int etrt_random_keep(uint64_t key, uint64_t i, int is_double, double ratio) {
  return etrt_random_uniform(key, i, is_double) >= ratio;
}

/* Sample s of row `row` of Multinomial: a class index drawn with probabilities
 * softmax(logits[0..classes)). */
ETRT_RANDOM_FN int64_t etrt_random_multinomial(uint64_t key, const void *logits, int is_double,
                                               int64_t classes, int64_t row, int64_t samples,
                                               int64_t s) {
  const float *lf = (const float *)logits + row * classes;
  const double *ld = (const double *)logits + row * classes;
  double top = -INFINITY, total = 0.0;
  for (int64_t c = 0; c < classes; ++c) {
    double v = is_double ? ld[c] : (double)lf[c];
    if (v > top) top = v;
  }
  for (int64_t c = 0; c < classes; ++c) total += exp((is_double ? ld[c] : (double)lf[c]) - top);
  double target = etrt_random_uniform(key, (uint64_t)(row * samples + s), 1) * total, sum = 0.0;
  for (int64_t c = 0; c < classes; ++c) {
    sum += exp((is_double ? ld[c] : (double)lf[c]) - top);
    if (target < sum) return c;
  }
  return classes - 1; /* the rounding of the sum left target at its top */
}

#endif
