/* oneDNN primitives for the CPU executor (see cpu_onednn.h). */
#include "engine/cpu_onednn.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "engine/executor.h"

#ifndef ETRT_HAVE_ONEDNN

const char *etrt_cpu_kernels_default(void) { return "etrt"; }

etrt_status etrt_cpu_onednn_create(const etrt_engine *engine, etrt_cpu_onednn **out) {
  (void)engine;
  *out = NULL;
  return ETRT_OK;
}

void etrt_cpu_onednn_destroy(etrt_cpu_onednn *state) { (void)state; }

int etrt_cpu_onednn_run(etrt_cpu_onednn *state, uint32_t n, const etrt_tensor *inputs,
                        etrt_tensor *outputs, void *workspace, etrt_status *status) {
  (void)state, (void)n, (void)inputs, (void)outputs, (void)workspace, (void)status;
  return 0;
}

size_t etrt_cpu_onednn_workspace(const etrt_cpu_onednn *state, uint32_t n) {
  (void)state, (void)n;
  return 0;
}

size_t etrt_cpu_onednn_value_bytes(const etrt_cpu_onednn *state, uint32_t v) {
  (void)state, (void)v;
  return 0;
}

int etrt_cpu_onednn_takes(const etrt_cpu_onednn *state, uint32_t n) {
  (void)state, (void)n;
  return 0;
}

uint32_t etrt_cpu_onednn_node_count(const etrt_cpu_onednn *state) {
  (void)state;
  return 0;
}

uint32_t etrt_cpu_onednn_chained_count(const etrt_cpu_onednn *state) {
  (void)state;
  return 0;
}

#else

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <oneapi/dnnl/dnnl.h>

#include "base/file.h"
#include "base/thread_pool.h"
#include "engine/cpu_blocked.h"
#include "engine/ops/conv.h"
#include "engine/ops/matmul.h"

const char *etrt_cpu_kernels_default(void) { return "onednn"; }

/* The entry points used, resolved with dlsym. */
#define ETRT_DNNL_FUNCTIONS(X)                    \
  X(dnnl_engine_create)                           \
  X(dnnl_engine_destroy)                          \
  X(dnnl_stream_create)                           \
  X(dnnl_stream_destroy)                          \
  X(dnnl_memory_desc_init_by_tag)                 \
  X(dnnl_memory_desc_init_by_strides)             \
  X(dnnl_memory_desc_equal)                       \
  X(dnnl_memory_desc_get_size)                    \
  X(dnnl_dilated_convolution_forward_desc_init)   \
  X(dnnl_dilated_deconvolution_forward_desc_init) \
  X(dnnl_matmul_desc_init)                        \
  X(dnnl_primitive_attr_create)                   \
  X(dnnl_primitive_attr_destroy)                  \
  X(dnnl_primitive_attr_set_post_ops)             \
  X(dnnl_primitive_attr_set_scratchpad_mode)      \
  X(dnnl_post_ops_create)                         \
  X(dnnl_post_ops_destroy)                        \
  X(dnnl_post_ops_append_eltwise)                 \
  X(dnnl_post_ops_append_sum)                     \
  X(dnnl_primitive_desc_create)                   \
  X(dnnl_primitive_desc_destroy)                  \
  X(dnnl_primitive_desc_query_md)                 \
  X(dnnl_primitive_create)                        \
  X(dnnl_primitive_destroy)                       \
  X(dnnl_primitive_execute)                       \
  X(dnnl_memory_create)                           \
  X(dnnl_memory_destroy)                          \
  X(dnnl_memory_set_data_handle)                  \
  X(dnnl_memory_get_memory_desc)                  \
  X(dnnl_reorder_primitive_desc_create)

typedef struct etrt_dnnl_api {
#define ETRT_DNNL_FIELD(name) __typeof__(&name) name;
  ETRT_DNNL_FUNCTIONS(ETRT_DNNL_FIELD)
#undef ETRT_DNNL_FIELD
  void (*omp_set_num_threads)(int);
} etrt_dnnl_api;

static pthread_once_t etrt_dnnl_once = PTHREAD_ONCE_INIT;
/* ETRT_CPU_WORK_PER_THREAD, read once with the library (etrt_dnnl_node_threads). */
static double etrt_dnnl_work_per_thread = 2e6;
static etrt_dnnl_api etrt_dnnl;
static int etrt_dnnl_loaded;
static char etrt_dnnl_why[512];

/* dlsym returns an object pointer; C11 converts it to a function pointer only
 * through memcpy (POSIX guarantees the representations match). */
static int etrt_dnnl_symbol(void *library, const char *name, void *slot, size_t size) {
  void *symbol = dlsym(library, name);
  if (symbol == NULL) return -1;
  memcpy(slot, &symbol, size);
  return 0;
}

static void etrt_dnnl_load(void) {
  /* OpenMP's idle threads spin for 300000 rounds by default before they sleep; sleeping
   * at once instead (a passive wait) makes every loop wake them through the kernel,
   * which doubled a 1.2 ms model's time at two threads. A short spin (tens of
   * microseconds) keeps them ready between the nodes of one run, then they sleep. Read
   * by libgomp when it is loaded below, unless the environment says otherwise. */
  setenv("GOMP_SPINCOUNT", "20000", 0);
  const char *work = getenv("ETRT_CPU_WORK_PER_THREAD");
  if (work != NULL && strtod(work, NULL) >= 1.0) etrt_dnnl_work_per_thread = strtod(work, NULL);
  void *library = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *why = dlerror();
    snprintf(etrt_dnnl_why, sizeof etrt_dnnl_why, "%s", why ? why : "libdnnl.so.2 not found");
    return;
  }
  struct {
    const char *name;
    void *slot;
    size_t size;
  } symbols[] = {
#define ETRT_DNNL_ROW(name) {#name, &etrt_dnnl.name, sizeof etrt_dnnl.name},
      ETRT_DNNL_FUNCTIONS(ETRT_DNNL_ROW)
#undef ETRT_DNNL_ROW
      /* From libgomp, which the library depends on (dlsym searches dependencies). */
      {"omp_set_num_threads", &etrt_dnnl.omp_set_num_threads, sizeof etrt_dnnl.omp_set_num_threads},
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i) {
    if (etrt_dnnl_symbol(library, symbols[i].name, symbols[i].slot, symbols[i].size) != 0) {
      snprintf(etrt_dnnl_why, sizeof etrt_dnnl_why, "libdnnl.so.2 lacks %s", symbols[i].name);
      memset(&etrt_dnnl, 0, sizeof etrt_dnnl);
      return;
    }
  }
  /* etrt's loops run on OpenMP's threads too (thread_pool.h says why). Not under
   * ThreadSanitizer, which cannot see libgomp's synchronisation: there the pool's own
   * workers run them, and the sanitizer checks the pool. */
#if !defined(ETRT_THREAD_SANITIZER)
  etrt_parallel_region_fn region = NULL;
  if (etrt_dnnl_symbol(library, "GOMP_parallel", &region, sizeof region) == 0)
    etrt_thread_pool_region_set(region);
#endif
  etrt_dnnl_loaded = 1;
}

typedef enum etrt_dnnl_slot {
  ETRT_DNNL_SRC, /* the primitive's operands, in its layouts */
  ETRT_DNNL_WEIGHTS,
  ETRT_DNNL_BIAS,
  ETRT_DNNL_DST,
  ETRT_DNNL_SCRATCHPAD,
  ETRT_DNNL_USER_SRC, /* the run's NCHW tensors where the primitive's layout differs */
  ETRT_DNNL_USER_DST,
  ETRT_DNNL_USER_RESIDUAL,
  ETRT_DNNL_SLOTS
} etrt_dnnl_slot;

typedef enum etrt_dnnl_reorder {
  ETRT_DNNL_REORDER_SRC,      /* user src -> src */
  ETRT_DNNL_REORDER_RESIDUAL, /* user residual -> dst, before the sum post-op */
  ETRT_DNNL_REORDER_DST,      /* dst -> user dst */
  ETRT_DNNL_REORDERS
} etrt_dnnl_reorder;

typedef struct etrt_dnnl_node {
  dnnl_primitive_t primitive; /* NULL: etrt's kernel runs the node */
  dnnl_memory_t memory[ETRT_DNNL_SLOTS];
  dnnl_exec_arg_t args[ETRT_DNNL_SLOTS];
  int arg_count;
  dnnl_primitive_t reorders[ETRT_DNNL_REORDERS]; /* NULL: not needed */
  /* Operands in a blocked layout that no tensor of the run holds, and the scratchpad,
   * live in the node's workspace (etrt_cpu_onednn_run), at offsets of their own
   * (source, destination, scratchpad). */
  int in_buffer[ETRT_DNNL_SLOTS];
  size_t buffer_offset[ETRT_DNNL_SLOTS], buffer_used;
  void *pointed[ETRT_DNNL_SLOTS]; /* where each memory object points now (etrt_dnnl_point) */
  void *owned_weights;            /* weights reordered at create (NULL: used in place) */
  /* The shapes the primitive was made for: input 0 (X or A) and the output. */
  int32_t rank, out_rank;
  int64_t dims[ETRT_MAX_RANK], out_dims[ETRT_MAX_RANK];
  int threads; /* the most worth using (etrt_dnnl_node_threads) */
  int has_residual;
  size_t dst_bytes; /* of the primitive's destination, the residual copied into it */
  /* While the context is made: the primitive's description (NULL: etrt's kernel runs
   * the node) and the constant weights' own layout. */
  dnnl_primitive_desc_t pd;
  dnnl_memory_desc_t plain_weights;
  int conv; /* Conv, EtrtFusedConv or ConvTranspose: activations in layouts oneDNN picks */
  int depthwise;
  /* A ConvTranspose's bias, added by etrt to the NCHW output after the primitive: oneDNN
   * 2.6 adds a deconvolution's bias in a generic pass over its blocked output that took
   * 8 times the primitive (the OCR detector's 24-map upsampling: 18.8 ms against 2.2). */
  int bias_after;
  /* Operands that live in the run's tensors in the primitive's own (blocked) layout,
   * because every node that touches them is a convolution of this context that
   * wants that layout (etrt_dnnl_chain): no reorder on either side. */
  int chained_src, chained_dst, chained_residual;
  /* A node other than a convolution that the chains pass through (etrt_dnnl_role_of;
   * ETRT_DNNL_OUTSIDE once dropped from them), the inputs it reads blocked (a bit each),
   * whether it writes blocked outputs, and the channel block of its blocked values. */
  int role, writes_blocked, block;
  uint32_t blocked_inputs;
} etrt_dnnl_node;

struct etrt_cpu_onednn {
  const etrt_graph *graph;
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  etrt_dnnl_node *nodes;
  uint32_t node_count, used;
  uint32_t chained;     /* values kept in a oneDNN layout between convolutions */
  size_t workspace_max; /* the largest buffer_used of a node (for the log) */
};

#define ETRT_DNNL_OK(call) ((call) == dnnl_success)

static int etrt_dnnl_is_constant(const etrt_engine *engine, const etrt_node *node, uint32_t i) {
  return i < node->num_inputs && node->inputs[i] >= 0 &&
         engine->graph.values[node->inputs[i]].kind == ETRT_VALUE_KIND_CONSTANT;
}

/* EtrtFusedConv's activation as an eltwise post-op. */
static dnnl_status_t etrt_dnnl_activation_post_op(const etrt_fused_conv_params *fused,
                                                  dnnl_post_ops_t ops) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  switch (fused->activation) {
    case ETRT_CONV_ACT_NONE:
      return dnnl_success;
    case ETRT_CONV_ACT_RELU:
      return d->dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    case ETRT_CONV_ACT_CLIP: {
      /* Infinite bounds become the largest floats: the same clamp for finite values. */
      float lo = fused->min < -3.4e38f ? -3.4e38f : fused->min;
      float hi = fused->max > 3.4e38f ? 3.4e38f : fused->max;
      return d->dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_clip_v2, lo, hi);
    }
    case ETRT_CONV_ACT_HARD_SWISH:
      return d->dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_hardswish, 0.0f, 0.0f);
    case ETRT_CONV_ACT_SIGMOID:
      return d->dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_logistic, 0.0f, 0.0f);
    case ETRT_CONV_ACT_SILU:
      return d->dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_swish, 1.0f, 0.0f);
  }
  return dnnl_unimplemented;
}

static dnnl_status_t etrt_dnnl_post_ops(const etrt_fused_conv_params *fused,
                                        const dnnl_memory_desc_t *residual, dnnl_post_ops_t ops) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  dnnl_status_t s = dnnl_success;
  /* The residual as a sum post-op: the run copies it into the output first. (A
   * binary-add post-op reads it in place but is many times slower on NCHW outputs.) */
  if (residual != NULL) s = d->dnnl_post_ops_append_sum(ops, 1.0f);
  if (s != dnnl_success || fused == NULL) return s;
  s = etrt_dnnl_activation_post_op(fused, ops);
  /* A folded affine block (PaddlePaddle's after every activation of its recognisers). */
  if (s == dnnl_success && (fused->scale != 1.0f || fused->shift != 0.0f))
    s = d->dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear, fused->scale, fused->shift);
  return s;
}

/* A convolution or ConvTranspose oneDNN may take: a 4-D float32 input, constant weights
 * and bias. */
static int etrt_dnnl_conv_fits(const etrt_engine *engine, const etrt_node *node,
                               const etrt_tensor *x, int has_bias) {
  return x->rank == 4 && x->dtype == ETRT_DTYPE_FLOAT32 && etrt_dnnl_is_constant(engine, node, 1) &&
         (!has_bias || etrt_dnnl_is_constant(engine, node, 2));
}

/* The operands a convolution or ConvTranspose primitive is described with: source and
 * destination in layouts the library picks (its blocked direct kernels are much faster
 * than its NCHW ones, even with the reorders around them), and the weights both in
 * their own layout, `grouped_dims` ([group, output / group, input / group, k...]) with
 * `grouped_tag`, or without the group axis with `plain_tag` when there is one group,
 * and in the one the primitive picks. */
static int etrt_dnnl_conv_operands(const etrt_tensor *x, const etrt_tensor *y, int64_t group,
                                   const int64_t *grouped_dims, dnnl_format_tag_t plain_tag,
                                   dnnl_format_tag_t grouped_tag, dnnl_memory_desc_t *src_md,
                                   dnnl_memory_desc_t *dst_md, dnnl_memory_desc_t *plain_weights,
                                   dnnl_memory_desc_t *weights_md) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  dnnl_dims_t src = {x->dims[0], x->dims[1], x->dims[2], x->dims[3]};
  dnnl_dims_t dst = {y->dims[0], y->dims[1], y->dims[2], y->dims[3]};
  int w_rank = group > 1 ? 5 : 4;
  const int64_t *wd = group > 1 ? grouped_dims : grouped_dims + 1;
  return ETRT_DNNL_OK(
             d->dnnl_memory_desc_init_by_tag(src_md, 4, src, dnnl_f32, dnnl_format_tag_any)) &&
         ETRT_DNNL_OK(
             d->dnnl_memory_desc_init_by_tag(dst_md, 4, dst, dnnl_f32, dnnl_format_tag_any)) &&
         ETRT_DNNL_OK(d->dnnl_memory_desc_init_by_tag(plain_weights, w_rank, wd, dnnl_f32,
                                                      group > 1 ? grouped_tag : plain_tag)) &&
         ETRT_DNNL_OK(d->dnnl_memory_desc_init_by_tag(weights_md, w_rank, wd, dnnl_f32,
                                                      dnnl_format_tag_any));
}

/* The descriptors of a Conv or EtrtFusedConv node at its largest shapes; 0 when oneDNN
 * is not used for it (not 2-D float32, weights not constant). A depthwise one is
 * described only where `allow_depthwise` (a fixed-shape plan): oneDNN runs it well in a
 * blocked layout, and keeps it only where it is chained to another convolution
 * (etrt_dnnl_chain); on NCHW tensors etrt's direct kernel is several times faster. */
static int etrt_dnnl_conv_desc(const etrt_engine *engine, const etrt_node *node,
                               const etrt_tensor *args, int allow_depthwise,
                               dnnl_convolution_desc_t *cd, dnnl_memory_desc_t *plain_weights,
                               dnnl_memory_desc_t *residual, const etrt_fused_conv_params **fused,
                               int *depthwise) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  const etrt_tensor *x = &args[0], *w = &args[1], *y = &args[node->num_inputs];
  const etrt_conv_params *params = node->state;
  *fused = strcmp(node->op_type, "EtrtFusedConv") == 0 ? node->state : NULL;
  int has_bias = node->num_inputs > 2 && node->inputs[2] >= 0;
  if (!etrt_dnnl_conv_fits(engine, node, x, has_bias)) return 0;
  etrt_conv_geometry g;
  etrt_status s = etrt_conv_geometry_conv(node, params, x, w, &g);
  if (s != ETRT_OK) return 0;
  int64_t group = params->group, channels_per_group = x->dims[1] / group;
  *depthwise = channels_per_group == 1 && group > 1;
  if (*depthwise && !allow_depthwise) return 0;
  dnnl_dims_t bias = {w->dims[0]};
  dnnl_dims_t wd = {group, w->dims[0] / group, w->dims[1], w->dims[2], w->dims[3]};
  dnnl_memory_desc_t src_md, dst_md, weights_md, bias_md;
  int ok = etrt_dnnl_conv_operands(x, y, group, wd, dnnl_oihw, dnnl_goihw, &src_md, &dst_md,
                                   plain_weights, &weights_md) &&
           ETRT_DNNL_OK(d->dnnl_memory_desc_init_by_tag(&bias_md, 1, bias, dnnl_f32, dnnl_x));
  if (*fused != NULL && node->num_inputs > 3 && node->inputs[3] >= 0)
    ok = ok && ETRT_DNNL_OK(
                   d->dnnl_memory_desc_init_by_tag(residual, 4, dst_md.dims, dnnl_f32, dnnl_nchw));
  else
    memset(residual, 0, sizeof *residual);
  dnnl_dims_t strides = {g.stride[0], g.stride[1]};
  dnnl_dims_t dilates = {g.dilation[0] - 1, g.dilation[1] - 1};
  dnnl_dims_t pad_l = {g.pad_begin[0], g.pad_begin[1]}, pad_r = {g.pad_end[0], g.pad_end[1]};
  return ok && ETRT_DNNL_OK(d->dnnl_dilated_convolution_forward_desc_init(
                   cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md, &weights_md,
                   has_bias ? &bias_md : NULL, &dst_md, strides, dilates, pad_l, pad_r));
}

/* The descriptors of a 2-D float32 ConvTranspose with constant weights (and bias) at its
 * largest shapes; 0 when oneDNN is not used for it. ONNX stores the weights [C, M/group,
 * k...]: oneDNN's (output, input) order transposed, its iohw / giohw layouts. Pads that
 * output_padding or output_shape make negative stay with etrt's kernel, and so do fewer
 * than 8 outputs per group: oneDNN computes a whole channel block of them (the OCR
 * detector's last upsampling to 1 map: 7.0 ms there against 4.1 with etrt's kernel, where
 * its 24 to 24 maps before took 5.2 against 42). */
static int etrt_dnnl_deconv_desc(const etrt_engine *engine, const etrt_node *node,
                                 const etrt_tensor *args, dnnl_deconvolution_desc_t *dd,
                                 dnnl_memory_desc_t *plain_weights, int *bias_after) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  const etrt_tensor *x = &args[0], *w = &args[1], *y = &args[node->num_inputs];
  const etrt_conv_params *params = node->state;
  int has_bias = node->num_inputs > 2 && node->inputs[2] >= 0;
  if (!etrt_dnnl_conv_fits(engine, node, x, has_bias)) return 0;
  if (w->rank != 4 || w->dims[1] < 8) return 0;
  etrt_conv_geometry g;
  if (etrt_conv_geometry_transpose(node, params, x, w, &g) != ETRT_OK) {
    etrt_clear_error();
    return 0;
  }
  dnnl_dims_t strides, dilates, pad_l, pad_r;
  for (int i = 0; i < 2; ++i) {
    int64_t span = (g.kernel[i] - 1) * g.dilation[i] + 1;
    strides[i] = g.stride[i];
    dilates[i] = g.dilation[i] - 1;
    pad_l[i] = g.pad_begin[i];
    pad_r[i] = g.stride[i] * (g.in[i] - 1) + span - g.pad_begin[i] - g.out[i];
    if (pad_l[i] < 0 || pad_r[i] < 0) return 0;
  }
  int64_t group = params->group;
  *bias_after = has_bias;
  dnnl_dims_t wd = {group, w->dims[1], w->dims[0] / group, w->dims[2], w->dims[3]};
  dnnl_memory_desc_t src_md, dst_md, weights_md;
  int ok = etrt_dnnl_conv_operands(x, y, group, wd, dnnl_iohw, dnnl_giohw, &src_md, &dst_md,
                                   plain_weights, &weights_md);
  return ok && ETRT_DNNL_OK(d->dnnl_dilated_deconvolution_forward_desc_init(
                   dd, dnnl_forward_inference, dnnl_deconvolution_direct, &src_md, &weights_md,
                   NULL, &dst_md, strides, dilates, pad_l, pad_r));
}

/* MatMul or EtrtMatMulBias of an input by a constant [K, N] matrix (with a constant bias
 * of N), or Gemm (alpha 1, no transA, beta 1 with a constant bias of N), as one
 * [M, K] x [K, N] product whose leading axes of A fold into M; 0 when oneDNN is not used
 * for it. `weights_md` is the constant's own layout (row-major, or transposed); the
 * primitive picks its packed one. A product of two computed operands (attention's Q x K^T
 * and P x V) stays with etrt's GEMM: it sums each element in order of k in fused
 * multiply-adds, as onnxruntime's MLAS does, where oneDNN's kernels for small shapes sum
 * in another order (and a quantized transformer requantizes what follows). */
static int etrt_dnnl_matmul_desc(const etrt_engine *engine, const etrt_node *node,
                                 const etrt_tensor *args, dnnl_matmul_desc_t *md,
                                 dnnl_memory_desc_t *weights_md) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  const etrt_tensor *a = &args[0], *b = &args[1];
  int gemm = strcmp(node->op_type, "Gemm") == 0;
  int matmul_bias = strcmp(node->op_type, "EtrtMatMulBias") == 0;
  if (a->dtype != ETRT_DTYPE_FLOAT32 || b->dtype != ETRT_DTYPE_FLOAT32 || a->rank < 2) return 0;
  if (!etrt_dnnl_is_constant(engine, node, 1) || b->rank != 2) return 0;
  int trans_b = 0, has_bias = 0;
  int64_t bias_n = -1;
  if (gemm) {
    if (a->rank != 2 || etrt_node_attribute_int(node, "transA", 0) != 0 ||
        etrt_node_attribute_float(node, "alpha", 1.0f) != 1.0f)
      return 0;
    trans_b = etrt_node_attribute_int(node, "transB", 0) != 0;
    if (node->num_inputs > 2 && node->inputs[2] >= 0) {
      if (etrt_node_attribute_float(node, "beta", 1.0f) != 1.0f) return 0;
      has_bias = 1;
    }
  } else if (matmul_bias) {
    /* The activation epilogue of GPU plans stays with etrt's kernel. */
    if (etrt_matmul_bias_activation(node) != ETRT_MATMUL_ACTIVATION_NONE) return 0;
    has_bias = 1;
  } else if (node->num_inputs != 2) {
    return 0;
  }
  int64_t m = 1;
  for (int32_t i = 0; i + 1 < a->rank; ++i) m *= a->dims[i];
  int64_t k = a->dims[a->rank - 1];
  int64_t n = trans_b ? b->dims[0] : b->dims[1];
  if ((trans_b ? b->dims[1] : b->dims[0]) != k || m <= 0 || k <= 0 || n <= 0) return 0;
  if (has_bias) {
    /* A row of N added to every output row: [N] or [1, N]. */
    const etrt_tensor *c = &args[2];
    bias_n = c->rank == 1 ? c->dims[0] : c->rank == 2 && c->dims[0] == 1 ? c->dims[1] : -1;
    if (!etrt_dnnl_is_constant(engine, node, 2) || c->dtype != ETRT_DTYPE_FLOAT32 || bias_n != n)
      return 0;
  }
  dnnl_dims_t src = {m, k}, wd = {k, n}, dst = {m, n}, bias = {1, n};
  dnnl_dims_t w_strides = {trans_b ? 1 : n, trans_b ? k : 1};
  /* oneDNN's f32 product on AVX2 keeps the weights row-major, and rows a multiple of 4
   * KiB apart (N of 1024, 2048, 3072...) fall into the same cache sets: BERT's 768 x
   * 3072 product ran at half the speed of the 3072 x 768 one. The copy made at load
   * pads such rows by 64 bytes. */
  int64_t n_stride = n * 4 % 4096 == 0 ? n + 16 : n;
  dnnl_dims_t packed_strides = {n_stride, 1};
  dnnl_memory_desc_t src_md, dst_md, bias_md, packed_md;
  return ETRT_DNNL_OK(d->dnnl_memory_desc_init_by_tag(&src_md, 2, src, dnnl_f32, dnnl_ab)) &&
         ETRT_DNNL_OK(d->dnnl_memory_desc_init_by_tag(&dst_md, 2, dst, dnnl_f32, dnnl_ab)) &&
         ETRT_DNNL_OK(d->dnnl_memory_desc_init_by_tag(&bias_md, 2, bias, dnnl_f32, dnnl_ab)) &&
         ETRT_DNNL_OK(
             d->dnnl_memory_desc_init_by_strides(weights_md, 2, wd, dnnl_f32, w_strides)) &&
         ETRT_DNNL_OK(n_stride == n ? d->dnnl_memory_desc_init_by_tag(&packed_md, 2, wd, dnnl_f32,
                                                                      dnnl_format_tag_any)
                                    : d->dnnl_memory_desc_init_by_strides(
                                          &packed_md, 2, wd, dnnl_f32, packed_strides)) &&
         ETRT_DNNL_OK(d->dnnl_matmul_desc_init(md, &src_md, &packed_md, has_bias ? &bias_md : NULL,
                                               &dst_md));
}

/* The row-major descriptor of `md`'s dims (NCHW for 4-D): the run's tensors. */
static int etrt_dnnl_plain(const dnnl_memory_desc_t *md, dnnl_memory_desc_t *plain) {
  static const dnnl_format_tag_t tags[] = {
      dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde};
  if (md->ndims < 1 || md->ndims > 5) return 0;
  return ETRT_DNNL_OK(etrt_dnnl.dnnl_memory_desc_init_by_tag(plain, md->ndims, md->dims, dnnl_f32,
                                                             tags[md->ndims]));
}

/* A memory object of `md` over `handle` (NULL: none yet, set at run). */
static int etrt_dnnl_memory(etrt_cpu_onednn *s, etrt_dnnl_node *dn, etrt_dnnl_slot slot, int arg,
                            const dnnl_memory_desc_t *md, void *handle) {
  if (!ETRT_DNNL_OK(etrt_dnnl.dnnl_memory_create(&dn->memory[slot], md, s->engine,
                                                 handle ? handle : DNNL_MEMORY_NONE)))
    return 0;
  dn->args[dn->arg_count++] = (dnnl_exec_arg_t){arg, dn->memory[slot]};
  return 1;
}

/* A reorder primitive between two memory objects of the node. */
static int etrt_dnnl_reorder_make(etrt_cpu_onednn *s, etrt_dnnl_node *dn, etrt_dnnl_reorder r,
                                  etrt_dnnl_slot from, etrt_dnnl_slot to) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  const dnnl_memory_desc_t *from_md, *to_md;
  dnnl_primitive_desc_t rpd = NULL;
  if (!ETRT_DNNL_OK(d->dnnl_memory_get_memory_desc(dn->memory[from], &from_md)) ||
      !ETRT_DNNL_OK(d->dnnl_memory_get_memory_desc(dn->memory[to], &to_md)) ||
      !ETRT_DNNL_OK(
          d->dnnl_reorder_primitive_desc_create(&rpd, from_md, s->engine, to_md, s->engine, NULL)))
    return 0;
  int ok = ETRT_DNNL_OK(d->dnnl_primitive_create(&dn->reorders[r], rpd));
  d->dnnl_primitive_desc_destroy(rpd);
  return ok;
}

/* Room for `md` in the node's workspace, at slot's offset. */
static void etrt_dnnl_workspace_take(etrt_cpu_onednn *s, etrt_dnnl_node *dn, etrt_dnnl_slot slot,
                                     const dnnl_memory_desc_t *md) {
  dn->in_buffer[slot] = 1;
  dn->buffer_offset[slot] = dn->buffer_used;
  dn->buffer_used += (etrt_dnnl.dnnl_memory_desc_get_size(md) + 63) / 64 * 64;
  if (dn->buffer_used > s->workspace_max) s->workspace_max = dn->buffer_used;
}

/* An activation operand of the primitive (`want`): the run's tensor itself when that is
 * its layout (NCHW, or `chained`), else a memory object in the node's workspace and one
 * over the run's tensor (`user`, `plain`), for the reorders around the primitive. */
static int etrt_dnnl_activation(etrt_cpu_onednn *s, etrt_dnnl_node *dn, etrt_dnnl_slot slot,
                                int arg, const dnnl_memory_desc_t *want,
                                const dnnl_memory_desc_t *plain, int chained, etrt_dnnl_slot user) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  if (chained || d->dnnl_memory_desc_equal(want, plain))
    return etrt_dnnl_memory(s, dn, slot, arg, want, NULL);
  etrt_dnnl_workspace_take(s, dn, slot, want);
  if (!etrt_dnnl_memory(s, dn, slot, arg, want, NULL)) return 0;
  if (!ETRT_DNNL_OK(d->dnnl_memory_create(&dn->memory[user], plain, s->engine, DNNL_MEMORY_NONE)))
    return 0;
  return 1;
}

/* Weights in the layout the primitive asks for: the constant itself when that is its
 * own layout, else a copy reordered once. */
static int etrt_dnnl_weights(etrt_cpu_onednn *s, etrt_dnnl_node *dn, const dnnl_memory_desc_t *want,
                             const dnnl_memory_desc_t *plain, const void *data) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  if (d->dnnl_memory_desc_equal(want, plain))
    return etrt_dnnl_memory(s, dn, ETRT_DNNL_WEIGHTS, DNNL_ARG_WEIGHTS, want, (void *)data);
  size_t size = d->dnnl_memory_desc_get_size(want);
  dn->owned_weights = aligned_alloc(64, (size + 63) / 64 * 64);
  if (dn->owned_weights == NULL) return 0;
  dnnl_memory_t from = NULL;
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t reorder = NULL;
  int ok = etrt_dnnl_memory(s, dn, ETRT_DNNL_WEIGHTS, DNNL_ARG_WEIGHTS, want, dn->owned_weights) &&
           ETRT_DNNL_OK(d->dnnl_memory_create(&from, plain, s->engine, (void *)data)) &&
           ETRT_DNNL_OK(d->dnnl_reorder_primitive_desc_create(&rpd, plain, s->engine, want,
                                                              s->engine, NULL)) &&
           ETRT_DNNL_OK(d->dnnl_primitive_create(&reorder, rpd));
  if (ok) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, dn->memory[ETRT_DNNL_WEIGHTS]}};
    ok = ETRT_DNNL_OK(d->dnnl_primitive_execute(reorder, s->stream, 2, args));
  }
  if (reorder) d->dnnl_primitive_destroy(reorder);
  if (rpd) d->dnnl_primitive_desc_destroy(rpd);
  if (from) d->dnnl_memory_destroy(from);
  if (ok) etrt_file_pages_release(data, d->dnnl_memory_desc_get_size(plain));
  return ok;
}

static void etrt_dnnl_node_release(etrt_dnnl_node *dn) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  for (int i = 0; i < ETRT_DNNL_SLOTS; ++i)
    if (dn->memory[i]) d->dnnl_memory_destroy(dn->memory[i]);
  for (int i = 0; i < ETRT_DNNL_REORDERS; ++i)
    if (dn->reorders[i]) d->dnnl_primitive_destroy(dn->reorders[i]);
  if (dn->primitive) d->dnnl_primitive_destroy(dn->primitive);
  if (dn->pd) d->dnnl_primitive_desc_destroy(dn->pd);
  free(dn->owned_weights);
  memset(dn, 0, sizeof *dn);
}

/* Work of a primitive, in multiply-adds plus a few per element moved, the weights'
 * included (a depthwise convolution, or a batch-1 classifier's product that reads each
 * weight once, is bound by its memory, not its arithmetic: MobileNet v3's two 5 MB
 * heads took 0.34 ms each on one of 16 threads). */
static double etrt_dnnl_node_work(int conv, int deconv, const etrt_tensor *args,
                                  const etrt_tensor *out) {
  double outputs = (double)etrt_tensor_numel(out), inputs = (double)etrt_tensor_numel(&args[0]);
  double weights = (double)etrt_tensor_numel(&args[1]);
  /* A convolution's weights per output are [C/group, k...]; a ConvTranspose's per input
   * [M/group, k...], the same dims of its weights. */
  double per_item = 1.0;
  if (conv)
    for (int32_t a = 1; a < args[1].rank; ++a) per_item *= (double)args[1].dims[a];
  else
    per_item = (double)args[0].dims[args[0].rank - 1];
  return (deconv ? inputs : outputs) * per_item + 16.0 * (inputs + outputs + weights);
}

/* Threads for a node: one when it has less than two threads' worth of work
 * (ETRT_CPU_WORK_PER_THREAD units each, default 2M, tens of microseconds), else the
 * pool's width. Nothing in between: libgomp ends the threads a team no longer needs
 * when a parallel region asks for fewer than the one before, and creates them again
 * for the next larger one, so team sizes that followed each node's work paid thread
 * creation between nodes (MobileNet v3 at 16 threads: 21-28 ms against 8.4 ms on the
 * pool's own workers). */
static int etrt_dnnl_node_threads(int conv, int deconv, const etrt_tensor *args,
                                  const etrt_tensor *out) {
  double useful = etrt_dnnl_node_work(conv, deconv, args, out) / etrt_dnnl_work_per_thread;
  return useful >= 2.0 ? etrt_thread_pool_width() : 1;
}

/* Describes node n's primitive at the plan's largest shapes (dn->pd); leaves dn->pd
 * NULL, so that etrt's kernel runs the node, when oneDNN does not take it. */
static void etrt_dnnl_node_describe(etrt_cpu_onednn *s, const etrt_engine *engine, uint32_t n,
                                    int allow_depthwise, etrt_tensor *args) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  const etrt_node *node = &engine->graph.nodes[n];
  etrt_dnnl_node *dn = &s->nodes[n];
  int deconv = strcmp(node->op_type, "ConvTranspose") == 0;
  int conv =
      deconv || strcmp(node->op_type, "Conv") == 0 || strcmp(node->op_type, "EtrtFusedConv") == 0;
  int matmul = strcmp(node->op_type, "MatMul") == 0 || strcmp(node->op_type, "Gemm") == 0 ||
               strcmp(node->op_type, "EtrtMatMulBias") == 0;
  if ((!conv && !matmul) || node->num_outputs != 1) return;
  etrt_executor_node_bounds(&engine->graph, node, args);
  etrt_tensor *out = &args[node->num_inputs];
  if (node->def == NULL || node->def->infer(node, args, out) != ETRT_OK) return;
  dnnl_convolution_desc_t cd;
  dnnl_deconvolution_desc_t dd;
  dnnl_matmul_desc_t md;
  dnnl_memory_desc_t residual;
  memset(&residual, 0, sizeof residual);
  const etrt_fused_conv_params *fused = NULL;
  if (deconv ? !etrt_dnnl_deconv_desc(engine, node, args, &dd, &dn->plain_weights, &dn->bias_after)
      : conv ? !etrt_dnnl_conv_desc(engine, node, args, allow_depthwise, &cd, &dn->plain_weights,
                                    &residual, &fused, &dn->depthwise)
             : !etrt_dnnl_matmul_desc(engine, node, args, &md, &dn->plain_weights))
    return;
  dn->conv = conv;
  dn->has_residual = conv && residual.ndims > 0;
  /* oneDNN splits the work for the threads it has when the primitive is made. */
  dn->threads = etrt_dnnl_node_threads(conv, deconv, args, out);
  d->omp_set_num_threads(dn->threads);
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t ops = NULL;
  int ok =
      ETRT_DNNL_OK(d->dnnl_primitive_attr_create(&attr)) &&
      ETRT_DNNL_OK(d->dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user)) &&
      ETRT_DNNL_OK(d->dnnl_post_ops_create(&ops)) &&
      ETRT_DNNL_OK(etrt_dnnl_post_ops(fused, dn->has_residual ? &residual : NULL, ops)) &&
      ETRT_DNNL_OK(d->dnnl_primitive_attr_set_post_ops(attr, ops)) &&
      ETRT_DNNL_OK(d->dnnl_primitive_desc_create(&dn->pd,
                                                 deconv ? (const_dnnl_op_desc_t)&dd
                                                 : conv ? (const_dnnl_op_desc_t)&cd
                                                        : (const_dnnl_op_desc_t)&md,
                                                 attr, s->engine, NULL));
  d->omp_set_num_threads(etrt_thread_pool_width());
  if (ops) d->dnnl_post_ops_destroy(ops);
  if (attr) d->dnnl_primitive_attr_destroy(attr);
  if (!ok && dn->pd) d->dnnl_primitive_desc_destroy(dn->pd);
  if (!ok) memset(dn, 0, sizeof *dn);
  if (ok) {
    dn->rank = args[0].rank;
    memcpy(dn->dims, args[0].dims, sizeof dn->dims);
    dn->out_rank = out->rank;
    memcpy(dn->out_dims, out->dims, sizeof dn->out_dims);
  }
}

static const dnnl_memory_desc_t *etrt_dnnl_md(const etrt_dnnl_node *dn, dnnl_query_t what) {
  return etrt_dnnl.dnnl_primitive_desc_query_md(dn->pd, what, 0);
}

/* Every planned dim is the only dim a run can have: no axis with a range, none known only
 * at execute. Values chained in a blocked layout are never read by etrt's kernels, which
 * run a node whenever a run's shapes differ from the primitive's. */
static int etrt_dnnl_plan_is_fixed(const etrt_graph *g) {
  for (uint32_t v = 0; v < g->value_count; ++v) {
    const etrt_graph_value *value = &g->values[v];
    if (value->dims_at_execute) return 0;
    for (int32_t a = 0; a < value->rank; ++a)
      if (value->min_dims[a] != value->max_dims[a]) return 0;
  }
  return 1;
}

/* The descriptor of 4-D float32 `dims` in blocks of `block` channels: nChw8c (8) or
 * nChw16c (16). */
static int etrt_dnnl_blocked_md(dnnl_memory_desc_t *md, const dnnl_dims_t dims, int block) {
  return ETRT_DNNL_OK(etrt_dnnl.dnnl_memory_desc_init_by_tag(
      md, 4, dims, dnnl_f32, block == 8 ? dnnl_aBcd8b : dnnl_aBcd16b));
}

/* The channel block of a 4-D float32 layout in blocks of channels: 8 or 16, else 0. */
static int etrt_dnnl_channel_block(const dnnl_memory_desc_t *md) {
  if (md->ndims != 4 || md->data_type != dnnl_f32) return 0;
  for (int block = 8; block <= 16; block *= 2) {
    dnnl_memory_desc_t blocked;
    if (etrt_dnnl_blocked_md(&blocked, md->dims, block) &&
        etrt_dnnl.dnnl_memory_desc_equal(&blocked, md))
      return block;
  }
  return 0;
}

/* Nodes other than convolutions that may read and write values kept in a channel-blocked
 * layout (etrt_dnnl_chain):
 * - ETRT_DNNL_BYTEWISE: etrt's kernel computes the same bytes whatever channel-blocked
 *   layout the node's values share, provided no channel is padded: Add, Sub and Mul of
 *   two operands of the output's shape work element by element on the buffers, and in a
 *   Concat or Split along the channels each part's channels of an image are one
 *   contiguous run in either layout when every part's channel count is a multiple of the
 *   block. YOLO-style models split, add and concatenate convolutions' outputs between
 *   convolutions (NudeNet: 9 Splits, 8 Adds, 19 Concats); kept NCHW, each such value
 *   cost a reorder on each side.
 * - ETRT_DNNL_CHANNEL_SCALE: Mul of an [N, C, H, W] value by an [N or 1, C, 1, 1] one, and
 *   ETRT_DNNL_GLOBAL_AVERAGE: GlobalAveragePool into [N, C, 1, 1], run on the blocked value
 *   by cpu_blocked.h's kernels; the scale and the pool's output stay NCHW (for C a whole
 *   number of blocks and one pixel they are the same bytes). These are the
 *   squeeze-and-excitation blocks of MobileNet v3 and EfficientNet, whose depthwise
 *   outputs went to NCHW and back for them. */
typedef enum etrt_dnnl_role {
  ETRT_DNNL_OUTSIDE = 0,
  ETRT_DNNL_BYTEWISE,
  ETRT_DNNL_CHANNEL_SCALE,
  ETRT_DNNL_GLOBAL_AVERAGE,
} etrt_dnnl_role;

/* Node n's role, the inputs it reads blocked (*blocked, one bit each) and whether its
 * outputs are blocked too (*writes_blocked). */
static etrt_dnnl_role etrt_dnnl_role_of(const etrt_graph *g, const etrt_node *node,
                                        uint32_t *blocked, int *writes_blocked) {
  const char *op = node->op_type;
  *blocked = 0;
  *writes_blocked = 1;
  if (node->num_outputs < 1 || node->num_inputs < 1 || node->num_inputs > 32) return 0;
  for (uint32_t k = 0; k < node->num_inputs + node->num_outputs; ++k) {
    int32_t v = k < node->num_inputs ? node->inputs[k] : node->outputs[k - node->num_inputs];
    if (v < 0) return 0;
  }
  const etrt_graph_value *out = &g->values[node->outputs[0]];
  const etrt_graph_value *a = &g->values[node->inputs[0]];
  if (out->rank != 4 || out->dtype != ETRT_DTYPE_FLOAT32 || a->rank != 4 ||
      a->dtype != ETRT_DTYPE_FLOAT32)
    return 0;
  if (strcmp(op, "GlobalAveragePool") == 0) {
    if (node->num_outputs != 1 || etrt_node_attribute_int(node, "channels_last", 0) != 0) return 0;
    *blocked = 1;
    *writes_blocked = 0;
    return ETRT_DNNL_GLOBAL_AVERAGE;
  }
  int split = strcmp(op, "Split") == 0, concat = strcmp(op, "Concat") == 0;
  if (split || concat) {
    if (!split && node->num_outputs != 1) return 0;
    int64_t axis = etrt_node_attribute_int(node, "axis", split ? 0 : INT64_MIN);
    if (axis != 1 && axis != -3) return 0;
    uint32_t parts = split ? 1 : node->num_inputs;
    for (uint32_t k = 0; k < parts + node->num_outputs; ++k) {
      const etrt_graph_value *value =
          &g->values[k < parts ? node->inputs[k] : node->outputs[k - parts]];
      if (value->rank != 4 || value->dtype != ETRT_DTYPE_FLOAT32) return 0;
    }
    *blocked = split ? 1u : (node->num_inputs == 32 ? 0xffffffffu : (1u << node->num_inputs) - 1);
    return ETRT_DNNL_BYTEWISE;
  }
  if (strcmp(op, "Add") != 0 && strcmp(op, "Sub") != 0 && strcmp(op, "Mul") != 0) return 0;
  if (node->num_inputs != 2 || node->num_outputs != 1) return 0;
  const etrt_graph_value *b = &g->values[node->inputs[1]];
  if (b->rank != 4 || b->dtype != ETRT_DTYPE_FLOAT32) return 0;
  const size_t dims = 4 * sizeof(int64_t);
  int a_full = memcmp(a->max_dims, out->max_dims, dims) == 0;
  int b_full = memcmp(b->max_dims, out->max_dims, dims) == 0;
  if (a_full && b_full) {
    *blocked = 3;
    return ETRT_DNNL_BYTEWISE;
  }
  /* Mul by a per-channel scale, on either side. */
  const etrt_graph_value *scale = a_full ? b : a;
  if (strcmp(op, "Mul") != 0 || a_full == b_full || scale->max_dims[1] != out->max_dims[1] ||
      scale->max_dims[2] != 1 || scale->max_dims[3] != 1 ||
      (scale->max_dims[0] != 1 && scale->max_dims[0] != out->max_dims[0]))
    return 0;
  *blocked = a_full ? 1 : 2;
  return ETRT_DNNL_CHANNEL_SCALE;
}

/* Whether convolution c reads value v (its input i) in the layout v is kept in: the one
 * its producing convolution writes, or, written by a node with a role, channel blocks of
 * `block`. */
static int etrt_dnnl_reads_kept(const etrt_cpu_onednn *s, const etrt_graph *g, uint32_t v,
                                int block, const etrt_dnnl_node *c, uint32_t i) {
  if (c->pd == NULL || !c->conv) return 0;
  const etrt_graph_value *value = &g->values[v];
  const etrt_dnnl_node *p = &s->nodes[value->producer];
  dnnl_memory_desc_t kept;
  const dnnl_memory_desc_t *written = &kept;
  if (p->pd != NULL) {
    written = etrt_dnnl_md(p, dnnl_query_dst_md);
  } else {
    dnnl_dims_t dims = {0};
    memcpy(dims, value->max_dims, 4 * sizeof(int64_t));
    if (!etrt_dnnl_blocked_md(&kept, dims, block)) return 0;
  }
  if (i == 0) return etrt_dnnl.dnnl_memory_desc_equal(written, etrt_dnnl_md(c, dnnl_query_src_md));
  if (i == 3 && c->has_residual)
    return etrt_dnnl.dnnl_memory_desc_equal(written, etrt_dnnl_md(c, dnnl_query_dst_md));
  return 0;
}

/* Chooses the values kept in a blocked layout between convolutions: an intermediate
 * written by one of the context's convolutions in a layout other than NCHW, or by a node
 * with a role (etrt_dnnl_role_of) all of whose blocked values are kept in one
 * channel-blocked layout, and read only by convolutions of the context that want that
 * layout (as source, or as the residual summed into a destination of that layout) or by
 * such nodes. Such values skip both reorders. One whose
 * channels the layout pads (24 in blocks of 16, as AVX-512 blocks them) takes the padded
 * bytes in the arena (etrt_cpu_onednn_value_bytes): kept out of chains, such values had
 * left MobileNet v3's and EfficientNet's depthwise convolutions on etrt's NCHW kernel on
 * AVX-512 machines; nodes with a role take no padded value. A ConvTranspose whose bias
 * etrt adds afterwards (bias_after) writes NCHW. A depthwise convolution stays with
 * oneDNN only where its source or its destination is chained (its blocked kernels then
 * beat etrt's NCHW one even with a reorder on the other side); dropping one, or a node
 * with a role, may break its neighbours' chains, so the choice repeats until nothing
 * changes. Nodes are in the order they run, so such a node's inputs are settled before
 * it. `state`: one byte per value (0 no, 1 candidate, 2 candidate whose readers all take
 * it), `block` one per value (its channel block). */
static void etrt_dnnl_chain(etrt_cpu_onednn *s, const etrt_engine *engine, uint8_t *state,
                            uint8_t *block) {
  const etrt_graph *g = &engine->graph;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    etrt_dnnl_node *dn = &s->nodes[n];
    dn->role = etrt_dnnl_role_of(g, &g->nodes[n], &dn->blocked_inputs, &dn->writes_blocked);
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (uint32_t v = 0; v < g->value_count; ++v) {
      const etrt_graph_value *value = &g->values[v];
      const etrt_dnnl_node *p = value->producer >= 0 ? &s->nodes[value->producer] : NULL;
      state[v] = 0;
      block[v] = 0;
      if (value->kind != ETRT_VALUE_KIND_INTERMEDIATE || p == NULL || p->pd == NULL || !p->conv ||
          p->bias_after)
        continue;
      const dnnl_memory_desc_t *written = etrt_dnnl_md(p, dnnl_query_dst_md);
      dnnl_memory_desc_t plain;
      if (!etrt_dnnl_plain(written, &plain) || etrt_dnnl.dnnl_memory_desc_equal(written, &plain))
        continue;
      int64_t planned = etrt_graph_nbytes(value->dtype, value->rank, value->max_dims);
      if (planned < 0 || etrt_dnnl.dnnl_memory_desc_get_size(written) < (size_t)planned) continue;
      state[v] = 1;
      block[v] = (uint8_t)etrt_dnnl_channel_block(written);
    }
    for (uint32_t n = 0; n < g->node_count; ++n) {
      etrt_dnnl_node *dn = &s->nodes[n];
      if (dn->role == ETRT_DNNL_OUTSIDE) continue;
      const etrt_node *node = &g->nodes[n];
      int b = 0, ok = 1;
      for (uint32_t i = 0; i < node->num_inputs && ok; ++i) {
        if (!(dn->blocked_inputs >> i & 1)) continue;
        uint32_t v = (uint32_t)node->inputs[i];
        if (b == 0) b = block[v];
        ok = b != 0 && state[v] != 0 && block[v] == b && g->values[v].max_dims[1] % b == 0;
      }
      for (uint32_t o = 0; o < node->num_outputs && ok && dn->writes_blocked; ++o) {
        const etrt_graph_value *value = &g->values[node->outputs[o]];
        ok = value->kind == ETRT_VALUE_KIND_INTERMEDIATE && value->max_dims[1] % b == 0;
      }
      if (!ok) {
        dn->role = ETRT_DNNL_OUTSIDE;
        changed = 1;
        continue;
      }
      dn->block = b;
      for (uint32_t o = 0; o < node->num_outputs && dn->writes_blocked; ++o) {
        state[node->outputs[o]] = 1;
        block[node->outputs[o]] = (uint8_t)b;
      }
    }
    for (uint32_t n = 0; n < g->node_count; ++n) {
      const etrt_node *node = &g->nodes[n];
      for (uint32_t i = 0; i < node->num_inputs; ++i) {
        int32_t v = node->inputs[i];
        if (v < 0 || state[v] == 0) continue;
        const etrt_dnnl_node *reader = &s->nodes[n];
        int ok = reader->role != ETRT_DNNL_OUTSIDE
                     ? (int)(reader->blocked_inputs >> i & 1)
                     : etrt_dnnl_reads_kept(s, g, (uint32_t)v, block[v], reader, i);
        state[v] = ok ? 2 : 0;
      }
    }
    for (uint32_t n = 0; n < g->node_count; ++n) {
      etrt_dnnl_node *dn = &s->nodes[n];
      const etrt_node *node = &g->nodes[n];
      if (dn->role == ETRT_DNNL_OUTSIDE) continue;
      int kept = 1;
      for (uint32_t i = 0; i < node->num_inputs; ++i)
        kept = kept && (!(dn->blocked_inputs >> i & 1) || state[node->inputs[i]] == 2);
      for (uint32_t o = 0; o < node->num_outputs && dn->writes_blocked; ++o)
        kept = kept && state[node->outputs[o]] == 2;
      if (!kept) {
        dn->role = ETRT_DNNL_OUTSIDE;
        changed = 1;
      }
    }
    for (uint32_t n = 0; n < g->node_count; ++n) {
      etrt_dnnl_node *dn = &s->nodes[n];
      const etrt_node *node = &g->nodes[n];
      if (dn->pd == NULL || !dn->depthwise) continue;
      if (state[node->inputs[0]] != 2 && state[node->outputs[0]] != 2) {
        etrt_dnnl_node_release(dn);
        changed = 1;
      }
    }
  }
  for (uint32_t n = 0; n < g->node_count; ++n) {
    etrt_dnnl_node *dn = &s->nodes[n];
    const etrt_node *node = &g->nodes[n];
    if (dn->role != ETRT_DNNL_OUTSIDE && dn->writes_blocked) s->chained += node->num_outputs;
    if (dn->pd == NULL || !dn->conv) continue;
    dn->chained_src = state[node->inputs[0]] == 2;
    dn->chained_dst = state[node->outputs[0]] == 2;
    dn->chained_residual = dn->has_residual && state[node->inputs[3]] == 2;
  }
}

/* Makes node n's memory objects, reorders and primitive from its description; returns 0
 * and leaves dn->primitive NULL, so that etrt's kernel runs the node, when a step fails. */
static int etrt_dnnl_node_finish(etrt_cpu_onednn *s, const etrt_engine *engine, uint32_t n) {
  const etrt_dnnl_api *d = &etrt_dnnl;
  const etrt_node *node = &engine->graph.nodes[n];
  etrt_dnnl_node *dn = &s->nodes[n];
  const dnnl_memory_desc_t *src = etrt_dnnl_md(dn, dnnl_query_src_md);
  const dnnl_memory_desc_t *weights = etrt_dnnl_md(dn, dnnl_query_weights_md);
  const dnnl_memory_desc_t *bias =
      d->dnnl_primitive_desc_query_md(dn->pd, dnnl_query_weights_md, 1);
  const dnnl_memory_desc_t *dst = etrt_dnnl_md(dn, dnnl_query_dst_md);
  const dnnl_memory_desc_t *scratch = etrt_dnnl_md(dn, dnnl_query_scratchpad_md);
  const etrt_graph_value *values = engine->graph.values;
  dnnl_memory_desc_t plain_src, plain_dst;
  int ok = etrt_dnnl_plain(src, &plain_src) && etrt_dnnl_plain(dst, &plain_dst) &&
           etrt_dnnl_activation(s, dn, ETRT_DNNL_SRC, DNNL_ARG_SRC, src, &plain_src,
                                dn->chained_src, ETRT_DNNL_USER_SRC) &&
           etrt_dnnl_activation(s, dn, ETRT_DNNL_DST, DNNL_ARG_DST, dst, &plain_dst,
                                dn->chained_dst, ETRT_DNNL_USER_DST) &&
           etrt_dnnl_weights(s, dn, weights, &dn->plain_weights, values[node->inputs[1]].data);
  if (ok && dn->memory[ETRT_DNNL_USER_SRC])
    ok = etrt_dnnl_reorder_make(s, dn, ETRT_DNNL_REORDER_SRC, ETRT_DNNL_USER_SRC, ETRT_DNNL_SRC);
  if (ok && dn->memory[ETRT_DNNL_USER_DST])
    ok = etrt_dnnl_reorder_make(s, dn, ETRT_DNNL_REORDER_DST, ETRT_DNNL_DST, ETRT_DNNL_USER_DST);
  /* A residual already in the destination's layout is copied into it; an NCHW one is
   * reordered into a blocked destination. */
  if (ok && dn->has_residual && !dn->chained_residual &&
      !d->dnnl_memory_desc_equal(dst, &plain_dst))
    ok = ETRT_DNNL_OK(d->dnnl_memory_create(&dn->memory[ETRT_DNNL_USER_RESIDUAL], &plain_dst,
                                            s->engine, DNNL_MEMORY_NONE)) &&
         etrt_dnnl_reorder_make(s, dn, ETRT_DNNL_REORDER_RESIDUAL, ETRT_DNNL_USER_RESIDUAL,
                                ETRT_DNNL_DST);
  if (ok && bias != NULL && bias->ndims > 0)
    ok = etrt_dnnl_memory(s, dn, ETRT_DNNL_BIAS, DNNL_ARG_BIAS, bias,
                          (void *)values[node->inputs[2]].data);
  if (ok && scratch != NULL && scratch->ndims > 0) {
    etrt_dnnl_workspace_take(s, dn, ETRT_DNNL_SCRATCHPAD, scratch);
    ok = etrt_dnnl_memory(s, dn, ETRT_DNNL_SCRATCHPAD, DNNL_ARG_SCRATCHPAD, scratch, NULL);
  }
  ok = ok && ETRT_DNNL_OK(d->dnnl_primitive_create(&dn->primitive, dn->pd));
  dn->dst_bytes = d->dnnl_memory_desc_get_size(dst);
  d->dnnl_primitive_desc_destroy(dn->pd);
  dn->pd = NULL;
  if (!ok) {
    etrt_dnnl_node_release(dn);
    return 0; /* etrt's kernel runs it */
  }
  ++s->used;
  s->chained += (uint32_t)dn->chained_dst;
  return 1;
}

void etrt_cpu_onednn_destroy(etrt_cpu_onednn *s) {
  if (s == NULL) return;
  const etrt_dnnl_api *d = &etrt_dnnl;
  for (uint32_t n = 0; s->nodes != NULL && n < s->node_count; ++n)
    etrt_dnnl_node_release(&s->nodes[n]);
  free(s->nodes);
  if (s->stream) d->dnnl_stream_destroy(s->stream);
  if (s->engine) d->dnnl_engine_destroy(s->engine);
  free(s);
}

etrt_status etrt_cpu_onednn_create(const etrt_engine *engine, etrt_cpu_onednn **out) {
  *out = NULL;
  const char *choice = getenv("ETRT_CPU_KERNELS");
  if (choice != NULL && strcmp(choice, "etrt") == 0) return ETRT_OK;
  /* Nothing to load for a plan without convolutions or matrix products. */
  int candidates = 0;
  for (uint32_t n = 0; n < engine->graph.node_count && !candidates; ++n) {
    const char *op = engine->graph.nodes[n].op_type;
    candidates = strcmp(op, "Conv") == 0 || strcmp(op, "EtrtFusedConv") == 0 ||
                 strcmp(op, "ConvTranspose") == 0 || strcmp(op, "MatMul") == 0 ||
                 strcmp(op, "Gemm") == 0 || strcmp(op, "EtrtMatMulBias") == 0;
  }
  if (!candidates) return ETRT_OK;
  pthread_once(&etrt_dnnl_once, etrt_dnnl_load);
  if (!etrt_dnnl_loaded) {
    etrt_log(ETRT_LOG_INFO, "CPU kernels: etrt's (oneDNN not loaded: %s)", etrt_dnnl_why);
    return ETRT_OK;
  }
  const etrt_dnnl_api *d = &etrt_dnnl;
  etrt_cpu_onednn *s = calloc(1, sizeof *s);
  etrt_tensor *args = calloc(engine->max_node_args + 1, sizeof *args);
  if (s == NULL || args == NULL ||
      (s->nodes = calloc(engine->graph.node_count + 1, sizeof *s->nodes)) == NULL) {
    free(args);
    etrt_cpu_onednn_destroy(s);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory for oneDNN state",
                      engine->info.name);
  }
  s->node_count = engine->graph.node_count;
  s->graph = &engine->graph;
  etrt_status status = ETRT_OK;
  if (!ETRT_DNNL_OK(d->dnnl_engine_create(&s->engine, dnnl_cpu, 0)) ||
      !ETRT_DNNL_OK(d->dnnl_stream_create(&s->stream, s->engine, dnnl_stream_default_flags))) {
    etrt_log(ETRT_LOG_INFO, "CPU kernels: etrt's (oneDNN has no CPU engine)");
    free(args);
    etrt_cpu_onednn_destroy(s);
    return ETRT_OK;
  }
  /* The weight reorders run here: on the caller's share of the pool, as executions do. */
  d->omp_set_num_threads(etrt_thread_pool_width());
  int fixed = etrt_dnnl_plan_is_fixed(&engine->graph);
  for (uint32_t n = 0; n < s->node_count; ++n) etrt_dnnl_node_describe(s, engine, n, fixed, args);
  free(args);
  if (fixed) {
    /* A byte of state and one of channel block per value. */
    uint8_t *chain_state = calloc(2 * (size_t)engine->graph.value_count + 1, 1);
    if (chain_state == NULL) {
      etrt_cpu_onednn_destroy(s);
      return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "engine '%s': out of memory for oneDNN state",
                        engine->info.name);
    }
    etrt_dnnl_chain(s, engine, chain_state, chain_state + engine->graph.value_count);
    free(chain_state);
  }
  /* A node that fails here runs etrt's kernel; its chained neighbours would hand it a
   * blocked tensor, so then etrt's kernels run the whole context. */
  int broken_chain = 0;
  for (uint32_t n = 0; n < s->node_count; ++n) {
    const etrt_dnnl_node *dn = &s->nodes[n];
    int chained = dn->chained_src || dn->chained_dst || dn->chained_residual;
    if (dn->pd != NULL && !etrt_dnnl_node_finish(s, engine, n) && chained) broken_chain = 1;
  }
  if (broken_chain) {
    etrt_log(ETRT_LOG_INFO, "CPU kernels: etrt's (engine '%s': oneDNN could not make a primitive)",
             engine->info.name);
    etrt_cpu_onednn_destroy(s);
    return ETRT_OK;
  }
  if (status != ETRT_OK || s->used == 0) {
    etrt_cpu_onednn_destroy(s);
    return status;
  }
  etrt_log(ETRT_LOG_DEBUG,
           "engine '%s': %u nodes run by oneDNN, %u values kept in its layouts (largest node "
           "workspace %zu bytes, in the context's arena)",
           engine->info.name, s->used, s->chained, s->workspace_max);
  *out = s;
  return ETRT_OK;
}

static int etrt_dnnl_same(int32_t rank, const int64_t *dims, const etrt_tensor *t) {
  return t->rank == rank && memcmp(t->dims, dims, (size_t)rank * sizeof *dims) == 0;
}

static dnnl_status_t etrt_dnnl_run_reorder(etrt_cpu_onednn *s, etrt_dnnl_node *dn,
                                           etrt_dnnl_reorder r, etrt_dnnl_slot from,
                                           etrt_dnnl_slot to) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, dn->memory[from]}, {DNNL_ARG_TO, dn->memory[to]}};
  return etrt_dnnl.dnnl_primitive_execute(dn->reorders[r], s->stream, 2, args);
}

/* Points a memory object at a run's tensor or its place in the node's workspace, only
 * when that moved: setting the handle of a layout with padded channels zeroes the
 * padding, a pass over the tensor, and the padding stays zero between runs (the
 * primitive that writes such a value zeroes it after any post-op that does not keep
 * zeros). */
static void etrt_dnnl_point(etrt_dnnl_node *dn, int slot, void *data) {
  if (dn->pointed[slot] == data) return;
  etrt_dnnl.dnnl_memory_set_data_handle(dn->memory[slot], data);
  dn->pointed[slot] = data;
}

/* A node of a chain that cpu_blocked.h's kernels run on its blocked values. */
static void etrt_dnnl_run_blocked(const etrt_dnnl_node *dn, const etrt_tensor *inputs,
                                  etrt_tensor *outputs) {
  const etrt_tensor *y = &outputs[0];
  if (dn->role == ETRT_DNNL_GLOBAL_AVERAGE) {
    const etrt_tensor *x = &inputs[0];
    etrt_cpu_blocked_global_average(x->data, y->data, x->dims[0], x->dims[1],
                                    x->dims[2] * x->dims[3], dn->block);
    return;
  }
  int first_full = memcmp(inputs[0].dims, y->dims, 4 * sizeof(int64_t)) == 0;
  const etrt_tensor *x = &inputs[first_full ? 0 : 1], *scale = &inputs[first_full ? 1 : 0];
  etrt_cpu_blocked_channel_scale(x->data, scale->data, y->data, y->dims[0], y->dims[1],
                                 y->dims[2] * y->dims[3], dn->block, scale->dims[0]);
}

int etrt_cpu_onednn_run(etrt_cpu_onednn *s, uint32_t n, const etrt_tensor *inputs,
                        etrt_tensor *outputs, void *workspace, etrt_status *status) {
  if (s == NULL || n >= s->node_count) return 0;
  etrt_dnnl_node *dn = &s->nodes[n];
  if (dn->role == ETRT_DNNL_CHANNEL_SCALE || dn->role == ETRT_DNNL_GLOBAL_AVERAGE) {
    etrt_dnnl_run_blocked(dn, inputs, outputs);
    *status = ETRT_OK;
    return 1;
  }
  if (dn->primitive == NULL || !etrt_dnnl_same(dn->rank, dn->dims, &inputs[0]) ||
      !etrt_dnnl_same(dn->out_rank, dn->out_dims, &outputs[0]) ||
      (dn->buffer_used > 0 && workspace == NULL))
    return 0;
  const etrt_dnnl_api *d = &etrt_dnnl;
  /* Blocked operands in the workspace move only when the arena is re-planned. */
  for (int slot = 0; dn->buffer_used > 0 && slot < ETRT_DNNL_SLOTS; ++slot)
    if (dn->in_buffer[slot])
      etrt_dnnl_point(dn, slot, (uint8_t *)workspace + dn->buffer_offset[slot]);
  int src_slot = dn->memory[ETRT_DNNL_USER_SRC] ? ETRT_DNNL_USER_SRC : ETRT_DNNL_SRC;
  int dst_slot = dn->memory[ETRT_DNNL_USER_DST] ? ETRT_DNNL_USER_DST : ETRT_DNNL_DST;
  etrt_dnnl_point(dn, src_slot, inputs[0].data);
  etrt_dnnl_point(dn, dst_slot, outputs[0].data);
  if (dn->memory[ETRT_DNNL_USER_RESIDUAL]) {
    etrt_dnnl_point(dn, ETRT_DNNL_USER_RESIDUAL, inputs[3].data);
  } else if (dn->has_residual) {
    /* Already in the destination's layout: copied to where the primitive writes. */
    void *to = dn->in_buffer[ETRT_DNNL_DST]
                   ? (void *)((uint8_t *)workspace + dn->buffer_offset[ETRT_DNNL_DST])
                   : outputs[0].data;
    if (to != inputs[3].data) memcpy(to, inputs[3].data, dn->dst_bytes);
  }
  /* The node's threads within the caller's width, less what other calls hold now. */
  int want = etrt_thread_pool_width();
  if (want > dn->threads) want = dn->threads;
  d->omp_set_num_threads(etrt_thread_pool_claim(want));
  dnnl_status_t r = dnnl_success;
  if (dn->reorders[ETRT_DNNL_REORDER_SRC])
    r = etrt_dnnl_run_reorder(s, dn, ETRT_DNNL_REORDER_SRC, ETRT_DNNL_USER_SRC, ETRT_DNNL_SRC);
  if (r == dnnl_success && dn->reorders[ETRT_DNNL_REORDER_RESIDUAL])
    r = etrt_dnnl_run_reorder(s, dn, ETRT_DNNL_REORDER_RESIDUAL, ETRT_DNNL_USER_RESIDUAL,
                              ETRT_DNNL_DST);
  if (r == dnnl_success)
    r = d->dnnl_primitive_execute(dn->primitive, s->stream, dn->arg_count, dn->args);
  if (r == dnnl_success && dn->reorders[ETRT_DNNL_REORDER_DST])
    r = etrt_dnnl_run_reorder(s, dn, ETRT_DNNL_REORDER_DST, ETRT_DNNL_DST, ETRT_DNNL_USER_DST);
  etrt_thread_pool_unclaim(want);
  if (r == dnnl_success && dn->bias_after) {
    const etrt_tensor *y = &outputs[0];
    etrt_cpu_conv_epilogue(y->data, inputs[2].data, NULL, NULL, y->dims[0] * y->dims[1], y->dims[1],
                           y->dims[2] * y->dims[3]);
  }
  *status = r == dnnl_success
                ? ETRT_OK
                : etrt_error(ETRT_ERROR_INTERNAL,
                             "oneDNN failed to execute the primitive (status %d)", (int)r);
  return 1;
}

size_t etrt_cpu_onednn_workspace(const etrt_cpu_onednn *s, uint32_t n) {
  return s != NULL && n < s->node_count && s->nodes[n].primitive != NULL ? s->nodes[n].buffer_used
                                                                         : 0;
}

size_t etrt_cpu_onednn_value_bytes(const etrt_cpu_onednn *s, uint32_t v) {
  if (s == NULL || v >= s->graph->value_count) return 0;
  int32_t producer = s->graph->values[v].producer;
  if (producer < 0) return 0;
  const etrt_dnnl_node *dn = &s->nodes[producer];
  return dn->primitive != NULL && dn->chained_dst ? dn->dst_bytes : 0;
}

int etrt_cpu_onednn_takes(const etrt_cpu_onednn *s, uint32_t n) {
  return s != NULL && n < s->node_count && s->nodes[n].primitive != NULL;
}

uint32_t etrt_cpu_onednn_node_count(const etrt_cpu_onednn *s) { return s != NULL ? s->used : 0; }

uint32_t etrt_cpu_onednn_chained_count(const etrt_cpu_onednn *s) {
  return s != NULL ? s->chained : 0;
}

#endif
