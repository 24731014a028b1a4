/* The CUDA driver of the device layer on a real GPU. Without CUDA compiled in, or
 * without a usable GPU, it says "no GPU" and passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "device/device.h"
#include "etrt/stream.h"
#include "test_util.h"

#ifndef ETRT_HAVE_CUDA

int main(void) {
  CHECK(etrt_device_cuda_driver() == NULL);
  printf("no GPU (built without CUDA)\n");
  return TEST_EXIT();
}

#else

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <string.h>

static const etrt_device_driver *d;

static void test_attributes(void) {
  CHECK(strcmp(d->name, "cuda") == 0);
  CHECK(d->device_count() >= 1);
  etrt_device_attributes a;
  CHECK_OK(d->attributes(0, &a));
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  CHECK_EQ_INT(a.sm_count, sms);
  CHECK(a.compute_major >= 5);
  CHECK(a.total_memory > 0);
  CHECK(a.name[0] != '\0');
  printf("cuda:0 %s, cc %d.%d, %d SMs, integrated %d, pageable access %d\n", a.name,
         a.compute_major, a.compute_minor, a.sm_count, a.integrated, a.pageable_memory_access);
  CHECK_FAILS(d->attributes(d->device_count(), &a), ETRT_ERROR_INVALID_ARGUMENT, "out of range");
  CHECK_FAILS(d->set_device(d->device_count()), ETRT_ERROR_INVALID_ARGUMENT, "out of range");
}

static void test_classification(void) {
  void *dev = NULL, *pinned = NULL, *managed = NULL;
  void *pageable = malloc(64);
  CHECK(cudaMalloc(&dev, 256) == cudaSuccess);
  CHECK(cudaMallocHost(&pinned, 256) == cudaSuccess);
  CHECK(cudaMallocManaged(&managed, 256, cudaMemAttachGlobal) == cudaSuccess);
  etrt_pointer_info info;
  CHECK_OK(d->pointer_info(dev, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_EQ_INT(info.device, 0);
  CHECK_OK(d->pointer_info((char *)dev + 100, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_OK(d->pointer_info(pinned, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PINNED_HOST);
  CHECK_OK(d->pointer_info(managed, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_MANAGED);
  CHECK_OK(d->pointer_info(pageable, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PAGEABLE_HOST);
  CHECK_EQ_INT(info.device, -1);
  int on_stack = 0;
  CHECK_OK(d->pointer_info(&on_stack, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PAGEABLE_HOST);
  cudaFree(dev);
  cudaFreeHost(pinned);
  cudaFree(managed);
  free(pageable);

  /* The driver's own allocators classify the same way. */
  CHECK_OK(d->malloc_device(0, &dev));
  CHECK(dev != NULL);
  CHECK_OK(d->pointer_info(dev, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_DEVICE);
  CHECK_OK(d->free_device(dev));
  CHECK_OK(d->malloc_pinned(16, &pinned));
  CHECK_OK(d->pointer_info(pinned, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_PINNED_HOST);
  CHECK_OK(d->free_pinned(pinned));
  CHECK_OK(d->malloc_managed(16, &managed));
  CHECK_OK(d->pointer_info(managed, &info));
  CHECK_EQ_INT(info.kind, ETRT_POINTER_MANAGED);
  CHECK_OK(d->free_device(managed));
}

static int host_fn_ran;
static void host_fn(void *user) { host_fn_ran = (int)(intptr_t)user; }

static void test_copies_streams_events(void) {
  enum { N = 1 << 20 };
  unsigned char *in = malloc(N), *out = malloc(N);
  for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 7);
  memset(out, 0, N);
  void *a = NULL, *b = NULL;
  CHECK_OK(d->malloc_device(N, &a));
  CHECK_OK(d->malloc_device(N, &b));
  etrt_stream s1 = NULL, s2 = NULL;
  etrt_event e = NULL;
  CHECK_OK(d->stream_create(&s1));
  CHECK_OK(d->stream_create(&s2));
  CHECK_OK(d->event_create(&e));
  int device = -1;
  CHECK_OK(d->stream_device(s1, &device));
  CHECK_EQ_INT(device, 0);
  CHECK_OK(d->stream_device(ETRT_STREAM_PER_THREAD, &device));
  CHECK_EQ_INT(device, 0);

  CHECK_OK(d->memcpy_async(a, in, N, ETRT_COPY_HOST_TO_DEVICE, s1));
  CHECK_OK(d->event_record(e, s1));
  CHECK_OK(d->stream_wait_event(s2, e));
  CHECK_OK(d->memcpy_async(b, a, N, ETRT_COPY_DEVICE_TO_DEVICE, s2));
  CHECK_OK(d->memcpy_async(out, b, N, ETRT_COPY_DEVICE_TO_HOST, s2));
  CHECK_OK(d->launch_host_func(s2, host_fn, (void *)(intptr_t)7));
  CHECK_OK(d->stream_synchronize(s2));
  CHECK(memcmp(in, out, N) == 0);
  CHECK_EQ_INT(host_fn_ran, 7);
  CHECK_OK(d->event_query(e));
  CHECK_OK(d->event_synchronize(e));

  CHECK_OK(d->memset_async(a, 3, N, ETRT_STREAM_PER_THREAD));
  CHECK_OK(d->memcpy_async(out, a, N, ETRT_COPY_DEVICE_TO_HOST, ETRT_STREAM_PER_THREAD));
  CHECK_OK(d->stream_synchronize(ETRT_STREAM_PER_THREAD));
  CHECK(out[0] == 3 && out[N - 1] == 3);

  /* Errors name the call. */
  CHECK_FAILS(d->free_device((char *)a + 1), ETRT_ERROR_DEVICE, "cudaFree");

  CHECK_OK(d->event_destroy(e));
  CHECK_OK(d->stream_destroy(s1));
  CHECK_OK(d->stream_destroy(s2));
  CHECK_OK(d->free_device(a));
  CHECK_OK(d->free_device(b));
  free(in);
  free(out);
}

static void test_green_stream(void) {
  if (d->green_stream_create == NULL) {
    printf("the driver has no green contexts; skipped\n");
    return;
  }
  void *stream = NULL;
  int granted = 0;
  CHECK_OK(etrt_green_stream_create(0, 16, &stream, &granted));
  CHECK(granted >= 16);
  printf("green stream: 16 SMs requested, %d granted\n", granted);
  int device = -1;
  CHECK_OK(d->stream_device(stream, &device));
  CHECK_EQ_INT(device, 0);

  /* Work on it runs with no green context current. */
  void *a = NULL;
  unsigned char host[256];
  CHECK_OK(d->malloc_device(sizeof host, &a));
  CHECK_OK(d->memset_async(a, 9, sizeof host, stream));
  CHECK_OK(d->memcpy_async(host, a, sizeof host, ETRT_COPY_DEVICE_TO_HOST, stream));
  CHECK_OK(d->stream_synchronize(stream));
  CHECK(host[0] == 9 && host[255] == 9);

  /* Make its green context current: the per-thread stream becomes invalid. */
  PFN_cuStreamGetGreenCtx_v12040 get_green = NULL;
  PFN_cuCtxFromGreenCtx_v12040 from_green = NULL;
  PFN_cuCtxPushCurrent_v4000 push = NULL;
  PFN_cuCtxPopCurrent_v4000 pop = NULL;
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuStreamGetGreenCtx", &fn, 12040, cudaEnableDefault, &q);
  memcpy(&get_green, &fn, sizeof fn);
  cudaGetDriverEntryPointByVersion("cuCtxFromGreenCtx", &fn, 12040, cudaEnableDefault, &q);
  memcpy(&from_green, &fn, sizeof fn);
  cudaGetDriverEntryPointByVersion("cuCtxPushCurrent", &fn, 4000, cudaEnableDefault, &q);
  memcpy(&push, &fn, sizeof fn);
  cudaGetDriverEntryPointByVersion("cuCtxPopCurrent", &fn, 4000, cudaEnableDefault, &q);
  memcpy(&pop, &fn, sizeof fn);
  CHECK(get_green && from_green && push && pop);
  if (get_green && from_green && push && pop) {
    CUgreenCtx green = NULL;
    CUcontext context = NULL, popped = NULL;
    CHECK(get_green((CUstream)stream, &green) == CUDA_SUCCESS);
    CHECK(from_green(&context, green) == CUDA_SUCCESS);
    CHECK_EQ_INT(d->green_context_current(), 0);
    CHECK(push(context) == CUDA_SUCCESS);
    CHECK_EQ_INT(d->green_context_current(), 1);
    etrt_status status = d->memset_async(a, 1, sizeof host, ETRT_STREAM_PER_THREAD);
    if (status == ETRT_OK) status = d->stream_synchronize(ETRT_STREAM_PER_THREAD);
    CHECK(status != ETRT_OK);
    printf("per-thread stream under a green context: %s\n", etrt_last_error());
    /* The green stream itself still works while its context is current. */
    CHECK_OK(d->memset_async(a, 2, sizeof host, stream));
    CHECK_OK(d->stream_synchronize(stream));
    CHECK(pop(&popped) == CUDA_SUCCESS);
    CHECK(popped == context);
    CHECK_EQ_INT(d->green_context_current(), 0);
    cudaGetLastError();
  }

  CHECK_OK(d->free_device(a));
  CHECK_OK(etrt_green_stream_destroy(stream));
  CHECK_FAILS(etrt_green_stream_destroy(stream), ETRT_ERROR_INVALID_ARGUMENT,
              "not a green-context stream");
  CHECK_FAILS(etrt_green_stream_create(0, 0, &stream, &granted), ETRT_ERROR_INVALID_ARGUMENT,
              "out of range");
}

int main(void) {
  d = etrt_device_cuda_driver();
  if (d == NULL) {
    printf("no GPU\n");
    return 0;
  }
  if (getenv("ETRT_DEVICE") != NULL) unsetenv("ETRT_DEVICE");
  if (etrt_device_driver_get() != d) {
    printf("the active driver is not CUDA; no GPU test\n");
    return 0;
  }
  RUN_TEST(test_attributes);
  RUN_TEST(test_classification);
  RUN_TEST(test_copies_streams_events);
  RUN_TEST(test_green_stream);
  return TEST_EXIT();
}

#endif
