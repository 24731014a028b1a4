/* One convolution's entry in a plan's tuning record (plan_format.h), in a header of
 * its own so that the CUDA kernels (op.h's etrt_cuda_launch) can read and fill it
 * without the C-only graph headers. */
#ifndef ETRT_ENGINE_PLAN_CHOICE_H
#define ETRT_ENGINE_PLAN_CHOICE_H

#include <stdint.h>

/* One convolution's timed choice: cuDNN's forward algorithm and math type and the
 * scratch it needs on the shapes it was timed on. */
typedef struct etrt_plan_conv_choice {
  uint32_t node;
  uint32_t algorithm;
  uint32_t math;
  uint64_t scratch_bytes;
} etrt_plan_conv_choice;

#endif
