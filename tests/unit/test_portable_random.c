/* rand and randn: the shape asked for (a SymInt from the input's size), uniform values
 * in [0, 1) with mean near 1/2 and normal values with mean near 0 and variance near 1
 * over 4096 draws, another stream on the next execute, float16 values below 1; the
 * refusal of an integer out tensor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static void test_rand_randn(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){64}, NULL, 1);
  int32_t n = etrt_test_kp_int(&p, 64), zero = etrt_test_kp_int(&p, 0);
  int32_t sixty_four = etrt_test_kp_int(&p, 64);
  int32_t size = etrt_test_kp_int_list(&p, (int32_t[]){n, sixty_four}, 2);
  int32_t u = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){64, 64}, NULL, 1);
  int32_t g = etrt_test_kp_tensor(&p, F32, 2, (int32_t[]){64, 64}, NULL, 1);
  int32_t h = etrt_test_kp_tensor(&p, ETRT_DTYPE_FLOAT16, 2, (int32_t[]){64, 64}, NULL, 1);
  etrt_test_kp_call(&p, "aten::sym_size.int", (int32_t[]){x, zero, n}, 3);
  etrt_test_kp_call(&p, "aten::rand.out", (int32_t[]){size, u, u}, 3);
  etrt_test_kp_call(&p, "aten::randn.out", (int32_t[]){size, g, g}, 3);
  etrt_test_kp_call(&p, "aten::rand.out", (int32_t[]){size, h, h}, 3);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, (int32_t[]){u, g, h}, 3, &bytes);
  float in[64] = {0};
  etrt_tensor_view v = {in, F32, 1, {64}}, o[3];
  etrt_program *program;
  etrt_method *method;
  CHECK_OK(etrt_test_kp_execute(pte, bytes, &v, 1, &program, &method));
  for (uint32_t i = 0; i < 3; ++i) CHECK_OK(etrt_method_get_output(method, i, &o[i]));
  CHECK(o[0].rank == 2 && o[0].sizes[0] == 64 && o[0].sizes[1] == 64);
  const float *uv = o[0].data, *gv = o[1].data;
  const uint16_t *hv = o[2].data;
  double su = 0, sg = 0, sg2 = 0;
  int in_range = 1;
  for (int i = 0; i < 4096; ++i) {
    in_range &=
        uv[i] >= 0 && uv[i] < 1 && etrt_half_to_float(hv[i]) >= 0 && etrt_half_to_float(hv[i]) < 1;
    su += uv[i];
    sg += gv[i];
    sg2 += (double)gv[i] * gv[i];
  }
  CHECK(in_range);
  CHECK(fabs(su / 4096 - 0.5) < 0.02);
  CHECK(fabs(sg / 4096) < 0.06 && fabs(sg2 / 4096 - 1) < 0.1);
  float first[8];
  memcpy(first, uv, sizeof first);
  v.sizes[0] = 3; /* a smaller draw the next time */
  CHECK_OK(etrt_method_set_input(method, 0, &v));
  CHECK_OK(etrt_method_execute(method));
  CHECK_OK(etrt_method_get_output(method, 0, &o[0]));
  CHECK(o[0].sizes[0] == 3 && o[0].sizes[1] == 64);
  CHECK(memcmp(first, o[0].data, sizeof first) != 0);
  etrt_method_destroy(method);
  etrt_program_destroy(program);
  free(pte);
}

static void test_rand_refused(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 1, (int32_t[]){2}, NULL, 0);
  int32_t size = etrt_test_kp_ints(&p, (int64_t[]){2}, 1);
  int32_t y = etrt_test_kp_tensor(&p, ETRT_DTYPE_INT32, 1, (int32_t[]){2}, NULL, 0);
  etrt_test_kp_call(&p, "aten::rand.out", (int32_t[]){size, y, y}, 3);
  size_t bytes;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &bytes);
  float in[2] = {0};
  int32_t out[2];
  etrt_tensor_view v = {in, F32, 1, {2}};
  CHECK_FAILS(etrt_test_kp_run(pte, bytes, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT, "the out tensor must be floating point, not int32");
  free(pte);
}

int main(void) {
  RUN_TEST(test_rand_randn);
  RUN_TEST(test_rand_refused);
  return TEST_EXIT();
}
