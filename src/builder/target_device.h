/* The target_device compile spec of an engine delegate (DESIGN.md section 4): AOT
 * metadata, never read at run time (the plan's device is the truth). */
#ifndef ETRT_BUILDER_TARGET_DEVICE_H
#define ETRT_BUILDER_TARGET_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "etrt/types.h"

/* Writes the label of a partition whose plan is `plan` into out (at least 32 bytes):
 *  - a user's explicit target (non-NULL `user_target`), verbatim, for a GPU plan;
 *  - else derived from the plan's own device as the engine reads it back: "cuda:N"
 *    for a CUDA plan, "cpu" for a CPU plan;
 *  - "cuda:0" when the plan cannot be read (the seed's fallback).
 * The derivation deserializes the plan with the engine itself, so the label cannot
 * drift from the device the runtime will use. */
void etrt_target_device_derive(const uint8_t *plan, size_t plan_size, const char *user_target,
                               char *out, size_t out_size);

#endif
