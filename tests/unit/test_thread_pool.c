/* The thread pool: every item of a loop runs exactly once whatever the range and
 * grain, chunks respect the grain, the per-thread limit holds, nested loops finish,
 * and many threads can run loops at once. Also runs under ThreadSanitizer. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/thread_pool.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "test_util.h"

#define ITEMS 5000

typedef struct visit_ctx {
  atomic_int hits[ITEMS];
  int64_t grain;
  atomic_int bad_chunks;
  atomic_int widest; /* the largest width seen inside a chunk */
} visit_ctx;

static void visit(void *arg, int64_t begin, int64_t end) {
  visit_ctx *v = arg;
  if (begin % v->grain != 0 || end <= begin) atomic_fetch_add(&v->bad_chunks, 1);
  int width = etrt_thread_pool_width();
  if (width > atomic_load(&v->widest)) atomic_store(&v->widest, width);
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&v->hits[i], 1);
}

static visit_ctx ctx;

static void check_each_item_once(int64_t count, int64_t grain) {
  memset(&ctx, 0, sizeof ctx);
  ctx.grain = grain < 1 ? 1 : grain;
  etrt_parallel_for(count, grain, visit, &ctx);
  int wrong = 0;
  for (int64_t i = 0; i < ITEMS; ++i) wrong += atomic_load(&ctx.hits[i]) != (i < count ? 1 : 0);
  if (wrong)
    fprintf(stderr, "count %lld grain %lld: %d items wrong\n", (long long)count, (long long)grain,
            wrong);
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(atomic_load(&ctx.bad_chunks), 0);
  CHECK_EQ_INT(atomic_load(&ctx.widest), count > 0); /* inside a chunk, loops are serial */
}

static void test_ranges_and_grains(void) {
  CHECK_OK(etrt_thread_pool_acquire(4));
  CHECK_EQ_INT(etrt_thread_pool_width(), 4);
  const int64_t counts[] = {0, 1, 2, 7, 63, 64, 65, 1000, ITEMS};
  const int64_t grains[] = {0, 1, 3, 64, 1000, 10000};
  for (size_t c = 0; c < sizeof counts / sizeof *counts; ++c)
    for (size_t g = 0; g < sizeof grains / sizeof *grains; ++g)
      check_each_item_once(counts[c], grains[g]);
  etrt_thread_pool_release();
}

static pthread_t only_thread;
static atomic_int foreign_chunks;
static void note_thread(void *arg, int64_t begin, int64_t end) {
  (void)arg;
  (void)begin;
  (void)end;
  if (!pthread_equal(pthread_self(), only_thread)) atomic_fetch_add(&foreign_chunks, 1);
}

static void test_limit(void) {
  CHECK_OK(etrt_thread_pool_acquire(4));
  int previous = etrt_thread_pool_limit_set(2);
  CHECK_EQ_INT(previous, 0);
  CHECK_EQ_INT(etrt_thread_pool_width(), 2);
  CHECK_EQ_INT(etrt_thread_pool_limit_set(1), 2);
  CHECK_EQ_INT(etrt_thread_pool_width(), 1);
  /* A limit of one keeps every chunk on the calling thread. */
  only_thread = pthread_self();
  atomic_store(&foreign_chunks, 0);
  for (int r = 0; r < 20; ++r) etrt_parallel_for(1000, 1, note_thread, NULL);
  CHECK_EQ_INT(atomic_load(&foreign_chunks), 0);
  CHECK_EQ_INT(etrt_thread_pool_limit_set(0), 1);
  CHECK_EQ_INT(etrt_thread_pool_width(), 4);
  /* Asking for more than the pool has gives what it has. */
  etrt_thread_pool_limit_set(64);
  CHECK_EQ_INT(etrt_thread_pool_width(), 4);
  etrt_thread_pool_limit_set(0);
  etrt_thread_pool_release();
}

static void test_refusals_and_no_pool(void) {
  CHECK_FAILS(etrt_thread_pool_acquire(-1), ETRT_ERROR_INVALID_ARGUMENT, "threads");
  /* Without a pool (every reference released) loops still run, serially. */
  CHECK_EQ_INT(etrt_thread_pool_width(), 1);
  check_each_item_once(ITEMS, 7);
  CHECK(etrt_thread_pool_default_threads() >= 1);
  CHECK_OK(etrt_thread_pool_acquire(0)); /* the default */
  CHECK_EQ_INT(etrt_thread_pool_width(), etrt_thread_pool_default_threads());
  etrt_thread_pool_release();
}

typedef struct nested_ctx {
  atomic_long total;
} nested_ctx;

static void inner(void *arg, int64_t begin, int64_t end) {
  nested_ctx *n = arg;
  atomic_fetch_add(&n->total, (long)(end - begin));
}

static void outer(void *arg, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) etrt_parallel_for(100, 1, inner, arg);
}

static void test_nested(void) {
  CHECK_OK(etrt_thread_pool_acquire(4));
  nested_ctx n;
  atomic_init(&n.total, 0);
  etrt_parallel_for(50, 1, outer, &n);
  CHECK_EQ_INT(atomic_load(&n.total), 50 * 100);
  etrt_thread_pool_release();
}

typedef struct sum_ctx {
  const int *values;
  long partial[64]; /* one per item of the outer range */
} sum_ctx;

static void sum_block(void *arg, int64_t begin, int64_t end) {
  sum_ctx *s = arg;
  for (int64_t b = begin; b < end; ++b) {
    long sum = 0;
    for (int i = 0; i < 1000; ++i) sum += s->values[b * 1000 + i];
    s->partial[b] = sum;
  }
}

static int values[64 * 1000];

static void *caller(void *arg) {
  long *failures = arg;
  etrt_thread_pool_limit_set((int)(*failures % 3) + 1);
  *failures = 0;
  for (int r = 0; r < 200; ++r) {
    sum_ctx s = {.values = values};
    etrt_parallel_for(64, 1 + r % 5, sum_block, &s);
    long total = 0;
    for (int b = 0; b < 64; ++b) total += s.partial[b];
    *failures += total != 64L * 1000 * 999 / 2 + 0;
  }
  return NULL;
}

static void test_concurrent_callers(void) {
  for (int i = 0; i < 64 * 1000; ++i) values[i] = i % 1000;
  CHECK_OK(etrt_thread_pool_acquire(3));
  pthread_t threads[8];
  long failures[8];
  for (int t = 0; t < 8; ++t) {
    failures[t] = t;
    CHECK_EQ_INT(pthread_create(&threads[t], NULL, caller, &failures[t]), 0);
  }
  for (int t = 0; t < 8; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_EQ_INT(failures[t], 0);
  }
  etrt_thread_pool_release();
}

static void test_grows_and_stops(void) {
  CHECK_OK(etrt_thread_pool_acquire(2));
  CHECK_EQ_INT(etrt_thread_pool_width(), 2);
  CHECK_OK(etrt_thread_pool_acquire(6)); /* a second user asks for more: the pool grows */
  CHECK_EQ_INT(etrt_thread_pool_width(), 6);
  check_each_item_once(ITEMS, 5);
  etrt_thread_pool_release();
  CHECK_EQ_INT(etrt_thread_pool_width(), 6); /* still referenced */
  etrt_thread_pool_release();
  CHECK_EQ_INT(etrt_thread_pool_width(), 1);
}

/* Programs loaded and destroyed on several threads at once: references taken while
 * another thread stops the workers still get a working pool. */
static void *churn(void *arg) {
  long *failures = arg;
  for (int r = 0; r < 40; ++r) {
    if (etrt_thread_pool_acquire(2) != ETRT_OK) {
      ++*failures;
      continue;
    }
    sum_ctx s = {.values = values};
    etrt_parallel_for(64, 4, sum_block, &s);
    long total = 0;
    for (int b = 0; b < 64; ++b) total += s.partial[b];
    *failures += total != 64L * 1000 * 999 / 2;
    *failures += etrt_thread_pool_width() < 2;
    etrt_thread_pool_release();
  }
  return NULL;
}

static void test_acquire_release_races(void) {
  for (int i = 0; i < 64 * 1000; ++i) values[i] = i % 1000;
  pthread_t threads[4];
  long failures[4] = {0};
  for (int t = 0; t < 4; ++t)
    CHECK_EQ_INT(pthread_create(&threads[t], NULL, churn, &failures[t]), 0);
  for (int t = 0; t < 4; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_EQ_INT(failures[t], 0);
  }
  CHECK_EQ_INT(etrt_thread_pool_width(), 1);
}

/* Programs start the pool at load, with the threads option, and stop it when the
 * last one is destroyed; a negative count is refused naming the option. */
static void test_programs_own_the_pool(void) {
  const char *path = etrt_test_fixture("pte/add.pte");
  etrt_program *program = NULL;
  etrt_program_options bad = {.threads = -1};
  CHECK_FAILS(etrt_program_load_file(path, &bad, &program), ETRT_ERROR_INVALID_ARGUMENT, "threads");
  CHECK(program == NULL);
  CHECK_EQ_INT(etrt_thread_pool_width(), 1);
  etrt_program_options three = {.threads = 3};
  CHECK_OK(etrt_program_load_file(path, &three, &program));
  if (program == NULL) return;
  CHECK_EQ_INT(etrt_thread_pool_width(), 3);
  etrt_method *method = NULL;
  CHECK_OK(etrt_method_create(program, "forward", &method));
  if (method == NULL) {
    etrt_program_destroy(program);
    return;
  }
  float a = 1.5f, b = 2.0f;
  etrt_tensor_view va = {.data = &a, .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .sizes = {1}};
  etrt_tensor_view vb = {.data = &b, .dtype = ETRT_DTYPE_FLOAT32, .rank = 1, .sizes = {1}};
  CHECK_OK(etrt_method_set_input(method, 0, &va));
  CHECK_OK(etrt_method_set_input(method, 1, &vb));
  CHECK_OK(etrt_method_execute(method));
  etrt_tensor_view out;
  CHECK_OK(etrt_method_get_output(method, 0, &out));
  CHECK(*(const float *)out.data == 3.5f);
  CHECK_EQ_INT(etrt_thread_pool_width(), 3); /* the execute restored this thread's limit */
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  CHECK_EQ_INT(etrt_thread_pool_width(), 1);
}

/* A parallel region as OpenMP's would run it: body on the caller and threads - 1
 * threads of its own, all joined before it returns. */
static atomic_int region_calls, region_threads_most;
typedef struct region_call {
  void (*body)(void *);
  void *data;
} region_call;
static void *region_thread(void *arg) {
  const region_call *call = arg;
  call->body(call->data);
  return NULL;
}
static void fake_region(void (*body)(void *), void *data, unsigned threads, unsigned flags) {
  (void)flags;
  atomic_fetch_add(&region_calls, 1);
  if ((int)threads > atomic_load(&region_threads_most))
    atomic_store(&region_threads_most, (int)threads);
  region_call call = {body, data};
  pthread_t helpers[16];
  unsigned started = 0;
  for (; started + 1 < threads && started < 16; ++started)
    CHECK_EQ_INT(pthread_create(&helpers[started], NULL, region_thread, &call), 0);
  body(data);
  for (unsigned h = 0; h < started; ++h) pthread_join(helpers[h], NULL);
}

/* Loops run on a region's threads once one is set, still each item once, within the
 * pool's width, nested loops serial; threads claimed by other calls are taken off. */
static void test_region(void) {
  CHECK_OK(etrt_thread_pool_acquire(4));
  etrt_thread_pool_region_set(fake_region);
  check_each_item_once(ITEMS, 10);
  check_each_item_once(7, 1);
  check_each_item_once(1, 1); /* one chunk: no region */
  CHECK(atomic_load(&region_calls) >= 2);
  CHECK(atomic_load(&region_threads_most) <= 4);
  /* Another call holds three of the four: this loop gets one thread, no region. */
  CHECK_EQ_INT(etrt_thread_pool_claim(3), 3);
  int calls = atomic_load(&region_calls);
  check_each_item_once(ITEMS, 10);
  CHECK_EQ_INT(atomic_load(&region_calls), calls);
  CHECK_EQ_INT(etrt_thread_pool_claim(4), 1); /* never fewer than one */
  etrt_thread_pool_unclaim(4);
  etrt_thread_pool_unclaim(3);
  CHECK_EQ_INT(etrt_thread_pool_claim(4), 4);
  etrt_thread_pool_unclaim(4);
  etrt_thread_pool_region_set(NULL);
  etrt_thread_pool_release();
}

int main(void) {
  RUN_TEST(test_ranges_and_grains);
  RUN_TEST(test_region);
  RUN_TEST(test_limit);
  RUN_TEST(test_refusals_and_no_pool);
  RUN_TEST(test_nested);
  RUN_TEST(test_concurrent_callers);
  RUN_TEST(test_grows_and_stops);
  RUN_TEST(test_acquire_release_races);
  RUN_TEST(test_programs_own_the_pool);
  return TEST_EXIT();
}
