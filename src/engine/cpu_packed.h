/* Constant float32 weights of matrix products packed once per CPU context: the panels
 * etrt's GEMM otherwise packs from B on every call (gemm_util.h). Taken for MatMul and
 * EtrtMatMulBias of a float32 input by a constant float32 [K, N] matrix, at the planned
 * dims, wherever etrt's GEMM runs them: with etrt's kernels, and in place of oneDNN where
 * the processor lacks AVX-512 (oneDNN 2.6's float32 matmul then runs its gemm:jit on the
 * weights as stored, which measured slower than etrt's GEMM on packed panels: BERT-base's
 * 128x768x3072 product 31 ms against 10.5 ms at one thread on an AVX2 server). Packing
 * moves no sums: the results are the unpacked GEMM's bits (gemm_util.h). The original pages are
 * handed back (base/file.h), so the copy does not double the weights' resident size. */
#ifndef ETRT_ENGINE_CPU_PACKED_H
#define ETRT_ENGINE_CPU_PACKED_H

#include "base/status.h"
#include "engine/engine_internal.h"
#include "engine/op.h"

typedef struct etrt_cpu_packed etrt_cpu_packed;

/* The packed weights of a context of `engine`; *out is NULL when no node takes them.
 * `with_onednn`: oneDNN runs this context's products unless packing takes them. */
etrt_status etrt_cpu_packed_create(const etrt_engine *engine, int with_onednn,
                                   etrt_cpu_packed **out);
void etrt_cpu_packed_destroy(etrt_cpu_packed *state);

/* Runs node n on its packed weight when it has one and these are the planned dims:
 * returns 1 and the status in *status. Returns 0 when another kernel must run it. */
int etrt_cpu_packed_run(const etrt_cpu_packed *state, uint32_t n, const etrt_tensor *inputs,
                        etrt_tensor *outputs, etrt_status *status);

/* Nodes with a packed weight (for tests). */
uint32_t etrt_cpu_packed_node_count(const etrt_cpu_packed *state);

#endif
