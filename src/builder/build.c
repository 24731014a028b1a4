/* etrt_build_*: the whole ahead-of-time pipeline. ONNX bytes -> IR (import) ->
 * values and bounds of the inputs -> shape inference -> passes -> partitions -> one plan
 * per partition -> target_device labels -> .pte. */
#include "etrt/build.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/file.h"
#include "base/status.h"
#include "builder/emit.h"
#include "builder/import.h"
#include "builder/lower.h"
#include "builder/onnx_model.h"
#include "builder/partition.h"
#include "builder/passes.h"
#include "builder/shape_spec.h"
#include "builder/shape_values.h"
#include "builder/target_device.h"
#include "device/device.h"
#include "engine/plan_tune.h"
#include "base/log.h"

void etrt_build_options_init(etrt_build_options *options) { memset(options, 0, sizeof *options); }

typedef struct etrt_build {
  const etrt_build_options *options;
  etrt_device device;
  etrt_partition_placement *placements;
  struct timespec started;
} etrt_build;

static double etrt_build_seconds(struct timespec *since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double s = (double)(now.tv_sec - since->tv_sec) + (double)(now.tv_nsec - since->tv_nsec) * 1e-9;
  *since = now;
  return s;
}

static void etrt_build_progress(etrt_build *b, const char *fmt, ...) ETRT_PRINTF(2, 3);
static void etrt_build_progress(etrt_build *b, const char *fmt, ...) {
  if (b->options->progress == NULL) return;
  char line[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  b->options->progress(line, b->options->progress_user);
}

static const char *etrt_build_size(size_t bytes, char *buf, size_t size) {
  if (bytes >= (size_t)1 << 20)
    snprintf(buf, size, "%.1f MB", (double)bytes / (1 << 20));
  else if (bytes >= 1024)
    snprintf(buf, size, "%.1f KB", (double)bytes / 1024);
  else
    snprintf(buf, size, "%zu B", bytes);
  return buf;
}

/* Checks every option before any work, so that a bad flag is refused at once. */
static etrt_status etrt_build_check_options(etrt_build *b) {
  const etrt_build_options *o = b->options;
  if (o->device != NULL) {
    if (etrt_device_parse(o->device, &b->device) != 0)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "device '%s': expected cpu or cuda:N",
                        o->device);
  } else {
    b->device = etrt_device_driver_get() != NULL ? (etrt_device){ETRT_DEVICE_CUDA, 0}
                                                 : (etrt_device){ETRT_DEVICE_CPU, 0};
  }
  etrt_device parsed;
  if (o->target_device != NULL && etrt_device_parse(o->target_device, &parsed) != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "target device '%s': expected cpu or cuda:N",
                      o->target_device);
  if (o->precision < ETRT_PRECISION_FP32 || o->precision > ETRT_PRECISION_BF16)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "precision %d is not fp32, tf32, fp16 or bf16",
                      (int)o->precision);
  if (o->num_shapes && o->shapes == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "shapes: NULL array with %u entries",
                      o->num_shapes);
  for (uint32_t i = 0; i < o->num_shapes; ++i) {
    if (o->shapes[i] == NULL) return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "shape %u is NULL", i);
    ETRT_RETURN_IF_ERROR(etrt_shape_spec_check(o->shapes[i]));
  }
  if (o->num_shape_values && o->shape_values == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "shape values: NULL array with %u entries",
                      o->num_shape_values);
  for (uint32_t i = 0; i < o->num_shape_values; ++i) {
    if (o->shape_values[i] == NULL)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "shape values %u is NULL", i);
    ETRT_RETURN_IF_ERROR(etrt_shape_value_spec_check(o->shape_values[i]));
  }
  if (o->num_sequences && o->sequences == NULL)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sequences: NULL array with %u entries",
                      o->num_sequences);
  for (uint32_t i = 0; i < o->num_sequences; ++i)
    if (o->sequences[i] == NULL)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "sequence %u is NULL", i);
  if (o->num_placements) {
    if (o->placements == NULL)
      return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "placements: NULL array with %u entries",
                        o->num_placements);
    b->placements = calloc(o->num_placements, sizeof *b->placements);
    if (b->placements == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "build: out of memory");
    for (uint32_t i = 0; i < o->num_placements; ++i) {
      const etrt_build_placement *p = &o->placements[i];
      if (p->node == NULL || p->device == NULL ||
          etrt_device_parse(p->device, &b->placements[i].device) != 0)
        return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                          "placement %u ('%s' on '%s'): expected a node name and cpu or cuda:N", i,
                          p->node ? p->node : "(null)", p->device ? p->device : "(null)");
      b->placements[i].node = p->node;
    }
  }
  return ETRT_OK;
}

/* Import, shapes and passes. */
static etrt_status etrt_build_graph(etrt_build *b, const etrt_onnx_model *model,
                                    etrt_ir_graph **out) {
  etrt_import_options import = {.sequences = b->options->sequences,
                                .num_sequences = b->options->num_sequences,
                                .shape_values = b->options->shape_values,
                                .num_shape_values = b->options->num_shape_values};
  ETRT_RETURN_IF_ERROR(etrt_import_onnx_options(model, &import, out));
  etrt_ir_graph *g = *out;
  /* Values first: they fix the sizes of the inputs they are given for. */
  ETRT_RETURN_IF_ERROR(
      etrt_shape_values_apply(g, b->options->shape_values, b->options->num_shape_values));
  ETRT_RETURN_IF_ERROR(etrt_shape_specs_apply(g, b->options->shapes, b->options->num_shapes));
  etrt_pass_stats stats;
  ETRT_RETURN_IF_ERROR(etrt_passes_run(g, b->options->fold_limit_bytes, &stats));
  /* Every activation only where no node may land on a GPU (whose kernels fuse Relu). */
  bool whole_cpu = b->device.type == ETRT_DEVICE_CPU && b->options->num_placements == 0;
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_conv(g, whole_cpu, &stats.convs));
  /* Residual Add + LayerNormalization as one node, on every executor: the sum is read
   * once instead of written by the Add and read back. Attention as one node where its
   * tensor-core kernel runs it: a GPU target with a half precision, and no placement
   * pinning a node (in float32 cuBLASLt's products beat the fused warp kernel, and the
   * CPU runs them through its GEMM library). ETRT_FUSE_ATTENTION=0 keeps the chain, to
   * measure one against the other. The Q, K and V projections of an attention it fuses
   * become one GEMM over the three weights side by side (one launch instead of three);
   * ETRT_PACK_QKV=0 keeps them apart. */
  ETRT_RETURN_IF_ERROR(etrt_pass_fuse_add_layer_norm(g, &stats.add_norms));
  const char *fuse_attention = getenv("ETRT_FUSE_ATTENTION");
  bool half =
      b->options->precision == ETRT_PRECISION_FP16 || b->options->precision == ETRT_PRECISION_BF16;
  const char *pack_env = getenv("ETRT_PACK_QKV");
  bool pack_qkv = pack_env == NULL || strcmp(pack_env, "0") != 0;
  if (b->device.type == ETRT_DEVICE_CUDA && half && b->options->num_placements == 0 &&
      (fuse_attention == NULL || strcmp(fuse_attention, "0") != 0))
    ETRT_RETURN_IF_ERROR(
        etrt_pass_fuse_attention(g, pack_qkv, &stats.attentions, &stats.qkv_packs));
  /* A Relu or Gelu after a linear layer rides in the GEMM's epilogue where cuBLASLt runs
   * it: a GPU target, no placement. cuBLASLt's GELU is the tanh form, at most 4.8e-4
   * from the exact one (at x = 2.7: under half a float16 step of the result there), so
   * half plans take it for an exact Gelu too; float32 plans keep the exact Gelu.
   * ETRT_FUSE_GEMM_ACTIVATION=0 keeps them apart, to measure one against the other. */
  const char *fuse_activation = getenv("ETRT_FUSE_GEMM_ACTIVATION");
  if (b->device.type == ETRT_DEVICE_CUDA && b->options->num_placements == 0 &&
      (fuse_activation == NULL || strcmp(fuse_activation, "0") != 0))
    ETRT_RETURN_IF_ERROR(etrt_pass_fuse_gemm_activation(g, half, &stats.gemm_activations));
  if (stats.add_norms + stats.attentions + stats.gemm_activations > 0) {
    uint32_t dead = 0;
    ETRT_RETURN_IF_ERROR(etrt_pass_eliminate_dead(g, &dead));
    stats.dead += dead;
  }
  /* Channels-last regions where the target is a GPU (cuDNN's NHWC kernels); a node that
   * a placement keeps on the CPU still computes right (the CPU kernels take the layout).
   * ETRT_CHANNELS_LAST=0 keeps NCHW, to measure one against the other. */
  etrt_pass_channels_last_stats layout = {0};
  const char *env = getenv("ETRT_CHANNELS_LAST");
  bool channels_last = env == NULL || strcmp(env, "0") != 0;
  if (b->device.type == ETRT_DEVICE_CUDA && channels_last) {
    ETRT_RETURN_IF_ERROR(etrt_pass_channels_last(g, &layout));
    /* The dims the pass wrote are checked against the engine's own inference. */
    if (layout.members > 0) ETRT_RETURN_IF_ERROR(etrt_lower_infer_shapes(g));
  }
  etrt_build_progress(
      b,
      "shapes and passes: %u identities dropped, %u Ifs folded, %u QDQ groups made integer, %u "
      "nodes folded, %u batch norms folded, %u scales and shifts folded, %u GEMMs fused, %u "
      "convolutions fused, %u GELUs fused, %u HardSwishes fused, %u residual LayerNorms fused, %u "
      "attentions fused, %u Q/K/V projections packed, %u activations fused into GEMMs, %u dead "
      "nodes removed: %u nodes left (%.2f s)",
      stats.identities, stats.ifs, stats.qdq, stats.folded, stats.batchnorms, stats.scales,
      stats.gemms, stats.convs, stats.gelus, stats.hardswishes, stats.add_norms, stats.attentions,
      stats.qkv_packs, stats.gemm_activations, stats.dead, etrt_ir_live_node_count(g),
      etrt_build_seconds(&b->started));
  if (b->device.type == ETRT_DEVICE_CUDA && channels_last)
    etrt_build_progress(b,
                        "layouts: %u nodes channels-last (%u nodes in %u NHWC regions), %u layout "
                        "conversions (Transposes), %u free reshapes at 1x1 exits",
                        layout.nodes, layout.members, layout.regions, layout.transposes,
                        layout.reshapes);
  return ETRT_OK;
}

/* True when plan `k`'s convolutions are timed now: a GPU partition whose device is a
 * real GPU present here (never a simulated one, a CPU target or a cross-build), unless
 * --no-tune or ETRT_CONV_TUNE=0 says not to. */
static bool etrt_build_tunes(const etrt_build *b, etrt_device device,
                             const etrt_device_driver *driver) {
  const char *env = getenv("ETRT_CONV_TUNE");
  return device.type == ETRT_DEVICE_CUDA && !b->options->no_tune &&
         (env == NULL || strcmp(env, "0") != 0) && driver != NULL &&
         strcmp(driver->name, "cuda") == 0 && device.index < driver->device_count();
}

/* Replaces plan `k` by a copy carrying its convolutions' timed choices (plan_tune.h).
 * A failure to time them leaves the plan as it was, with a warning: its contexts then
 * time them when created, as without a record. */
static etrt_status etrt_build_tune_plan(etrt_build *b, uint32_t k, const etrt_device_driver *driver,
                                        etrt_emit_partition *plan) {
  struct timespec started;
  clock_gettime(CLOCK_MONOTONIC, &started);
  uint8_t *tuned = NULL;
  size_t tuned_size = 0;
  uint32_t count = 0;
  etrt_status s = etrt_plan_tune(plan->plan, plan->plan_size, driver, &tuned, &tuned_size, &count);
  if (s != ETRT_OK) {
    etrt_log(ETRT_LOG_WARN, "plan %u: convolutions not tuned: %s", k, etrt_last_error());
    etrt_build_progress(b, "plan %u: convolutions not tuned: %s", k, etrt_last_error());
    etrt_clear_error();
    return ETRT_OK;
  }
  if (tuned == NULL) return ETRT_OK; /* nothing to record: the plan stays as it is */
  free((void *)plan->plan);
  plan->plan = tuned;
  plan->plan_size = tuned_size;
  etrt_build_progress(b, "plan %u: tuned %u convolutions in %.1f s", k, count,
                      etrt_build_seconds(&started));
  return ETRT_OK;
}

static etrt_status etrt_build_program(etrt_build *b, const etrt_ir_graph *g, uint8_t **pte,
                                      size_t *pte_size) {
  etrt_partition_options popts = {.target = b->device,
                                  .placements = b->placements,
                                  .num_placements = b->options->num_placements};
  etrt_partitioning *parts = NULL;
  ETRT_RETURN_IF_ERROR(etrt_partition_graph(g, &popts, &parts));
  char line[1024];
  for (uint32_t k = 0; k < parts->count; ++k) {
    etrt_partition_describe(g, &parts->parts[k], k, line, sizeof line);
    etrt_build_progress(b, "%s", line);
  }
  etrt_status status = ETRT_OK;
  etrt_emit_partition *plans = calloc((size_t)parts->count + 1, sizeof *plans);
  char(*labels)[32] = calloc((size_t)parts->count + 1, sizeof *labels);
  if (plans == NULL || labels == NULL) {
    status = etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "build: out of memory");
    goto done;
  }
  for (uint32_t k = 0; k < parts->count && status == ETRT_OK; ++k) {
    char name[32], device[32], size[32];
    snprintf(name, sizeof name, "partition_%u", k);
    etrt_plan_options plan_options = {
        .device = parts->parts[k].device, .precision = b->options->precision, .name = name};
    /* Building for a GPU that is here records its compute capability; for one that
     * is not (cross-building) the engine records its default. */
    const etrt_device_driver *driver = etrt_device_driver_get();
    etrt_device_attributes attributes;
    if (plan_options.device.type == ETRT_DEVICE_CUDA && driver != NULL &&
        plan_options.device.index < driver->device_count() &&
        driver->attributes(plan_options.device.index, &attributes) == ETRT_OK) {
      plan_options.compute_major = attributes.compute_major;
      plan_options.compute_minor = attributes.compute_minor;
    }
    etrt_clear_error();
    uint8_t *plan = NULL;
    size_t plan_size = 0;
    etrt_lower_half_stats half;
    status =
        etrt_lower_partition_plan(g, &parts->parts[k], &plan_options, &half, &plan, &plan_size);
    if (status != ETRT_OK) {
      status =
          etrt_error_context(status, "partition %u (%s): ", k,
                             etrt_device_format(parts->parts[k].device, device, sizeof device));
      break;
    }
    plans[k].plan = plan;
    plans[k].plan_size = plan_size;
    if (etrt_build_tunes(b, plan_options.device, driver)) {
      status = etrt_build_tune_plan(b, k, driver, &plans[k]);
      if (status != ETRT_OK) break;
      plan_size = plans[k].plan_size;
    }
    /* The label comes from the options the plan was just built with (the plan records
     * that device as given): nothing is read back from the plan's bytes. */
    etrt_target_device_label(plan_options.device, b->options->target_device, labels[k],
                             sizeof labels[k]);
    plans[k].target_device = labels[k];
    if (etrt_lower_half_type(&plan_options) != ETRT_DTYPE_INVALID)
      etrt_build_progress(b,
                          "plan %u in %s: %u nodes in %s, %u kept float32, %u constants "
                          "converted, %u casts",
                          k, b->options->precision == ETRT_PRECISION_FP16 ? "fp16" : "bf16",
                          half.half_nodes,
                          b->options->precision == ETRT_PRECISION_FP16 ? "float16" : "bfloat16",
                          half.float_nodes, half.constants, half.casts);
    etrt_build_progress(b, "plan %u %s: %s, %u inputs, %u outputs, target_device %s (%.2f s)", k,
                        etrt_device_format(parts->parts[k].device, device, sizeof device),
                        etrt_build_size(plan_size, size, sizeof size), parts->parts[k].num_inputs,
                        parts->parts[k].num_outputs, labels[k], etrt_build_seconds(&b->started));
  }
  if (status == ETRT_OK) {
    etrt_emit_options eopts = {.io_on_device = b->options->io_on_device != 0};
    etrt_emit_stats stats;
    status = etrt_emit_program(g, parts, plans, &eopts, pte, pte_size, &stats);
    if (status == ETRT_OK) {
      char host[32], dev[32];
      etrt_build_progress(b,
                          "program: %u delegates, %u tensors, %u instructions (%u host-to-device, "
                          "%u device-to-host copies), arenas: host %s, device %s",
                          parts->count, stats.values, stats.instructions, stats.h2d_copies,
                          stats.d2h_copies,
                          etrt_build_size(stats.host_arena_bytes, host, sizeof host),
                          etrt_build_size(stats.device_arena_bytes, dev, sizeof dev));
    }
  }
done:
  if (plans != NULL)
    for (uint32_t k = 0; k < parts->count; ++k) free((void *)plans[k].plan);
  free(plans);
  free(labels);
  etrt_partitioning_destroy(parts);
  return status;
}

static etrt_status etrt_build_model(etrt_build *b, const etrt_onnx_model *model, uint8_t **pte,
                                    size_t *pte_size) {
  etrt_ir_graph *graph = NULL;
  etrt_status status = etrt_build_graph(b, model, &graph);
  if (status == ETRT_OK) status = etrt_build_program(b, graph, pte, pte_size);
  etrt_ir_graph_destroy(graph);
  return status;
}

static void etrt_build_report_model(etrt_build *b, const char *what, size_t bytes,
                                    const etrt_onnx_model *model) {
  const etrt_onnx_graph *g = etrt_onnx_model_graph(model);
  char size[32];
  etrt_build_progress(b, "reading %s: %s, %zu nodes, %zu initializers, opset %lld (%.2f s)", what,
                      etrt_build_size(bytes, size, sizeof size), g->node_count,
                      g->initializer_count, (long long)etrt_onnx_model_opset(model, ""),
                      etrt_build_seconds(&b->started));
}

/* Starts a build with `options` (NULL: the defaults, written into *defaults) and
 * checks them. */
static etrt_status etrt_build_begin(etrt_build *b, const etrt_build_options *options,
                                    etrt_build_options *defaults) {
  etrt_build_options_init(defaults);
  memset(b, 0, sizeof *b);
  b->options = options ? options : defaults;
  clock_gettime(CLOCK_MONOTONIC, &b->started);
  return etrt_build_check_options(b);
}

etrt_status etrt_build_onnx_memory(const void *onnx, size_t onnx_size,
                                   const etrt_build_options *options, uint8_t **pte,
                                   size_t *pte_size) {
  *pte = NULL;
  *pte_size = 0;
  etrt_build_options defaults;
  etrt_build b;
  etrt_status status = etrt_build_begin(&b, options, &defaults);
  etrt_onnx_model *model = NULL;
  if (status == ETRT_OK) status = etrt_onnx_model_parse(onnx, onnx_size, NULL, &model);
  if (status == ETRT_OK) {
    etrt_build_report_model(&b, "model", onnx_size, model);
    status = etrt_build_model(&b, model, pte, pte_size);
  }
  etrt_onnx_model_free(model);
  free(b.placements);
  return status;
}

etrt_status etrt_build_onnx_file(const char *onnx_path, const etrt_build_options *options,
                                 const char *pte_path) {
  etrt_build_options defaults;
  etrt_build b;
  etrt_status status = etrt_build_begin(&b, options, &defaults);
  etrt_onnx_model *model = NULL;
  uint8_t *pte = NULL;
  size_t pte_size = 0;
  /* A missing model is the caller's mistake (bad input), not an I/O failure. */
  struct stat st;
  if (status == ETRT_OK && stat(onnx_path, &st) != 0 && errno == ENOENT)
    status = etrt_error(ETRT_ERROR_NOT_FOUND, "model '%s': no such file", onnx_path);
  if (status == ETRT_OK) status = etrt_onnx_model_load_file(onnx_path, &model);
  if (status == ETRT_OK) {
    const etrt_onnx_graph *g = etrt_onnx_model_graph(model);
    etrt_build_report_model(&b, onnx_path, g->size, model);
    status = etrt_build_model(&b, model, &pte, &pte_size);
  }
  /* The model's bytes are views into the mapping: free only after the program is
   * written (the plans copied what they need, but keep the order obvious). */
  if (status == ETRT_OK) {
    status = etrt_file_write_atomic(pte_path, pte, pte_size);
    if (status == ETRT_OK) {
      char size[32];
      etrt_build_progress(&b, "writing %s: %s (%.2f s)", pte_path,
                          etrt_build_size(pte_size, size, sizeof size),
                          etrt_build_seconds(&b.started));
    }
  }
  free(pte);
  etrt_onnx_model_free(model);
  free(b.placements);
  return status;
}
