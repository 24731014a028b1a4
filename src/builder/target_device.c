#include "builder/target_device.h"

#include <stdio.h>

void etrt_target_device_label(etrt_device device, const char *user_target, char *out,
                              size_t out_size) {
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
