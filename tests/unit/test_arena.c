/* The bump arena every parsed model, graph and program lives in: alignment, zeroing,
 * growth across chunks without moving earlier memory, big requests, and refusal of
 * bad alignments and sizes that overflow. */
#include <stdint.h>

#include "base/arena.h"
#include "test_util.h"

static int aligned(const void *p, size_t alignment) {
  return ((uintptr_t)p & (alignment - 1)) == 0;
}

static void test_alignment_and_zeroing(void) {
  etrt_arena arena;
  etrt_arena_init(&arena);
  size_t alignments[] = {1, 2, 8, 16, 64, 256, 4096};
  for (size_t k = 0; k < sizeof alignments / sizeof alignments[0]; ++k) {
    /* An odd byte first, so that the next start is misaligned unless padded. */
    CHECK(etrt_arena_alloc(&arena, 1, 1) != NULL);
    unsigned char *p = etrt_arena_alloc(&arena, 100, alignments[k]);
    CHECK(p != NULL && aligned(p, alignments[k]));
    int zero = 1;
    for (int i = 0; p != NULL && i < 100; ++i) zero &= p[i] == 0;
    CHECK(zero);
  }
  void *a = etrt_arena_alloc(&arena, 0, 8);
  void *b = etrt_arena_alloc(&arena, 0, 8);
  CHECK(a != NULL && b != NULL && a != b); /* zero bytes: valid, unique */
  etrt_arena_release(&arena);
  CHECK(arena.head == NULL && arena.bytes == 0);
}

static void test_growth_keeps_earlier_memory(void) {
  etrt_arena *arena = etrt_arena_create();
  CHECK(arena != NULL);
  /* Many more bytes than one chunk: every pointer stays valid and keeps its bytes. */
  enum { COUNT = 3000 };
  uint32_t *blocks[COUNT];
  for (uint32_t i = 0; i < COUNT; ++i) {
    blocks[i] = etrt_arena_alloc(arena, 100 * sizeof(uint32_t), 4);
    CHECK(blocks[i] != NULL);
    for (int j = 0; blocks[i] != NULL && j < 100; ++j) blocks[i][j] = i * 100 + (uint32_t)j;
  }
  int intact = 1;
  for (uint32_t i = 0; i < COUNT; ++i)
    for (int j = 0; blocks[i] != NULL && j < 100; ++j)
      intact &= blocks[i][j] == i * 100 + (uint32_t)j;
  CHECK(intact);
  CHECK(arena->bytes >= (size_t)COUNT * 400);
  /* A request larger than a chunk gets its own, and small requests keep working. */
  uint8_t *big = etrt_arena_alloc(arena, (size_t)1 << 20, 64);
  CHECK(big != NULL && aligned(big, 64) && big[0] == 0 && big[((size_t)1 << 20) - 1] == 0);
  char *s = etrt_arena_strdup(arena, "after the big one");
  CHECK(s != NULL && strcmp(s, "after the big one") == 0);
  etrt_arena_destroy(arena);
  etrt_arena_destroy(NULL);
}

static void test_refusals(void) {
  etrt_arena arena;
  etrt_arena_init(&arena);
  CHECK(etrt_arena_alloc(&arena, 8, 0) == NULL);
  CHECK(etrt_arena_alloc(&arena, 8, 3) == NULL);
  CHECK(etrt_arena_alloc(&arena, 8, ETRT_ARENA_MAX_ALIGNMENT * 2) == NULL);
  CHECK(etrt_arena_alloc(&arena, SIZE_MAX, 1) == NULL);
  CHECK(etrt_arena_alloc(&arena, SIZE_MAX - 8, 64) == NULL);
  CHECK(etrt_arena_alloc_uninit(&arena, SIZE_MAX - 20, 16) == NULL);
  CHECK(etrt_arena_alloc_array(&arena, SIZE_MAX / 2, 3, 8) == NULL);
  CHECK(etrt_arena_alloc_array(&arena, 8, SIZE_MAX / 4, 8) == NULL);
  CHECK(etrt_arena_strndup(&arena, "x", SIZE_MAX) == NULL);
  CHECK(arena.bytes == 0); /* nothing refused was counted */
  /* A refusal leaves the arena usable. */
  int64_t *v = etrt_arena_alloc_array(&arena, sizeof *v, 4, 8);
  CHECK(v != NULL && v[3] == 0);
  etrt_arena_release(&arena);
}

static void test_copies(void) {
  etrt_arena arena;
  etrt_arena_init(&arena);
  const int64_t values[3] = {1, -2, 3};
  int64_t *copy = etrt_arena_memdup(&arena, values, sizeof values, 8);
  CHECK(copy != NULL && copy != values && copy[0] == 1 && copy[1] == -2 && copy[2] == 3);
  char *part = etrt_arena_strndup(&arena, "abcdef", 3);
  CHECK(part != NULL && strcmp(part, "abc") == 0);
  char *empty = etrt_arena_strndup(&arena, "", 0);
  CHECK(empty != NULL && empty[0] == '\0');
  char *text = etrt_arena_printf(&arena, "%s_%d", "node", 42);
  CHECK(text != NULL && strcmp(text, "node_42") == 0);
  etrt_arena_release(&arena);
}

int main(void) {
  RUN_TEST(test_alignment_and_zeroing);
  RUN_TEST(test_growth_keeps_earlier_memory);
  RUN_TEST(test_refusals);
  RUN_TEST(test_copies);
  return TEST_EXIT();
}
