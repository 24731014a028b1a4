/* Constant float32 weights of matrix products packed once per CPU context: the panels
 * etrt's GEMM otherwise packs from B on every call (gemm_util.h), reading the weight with
 * the stride of its rows. Taken for MatMul and EtrtMatMulBias of a float32 input by a
 * constant float32 [K, N] matrix, at the planned dims, wherever etrt's GEMM runs them:
 * with etrt's kernels (ETRT_CPU_KERNELS=etrt, a build without oneDNN) and for the nodes
 * oneDNN does not take. Packing moves no sums: the results are the unpacked GEMM's bits.
 * The original pages are handed back (base/file.h), so the copy does not double the
 * weights' resident size. ETRT_CPU_PACKED=0 turns it off. */
#ifndef ETRT_ENGINE_CPU_PACKED_H
#define ETRT_ENGINE_CPU_PACKED_H

#include "base/status.h"
#include "engine/cpu_onednn.h"
#include "engine/engine_internal.h"
#include "engine/op.h"

typedef struct etrt_cpu_packed etrt_cpu_packed;

/* The packed weights of a context of `engine`, for the nodes `onednn` (may be NULL) does
 * not take; *out is NULL when no node is left. */
etrt_status etrt_cpu_packed_create(const etrt_engine *engine, const etrt_cpu_onednn *onednn,
                                   etrt_cpu_packed **out);
void etrt_cpu_packed_destroy(etrt_cpu_packed *state);

/* Runs node n on its packed weight when it has one and these are the planned dims:
 * returns 1 and the status in *status. Returns 0 when another kernel must run it. */
int etrt_cpu_packed_run(const etrt_cpu_packed *state, uint32_t n, const etrt_tensor *inputs,
                        etrt_tensor *outputs, etrt_status *status);

/* Nodes with a packed weight (for tests). */
uint32_t etrt_cpu_packed_node_count(const etrt_cpu_packed *state);

#endif
