/* CUDA graphs in the CUDA executor: a run is captured once per shape set and replayed;
 * new I/O addresses update the instantiated graph instead of instantiating another;
 * outputs stay right through shape and address changes, on a green-context stream, and
 * with ETRT_CUDA_GRAPHS=0 (live launches). Skips without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "device/device.h"
#include "engine/executor_cuda.h"
#include "etrt/method.h"
#include "etrt/program.h"
#include "etrt/stream.h"
#include "test_programs.h"
#include "test_util.h"

#define IN 64
#define HIDDEN 128
#define OUT 16
#define MAX_BATCH 32
#define TOLERANCE 1e-4

static const etrt_device_driver *d;

typedef struct buffers {
  void *x[2], *y[2];
} buffers;

static void buffers_open(buffers *b) {
  for (int i = 0; i < 2; ++i) {
    CHECK_OK(d->malloc_device(MAX_BATCH * IN * sizeof(float), &b->x[i]));
    CHECK_OK(d->malloc_device(MAX_BATCH * OUT * sizeof(float), &b->y[i]));
  }
}

static void buffers_close(buffers *b) {
  for (int i = 0; i < 2; ++i) {
    d->free_device(b->x[i]);
    d->free_device(b->y[i]);
  }
}

/* One execute of `batch` rows from buffer pair `which` on `stream`; 1 when the output
 * matches the reference (the output is poisoned first, so unwritten rows fail). */
static int run_once(etrt_test_mlp_fixture *f, buffers *b, int which, int64_t batch, int salt,
                    etrt_stream stream) {
  float x[MAX_BATCH * IN], y[MAX_BATCH * OUT], want[MAX_BATCH * OUT];
  etrt_test_mlp_fill_input(x, batch, IN, salt);
  size_t in_bytes = (size_t)(batch * IN) * sizeof(float);
  size_t out_bytes = (size_t)(batch * OUT) * sizeof(float);
  if (d->memcpy_async(b->x[which], x, in_bytes, ETRT_COPY_HOST_TO_DEVICE, stream) != ETRT_OK ||
      d->memset_async(b->y[which], 0xff, out_bytes, stream) != ETRT_OK)
    return 0;
  etrt_tensor_view vx = {b->x[which], ETRT_DTYPE_FLOAT32, 2, {batch, IN}};
  etrt_status s = etrt_method_set_input(f->method, 0, &vx);
  if (s == ETRT_OK)
    s = etrt_method_set_output(f->method, 0, b->y[which], MAX_BATCH * OUT * sizeof(float));
  ETRT_STREAM_SCOPE(stream) {
    if (s == ETRT_OK) s = etrt_method_execute(f->method);
  }
  if (s == ETRT_OK)
    s = d->memcpy_async(y, b->y[which], out_bytes, ETRT_COPY_DEVICE_TO_HOST, stream);
  if (s == ETRT_OK) s = d->stream_synchronize(stream);
  if (s != ETRT_OK) {
    fprintf(stderr, "run_once: %s\n", etrt_last_error());
    return 0;
  }
  etrt_test_mlp_reference(&f->mlp, x, batch, want);
  return etrt_test_max_diff(y, want, (size_t)(batch * OUT)) < TOLERANCE;
}

static etrt_cuda_graph_counters counters(void) {
  etrt_cuda_graph_counters c;
  etrt_executor_cuda_graph_counters(&c);
  return c;
}

static void test_replays_reuse_the_graph(void) {
  etrt_test_mlp_fixture f;
  CHECK(etrt_test_mlp_fixture_open(&f, IN, HIDDEN, OUT, MAX_BATCH,
                                   (etrt_device){ETRT_DEVICE_CUDA, 0}, "graph_replay", 11));
  buffers b;
  buffers_open(&b);
  etrt_stream stream;
  CHECK_OK(d->stream_create(&stream));
  etrt_cuda_graph_counters c0 = counters();
  CHECK(run_once(&f, &b, 0, 8, 1, stream));
  etrt_cuda_graph_counters c1 = counters();
  CHECK_EQ_INT((int)(c1.instantiations - c0.instantiations), 1);
  CHECK_EQ_INT((int)(c1.replays - c0.replays), 1);
  /* Same shapes and addresses, new input values: replays only. */
  for (int i = 0; i < 20; ++i) CHECK(run_once(&f, &b, 0, 8, 100 + i, stream));
  etrt_cuda_graph_counters c2 = counters();
  CHECK_EQ_INT((int)(c2.instantiations - c1.instantiations), 0);
  CHECK_EQ_INT((int)(c2.captures - c1.captures), 0);
  CHECK_EQ_INT((int)(c2.replays - c1.replays), 20);
  /* New I/O addresses: the instantiated graph is updated, not replaced. */
  CHECK(run_once(&f, &b, 1, 8, 200, stream));
  CHECK(run_once(&f, &b, 0, 8, 201, stream));
  etrt_cuda_graph_counters c3 = counters();
  CHECK_EQ_INT((int)(c3.instantiations - c2.instantiations), 0);
  CHECK_EQ_INT((int)(c3.updates - c2.updates), 2);
  CHECK_EQ_INT((int)(c3.replays - c2.replays), 2);
  /* A new shape set is a graph of its own; going back to one seen replays it. */
  CHECK(run_once(&f, &b, 0, 3, 300, stream));
  CHECK(run_once(&f, &b, 0, 8, 301, stream));
  CHECK(run_once(&f, &b, 0, 3, 302, stream));
  etrt_cuda_graph_counters c4 = counters();
  CHECK_EQ_INT((int)(c4.instantiations - c3.instantiations), 1);
  CHECK_EQ_INT((int)(c4.captures - c3.captures), 1);
  CHECK_EQ_INT((int)(c4.replays - c3.replays), 3);
  printf("graphs: %llu captures, %llu instantiations, %llu updates, %llu replays\n",
         (unsigned long long)(c4.captures - c0.captures),
         (unsigned long long)(c4.instantiations - c0.instantiations),
         (unsigned long long)(c4.updates - c0.updates),
         (unsigned long long)(c4.replays - c0.replays));
  etrt_test_mlp_fixture_close(&f);
  d->stream_destroy(stream);
  buffers_close(&b);
}

/* More shape sets than the cache holds, with addresses alternating: every output is
 * right whichever graph (or replacement) runs it. */
static void test_changing_shapes_and_addresses(void) {
  etrt_test_mlp_fixture f;
  CHECK(etrt_test_mlp_fixture_open(&f, IN, HIDDEN, OUT, MAX_BATCH,
                                   (etrt_device){ETRT_DEVICE_CUDA, 0}, "graph_shapes", 12));
  buffers b;
  buffers_open(&b);
  etrt_stream stream;
  CHECK_OK(d->stream_create(&stream));
  const int64_t batches[] = {1, 32, 7, 1, 16, 2, 32, 5, 9, 1};
  int wrong = 0;
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; ++i)
      wrong += !run_once(&f, &b, (int)(i + round) % 2, batches[i], round * 100 + (int)i, stream);
  CHECK_EQ_INT(wrong, 0);
  /* The per-thread default stream is captured too. */
  etrt_cuda_graph_counters c0 = counters();
  for (int i = 0; i < 3; ++i) CHECK(run_once(&f, &b, 1, 4, 500 + i, ETRT_STREAM_PER_THREAD));
  etrt_cuda_graph_counters c1 = counters();
  CHECK_EQ_INT((int)(c1.replays - c0.replays), 3);
  etrt_test_mlp_fixture_close(&f);
  d->stream_destroy(stream);
  buffers_close(&b);
}

/* Green-context streams, one after another: a stream (and its context) destroyed and
 * another made, perhaps at the same address, never replays the old one's graph. */
static void test_green_context_stream(void) {
  etrt_test_mlp_fixture f;
  CHECK(etrt_test_mlp_fixture_open(&f, IN, HIDDEN, OUT, MAX_BATCH,
                                   (etrt_device){ETRT_DEVICE_CUDA, 0}, "graph_green", 13));
  buffers b;
  buffers_open(&b);
  for (int round = 0; round < 3; ++round) {
    void *green = NULL;
    int granted = 0;
    CHECK_OK(etrt_green_stream_create(0, 16 << round, &green, &granted));
    if (green == NULL) {
      printf("no green contexts on this GPU; skipped\n");
      break;
    }
    etrt_cuda_graph_counters c0 = counters();
    for (int i = 0; i < 5; ++i) CHECK(run_once(&f, &b, i % 2, 1 + 3 * i, round * 10 + i, green));
    for (int i = 0; i < 5; ++i) CHECK(run_once(&f, &b, 0, 6, round * 10 + 5 + i, green));
    etrt_cuda_graph_counters c1 = counters();
    CHECK_EQ_INT((int)(c1.replays - c0.replays), 10);
    /* The same run as last round's, on a new stream: captured anew. */
    CHECK(round == 0 || c1.captures > c0.captures);
    CHECK_OK(etrt_green_stream_destroy(green));
  }
  etrt_test_mlp_fixture_close(&f);
  buffers_close(&b);
}

static void test_graphs_off_by_environment(void) {
  setenv("ETRT_CUDA_GRAPHS", "0", 1);
  etrt_test_mlp_fixture f;
  CHECK(etrt_test_mlp_fixture_open(&f, IN, HIDDEN, OUT, MAX_BATCH,
                                   (etrt_device){ETRT_DEVICE_CUDA, 0}, "graph_off", 14));
  buffers b;
  buffers_open(&b);
  etrt_cuda_graph_counters c0 = counters();
  for (int i = 0; i < 4; ++i) CHECK(run_once(&f, &b, i % 2, 1 + i, i, ETRT_STREAM_PER_THREAD));
  etrt_cuda_graph_counters c1 = counters();
  CHECK_EQ_INT((int)(c1.captures - c0.captures), 0);
  CHECK_EQ_INT((int)(c1.replays - c0.replays), 0);
  etrt_test_mlp_fixture_close(&f);
  buffers_close(&b);
  unsetenv("ETRT_CUDA_GRAPHS");
}

int main(void) {
  d = etrt_device_driver_get();
  if (d == NULL || strcmp(d->name, "cuda") != 0) {
    printf("no GPU: the CUDA graph tests need an NVIDIA GPU; skipped\n");
    return 0;
  }
  RUN_TEST(test_replays_reuse_the_graph);
  RUN_TEST(test_changing_shapes_and_addresses);
  RUN_TEST(test_green_context_stream);
  RUN_TEST(test_graphs_off_by_environment);
  return TEST_EXIT();
}
