/* rand.out(SymInt[] size, *, out) and randn.out(SymInt[] size, *, out): uniform values
 * in [0, 1) and standard normal values, drawn from the engine's counter-based stream
 * (engine/ops/random.h). The key is drawn when the method is loaded (the clock, the
 * process id, a process-wide count) and advanced on every execute, so no two executes,
 * loads or processes repeat a stream, as ATen's generator does not either. Uniform
 * values carry as many random bits as the out dtype's significand holds, so that none
 * rounds up to 1. */
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/dtype.h"
#include "engine/ops/random.h"
#include "runtime/portable/portable.h"

/* Loads in this process, so that two methods loaded in one clock tick differ. */
static atomic_uint_fast64_t etrt_portable_random_loads;

static int etrt_portable_is_randn(const etrt_kernel_call *call) {
  return strcmp(call->def->name, "aten::randn.out") == 0;
}

/* call->ints[1][0]: the load's key; [1][1]: the executes so far. */
static etrt_status etrt_portable_random_prepare(etrt_kernel_call *call, const etrt_value *values) {
  const etrt_runtime_tensor *out = NULL;
  ETRT_RETURN_IF_ERROR(etrt_portable_tensor_arg(call, values, 1, &out));
  if (!etrt_portable_dtype_is_float(out->dtype))
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "the out tensor must be floating point, not %s",
                      etrt_dtype_name(out->dtype));
  uint32_t count = 0;
  ETRT_RETURN_IF_ERROR(
      etrt_portable_ints_arg(call, values, 0, call->ints[0], ETRT_MAX_RANK, &count));
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const uint64_t load = (uint64_t)atomic_fetch_add(&etrt_portable_random_loads, 1);
  const uint64_t key =
      etrt_random_mix((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec) ^
      etrt_random_mix(((uint64_t)getpid() << 32) ^ load) ^
      etrt_random_mix((uint64_t)(uintptr_t)call);
  memcpy(&call->ints[1][0], &key, sizeof key);
  call->ints[1][1] = 0;
  return ETRT_OK;
}

static etrt_status etrt_portable_random_run(etrt_kernel_call *call, etrt_value *values,
                                            etrt_run_context *context) {
  (void)context;
  etrt_runtime_tensor *out = &values[call->args[1]].u.tensor;
  uint32_t count = 0;
  int64_t dims[ETRT_MAX_RANK];
  ETRT_RETURN_IF_ERROR(etrt_portable_ints_arg(call, values, 0, dims, ETRT_MAX_RANK, &count));
  for (uint32_t d = 0; d < count; ++d)
    if (dims[d] < 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "%s (instruction %u): size %u is %lld",
                        call->def->name, call->instruction, d, (long long)dims[d]);
  ETRT_RETURN_IF_ERROR(etrt_portable_out_fit(call, out, out->dtype, (int32_t)count, dims));
  uint64_t key;
  memcpy(&key, &call->ints[1][0], sizeof key);
  key = etrt_random_mix(key + (uint64_t)call->ints[1][1]++ * 0x9e3779b97f4a7c15ull);
  /* Significand bits of the out dtype, the implicit one included. */
  const int bits = out->dtype == ETRT_DTYPE_FLOAT64   ? 53
                   : out->dtype == ETRT_DTYPE_FLOAT32 ? 24
                   : out->dtype == ETRT_DTYPE_FLOAT16 ? 11
                                                      : 8;
  const int randn = etrt_portable_is_randn(call);
  const int64_t numel = etrt_portable_numel(out);
  const size_t item = etrt_dtype_size(out->dtype);
  /* Elements are drawn in memory order: a stream has no logical order to keep. */
  for (int64_t i = 0; i < numel; ++i) {
    const double v = randn ? etrt_random_normal(key, (uint64_t)i)
                           : (double)(etrt_random_bits(key, (uint64_t)i) >> (64 - bits)) /
                                 (double)(1ull << bits);
    etrt_portable_scalar_store(v, out->dtype, (uint8_t *)out->data + (size_t)i * item);
  }
  return ETRT_OK;
}

static const etrt_kernel_def rand_ = {"aten::rand.out", 3, etrt_portable_random_prepare,
                                      etrt_portable_random_run};
static const etrt_kernel_def randn = {"aten::randn.out", 3, etrt_portable_random_prepare,
                                      etrt_portable_random_run};

const etrt_kernel_def *const etrt_portable_random[] = {&rand_, &randn, NULL};
