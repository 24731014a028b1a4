/* Simulated GPUs (see sim.h for the exact semantics). One mutex guards everything;
 * the only code run with it released is a host function, so that the function may
 * call back into the driver. A stream being drained is marked `running`; another
 * thread that needs it waits on `idle`.
 *
 * Ordering: every queued item gets a number from one global counter. An event
 * captures the number of its record marker, a wait captures the event's (stream,
 * number) at enqueue time, so a dependency always points at an item enqueued
 * earlier than the waiting one. Draining can therefore never wait for itself, except
 * when a host function synchronises its own stream, which is refused. */
#include "device/sim.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

#define SIM_POISON 0xA5
#define SIM_GREEN_ALIGNMENT 8 /* SM partitions on compute capability 9.0 */
#define SIM_DEFAULT_MEMORY ((size_t)80 << 30)

typedef enum sim_item_type {
  SIM_ITEM_COPY,
  SIM_ITEM_MEMSET,
  SIM_ITEM_HOST_FN,
  SIM_ITEM_RECORD, /* an event's marker: nothing to do, its completion is the event's */
  SIM_ITEM_WAIT
} sim_item_type;

typedef struct sim_item {
  struct sim_item *next;
  sim_item_type type;
  uint64_t seq;
  void *dst;
  const void *src;
  size_t size;
  int value;
  etrt_host_fn fn;
  void *user;
  uint64_t wait_stream; /* id, not pointer: the stream may be gone (then it was drained) */
  uint64_t wait_seq;
} sim_item;

typedef enum sim_stream_kind {
  SIM_STREAM_CREATED,
  SIM_STREAM_LEGACY,
  SIM_STREAM_PER_THREAD,
  SIM_STREAM_GREEN
} sim_stream_kind;

typedef struct sim_stream {
  struct sim_stream *next;
  uint64_t id;
  int device;
  sim_stream_kind kind;
  int sm_count; /* green streams: the SMs granted; else 0 (the whole device) */
  sim_item *head, *tail;
  uint64_t last_seq;      /* number of the last item enqueued */
  uint64_t completed_seq; /* number of the last item run */
  int running;
  pthread_t runner;
} sim_stream;

typedef struct sim_event {
  struct sim_event *next;
  int device;
  int recorded;
  uint64_t stream_id;
  uint64_t seq; /* the record marker's number */
} sim_event;

typedef struct sim_alloc {
  uintptr_t base;
  size_t size; /* as requested (a zero-byte request still holds one real byte) */
  int device;  /* -1 for pinned host memory */
  etrt_pointer_kind kind;
} sim_alloc;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t idle;
  unsigned long generation; /* bumped by every reset; thread-local state follows it */
  int count;
  etrt_device_attributes attributes[ETRT_SIM_MAX_DEVICES];
  size_t device_bytes[ETRT_SIM_MAX_DEVICES];
  sim_stream *legacy[ETRT_SIM_MAX_DEVICES];
  sim_stream *streams;
  sim_event *events;
  sim_alloc *allocs;
  size_t alloc_count, alloc_capacity;
  size_t bytes_in_use;
  size_t pending;
  uint64_t next_seq, next_stream_id;
  long calls[ETRT_SIM_FAULT_COUNT];
  long fail_at[ETRT_SIM_FAULT_COUNT];
  long event_records;
} sim = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER, .generation = 1};

/* Per-thread state; stale (and cleared) when its generation differs from sim's. */
static _Thread_local struct {
  unsigned long generation;
  int device;
  int green_current;
  long set_device_calls;
  sim_stream *per_thread[ETRT_SIM_MAX_DEVICES];
} tls;

static void lock(void) { pthread_mutex_lock(&sim.lock); }
static void unlock(void) { pthread_mutex_unlock(&sim.lock); }

static void tls_refresh(void) {
  if (tls.generation != sim.generation) {
    memset(&tls, 0, sizeof tls);
    tls.generation = sim.generation;
  }
}

static etrt_status no_devices(const char *call) {
  return etrt_error(ETRT_ERROR_STATE, "sim %s: no simulated devices (etrt_device_select_sim)",
                    call);
}

static etrt_status check_device_index(const char *call, int device) {
  if (device < 0 || device >= sim.count) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sim %s: device %d out of range (%d simulated devices)", call, device,
                      sim.count);
  }
  return ETRT_OK;
}

static void default_attributes(int device, etrt_device_attributes *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "etrt simulated GPU %d", device);
  out->compute_major = 9;
  out->compute_minor = 0;
  out->sm_count = 132;
  out->total_memory = SIM_DEFAULT_MEMORY;
}

/* ---- fault injection ------------------------------------------------------------ */

static etrt_status count_call(etrt_sim_fault fault, const char *call) {
  long n = ++sim.calls[fault];
  if (sim.fail_at[fault] != 0 && n == sim.fail_at[fault]) {
    sim.fail_at[fault] = 0;
    static const char *const names[ETRT_SIM_FAULT_COUNT] = {"allocation", "copy", "synchronize"};
    return etrt_error(ETRT_ERROR_DEVICE, "sim %s on sim:%d: injected %s failure (call %ld)", call,
                      tls.device, names[fault], n);
  }
  return ETRT_OK;
}

void etrt_sim_fail_nth(etrt_sim_fault fault, long n) {
  if ((int)fault < 0 || fault >= ETRT_SIM_FAULT_COUNT) return;
  lock();
  sim.fail_at[fault] = n > 0 ? sim.calls[fault] + n : 0;
  unlock();
}

long etrt_sim_call_count(etrt_sim_fault fault) {
  if ((int)fault < 0 || fault >= ETRT_SIM_FAULT_COUNT) return 0;
  lock();
  long n = sim.calls[fault];
  unlock();
  return n;
}

/* ---- allocations ---------------------------------------------------------------- */

static sim_alloc *find_alloc(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  for (size_t i = 0; i < sim.alloc_count; i++) {
    sim_alloc *a = &sim.allocs[i];
    if (p >= a->base && p - a->base < (a->size ? a->size : 1)) return a;
  }
  return NULL;
}

static const char *kind_name(etrt_pointer_kind kind) {
  switch (kind) {
    case ETRT_POINTER_PAGEABLE_HOST:
      return "pageable host memory";
    case ETRT_POINTER_PINNED_HOST:
      return "pinned host memory";
    case ETRT_POINTER_DEVICE:
      return "device memory";
    case ETRT_POINTER_MANAGED:
      return "managed memory";
  }
  return "unknown memory";
}

static etrt_status allocate(const char *call, etrt_pointer_kind kind, size_t size, void **out) {
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim %s: NULL output pointer", call);
  *out = NULL;
  lock();
  etrt_status status = ETRT_OK;
  if (sim.count == 0) {
    status = no_devices(call);
    goto done;
  }
  tls_refresh();
  status = count_call(ETRT_SIM_FAULT_ALLOC, call);
  if (status != ETRT_OK) goto done;
  int device = kind == ETRT_POINTER_PINNED_HOST ? -1 : tls.device;
  if (device >= 0) {
    size_t total = sim.attributes[device].total_memory;
    if (size > total || sim.device_bytes[device] > total - size) {
      status =
          etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                     "sim %s on sim:%d: out of memory (%zu bytes requested, %zu of %zu in use)",
                     call, device, size, sim.device_bytes[device], total);
      goto done;
    }
  }
  if (sim.alloc_count == sim.alloc_capacity) {
    size_t capacity = sim.alloc_capacity ? sim.alloc_capacity * 2 : 64;
    sim_alloc *grown = realloc(sim.allocs, capacity * sizeof *grown);
    if (grown == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                          "sim %s: out of host memory for the allocation table", call);
      goto done;
    }
    sim.allocs = grown;
    sim.alloc_capacity = capacity;
  }
  void *p = malloc(size ? size : 1);
  if (p == NULL) {
    status =
        etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim %s: out of host memory (%zu bytes)", call, size);
    goto done;
  }
  /* Poison: an output the device never wrote reads as 0xA5 bytes, not as zeros or as
   * a previous run's answer. */
  memset(p, SIM_POISON, size ? size : 1);
  sim.allocs[sim.alloc_count++] = (sim_alloc){(uintptr_t)p, size, device, kind};
  sim.bytes_in_use += size;
  if (device >= 0) sim.device_bytes[device] += size;
  *out = p;
done:
  unlock();
  return status;
}

static int item_touches(const sim_item *item, const sim_alloc *a) {
  uintptr_t end = a->base + (a->size ? a->size : 1);
  if (item->type == SIM_ITEM_COPY || item->type == SIM_ITEM_MEMSET) {
    uintptr_t d = (uintptr_t)item->dst;
    if (d < end && d + item->size > a->base) return 1;
  }
  if (item->type == SIM_ITEM_COPY) {
    uintptr_t s = (uintptr_t)item->src;
    if (s < end && s + item->size > a->base) return 1;
  }
  return 0;
}

/* `accept` is a bit set of etrt_pointer_kind values this free function releases. */
static etrt_status release(const char *call, void *ptr, unsigned accept, const char *other_call) {
  if (ptr == NULL) return ETRT_OK;
  lock();
  etrt_status status = ETRT_OK;
  if (sim.count == 0) {
    status = no_devices(call);
    goto done;
  }
  sim_alloc *a = find_alloc(ptr);
  if (a == NULL) {
    status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "sim %s(%p): not allocated by the simulated devices, or already freed",
                        call, ptr);
    goto done;
  }
  if (a->base != (uintptr_t)ptr) {
    status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "sim %s(%p): points inside the allocation at %p, not at its start", call,
                        ptr, (void *)a->base);
    goto done;
  }
  if (!(accept & (1u << a->kind))) {
    status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim %s(%p): this is %s; free it with %s",
                        call, ptr, kind_name(a->kind), other_call);
    goto done;
  }
  for (sim_stream *s = sim.streams; s != NULL; s = s->next) {
    for (sim_item *item = s->head; item != NULL; item = item->next) {
      if (item_touches(item, a)) {
        status = etrt_error(ETRT_ERROR_STATE,
                            "sim %s(%p): queued work on a stream of sim:%d still uses this memory; "
                            "synchronise the stream before freeing",
                            call, ptr, s->device);
        goto done;
      }
    }
  }
  sim.bytes_in_use -= a->size;
  if (a->device >= 0) sim.device_bytes[a->device] -= a->size;
  free(ptr);
  *a = sim.allocs[--sim.alloc_count];
done:
  unlock();
  return status;
}

static etrt_status sim_malloc_device(size_t size, void **out) {
  return allocate("malloc_device", ETRT_POINTER_DEVICE, size, out);
}
static etrt_status sim_malloc_pinned(size_t size, void **out) {
  return allocate("malloc_pinned", ETRT_POINTER_PINNED_HOST, size, out);
}
static etrt_status sim_malloc_managed(size_t size, void **out) {
  return allocate("malloc_managed", ETRT_POINTER_MANAGED, size, out);
}
static etrt_status sim_free_device(void *ptr) {
  return release("free_device", ptr, (1u << ETRT_POINTER_DEVICE) | (1u << ETRT_POINTER_MANAGED),
                 "free_pinned");
}
static etrt_status sim_free_pinned(void *ptr) {
  return release("free_pinned", ptr, 1u << ETRT_POINTER_PINNED_HOST, "free_device");
}

static etrt_status sim_pointer_info(const void *ptr, etrt_pointer_info *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim pointer_info: NULL output");
  lock();
  sim_alloc *a = find_alloc(ptr);
  out->kind = a ? a->kind : ETRT_POINTER_PAGEABLE_HOST;
  out->device = a ? a->device : -1;
  unlock();
  return ETRT_OK;
}

/* ---- devices -------------------------------------------------------------------- */

static int sim_device_count(void) {
  lock();
  int n = sim.count;
  unlock();
  return n;
}

static etrt_status sim_get_device(int *device) {
  if (device == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim get_device: NULL output");
  lock();
  etrt_status status = ETRT_OK;
  if (sim.count == 0) {
    status = no_devices("get_device");
  } else {
    tls_refresh();
    *device = tls.device;
  }
  unlock();
  return status;
}

static etrt_status sim_set_device(int device) {
  lock();
  etrt_status status =
      sim.count == 0 ? no_devices("set_device") : check_device_index("set_device", device);
  if (status == ETRT_OK) {
    tls_refresh();
    tls.device = device;
    ++tls.set_device_calls;
  }
  unlock();
  return status;
}

long etrt_sim_event_records(void) {
  lock();
  long records = sim.event_records;
  unlock();
  return records;
}

long etrt_sim_set_device_calls(void) {
  lock();
  tls_refresh();
  long calls = tls.set_device_calls;
  unlock();
  return calls;
}

static etrt_status sim_attributes(int device, etrt_device_attributes *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim attributes: NULL output");
  lock();
  etrt_status status =
      sim.count == 0 ? no_devices("attributes") : check_device_index("attributes", device);
  if (status == ETRT_OK) *out = sim.attributes[device];
  unlock();
  return status;
}

void etrt_sim_set_attributes(int device, const etrt_device_attributes *attributes) {
  if (attributes == NULL) return;
  lock();
  if (device >= 0 && device < sim.count) sim.attributes[device] = *attributes;
  unlock();
}

/* ---- streams -------------------------------------------------------------------- */

static sim_stream *new_stream(int device, sim_stream_kind kind) {
  sim_stream *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->id = ++sim.next_stream_id;
  s->device = device;
  s->kind = kind;
  s->next = sim.streams;
  sim.streams = s;
  return s;
}

static sim_stream *find_stream_id(uint64_t id) {
  for (sim_stream *s = sim.streams; s != NULL; s = s->next) {
    if (s->id == id) return s;
  }
  return NULL;
}

/* The stream a handle names, for the calling thread (lock held). */
static etrt_status resolve_stream(const char *call, etrt_stream handle, sim_stream **out) {
  if (sim.count == 0) return no_devices(call);
  tls_refresh();
  int device = tls.device;
  if (handle == NULL) {
    *out = sim.legacy[device];
    return ETRT_OK;
  }
  if (handle == ETRT_STREAM_PER_THREAD) {
    if (tls.green_current) {
      return etrt_error(
          ETRT_ERROR_DEVICE,
          "sim %s on sim:%d: invalid resource handle: the per-thread default stream is "
          "invalid while a green context is current",
          call, device);
    }
    if (tls.per_thread[device] == NULL) {
      tls.per_thread[device] = new_stream(device, SIM_STREAM_PER_THREAD);
      if (tls.per_thread[device] == NULL) {
        return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim %s: out of host memory for a stream",
                          call);
      }
    }
    *out = tls.per_thread[device];
    return ETRT_OK;
  }
  for (sim_stream *s = sim.streams; s != NULL; s = s->next) {
    if ((etrt_stream)s == handle) {
      *out = s;
      return ETRT_OK;
    }
  }
  return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                    "sim %s: %p is not a live stream of the simulated devices (destroyed, or from "
                    "another driver)",
                    call, handle);
}

static etrt_status enqueue(const char *call, sim_stream *s, sim_item proto) {
  sim_item *item = malloc(sizeof *item);
  if (item == NULL)
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim %s: out of host memory for a work item", call);
  *item = proto;
  item->next = NULL;
  item->seq = ++sim.next_seq;
  if (s->tail) {
    s->tail->next = item;
  } else {
    s->head = item;
  }
  s->tail = item;
  s->last_seq = item->seq;
  sim.pending++;
  return ETRT_OK;
}

static etrt_status run_until(uint64_t stream_id, uint64_t seq);

/* Runs one item (lock held; released around a host function). */
static etrt_status run_item(const sim_item *item) {
  switch (item->type) {
    case SIM_ITEM_COPY:
      memcpy(item->dst, item->src, item->size);
      return ETRT_OK;
    case SIM_ITEM_MEMSET:
      memset(item->dst, item->value, item->size);
      return ETRT_OK;
    case SIM_ITEM_HOST_FN:
      unlock();
      item->fn(item->user);
      lock();
      return ETRT_OK;
    case SIM_ITEM_RECORD:
      return ETRT_OK;
    case SIM_ITEM_WAIT:
      return run_until(item->wait_stream, item->wait_seq);
  }
  return ETRT_OK;
}

/* Runs the stream's items numbered up to `seq`, and first whatever they wait on.
 * Lock held. */
static etrt_status run_until(uint64_t stream_id, uint64_t seq) {
  unsigned long generation = sim.generation;
  sim_stream *s = find_stream_id(stream_id);
  for (;;) {
    if (s == NULL || s->completed_seq >= seq) return ETRT_OK;
    if (s->running) {
      if (pthread_equal(s->runner, pthread_self())) {
        return etrt_error(
            ETRT_ERROR_STATE,
            "sim: a host function queued on a stream of sim:%d synchronised that same stream "
            "(it would wait for itself)",
            s->device);
      }
      pthread_cond_wait(&sim.idle, &sim.lock);
      if (generation != sim.generation) break;
      s = find_stream_id(stream_id); /* destroyed meanwhile: it was drained first */
      continue;
    }
    sim_item *item = s->head;
    if (item == NULL || item->seq > seq) return ETRT_OK;
    s->running = 1;
    s->runner = pthread_self();
    etrt_status status = run_item(item);
    if (generation != sim.generation) break;
    /* A running stream is never destroyed (destroy waits), so `s` is still valid. */
    s->head = item->next;
    if (s->head == NULL) s->tail = NULL;
    s->completed_seq = item->seq;
    s->running = 0;
    sim.pending--;
    free(item);
    pthread_cond_broadcast(&sim.idle);
    if (status != ETRT_OK) return status;
  }
  return etrt_error(ETRT_ERROR_STATE,
                    "sim: the simulated devices were reset while work was running");
}

/* Drains the stream (CUDA completes work queued on a destroyed stream), then frees
 * it. Items enqueued by other threads meanwhile are drained too. */
static etrt_status destroy_stream(sim_stream *s) {
  uint64_t id = s->id;
  unsigned long generation = sim.generation;
  while (s != NULL && s->head != NULL) {
    etrt_status status = run_until(id, s->last_seq);
    if (status != ETRT_OK || generation != sim.generation) return status;
    s = find_stream_id(id);
  }
  if (s == NULL) return ETRT_OK; /* another thread destroyed it meanwhile */
  for (sim_stream **p = &sim.streams; *p != NULL; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      break;
    }
  }
  free(s);
  return ETRT_OK;
}

static etrt_status sim_stream_create(etrt_stream *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim stream_create: NULL output");
  lock();
  etrt_status status = ETRT_OK;
  if (sim.count == 0) {
    status = no_devices("stream_create");
  } else {
    tls_refresh();
    sim_stream *s = new_stream(tls.device, SIM_STREAM_CREATED);
    if (s == NULL)
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim stream_create: out of host memory");
    *out = s;
  }
  unlock();
  return status;
}

/* Shared by stream_destroy and green_stream_destroy: each refuses the other's. */
static etrt_status destroy_handle(const char *call, etrt_stream stream, int green) {
  if (stream == NULL || stream == ETRT_STREAM_PER_THREAD) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sim %s: the default streams cannot be destroyed", call);
  }
  lock();
  sim_stream *s = NULL;
  etrt_status status = resolve_stream(call, stream, &s);
  if (status == ETRT_OK && green && s->kind != SIM_STREAM_GREEN) {
    status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "sim %s: stream %p is not a green-context stream", call, stream);
  } else if (status == ETRT_OK && !green && s->kind == SIM_STREAM_GREEN) {
    status = etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "sim %s: stream %p is a green-context stream; destroy it with green_stream_destroy", call,
        stream);
  }
  if (status == ETRT_OK) status = destroy_stream(s);
  unlock();
  return status;
}

static etrt_status sim_stream_destroy(etrt_stream stream) {
  return destroy_handle("stream_destroy", stream, 0);
}

static etrt_status sim_stream_synchronize(etrt_stream stream) {
  lock();
  sim_stream *s = NULL;
  etrt_status status = resolve_stream("stream_synchronize", stream, &s);
  if (status == ETRT_OK) status = count_call(ETRT_SIM_FAULT_SYNC, "stream_synchronize");
  if (status == ETRT_OK) status = run_until(s->id, s->last_seq);
  unlock();
  return status;
}

static etrt_status sim_stream_device(etrt_stream stream, int *device) {
  if (device == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim stream_device: NULL output");
  lock();
  sim_stream *s = NULL;
  etrt_status status = resolve_stream("stream_device", stream, &s);
  if (status == ETRT_OK) *device = s->device;
  unlock();
  return status;
}

int etrt_sim_stream_sm_count(etrt_stream stream) {
  lock();
  sim_stream *s = NULL;
  int n = 0;
  if (resolve_stream("stream_sm_count", stream, &s) == ETRT_OK) {
    n = s->sm_count ? s->sm_count : sim.attributes[s->device].sm_count;
  }
  unlock();
  return n;
}

/* ---- copies, memsets, host functions -------------------------------------------- */

/* `ptr` must be device memory usable by a stream of `device`: device memory of that
 * device or managed memory, with [ptr, ptr+size) inside the allocation. */
static etrt_status check_device_side(const char *call, const char *role, const void *ptr,
                                     size_t size, int device) {
  sim_alloc *a = find_alloc(ptr);
  etrt_pointer_kind kind = a ? a->kind : ETRT_POINTER_PAGEABLE_HOST;
  if (kind != ETRT_POINTER_DEVICE && kind != ETRT_POINTER_MANAGED) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sim %s on a stream of sim:%d: %s %p is %s, not device memory", call, device,
                      role, ptr, kind_name(kind));
  }
  if (kind == ETRT_POINTER_DEVICE && a->device != device) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sim %s: %s %p is device memory of sim:%d, but the stream belongs to sim:%d",
                      call, role, ptr, a->device, device);
  }
  if (size > a->size - ((uintptr_t)ptr - a->base)) {
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "sim %s on sim:%d: %s %p + %zu bytes overruns its allocation of %zu bytes at %p", call,
        device, role, ptr, size, a->size, (void *)a->base);
  }
  return ETRT_OK;
}

/* `ptr` must be host memory (pageable, pinned or managed); tracked ranges are checked. */
static etrt_status check_host_side(const char *call, const char *role, const void *ptr, size_t size,
                                   int device) {
  sim_alloc *a = find_alloc(ptr);
  if (a == NULL) return ETRT_OK;
  if (a->kind == ETRT_POINTER_DEVICE) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "sim %s on a stream of sim:%d: %s %p is device memory of sim:%d, "
                      "not host memory",
                      call, device, role, ptr, a->device);
  }
  if (size > a->size - ((uintptr_t)ptr - a->base)) {
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "sim %s on sim:%d: %s %p + %zu bytes overruns its allocation of %zu bytes at %p", call,
        device, role, ptr, size, a->size, (void *)a->base);
  }
  return ETRT_OK;
}

static etrt_status sim_memcpy_async(void *dst, const void *src, size_t size, etrt_copy_kind kind,
                                    etrt_stream stream) {
  static const char *const names[] = {"", "memcpy_async host-to-device",
                                      "memcpy_async device-to-host",
                                      "memcpy_async device-to-device"};
  if (kind != ETRT_COPY_HOST_TO_DEVICE && kind != ETRT_COPY_DEVICE_TO_HOST &&
      kind != ETRT_COPY_DEVICE_TO_DEVICE) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim memcpy_async: unknown copy kind %d",
                      (int)kind);
  }
  const char *call = names[kind];
  lock();
  sim_stream *s = NULL;
  etrt_status status = resolve_stream(call, stream, &s);
  if (status == ETRT_OK) status = count_call(ETRT_SIM_FAULT_COPY, call);
  if (status == ETRT_OK && size > 0) {
    if (dst == NULL || src == NULL) {
      status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim %s: NULL %s with %zu bytes", call,
                          dst == NULL ? "dst" : "src", size);
    } else if (kind == ETRT_COPY_HOST_TO_DEVICE) {
      status = check_host_side(call, "src", src, size, s->device);
      if (status == ETRT_OK) status = check_device_side(call, "dst", dst, size, s->device);
    } else if (kind == ETRT_COPY_DEVICE_TO_HOST) {
      status = check_device_side(call, "src", src, size, s->device);
      if (status == ETRT_OK) status = check_host_side(call, "dst", dst, size, s->device);
    } else {
      status = check_device_side(call, "src", src, size, s->device);
      if (status == ETRT_OK) status = check_device_side(call, "dst", dst, size, s->device);
    }
    if (status == ETRT_OK) {
      status =
          enqueue(call, s, (sim_item){.type = SIM_ITEM_COPY, .dst = dst, .src = src, .size = size});
    }
  }
  unlock();
  return status;
}

static etrt_status sim_memset_async(void *dst, int value, size_t size, etrt_stream stream) {
  lock();
  sim_stream *s = NULL;
  etrt_status status = resolve_stream("memset_async", stream, &s);
  if (status == ETRT_OK) status = count_call(ETRT_SIM_FAULT_COPY, "memset_async");
  if (status == ETRT_OK && size > 0) {
    status = check_device_side("memset_async", "dst", dst, size, s->device);
    if (status == ETRT_OK) {
      status =
          enqueue("memset_async", s,
                  (sim_item){.type = SIM_ITEM_MEMSET, .dst = dst, .size = size, .value = value});
    }
  }
  unlock();
  return status;
}

static etrt_status sim_launch_host_func(etrt_stream stream, etrt_host_fn fn, void *user) {
  if (fn == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim launch_host_func: NULL function");
  lock();
  sim_stream *s = NULL;
  etrt_status status = resolve_stream("launch_host_func", stream, &s);
  if (status == ETRT_OK) {
    status = enqueue("launch_host_func", s,
                     (sim_item){.type = SIM_ITEM_HOST_FN, .fn = fn, .user = user});
  }
  unlock();
  return status;
}

/* ---- events --------------------------------------------------------------------- */

static sim_event *find_event(etrt_event handle) {
  for (sim_event *e = sim.events; e != NULL; e = e->next) {
    if ((etrt_event)e == handle) return e;
  }
  return NULL;
}

static etrt_status unknown_event(const char *call, etrt_event event) {
  return etrt_error(
      ETRT_ERROR_INVALID_ARGUMENT,
      "sim %s: %p is not a live event of the simulated devices (destroyed, or from another driver)",
      call, event);
}

static int event_done(const sim_event *e) {
  if (!e->recorded) return 1;
  sim_stream *s = find_stream_id(e->stream_id);
  return s == NULL || s->completed_seq >= e->seq;
}

static etrt_status sim_event_create(etrt_event *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim event_create: NULL output");
  lock();
  etrt_status status = ETRT_OK;
  if (sim.count == 0) {
    status = no_devices("event_create");
  } else {
    tls_refresh();
    sim_event *e = calloc(1, sizeof *e);
    if (e == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim event_create: out of host memory");
    } else {
      e->device = tls.device;
      e->next = sim.events;
      sim.events = e;
    }
    *out = e;
  }
  unlock();
  return status;
}

static etrt_status sim_event_destroy(etrt_event event) {
  if (event == NULL) return ETRT_OK;
  lock();
  for (sim_event **p = &sim.events; *p != NULL; p = &(*p)->next) {
    if ((etrt_event)*p == event) {
      sim_event *e = *p;
      *p = e->next;
      free(e);
      unlock();
      return ETRT_OK;
    }
  }
  etrt_status status = unknown_event("event_destroy", event);
  unlock();
  return status;
}

static etrt_status sim_event_record(etrt_event event, etrt_stream stream) {
  lock();
  sim_stream *s = NULL;
  sim_event *e = find_event(event);
  etrt_status status =
      e ? resolve_stream("event_record", stream, &s) : unknown_event("event_record", event);
  if (status == ETRT_OK && s->device != e->device) {
    status = etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                        "sim event_record: the event belongs to sim:%d, the stream to sim:%d",
                        e->device, s->device);
  }
  if (status == ETRT_OK) status = enqueue("event_record", s, (sim_item){.type = SIM_ITEM_RECORD});
  if (status == ETRT_OK) {
    ++sim.event_records;
    e->recorded = 1;
    e->stream_id = s->id;
    e->seq = s->last_seq;
  }
  unlock();
  return status;
}

static etrt_status sim_stream_wait_event(etrt_stream stream, etrt_event event) {
  lock();
  sim_stream *s = NULL;
  sim_event *e = find_event(event);
  etrt_status status = e ? resolve_stream("stream_wait_event", stream, &s)
                         : unknown_event("stream_wait_event", event);
  /* A wait on a completed (or never recorded) event has nothing to wait for. */
  if (status == ETRT_OK && !event_done(e)) {
    status =
        enqueue("stream_wait_event", s,
                (sim_item){.type = SIM_ITEM_WAIT, .wait_stream = e->stream_id, .wait_seq = e->seq});
  }
  unlock();
  return status;
}

static etrt_status sim_event_query(etrt_event event) {
  lock();
  sim_event *e = find_event(event);
  etrt_status status = e == NULL       ? unknown_event("event_query", event)
                       : event_done(e) ? ETRT_OK
                                       : ETRT_ERROR_STATE;
  unlock();
  return status;
}

static etrt_status sim_event_synchronize(etrt_event event) {
  lock();
  sim_event *e = find_event(event);
  etrt_status status = e == NULL ? unknown_event("event_synchronize", event) : ETRT_OK;
  if (status == ETRT_OK) status = count_call(ETRT_SIM_FAULT_SYNC, "event_synchronize");
  if (status == ETRT_OK && e->recorded) status = run_until(e->stream_id, e->seq);
  unlock();
  return status;
}

/* ---- green contexts ------------------------------------------------------------- */

static etrt_status sim_green_stream_create(int device, int sm_count, etrt_stream *out,
                                           int *granted) {
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim green_stream_create: NULL output");
  *out = NULL;
  lock();
  etrt_status status = sim.count == 0 ? no_devices("green_stream_create")
                                      : check_device_index("green_stream_create", device);
  if (status == ETRT_OK) {
    int total = sim.attributes[device].sm_count;
    long rounded =
        ((long)sm_count + SIM_GREEN_ALIGNMENT - 1) / SIM_GREEN_ALIGNMENT * SIM_GREEN_ALIGNMENT;
    if (sm_count < 1 || rounded > total) {
      status = etrt_error(
          ETRT_ERROR_INVALID_ARGUMENT,
          "sim green_stream_create: %d SMs requested on sim:%d, which has %d (partitions are "
          "multiples of %d)",
          sm_count, device, total, SIM_GREEN_ALIGNMENT);
    } else {
      sim_stream *s = new_stream(device, SIM_STREAM_GREEN);
      if (s == NULL) {
        status =
            etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim green_stream_create: out of host memory");
      } else {
        s->sm_count = (int)rounded;
        *out = s;
        if (granted) *granted = (int)rounded;
      }
    }
  }
  unlock();
  return status;
}

static etrt_status sim_green_stream_destroy(etrt_stream stream) {
  return destroy_handle("green_stream_destroy", stream, 1);
}

static int sim_green_context_current(void) {
  lock();
  tls_refresh();
  int current = tls.green_current;
  unlock();
  return current;
}

void etrt_sim_set_green_context_current(int current) {
  lock();
  tls_refresh();
  tls.green_current = current != 0;
  unlock();
}

/* ---- whole-state queries and reset ---------------------------------------------- */

size_t etrt_sim_bytes_in_use(void) {
  lock();
  size_t n = sim.bytes_in_use;
  unlock();
  return n;
}

size_t etrt_sim_pending_work(void) {
  lock();
  size_t n = sim.pending;
  unlock();
  return n;
}

etrt_status etrt_sim_reset(int count) {
  if (count < 0 || count > ETRT_SIM_MAX_DEVICES) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sim: %d devices requested (0..%d)", count,
                      ETRT_SIM_MAX_DEVICES);
  }
  lock();
  while (sim.streams != NULL) {
    sim_stream *s = sim.streams;
    sim.streams = s->next;
    while (s->head != NULL) {
      sim_item *item = s->head;
      s->head = item->next;
      free(item);
    }
    free(s);
  }
  while (sim.events != NULL) {
    sim_event *e = sim.events;
    sim.events = e->next;
    free(e);
  }
  for (size_t i = 0; i < sim.alloc_count; i++) free((void *)sim.allocs[i].base);
  free(sim.allocs);
  sim.allocs = NULL;
  sim.alloc_count = sim.alloc_capacity = 0;
  sim.bytes_in_use = 0;
  sim.pending = 0;
  memset(sim.device_bytes, 0, sizeof sim.device_bytes);
  memset(sim.legacy, 0, sizeof sim.legacy);
  memset(sim.calls, 0, sizeof sim.calls);
  memset(sim.fail_at, 0, sizeof sim.fail_at);
  sim.event_records = 0;
  sim.generation++;
  pthread_cond_broadcast(&sim.idle); /* a waiter in run_until sees the new generation */
  sim.count = 0;
  etrt_status status = ETRT_OK;
  for (int d = 0; d < count; d++) {
    default_attributes(d, &sim.attributes[d]);
    sim.legacy[d] = new_stream(d, SIM_STREAM_LEGACY);
    if (sim.legacy[d] == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "sim: out of host memory for device %d", d);
      break;
    }
    sim.count = d + 1;
  }
  unlock();
  return status;
}

static const etrt_device_driver sim_driver = {
    .name = "sim",
    .device_count = sim_device_count,
    .get_device = sim_get_device,
    .set_device = sim_set_device,
    .attributes = sim_attributes,
    .malloc_device = sim_malloc_device,
    .free_device = sim_free_device,
    .malloc_pinned = sim_malloc_pinned,
    .free_pinned = sim_free_pinned,
    .malloc_managed = sim_malloc_managed,
    .pointer_info = sim_pointer_info,
    .memcpy_async = sim_memcpy_async,
    .memset_async = sim_memset_async,
    .launch_host_func = sim_launch_host_func,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_synchronize = sim_stream_synchronize,
    .stream_device = sim_stream_device,
    .stream_wait_event = sim_stream_wait_event,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .event_query = sim_event_query,
    .event_synchronize = sim_event_synchronize,
    .green_stream_create = sim_green_stream_create,
    .green_stream_destroy = sim_green_stream_destroy,
    .green_context_current = sim_green_context_current,
};

const etrt_device_driver *etrt_device_sim_driver(void) { return &sim_driver; }
