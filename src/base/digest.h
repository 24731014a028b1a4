/* SHA-256, for the digests that protect plans against corruption. */
#ifndef ETRT_BASE_DIGEST_H
#define ETRT_BASE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define ETRT_DIGEST_SIZE 32

typedef struct etrt_sha256_ctx {
  uint32_t state[8];
  uint64_t length;
  uint8_t block[64];
  size_t used;
} etrt_sha256_ctx;

void etrt_sha256_init(etrt_sha256_ctx *ctx);
void etrt_sha256_update(etrt_sha256_ctx *ctx, const void *data, size_t size);
void etrt_sha256_final(etrt_sha256_ctx *ctx, uint8_t out[ETRT_DIGEST_SIZE]);
void etrt_sha256(const void *data, size_t size, uint8_t out[ETRT_DIGEST_SIZE]);

/* The 64 round constants, shared by the portable rounds and those of the SHA extensions. */
extern const uint32_t etrt_sha256_k[64];

/* The portable rounds over whole 64-byte blocks (the update uses the processor's SHA
 * extensions instead where it has them; tests compare the two). */
void etrt_sha256_portable_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
