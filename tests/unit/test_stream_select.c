/* The caller's stream selection (contract rule 5) and the green-stream entry points
 * (rule 6) on the simulated devices. */
#include <pthread.h>
#include <stdint.h>

#include "device/sim.h"
#include "etrt/stream.h"
#include "test_util.h"

#define STREAM(n) ((void *)(uintptr_t)(0x1000 + (n)))

static void test_nesting(void) {
  void *s = STREAM(99);
  CHECK_EQ_INT(etrt_stream_selected(&s), 0);
  CHECK(s == STREAM(99)); /* left as it was */
  CHECK_OK(etrt_stream_push(STREAM(1)));
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == STREAM(1));
  CHECK_OK(etrt_stream_push(STREAM(2)));
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == STREAM(2));
  CHECK_OK(etrt_stream_pop());
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == STREAM(1));
  CHECK_OK(etrt_stream_pop());
  CHECK_EQ_INT(etrt_stream_selected(NULL), 0);
}

static void test_null_counts_as_selection(void) {
  void *s = STREAM(5);
  CHECK_OK(etrt_stream_push(NULL));
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == NULL);
  CHECK_EQ_INT(etrt_stream_selected(NULL), 1);
  CHECK_OK(etrt_stream_pop());
  CHECK_EQ_INT(etrt_stream_selected(&s), 0);
}

static void test_overflow_and_underflow_refused(void) {
  CHECK_FAILS(etrt_stream_pop(), ETRT_ERROR_STATE, "no stream selection to pop");
  int pushed = 0;
  while (etrt_stream_push(STREAM(pushed)) == ETRT_OK && pushed < 1000) pushed++;
  CHECK_EQ_INT(pushed, 16);
  CHECK_FAILS(etrt_stream_push(STREAM(0)), ETRT_ERROR_STATE, "nested deeper than 16");
  void *s = NULL;
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == STREAM(15)); /* the refused push changed nothing */
  for (int i = 0; i < pushed; i++) CHECK_OK(etrt_stream_pop());
  CHECK_EQ_INT(etrt_stream_selected(NULL), 0);
  CHECK_FAILS(etrt_stream_pop(), ETRT_ERROR_STATE, "no stream selection to pop");
}

static void test_scope_macro(void) {
  void *s = NULL;
  int ran = 0;
  ETRT_STREAM_SCOPE(STREAM(7)) {
    ran++;
    CHECK_EQ_INT(etrt_stream_selected(&s), 1);
    CHECK(s == STREAM(7));
    ETRT_STREAM_SCOPE(NULL) {
      CHECK_EQ_INT(etrt_stream_selected(&s), 1);
      CHECK(s == NULL);
    }
    CHECK_EQ_INT(etrt_stream_selected(&s), 1);
    CHECK(s == STREAM(7));
  }
  CHECK_EQ_INT(ran, 1);
  CHECK_EQ_INT(etrt_stream_selected(NULL), 0);

  /* A scope whose push is refused skips its block and pops nothing. */
  for (int i = 0; i < 16; i++) CHECK_OK(etrt_stream_push(STREAM(i)));
  ran = 0;
  ETRT_STREAM_SCOPE(STREAM(100)) { ran++; }
  CHECK_EQ_INT(ran, 0);
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == STREAM(15));
  for (int i = 0; i < 16; i++) CHECK_OK(etrt_stream_pop());
}

typedef struct thread_args {
  void *stream;
  int saw_selection_at_start;
  int saw_own;
} thread_args;

static pthread_barrier_t barrier;

static void *select_thread(void *arg) {
  thread_args *a = arg;
  a->saw_selection_at_start = etrt_stream_selected(NULL);
  etrt_stream_push(a->stream);
  pthread_barrier_wait(&barrier); /* both threads hold a selection now */
  void *s = NULL;
  a->saw_own = etrt_stream_selected(&s) == 1 && s == a->stream;
  pthread_barrier_wait(&barrier);
  etrt_stream_pop();
  return NULL;
}

static void test_per_thread_independence(void) {
  CHECK_OK(etrt_stream_push(STREAM(42)));
  pthread_barrier_init(&barrier, NULL, 2);
  thread_args a = {STREAM(1), -1, 0}, b = {STREAM(2), -1, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, select_thread, &a);
  pthread_create(&tb, NULL, select_thread, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&barrier);
  CHECK_EQ_INT(a.saw_selection_at_start, 0); /* the main thread's selection is its own */
  CHECK_EQ_INT(b.saw_selection_at_start, 0);
  CHECK(a.saw_own);
  CHECK(b.saw_own);
  void *s = NULL;
  CHECK_EQ_INT(etrt_stream_selected(&s), 1);
  CHECK(s == STREAM(42));
  CHECK_OK(etrt_stream_pop());
}

static void test_green_stream_entry_points(void) {
  void *stream = NULL;
  int granted = 0;
  /* No devices at all. */
  CHECK_OK(etrt_device_select_sim(0));
  setenv("ETRT_DEVICE", "cpu", 1);
  CHECK_OK(etrt_device_select_sim(0)); /* forget any cached choice */
  CHECK_FAILS(etrt_green_stream_create(0, 16, &stream, &granted), ETRT_ERROR_UNSUPPORTED, "no GPU");
  CHECK_FAILS(etrt_green_stream_destroy(STREAM(1)), ETRT_ERROR_UNSUPPORTED, "no GPU");
  unsetenv("ETRT_DEVICE");

  CHECK_OK(etrt_device_select_sim(2));
  CHECK_FAILS(etrt_green_stream_create(2, 16, &stream, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "device 2 out of range (2 sim devices)");
  CHECK_FAILS(etrt_green_stream_create(-1, 16, &stream, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "out of range");
  CHECK_FAILS(etrt_green_stream_create(0, 0, &stream, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "sm_count 0 out of range (sim:0 has 132 SMs)");
  CHECK_FAILS(etrt_green_stream_create(0, 133, &stream, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "sm_count 133");
  CHECK_FAILS(etrt_green_stream_create(0, 130, &stream, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "etrt_green_stream_create: sim green_stream_create");
  CHECK_FAILS(etrt_green_stream_create(0, 16, NULL, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "NULL stream");
  CHECK_FAILS(etrt_green_stream_create(0, 16, &stream, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "NULL granted_sms");
  CHECK_FAILS(etrt_green_stream_destroy(NULL), ETRT_ERROR_INVALID_ARGUMENT, "NULL stream");

  CHECK_OK(etrt_green_stream_create(1, 12, &stream, &granted));
  CHECK_EQ_INT(granted, 16);
  CHECK_EQ_INT(etrt_sim_stream_sm_count(stream), 16);
  int device = -1;
  CHECK_OK(etrt_device_sim_driver()->stream_device(stream, &device));
  CHECK_EQ_INT(device, 1);
  CHECK_OK(etrt_green_stream_destroy(stream));
  CHECK_FAILS(etrt_green_stream_destroy(stream), ETRT_ERROR_INVALID_ARGUMENT, "not a live stream");
  CHECK_OK(etrt_device_select_sim(0));
}

int main(void) {
  RUN_TEST(test_nesting);
  RUN_TEST(test_null_counts_as_selection);
  RUN_TEST(test_overflow_and_underflow_refused);
  RUN_TEST(test_scope_macro);
  RUN_TEST(test_per_thread_independence);
  RUN_TEST(test_green_stream_entry_points);
  return TEST_EXIT();
}
