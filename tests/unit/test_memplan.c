/* The memory planner shared by the builder and the engine: no two tensors alive at
 * the same step overlap, space is reused between tensors that are never alive
 * together, offsets honour the alignment, totals are the ends of the last tensors,
 * and bad input is refused. */
#include <stdint.h>

#include "base/memplan.h"
#include "test_util.h"

/* Checks the invariants of a placement: alignment, no overlap of live tensors of one
 * buffer, every tensor inside its buffer's size. */
static void check_plan(const etrt_memplan_interval *t, uint32_t count, uint64_t alignment,
                       const uint64_t *sizes) {
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t ni = (t[i].size + alignment - 1) / alignment * alignment;
    CHECK(t[i].offset % alignment == 0);
    CHECK(t[i].offset + ni <= sizes[t[i].buffer]);
    for (uint32_t j = i + 1; j < count; ++j) {
      if (t[i].buffer != t[j].buffer || t[i].last < t[j].first || t[j].last < t[i].first) continue;
      uint64_t nj = (t[j].size + alignment - 1) / alignment * alignment;
      if (ni == 0 || nj == 0) continue;
      int apart = t[i].offset + ni <= t[j].offset || t[j].offset + nj <= t[i].offset;
      if (!apart) etrt_test_fail(__FILE__, __LINE__, "tensors %u and %u overlap", i, j);
    }
  }
}

static void test_reuse_and_buffers(void) {
  etrt_memplan_interval t[4] = {
      {.size = 100, .buffer = 1, .first = 0, .last = 1}, /* a */
      {.size = 64, .buffer = 1, .first = 1, .last = 2},  /* b: overlaps a */
      {.size = 100, .buffer = 1, .first = 2, .last = 3}, /* c: overlaps b, not a: a's place */
      {.size = 10, .buffer = 2, .first = 0, .last = 3},  /* another buffer */
  };
  uint64_t sizes[3] = {7, 7, 7};
  CHECK_OK(etrt_memplan_place(t, 4, 64, sizes, 3));
  CHECK_EQ_INT(t[0].offset, 0);
  CHECK_EQ_INT(t[2].offset, 0);
  CHECK_EQ_INT(t[1].offset, 128);
  CHECK_EQ_INT(t[3].offset, 0);
  CHECK_EQ_INT(sizes[0], 0);
  CHECK_EQ_INT(sizes[1], 192);
  CHECK_EQ_INT(sizes[2], 64);
  check_plan(t, 4, 64, sizes);
}

static void test_lifetimes_are_inclusive(void) {
  /* b starts at the step a ends: both are alive then, so they must not share. */
  etrt_memplan_interval t[2] = {{.size = 32, .first = 0, .last = 2},
                                {.size = 32, .first = 2, .last = 4}};
  uint64_t size;
  CHECK_OK(etrt_memplan_place(t, 2, 16, &size, 1));
  CHECK_EQ_INT(size, 64);
  check_plan(t, 2, 16, &size);
  /* One step later they are never alive together and share the place. */
  t[1].first = 3;
  CHECK_OK(etrt_memplan_place(t, 2, 16, &size, 1));
  CHECK_EQ_INT(size, 32);
  CHECK_EQ_INT(t[0].offset, t[1].offset);
}

static void test_alignment_and_gaps(void) {
  /* A chain of tensors each alive for two steps, of odd sizes: every offset is
   * aligned, the peak is two tensors at a time, and a small tensor fills a gap. */
  enum { N = 40 };
  etrt_memplan_interval t[N + 1];
  for (uint32_t i = 0; i < N; ++i)
    t[i] = (etrt_memplan_interval){.size = 1000 + 7 * i, .first = i, .last = i + 1};
  t[N] = (etrt_memplan_interval){.size = 0, .first = 0, .last = N}; /* takes no room */
  uint64_t size;
  CHECK_OK(etrt_memplan_place(t, N + 1, 256, &size, 1));
  check_plan(t, N + 1, 256, &size);
  CHECK(size <= 3 * 1536); /* reuse: far less than the 40 tensors' sum */
  CHECK(size >= 2 * 1024);
  /* The same input gives the same plan. */
  etrt_memplan_interval again[N + 1];
  memcpy(again, t, sizeof t);
  for (uint32_t i = 0; i <= N; ++i) again[i].offset = 12345;
  uint64_t size2;
  CHECK_OK(etrt_memplan_place(again, N + 1, 256, &size2, 1));
  CHECK_EQ_INT(size2, size);
  int same = 1;
  for (uint32_t i = 0; i <= N; ++i) same &= again[i].offset == t[i].offset;
  CHECK(same);
}

static void test_largest_first(void) {
  /* All alive together: the largest goes first at 0, ties keep index order. */
  etrt_memplan_interval t[3] = {{.size = 10, .first = 0, .last = 0},
                                {.size = 500, .first = 0, .last = 0},
                                {.size = 10, .first = 0, .last = 0}};
  uint64_t size;
  CHECK_OK(etrt_memplan_place(t, 3, 8, &size, 1));
  CHECK_EQ_INT(t[1].offset, 0);
  CHECK_EQ_INT(t[0].offset, 504);
  CHECK_EQ_INT(t[2].offset, 520);
  CHECK_EQ_INT(size, 536);
}

/* Random lifetimes, sizes and buffers (a fixed seed): the invariants hold, and each
 * buffer is no larger than the sum of its tensors (reuse never costs room). */
static void test_random_plans(void) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  enum { N = 300 };
  static etrt_memplan_interval t[N];
  for (int round = 0; round < 20; ++round) {
    uint64_t sum[3] = {0, 0, 0};
    for (uint32_t i = 0; i < N; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t r = state >> 11;
      int64_t first = (int64_t)(r % 200);
      t[i] = (etrt_memplan_interval){.size = (r >> 8) % 5000,
                                     .buffer = (uint32_t)((r >> 24) % 3),
                                     .first = first,
                                     .last = first + (int64_t)((r >> 32) % 30)};
      sum[t[i].buffer] += (t[i].size + 63) / 64 * 64;
    }
    uint64_t sizes[3];
    CHECK_OK(etrt_memplan_place(t, N, 64, sizes, 3));
    check_plan(t, N, 64, sizes);
    for (int b = 0; b < 3; ++b) CHECK(sizes[b] <= sum[b]);
  }
}

/* Random tensors, then one single-step scratch per step in a later pass (an engine's
 * per-node workspaces): the tensors' places are those they get alone, and the buffer
 * grows by at most the largest scratch, since each scratch meets only tensors (at most
 * one scratch per step) and fits above them. */
static void test_random_scratch_pass(void) {
  uint64_t state = 0x2545f4914f6cdd1dull;
  enum { N = 200, STEPS = 100 };
  static etrt_memplan_interval t[N + STEPS];
  static uint64_t alone[N];
  for (int round = 0; round < 20; ++round) {
    for (uint32_t i = 0; i < N + STEPS; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t r = state >> 11;
      int64_t first = i < N ? (int64_t)(r % STEPS) : (int64_t)(i - N);
      t[i] = (etrt_memplan_interval){.size = (r >> 8) % (i < N ? 5000 : 12000),
                                     .first = first,
                                     .last = i < N ? first + (int64_t)((r >> 32) % 20) : first,
                                     .pass = i >= N};
    }
    uint64_t tensors_only, with_scratch, largest = 0;
    CHECK_OK(etrt_memplan_place(t, N, 64, &tensors_only, 1));
    for (uint32_t i = 0; i < N; ++i) alone[i] = t[i].offset;
    CHECK_OK(etrt_memplan_place(t, N + STEPS, 64, &with_scratch, 1));
    check_plan(t, N + STEPS, 64, &with_scratch);
    for (uint32_t i = 0; i < N; ++i) CHECK_EQ_INT(t[i].offset, alone[i]);
    for (uint32_t i = N; i < N + STEPS; ++i)
      if ((t[i].size + 63) / 64 * 64 > largest) largest = (t[i].size + 63) / 64 * 64;
    CHECK(with_scratch <= tensors_only + largest);
  }
}

static void test_empty_and_refusals(void) {
  uint64_t sizes[2] = {9, 9};
  CHECK_OK(etrt_memplan_place(NULL, 0, 64, sizes, 2));
  CHECK(sizes[0] == 0 && sizes[1] == 0);
  etrt_memplan_interval t = {.size = 8, .buffer = 0, .first = 0, .last = 0};
  CHECK_FAILS(etrt_memplan_place(&t, 1, 0, sizes, 1), ETRT_ERROR_INVALID_ARGUMENT, "alignment 0");
  CHECK_FAILS(etrt_memplan_place(&t, 1, 48, sizes, 1), ETRT_ERROR_INVALID_ARGUMENT, "power of two");
  t.buffer = 2;
  CHECK_FAILS(etrt_memplan_place(&t, 1, 64, sizes, 2), ETRT_ERROR_INVALID_ARGUMENT, "buffer 2");
  t.buffer = 0;
  t.first = 5;
  t.last = 4;
  CHECK_FAILS(etrt_memplan_place(&t, 1, 64, sizes, 1), ETRT_ERROR_INVALID_ARGUMENT,
              "before it starts");
  t.first = 0;
  t.size = UINT64_MAX - 10;
  CHECK_FAILS(etrt_memplan_place(&t, 1, 64, sizes, 1), ETRT_ERROR_UNSUPPORTED, "too large");
  t.size = (uint64_t)INT64_MAX - 10; /* rounding up passes 2^63 */
  CHECK_FAILS(etrt_memplan_place(&t, 1, 64, sizes, 1), ETRT_ERROR_UNSUPPORTED, "too large");
  /* Two tensors that fit alone but not side by side. */
  etrt_memplan_interval two[2] = {{.size = (uint64_t)1 << 62, .first = 0, .last = 1},
                                  {.size = (uint64_t)1 << 62, .first = 1, .last = 2}};
  CHECK_FAILS(etrt_memplan_place(two, 2, 64, sizes, 1), ETRT_ERROR_UNSUPPORTED, "exceeds 2^63");
  two[1].first = 2; /* never alive together: they share, and the plan fits */
  two[0].last = 1;
  CHECK_OK(etrt_memplan_place(two, 2, 64, sizes, 1));
  CHECK(sizes[0] == (uint64_t)1 << 62);
}

static void test_later_pass_fills_gaps(void) {
  /* Short-lived scratch (t[3], alive at step 1 only) larger than every tensor: placed
   * among them by size it takes offset 0 and pushes a up (288 bytes in all); in a
   * later pass it lands in the room b and c leave free before step 3. */
  etrt_memplan_interval t[4] = {
      {.size = 96, .first = 0, .last = 3},
      {.size = 64, .first = 3, .last = 3},
      {.size = 96, .first = 3, .last = 3},
      {.size = 128, .first = 1, .last = 1},
  };
  uint64_t size;
  CHECK_OK(etrt_memplan_place(t, 4, 32, &size, 1));
  CHECK_EQ_INT(size, 288);
  CHECK_EQ_INT(t[3].offset, 0);
  check_plan(t, 4, 32, &size);
  t[3].pass = 1;
  CHECK_OK(etrt_memplan_place(t, 4, 32, &size, 1));
  CHECK_EQ_INT(size, 256);
  CHECK_EQ_INT(t[0].offset, 0);
  CHECK_EQ_INT(t[3].offset, 96);
  check_plan(t, 4, 32, &size);
}

int main(void) {
  RUN_TEST(test_reuse_and_buffers);
  RUN_TEST(test_lifetimes_are_inclusive);
  RUN_TEST(test_alignment_and_gaps);
  RUN_TEST(test_largest_first);
  RUN_TEST(test_later_pass_fills_gaps);
  RUN_TEST(test_random_plans);
  RUN_TEST(test_random_scratch_pass);
  RUN_TEST(test_empty_and_refusals);
  return TEST_EXIT();
}
