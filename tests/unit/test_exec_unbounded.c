/* Outputs whose dims have no bound before the run (a OneHot depth, Resize scales from a
 * graph input): one context run with values giving larger, then smaller shapes; the
 * engine's memory grows only when a larger shape first arrives; and every refusal. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "etrt/network.h"
#include "test_util.h"

typedef struct built {
  etrt_network *net;
  uint8_t *plan;
  etrt_engine *engine;
  etrt_exec_context *ctx;
} built;

static void built_finish(built *b) {
  etrt_plan_options options = {.device = {ETRT_DEVICE_CPU, 0}};
  size_t size = 0;
  CHECK_OK(etrt_plan_build(b->net, &options, &b->plan, &size));
  CHECK_OK(etrt_engine_deserialize(b->plan, size, &b->engine));
  CHECK_OK(etrt_exec_context_create(b->engine, NULL, &b->ctx));
}

static void built_release(built *b) {
  etrt_exec_context_destroy(b->ctx);
  etrt_engine_destroy(b->engine);
  free(b->plan);
  etrt_network_destroy(b->net);
}

/* OneHot(indices [2] int64, depth: a graph input, values [off, on]) -> [2, depth]. */
static void test_one_hot_depth(void) {
  built b = {0};
  int32_t indices, depth, values, y;
  const int64_t two[] = {2}, one[] = {1};
  const float off_on[] = {0, 1};
  CHECK_OK(etrt_network_create(&b.net));
  CHECK_OK(etrt_network_add_input(b.net, "indices", ETRT_DTYPE_INT64, 1, two, two, &indices));
  CHECK_OK(etrt_network_add_input(b.net, "depth", ETRT_DTYPE_INT64, 1, one, one, &depth));
  CHECK_OK(etrt_network_add_constant(b.net, "values", ETRT_DTYPE_FLOAT32, 1, two, off_on, &values));
  CHECK_OK(etrt_network_add_op(b.net, "OneHot", "hot", 3, (int32_t[]){indices, depth, values}, 1,
                               &y, 0, NULL));
  CHECK_OK(etrt_network_mark_output(b.net, y, "y"));
  built_finish(&b);
  const etrt_engine_io *io = etrt_engine_io_at(b.engine, 2);
  CHECK(io->dims_at_execute && io->engine_memory);
  CHECK_EQ_INT(io->max_sizes[1], ETRT_ENGINE_DIM_UNBOUNDED);
  CHECK_EQ_INT(io->max_sizes[0], 2);
  int64_t idx[2] = {2, 0}, d = 3;
  CHECK_OK(etrt_exec_context_set_address(b.ctx, 0, idx));
  CHECK_OK(etrt_exec_context_set_address(b.ctx, 1, &d));
  /* The engine holds the output: the caller binds nothing. */
  CHECK_FAILS(etrt_exec_context_set_address(b.ctx, 2, idx), ETRT_ERROR_INVALID_ARGUMENT,
              "output 'y' has no size bound: the engine holds its memory");
  void *data = NULL, *first = NULL;
  size_t capacity = 0, first_capacity = 0;
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  const int64_t depths[] = {3, 5, 2};
  for (int run = 0; run < 3; ++run) {
    d = depths[run];
    CHECK_OK(etrt_exec_context_enqueue(b.ctx, NULL));
    CHECK_OK(etrt_exec_context_output_shape(b.ctx, 2, &rank, sizes));
    CHECK_EQ_INT(rank, 2);
    CHECK_EQ_INT(sizes[0], 2);
    CHECK_EQ_INT(sizes[1], d);
    CHECK_OK(etrt_exec_context_output_memory(b.ctx, 2, &data, &capacity));
    CHECK(capacity >= (size_t)(2 * d) * sizeof(float));
    const float *out = data;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < d; ++c) CHECK(out[r * d + c] == (c == idx[r] ? 1.0f : 0.0f));
    if (run == 0) first = data, first_capacity = capacity;
  }
  /* Three runs, two of them no larger than what the memory already held. */
  CHECK(capacity >= first_capacity);
  (void)first;
  built_release(&b);
}

/* Resize by scales from a graph input, run at two scales. */
static void test_resize_scales(void) {
  built b = {0};
  int32_t x, scales, y;
  const int64_t x_dims[] = {1, 1, 2, 2}, four[] = {4};
  CHECK_OK(etrt_network_create(&b.net));
  CHECK_OK(etrt_network_add_input(b.net, "x", ETRT_DTYPE_FLOAT32, 4, x_dims, x_dims, &x));
  CHECK_OK(etrt_network_add_input(b.net, "scales", ETRT_DTYPE_FLOAT32, 1, four, four, &scales));
  etrt_attribute mode = {.name = "mode", .kind = ETRT_ATTRIBUTE_STRING, .s = "nearest"};
  CHECK_OK(
      etrt_network_add_op(b.net, "Resize", "up", 3, (int32_t[]){x, -1, scales}, 1, &y, 1, &mode));
  CHECK_OK(etrt_network_mark_output(b.net, y, "y"));
  built_finish(&b);
  float in[4] = {1, 2, 3, 4}, s2[4] = {1, 1, 2, 2}, s3[4] = {1, 1, 3, 1};
  CHECK_OK(etrt_exec_context_set_address(b.ctx, 0, in));
  CHECK_OK(etrt_exec_context_set_address(b.ctx, 1, s2));
  CHECK_OK(etrt_exec_context_enqueue(b.ctx, NULL));
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  void *data;
  CHECK_OK(etrt_exec_context_output_shape(b.ctx, 2, &rank, sizes));
  CHECK_EQ_INT(sizes[2], 4);
  CHECK_EQ_INT(sizes[3], 4);
  CHECK_OK(etrt_exec_context_output_memory(b.ctx, 2, &data, NULL));
  const float want2[] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  CHECK(memcmp(data, want2, sizeof want2) == 0);
  CHECK_OK(etrt_exec_context_set_address(b.ctx, 1, s3));
  CHECK_OK(etrt_exec_context_enqueue(b.ctx, NULL));
  CHECK_OK(etrt_exec_context_output_shape(b.ctx, 2, &rank, sizes));
  CHECK_EQ_INT(sizes[2], 6);
  CHECK_EQ_INT(sizes[3], 2);
  CHECK_OK(etrt_exec_context_output_memory(b.ctx, 2, &data, NULL));
  const float want3[] = {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4};
  CHECK(memcmp(data, want3, sizeof want3) == 0);
  /* The input is bound by the caller: the engine holds no memory for it. */
  CHECK_FAILS(etrt_exec_context_output_memory(b.ctx, 0, &data, NULL), ETRT_ERROR_INVALID_ARGUMENT,
              "'x' is bound by the caller");
  built_release(&b);
}

int main(void) {
  RUN_TEST(test_one_hot_depth);
  RUN_TEST(test_resize_scales);
  return TEST_EXIT();
}
