/* Which device driver is active. The choice is made once (execute paths ask for it
 * on every call) and kept until etrt_device_select_sim changes or clears it:
 *   etrt_device_select_sim(n > 0)   simulated devices (tests)
 *   ETRT_DEVICE=sim:N | cuda | cpu  the command line's override
 *   otherwise                       CUDA when compiled in and usable, else none (CPU).
 * Simulation is never chosen by default. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "device/device.h"
#include "device/sim.h"

static pthread_mutex_t choice_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const etrt_device_driver *) choice;
static atomic_int choice_made;

#ifndef ETRT_HAVE_CUDA
const etrt_device_driver *etrt_device_cuda_driver(void) { return NULL; }
#endif

/* "sim:N" with 1 <= N <= ETRT_SIM_MAX_DEVICES; 0 otherwise. */
static int parse_sim_count(const char *text) {
  if (strncmp(text, "sim:", 4) != 0) return 0;
  const char *digits = text + 4;
  int n = 0;
  for (const char *c = digits; *c; c++) {
    if (*c < '0' || *c > '9' || n > ETRT_SIM_MAX_DEVICES) return 0;
    n = n * 10 + (*c - '0');
  }
  return *digits && n >= 1 && n <= ETRT_SIM_MAX_DEVICES ? n : 0;
}

/* Lock held. */
static const etrt_device_driver *choose(void) {
  const char *env = getenv("ETRT_DEVICE");
  if (env != NULL && *env != '\0') {
    if (strcmp(env, "cpu") == 0) return NULL;
    if (strcmp(env, "cuda") == 0) {
      const etrt_device_driver *cuda = etrt_device_cuda_driver();
      if (cuda == NULL)
        etrt_log(ETRT_LOG_WARN,
                 "ETRT_DEVICE=cuda: no usable CUDA driver and GPU; running on the CPU");
      return cuda;
    }
    int n = parse_sim_count(env);
    if (n > 0) {
      if (etrt_sim_reset(n) == ETRT_OK) {
        etrt_log(ETRT_LOG_INFO, "ETRT_DEVICE=%s: %d simulated devices", env, n);
        return etrt_device_sim_driver();
      }
      etrt_log(ETRT_LOG_ERROR, "ETRT_DEVICE=%s: %s", env, etrt_last_error());
    } else {
      etrt_log(ETRT_LOG_ERROR, "ETRT_DEVICE='%s' is not sim:N (N in 1..%d), cuda or cpu; ignored",
               env, ETRT_SIM_MAX_DEVICES);
    }
  }
  return etrt_device_cuda_driver();
}

const etrt_device_driver *etrt_device_driver_get(void) {
  if (atomic_load_explicit(&choice_made, memory_order_acquire)) {
    return atomic_load_explicit(&choice, memory_order_relaxed);
  }
  pthread_mutex_lock(&choice_lock);
  if (!atomic_load_explicit(&choice_made, memory_order_relaxed)) {
    atomic_store_explicit(&choice, choose(), memory_order_relaxed);
    atomic_store_explicit(&choice_made, 1, memory_order_release);
  }
  const etrt_device_driver *driver = atomic_load_explicit(&choice, memory_order_relaxed);
  pthread_mutex_unlock(&choice_lock);
  return driver;
}

etrt_status etrt_device_select_sim(int count) {
  if (count < 0 || count > ETRT_SIM_MAX_DEVICES) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "etrt_device_select_sim(%d): the count must be 0..%d", count,
                      ETRT_SIM_MAX_DEVICES);
  }
  pthread_mutex_lock(&choice_lock);
  etrt_status status = etrt_sim_reset(count);
  if (status == ETRT_OK && count > 0) {
    atomic_store_explicit(&choice, etrt_device_sim_driver(), memory_order_relaxed);
    atomic_store_explicit(&choice_made, 1, memory_order_release);
  } else {
    atomic_store_explicit(&choice, NULL, memory_order_relaxed);
    atomic_store_explicit(&choice_made, 0, memory_order_release);
  }
  pthread_mutex_unlock(&choice_lock);
  return status;
}
