#include "builder/target_device.h"

#include <stdio.h>

#include "engine/engine.h"

void etrt_target_device_derive(const uint8_t *plan, size_t plan_size, const char *user_target,
                               char *out, size_t out_size) {
  etrt_engine *engine = NULL;
  if (plan == NULL || etrt_engine_deserialize(plan, plan_size, &engine) != ETRT_OK) {
    /* The failure is not the caller's error: the label falls back as the seed does. */
    etrt_clear_error();
    snprintf(out, out_size, "%s", user_target ? user_target : "cuda:0");
    return;
  }
  etrt_device device = etrt_engine_device(engine);
  etrt_engine_destroy(engine);
  if (device.type == ETRT_DEVICE_CPU) {
    snprintf(out, out_size, "cpu");
  } else if (user_target != NULL) {
    snprintf(out, out_size, "%s", user_target);
  } else if (device.type == ETRT_DEVICE_CUDA && device.index >= 0) {
    snprintf(out, out_size, "cuda:%d", (int)device.index);
  } else {
    snprintf(out, out_size, "cuda:0");
  }
}
