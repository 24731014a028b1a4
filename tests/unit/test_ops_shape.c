/* Shape and data-movement operators on the CPU executor: Reshape, Flatten,
 * Squeeze, Unsqueeze, Shape, Size, ConstantOfShape, Range, Transpose, Concat, Split,
 * Slice, Expand, Tile, Pad, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence, over
 * several dtypes
 * (they move bytes), with value inputs as constants and as shape inputs, and their
 * refusals. */
#include "op_harness.h"

static int64_t g_iota[256];

static void iota(void) {
  for (int i = 0; i < 256; ++i) g_iota[i] = i;
}

static void test_reshape_family(void) {
  oh_value x = {ETRT_DTYPE_INT64, 3, {2, 3, 4}, g_iota, OH_INPUT};
  int64_t y[24];
  oh_output info[1];
  /* 0 copies, -1 infers; the shape as a constant and as a shape input */
  oh_value shapes[2] = {OH_CONST(OH_I64(1, (3), 0, -1, 2)),
                        OH_SHAPE_INPUT(OH_I64(1, (3), 0, -1, 2))};
  for (int i = 0; i < 2; ++i) {
    CHECK_OK(oh_run("Reshape", 2, (oh_value[]){x, shapes[i]}, 0, NULL, 1, (void *[]){y}, info));
    CHECK_EQ_INT(info[0].rank, 3);
    CHECK_EQ_INT(info[0].dims[1], 6);
    OH_CHECK_INTS(y, g_iota, 24);
  }
  /* allowzero: a 0 is a real 0 */
  oh_value empty = {ETRT_DTYPE_FLOAT32, 3, {0, 3, 4}, g_iota, OH_INPUT};
  CHECK_OK(oh_run("Reshape", 2, (oh_value[]){empty, OH_CONST(OH_I64(1, (3), 3, 4, 0))}, 1,
                  (etrt_attribute[]){OH_INT("allowzero", 1)}, 1, NULL, info));
  CHECK_EQ_INT(info[0].dims[2], 0);
  OH_CHECK_REFUSED(oh_run("Reshape", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 5, -1))}, 0, NULL,
                          1, NULL, NULL),
                   "Reshape", "-1");
  OH_CHECK_REFUSED(oh_run("Reshape", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), -1, -1))}, 0, NULL,
                          1, NULL, NULL),
                   "Reshape", "more than one -1");
  /* a shape known only at run time is read then (test_shapes_at_execute.c) */
  CHECK_OK(oh_run("Reshape", 2, (oh_value[]){x, OH_I64(1, (2), 4, 6)}, 0, NULL, 1, NULL, info));
  CHECK(info[0].rank == 2 && info[0].dims[0] == 4 && info[0].dims[1] == 6);
  /* Flatten */
  CHECK_OK(
      oh_run("Flatten", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", -1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 6);
  CHECK_EQ_INT(info[0].dims[1], 4);
  CHECK_OK(oh_run("Flatten", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 0)}, 1, NULL, info));
  CHECK_EQ_INT(info[0].dims[0], 1);
  CHECK_EQ_INT(info[0].dims[1], 24);
  OH_CHECK_REFUSED(
      oh_run("Flatten", 1, &x, 1, (etrt_attribute[]){OH_INT("axis", 4)}, 1, NULL, NULL), "Flatten",
      "axis");
  /* Squeeze/Unsqueeze: axes as attribute (opset < 13) or input */
  oh_value ones = {ETRT_DTYPE_UINT8, 4, {1, 3, 1, 2}, g_iota, OH_INPUT};
  CHECK_OK(oh_run("Squeeze", 1, &ones, 0, NULL, 1, NULL, info));
  CHECK_EQ_INT(info[0].rank, 2);
  CHECK_OK(oh_run("Squeeze", 2, (oh_value[]){ones, OH_CONST(OH_I64(1, (1), -2))}, 0, NULL, 1, NULL,
                  info));
  CHECK_EQ_INT(info[0].rank, 3);
  CHECK_EQ_INT(info[0].dims[2], 2);
  OH_CHECK_REFUSED(
      oh_run("Squeeze", 1, &ones, 1, (etrt_attribute[]){OH_INTS("axes", 1, 1)}, 1, NULL, NULL),
      "Squeeze", "size-1");
  CHECK_OK(oh_run("Unsqueeze", 1, &x, 1, (etrt_attribute[]){OH_INTS("axes", 2, 4, 0)}, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 5);
  CHECK_EQ_INT(info[0].dims[0], 1);
  CHECK_EQ_INT(info[0].dims[1], 2);
  CHECK_EQ_INT(info[0].dims[4], 1);
  OH_CHECK_INTS(y, g_iota, 24);
  CHECK_OK(oh_run("Unsqueeze", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), -1, 1))}, 0, NULL, 1,
                  NULL, info));
  CHECK_EQ_INT(info[0].dims[1], 1);
  CHECK_EQ_INT(info[0].dims[4], 1);
  OH_CHECK_REFUSED(oh_run("Unsqueeze", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 1, 1))}, 0, NULL,
                          1, NULL, NULL),
                   "Unsqueeze", "twice");
}

static void test_shape_producers(void) {
  oh_value x = {ETRT_DTYPE_FLOAT32, 3, {3, 4, 5}, g_iota, OH_INPUT};
  int64_t y[8];
  oh_output info[1];
  CHECK_OK(oh_run("Shape", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  OH_CHECK_INTS(y, ((int64_t[]){3, 4, 5}), 3);
  CHECK_OK(oh_run("Shape", 1, &x, 2, (etrt_attribute[]){OH_INT("start", -10), OH_INT("end", -1)}, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_INTS(y, ((int64_t[]){3, 4}), 2);
  CHECK_OK(
      oh_run("Shape", 1, &x, 1, (etrt_attribute[]){OH_INT("start", 1)}, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int64_t[]){4, 5}), 2);
  CHECK_OK(oh_run("Size", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 0);
  CHECK_EQ_INT(y[0], 60);
  /* ConstantOfShape: value attribute (int32) or default float zeros */
  int32_t seven = 7;
  etrt_attribute value = {
      .name = "value",
      .kind = ETRT_ATTRIBUTE_TENSOR,
      .tensor = {.data = &seven, .dtype = ETRT_DTYPE_INT32, .rank = 1, .sizes = {1}}};
  int32_t yi[6];
  CHECK_OK(oh_run("ConstantOfShape", 1, (oh_value[]){OH_CONST(OH_I64(1, (2), 2, 3))}, 1, &value, 1,
                  (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT32);
  OH_CHECK_INTS(yi, ((int[]){7, 7, 7, 7, 7, 7}), 6);
  float yf[4] = {1, 1, 1, 1};
  CHECK_OK(oh_run("ConstantOfShape", 1, (oh_value[]){OH_SHAPE_INPUT(OH_I64(1, (1), 4))}, 0, NULL, 1,
                  (void *[]){yf}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT32);
  OH_CHECK_FLOATS(yf, ((double[]){0, 0, 0, 0}), 4, 0);
  OH_CHECK_REFUSED(oh_run("ConstantOfShape", 1, (oh_value[]){OH_CONST(OH_I64(1, (2), 2, -3))}, 0,
                          NULL, 1, NULL, NULL),
                   "ConstantOfShape", "negative");
  /* Range: int32 with a negative delta, float with a fractional count */
  CHECK_OK(oh_run("Range", 3,
                  (oh_value[]){OH_CONST(OH_I32(0, (0), 10)), OH_CONST(OH_I32(0, (0), 6)),
                               OH_CONST(OH_I32(0, (0), -3))},
                  0, NULL, 1, (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_INTS(yi, ((int[]){10, 7}), 2);
  CHECK_OK(oh_run("Range", 3,
                  (oh_value[]){OH_CONST(OH_F32(0, (0), 1.0f)), OH_CONST(OH_F32(0, (0), 5.5f)),
                               OH_CONST(OH_F32(0, (0), 1.5f))},
                  0, NULL, 1, (void *[]){yf}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  OH_CHECK_FLOATS(yf, ((double[]){1, 2.5, 4}), 3, 0);
  OH_CHECK_REFUSED(oh_run("Range", 3,
                          (oh_value[]){OH_CONST(OH_I64(0, (0), 0)), OH_CONST(OH_I64(0, (0), 6)),
                                       OH_CONST(OH_I64(0, (0), 0))},
                          0, NULL, 1, NULL, NULL),
                   "Range", "delta");
  /* A limit known only at execute: the length is the run's; a zero delta is then an
   * execute error naming the op. */
  CHECK_OK(oh_run(
      "Range", 3,
      (oh_value[]){OH_CONST(OH_I32(0, (0), 1)), OH_I32(0, (0), 7), OH_CONST(OH_I32(0, (0), 2))}, 0,
      NULL, 1, (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  OH_CHECK_INTS(yi, ((int[]){1, 3, 5}), 3);
  OH_CHECK_REFUSED(
      oh_run("Range", 3,
             (oh_value[]){OH_CONST(OH_I32(0, (0), 1)), OH_I32(0, (0), 7), OH_I32(0, (0), 0)}, 0,
             NULL, 1, NULL, NULL),
      "Range", "delta");
  OH_CHECK_REFUSED(oh_run("Range", 3,
                          (oh_value[]){OH_CONST(OH_I32(0, (0), 1)), OH_I32(1, (2), 7, 8),
                                       OH_CONST(OH_I32(0, (0), 1))},
                          0, NULL, 1, NULL, NULL),
                   "Range", "scalars of one type");
}

static void test_eye_like(void) {
  float y[4096 / 4];
  int64_t yi[4096 / 8];
  oh_output info[1];
  const oh_value x = OH_I32(2, (2, 3), 0, 0, 0, 0, 0, 0);
  CHECK_OK(oh_run("EyeLike", 1, (oh_value[]){x}, 2,
                  (etrt_attribute[]){OH_INT("dtype", 1), OH_INT("k", 1)}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_FLOAT32);
  OH_CHECK_FLOATS(y, ((double[]){0, 1, 0, 0, 0, 1}), 6, 0);
  /* the input's dtype by default; a diagonal past the last column leaves zeros */
  CHECK_OK(oh_run("EyeLike", 1, (oh_value[]){OH_I64(2, (3, 2), 0, 0, 0, 0, 0, 0)}, 1,
                  (etrt_attribute[]){OH_INT("k", -1)}, 1, (void *[]){yi}, info));
  CHECK_EQ_INT(info[0].dtype, ETRT_DTYPE_INT64);
  OH_CHECK_INTS(yi, ((int64_t[]){0, 0, 1, 0, 0, 1}), 6);
  CHECK_OK(oh_run("EyeLike", 1, (oh_value[]){x}, 1, (etrt_attribute[]){OH_INT("k", 3)}, 1,
                  (void *[]){yi}, NULL));
  OH_CHECK_INTS((int32_t *)yi, ((int32_t[]){0, 0, 0, 0, 0, 0}), 6);
  OH_CHECK_REFUSED(oh_run("EyeLike", 1, (oh_value[]){OH_I32(1, (2), 0, 0)}, 0, NULL, 1, NULL, NULL),
                   "EyeLike", "2-D");
  OH_CHECK_REFUSED(oh_run("EyeLike", 1, (oh_value[]){x}, 1, (etrt_attribute[]){OH_INT("dtype", 8)},
                          1, NULL, NULL),
                   "EyeLike", "'dtype'");
}

static void test_transpose_concat_split(void) {
  uint16_t half[24];
  for (int i = 0; i < 24; ++i) half[i] = (uint16_t)(0x3c00 + i);
  oh_value x = {ETRT_DTYPE_FLOAT16, 3, {2, 3, 4}, half, OH_INPUT};
  uint16_t y[24];
  oh_output info[3];
  CHECK_OK(oh_run("Transpose", 1, &x, 1, (etrt_attribute[]){OH_INTS("perm", 3, 2, 0, 1)}, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 4);
  CHECK_EQ_INT(info[0].dims[2], 3);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) CHECK_EQ_INT(y[(a * 2 + b) * 3 + c], half[(b * 3 + c) * 4 + a]);
  CHECK_OK(oh_run("Transpose", 1, &x, 0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(y[1], half[12]);
  OH_CHECK_REFUSED(
      oh_run("Transpose", 1, &x, 1, (etrt_attribute[]){OH_INTS("perm", 3, 0, 0, 1)}, 1, NULL, NULL),
      "Transpose", "permutation");
  /* Concat on axis -2 of bools */
  oh_value a = OH_BOOL(2, (1, 2), 1, 0), b = OH_BOOL(2, (2, 2), 0, 1, 1, 1);
  uint8_t yb[8];
  CHECK_OK(oh_run("Concat", 2, (oh_value[]){a, b}, 1, (etrt_attribute[]){OH_INT("axis", -2)}, 1,
                  (void *[]){yb}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  OH_CHECK_INTS(yb, ((int[]){1, 0, 0, 1, 1, 1}), 6);
  CHECK_OK(oh_run("Concat", 2, (oh_value[]){b, b}, 1, (etrt_attribute[]){OH_INT("axis", 1)}, 1,
                  (void *[]){yb}, info));
  OH_CHECK_INTS(yb, ((int[]){0, 1, 0, 1, 1, 1, 1, 1}), 8);
  OH_CHECK_REFUSED(oh_run("Concat", 2, (oh_value[]){a, b}, 1, (etrt_attribute[]){OH_INT("axis", 1)},
                          1, NULL, NULL),
                   "Concat", "axis 0");
  OH_CHECK_REFUSED(oh_run("Concat", 2, (oh_value[]){a, b}, 0, NULL, 1, NULL, NULL), "Concat",
                   "axis");
  /* Split: by input, by attribute, equal parts, num_outputs with a short last part */
  oh_value s = {ETRT_DTYPE_INT64, 2, {2, 5}, g_iota, OH_INPUT};
  int64_t p0[10], p1[10], p2[10];
  CHECK_OK(oh_run("Split", 2, (oh_value[]){s, OH_CONST(OH_I64(1, (2), 2, 3))}, 1,
                  (etrt_attribute[]){OH_INT("axis", 1)}, 2, (void *[]){p0, p1}, info));
  CHECK_EQ_INT(info[1].dims[1], 3);
  OH_CHECK_INTS(p0, ((int64_t[]){0, 1, 5, 6}), 4);
  OH_CHECK_INTS(p1, ((int64_t[]){2, 3, 4, 7, 8, 9}), 6);
  CHECK_OK(oh_run("Split", 1, &s, 2,
                  (etrt_attribute[]){OH_INT("axis", -1), OH_INTS("split", 2, 4, 1)}, 2,
                  (void *[]){p0, p1}, info));
  OH_CHECK_INTS(p1, ((int64_t[]){4, 9}), 2);
  CHECK_OK(oh_run("Split", 1, &s, 0, NULL, 2, (void *[]){p0, p1}, info));
  OH_CHECK_INTS(p1, ((int64_t[]){5, 6, 7, 8, 9}), 5);
  CHECK_OK(oh_run("Split", 1, &s, 2,
                  (etrt_attribute[]){OH_INT("axis", 1), OH_INT("num_outputs", 3)}, 3,
                  (void *[]){p0, p1, p2}, info));
  CHECK_EQ_INT(info[0].dims[1], 2);
  CHECK_EQ_INT(info[2].dims[1], 1);
  OH_CHECK_INTS(p2, ((int64_t[]){4, 9}), 2);
  OH_CHECK_REFUSED(oh_run("Split", 1, &s, 1, (etrt_attribute[]){OH_INT("axis", 1)}, 2, NULL, NULL),
                   "Split", "equal parts");
  OH_CHECK_REFUSED(oh_run("Split", 2, (oh_value[]){s, OH_CONST(OH_I64(1, (2), 2, 2))}, 1,
                          (etrt_attribute[]){OH_INT("axis", 1)}, 2, NULL, NULL),
                   "Split", "summing");
}

static void test_slice(void) {
  oh_value x = {ETRT_DTYPE_INT64, 2, {4, 5}, g_iota, OH_INPUT};
  int64_t y[20];
  oh_output info[1];
  /* negative steps from past the end, clamped */
  CHECK_OK(
      oh_run("Slice", 5,
             (oh_value[]){x, OH_CONST(OH_I64(1, (2), 100, -1)), OH_CONST(OH_I64(1, (2), 0, -100)),
                          OH_CONST(OH_I64(1, (2), 0, 1)), OH_CONST(OH_I64(1, (2), -2, -2))},
             0, NULL, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  CHECK_EQ_INT(info[0].dims[1], 3);
  OH_CHECK_INTS(y, ((int64_t[]){19, 17, 15, 9, 7, 5}), 6);
  /* default axes and steps; ends past the size; a start past the end gives 0 */
  CHECK_OK(oh_run("Slice", 3,
                  (oh_value[]){x, OH_SHAPE_INPUT(OH_I64(1, (2), 1, -2)),
                               OH_SHAPE_INPUT(OH_I64(1, (2), 1000, 1000))},
                  0, NULL, 1, (void *[]){y}, info));
  OH_CHECK_INTS(y, ((int64_t[]){8, 9, 13, 14, 18, 19}), 6);
  CHECK_OK(oh_run("Slice", 4,
                  (oh_value[]){x, OH_CONST(OH_I64(1, (1), 9)), OH_CONST(OH_I64(1, (1), 10)),
                               OH_CONST(OH_I64(1, (1), -1))},
                  0, NULL, 1, NULL, info));
  CHECK_EQ_INT(info[0].dims[1], 0);
  /* opset 1 attributes, int32 starts */
  CHECK_OK(oh_run(
      "Slice", 1, &x, 3,
      (etrt_attribute[]){OH_INTS("starts", 1, 1), OH_INTS("ends", 1, 3), OH_INTS("axes", 1, 0)}, 1,
      (void *[]){y}, info));
  OH_CHECK_INTS(y, ((int64_t[]){5, 6, 7, 8, 9, 10, 11, 12, 13, 14}), 10);
  CHECK_OK(oh_run("Slice", 3,
                  (oh_value[]){x, OH_CONST(OH_I32(1, (1), -1)), OH_CONST(OH_I32(1, (1), 5))}, 0,
                  NULL, 1, (void *[]){y}, info));
  OH_CHECK_INTS(y, ((int64_t[]){15, 16, 17, 18, 19}), 5);
  OH_CHECK_REFUSED(oh_run("Slice", 5,
                          (oh_value[]){x, OH_CONST(OH_I64(1, (1), 0)), OH_CONST(OH_I64(1, (1), 2)),
                                       OH_CONST(OH_I64(1, (1), 0)), OH_CONST(OH_I64(1, (1), 0))},
                          0, NULL, 1, NULL, NULL),
                   "Slice", "steps");
  OH_CHECK_REFUSED(oh_run("Slice", 4,
                          (oh_value[]){x, OH_CONST(OH_I64(1, (1), 0)), OH_CONST(OH_I64(1, (1), 2)),
                                       OH_CONST(OH_I64(1, (1), 2))},
                          0, NULL, 1, NULL, NULL),
                   "Slice", "axes");
  OH_CHECK_REFUSED(
      oh_run("Slice", 3,
             (oh_value[]){x, OH_CONST(OH_I64(1, (2), 0, 0)), OH_CONST(OH_I64(1, (1), 2))}, 0, NULL,
             1, NULL, NULL),
      "Slice", "agree");
}

static void test_expand_tile_pad(void) {
  oh_value x = OH_I32(2, (3, 1), 1, 2, 3);
  int32_t y[64];
  oh_output info[1];
  CHECK_OK(oh_run("Expand", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (3), 2, 1, 2))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].rank, 3);
  OH_CHECK_INTS(y, ((int[]){1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}), 12);
  OH_CHECK_REFUSED(
      oh_run("Expand", 2, (oh_value[]){x, OH_CONST(OH_I64(1, (2), 2, 2))}, 0, NULL, 1, NULL, NULL),
      "Expand", "axis");
  oh_value t = OH_I32(2, (2, 2), 0, 1, 2, 3);
  CHECK_OK(oh_run("Tile", 2, (oh_value[]){t, OH_CONST(OH_I64(1, (2), 2, 3))}, 0, NULL, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[1], 6);
  OH_CHECK_INTS(
      y, ((int[]){0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}), 24);
  OH_CHECK_REFUSED(
      oh_run("Tile", 2, (oh_value[]){t, OH_CONST(OH_I64(1, (1), 2))}, 0, NULL, 1, NULL, NULL),
      "Tile", "repeats");
  /* Pad [1, 3] by (0, 2) before and (0, 1) after on axis 1 */
  oh_value p = OH_I32(2, (1, 3), 1, 2, 3);
  oh_value pads = OH_CONST(OH_I64(1, (4), 0, 2, 0, 1));
  CHECK_OK(oh_run("Pad", 2, (oh_value[]){p, pads}, 1,
                  (etrt_attribute[]){OH_STRING("mode", "reflect")}, 1, (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[1], 6);
  OH_CHECK_INTS(y, ((int[]){3, 2, 1, 2, 3, 2}), 6);
  CHECK_OK(oh_run("Pad", 2, (oh_value[]){p, pads}, 1, (etrt_attribute[]){OH_STRING("mode", "edge")},
                  1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){1, 1, 1, 2, 3, 3}), 6);
  CHECK_OK(oh_run("Pad", 3, (oh_value[]){p, pads, OH_CONST(OH_I32(0, (0), -5))}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){-5, -5, 1, 2, 3, -5}), 6);
  /* the constant may also be a run-time input */
  CHECK_OK(
      oh_run("Pad", 3, (oh_value[]){p, pads, OH_I32(0, (0), 9)}, 0, NULL, 1, (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int[]){9, 9, 1, 2, 3, 9}), 6);
  /* opset 2 attributes; negative pads crop; opset 18 axes */
  float yf[16];
  oh_value f = OH_F32(2, (2, 2), 1, 2, 3, 4);
  CHECK_OK(oh_run("Pad", 1, &f, 2,
                  (etrt_attribute[]){OH_INTS("pads", 4, 1, 0, 0, -1), OH_FLOAT("value", 0.5f)}, 1,
                  (void *[]){yf}, info));
  CHECK_EQ_INT(info[0].dims[0], 3);
  CHECK_EQ_INT(info[0].dims[1], 1);
  OH_CHECK_FLOATS(yf, ((double[]){0.5, 1, 3}), 3, 0);
  CHECK_OK(
      oh_run("Pad", 4,
             (oh_value[]){f, OH_CONST(OH_I64(1, (2), 1, 1)), OH_NONE, OH_CONST(OH_I64(1, (1), -1))},
             1, (etrt_attribute[]){OH_STRING("mode", "edge")}, 1, (void *[]){yf}, info));
  CHECK_EQ_INT(info[0].dims[0], 2);
  OH_CHECK_FLOATS(yf, ((double[]){1, 1, 2, 2, 3, 3, 4, 4}), 8, 0);
  OH_CHECK_REFUSED(oh_run("Pad", 2, (oh_value[]){p, OH_CONST(OH_I64(1, (4), 0, 3, 0, 0))}, 1,
                          (etrt_attribute[]){OH_STRING("mode", "reflect")}, 1, NULL, NULL),
                   "Pad", "reflect");
  OH_CHECK_REFUSED(
      oh_run("Pad", 2, (oh_value[]){p, OH_CONST(OH_I64(1, (2), 0, 3))}, 0, NULL, 1, NULL, NULL),
      "Pad", "pads");
  OH_CHECK_REFUSED(oh_run("Pad", 2, (oh_value[]){p, pads}, 1,
                          (etrt_attribute[]){OH_STRING("mode", "mirror")}, 1, NULL, NULL),
                   "Pad", "mode");
}

/* ReverseSequence time-major and batch-major; lengths outside [0, steps] are an
 * execute error naming the op. */
static void test_reverse_sequence(void) {
  oh_value x = {ETRT_DTYPE_INT64, 2, {3, 2}, g_iota, OH_INPUT}; /* x[t][b] = 2t + b */
  int64_t y[6];
  CHECK_OK(oh_run("ReverseSequence", 2, (oh_value[]){x, OH_I64(1, (2), 3, 1)}, 0, NULL, 1,
                  (void *[]){y}, NULL));
  OH_CHECK_INTS(y, ((int64_t[]){4, 1, 2, 3, 0, 5}), 6);
  /* batch-major uint8 [2, 4, 1]: the first 2 and all 4 steps reversed */
  oh_value b = OH_U8(3, (2, 4, 1), 1, 2, 3, 4, 5, 6, 7, 8);
  uint8_t z[8];
  CHECK_OK(oh_run("ReverseSequence", 2, (oh_value[]){b, OH_CONST(OH_I64(1, (2), 2, 4))}, 2,
                  (etrt_attribute[]){OH_INT("time_axis", 1), OH_INT("batch_axis", 0)}, 1,
                  (void *[]){z}, NULL));
  const uint8_t want[8] = {2, 1, 3, 4, 8, 7, 6, 5};
  CHECK(memcmp(z, want, sizeof want) == 0);
  OH_CHECK_REFUSED(oh_run("ReverseSequence", 2, (oh_value[]){x, OH_I64(1, (2), 4, 1)}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "ReverseSequence", "sequence_lens[0] is 4, outside [0, 3]");
  OH_CHECK_REFUSED(oh_run("ReverseSequence", 2, (oh_value[]){x, OH_I64(1, (2), 1, -1)}, 0, NULL, 1,
                          (void *[]){y}, NULL),
                   "ReverseSequence", "sequence_lens[1] is -1");
  OH_CHECK_REFUSED(
      oh_run("ReverseSequence", 2, (oh_value[]){x, OH_I32(1, (2), 1, 1)}, 0, NULL, 1, NULL, NULL),
      "ReverseSequence", "sequence_lens must be int64");
  OH_CHECK_REFUSED(oh_run("ReverseSequence", 2, (oh_value[]){x, OH_I64(1, (3), 1, 1, 1)}, 0, NULL,
                          1, NULL, NULL),
                   "ReverseSequence", "sequence_lens must be int64 [2]");
  OH_CHECK_REFUSED(oh_run("ReverseSequence", 2, (oh_value[]){x, OH_I64(1, (2), 1, 1)}, 1,
                          (etrt_attribute[]){OH_INT("batch_axis", 0)}, 1, NULL, NULL),
                   "ReverseSequence", "time_axis 0 and batch_axis 0");
  OH_CHECK_REFUSED(
      oh_run("ReverseSequence", 2, (oh_value[]){OH_I64(1, (2), 1, 2), OH_I64(1, (2), 1, 1)}, 0,
             NULL, 1, NULL, NULL),
      "ReverseSequence", "rank 2 or more");
  OH_CHECK_REFUSED(oh_run("ReverseSequence", 1, &x, 0, NULL, 1, NULL, NULL), "ReverseSequence",
                   "takes 2 to 2 inputs");
}

static void test_trilu_depth_space(void) {
  oh_value x = {ETRT_DTYPE_INT64, 3, {2, 3, 4}, g_iota, OH_INPUT};
  int64_t y[24], want[24];
  for (int upper = 0; upper < 2; ++upper) {
    for (int64_t k = -2; k <= 2; k += 2) {
      CHECK_OK(oh_run("Trilu", 2, (oh_value[]){x, OH_CONST(OH_I64(0, (0), k))}, 1,
                      (etrt_attribute[]){OH_INT("upper", upper)}, 1, (void *[]){y}, NULL));
      for (int m = 0; m < 2; ++m)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 4; ++j) {
            int keep = upper ? j - i >= k : j - i <= k;
            want[(m * 3 + i) * 4 + j] = keep ? g_iota[(m * 3 + i) * 4 + j] : 0;
          }
      OH_CHECK_INTS(y, want, 24);
    }
  }
  oh_value v = OH_I64(1, (3), 1, 2, 3);
  OH_CHECK_REFUSED(oh_run("Trilu", 1, &v, 0, NULL, 1, NULL, NULL), "Trilu", "rank");
  /* DepthToSpace DCR and CRD on [1, 8, 1, 2], blocksize 2; SpaceToDepth undoes DCR */
  oh_value d = {ETRT_DTYPE_INT64, 4, {1, 8, 1, 2}, g_iota, OH_INPUT};
  oh_output info[1];
  CHECK_OK(oh_run("DepthToSpace", 1, &d, 1, (etrt_attribute[]){OH_INT("blocksize", 2)}, 1,
                  (void *[]){y}, info));
  CHECK_EQ_INT(info[0].dims[1], 2);
  CHECK_EQ_INT(info[0].dims[2], 2);
  CHECK_EQ_INT(info[0].dims[3], 4);
  /* y[c, h*2+b1, w*2+b2] = x[(b1*2+b2)*2 + c, h, w] */
  for (int c = 0; c < 2; ++c)
    for (int b1 = 0; b1 < 2; ++b1)
      for (int w = 0; w < 2; ++w)
        for (int b2 = 0; b2 < 2; ++b2)
          want[(c * 2 + b1) * 4 + w * 2 + b2] = ((b1 * 2 + b2) * 2 + c) * 2 + w;
  OH_CHECK_INTS(y, want, 16);
  int64_t back[16];
  oh_value dy = {ETRT_DTYPE_INT64, 4, {1, 2, 2, 4}, y, OH_INPUT};
  CHECK_OK(oh_run("SpaceToDepth", 1, &dy, 1, (etrt_attribute[]){OH_INT("blocksize", 2)}, 1,
                  (void *[]){back}, info));
  CHECK_EQ_INT(info[0].dims[1], 8);
  OH_CHECK_INTS(back, g_iota, 16);
  CHECK_OK(oh_run("DepthToSpace", 1, &d, 2,
                  (etrt_attribute[]){OH_INT("blocksize", 2), OH_STRING("mode", "CRD")}, 1,
                  (void *[]){y}, NULL));
  for (int c = 0; c < 2; ++c)
    for (int b1 = 0; b1 < 2; ++b1)
      for (int w = 0; w < 2; ++w)
        for (int b2 = 0; b2 < 2; ++b2)
          want[(c * 2 + b1) * 4 + w * 2 + b2] = ((c * 2 + b1) * 2 + b2) * 2 + w;
  OH_CHECK_INTS(y, want, 16);
  OH_CHECK_REFUSED(
      oh_run("DepthToSpace", 1, &d, 1, (etrt_attribute[]){OH_INT("blocksize", 3)}, 1, NULL, NULL),
      "DepthToSpace", "divisible");
  OH_CHECK_REFUSED(
      oh_run("SpaceToDepth", 1, &d, 1, (etrt_attribute[]){OH_INT("blocksize", 2)}, 1, NULL, NULL),
      "SpaceToDepth", "divisible");
}

int main(void) {
  iota();
  RUN_TEST(test_reshape_family);
  RUN_TEST(test_shape_producers);
  RUN_TEST(test_eye_like);
  RUN_TEST(test_transpose_concat_split);
  RUN_TEST(test_slice);
  RUN_TEST(test_expand_tile_pad);
  RUN_TEST(test_trilu_depth_space);
  RUN_TEST(test_reverse_sequence);
  return TEST_EXIT();
}
