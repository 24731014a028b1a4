/* etrt's kernels on channel-blocked values (see cpu_blocked.h). */
#include "engine/cpu_blocked.h"

#include "base/thread_pool.h"

/* The work of one kernel, split over the pool by channel block: block p of the whole
 * tensor is image p / (channels / block), channels block * (p % (channels / block)) on. */
typedef struct etrt_blocked_job {
  const float *x, *scale;
  float *y;
  int64_t channels, hw, block, scale_batch;
} etrt_blocked_job;

/* Grain of the split: a block's [H, W, B] run is the work of one step. */
static int64_t etrt_blocked_grain(int64_t hw, int64_t block) { return 1 + 32768 / (hw * block); }

/* The loops with the block a constant once inlined (8 or 16), so that they vectorize. */
static inline __attribute__((always_inline)) void etrt_blocked_average(const etrt_blocked_job *j,
                                                                       int64_t begin, int64_t end,
                                                                       const int64_t b) {
  const int64_t per_image = j->channels / b;
  const float inverse = 1.0f / (float)j->hw;
  for (int64_t p = begin; p < end; ++p) {
    const float *x = j->x + p * j->hw * b;
    float sum[16] = {0};
    for (int64_t i = 0; i < j->hw; ++i)
      for (int64_t l = 0; l < b; ++l) sum[l] += x[i * b + l];
    float *y = j->y + (p / per_image) * j->channels + (p % per_image) * b;
    for (int64_t l = 0; l < b; ++l) y[l] = sum[l] * inverse;
  }
}

static void etrt_blocked_average_range(void *ctx, int64_t begin, int64_t end) {
  const etrt_blocked_job *j = ctx;
  if (j->block == 8)
    etrt_blocked_average(j, begin, end, 8);
  else
    etrt_blocked_average(j, begin, end, 16);
}

void etrt_cpu_blocked_global_average(const float *x, float *y, int64_t batch, int64_t channels,
                                     int64_t hw, int64_t block) {
  etrt_blocked_job job = {.x = x, .y = y, .channels = channels, .hw = hw, .block = block};
  etrt_parallel_for(batch * (channels / block), etrt_blocked_grain(hw, block),
                    etrt_blocked_average_range, &job);
}

static inline __attribute__((always_inline)) void etrt_blocked_scale(const etrt_blocked_job *j,
                                                                     int64_t begin, int64_t end,
                                                                     const int64_t b) {
  const int64_t per_image = j->channels / b;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t image = p / per_image;
    const float *scale =
        j->scale + (j->scale_batch == 1 ? 0 : image) * j->channels + (p % per_image) * b;
    const float *x = j->x + p * j->hw * b;
    float *y = j->y + p * j->hw * b;
    for (int64_t i = 0; i < j->hw; ++i)
      for (int64_t l = 0; l < b; ++l) y[i * b + l] = x[i * b + l] * scale[l];
  }
}

static void etrt_blocked_scale_range(void *ctx, int64_t begin, int64_t end) {
  const etrt_blocked_job *j = ctx;
  if (j->block == 8)
    etrt_blocked_scale(j, begin, end, 8);
  else
    etrt_blocked_scale(j, begin, end, 16);
}

void etrt_cpu_blocked_channel_scale(const float *x, const float *scale, float *y, int64_t batch,
                                    int64_t channels, int64_t hw, int64_t block,
                                    int64_t scale_batch) {
  etrt_blocked_job job = {.x = x,
                          .scale = scale,
                          .y = y,
                          .channels = channels,
                          .hw = hw,
                          .block = block,
                          .scale_batch = scale_batch};
  etrt_parallel_for(batch * (channels / block), etrt_blocked_grain(hw, block),
                    etrt_blocked_scale_range, &job);
}
