/* SHA-256 rounds with the SHA extensions (digest_shani.h). The instructions keep the
 * state as two vectors, ABEF and CDGH; each sha256rnds2 does two rounds, so a group of
 * four message words takes two of them, and sha256msg1/msg2 extend the schedule. */
#include "base/digest_shani.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <cpuid.h>
#include <immintrin.h>

#include "base/digest.h"

int etrt_sha256_shani_available(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  int ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return ssse3 && sse41 && ((b >> 29) & 1);
}

__attribute__((target("sha,sse4.1,ssse3"))) void etrt_sha256_shani_blocks(uint32_t state[8],
                                                                          const uint8_t *data,
                                                                          size_t blocks) {
  /* Each 32-bit word of the message is big-endian. */
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
  __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (size_t block = 0; block < blocks; ++block, data += 64) {
    __m128i abef_start = abef, cdgh_start = cdgh, w[4];
    for (int i = 0; i < 4; ++i)
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), byte_swap);
    for (int group = 0; group < 16; ++group) {
      __m128i words =
          _mm_add_epi32(w[group & 3], _mm_loadu_si128((const __m128i *)&etrt_sha256_k[4 * group]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, words);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(words, 0x0E));
      if (group < 12) {
        /* Words 4 groups on: W[t-16] + s0(W[t-15]) + W[t-7], then s1 of the last two. */
        __m128i next = _mm_sha256msg1_epu32(w[group & 3], w[(group + 1) & 3]);
        next = _mm_add_epi32(next, _mm_alignr_epi8(w[(group + 3) & 3], w[(group + 2) & 3], 4));
        w[group & 3] = _mm_sha256msg2_epu32(next, w[(group + 3) & 3]);
      }
    }
    abef = _mm_add_epi32(abef, abef_start);
    cdgh = _mm_add_epi32(cdgh, cdgh_start);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

#else

int etrt_sha256_shani_available(void) { return 0; }

void etrt_sha256_shani_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
  (void)state, (void)data, (void)blocks;
}

#endif
