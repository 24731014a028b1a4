/* Convolutions and matrix products of the CPU executor through oneDNN, in builds with
 * ETRT_CPU_KERNELS=onednn (the default where dnnl.h is found). The library is opened
 * with dlopen by the first CPU context that has such a node, so processes that never
 * run a CPU plan (etrt --help, GPU work) never map it, and a machine without it runs
 * etrt's own kernels. The environment variable ETRT_CPU_KERNELS=etrt, read when a
 * context is created, selects etrt's kernels in such a build too (tests run both).
 *
 * Everything is made when the context is created, at the plan's largest shapes:
 * one primitive per Conv, EtrtFusedConv (bias, residual and activation as post-ops),
 * Gemm and MatMul node whose weights are constants, its memory objects, weights
 * reordered once into the layout the primitive asks for (used in place when that is
 * their own layout). Each node's scratchpad and its operands in a layout no tensor of
 * the run holds (the blocked copies of an NCHW source or destination) live in the
 * node's workspace, which the context places in its arena, live only while the node
 * runs: they share memory with the intermediates of other nodes instead of adding a
 * buffer of their own. Running a node only points the memory objects at the run's
 * tensors and executes, with no allocation. A run at other shapes (a smaller batch
 * of a plan with bounds) runs the node with etrt's kernels instead, so no primitive is
 * ever created on the execute path. In a plan whose shapes are all fixed, a value that only
 * convolutions of the context write and read stays in the blocked layout they choose, with no
 * reorder between them, and depthwise convolutions that read or write such a value run in oneDNN
 * too. Between them may sit nodes whose etrt kernels do not depend on the layout (same-shape
 * Add, Sub and Mul; Concat and Split along whole channel blocks), which then run on the
 * blocked bytes, and GlobalAveragePool and Mul by a per-channel scale, which run with
 * cpu_blocked.h's kernels for blocked values.
 *
 * Threads: the Debian build of oneDNN runs its loops with OpenMP. Each execution
 * asks OpenMP for the calling thread's width in etrt's pool (--threads, the method's
 * limit), less the threads other executions in oneDNN hold at that moment, so that
 * methods executing at once never run more threads than the pool would. */
#ifndef ETRT_ENGINE_CPU_ONEDNN_H
#define ETRT_ENGINE_CPU_ONEDNN_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "engine/engine_internal.h"
#include "engine/op.h"

typedef struct etrt_cpu_onednn etrt_cpu_onednn;

/* "onednn" or "etrt": the kernels this build runs convolutions and matrix products
 * with by default. */
const char *etrt_cpu_kernels_default(void);

/* The oneDNN state of a context of `engine`; *out is NULL when oneDNN is not used
 * (not built in, switched off, not loadable, or no node it takes). */
etrt_status etrt_cpu_onednn_create(const etrt_engine *engine, etrt_cpu_onednn **out);
void etrt_cpu_onednn_destroy(etrt_cpu_onednn *state);

/* Runs node n with its primitive when it has one for these shapes: returns 1 and the
 * status in *status. Returns 0 when etrt's kernel must run it. `workspace`: at least
 * etrt_cpu_onednn_workspace(state, n) bytes, 64-byte aligned, that nothing else uses
 * while the node runs (NULL only where that is 0). */
int etrt_cpu_onednn_run(etrt_cpu_onednn *state, uint32_t n, const etrt_tensor *inputs,
                        etrt_tensor *outputs, void *workspace, etrt_status *status);

/* Bytes of scratch node n needs while oneDNN runs it (0: none, or not run there). */
size_t etrt_cpu_onednn_workspace(const etrt_cpu_onednn *state, uint32_t n);

/* Bytes value v takes in the context's arena when a convolution keeps it in oneDNN's
 * blocked layout with its channels padded to the block (24 channels in blocks of 16 hold
 * 32), else 0: its planned bytes. */
size_t etrt_cpu_onednn_value_bytes(const etrt_cpu_onednn *state, uint32_t v);

/* Whether oneDNN has a primitive for node n (it runs the node at its planned dims). */
int etrt_cpu_onednn_takes(const etrt_cpu_onednn *state, uint32_t n);

/* Nodes of the context that oneDNN runs, and values it keeps in its own layouts between
 * convolutions (for tests). */
uint32_t etrt_cpu_onednn_node_count(const etrt_cpu_onednn *state);
uint32_t etrt_cpu_onednn_chained_count(const etrt_cpu_onednn *state);

#endif
