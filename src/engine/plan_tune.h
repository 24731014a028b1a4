/* Build-time choice of the cuDNN convolution algorithms: a plan's convolutions timed
 * on the GPU it is built for and recorded in it (plan_format.h, the tuning record),
 * and the rule by which a context on some GPU decides to use that record. */
#ifndef ETRT_ENGINE_PLAN_TUNE_H
#define ETRT_ENGINE_PLAN_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "device/device.h"
#include "engine/plan_format.h"

/* The major version in a cudnnGetVersion number (major * 10000 + ... from cuDNN 9,
 * major * 1000 + ... before). */
uint32_t etrt_plan_tuning_cudnn_major(uint32_t version);

/* 1 when `tuning` is present and was timed on a GPU of this name and compute capability
 * under a cuDNN of the same major version as `cudnn_version`. */
int etrt_plan_tuning_matches(const etrt_plan_tuning *tuning, const char *gpu, int major, int minor,
                             uint32_t cudnn_version);

/* The recorded choice of node `node`, or NULL (the choices are sorted by node). */
const etrt_plan_conv_choice *etrt_plan_tuning_find(const etrt_plan_tuning *tuning, uint32_t node);

/* Collects what a CUDA context made in tuning mode chose (executor_cuda.c): one entry
 * per timed convolution, in node order, and the cuDNN version they were timed under. */
typedef struct etrt_plan_tuning_sink {
  etrt_plan_conv_choice *choices; /* room for every node of the plan */
  uint32_t count;
  uint32_t cudnn_version; /* 0: cuDNN did not load */
} etrt_plan_tuning_sink;

/* Times the cuDNN convolutions of `plan` (a cuda plan without a record) on its device,
 * through `driver` (the real CUDA one), by creating a context in tuning mode, and
 * returns in *out (malloc'd) a copy of the plan carrying the choices, with *count the
 * number recorded. A plan with no convolution cuDNN takes needs no record: *out stays
 * NULL and *count 0, and the plan is the caller's to keep (no context is made where it
 * has no Conv at all; a transformer's plan is not copied for nothing). ETRT_ERROR_UNSUPPORTED in a
 * build without CUDA. */
etrt_status etrt_plan_tune(const uint8_t *plan, size_t size, const etrt_device_driver *driver,
                           uint8_t **out, size_t *out_size, uint32_t *count);

#endif
