/* The signal operators on the CPU: transforms and windows worked by hand, the mel
 * matrix against the ONNX reference's values, and every refusal. */
#include "op_harness.h"

static void test_dft(void) {
  float y[4096 / 4];
  oh_output info[1];
  /* the default axis (-2) of a [4, 1] real signal */
  CHECK_OK(oh_run("DFT", 1, (oh_value[]){OH_F32(2, (4, 1), 1, 2, 3, 4)}, 0, NULL, 1, (void *[]){y},
                  info));
  CHECK(info[0].rank == 2 && info[0].dims[0] == 4 && info[0].dims[1] == 2);
  OH_CHECK_FLOATS(y, ((double[]){10, 0, -2, 2, -2, 0, -2, -2}), 8, 1e-6);
  /* and back: the inverse divides by the length */
  CHECK_OK(oh_run("DFT", 1, (oh_value[]){OH_F32(2, (4, 2), 10, 0, -2, 2, -2, 0, -2, -2)}, 1,
                  (etrt_attribute[]){OH_INT("inverse", 1)}, 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){1, 0, 2, 0, 3, 0, 4, 0}), 8, 1e-6);
  /* a complex signal */
  CHECK_OK(oh_run("DFT", 1, (oh_value[]){OH_F32(2, (4, 2), 1, 0, 2, 1, 0, 0, 0, -1)}, 0, NULL, 1,
                  (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){3, 0, 3, -2, -1, 0, -1, 2}), 8, 1e-6);
  /* zero-padded to dft_length 6, one-sided: 6 / 2 + 1 bins, along axis 1 given as input */
  CHECK_OK(oh_run("DFT", 3,
                  (oh_value[]){OH_F32(3, (1, 4, 1), 1, 2, 3, 4), OH_CONST(OH_I64(0, (0), 6)),
                               OH_CONST(OH_I64(0, (0), 1))},
                  1, (etrt_attribute[]){OH_INT("onesided", 1)}, 1, (void *[]){y}, info));
  CHECK(info[0].rank == 3 && info[0].dims[1] == 4);
  OH_CHECK_FLOATS(y, ((double[]){10, 0, -3.5, -4.33012702, 2.5, 0.8660254, -2, 0}), 8, 1e-6);
  /* truncated to dft_length 2 */
  CHECK_OK(oh_run("DFT", 2,
                  (oh_value[]){OH_F32(2, (4, 1), 1, 2, 3, 4), OH_CONST(OH_I64(0, (0), 2))}, 0, NULL,
                  1, (void *[]){y}, info));
  CHECK(info[0].dims[0] == 2);
  OH_CHECK_FLOATS(y, ((double[]){3, 0, -1, 0}), 4, 1e-6);
  /* the inverse of a one-sided spectrum: a real signal of 2 (3 - 1) samples by default,
   * or dft_length (odd, and shorter than the spectrum); values from numpy.fft.irfft */
  const oh_value spectrum = OH_F32(2, (3, 2), 1, 0.5f, 2, -1, -0.5f, 0.25f);
  const etrt_attribute irfft[] = {OH_INT("onesided", 1), OH_INT("inverse", 1)};
  CHECK_OK(oh_run("DFT", 1, &spectrum, 2, irfft, 1, (void *[]){y}, info));
  CHECK(info[0].rank == 2 && info[0].dims[0] == 4 && info[0].dims[1] == 1);
  OH_CHECK_FLOATS(y, ((double[]){1.125, 0.875, -0.875, -0.125}), 4, 1e-6);
  CHECK_OK(oh_run("DFT", 2, (oh_value[]){spectrum, OH_CONST(OH_I64(0, (0), 5))}, 2, irfft, 1,
                  (void *[]){y}, info));
  CHECK(info[0].dims[0] == 5);
  OH_CHECK_FLOATS(y, ((double[]){0.8, 0.93066108, -0.17879724, -0.83923675, 0.28737291}), 5, 1e-6);
  CHECK_OK(oh_run("DFT", 2, (oh_value[]){spectrum, OH_CONST(OH_I64(0, (0), 3))}, 2, irfft, 1,
                  (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){1.66666667, 0.24401694, -0.9106836}), 3, 1e-6);
}

static void test_dft_refusals(void) {
  const oh_value real = OH_F32(2, (2, 1), 1, 2), complex = OH_F32(2, (1, 2), 1, 2);
  OH_CHECK_REFUSED(
      oh_run("DFT", 1, (oh_value[]){OH_F32(2, (1, 3), 1, 2, 3)}, 0, NULL, 1, NULL, NULL), "DFT",
      "last dim of 1 (real) or 2 (complex)");
  OH_CHECK_REFUSED(oh_run("DFT", 1, (oh_value[]){OH_I32(2, (2, 1), 1, 2)}, 0, NULL, 1, NULL, NULL),
                   "DFT", "int32");
  OH_CHECK_REFUSED(oh_run("DFT", 1, (oh_value[]){complex}, 1,
                          (etrt_attribute[]){OH_INT("onesided", 1)}, 1, NULL, NULL),
                   "DFT", "onesided needs a real input");
  const etrt_attribute irfft[] = {OH_INT("onesided", 1), OH_INT("inverse", 1)};
  OH_CHECK_REFUSED(oh_run("DFT", 1, (oh_value[]){real}, 2, irfft, 1, NULL, NULL), "DFT",
                   "an inverse onesided transform needs a complex input (last dim 2)");
  OH_CHECK_REFUSED(oh_run("DFT", 1, (oh_value[]){complex}, 2, irfft, 1, NULL, NULL), "DFT",
                   "dft_length must be positive, not 0");
  OH_CHECK_REFUSED(oh_run("DFT", 1, (oh_value[]){real}, 1, (etrt_attribute[]){OH_INT("inverse", 2)},
                          1, NULL, NULL),
                   "DFT", "inverse must be 0 or 1");
  OH_CHECK_REFUSED(oh_run("DFT", 3, (oh_value[]){real, OH_NONE, OH_CONST(OH_I64(0, (0), -1))}, 0,
                          NULL, 1, NULL, NULL),
                   "DFT", "axis -1 is out of range for rank 2");
  OH_CHECK_REFUSED(oh_run("DFT", 3, (oh_value[]){real, OH_NONE, OH_CONST(OH_I64(0, (0), 1))}, 0,
                          NULL, 1, NULL, NULL),
                   "DFT", "axis 1 is out of range");
  OH_CHECK_REFUSED(
      oh_run("DFT", 2, (oh_value[]){real, OH_CONST(OH_I64(0, (0), 0))}, 0, NULL, 1, NULL, NULL),
      "DFT", "dft_length must be positive, not 0");
  OH_CHECK_REFUSED(
      oh_run("DFT", 2, (oh_value[]){real, OH_CONST(OH_I64(1, (2), 2, 2))}, 0, NULL, 1, NULL, NULL),
      "DFT", "input 1 (dft_length) has 2 values, at most 1 allowed");
  OH_CHECK_REFUSED(
      oh_run("DFT", 2, (oh_value[]){real, OH_CONST(OH_I64(1, (0), 0))}, 0, NULL, 1, NULL, NULL),
      "DFT", "input 1 (dft_length) must be one value");
}

static void test_stft(void) {
  float y[4096 / 4];
  oh_output info[1];
  const oh_value signal = OH_F32(3, (1, 4, 1), 1, 2, 3, 4), step = OH_CONST(OH_I64(0, (0), 2));
  /* frames [1, 2] and [3, 4], one-sided: 2 / 2 + 1 bins */
  CHECK_OK(oh_run("STFT", 4, (oh_value[]){signal, step, OH_NONE, OH_CONST(OH_I64(0, (0), 2))}, 0,
                  NULL, 1, (void *[]){y}, info));
  CHECK(info[0].rank == 4 && info[0].dims[1] == 2 && info[0].dims[2] == 2 && info[0].dims[3] == 2);
  OH_CHECK_FLOATS(y, ((double[]){3, 0, -1, 0, 7, 0, -1, 0}), 8, 1e-6);
  /* a window weighs each frame */
  CHECK_OK(oh_run("STFT", 3, (oh_value[]){signal, step, OH_F32(1, (2), 0.5f, 1)}, 0, NULL, 1,
                  (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){2.5, 0, -1.5, 0, 5.5, 0, -2.5, 0}), 8, 1e-6);
  /* two-sided over a complex signal, step 1: 3 frames of 2 */
  CHECK_OK(oh_run("STFT", 4,
                  (oh_value[]){OH_F32(3, (1, 4, 2), 1, 0, 0, 1, 2, 0, 0, 0),
                               OH_CONST(OH_I64(0, (0), 1)), OH_NONE, OH_CONST(OH_I64(0, (0), 2))},
                  1, (etrt_attribute[]){OH_INT("onesided", 0)}, 1, (void *[]){y}, info));
  CHECK(info[0].dims[1] == 3 && info[0].dims[2] == 2);
  OH_CHECK_FLOATS(y, ((double[]){1, 1, 1, -1, 2, 1, -2, 1, 2, 0, 2, 0}), 12, 1e-6);
}

static void test_stft_refusals(void) {
  const oh_value signal = OH_F32(3, (1, 4, 1), 1, 2, 3, 4), step = OH_CONST(OH_I64(0, (0), 2));
  const oh_value two = OH_CONST(OH_I64(0, (0), 2)), window = OH_F32(1, (3), 1, 1, 1);
  OH_CHECK_REFUSED(oh_run("STFT", 2, (oh_value[]){signal, step}, 0, NULL, 1, NULL, NULL), "STFT",
                   "needs a window or a frame_length");
  OH_CHECK_REFUSED(
      oh_run("STFT", 4, (oh_value[]){signal, step, window, two}, 0, NULL, 1, NULL, NULL), "STFT",
      "frame_length 2 differs from the window's length 3");
  OH_CHECK_REFUSED(
      oh_run("STFT", 4, (oh_value[]){signal, step, OH_NONE, OH_CONST(OH_I64(0, (0), 5))}, 0, NULL,
             1, NULL, NULL),
      "STFT", "no longer than the signal (4)");
  OH_CHECK_REFUSED(
      oh_run("STFT", 4, (oh_value[]){signal, OH_CONST(OH_I64(0, (0), 0)), OH_NONE, two}, 0, NULL, 1,
             NULL, NULL),
      "STFT", "frame_step 0 and frame_length 2 must be positive");
  OH_CHECK_REFUSED(
      oh_run("STFT", 4, (oh_value[]){OH_F32(3, (1, 2, 2), 1, 2, 3, 4), step, OH_NONE, two}, 0, NULL,
             1, NULL, NULL),
      "STFT", "onesided needs a real signal");
  OH_CHECK_REFUSED(
      oh_run("STFT", 3, (oh_value[]){signal, step, OH_F64(1, (2), 1, 1)}, 0, NULL, 1, NULL, NULL),
      "STFT", "window must be 1-D of the signal's dtype (float32)");
  OH_CHECK_REFUSED(
      oh_run("STFT", 2, (oh_value[]){OH_F32(2, (4, 1), 1, 2, 3, 4), step}, 0, NULL, 1, NULL, NULL),
      "STFT", "signal must be [batch, length, 1|2]");
}

static void test_windows(void) {
  float y[4096 / 4];
  double d[4096 / 8];
  oh_output info[1];
  CHECK_OK(oh_run("HannWindow", 1, (oh_value[]){OH_CONST(OH_I64(0, (0), 4))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT32 && info[0].rank == 1 && info[0].dims[0] == 4);
  OH_CHECK_FLOATS(y, ((double[]){0, 0.5, 1, 0.5}), 4, 1e-7);
  CHECK_OK(oh_run("HannWindow", 1, (oh_value[]){OH_CONST(OH_I32(0, (0), 3))}, 1,
                  (etrt_attribute[]){OH_INT("periodic", 0)}, 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){0, 1, 0}), 3, 1e-7);
  CHECK_OK(oh_run("BlackmanWindow", 1, (oh_value[]){OH_CONST(OH_I64(0, (0), 4))}, 0, NULL, 1,
                  (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){0, 0.34, 1, 0.34}), 4, 1e-7);
  /* a symmetric window of one point is 1, not 0 / 0 */
  CHECK_OK(oh_run("HammingWindow", 1, (oh_value[]){OH_CONST(OH_I64(0, (0), 1))}, 1,
                  (etrt_attribute[]){OH_INT("periodic", 0)}, 1, (void *[]){y}, info));
  OH_CHECK_FLOATS(y, ((double[]){1}), 1, 0);
  CHECK_OK(oh_run("HammingWindow", 1, (oh_value[]){OH_CONST(OH_I64(0, (0), 2))}, 1,
                  (etrt_attribute[]){OH_INT("output_datatype", 11)}, 1, (void *[]){d}, info));
  CHECK(info[0].dtype == ETRT_DTYPE_FLOAT64);
  CHECK(fabs(d[0] - 4.0 / 46.0) < 1e-15 && fabs(d[1] - 1.0) < 1e-15);
  /* the size given as a graph input, as the ONNX test data gives it */
  CHECK_OK(oh_run("HannWindow", 1, (oh_value[]){OH_SHAPE_INPUT(OH_I64(1, (1), 2))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK(info[0].dims[0] == 2);
  OH_CHECK_FLOATS(y, ((double[]){0, 1}), 2, 1e-7);
}

static void test_window_refusals(void) {
  const oh_value four = OH_CONST(OH_I64(0, (0), 4));
  OH_CHECK_REFUSED(
      oh_run("HannWindow", 1, (oh_value[]){OH_CONST(OH_I64(0, (0), -1))}, 0, NULL, 1, NULL, NULL),
      "HannWindow", "size must not be negative (-1)");
  OH_CHECK_REFUSED(oh_run("HammingWindow", 1, (oh_value[]){four}, 1,
                          (etrt_attribute[]){OH_INT("output_datatype", 7)}, 1, NULL, NULL),
                   "HammingWindow", "output_datatype 7 is not supported");
  OH_CHECK_REFUSED(oh_run("BlackmanWindow", 1, (oh_value[]){four}, 1,
                          (etrt_attribute[]){OH_INT("periodic", 2)}, 1, NULL, NULL),
                   "BlackmanWindow", "periodic must be 0 or 1, not 2");
  OH_CHECK_REFUSED(
      oh_run("HannWindow", 1, (oh_value[]){OH_CONST(OH_F32(0, (0), 4))}, 0, NULL, 1, NULL, NULL),
      "HannWindow", "(size) must be int32 or int64");
}

/* Inputs of MelWeightMatrix: 3 bands of a 16-point DFT at 8 kHz over [100, 4000] Hz. */
#define MEL_INPUTS(rate, lower, upper)                                               \
  (oh_value[]) {                                                                     \
    OH_CONST(OH_I64(0, (0), 3)), OH_CONST(OH_I64(0, (0), 16)), OH_I64(0, (0), rate), \
        OH_F32(0, (0), lower), OH_F32(0, (0), upper)                                 \
  }

static void test_mel_weight_matrix(void) {
  float y[4096 / 4];
  oh_output info[1];
  CHECK_OK(
      oh_run("MelWeightMatrix", 5, MEL_INPUTS(8000, 100, 4000), 0, NULL, 1, (void *[]){y}, info));
  CHECK(info[0].rank == 2 && info[0].dims[0] == 9 && info[0].dims[1] == 3);
  /* the ONNX reference implementation's output for these inputs */
  OH_CHECK_FLOATS(y, ((double[]){1,   0, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0,
                                 0.5, 0, 0, 0, 0, 0, 0, 0,   0,   0, 0, 0, 0}),
                  27, 0);
}

static void test_mel_refusals(void) {
  /* data-dependent: refused when the node runs */
  OH_CHECK_REFUSED(oh_run("MelWeightMatrix", 5, MEL_INPUTS(0, 100, 4000), 0, NULL, 1, NULL, NULL),
                   "MelWeightMatrix", "do not give ascending bins of the 9-bin spectrum");
  OH_CHECK_REFUSED(
      oh_run("MelWeightMatrix", 5, MEL_INPUTS(8000, 100, 9000), 0, NULL, 1, NULL, NULL),
      "MelWeightMatrix", "edges 100..9000 Hz");
  OH_CHECK_REFUSED(oh_run("MelWeightMatrix", 5, MEL_INPUTS(8000, 500, 100), 0, NULL, 1, NULL, NULL),
                   "MelWeightMatrix", "do not give ascending bins");
  OH_CHECK_REFUSED(oh_run("MelWeightMatrix", 5,
                          (oh_value[]){OH_CONST(OH_I64(0, (0), 0)), OH_CONST(OH_I64(0, (0), 16)),
                                       OH_I64(0, (0), 8000), OH_F32(0, (0), 0), OH_F32(0, (0), 1)},
                          0, NULL, 1, NULL, NULL),
                   "MelWeightMatrix", "num_mel_bins (0) and dft_length (16) must be positive");
  OH_CHECK_REFUSED(oh_run("MelWeightMatrix", 5,
                          (oh_value[]){OH_CONST(OH_I64(0, (0), 3)), OH_CONST(OH_I64(0, (0), 16)),
                                       OH_I64(0, (0), 8000), OH_F32(0, (0), 0), OH_F64(0, (0), 1)},
                          0, NULL, 1, NULL, NULL),
                   "MelWeightMatrix", "of one dtype");
  OH_CHECK_REFUSED(oh_run("MelWeightMatrix", 5,
                          (oh_value[]){OH_CONST(OH_I64(0, (0), 3)), OH_CONST(OH_I64(0, (0), 16)),
                                       OH_F32(0, (0), 8000), OH_F32(0, (0), 0), OH_F32(0, (0), 1)},
                          0, NULL, 1, NULL, NULL),
                   "MelWeightMatrix", "sample_rate must be one int32 or int64 value");
  OH_CHECK_REFUSED(oh_run("MelWeightMatrix", 5, MEL_INPUTS(8000, 0, 1), 1,
                          (etrt_attribute[]){OH_INT("output_datatype", 6)}, 1, NULL, NULL),
                   "MelWeightMatrix", "output_datatype 6 is not supported");
}

int main(void) {
  RUN_TEST(test_dft);
  RUN_TEST(test_dft_refusals);
  RUN_TEST(test_stft);
  RUN_TEST(test_stft_refusals);
  RUN_TEST(test_windows);
  RUN_TEST(test_window_refusals);
  RUN_TEST(test_mel_weight_matrix);
  RUN_TEST(test_mel_refusals);
  return TEST_EXIT();
}
