/* SHA-256 blocks with the x86 SHA extensions, chosen at run time by digest.c where the
 * processor has them: plans are hashed whole when loaded, and the extensions do it
 * several times faster than the portable code. */
#ifndef ETRT_BASE_DIGEST_SHANI_H
#define ETRT_BASE_DIGEST_SHANI_H

#include <stddef.h>
#include <stdint.h>

/* 1 where the processor has the SHA extensions (and SSSE3, SSE4.1) and this build can
 * use them; 0 elsewhere. */
int etrt_sha256_shani_available(void);

/* Runs `blocks` 64-byte blocks of `data` through `state` (big-endian words, as the
 * portable code keeps them). Only where etrt_sha256_shani_available(). */
void etrt_sha256_shani_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
