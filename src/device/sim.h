/* Simulated GPUs for tests on machines without one (contract tests in CI).
 *
 * Strictness is the point: each simulated device has its own memory, which host code
 * must not read directly (the pointers are real host addresses, so only the tests'
 * discipline and the poisoning below stop it), and queued work runs late, so that a
 * missing wait leaves work unrun and the test sees stale data.
 *
 * Exact behaviour (contract tests may rely on all of it):
 * - Memory. Every device, pinned and managed allocation is tracked (base, size, kind,
 *   device); pointer_info classifies any address inside one, anything else is
 *   pageable host (device -1). Managed memory belongs to the device current at
 *   allocation; pinned memory has device -1. Fresh memory of every kind is filled
 *   with 0xA5 bytes. A zero-byte request returns a distinct valid address. Device and
 *   managed allocations count against the device's total_memory (OUT_OF_MEMORY past
 *   it). free_device frees device and managed memory, free_pinned pinned memory; the
 *   wrong one, an interior pointer, an unknown pointer or a double free is refused
 *   (INVALID_ARGUMENT), and so is freeing memory that queued work still reads or
 *   writes (STATE: synchronise first). free_device(NULL) is a no-op.
 * - Current device: per thread, 0 in a new thread; set_device checks the range.
 * - Streams. NULL is the legacy stream of the current device (one per device);
 *   ETRT_STREAM_PER_THREAD is the calling thread's stream of the current device;
 *   stream_create makes one on the current device. No implicit synchronisation exists
 *   between any of them (the legacy stream does not wait for other streams). Any
 *   other handle must be a live stream, else INVALID_ARGUMENT "not a live stream".
 *   Work (copies, memsets, host functions, event records, waits) is queued in FIFO
 *   order and runs ONLY when:
 *     stream_synchronize(s)  runs everything queued on s before the call;
 *     event_synchronize(e)   runs e's stream up to e's latest record, no further;
 *     a queued wait runs     it first runs the awaited stream up to the record it
 *                            captured when the wait was queued (so syncing a stream
 *                            runs the work it depends on, on other streams too);
 *     stream_destroy(s)      drains s first, as CUDA completes it.
 *   Nothing else runs work: not event_query, not another stream's sync, not a sync of
 *   the legacy stream. A host function runs with the driver unlocked and may call the
 *   driver, but not synchronise its own stream (refused with STATE).
 * - Copies read and write memory when they run, not when queued (host memory changed
 *   after the enqueue is what gets copied). Checks at enqueue: the device side of a
 *   copy or memset must be device memory of the stream's device, or managed memory
 *   (any device), with the whole range inside its allocation; the host side must not
 *   be device memory (pinned and managed are fine; a tracked range must fit).
 *   Violations are INVALID_ARGUMENT naming the pointer, its kind and the devices.
 *   Zero-byte copies and memsets are accepted and queue nothing.
 * - Events belong to the device current at creation; recording on a stream of another
 *   device is refused. A record queues a marker: the event is pending (event_query
 *   gives ETRT_ERROR_STATE with no message) until that marker has run, even on an
 *   idle stream. A never-recorded event is complete. A re-record moves the event to
 *   the new marker; waits queued earlier keep the record they captured. A wait on a
 *   complete event queues nothing. Waits across devices are allowed.
 * - Green streams (green_stream_create): on the given device, sm_count rounded up to
 *   a multiple of 8, refused when below 1 or when the rounded count exceeds the
 *   device's SMs; they run work like any stream; stream_destroy refuses them and
 *   green_stream_destroy refuses other streams. With a green context current on the
 *   thread (etrt_sim_set_green_context_current), every operation on
 *   ETRT_STREAM_PER_THREAD fails with ETRT_ERROR_DEVICE "invalid resource handle: the
 *   per-thread default stream is invalid while a green context is current"; the
 *   legacy stream and explicit streams keep working.
 * - Fault injection counts allocations (device, pinned, managed), copies
 *   (memcpy_async, memset_async, zero-byte ones included, counted once the stream is
 *   resolved) and synchronisations (stream_synchronize, event_synchronize, counted
 *   once the handle is resolved); the armed call fails with ETRT_ERROR_DEVICE
 *   "injected ... failure" and queues, allocates or runs nothing.
 * - Thread-safe (one lock). etrt_device_select_sim drops all state, including work
 *   never run; handles from before are then "not live". */
#ifndef ETRT_DEVICE_SIM_H
#define ETRT_DEVICE_SIM_H

#include <stddef.h>

#include "device/device.h"

#define ETRT_SIM_MAX_DEVICES 16

/* Makes `count` simulated devices the active driver (count 0 turns simulation off and
 * returns to the default choice, and forgets the cached choice so that ETRT_DEVICE is
 * read again). Resets all simulated state: call between tests, never while objects
 * using the previous devices are alive. */
etrt_status etrt_device_select_sim(int count);

const etrt_device_driver *etrt_device_sim_driver(void);

/* Drops every simulated allocation, stream, event and fault setting and creates
 * `count` fresh devices (0: none). The driver choice (device.c) calls it; tests call
 * etrt_device_select_sim instead. */
etrt_status etrt_sim_reset(int count);

typedef enum etrt_sim_fault {
  ETRT_SIM_FAULT_ALLOC = 0, /* device, pinned and managed allocations */
  ETRT_SIM_FAULT_COPY = 1,  /* memcpy_async and memset_async */
  ETRT_SIM_FAULT_SYNC = 2,  /* stream_synchronize and event_synchronize */
  ETRT_SIM_FAULT_COUNT = 3
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

/* set_device calls this thread has made since selection: rule 2 (set the device
 * only when it differs) is checked with it. */
long etrt_sim_set_device_calls(void);

/* Successful event_record calls on every thread since selection: the one completion
 * event per execute (contract rule 7) is checked with it. */
long etrt_sim_event_records(void);

/* Makes a simulated green context current on this thread (or clears it), to test
 * the "select a stream" error. */
void etrt_sim_set_green_context_current(int current);

#endif
