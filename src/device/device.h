/* The device layer: the one interface through which the runtime, the engine and the
 * delegate use a GPU. Two drivers implement it: cuda.c (the CUDA runtime API) and
 * sim.c (simulated GPUs for machines without one). Nothing above this layer includes
 * a CUDA header; streams and events are opaque pointers.
 *
 * Every function reports failure through etrt_status with a message naming the call
 * and the device. All functions are thread-safe. */
#ifndef ETRT_DEVICE_DEVICE_H
#define ETRT_DEVICE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/status.h"

/* A stream or an event of the active driver. For CUDA these are cudaStream_t and
 * cudaEvent_t. ETRT_STREAM_PER_THREAD is the per-thread default stream
 * (cudaStreamPerThread); NULL is the legacy default stream. */
typedef void *etrt_stream;
typedef void *etrt_event;
#define ETRT_STREAM_PER_THREAD ((etrt_stream)(uintptr_t)0x2)

typedef enum etrt_pointer_kind {
  ETRT_POINTER_PAGEABLE_HOST = 0, /* ordinary malloc'd or stack memory */
  ETRT_POINTER_PINNED_HOST = 1,   /* page-locked host memory registered with the driver */
  ETRT_POINTER_DEVICE = 2,        /* device memory; `device` says which */
  ETRT_POINTER_MANAGED = 3        /* unified (managed) memory */
} etrt_pointer_kind;

typedef struct etrt_pointer_info {
  etrt_pointer_kind kind;
  int device; /* for DEVICE and MANAGED: the owning device; -1 otherwise */
} etrt_pointer_info;

typedef struct etrt_device_attributes {
  char name[64];
  int integrated;             /* shares memory with the host */
  int pageable_memory_access; /* reads pageable host memory through host page tables */
  int compute_major, compute_minor;
  int sm_count;
  size_t total_memory;
} etrt_device_attributes;

typedef enum etrt_copy_kind {
  ETRT_COPY_HOST_TO_DEVICE = 1,
  ETRT_COPY_DEVICE_TO_HOST = 2,
  ETRT_COPY_DEVICE_TO_DEVICE = 3
} etrt_copy_kind;

typedef void (*etrt_host_fn)(void *user);

typedef struct etrt_device_driver {
  const char *name; /* "cuda" or "sim" */

  int (*device_count)(void);
  etrt_status (*get_device)(int *device);
  etrt_status (*set_device)(int device);
  etrt_status (*attributes)(int device, etrt_device_attributes *out);

  /* Device memory on the current device. */
  etrt_status (*malloc_device)(size_t size, void **out);
  etrt_status (*free_device)(void *ptr);
  /* Page-locked host memory. */
  etrt_status (*malloc_pinned)(size_t size, void **out);
  etrt_status (*free_pinned)(void *ptr);
  /* Managed memory (device-accessible and host-accessible). */
  etrt_status (*malloc_managed)(size_t size, void **out);

  etrt_status (*pointer_info)(const void *ptr, etrt_pointer_info *out);

  /* Asynchronous on `stream`; host memory must stay valid until the stream reaches
   * the copy. */
  etrt_status (*memcpy_async)(void *dst, const void *src, size_t size, etrt_copy_kind kind,
                              etrt_stream stream);
  etrt_status (*memset_async)(void *dst, int value, size_t size, etrt_stream stream);
  /* Runs fn(user) on the host once the stream reaches this point. */
  etrt_status (*launch_host_func)(etrt_stream stream, etrt_host_fn fn, void *user);

  etrt_status (*stream_create)(etrt_stream *out); /* on the current device, non-blocking */
  etrt_status (*stream_destroy)(etrt_stream stream);
  etrt_status (*stream_synchronize)(etrt_stream stream);
  /* The device a stream belongs to (for the special streams: the current device). */
  etrt_status (*stream_device)(etrt_stream stream, int *device);
  /* Makes `stream` wait for `event` before later work. */
  etrt_status (*stream_wait_event)(etrt_stream stream, etrt_event event);

  etrt_status (*event_create)(etrt_event *out); /* timing disabled */
  etrt_status (*event_destroy)(etrt_event event);
  etrt_status (*event_record)(etrt_event event, etrt_stream stream);
  /* ETRT_OK when complete, ETRT_ERROR_STATE (no message) while pending. */
  etrt_status (*event_query)(etrt_event event);
  etrt_status (*event_synchronize)(etrt_event event);

  /* Green contexts: a stream confined to `sm_count` SMs of `device` (rounded as the
   * hardware requires; the count granted is returned). NULL where unsupported. */
  etrt_status (*green_stream_create)(int device, int sm_count, etrt_stream *out, int *granted);
  etrt_status (*green_stream_destroy)(etrt_stream stream);
  /* True when the calling thread's current context is a green context (in which
   * ETRT_STREAM_PER_THREAD is invalid). */
  int (*green_context_current)(void);

  /* Opens (on != 0) or closes the range of work an attached profiler collects
   * (cudaProfilerStart/Stop: `ncu --profile-from-start off` sees only what runs inside).
   * NULL where there is no profiler to tell. */
  etrt_status (*profiler_range)(int on);
} etrt_device_driver;

/* The active driver: the one selected by etrt_device_select_sim() or by ETRT_DEVICE
 * (`sim:N` or `cuda`), else CUDA when a driver and a GPU are present, else NULL (no
 * GPU: everything runs on the CPU). */
const etrt_device_driver *etrt_device_driver_get(void);

/* The CUDA driver when it is compiled in and usable, else NULL. */
const etrt_device_driver *etrt_device_cuda_driver(void);

#endif
