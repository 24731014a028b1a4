/* Resize (nearest with its rounding modes, linear, cubic; the coordinate
 * transformation modes; scales or sizes as value inputs) and Upsample on the CPU
 * executor, against the values of the ONNX operator documentation, and refusals. */
#include "op_harness.h"

static const float k2x2[4] = {1, 2, 3, 4};
static float k4x4[16];

static void test_resize_nearest(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 2, 2}, k2x2, OH_INPUT};
  float y[64];
  oh_output info[1];
  /* scales (1, 1, 2, 3), default half_pixel + round_prefer_floor */
  CHECK_OK(oh_run("Resize", 3, (oh_value[]){x, OH_NONE, OH_CONST(OH_F32(1, (4), 1, 1, 2, 3))}, 1,
                  (etrt_attribute[]){OH_STRING("mode", "nearest")}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 4);
  CHECK_EQ_INT(info[0].dims[3], 6);
  OH_CHECK_FLOATS(
      y, ((double[]){1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}), 24,
      0);
  /* sizes as a shape input, 7x8, ceil + half_pixel vs floor + align_corners */
  oh_value sizes = OH_SHAPE_INPUT(OH_I64(1, (4), 1, 1, 1, 3));
  oh_value x4 = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 4, 4}, k4x4, OH_INPUT};
  CHECK_OK(
      oh_run("Resize", 4, (oh_value[]){x4, OH_NONE, OH_NONE, sizes}, 2,
             (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
                                OH_STRING("nearest_mode", "round_prefer_floor")},
             1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 1);
  CHECK_EQ_INT(info[0].dims[3], 3);
  OH_CHECK_FLOATS(y, ((double[]){10, 11, 12}), 3, 0);
  oh_value up = OH_CONST(OH_I64(1, (4), 1, 1, 1, 8));
  oh_value row = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 1, 4}, k4x4, OH_INPUT};
  CHECK_OK(oh_run("Resize", 4, (oh_value[]){row, OH_NONE, OH_NONE, up}, 1,
                  (etrt_attribute[]){OH_STRING("nearest_mode", "ceil")}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 2, 2, 3, 3, 4, 4, 4}), 8, 0);
  CHECK_OK(oh_run("Resize", 4, (oh_value[]){row, OH_NONE, OH_NONE, up}, 2,
                  (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "align_corners"),
                                     OH_STRING("nearest_mode", "floor")},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 1, 1, 2, 2, 3, 3, 4}), 8, 0);
  /* nearest moves bytes: int64 works */
  oh_value xi = OH_I64(4, (1, 1, 1, 2), 7, -7);
  int64_t yi[4];
  CHECK_OK(oh_run("Resize", 3, (oh_value[]){xi, OH_NONE, OH_CONST(OH_F32(1, (4), 1, 1, 1, 2))}, 0,
                  NULL, 1, (void *[]){yi}, NULL));
  OH_CHECK_INTS(yi, ((int64_t[]){7, 7, -7, -7}), 4);
  /* Upsample (opset 9): asymmetric, floor */
  CHECK_OK(oh_run("Upsample", 2, (oh_value[]){x, OH_CONST(OH_F32(1, (4), 1, 1, 2, 3))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[3], 6);
  OH_CHECK_FLOATS(y, ((double[]){1, 1, 1, 2, 2, 2}), 6, 0);
}

static void test_resize_linear_cubic(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 2, 2}, k2x2, OH_INPUT};
  oh_value scales = OH_CONST(OH_F32(1, (4), 1, 1, 2, 2));
  float y[64];
  CHECK_OK(oh_run("Resize", 3, (oh_value[]){x, OH_NONE, scales}, 1,
                  (etrt_attribute[]){OH_STRING("mode", "linear")}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(
      y,
      ((double[]){1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}),
      16, 1e-6);
  CHECK_OK(oh_run("Resize", 3, (oh_value[]){x, OH_NONE, scales}, 2,
                  (etrt_attribute[]){OH_STRING("mode", "linear"),
                                     OH_STRING("coordinate_transformation_mode", "align_corners")},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1, 4 / 3.0, 5 / 3.0, 2}), 4, 1e-6);
  CHECK_NEAR(y[15], 4, 1e-6);
  oh_value x4 = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 4, 4}, k4x4, OH_INPUT};
  oh_output info[1];
  CHECK_OK(oh_run("Resize", 3,
                  (oh_value[]){x4, OH_NONE, OH_CONST(OH_F32(1, (4), 1, 1, 0.8f, 0.8f))}, 1,
                  (etrt_attribute[]){OH_STRING("mode", "cubic")}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[2], 3);
  OH_CHECK_FLOATS(y,
                  ((double[]){1.47119140625, 2.78125, 4.08251953125, 6.71142578125, 8.021484375,
                              9.32275390625, 11.91650390625, 13.2265625, 14.52783203125}),
                  9, 1e-5);
  CHECK_OK(oh_run("Resize", 3, (oh_value[]){x4, OH_NONE, scales}, 3,
                  (etrt_attribute[]){OH_STRING("mode", "cubic"), OH_FLOAT("cubic_coeff_a", -0.5f),
                                     OH_INT("exclude_outside", 1)},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(
      y,
      ((double[]){0.5588235259056091, 0.8149420619010925, 1.3569824695587158, 1.8970588445663452}),
      4, 1e-5);
  /* tf_crop_and_resize with an extrapolation value outside the box */
  CHECK_OK(
      oh_run("Resize", 4,
             (oh_value[]){x4, OH_F32(1, (8), 0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f), OH_NONE,
                          OH_CONST(OH_I64(1, (4), 1, 1, 3, 3))},
             3,
             (etrt_attribute[]){OH_STRING("mode", "linear"),
                                OH_STRING("coordinate_transformation_mode", "tf_crop_and_resize"),
                                OH_FLOAT("extrapolation_value", 10.0f)},
             1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}), 9, 1e-5);
}

static void test_resize_refusals(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 4, {1, 1, 2, 2}, k2x2, OH_INPUT};
  oh_value scales = OH_CONST(OH_F32(1, (4), 1, 1, 2, 2));
  OH_CHECK_REFUSED(oh_run("Resize", 3, (oh_value[]){x, OH_NONE, scales}, 1,
                          (etrt_attribute[]){OH_STRING("mode", "area")}, 1, NULL, NULL),
                   "Resize", "mode");
  OH_CHECK_REFUSED(oh_run("Resize", 3, (oh_value[]){x, OH_NONE, OH_CONST(OH_F32(1, (2), 2, 2))}, 0,
                          NULL, 1, NULL, NULL),
                   "Resize", "scales");
  OH_CHECK_REFUSED(
      oh_run("Resize", 4, (oh_value[]){x, OH_NONE, scales, OH_CONST(OH_I64(1, (4), 1, 1, 4, 4))}, 0,
             NULL, 1, NULL, NULL),
      "Resize", "exactly one");
  OH_CHECK_REFUSED(
      oh_run("Resize", 3, (oh_value[]){x, OH_NONE, scales}, 1,
             (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "sideways")}, 1, NULL,
             NULL),
      "Resize", "coordinate_transformation_mode");
  oh_value xi = OH_I32(4, (1, 1, 1, 2), 1, 2);
  OH_CHECK_REFUSED(oh_run("Resize", 3, (oh_value[]){xi, OH_NONE, scales}, 1,
                          (etrt_attribute[]){OH_STRING("mode", "linear")}, 1, NULL, NULL),
                   "Resize", "int32");
}

int main(void) {
  for (int i = 0; i < 16; ++i) k4x4[i] = (float)(i + 1);
  RUN_TEST(test_resize_nearest);
  RUN_TEST(test_resize_linear_cubic);
  RUN_TEST(test_resize_refusals);
  return TEST_EXIT();
}
