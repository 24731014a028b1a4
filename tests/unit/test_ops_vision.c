/* GridSample, RoiAlign, LRN and MeanVarianceNormalization on the CPU: values worked
 * by hand for each mode and padding, the out-of-range batch index at execution, and
 * every refusal. */
#include "op_harness.h"

#define TV_IMAGE OH_F32(4, (1, 1, 2, 2), 1, 2, 3, 4)

/* One sample of the 2x2 image at grid point (gx, gy). */
static float sample(float gx, float gy, const char *mode, const char *padding, int align) {
  float y[4096 / 4];
  etrt_attribute attributes[] = {OH_STRING("mode", mode), OH_STRING("padding_mode", padding),
                                 OH_INT("align_corners", align)};
  CHECK_OK(oh_run("GridSample", 2, (oh_value[]){TV_IMAGE, OH_F32(4, (1, 1, 1, 2), gx, gy)}, 3,
                  attributes, 1, (void *[]){y}, NULL));
  return y[0];
}

static void test_grid_sample(void) {
  float y[4096 / 4];
  oh_output info[1];
  /* align_corners: the corners of the grid are the centres of the corner pixels */
  CHECK_OK(oh_run("GridSample", 2,
                  (oh_value[]){TV_IMAGE, OH_F32(4, (1, 2, 2, 2), -1, -1, 1, 1, 0, 0, 1, -1)}, 1,
                  (etrt_attribute[]){OH_INT("align_corners", 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 4);
  CHECK_EQ_INT(info[0].dims[2], 2);
  CHECK_EQ_INT(info[0].dims[3], 2);
  OH_CHECK_FLOATS(y, ((double[]){1, 4, 2.5, 2}), 4, 1e-6);
  /* (-1, -1) without align_corners is the outer corner (-0.5, -0.5): a quarter of pixel
   * (0, 0) with zeros around, the pixel itself with border or reflection */
  OH_CHECK_FLOATS((float[]){sample(-1, -1, "bilinear", "zeros", 0)}, ((double[]){0.25}), 1, 1e-6);
  OH_CHECK_FLOATS((float[]){sample(-1, -1, "bilinear", "border", 0)}, ((double[]){1}), 1, 1e-6);
  OH_CHECK_FLOATS((float[]){sample(-1, -1, "bilinear", "reflection", 0)}, ((double[]){1}), 1, 1e-6);
  /* far outside: reflected back across the right edge (x = 2.5 -> 0.5 from 1.5) */
  OH_CHECK_FLOATS((float[]){sample(2, -0.5f, "bilinear", "reflection", 0)}, ((double[]){1.5}), 1,
                  1e-6);
  OH_CHECK_FLOATS((float[]){sample(5, 5, "bilinear", "zeros", 0)}, ((double[]){0}), 1, 0);
  /* nearest: pixel centres, and rounding half to even */
  OH_CHECK_FLOATS((float[]){sample(0.5f, 0.5f, "nearest", "zeros", 0)}, ((double[]){4}), 1, 0);
  OH_CHECK_FLOATS((float[]){sample(0, 0, "nearest", "zeros", 0)}, ((double[]){1}), 1, 0);
  /* cubic at a pixel centre is the pixel; the opset 20 names are accepted */
  OH_CHECK_FLOATS((float[]){sample(1, -1, "bicubic", "zeros", 1)}, ((double[]){2}), 1, 1e-6);
  OH_CHECK_FLOATS((float[]){sample(1, 1, "cubic", "border", 1)}, ((double[]){4}), 1, 1e-6);
  OH_CHECK_FLOATS((float[]){sample(0, 0, "linear", "zeros", 1)}, ((double[]){2.5}), 1, 1e-6);
}

static void test_grid_sample_refusals(void) {
  const oh_value grid = OH_F32(4, (1, 1, 1, 2), 0, 0);
  OH_CHECK_REFUSED(oh_run("GridSample", 2, (oh_value[]){TV_IMAGE, grid}, 1,
                          (etrt_attribute[]){OH_STRING("mode", "area")}, 1, NULL, NULL),
                   "GridSample", "mode 'area'");
  OH_CHECK_REFUSED(oh_run("GridSample", 2, (oh_value[]){TV_IMAGE, grid}, 1,
                          (etrt_attribute[]){OH_STRING("padding_mode", "wrap")}, 1, NULL, NULL),
                   "GridSample", "padding_mode 'wrap'");
  OH_CHECK_REFUSED(
      oh_run("GridSample", 2,
             (oh_value[]){OH_F32(5, (1, 1, 1, 2, 1), 1, 2), OH_F32(5, (1, 1, 1, 1, 3), 0, 0, 0)}, 0,
             NULL, 1, NULL, NULL),
      "GridSample", "only 4-D");
  OH_CHECK_REFUSED(oh_run("GridSample", 2, (oh_value[]){TV_IMAGE, OH_F32(4, (1, 1, 1, 3), 0, 0, 0)},
                          0, NULL, 1, NULL, NULL),
                   "GridSample", "grid must be [N, H_out, W_out, 2]");
  OH_CHECK_REFUSED(oh_run("GridSample", 2, (oh_value[]){TV_IMAGE, OH_F64(4, (1, 1, 1, 2), 0, 0)}, 0,
                          NULL, 1, NULL, NULL),
                   "GridSample", "X's dtype");
  OH_CHECK_REFUSED(oh_run("GridSample", 2, (oh_value[]){OH_I32(4, (1, 1, 1, 1), 1), grid}, 0, NULL,
                          1, NULL, NULL),
                   "GridSample", "X");
  OH_CHECK_REFUSED(oh_run("GridSample", 1, (oh_value[]){TV_IMAGE}, 0, NULL, 1, NULL, NULL),
                   "GridSample", "2 input(s)");
}

/* A 4x4 image whose pixel (r, c) is 4r + c: bilinear samples of it are exact. */
#define TV_RAMP OH_F32(4, (1, 1, 4, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

static void test_roi_align(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value rois = OH_F32(2, (1, 4), 0, 0, 3, 3), batch = OH_I64(1, (1), 0);
  /* output_half_pixel: samples at 0.75 and 2.25 each way, mean (1.5, 1.5) -> 7.5 */
  CHECK_OK(
      oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, batch}, 2,
             (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "output_half_pixel"),
                                OH_INT("sampling_ratio", 2)},
             1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 4);
  CHECK_EQ_INT(info[0].dims[0], 1);
  OH_CHECK_FLOATS(y, ((double[]){7.5}), 1, 1e-6);
  /* half_pixel moves the region by half a pixel: mean (1, 1) -> 5 */
  CHECK_OK(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, batch}, 1,
                  (etrt_attribute[]){OH_INT("sampling_ratio", 2)}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){5}), 1, 1e-6);
  /* 2x2 bins of a 2x2 region at scale 0.5: one adaptive sample per bin at its centre */
  CHECK_OK(
      oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, OH_F32(2, (1, 4), 0, 0, 4, 4), batch}, 4,
             (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "output_half_pixel"),
                                OH_INT("output_height", 2), OH_INT("output_width", 2),
                                OH_FLOAT("spatial_scale", 0.5f)},
             1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){2.5, 3.5, 6.5, 7.5}), 4, 1e-6);
  /* max: the largest weighted corner of the one sample at (1.5, 1.5) */
  CHECK_OK(
      oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, batch}, 3,
             (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "output_half_pixel"),
                                OH_STRING("mode", "max"), OH_INT("sampling_ratio", 1)},
             1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){2.5}), 1, 1e-6);
}

static void test_roi_align_refusals(void) {
  const oh_value rois = OH_F32(2, (1, 4), 0, 0, 3, 3), batch = OH_I64(1, (1), 0);
  /* data-dependent: refused when the run meets it, naming the op */
  OH_CHECK_REFUSED(
      oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, OH_I64(1, (1), 1)}, 0, NULL, 1, NULL, NULL),
      "RoiAlign", "batch_indices[0] is 1, outside [0, 1)");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, OH_I64(1, (1), -1)}, 0, NULL,
                          1, NULL, NULL),
                   "RoiAlign", "batch_indices[0] is -1");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, OH_F32(2, (1, 3), 0, 0, 3), batch},
                          0, NULL, 1, NULL, NULL),
                   "RoiAlign", "rois must be [R, 4]");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, OH_I64(1, (2), 0, 0)}, 0, NULL,
                          1, NULL, NULL),
                   "RoiAlign", "batch_indices [R]");
  OH_CHECK_REFUSED(
      oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, OH_F32(1, (1), 0)}, 0, NULL, 1, NULL, NULL),
      "RoiAlign", "batch_indices");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, batch}, 1,
                          (etrt_attribute[]){OH_STRING("mode", "min")}, 1, NULL, NULL),
                   "RoiAlign", "mode 'min'");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, batch}, 1,
                          (etrt_attribute[]){OH_STRING("coordinate_transformation_mode", "edge")},
                          1, NULL, NULL),
                   "RoiAlign", "coordinate_transformation_mode 'edge'");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){TV_RAMP, rois, batch}, 1,
                          (etrt_attribute[]){OH_INT("output_height", 0)}, 1, NULL, NULL),
                   "RoiAlign", "output_height");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 3, (oh_value[]){OH_F32(3, (1, 1, 1), 0), rois, batch}, 0,
                          NULL, 1, NULL, NULL),
                   "RoiAlign", "[N, C, H, W]");
  OH_CHECK_REFUSED(oh_run("RoiAlign", 2, (oh_value[]){TV_RAMP, rois}, 0, NULL, 1, NULL, NULL),
                   "RoiAlign", "3 input(s)");
}

static void test_lrn(void) {
  float y[4096 / 4];
  /* alpha / size = 1, beta 1, bias 1: x / (1 + sum of squares over the window) */
  CHECK_OK(oh_run("LRN", 1, (oh_value[]){OH_F32(4, (1, 3, 1, 1), 1, 2, 3)}, 4,
                  (etrt_attribute[]){OH_INT("size", 3), OH_FLOAT("alpha", 3), OH_FLOAT("beta", 1),
                                     OH_FLOAT("bias", 1)},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1.0 / 6, 2.0 / 15, 3.0 / 14}), 3, 1e-6);
  /* an even size reaches one channel further up than down */
  CHECK_OK(oh_run("LRN", 1, (oh_value[]){OH_F32(3, (1, 3, 1), 1, 2, 3)}, 4,
                  (etrt_attribute[]){OH_INT("size", 2), OH_FLOAT("alpha", 2), OH_FLOAT("beta", 1),
                                     OH_FLOAT("bias", 1)},
                  1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){1.0 / 6, 2.0 / 14, 3.0 / 10}), 3, 1e-6);
  OH_CHECK_REFUSED(
      oh_run("LRN", 1, (oh_value[]){OH_F32(4, (1, 3, 1, 1), 1, 2, 3)}, 0, NULL, 1, NULL, NULL),
      "LRN", "'size'");
  OH_CHECK_REFUSED(oh_run("LRN", 1, (oh_value[]){OH_F32(1, (3), 1, 2, 3)}, 1,
                          (etrt_attribute[]){OH_INT("size", 3)}, 1, NULL, NULL),
                   "LRN", "[N, C, ...]");
  OH_CHECK_REFUSED(oh_run("LRN", 1, (oh_value[]){OH_I32(2, (1, 1), 1)}, 1,
                          (etrt_attribute[]){OH_INT("size", 3)}, 1, NULL, NULL),
                   "LRN", "X");
}

static void test_mvn(void) {
  float y[4096 / 4];
  /* over N, H and W: channel 0 is {1, 3} (mean 2, deviation 1), channel 1 {2, 6} */
  CHECK_OK(oh_run("MeanVarianceNormalization", 1, (oh_value[]){OH_F32(4, (1, 2, 1, 2), 1, 3, 2, 6)},
                  0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-1, 1, -1, 1}), 4, 1e-6);
  CHECK_OK(oh_run("MeanVarianceNormalization", 1, (oh_value[]){OH_F32(2, (2, 2), 1, 2, 5, 3)}, 1,
                  (etrt_attribute[]){OH_INTS("axes", 1, 0)}, 1, (void *[]){y}, NULL));
  OH_CHECK_FLOATS(y, ((double[]){-1, -1, 1, 1}), 4, 1e-6);
  OH_CHECK_REFUSED(
      oh_run("MeanVarianceNormalization", 1, (oh_value[]){OH_F32(2, (2, 2), 1, 2, 5, 3)}, 1,
             (etrt_attribute[]){OH_INTS("axes", 1, 2)}, 1, NULL, NULL),
      "MeanVarianceNormalization", "axis 2 is out of range");
  OH_CHECK_REFUSED(
      oh_run("MeanVarianceNormalization", 1, (oh_value[]){OH_F32(2, (2, 2), 1, 2, 5, 3)}, 1,
             (etrt_attribute[]){OH_INTS("axes", 2, 1, -1)}, 1, NULL, NULL),
      "MeanVarianceNormalization", "repeated");
  OH_CHECK_REFUSED(oh_run("MeanVarianceNormalization", 1, (oh_value[]){OH_I64(1, (1), 1)}, 0, NULL,
                          1, NULL, NULL),
                   "MeanVarianceNormalization", "X");
}

int main(void) {
  RUN_TEST(test_grid_sample);
  RUN_TEST(test_grid_sample_refusals);
  RUN_TEST(test_roi_align);
  RUN_TEST(test_roi_align_refusals);
  RUN_TEST(test_lrn);
  RUN_TEST(test_mvn);
  return TEST_EXIT();
}
