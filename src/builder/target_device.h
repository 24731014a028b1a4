/* The target_device compile spec of an engine delegate (DESIGN.md section 4): AOT
 * metadata, never read at run time (the plan's device is the truth). */
#ifndef ETRT_BUILDER_TARGET_DEVICE_H
#define ETRT_BUILDER_TARGET_DEVICE_H

#include <stddef.h>

#include "etrt/types.h"

/* Writes the label of a partition whose plan was built for `device` (the device its
 * etrt_plan_options named, which the plan records as given) into out (at least 32
 * bytes):
 *  - "cpu" for a CPU plan, whatever the user asked;
 *  - a user's explicit target (non-NULL `user_target`), verbatim, for a GPU plan;
 *  - else "cuda:N" for a CUDA plan, "cuda:0" for any other device (the seed's
 *    fallback). */
void etrt_target_device_label(etrt_device device, const char *user_target, char *out,
                              size_t out_size);

#endif
