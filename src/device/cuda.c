/* The CUDA driver of the device layer, on the CUDA runtime API (linked statically).
 *
 * The driver API is reached only through cudaGetDriverEntryPointByVersion: nothing
 * links libcuda, so the library starts on a machine without an NVIDIA driver, where
 * cudaGetDeviceCount fails and etrt_device_cuda_driver() returns NULL.
 *
 * Green contexts (CUDA 12.4+ driver API; streams on them need 12.5): a green stream
 * is made by splitting the device's SM resource, generating a descriptor, creating a
 * green context and a non-blocking stream on it. A table maps each such stream to its
 * green context so that destroy releases both, stream first.
 *
 * "Is a green context current?" There is no driver call that says so directly. The
 * current context (cuCtxGetCurrent) is a green context's when it is one made here
 * (the table keeps each green context's converted CUcontext from cuCtxFromGreenCtx),
 * or when its SM resource (cuCtxGetDevResource) holds fewer SMs than its device
 * (cuDeviceGetDevResource): primary and ordinary contexts always own every SM, green
 * partitions are whole groups of 8 on Hopper and so never all of a 132-SM device. A
 * foreign green context spanning every SM of a device would be missed; work on the
 * per-thread stream under it then fails in CUDA itself with "invalid resource handle". */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "device/device.h"

/* ---- driver entry points -------------------------------------------------------- */

static struct {
  PFN_cuGetErrorString_v6000 get_error_string;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current;
  PFN_cuCtxGetDevice_v2000 ctx_get_device;
  PFN_cuCtxGetDevResource_v12040 ctx_get_dev_resource;
  PFN_cuDeviceGetDevResource_v12040 device_get_dev_resource;
  PFN_cuDevSmResourceSplitByCount_v12040 sm_resource_split_by_count;
  PFN_cuDevResourceGenerateDesc_v12040 dev_resource_generate_desc;
  PFN_cuGreenCtxCreate_v12040 green_ctx_create;
  PFN_cuGreenCtxDestroy_v12040 green_ctx_destroy;
  PFN_cuCtxFromGreenCtx_v12040 ctx_from_green_ctx;
  PFN_cuGreenCtxStreamCreate_v12050 green_ctx_stream_create;
} cu;

/* Looks up `symbol` in the ABI of CUDA `version`; NULL when the driver lacks it. */
static void *entry_point(const char *symbol, unsigned int version) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &query);
  if (e != cudaSuccess || query != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return NULL;
  }
  return fn;
}

/* Function pointers cannot be assigned from void * in ISO C; copy the bits. */
#define LOAD(field, symbol, version)          \
  do {                                        \
    void *fn_ = entry_point(symbol, version); \
    memcpy(&cu.field, &fn_, sizeof cu.field); \
  } while (0)

static void load_entry_points(void) {
  LOAD(get_error_string, "cuGetErrorString", 6000);
  LOAD(device_get, "cuDeviceGet", 2000);
  LOAD(ctx_get_current, "cuCtxGetCurrent", 4000);
  LOAD(ctx_get_device, "cuCtxGetDevice", 2000);
  LOAD(ctx_get_dev_resource, "cuCtxGetDevResource", 12040);
  LOAD(device_get_dev_resource, "cuDeviceGetDevResource", 12040);
  LOAD(sm_resource_split_by_count, "cuDevSmResourceSplitByCount", 12040);
  LOAD(dev_resource_generate_desc, "cuDevResourceGenerateDesc", 12040);
  LOAD(green_ctx_create, "cuGreenCtxCreate", 12040);
  LOAD(green_ctx_destroy, "cuGreenCtxDestroy", 12040);
  LOAD(ctx_from_green_ctx, "cuCtxFromGreenCtx", 12040);
  LOAD(green_ctx_stream_create, "cuGreenCtxStreamCreate", 12050);
}

static int have_green_contexts(void) {
  return cu.device_get && cu.device_get_dev_resource && cu.sm_resource_split_by_count &&
         cu.dev_resource_generate_desc && cu.green_ctx_create && cu.green_ctx_destroy &&
         cu.ctx_from_green_ctx && cu.green_ctx_stream_create;
}

/* ---- errors --------------------------------------------------------------------- */

static int current_device_or(int fallback) {
  int device = fallback;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    device = fallback;
  }
  return device;
}

/* A failed runtime call: names the call, CUDA's error and the device (-1: current). */
static etrt_status cuda_fail(cudaError_t e, const char *call, int device) {
  cudaGetLastError(); /* clear the non-sticky error so that later calls start clean */
  if (device < 0) device = current_device_or(-1);
  etrt_status status =
      e == cudaErrorMemoryAllocation ? ETRT_ERROR_OUT_OF_MEMORY : ETRT_ERROR_DEVICE;
  return etrt_error(status, "%s failed on cuda:%d: %s (%s)", call, device, cudaGetErrorString(e),
                    cudaGetErrorName(e));
}

static etrt_status cu_fail(CUresult r, const char *call, int device) {
  const char *text = NULL;
  if (cu.get_error_string == NULL || cu.get_error_string(r, &text) != CUDA_SUCCESS ||
      text == NULL) {
    text = "unknown driver error";
  }
  return etrt_error(ETRT_ERROR_DEVICE, "%s failed on cuda:%d: %s (CUresult %d)", call, device, text,
                    (int)r);
}

#define CUDA_CHECK(expr, call, device)                         \
  do {                                                         \
    cudaError_t e_ = (expr);                                   \
    if (e_ != cudaSuccess) return cuda_fail(e_, call, device); \
  } while (0)

/* ---- devices -------------------------------------------------------------------- */

static int device_total;
static etrt_device_attributes *attribute_cache; /* device_total entries */
static unsigned char *attribute_cached;
static pthread_mutex_t attribute_lock = PTHREAD_MUTEX_INITIALIZER;

static int cuda_device_count(void) { return device_total; }

static etrt_status cuda_get_device(int *device) {
  if (device == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda get_device: NULL output");
  CUDA_CHECK(cudaGetDevice(device), "cudaGetDevice", -1);
  return ETRT_OK;
}

static etrt_status cuda_set_device(int device) {
  if (device < 0 || device >= device_total) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "cuda set_device: device %d out of range (%d devices)", device, device_total);
  }
  CUDA_CHECK(cudaSetDevice(device), "cudaSetDevice", device);
  return ETRT_OK;
}

static etrt_status query_attributes(int device, etrt_device_attributes *out) {
  struct cudaDeviceProp prop;
  memset(out, 0, sizeof *out);
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties", device);
  snprintf(out->name, sizeof out->name, "%.*s", (int)(sizeof out->name - 1), prop.name);
  out->total_memory = prop.totalGlobalMem;
  CUDA_CHECK(cudaDeviceGetAttribute(&out->integrated, cudaDevAttrIntegrated, device),
             "cudaDeviceGetAttribute(integrated)", device);
  CUDA_CHECK(
      cudaDeviceGetAttribute(&out->pageable_memory_access, cudaDevAttrPageableMemoryAccess, device),
      "cudaDeviceGetAttribute(pageableMemoryAccess)", device);
  CUDA_CHECK(cudaDeviceGetAttribute(&out->compute_major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute(computeCapabilityMajor)", device);
  CUDA_CHECK(cudaDeviceGetAttribute(&out->compute_minor, cudaDevAttrComputeCapabilityMinor, device),
             "cudaDeviceGetAttribute(computeCapabilityMinor)", device);
  CUDA_CHECK(cudaDeviceGetAttribute(&out->sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(multiProcessorCount)", device);
  return ETRT_OK;
}

static etrt_status cuda_attributes(int device, etrt_device_attributes *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda attributes: NULL output");
  if (device < 0 || device >= device_total) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "cuda attributes: device %d out of range (%d devices)", device, device_total);
  }
  etrt_status status = ETRT_OK;
  pthread_mutex_lock(&attribute_lock);
  if (!attribute_cached[device]) {
    status = query_attributes(device, &attribute_cache[device]);
    attribute_cached[device] = status == ETRT_OK;
  }
  if (status == ETRT_OK) *out = attribute_cache[device];
  pthread_mutex_unlock(&attribute_lock);
  return status;
}

/* ---- memory --------------------------------------------------------------------- */

/* A zero-byte request still returns a valid, distinct address (zero-size tensors
 * bind one). */
static size_t at_least_one(size_t size) { return size ? size : 1; }

static etrt_status cuda_malloc_device(size_t size, void **out) {
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda malloc_device: NULL output");
  *out = NULL;
  cudaError_t e = cudaMalloc(out, at_least_one(size));
  if (e != cudaSuccess)
    return etrt_error_context(cuda_fail(e, "cudaMalloc", -1), "%zu bytes: ", size);
  return ETRT_OK;
}

static etrt_status cuda_free_device(void *ptr) {
  CUDA_CHECK(cudaFree(ptr), "cudaFree", -1);
  return ETRT_OK;
}

static etrt_status cuda_malloc_pinned(size_t size, void **out) {
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda malloc_pinned: NULL output");
  *out = NULL;
  cudaError_t e = cudaMallocHost(out, at_least_one(size));
  if (e != cudaSuccess)
    return etrt_error_context(cuda_fail(e, "cudaMallocHost", -1), "%zu bytes: ", size);
  return ETRT_OK;
}

static etrt_status cuda_free_pinned(void *ptr) {
  CUDA_CHECK(cudaFreeHost(ptr), "cudaFreeHost", -1);
  return ETRT_OK;
}

static etrt_status cuda_malloc_managed(size_t size, void **out) {
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda malloc_managed: NULL output");
  *out = NULL;
  cudaError_t e = cudaMallocManaged(out, at_least_one(size), cudaMemAttachGlobal);
  if (e != cudaSuccess)
    return etrt_error_context(cuda_fail(e, "cudaMallocManaged", -1), "%zu bytes: ", size);
  return ETRT_OK;
}

static etrt_status cuda_pointer_info(const void *ptr, etrt_pointer_info *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda pointer_info: NULL output");
  out->kind = ETRT_POINTER_PAGEABLE_HOST;
  out->device = -1;
  struct cudaPointerAttributes a;
  cudaError_t e = cudaPointerGetAttributes(&a, ptr);
  if (e == cudaErrorInvalidValue) {
    /* Older drivers refuse unregistered host pointers instead of saying so. */
    cudaGetLastError();
    return ETRT_OK;
  }
  if (e != cudaSuccess) return cuda_fail(e, "cudaPointerGetAttributes", -1);
  switch (a.type) {
    case cudaMemoryTypeUnregistered:
      break;
    case cudaMemoryTypeHost:
      out->kind = ETRT_POINTER_PINNED_HOST;
      break;
    case cudaMemoryTypeDevice:
      out->kind = ETRT_POINTER_DEVICE;
      out->device = a.device;
      break;
    case cudaMemoryTypeManaged:
      out->kind = ETRT_POINTER_MANAGED;
      out->device = a.device;
      break;
  }
  return ETRT_OK;
}

/* ---- streams and work ----------------------------------------------------------- */

/* The green-context streams made here (section below), each with its context; plain
 * stream_destroy must refuse them. */
typedef struct green_entry {
  cudaStream_t stream;
  CUgreenCtx green;
  CUcontext context; /* the green context as a CUcontext, to recognise it when current */
  int device;
} green_entry;

static pthread_mutex_t green_lock = PTHREAD_MUTEX_INITIALIZER;
static green_entry *green_table;
static size_t green_count, green_capacity;

static int is_green_stream(cudaStream_t stream) {
  int found = 0;
  pthread_mutex_lock(&green_lock);
  for (size_t i = 0; i < green_count && !found; i++) found = green_table[i].stream == stream;
  pthread_mutex_unlock(&green_lock);
  return found;
}

static cudaStream_t to_cuda(etrt_stream stream) {
  return stream == ETRT_STREAM_PER_THREAD ? cudaStreamPerThread : (cudaStream_t)stream;
}

static etrt_status cuda_memcpy_async(void *dst, const void *src, size_t size, etrt_copy_kind kind,
                                     etrt_stream stream) {
  enum cudaMemcpyKind k;
  const char *call;
  switch (kind) {
    case ETRT_COPY_HOST_TO_DEVICE:
      k = cudaMemcpyHostToDevice;
      call = "cudaMemcpyAsync(host-to-device)";
      break;
    case ETRT_COPY_DEVICE_TO_HOST:
      k = cudaMemcpyDeviceToHost;
      call = "cudaMemcpyAsync(device-to-host)";
      break;
    case ETRT_COPY_DEVICE_TO_DEVICE:
      k = cudaMemcpyDeviceToDevice;
      call = "cudaMemcpyAsync(device-to-device)";
      break;
    default:
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda memcpy_async: unknown copy kind %d",
                        (int)kind);
  }
  if (size == 0) return ETRT_OK;
  cudaError_t e = cudaMemcpyAsync(dst, src, size, k, to_cuda(stream));
  if (e != cudaSuccess)
    return etrt_error_context(cuda_fail(e, call, -1), "%zu bytes %p -> %p: ", size, src, dst);
  return ETRT_OK;
}

static etrt_status cuda_memset_async(void *dst, int value, size_t size, etrt_stream stream) {
  if (size == 0) return ETRT_OK;
  CUDA_CHECK(cudaMemsetAsync(dst, value, size, to_cuda(stream)), "cudaMemsetAsync", -1);
  return ETRT_OK;
}

static etrt_status cuda_launch_host_func(etrt_stream stream, etrt_host_fn fn, void *user) {
  if (fn == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda launch_host_func: NULL function");
  CUDA_CHECK(cudaLaunchHostFunc(to_cuda(stream), fn, user), "cudaLaunchHostFunc", -1);
  return ETRT_OK;
}

static etrt_status cuda_stream_create(etrt_stream *out) {
  if (out == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda stream_create: NULL output");
  cudaStream_t s = NULL;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", -1);
  *out = s;
  return ETRT_OK;
}

static etrt_status cuda_stream_destroy(etrt_stream stream) {
  if (stream == NULL || stream == ETRT_STREAM_PER_THREAD) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "cuda stream_destroy: the default streams cannot be destroyed");
  }
  if (is_green_stream((cudaStream_t)stream)) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "cuda stream_destroy: stream %p is a green-context stream; destroy it with "
                      "green_stream_destroy",
                      stream);
  }
  CUDA_CHECK(cudaStreamDestroy((cudaStream_t)stream), "cudaStreamDestroy", -1);
  return ETRT_OK;
}

static etrt_status cuda_stream_synchronize(etrt_stream stream) {
  CUDA_CHECK(cudaStreamSynchronize(to_cuda(stream)), "cudaStreamSynchronize", -1);
  return ETRT_OK;
}

static etrt_status cuda_stream_device(etrt_stream stream, int *device) {
  if (device == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda stream_device: NULL output");
  CUDA_CHECK(cudaStreamGetDevice(to_cuda(stream), device), "cudaStreamGetDevice", -1);
  return ETRT_OK;
}

static etrt_status cuda_stream_wait_event(etrt_stream stream, etrt_event event) {
  CUDA_CHECK(cudaStreamWaitEvent(to_cuda(stream), (cudaEvent_t)event, 0), "cudaStreamWaitEvent",
             -1);
  return ETRT_OK;
}

/* ---- events --------------------------------------------------------------------- */

static etrt_status cuda_event_create(etrt_event *out) {
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "cuda event_create: NULL output");
  cudaEvent_t e = NULL;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags", -1);
  *out = e;
  return ETRT_OK;
}

static etrt_status cuda_event_destroy(etrt_event event) {
  if (event == NULL) return ETRT_OK;
  CUDA_CHECK(cudaEventDestroy((cudaEvent_t)event), "cudaEventDestroy", -1);
  return ETRT_OK;
}

static etrt_status cuda_event_record(etrt_event event, etrt_stream stream) {
  CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, to_cuda(stream)), "cudaEventRecord", -1);
  return ETRT_OK;
}

static etrt_status cuda_event_query(etrt_event event) {
  cudaError_t e = cudaEventQuery((cudaEvent_t)event);
  if (e == cudaSuccess) return ETRT_OK;
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return ETRT_ERROR_STATE;
  }
  return cuda_fail(e, "cudaEventQuery", -1);
}

static etrt_status cuda_event_synchronize(etrt_event event) {
  CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)event), "cudaEventSynchronize", -1);
  return ETRT_OK;
}

/* ---- green contexts ------------------------------------------------------------- */

static etrt_status green_table_add(green_entry entry) {
  etrt_status status = ETRT_OK;
  pthread_mutex_lock(&green_lock);
  if (green_count == green_capacity) {
    size_t capacity = green_capacity ? green_capacity * 2 : 8;
    green_entry *grown = realloc(green_table, capacity * sizeof *grown);
    if (grown == NULL) {
      status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "cuda green_stream_create: out of host memory");
    } else {
      green_table = grown;
      green_capacity = capacity;
    }
  }
  if (status == ETRT_OK) green_table[green_count++] = entry;
  pthread_mutex_unlock(&green_lock);
  return status;
}

static int green_table_take(cudaStream_t stream, green_entry *out) {
  int found = 0;
  pthread_mutex_lock(&green_lock);
  for (size_t i = 0; i < green_count; i++) {
    if (green_table[i].stream == stream) {
      *out = green_table[i];
      green_table[i] = green_table[--green_count];
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&green_lock);
  return found;
}

/* The primary context must be alive before a green context is made on the device
 * (else each green context would initialise and tear down its own); cudaSetDevice
 * initialises it. The caller's current device is put back. */
static etrt_status init_primary_context(int device) {
  int previous = 0;
  CUDA_CHECK(cudaGetDevice(&previous), "cudaGetDevice", device);
  CUDA_CHECK(cudaSetDevice(device), "cudaSetDevice", device);
  if (previous != device) CUDA_CHECK(cudaSetDevice(previous), "cudaSetDevice(restore)", previous);
  return ETRT_OK;
}

static etrt_status cuda_green_stream_create(int device, int sm_count, etrt_stream *out,
                                            int *granted) {
  static const char call[] = "cuda green_stream_create";
  if (out == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: NULL output", call);
  *out = NULL;
  if (device < 0 || device >= device_total) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: device %d out of range (%d devices)", call,
                      device, device_total);
  }
  if (sm_count < 1)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: %d SMs requested", call, sm_count);
  ETRT_RETURN_IF_ERROR(init_primary_context(device));

  CUdevice dev;
  CUresult r = cu.device_get(&dev, device);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuDeviceGet", device);
  CUdevResource all, part;
  memset(&all, 0, sizeof all);
  memset(&part, 0, sizeof part);
  r = cu.device_get_dev_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuDeviceGetDevResource(SM)", device);
  if ((unsigned int)sm_count > all.sm.smCount) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s: %d SMs requested, cuda:%d has %u", call,
                      sm_count, device, all.sm.smCount);
  }
  unsigned int groups = 1;
  r = cu.sm_resource_split_by_count(&part, &groups, &all, NULL, 0, (unsigned int)sm_count);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuDevSmResourceSplitByCount", device);
  if (groups < 1) {
    return etrt_error(
        ETRT_ERROR_INVALID_ARGUMENT,
        "%s: cuda:%d cannot make a partition of %d SMs (partitions are rounded up to the "
        "hardware's granularity of %u, from %u SMs)",
        call, device, sm_count, all.sm.smCoscheduledAlignment, all.sm.smCount);
  }
  CUdevResourceDesc desc = NULL;
  r = cu.dev_resource_generate_desc(&desc, &part, 1);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuDevResourceGenerateDesc", device);
  green_entry entry = {NULL, NULL, NULL, device};
  r = cu.green_ctx_create(&entry.green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuGreenCtxCreate", device);
  r = cu.ctx_from_green_ctx(&entry.context, entry.green);
  if (r != CUDA_SUCCESS) {
    cu.green_ctx_destroy(entry.green);
    return cu_fail(r, "cuCtxFromGreenCtx", device);
  }
  CUstream stream = NULL;
  r = cu.green_ctx_stream_create(&stream, entry.green, CU_STREAM_NON_BLOCKING, 0);
  if (r != CUDA_SUCCESS) {
    cu.green_ctx_destroy(entry.green);
    return cu_fail(r, "cuGreenCtxStreamCreate", device);
  }
  entry.stream = (cudaStream_t)stream;
  etrt_status status = green_table_add(entry);
  if (status != ETRT_OK) {
    cudaStreamDestroy(entry.stream);
    cu.green_ctx_destroy(entry.green);
    return status;
  }
  *out = entry.stream;
  if (granted) *granted = (int)part.sm.smCount;
  return ETRT_OK;
}

static etrt_status cuda_green_stream_destroy(etrt_stream stream) {
  green_entry entry;
  if (stream == NULL || !green_table_take((cudaStream_t)stream, &entry)) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "cuda green_stream_destroy: stream %p is not a green-context stream", stream);
  }
  /* The green context must outlive the work queued on its stream. */
  cudaError_t e = cudaStreamSynchronize(entry.stream);
  cudaError_t d = cudaStreamDestroy(entry.stream);
  CUresult r = cu.green_ctx_destroy(entry.green);
  if (e != cudaSuccess) return cuda_fail(e, "cudaStreamSynchronize(green stream)", entry.device);
  if (d != cudaSuccess) return cuda_fail(d, "cudaStreamDestroy(green stream)", entry.device);
  if (r != CUDA_SUCCESS) return cu_fail(r, "cuGreenCtxDestroy", entry.device);
  return ETRT_OK;
}

static etrt_status cuda_profiler_range(int on) {
  cudaError_t e = on ? cudaProfilerStart() : cudaProfilerStop();
  if (e == cudaSuccess) return ETRT_OK;
  (void)cudaGetLastError();
  return etrt_error(ETRT_ERROR_DEVICE, "%s failed: %s",
                    on ? "cudaProfilerStart" : "cudaProfilerStop", cudaGetErrorString(e));
}

static int cuda_green_context_current(void) {
  if (cu.ctx_get_current == NULL) return 0;
  CUcontext current = NULL;
  if (cu.ctx_get_current(&current) != CUDA_SUCCESS || current == NULL) return 0;
  int ours = 0;
  pthread_mutex_lock(&green_lock);
  for (size_t i = 0; i < green_count && !ours; i++) ours = green_table[i].context == current;
  pthread_mutex_unlock(&green_lock);
  if (ours) return 1;
  if (cu.ctx_get_device == NULL || cu.ctx_get_dev_resource == NULL ||
      cu.device_get_dev_resource == NULL)
    return 0;
  CUdevice dev;
  CUdevResource in_context, in_device;
  memset(&in_context, 0, sizeof in_context);
  memset(&in_device, 0, sizeof in_device);
  if (cu.ctx_get_device(&dev) != CUDA_SUCCESS) return 0;
  if (cu.ctx_get_dev_resource(current, &in_context, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return 0;
  if (cu.device_get_dev_resource(dev, &in_device, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return 0;
  return in_context.sm.smCount < in_device.sm.smCount;
}

/* ---- the driver ----------------------------------------------------------------- */

static etrt_device_driver cuda_driver = {
    .name = "cuda",
    .device_count = cuda_device_count,
    .get_device = cuda_get_device,
    .set_device = cuda_set_device,
    .attributes = cuda_attributes,
    .malloc_device = cuda_malloc_device,
    .free_device = cuda_free_device,
    .malloc_pinned = cuda_malloc_pinned,
    .free_pinned = cuda_free_pinned,
    .malloc_managed = cuda_malloc_managed,
    .pointer_info = cuda_pointer_info,
    .memcpy_async = cuda_memcpy_async,
    .memset_async = cuda_memset_async,
    .launch_host_func = cuda_launch_host_func,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .stream_device = cuda_stream_device,
    .stream_wait_event = cuda_stream_wait_event,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_query = cuda_event_query,
    .event_synchronize = cuda_event_synchronize,
    .green_stream_create = NULL, /* set by cuda_init when the driver has green contexts */
    .green_stream_destroy = NULL,
    .green_context_current = cuda_green_context_current,
    .profiler_range = cuda_profiler_range,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int usable;

static void cuda_init(void) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0) {
    cudaGetLastError();
    etrt_log(ETRT_LOG_DEBUG, "cuda: not usable (%s)",
             e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
    return;
  }
  attribute_cache = calloc((size_t)count, sizeof *attribute_cache);
  attribute_cached = calloc((size_t)count, 1);
  if (attribute_cache == NULL || attribute_cached == NULL) {
    free(attribute_cache);
    free(attribute_cached);
    attribute_cache = NULL;
    attribute_cached = NULL;
    etrt_log(ETRT_LOG_ERROR, "cuda: out of host memory at start; running without the GPU");
    return;
  }
  device_total = count;
  load_entry_points();
  if (have_green_contexts()) {
    cuda_driver.green_stream_create = cuda_green_stream_create;
    cuda_driver.green_stream_destroy = cuda_green_stream_destroy;
  } else {
    etrt_log(ETRT_LOG_DEBUG, "cuda: the driver has no green contexts (needs CUDA 12.5 or later)");
  }
  usable = 1;
}

const etrt_device_driver *etrt_device_cuda_driver(void) {
  pthread_once(&init_once, cuda_init);
  return usable ? &cuda_driver : NULL;
}
