/* Convolution and matrix-multiply shapes from ResNet-50, MobileNet v2 and BERT-base,
 * timed with etrt's CPU kernels and, where built with them, oneDNN and XNNPACK
 * (make bench-cpu-kernels). Weights are packed ahead (at primitive/operator
 * creation) for every library, as a plan load would; only execution is timed.
 * Usage: cpu_kernels THREADS [REPEATS]. Prints -1 where a library refused the shape. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/thread_pool.h"
#include "engine/engine.h"
#include "etrt/network.h"

#ifdef BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
void omp_set_num_threads(int);
#endif
#ifdef BENCH_XNNPACK
#include <xnnpack.h>
#endif

typedef struct shape {
  const char *name;
  int conv;                                  /* 0: matmul [m, k] x [k, n] */
  int64_t c, h, w, m, k, stride, pad, group; /* conv: NCHW input, M maps, k x k */
  int64_t mm_m, mm_k, mm_n;
} shape;

static const shape shapes[] = {
    {"resnet50 conv3x3 64->64 56x56", 1, 64, 56, 56, 64, 3, 1, 1, 1, 0, 0, 0},
    {"resnet50 conv1x1 256->64 56x56", 1, 256, 56, 56, 64, 1, 1, 0, 1, 0, 0, 0},
    {"resnet50 conv3x3 256->256 14x14", 1, 256, 14, 14, 256, 3, 1, 1, 1, 0, 0, 0},
    {"resnet50 conv7x7/2 3->64 224x224", 1, 3, 224, 224, 64, 7, 2, 3, 1, 0, 0, 0},
    {"mobilenetv2 dw3x3 144 56x56", 1, 144, 56, 56, 144, 3, 1, 1, 144, 0, 0, 0},
    {"mobilenetv2 conv1x1 144->24 56x56", 1, 144, 56, 56, 24, 1, 1, 0, 1, 0, 0, 0},
    {"bert matmul 128x768x768", 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 768, 768},
    {"bert matmul 128x768x3072", 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 768, 3072},
};

/* With one thread the process's CPU time, which a loaded machine disturbs far less
 * than wall time; with more, wall time. */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(bench_clock, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define TIME_MEDIAN(repeats, stmt)                            \
  ({                                                          \
    double t_[64];                                            \
    stmt;                                                     \
    for (int r_ = 0; r_ < (repeats); ++r_) {                  \
      double s_ = now_ms();                                   \
      stmt;                                                   \
      t_[r_] = now_ms() - s_;                                 \
    }                                                         \
    qsort(t_, (size_t)(repeats), sizeof(double), cmp_double); \
    t_[(repeats) / 2];                                        \
  })

static float *filled(size_t n) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; ++i) p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  return p;
}

static int64_t out_size(const shape *s) { return (s->h + 2 * s->pad - s->k) / s->stride + 1; }

/* etrt: a one-operator plan on the CPU executor. */
static double bench_etrt(const shape *s, int repeats) {
  etrt_network *net = NULL;
  etrt_network_create(&net);
  int32_t ids[3], out;
  int64_t o = out_size(s);
  float *x, *w, *b, *y;
  if (s->conv) {
    int64_t xd[4] = {1, s->c, s->h, s->w}, wd[4] = {s->m, s->c / s->group, s->k, s->k};
    x = filled((size_t)(s->c * s->h * s->w));
    w = filled((size_t)(wd[0] * wd[1] * wd[2] * wd[3]));
    b = filled((size_t)s->m);
    y = malloc((size_t)(s->m * o * o) * sizeof(float));
    etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 4, xd, xd, &ids[0]);
    etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 4, wd, w, &ids[1]);
    etrt_network_add_constant(net, "b", ETRT_DTYPE_FLOAT32, 1, &s->m, b, &ids[2]);
    int64_t pads[4] = {s->pad, s->pad, s->pad, s->pad}, strides[2] = {s->stride, s->stride};
    etrt_attribute attrs[] = {
        {.name = "group", .kind = ETRT_ATTRIBUTE_INT, .i = s->group},
        {.name = "pads", .kind = ETRT_ATTRIBUTE_INTS, .count = 4, .ints = pads},
        {.name = "strides", .kind = ETRT_ATTRIBUTE_INTS, .count = 2, .ints = strides}};
    etrt_network_add_op(net, "Conv", "conv", 3, ids, 1, &out, 3, attrs);
  } else {
    int64_t xd[2] = {s->mm_m, s->mm_k}, wd[2] = {s->mm_k, s->mm_n};
    x = filled((size_t)(s->mm_m * s->mm_k));
    w = filled((size_t)(s->mm_k * s->mm_n));
    b = NULL;
    y = malloc((size_t)(s->mm_m * s->mm_n) * sizeof(float));
    etrt_network_add_input(net, "x", ETRT_DTYPE_FLOAT32, 2, xd, xd, &ids[0]);
    etrt_network_add_constant(net, "w", ETRT_DTYPE_FLOAT32, 2, wd, w, &ids[1]);
    etrt_network_add_op(net, "MatMul", "mm", 2, ids, 1, &out, 0, NULL);
  }
  etrt_network_mark_output(net, out, "y");
  etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}};
  uint8_t *plan = NULL;
  size_t plan_size = 0;
  etrt_engine *engine = NULL;
  etrt_exec_context *ctx = NULL;
  double t = -1;
  if (etrt_plan_build(net, &options, &plan, &plan_size) == ETRT_OK &&
      etrt_engine_deserialize(plan, plan_size, &engine) == ETRT_OK &&
      etrt_exec_context_create(engine, NULL, &ctx) == ETRT_OK) {
    etrt_exec_context_set_address(ctx, 0, x);
    etrt_exec_context_set_address(ctx, 1, y);
    t = TIME_MEDIAN(repeats, etrt_exec_context_enqueue(ctx, NULL));
  } else {
    fprintf(stderr, "etrt: %s\n", etrt_last_error());
  }
  etrt_exec_context_destroy(ctx);
  etrt_engine_destroy(engine);
  free(plan);
  etrt_network_destroy(net);
  free(x);
  free(w);
  free(b);
  free(y);
  return t;
}

#ifdef BENCH_ONEDNN
/* oneDNN: layouts chosen by the library (format any), weights reordered ahead. */
static double bench_onednn(const shape *s, int repeats) {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_engine_create(&engine, dnnl_cpu, 0);
  dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
  dnnl_memory_desc_t src, wei, bias, dst;
  dnnl_primitive_desc_t pd;
  int64_t o = out_size(s);
  if (s->conv) {
    dnnl_dims_t sd = {1, s->c, s->h, s->w}, dd = {1, s->m, o, o}, bd = {s->m};
    dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&bias, 1, bd, dnnl_f32, dnnl_x);
    if (s->group > 1) {
      dnnl_dims_t wd = {s->group, s->m / s->group, s->c / s->group, s->k, s->k};
      dnnl_memory_desc_init_by_tag(&wei, 5, wd, dnnl_f32, dnnl_format_tag_any);
    } else {
      dnnl_dims_t wd = {s->m, s->c, s->k, s->k};
      dnnl_memory_desc_init_by_tag(&wei, 4, wd, dnnl_f32, dnnl_format_tag_any);
    }
    dnnl_dims_t strides = {s->stride, s->stride}, pads = {s->pad, s->pad};
    dnnl_convolution_desc_t cd;
    dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src,
                                       &wei, &bias, &dst, strides, pads, pads);
    if (dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL) != dnnl_success) return -1;
  } else {
    dnnl_dims_t sd = {s->mm_m, s->mm_k}, wd = {s->mm_k, s->mm_n}, dd = {s->mm_m, s->mm_n};
    dnnl_memory_desc_init_by_tag(&src, 2, sd, dnnl_f32, dnnl_ab);
    dnnl_memory_desc_init_by_tag(&wei, 2, wd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&dst, 2, dd, dnnl_f32, dnnl_ab);
    dnnl_matmul_desc_t md;
    dnnl_matmul_desc_init(&md, &src, &wei, NULL, &dst);
    if (dnnl_primitive_desc_create(&pd, &md, NULL, engine, NULL) != dnnl_success) return -1;
  }
  const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  dnnl_memory_t ms, mw, mb = NULL, md_;
  dnnl_memory_create(&ms, smd, engine, DNNL_MEMORY_ALLOCATE);
  dnnl_memory_create(&mw, wmd, engine, DNNL_MEMORY_ALLOCATE);
  dnnl_memory_create(&md_, dmd, engine, DNNL_MEMORY_ALLOCATE);
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, md_}};
  int nargs = 3;
  if (s->conv) {
    dnnl_memory_create(&mb, &bias, engine, DNNL_MEMORY_ALLOCATE);
    args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mb};
  }
  dnnl_primitive_t prim;
  dnnl_primitive_create(&prim, pd);
  double t = TIME_MEDIAN(
      repeats, (dnnl_primitive_execute(prim, stream, nargs, args), dnnl_stream_wait(stream)));
  dnnl_primitive_destroy(prim);
  dnnl_primitive_desc_destroy(pd);
  dnnl_memory_destroy(ms);
  dnnl_memory_destroy(mw);
  dnnl_memory_destroy(md_);
  if (mb) dnnl_memory_destroy(mb);
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
  return t;
}
#endif

#ifdef BENCH_XNNPACK
/* XNNPACK: NHWC convolution / fully connected, weights packed at creation. */
static double bench_xnnpack(const shape *s, int repeats, pthreadpool_t pool) {
  xnn_operator_t op = NULL;
  int64_t o = out_size(s);
  float *x, *w, *b, *y;
  double t = -1;
  if (s->conv) {
    size_t cg = (size_t)(s->c / s->group), mg = (size_t)(s->m / s->group);
    x = filled((size_t)(s->c * s->h * s->w));
    w = filled((size_t)(s->m * (s->c / s->group) * s->k * s->k));
    b = filled((size_t)s->m);
    y = malloc((size_t)(s->m * o * o) * sizeof(float));
    if (xnn_create_convolution2d_nhwc_f32((uint32_t)s->pad, (uint32_t)s->pad, (uint32_t)s->pad,
                                          (uint32_t)s->pad, (uint32_t)s->k, (uint32_t)s->k,
                                          (uint32_t)s->stride, (uint32_t)s->stride, 1, 1,
                                          (uint32_t)s->group, cg, mg, (size_t)s->c, (size_t)s->m, w,
                                          b, -INFINITY, INFINITY, 0, &op) == xnn_status_success &&
        xnn_setup_convolution2d_nhwc_f32(op, 1, (size_t)s->h, (size_t)s->w, x, y, pool) ==
            xnn_status_success)
      t = TIME_MEDIAN(repeats, xnn_run_operator(op, pool));
  } else {
    x = filled((size_t)(s->mm_m * s->mm_k));
    w = filled((size_t)(s->mm_k * s->mm_n));
    b = NULL;
    y = malloc((size_t)(s->mm_m * s->mm_n) * sizeof(float));
    if (xnn_create_fully_connected_nc_f32((size_t)s->mm_k, (size_t)s->mm_n, (size_t)s->mm_k,
                                          (size_t)s->mm_n, w, NULL, -INFINITY, INFINITY,
                                          XNN_FLAG_TRANSPOSE_WEIGHTS, &op) == xnn_status_success &&
        xnn_setup_fully_connected_nc_f32(op, (size_t)s->mm_m, x, y, pool) == xnn_status_success)
      t = TIME_MEDIAN(repeats, xnn_run_operator(op, pool));
  }
  if (op) xnn_delete_operator(op);
  free(x);
  free(w);
  free(b);
  free(y);
  return t;
}
#endif

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int repeats = argc > 2 ? atoi(argv[2]) : 9;
  if (threads < 1 || repeats < 1 || repeats > 63) {
    fprintf(stderr, "usage: cpu_kernels THREADS [REPEATS (1-63)]\n");
    return 2;
  }
  etrt_thread_pool_acquire(threads);
  if (threads == 1) bench_clock = CLOCK_PROCESS_CPUTIME_ID;
#ifdef BENCH_ONEDNN
  omp_set_num_threads(threads);
#endif
#ifdef BENCH_XNNPACK
  xnn_initialize(NULL);
  pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
#endif
  printf("%s time, median of %d\n", threads == 1 ? "CPU" : "wall", repeats);
  printf("%-36s %8s %10s %10s %10s\n", "shape", "threads", "etrt ms", "onednn ms", "xnnpack ms");
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
    const shape *s = &shapes[i];
    double e = bench_etrt(s, repeats), d = -1, x = -1;
#ifdef BENCH_ONEDNN
    d = bench_onednn(s, repeats);
#endif
#ifdef BENCH_XNNPACK
    x = bench_xnnpack(s, repeats, pool);
#endif
    printf("%-36s %8d %10.3f %10.3f %10.3f\n", s->name, threads, e, d, x);
    fflush(stdout);
  }
#ifdef BENCH_XNNPACK
  if (pool) pthreadpool_destroy(pool);
#endif
  etrt_thread_pool_release();
  return 0;
}
