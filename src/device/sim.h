/* Simulated GPUs for tests on machines without one (contract tests in CI).
 *
 * Strictness is the point: each simulated device has its own memory, which host code
 * must not read directly (the pointers are real host addresses, so only the tests'
 * discipline and the poisoning below stop it); a stream runs its queued work only
 * when synchronised, or when an event recorded on it is synchronised, or when another
 * stream that waits on it is synchronised. A missing wait leaves work unrun, and
 * the test sees stale data. */
#ifndef ETRT_DEVICE_SIM_H
#define ETRT_DEVICE_SIM_H

#include <stddef.h>

#include "device/device.h"

/* Makes `count` simulated devices the active driver (count 0 turns simulation off and
 * returns to the default choice). Resets all simulated state: call between tests,
 * never while objects using the previous devices are alive. */
etrt_status etrt_device_select_sim(int count);

const etrt_device_driver *etrt_device_sim_driver(void);

typedef enum etrt_sim_fault {
  ETRT_SIM_FAULT_ALLOC = 0, /* device, pinned and managed allocations */
  ETRT_SIM_FAULT_COPY = 1,  /* memcpy_async and memset_async */
  ETRT_SIM_FAULT_COUNT = 2
} etrt_sim_fault;

/* The Nth call (1-based) of that kind from now fails with ETRT_ERROR_DEVICE; 0
 * disarms. Calls of the kind are counted from the moment this is called. */
void etrt_sim_fail_nth(etrt_sim_fault fault, long n);
/* How many calls of that kind were made since selection (for sweeping N). */
long etrt_sim_call_count(etrt_sim_fault fault);

/* Per-device simulated attributes (defaults: discrete, no pageable access, cc 9.0,
 * 132 SMs). Change before creating objects on the device. */
void etrt_sim_set_attributes(int device, const etrt_device_attributes *attributes);

/* Bytes currently allocated on simulated devices (device + pinned + managed); the
 * tests use it to prove nothing leaked. */
size_t etrt_sim_bytes_in_use(void);
/* Work items queued and not yet run, over all streams. */
size_t etrt_sim_pending_work(void);

/* Green-context simulation: the SM partition a stream is confined to; the CPU kernels
 * of the engine record the SM ids they "ran on" through this for the confinement
 * test (0..sm_count-1 of the stream's partition). */
int etrt_sim_stream_sm_count(etrt_stream stream);

/* Makes a simulated green context current on this thread (or clears it), to test
 * the "select a stream" error. */
void etrt_sim_set_green_context_current(int current);

#endif
