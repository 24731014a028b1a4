#include "base/digest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/digest_shani.h"

/* The SHA extensions where the processor has them (digest_shani.c); ETRT_SHA256=portable
 * keeps the portable rounds (tests compare the two). */
static pthread_once_t etrt_sha256_once = PTHREAD_ONCE_INIT;
static int etrt_sha256_use_shani;

static void etrt_sha256_choose(void) {
  const char *choice = getenv("ETRT_SHA256");
  etrt_sha256_use_shani =
      etrt_sha256_shani_available() && !(choice != NULL && strcmp(choice, "portable") == 0);
}

const uint32_t etrt_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t etrt_rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void etrt_sha256_block(uint32_t state[8], const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  }
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = etrt_rotr(w[i - 15], 7) ^ etrt_rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = etrt_rotr(w[i - 2], 17) ^ etrt_rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (etrt_rotr(e, 6) ^ etrt_rotr(e, 11) ^ etrt_rotr(e, 25)) +
                  ((e & f) ^ (~e & g)) + etrt_sha256_k[i] + w[i];
    uint32_t t2 =
        (etrt_rotr(a, 2) ^ etrt_rotr(a, 13) ^ etrt_rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void etrt_sha256_portable_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
  for (size_t i = 0; i < blocks; ++i) etrt_sha256_block(state, data + 64 * i);
}

void etrt_sha256_init(etrt_sha256_ctx *ctx) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(ctx->state, initial, sizeof initial);
  ctx->length = 0;
  ctx->used = 0;
}

void etrt_sha256_update(etrt_sha256_ctx *ctx, const void *data, size_t size) {
  const uint8_t *p = data;
  ctx->length += size;
  pthread_once(&etrt_sha256_once, etrt_sha256_choose);
  while (size > 0) {
    if (ctx->used == 0 && size >= 64) {
      if (etrt_sha256_use_shani) {
        etrt_sha256_shani_blocks(ctx->state, p, size / 64);
        p += size / 64 * 64;
        size %= 64;
      } else {
        etrt_sha256_block(ctx->state, p);
        p += 64;
        size -= 64;
      }
      continue;
    }
    size_t take = 64 - ctx->used < size ? 64 - ctx->used : size;
    memcpy(ctx->block + ctx->used, p, take);
    ctx->used += take;
    p += take;
    size -= take;
    if (ctx->used == 64) {
      if (etrt_sha256_use_shani)
        etrt_sha256_shani_blocks(ctx->state, ctx->block, 1);
      else
        etrt_sha256_block(ctx->state, ctx->block);
      ctx->used = 0;
    }
  }
}

void etrt_sha256_final(etrt_sha256_ctx *ctx, uint8_t out[ETRT_DIGEST_SIZE]) {
  uint64_t bits = ctx->length * 8;
  uint8_t pad = 0x80;
  etrt_sha256_update(ctx, &pad, 1);
  uint8_t zero = 0;
  while (ctx->used != 56) etrt_sha256_update(ctx, &zero, 1);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = (uint8_t)(bits >> (56 - 8 * i));
  etrt_sha256_update(ctx, length, 8);
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = (uint8_t)(ctx->state[i] >> 24);
    out[4 * i + 1] = (uint8_t)(ctx->state[i] >> 16);
    out[4 * i + 2] = (uint8_t)(ctx->state[i] >> 8);
    out[4 * i + 3] = (uint8_t)ctx->state[i];
  }
}

void etrt_sha256(const void *data, size_t size, uint8_t out[ETRT_DIGEST_SIZE]) {
  etrt_sha256_ctx ctx;
  etrt_sha256_init(&ctx);
  etrt_sha256_update(&ctx, data, size);
  etrt_sha256_final(&ctx, out);
}
