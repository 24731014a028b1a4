/* Build-time tuning of a plan's cuDNN convolutions (plan_tune.h). The timing itself is
 * the context creation of the CUDA executor in tuning mode (executor_cuda.c, the
 * convolution setup in ops/cuda/conv.cu): this file only makes that context and turns
 * what it chose into the plan's record. */
#include "engine/plan_tune.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"
#include "device/device_scope.h"
#include "engine/engine_internal.h"

uint32_t etrt_plan_tuning_cudnn_major(uint32_t version) {
  return version >= 90000 ? version / 10000 : version / 1000;
}

int etrt_plan_tuning_matches(const etrt_plan_tuning *tuning, const char *gpu, int major, int minor,
                             uint32_t cudnn_version) {
  return tuning != NULL && tuning->present && gpu != NULL && strcmp(tuning->gpu, gpu) == 0 &&
         tuning->compute_major == major && tuning->compute_minor == minor && cudnn_version > 0 &&
         etrt_plan_tuning_cudnn_major(tuning->cudnn_version) ==
             etrt_plan_tuning_cudnn_major(cudnn_version);
}

const etrt_plan_conv_choice *etrt_plan_tuning_find(const etrt_plan_tuning *tuning, uint32_t node) {
  if (tuning == NULL || !tuning->present) return NULL;
  uint32_t lo = 0, hi = tuning->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (tuning->choices[mid].node < node)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < tuning->count && tuning->choices[lo].node == node ? &tuning->choices[lo] : NULL;
}

#ifdef ETRT_HAVE_CUDA
etrt_status etrt_plan_tune(const uint8_t *plan, size_t size, const etrt_device_driver *driver,
                           uint8_t **out, size_t *out_size, uint32_t *count) {
  *out = NULL;
  *out_size = 0;
  *count = 0;
  if (driver == NULL || strcmp(driver->name, "cuda") != 0)
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT, "tuning: convolutions are timed on a real GPU");
  etrt_engine *engine = NULL;
  ETRT_RETURN_IF_ERROR(etrt_engine_deserialize(plan, size, &engine));
  int device = engine->info.device.index;
  /* A plan without convolutions (a transformer's) needs no context made for it. */
  bool convolutions = false;
  for (uint32_t n = 0; n < engine->graph.node_count && !convolutions; ++n)
    convolutions = strcmp(engine->graph.nodes[n].op_type, "Conv") == 0 ||
                   strcmp(engine->graph.nodes[n].op_type, "EtrtFusedConv") == 0;
  etrt_plan_tuning_sink sink = {0};
  sink.choices =
      calloc(engine->graph.node_count > 0 ? engine->graph.node_count : 1, sizeof *sink.choices);
  etrt_status s = sink.choices == NULL
                      ? etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "tuning: out of memory")
                      : ETRT_OK;
  etrt_device_attributes attributes;
  if (s == ETRT_OK) s = driver->attributes(device, &attributes);
  if (s == ETRT_OK && convolutions) {
    /* The context is made on the plan's device (contract rule 2), the caller's put back. */
    etrt_device_scope scope;
    s = etrt_device_scope_enter(driver, device, &scope);
    if (s == ETRT_OK) {
      engine->tuning_sink = &sink;
      etrt_exec_context *context = NULL;
      s = etrt_exec_context_create(engine, driver, &context);
      etrt_exec_context_destroy(context);
      engine->tuning_sink = NULL;
      s = etrt_device_scope_exit(&scope, s);
    }
  }
  if (s == ETRT_OK && sink.count > 0 && sink.cudnn_version != 0) {
    etrt_plan_tuning tuning = {.present = 1,
                               .compute_major = attributes.compute_major,
                               .compute_minor = attributes.compute_minor,
                               .cudnn_version = sink.cudnn_version,
                               .count = sink.count,
                               .choices = sink.choices};
    snprintf(tuning.gpu, sizeof tuning.gpu, "%s", attributes.name);
    s = etrt_plan_tuning_attach(plan, size, &tuning, out, out_size);
    if (s == ETRT_OK) *count = sink.count;
  }
  free(sink.choices);
  etrt_engine_destroy(engine);
  if (s != ETRT_OK) etrt_error_context(s, "timing the convolutions on cuda:%d: ", device);
  return s;
}
#else
etrt_status etrt_plan_tune(const uint8_t *plan, size_t size, const etrt_device_driver *driver,
                           uint8_t **out, size_t *out_size, uint32_t *count) {
  (void)plan;
  (void)size;
  (void)driver;
  *out = NULL;
  *out_size = 0;
  *count = 0;
  return etrt_error(ETRT_ERROR_UNSUPPORTED, "tuning: this build has no CUDA");
}
#endif
