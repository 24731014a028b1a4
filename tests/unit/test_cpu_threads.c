/* The CPU kernels split over the thread pool give the same bits with one thread and
 * with four: elementwise (broadcast), maps, pools, reductions, Softmax and
 * LayerNormalization on shapes large enough to be split. (GEMM and Conv have their
 * own such tests in test_cpu_gemm and test_ops_conv.) */
#include <string.h>

#include "base/thread_pool.h"
#include "op_harness.h"

#define N 2
#define C 16
#define H 40
#define W 40
#define COUNT (N * C * H * W)

static float x[COUNT], bias[C * H * W], one[COUNT], four[COUNT];

static void fill(float *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((seed >> 8) % 2001) / 250.0f - 4.0f;
  }
}

/* Runs op on x (and `second` when given) with limit 1, then 4; compares `count`
 * output floats. */
static void same_bits(const char *op, const oh_value *second, uint32_t num_attributes,
                      const etrt_attribute *attributes, int64_t count) {
  oh_value in[2] = {{ETRT_DTYPE_FLOAT32, 4, {N, C, H, W}, x, OH_INPUT}};
  if (second != NULL) in[1] = *second;
  uint32_t inputs = second != NULL ? 2 : 1;
  memset(one, 0, sizeof one);
  memset(four, 0xff, sizeof four);
  etrt_thread_pool_limit_set(1);
  CHECK_OK(oh_run(op, inputs, in, num_attributes, attributes, 1, (void *[]){one}, NULL));
  etrt_thread_pool_limit_set(4);
  CHECK_OK(oh_run(op, inputs, in, num_attributes, attributes, 1, (void *[]){four}, NULL));
  etrt_thread_pool_limit_set(0);
  if (memcmp(one, four, (size_t)count * sizeof(float)) != 0)
    etrt_test_fail(__FILE__, __LINE__, "%s: different results with 1 and 4 threads", op);
}

static void test_kernels_split_the_same_way(void) {
  fill(x, COUNT, 1);
  fill(bias, C * H * W, 2);
  CHECK_OK(etrt_thread_pool_acquire(4));
  oh_value b = {ETRT_DTYPE_FLOAT32, 3, {C, H, W}, bias, OH_INPUT};
  same_bits("Add", &b, 0, NULL, COUNT);
  same_bits("Mul", &b, 0, NULL, COUNT);
  same_bits("Relu", NULL, 0, NULL, COUNT);
  same_bits("Sigmoid", NULL, 0, NULL, COUNT);
  same_bits("Tanh", NULL, 0, NULL, COUNT);
  same_bits("HardSwish", NULL, 0, NULL, COUNT);
  same_bits("Clip", NULL, 0, NULL, COUNT);
  etrt_attribute pool[] = {OH_INTS("kernel_shape", 2, 3, 3), OH_INTS("pads", 4, 1, 1, 1, 1)};
  same_bits("MaxPool", NULL, 2, pool, COUNT);
  same_bits("AveragePool", NULL, 2, pool, COUNT);
  same_bits("GlobalAveragePool", NULL, 0, NULL, N * C);
  etrt_attribute last_axis[] = {OH_INTS("axes", 1, 3)};
  same_bits("ReduceMean", NULL, 1, last_axis, N * C * H);
  etrt_attribute softmax_axis[] = {OH_INT("axis", 3)};
  same_bits("Softmax", NULL, 1, softmax_axis, COUNT);
  oh_value scale = {ETRT_DTYPE_FLOAT32, 1, {W}, bias, OH_CONSTANT};
  etrt_attribute norm_axis[] = {OH_INT("axis", -1)};
  same_bits("LayerNormalization", &scale, 1, norm_axis, COUNT);
  etrt_thread_pool_release();
}

int main(void) {
  RUN_TEST(test_kernels_split_the_same_way);
  return TEST_EXIT();
}
