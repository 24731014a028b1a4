/* The simulated devices: every behaviour the contract tests rely on. */
#include <pthread.h>
#include <stdint.h>

#include "device/sim.h"
#include "test_util.h"

static const etrt_device_driver *d;

static void setup(int count) {
  CHECK_OK(etrt_device_select_sim(count));
  d = etrt_device_driver_get();
  CHECK(d == etrt_device_sim_driver());
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char value) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != value) return 0;
  }
  return 1;
}

static void test_selection_and_devices(void) {
  setup(3);
  CHECK(strcmp(d->name, "sim") == 0);
  CHECK_EQ_INT(d->device_count(), 3);
  int device = -1;
  CHECK_OK(d->get_device(&device));
  CHECK_EQ_INT(device, 0);
  CHECK_OK(d->set_device(2));
  CHECK_OK(d->get_device(&device));
  CHECK_EQ_INT(device, 2);
  CHECK_FAILS(d->set_device(3), ETRT_ERROR_INVALID_ARGUMENT, "out of range");
  CHECK_FAILS(d->set_device(-1), ETRT_ERROR_INVALID_ARGUMENT, "out of range");
  CHECK_FAILS(etrt_device_select_sim(ETRT_SIM_MAX_DEVICES + 1), ETRT_ERROR_INVALID_ARGUMENT, "0..");

  etrt_device_attributes a;
  CHECK_OK(d->attributes(1, &a));
  CHECK_EQ_INT(a.integrated, 0);
  CHECK_EQ_INT(a.pageable_memory_access, 0);
  CHECK_EQ_INT(a.compute_major, 9);
  CHECK_EQ_INT(a.compute_minor, 0);
  CHECK_EQ_INT(a.sm_count, 132);
  CHECK(a.total_memory > 0);
  CHECK_FAILS(d->attributes(5, &a), ETRT_ERROR_INVALID_ARGUMENT, "device 5");
  a.integrated = 1;
  a.pageable_memory_access = 1;
  a.sm_count = 16;
  etrt_sim_set_attributes(1, &a);
  etrt_device_attributes b;
  CHECK_OK(d->attributes(1, &b));
  CHECK_EQ_INT(b.integrated, 1);
  CHECK_EQ_INT(b.pageable_memory_access, 1);
  CHECK_EQ_INT(b.sm_count, 16);
  CHECK_OK(d->attributes(0, &b));
  CHECK_EQ_INT(b.integrated, 0);

  /* The current device is per thread, and a reset forgets it. */
  CHECK_OK(etrt_device_select_sim(2));
  CHECK_OK(d->get_device(&device));
  CHECK_EQ_INT(device, 0);

  /* Off: no devices, every call refused. */
  CHECK_OK(etrt_device_select_sim(0));
  CHECK(etrt_device_driver_get() != etrt_device_sim_driver());
  CHECK_EQ_INT(etrt_device_sim_driver()->device_count(), 0);
  void *p = NULL;
  CHECK_FAILS(etrt_device_sim_driver()->malloc_device(16, &p), ETRT_ERROR_STATE,
              "no simulated devices");
}

static void *current_device_thread(void *arg) {
  int *seen = arg;
  d->get_device(seen);
  return NULL;
}

static void test_current_device_per_thread(void) {
  setup(2);
  CHECK_OK(d->set_device(1));
  int seen = -1;
  pthread_t t;
  pthread_create(&t, NULL, current_device_thread, &seen);
  pthread_join(t, NULL);
  CHECK_EQ_INT(seen, 0);
  int device = -1;
  CHECK_OK(d->get_device(&device));
  CHECK_EQ_INT(device, 1);
}

static void test_memory_classification(void) {
  setup(2);
  void *d0 = NULL, *d1 = NULL, *pinned = NULL, *managed = NULL;
  CHECK_OK(d->malloc_device(256, &d0));
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->malloc_device(128, &d1));
  CHECK_OK(d->malloc_managed(64, &managed));
  CHECK_OK(d->malloc_pinned(32, &pinned));
  CHECK(d0 != d1);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 256 + 128 + 64 + 32);

  etrt_pointer_info info;
  CHECK_OK(d->pointer_info(d0, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_EQ_INT(info.device, 0);
  CHECK_OK(d->pointer_info((char *)d0 + 255, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_EQ_INT(info.device, 0);
  CHECK_OK(d->pointer_info((char *)d1 + 100, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_EQ_INT(info.device, 1);
  CHECK_OK(d->pointer_info(managed, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_MANAGED);
  CHECK_EQ_INT(info.device, 1);
  CHECK_OK(d->pointer_info(pinned, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PINNED_HOST);
  CHECK_EQ_INT(info.device, -1);
  int stack_value = 0;
  CHECK_OK(d->pointer_info(&stack_value, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PAGEABLE_HOST);
  CHECK_EQ_INT(info.device, -1);
  CHECK_OK(d->pointer_info(NULL, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PAGEABLE_HOST);

  /* Fresh memory is poisoned, so an output never written shows. */
  CHECK(all_bytes(d0, 256, 0xA5));
  CHECK(all_bytes(pinned, 32, 0xA5));

  /* Freeing: wrong function, interior pointer, unknown pointer, double free. */
  CHECK_FAILS(d->free_pinned(d0), ETRT_ERROR_INVALID_ARGUMENT, "free it with free_device");
  CHECK_FAILS(d->free_device(pinned), ETRT_ERROR_INVALID_ARGUMENT, "free it with free_pinned");
  CHECK_FAILS(d->free_device((char *)d0 + 8), ETRT_ERROR_INVALID_ARGUMENT, "inside the allocation");
  CHECK_FAILS(d->free_device(&stack_value), ETRT_ERROR_INVALID_ARGUMENT, "not allocated");
  CHECK_OK(d->free_device(NULL));
  CHECK_OK(d->free_device(d0));
  CHECK_FAILS(d->free_device(d0), ETRT_ERROR_INVALID_ARGUMENT, "already freed");
  CHECK_OK(d->free_device(d1));
  CHECK_OK(d->free_device(managed));
  CHECK_OK(d->free_pinned(pinned));
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);

  /* A zero-byte allocation is still a distinct valid device address. */
  void *z = NULL;
  CHECK_OK(d->malloc_device(0, &z));
  CHECK(z != NULL);
  CHECK_OK(d->pointer_info(z, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_OK(d->free_device(z));

  /* Each device has its own capacity. */
  etrt_device_attributes a;
  CHECK_OK(d->attributes(1, &a));
  a.total_memory = 1000;
  etrt_sim_set_attributes(1, &a);
  void *big = NULL;
  CHECK_FAILS(d->malloc_device(1001, &big), ETRT_ERROR_OUT_OF_MEMORY, "out of memory");
  CHECK_OK(d->malloc_device(600, &big));
  void *more = NULL;
  CHECK_FAILS(d->malloc_device(600, &more), ETRT_ERROR_OUT_OF_MEMORY, "600 of 1000 in use");
  CHECK_OK(d->set_device(0));
  CHECK_OK(d->malloc_device(600, &more)); /* device 0 is unaffected */
  CHECK_OK(d->free_device(big));
  CHECK_OK(d->free_device(more));
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_work_runs_only_on_sync(void) {
  setup(1);
  float host_in[4] = {1, 2, 3, 4}, host_out[4] = {0, 0, 0, 0};
  void *dev = NULL;
  etrt_stream s = NULL;
  CHECK_OK(d->malloc_device(sizeof host_in, &dev));
  CHECK_OK(d->stream_create(&s));
  CHECK_OK(d->memcpy_async(dev, host_in, sizeof host_in, ETRT_COPY_HOST_TO_DEVICE, s));
  CHECK_OK(d->memcpy_async(host_out, dev, sizeof host_out, ETRT_COPY_DEVICE_TO_HOST, s));
  CHECK_EQ_INT(etrt_sim_pending_work(), 2);
  /* Missing sync: nothing ran, the output is stale and the device still poisoned. */
  CHECK(host_out[0] == 0 && host_out[3] == 0);
  CHECK(all_bytes(dev, sizeof host_in, 0xA5));
  /* The copy reads the host memory when it runs, not when it was queued. */
  host_in[0] = 10;
  CHECK_OK(d->stream_synchronize(s));
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK(host_out[0] == 10 && host_out[1] == 2 && host_out[3] == 4);

  /* Another stream's sync does not run this one's work. */
  etrt_stream other = NULL;
  CHECK_OK(d->stream_create(&other));
  CHECK_OK(d->memset_async(dev, 0, sizeof host_in, s));
  CHECK_OK(d->stream_synchronize(other));
  CHECK_OK(d->stream_synchronize(NULL));
  CHECK_OK(d->stream_synchronize(ETRT_STREAM_PER_THREAD));
  CHECK_EQ_INT(etrt_sim_pending_work(), 1);
  CHECK(memcmp(dev, host_in, sizeof host_in) == 0); /* the memset has not run */
  CHECK_OK(d->stream_synchronize(s));
  CHECK(all_bytes(dev, sizeof host_in, 0));

  /* Memset, device-to-device copy, host function in order. */
  void *dev2 = NULL;
  CHECK_OK(d->malloc_device(16, &dev2));
  CHECK_OK(d->memset_async(dev, 7, 16, s));
  CHECK_OK(d->memcpy_async(dev2, dev, 16, ETRT_COPY_DEVICE_TO_DEVICE, s));
  CHECK_OK(d->stream_synchronize(s));
  CHECK(all_bytes(dev2, 16, 7));

  /* Destroying a stream completes its work (as CUDA does). */
  CHECK_OK(d->memset_async(dev2, 9, 16, other));
  CHECK_OK(d->stream_destroy(other));
  CHECK(all_bytes(dev2, 16, 9));
  CHECK_FAILS(d->stream_synchronize(other), ETRT_ERROR_INVALID_ARGUMENT, "not a live stream");
  CHECK_FAILS(d->stream_destroy(NULL), ETRT_ERROR_INVALID_ARGUMENT, "default streams");
  CHECK_FAILS(d->stream_destroy(ETRT_STREAM_PER_THREAD), ETRT_ERROR_INVALID_ARGUMENT,
              "default streams");

  /* Zero-byte copies are accepted and queue nothing. */
  CHECK_OK(d->memcpy_async(NULL, NULL, 0, ETRT_COPY_HOST_TO_DEVICE, s));
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);

  CHECK_OK(d->stream_destroy(s));
  CHECK_OK(d->free_device(dev));
  CHECK_OK(d->free_device(dev2));
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_default_streams(void) {
  setup(2);
  int device = -1;
  CHECK_OK(d->stream_device(NULL, &device));
  CHECK_EQ_INT(device, 0);
  CHECK_OK(d->stream_device(ETRT_STREAM_PER_THREAD, &device));
  CHECK_EQ_INT(device, 0);
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->stream_device(NULL, &device));
  CHECK_EQ_INT(device, 1);
  CHECK_OK(d->stream_device(ETRT_STREAM_PER_THREAD, &device));
  CHECK_EQ_INT(device, 1);
  etrt_stream s = NULL;
  CHECK_OK(d->stream_create(&s));
  CHECK_OK(d->set_device(0));
  CHECK_OK(d->stream_device(s, &device));
  CHECK_EQ_INT(device, 1); /* a stream stays on the device it was created on */
  CHECK_FAILS(d->stream_device((etrt_stream)(uintptr_t)0x1234, &device),
              ETRT_ERROR_INVALID_ARGUMENT, "not a live stream");

  /* Each device has its own legacy stream: syncing device 0's leaves device 1's. */
  unsigned char *dev1 = NULL;
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->malloc_device(8, (void **)&dev1));
  CHECK_OK(d->memset_async(dev1, 1, 8, NULL));
  CHECK_OK(d->set_device(0));
  CHECK_OK(d->stream_synchronize(NULL));
  CHECK_EQ_INT(dev1[0], 0xA5);
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->stream_synchronize(NULL));
  CHECK_EQ_INT(dev1[0], 1);
  CHECK_OK(d->stream_destroy(s));
  CHECK_OK(d->free_device(dev1));
}

typedef struct per_thread_args {
  unsigned char *dev;
  int pending_after_own_sync;
} per_thread_args;

static void *per_thread_stream_thread(void *arg) {
  per_thread_args *a = arg;
  d->memset_async(a->dev, 2, 4, ETRT_STREAM_PER_THREAD);
  d->stream_synchronize(ETRT_STREAM_PER_THREAD);
  a->pending_after_own_sync = (int)etrt_sim_pending_work();
  return NULL;
}

static void test_per_thread_streams_are_per_thread(void) {
  setup(1);
  per_thread_args a = {NULL, -1};
  CHECK_OK(d->malloc_device(8, (void **)&a.dev));
  CHECK_OK(d->memset_async(a.dev + 4, 3, 4, ETRT_STREAM_PER_THREAD));
  pthread_t t;
  pthread_create(&t, NULL, per_thread_stream_thread, &a);
  pthread_join(t, NULL);
  /* The other thread's sync ran its own stream, not this thread's. */
  CHECK_EQ_INT(a.pending_after_own_sync, 1);
  CHECK_EQ_INT(a.dev[0], 2);
  CHECK_EQ_INT(a.dev[4], 0xA5);
  CHECK_OK(d->stream_synchronize(ETRT_STREAM_PER_THREAD));
  CHECK_EQ_INT(a.dev[4], 3);
  CHECK_OK(d->free_device(a.dev));
}

static void test_strict_copy_checks(void) {
  setup(2);
  unsigned char host[64] = {0};
  void *d0 = NULL, *d1 = NULL, *pinned = NULL, *managed = NULL;
  CHECK_OK(d->malloc_device(64, &d0));
  CHECK_OK(d->malloc_pinned(64, &pinned));
  CHECK_OK(d->malloc_managed(64, &managed));
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->malloc_device(64, &d1));
  CHECK_OK(d->set_device(0));
  etrt_stream s0 = NULL;
  CHECK_OK(d->stream_create(&s0));

  CHECK_FAILS(d->memcpy_async(host, host, 8, ETRT_COPY_HOST_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "is pageable host memory, not device memory");
  CHECK_FAILS(d->memcpy_async(pinned, host, 8, ETRT_COPY_HOST_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "is pinned host memory, not device memory");
  CHECK_FAILS(d->memcpy_async(d1, host, 8, ETRT_COPY_HOST_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT,
              "device memory of sim:1, but the stream belongs to sim:0");
  CHECK_FAILS(d->memcpy_async(host, d1, 8, ETRT_COPY_DEVICE_TO_HOST, s0),
              ETRT_ERROR_INVALID_ARGUMENT,
              "device memory of sim:1, but the stream belongs to sim:0");
  CHECK_FAILS(d->memcpy_async(d0, d0, 8, ETRT_COPY_DEVICE_TO_HOST, s0), ETRT_ERROR_INVALID_ARGUMENT,
              "not host memory");
  CHECK_FAILS(d->memcpy_async(d0, d1, 8, ETRT_COPY_DEVICE_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "sim:1");
  CHECK_FAILS(d->memcpy_async(d0, host, 65, ETRT_COPY_HOST_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "overruns its allocation of 64 bytes");
  CHECK_FAILS(d->memcpy_async((char *)d0 + 60, host, 8, ETRT_COPY_HOST_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "overruns");
  CHECK_FAILS(d->memcpy_async(pinned, d0, 65, ETRT_COPY_DEVICE_TO_HOST, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "overruns");
  CHECK_FAILS(d->memcpy_async(d0, NULL, 8, ETRT_COPY_HOST_TO_DEVICE, s0),
              ETRT_ERROR_INVALID_ARGUMENT, "NULL src");
  CHECK_FAILS(d->memcpy_async(d0, host, 8, (etrt_copy_kind)9, s0), ETRT_ERROR_INVALID_ARGUMENT,
              "copy kind");
  CHECK_FAILS(d->memset_async(host, 0, 8, s0), ETRT_ERROR_INVALID_ARGUMENT, "not device memory");
  CHECK_FAILS(d->memset_async(d1, 0, 8, s0), ETRT_ERROR_INVALID_ARGUMENT, "device memory of sim:1");
  CHECK_FAILS(d->memcpy_async(d0, host, 8, ETRT_COPY_HOST_TO_DEVICE, (etrt_stream)(uintptr_t)0x99),
              ETRT_ERROR_INVALID_ARGUMENT, "not a live stream");
  CHECK_FAILS(d->launch_host_func(s0, NULL, NULL), ETRT_ERROR_INVALID_ARGUMENT, "NULL function");
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);

  /* Managed memory is accepted on either side, from any device; pinned as host. */
  CHECK_OK(d->memcpy_async(managed, host, 8, ETRT_COPY_HOST_TO_DEVICE, s0));
  CHECK_OK(d->memcpy_async(pinned, managed, 8, ETRT_COPY_DEVICE_TO_HOST, s0));
  CHECK_OK(d->memcpy_async(d0, pinned, 64, ETRT_COPY_HOST_TO_DEVICE, s0));
  CHECK_OK(d->memcpy_async(managed, host, 8, ETRT_COPY_HOST_TO_DEVICE, NULL));

  /* Memory that queued work still uses cannot be freed. */
  CHECK_FAILS(d->free_device(d0), ETRT_ERROR_STATE, "still uses this memory");
  CHECK_FAILS(d->free_pinned(pinned), ETRT_ERROR_STATE, "still uses this memory");
  CHECK_OK(d->free_device(d1)); /* untouched by the queue */
  CHECK_OK(d->stream_synchronize(s0));
  CHECK_OK(d->stream_synchronize(NULL));
  CHECK_OK(d->free_device(d0));
  CHECK_OK(d->free_pinned(pinned));
  CHECK_OK(d->free_device(managed));
  CHECK_OK(d->stream_destroy(s0));
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_events_and_cross_stream_waits(void) {
  setup(1);
  unsigned char *a = NULL, *b = NULL;
  CHECK_OK(d->malloc_device(4, (void **)&a));
  CHECK_OK(d->malloc_device(4, (void **)&b));
  etrt_stream s1 = NULL, s2 = NULL;
  etrt_event e = NULL;
  CHECK_OK(d->stream_create(&s1));
  CHECK_OK(d->stream_create(&s2));
  CHECK_OK(d->event_create(&e));

  /* Never recorded: complete, and waiting on it or synchronising it is a no-op. */
  CHECK_OK(d->event_query(e));
  CHECK_OK(d->event_synchronize(e));
  CHECK_OK(d->stream_wait_event(s2, e));
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);

  /* A record is pending until its stream is synchronised, even on an idle stream;
   * querying does not run anything. */
  CHECK_OK(d->event_record(e, s1));
  etrt_clear_error();
  CHECK_EQ_INT(d->event_query(e), ETRT_ERROR_STATE);
  CHECK(etrt_last_error()[0] == '\0'); /* pending leaves no message */
  CHECK_OK(d->stream_synchronize(s1));
  CHECK_OK(d->event_query(e));

  /* Event synchronize runs the stream up to the record and no further. */
  CHECK_OK(d->memset_async(a, 1, 4, s1));
  CHECK_OK(d->event_record(e, s1));
  CHECK_OK(d->memset_async(a, 2, 4, s1));
  CHECK_EQ_INT(d->event_query(e), ETRT_ERROR_STATE);
  CHECK_EQ_INT(a[0], 0xA5);
  CHECK_OK(d->event_synchronize(e));
  CHECK_OK(d->event_query(e));
  CHECK_EQ_INT(a[0], 1);
  CHECK_EQ_INT(etrt_sim_pending_work(), 1);
  CHECK_OK(d->stream_synchronize(s1));
  CHECK_EQ_INT(a[0], 2);

  /* Cross-stream: s2 copies a -> b after s1's memset, through the event. */
  CHECK_OK(d->memset_async(a, 5, 4, s1));
  CHECK_OK(d->event_record(e, s1));
  CHECK_OK(d->stream_wait_event(s2, e));
  CHECK_OK(d->memcpy_async(b, a, 4, ETRT_COPY_DEVICE_TO_DEVICE, s2));
  CHECK_OK(d->stream_synchronize(s2)); /* runs s1's dependency first */
  CHECK_EQ_INT(b[0], 5);
  CHECK_OK(d->event_query(e));

  /* Without the wait, syncing s2 alone copies stale data. */
  CHECK_OK(d->memset_async(a, 6, 4, s1));
  CHECK_OK(d->memcpy_async(b, a, 4, ETRT_COPY_DEVICE_TO_DEVICE, s2));
  CHECK_OK(d->stream_synchronize(s2));
  CHECK_EQ_INT(b[0], 5);
  CHECK_OK(d->stream_synchronize(s1));
  CHECK_EQ_INT(a[0], 6);

  /* A wait captures the record it saw: re-recording later does not move it. */
  CHECK_OK(d->memset_async(a, 7, 4, s1));
  CHECK_OK(d->event_record(e, s1));
  CHECK_OK(d->stream_wait_event(s2, e));
  CHECK_OK(d->memset_async(a, 8, 4, s1));
  CHECK_OK(d->event_record(e, s1));
  CHECK_OK(d->memcpy_async(b, a, 4, ETRT_COPY_DEVICE_TO_DEVICE, s2));
  CHECK_OK(d->stream_synchronize(s2));
  CHECK_EQ_INT(b[0], 7);
  CHECK_EQ_INT(d->event_query(e), ETRT_ERROR_STATE); /* the second record is still queued */
  CHECK_OK(d->event_synchronize(e));
  CHECK_EQ_INT(a[0], 8);

  /* A destroyed stream's work is done, so events recorded on it are complete. */
  etrt_stream s3 = NULL;
  CHECK_OK(d->stream_create(&s3));
  CHECK_OK(d->memset_async(a, 9, 4, s3));
  CHECK_OK(d->event_record(e, s3));
  CHECK_OK(d->stream_destroy(s3));
  CHECK_OK(d->event_query(e));
  CHECK_EQ_INT(a[0], 9);

  /* Events on another device's stream are refused; unknown events too. */
  CHECK_OK(etrt_device_select_sim(2));
  CHECK_OK(d->event_create(&e));
  etrt_stream other = NULL;
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->stream_create(&other));
  CHECK_FAILS(d->event_record(e, other), ETRT_ERROR_INVALID_ARGUMENT,
              "the event belongs to sim:0, the stream to sim:1");
  CHECK_OK(d->event_destroy(e));
  CHECK_FAILS(d->event_query(e), ETRT_ERROR_INVALID_ARGUMENT, "not a live event");
  CHECK_FAILS(d->event_record(e, NULL), ETRT_ERROR_INVALID_ARGUMENT, "not a live event");
  CHECK_FAILS(d->stream_wait_event(NULL, e), ETRT_ERROR_INVALID_ARGUMENT, "not a live event");
  CHECK_FAILS(d->event_synchronize(e), ETRT_ERROR_INVALID_ARGUMENT, "not a live event");
  CHECK_FAILS(d->event_destroy(e), ETRT_ERROR_INVALID_ARGUMENT, "not a live event");
  CHECK_OK(d->stream_destroy(other));
}

typedef struct host_fn_log {
  int calls;
  int order[4];
} host_fn_log;

static host_fn_log fn_log;

static void host_fn_a(void *user) { fn_log.order[fn_log.calls++] = (int)(intptr_t)user; }

/* A host function may call back into the driver (the lock is released around it). */
static void host_fn_calls_driver(void *user) {
  etrt_pointer_info info;
  d->pointer_info(user, &info);
  fn_log.order[fn_log.calls++] = info.kind == ETRT_POINTER_DEVICE ? 100 : -1;
}

static void test_host_functions(void) {
  setup(1);
  memset(&fn_log, 0, sizeof fn_log);
  void *dev = NULL;
  CHECK_OK(d->malloc_device(4, &dev));
  etrt_stream s = NULL;
  CHECK_OK(d->stream_create(&s));
  CHECK_OK(d->launch_host_func(s, host_fn_a, (void *)(intptr_t)1));
  CHECK_OK(d->launch_host_func(s, host_fn_calls_driver, dev));
  CHECK_OK(d->launch_host_func(s, host_fn_a, (void *)(intptr_t)3));
  CHECK_EQ_INT(fn_log.calls, 0);
  CHECK_OK(d->stream_synchronize(s));
  CHECK_EQ_INT(fn_log.calls, 3);
  CHECK_EQ_INT(fn_log.order[0], 1);
  CHECK_EQ_INT(fn_log.order[1], 100);
  CHECK_EQ_INT(fn_log.order[2], 3);
  CHECK_OK(d->stream_destroy(s));
  CHECK_OK(d->free_device(dev));
}

static etrt_stream self_sync_stream;
static etrt_status self_sync_status;

static void host_fn_syncs_own_stream(void *user) {
  (void)user;
  self_sync_status = d->stream_synchronize(self_sync_stream);
}

static void test_host_function_syncing_its_own_stream_is_refused(void) {
  setup(1);
  CHECK_OK(d->stream_create(&self_sync_stream));
  CHECK_OK(d->launch_host_func(self_sync_stream, host_fn_syncs_own_stream, NULL));
  CHECK_OK(d->stream_synchronize(self_sync_stream));
  CHECK_EQ_INT(self_sync_status, ETRT_ERROR_STATE);
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK_OK(d->stream_destroy(self_sync_stream));
}

static void test_fault_injection(void) {
  setup(1);
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), 0);
  void *p[4] = {NULL, NULL, NULL, NULL};
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 3);
  CHECK_OK(d->malloc_device(8, &p[0]));
  CHECK_OK(d->malloc_pinned(8, &p[1]));
  CHECK_FAILS(d->malloc_managed(8, &p[2]), ETRT_ERROR_DEVICE,
              "injected allocation failure (call 3)");
  CHECK(p[2] == NULL);
  CHECK_OK(d->malloc_managed(8, &p[2])); /* only the Nth fails */
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), 4);
  /* Counting restarts from the moment of arming. */
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 1);
  CHECK_FAILS(d->malloc_device(8, &p[3]), ETRT_ERROR_DEVICE,
              "injected allocation failure (call 5)");
  /* Disarming. */
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 2);
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 0);
  CHECK_OK(d->malloc_device(8, &p[3]));
  void *q = NULL;
  CHECK_OK(d->malloc_device(8, &q));
  CHECK_OK(d->free_device(q));

  unsigned char host[8] = {0};
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 2);
  CHECK_OK(d->memcpy_async(p[0], host, 8, ETRT_COPY_HOST_TO_DEVICE, NULL));
  CHECK_FAILS(d->memset_async(p[0], 0, 8, NULL), ETRT_ERROR_DEVICE, "injected copy failure");
  CHECK_EQ_INT(etrt_sim_pending_work(), 1); /* the failed call queued nothing */
  etrt_sim_fail_nth(ETRT_SIM_FAULT_COPY, 1);
  CHECK_FAILS(d->memcpy_async(host, p[0], 8, ETRT_COPY_DEVICE_TO_HOST, NULL), ETRT_ERROR_DEVICE,
              "injected copy failure");
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_COPY), 3);
  CHECK_OK(d->stream_synchronize(NULL));
  CHECK_OK(d->free_device(p[0]));
  CHECK_OK(d->free_pinned(p[1]));
  CHECK_OK(d->free_device(p[2]));
  CHECK_OK(d->free_device(p[3]));
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);

  /* Selection resets the counters and disarms. */
  etrt_sim_fail_nth(ETRT_SIM_FAULT_ALLOC, 1);
  setup(1);
  CHECK_EQ_INT(etrt_sim_call_count(ETRT_SIM_FAULT_ALLOC), 0);
  CHECK_OK(d->malloc_device(8, &p[0]));
  CHECK_OK(d->free_device(p[0]));
}

static void test_green_streams(void) {
  setup(2);
  etrt_stream g = NULL;
  int granted = 0;
  CHECK_OK(d->green_stream_create(1, 16, &g, &granted));
  CHECK_EQ_INT(granted, 16);
  CHECK_EQ_INT(etrt_sim_stream_sm_count(g), 16);
  int device = -1;
  CHECK_OK(d->stream_device(g, &device));
  CHECK_EQ_INT(device, 1);
  etrt_stream g2 = NULL;
  CHECK_OK(d->green_stream_create(0, 10, &g2, &granted));
  CHECK_EQ_INT(granted, 16); /* rounded up to a multiple of 8 */
  CHECK_OK(d->green_stream_destroy(g2));
  CHECK_OK(d->green_stream_create(0, 1, &g2, &granted));
  CHECK_EQ_INT(granted, 8);
  CHECK_OK(d->green_stream_destroy(g2));
  CHECK_FAILS(d->green_stream_create(0, 0, &g2, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "0 SMs requested");
  CHECK_FAILS(d->green_stream_create(0, 130, &g2, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "which has 132");
  CHECK_FAILS(d->green_stream_create(2, 8, &g2, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "out of range");
  CHECK_EQ_INT(etrt_sim_stream_sm_count(NULL), 132);
  CHECK_EQ_INT(etrt_sim_stream_sm_count((etrt_stream)(uintptr_t)0x77), 0);

  /* Work on a green stream runs like any other. */
  unsigned char *dev = NULL;
  CHECK_OK(d->set_device(1));
  CHECK_OK(d->malloc_device(4, (void **)&dev));
  CHECK_OK(d->memset_async(dev, 4, 4, g));
  CHECK_EQ_INT(dev[0], 0xA5);
  CHECK_OK(d->stream_synchronize(g));
  CHECK_EQ_INT(dev[0], 4);

  /* Each destroy refuses the other kind of stream. */
  etrt_stream plain = NULL;
  CHECK_OK(d->stream_create(&plain));
  CHECK_FAILS(d->green_stream_destroy(plain), ETRT_ERROR_INVALID_ARGUMENT,
              "not a green-context stream");
  CHECK_FAILS(d->stream_destroy(g), ETRT_ERROR_INVALID_ARGUMENT, "green_stream_destroy");
  CHECK_OK(d->stream_destroy(plain));

  /* Under a current green context the per-thread stream is invalid; explicit streams
   * (the green one included) and the legacy stream still work. */
  CHECK_EQ_INT(d->green_context_current(), 0);
  etrt_sim_set_green_context_current(1);
  CHECK_EQ_INT(d->green_context_current(), 1);
  CHECK_FAILS(d->stream_synchronize(ETRT_STREAM_PER_THREAD), ETRT_ERROR_DEVICE,
              "invalid resource handle");
  CHECK_FAILS(d->memset_async(dev, 0, 4, ETRT_STREAM_PER_THREAD), ETRT_ERROR_DEVICE,
              "per-thread default stream is invalid while a green context is current");
  CHECK_FAILS(d->stream_device(ETRT_STREAM_PER_THREAD, &device), ETRT_ERROR_DEVICE,
              "green context");
  CHECK_FAILS(d->launch_host_func(ETRT_STREAM_PER_THREAD, host_fn_a, NULL), ETRT_ERROR_DEVICE,
              "green context");
  CHECK_EQ_INT(etrt_sim_stream_sm_count(ETRT_STREAM_PER_THREAD), 0);
  CHECK_OK(d->memset_async(dev, 5, 4, g));
  CHECK_OK(d->stream_synchronize(g));
  CHECK_EQ_INT(dev[0], 5);
  CHECK_OK(d->stream_synchronize(NULL));
  etrt_sim_set_green_context_current(0);
  CHECK_EQ_INT(d->green_context_current(), 0);
  CHECK_OK(d->stream_synchronize(ETRT_STREAM_PER_THREAD));

  CHECK_OK(d->green_stream_destroy(g));
  CHECK_FAILS(d->green_stream_destroy(g), ETRT_ERROR_INVALID_ARGUMENT, "not a live stream");
  CHECK_OK(d->free_device(dev));
}

typedef struct worker_args {
  etrt_stream stream;
  unsigned char *dev;
  int failures;
} worker_args;

static void *worker(void *arg) {
  worker_args *w = arg;
  for (int i = 0; i < 200; i++) {
    unsigned char value = (unsigned char)i;
    unsigned char out[64];
    if (d->memset_async(w->dev, value, 64, w->stream) != ETRT_OK) w->failures++;
    if (d->memcpy_async(out, w->dev, 64, ETRT_COPY_DEVICE_TO_HOST, w->stream) != ETRT_OK)
      w->failures++;
    if (d->stream_synchronize(w->stream) != ETRT_OK) w->failures++;
    if (!all_bytes(out, 64, value)) w->failures++;
  }
  return NULL;
}

static void test_threads(void) {
  setup(1);
  worker_args w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    memset(&w[i], 0, sizeof w[i]);
    CHECK_OK(d->stream_create(&w[i].stream));
    CHECK_OK(d->malloc_device(64, (void **)&w[i].dev));
  }
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, &w[i]);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(w[i].failures, 0);
    CHECK_OK(d->stream_destroy(w[i].stream));
    CHECK_OK(d->free_device(w[i].dev));
  }
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
}

static void test_reset_drops_everything(void) {
  setup(1);
  void *p = NULL;
  etrt_stream s = NULL;
  CHECK_OK(d->malloc_device(100, &p));
  CHECK_OK(d->stream_create(&s));
  CHECK_OK(d->memset_async(p, 0, 100, s));
  CHECK_EQ_INT(etrt_sim_pending_work(), 1);
  setup(1);
  CHECK_EQ_INT(etrt_sim_pending_work(), 0);
  CHECK_EQ_INT(etrt_sim_bytes_in_use(), 0);
  CHECK_FAILS(d->stream_synchronize(s), ETRT_ERROR_INVALID_ARGUMENT, "not a live stream");
}

int main(void) {
  RUN_TEST(test_selection_and_devices);
  RUN_TEST(test_current_device_per_thread);
  RUN_TEST(test_memory_classification);
  RUN_TEST(test_work_runs_only_on_sync);
  RUN_TEST(test_default_streams);
  RUN_TEST(test_per_thread_streams_are_per_thread);
  RUN_TEST(test_strict_copy_checks);
  RUN_TEST(test_events_and_cross_stream_waits);
  RUN_TEST(test_host_functions);
  RUN_TEST(test_host_function_syncing_its_own_stream_is_refused);
  RUN_TEST(test_fault_injection);
  RUN_TEST(test_green_streams);
  RUN_TEST(test_threads);
  RUN_TEST(test_reset_drops_everything);
  etrt_device_select_sim(0);
  return TEST_EXIT();
}
